// Dropout on Autodiff<Cpu> and Dispatch (cpu+autodiff). Ember's generator is not torch's,
// so the mask is checked statistically: every output is 0 or x / (1 - p), the fraction of
// zeros is within 4 standard deviations of p, the gradient is the mask / (1 - p), and eval
// mode (or p = 0) is the identity.
#include <gtest/gtest.h>

#include <cmath>

#include "ember/nn/dropout.hpp"
#include "norm_test_support.hpp"

namespace ember::test::norm {
namespace {

template <class Env>
class DropoutLayer : public ::testing::Test {};
using Envs = ::testing::Types<AutodiffCpuEnv, DispatchEnv>;
struct EnvNames {
  template <class T>
  static std::string GetName(int) {
    return T::name();
  }
};
TYPED_TEST_SUITE(DropoutLayer, Envs, EnvNames);

TYPED_TEST(DropoutLayer, TrainingZeroesAFractionPAndScalesTheRest) {
  using B = typename TypeParam::B;
  const auto dev = TypeParam::device();
  B::seed(1234);
  constexpr std::int64_t n = 40000;
  for (double p : {0.1, 0.3, 0.5, 0.8}) {
    SCOPED_TRACE("p = " + std::to_string(p));
    // x in [1, 2): never 0, so a zero output means a dropped element.
    auto x =
        Tensor<B, 2>::random({200, n / 200}, Distribution::uniform(1.0, 2.0), dev).require_grad();
    auto drop = nn::DropoutConfig{.prob = p}.init();
    auto y = drop.forward(x);
    const auto xv = x.template to_vec<double>(), yv = y.template to_vec<double>();
    auto grads = y.sum().backward();
    const auto gv = x.grad(grads)->template to_vec<double>();
    std::int64_t zeros = 0;
    const double scale = 1.0 / (1.0 - p);
    for (std::size_t i = 0; i < xv.size(); ++i) {
      if (yv[i] == 0.0) {
        ++zeros;
        ASSERT_EQ(gv[i], 0.0) << i;
      } else {
        ASSERT_NEAR(yv[i], xv[i] * scale, 1e-6 * xv[i] * scale) << i;
        ASSERT_NEAR(gv[i], scale, 1e-6 * scale) << i;
      }
    }
    const double frac = static_cast<double>(zeros) / static_cast<double>(n);
    const double sigma = std::sqrt(p * (1.0 - p) / static_cast<double>(n));
    EXPECT_NEAR(frac, p, 4.0 * sigma);
  }
}

TYPED_TEST(DropoutLayer, EvalAndZeroProbAreIdentity) {
  using B = typename TypeParam::B;
  const auto dev = TypeParam::device();
  auto x = Tensor<B, 3>::random({4, 5, 6}, Distribution::normal(0.0, 1.0), dev);
  auto drop = nn::DropoutConfig{.prob = 0.5}.init();
  drop.eval();
  EXPECT_FALSE(drop.training);
  expect_eq(drop.forward(x).into_data(), x.into_data());
  drop.train();
  EXPECT_TRUE(drop.training);
  EXPECT_NE(drop.forward(x).template to_vec<float>(), x.template to_vec<float>());
  expect_eq(nn::DropoutConfig{.prob = 0.0}.init().forward(x).into_data(), x.into_data());
}

TYPED_TEST(DropoutLayer, ProbOneGivesZerosAndZeroGradient) {
  using B = typename TypeParam::B;
  const auto dev = TypeParam::device();
  auto x = Tensor<B, 2>::random({3, 7}, Distribution::uniform(1.0, 2.0), dev).require_grad();
  auto y = nn::DropoutConfig{.prob = 1.0}.init().forward(x);
  for (double v : y.template to_vec<double>()) EXPECT_EQ(v, 0.0);
  auto grads = y.sum().backward();
  for (double v : x.grad(grads)->template to_vec<double>()) EXPECT_EQ(v, 0.0);
}

TYPED_TEST(DropoutLayer, SameSeedSameMask) {
  using B = typename TypeParam::B;
  const auto dev = TypeParam::device();
  auto x = Tensor<B, 1>::ones({1000}, dev);
  auto drop = nn::DropoutConfig{.prob = 0.4}.init();
  B::seed(99);
  const auto a = drop.forward(x).template to_vec<float>();
  const auto b = drop.forward(x).template to_vec<float>();
  B::seed(99);
  const auto c = drop.forward(x).template to_vec<float>();
  EXPECT_EQ(a, c);
  EXPECT_NE(a, b);  // a fresh mask each call
}

TEST(DropoutConfigTest, DefaultsAndInvalidProb) {
  EXPECT_EQ(nn::DropoutConfig{}.prob, 0.5);
  EMBER_EXPECT_THROW_MSG(nn::DropoutConfig{.prob = 1.5}.init(), ValueError, "[DropoutConfig]");
  EMBER_EXPECT_THROW_MSG(nn::DropoutConfig{.prob = -0.1}.init(), ValueError, "prob");
  nn::Dropout d{.prob = 2.0};
  EMBER_EXPECT_THROW_MSG(d.forward(Tensor<Autodiff<Cpu>, 1>::ones({2})), ValueError, "[Dropout]");
}

}  // namespace
}  // namespace ember::test::norm
