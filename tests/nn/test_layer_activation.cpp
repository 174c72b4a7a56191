// Activation modules against PyTorch's torch.nn activation layers
// (tests/fixtures/nn/activation.json, written by tests/fixtures/gen_nn_norm.py), on
// Autodiff<Cpu> and on Dispatch (cpu+autodiff): state_dict names and shapes as torch's,
// output and gradients of sum(out * w) wrt the input and every parameter (PRelu's weight,
// SwiGlu's linear layers) within rel 1e-4 / abs 1e-5. Inputs keep away from the kinks.
// Also: configs' defaults (Burn's / PyTorch's) and the errors naming the layer.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <type_traits>

#include "ember/nn/activation.hpp"
#include "norm_test_support.hpp"

namespace ember::test::norm {
namespace {

/// Sets every Param of m from the fixture tensor of the same path (PyTorch's names), runs
/// the forward on the fixture's x and compares output and gradients.
template <class B, class M>
void check_module(M& m, const FixtureCase& c, const typename B::Device& dev) {
  expect_torch_state(m, c);
  Grads<B> g;
  nn::visit_mut(m, [&](const std::string& path, auto& leaf) {
    using L = std::remove_cvref_t<decltype(leaf)>;
    if constexpr (nn::is_param_v<L>) {
      using T = typename L::Value;
      ASSERT_TRUE(c.has(path)) << "the fixture has no parameter " << path;
      leaf.set(T::from_data(c.tensor(path), dev));
      g.add(path, leaf.val());
    }
  });
  with_rank(c.tensor("x").shape().rank(), [&]<std::size_t D>() {
    auto x = Tensor<B, D>::from_data(c.tensor("x"), dev).require_grad();
    g.add("x", x);
    g.check(c, m.forward(x), dev);
  });
}

template <class Env>
void run_activation(const FixtureCase& c) {
  using B = typename Env::B;
  const auto dev = Env::device();
  const std::string layer = c.param<std::string>("layer");
  auto run = [&](auto m) { check_module<B>(m, c, dev); };
  auto dim = [&] { return c.param<std::int64_t>("dim"); };
  if (layer == "relu") {
    run(nn::Relu{});
  } else if (layer == "relu6") {
    run(nn::Relu6{});
  } else if (layer == "leaky_relu") {
    run(nn::LeakyReluConfig{.negative_slope = c.param<double>("negative_slope")}.init());
  } else if (layer == "prelu") {
    run(nn::PReluConfig{.num_parameters = c.param<std::int64_t>("num_parameters")}.template init<B>(
        dev));
  } else if (layer == "gelu") {
    run(nn::GeluConfig{.approximate = c.param<std::string>("approximate") == "tanh"
                                          ? nn::GeluApproximate::Tanh
                                          : nn::GeluApproximate::None}
            .init());
  } else if (layer == "sigmoid") {
    run(nn::Sigmoid{});
  } else if (layer == "tanh") {
    run(nn::Tanh{});
  } else if (layer == "silu") {
    run(nn::Silu{});
  } else if (layer == "softplus") {
    run(nn::SoftplusConfig{.beta = c.param<double>("beta"),
                           .threshold = c.param<double>("threshold")}
            .init());
  } else if (layer == "mish") {
    run(nn::Mish{});
  } else if (layer == "hard_sigmoid") {
    run(nn::HardSigmoidConfig{.alpha = c.param<double>("alpha"), .beta = c.param<double>("beta")}
            .init());
  } else if (layer == "hard_swish") {
    run(nn::HardSwish{});
  } else if (layer == "hard_tanh") {
    run(nn::HardTanhConfig{.min_val = c.param<double>("min_val"),
                           .max_val = c.param<double>("max_val")}
            .init());
  } else if (layer == "log_sigmoid") {
    run(nn::LogSigmoid{});
  } else if (layer == "softsign") {
    run(nn::Softsign{});
  } else if (layer == "threshold") {
    run(nn::ThresholdConfig{.threshold = c.param<double>("threshold"),
                            .value = c.param<double>("value")}
            .init());
  } else if (layer == "thresholded_relu") {
    run(nn::ThresholdedReluConfig{.alpha = c.param<double>("alpha")}.init());
  } else if (layer == "rrelu") {  // torch's eval mode: the midpoint slope
    auto m = nn::RReluConfig{.lower = c.param<double>("lower"), .upper = c.param<double>("upper")}
                 .init();
    m.eval();
    run(m);
  } else if (layer == "elu") {
    run(nn::EluConfig{.alpha = c.param<double>("alpha")}.init());
  } else if (layer == "celu") {
    run(nn::CeluConfig{.alpha = c.param<double>("alpha")}.init());
  } else if (layer == "selu") {
    run(nn::Selu{});
  } else if (layer == "tanhshrink") {
    run(nn::Tanhshrink{});
  } else if (layer == "hard_shrink") {
    run(nn::HardShrinkConfig{.lambda = c.param<double>("lambd")}.init());
  } else if (layer == "soft_shrink") {
    run(nn::SoftShrinkConfig{.lambda = c.param<double>("lambd")}.init());
  } else if (layer == "glu") {
    run(nn::GluConfig{.dim = dim()}.init());
  } else if (layer == "softmax") {
    run(nn::SoftmaxConfig{.dim = dim()}.init());
  } else if (layer == "log_softmax") {
    run(nn::LogSoftmaxConfig{.dim = dim()}.init());
  } else if (layer == "softmin") {
    run(nn::SoftminConfig{.dim = dim()}.init());
  } else if (layer == "swiglu") {
    run(nn::SwiGluConfig{.d_input = c.param<std::int64_t>("d_input"),
                         .d_output = c.param<std::int64_t>("d_output"),
                         .bias = c.param<bool>("use_bias")}
            .template init<B>(dev));
  } else {
    FAIL() << "no Ember module for fixture layer " << layer;
  }
}
EMBER_NORM_FIXTURES(ActivationFixture, "nn/activation", "", run_activation);

using AD = Autodiff<Cpu>;

TEST(ActivationLayer, ConfigDefaultsAreBurnAndTorch) {
  EXPECT_EQ(nn::LeakyReluConfig{}.negative_slope, 0.01);
  EXPECT_EQ(nn::PReluConfig{}.num_parameters, 1);
  EXPECT_EQ(nn::PReluConfig{}.alpha, 0.25);
  EXPECT_EQ(nn::GeluConfig{}.approximate, nn::GeluApproximate::None);
  EXPECT_EQ(nn::SoftplusConfig{}.beta, 1.0);
  EXPECT_EQ(nn::SoftplusConfig{}.threshold, 20.0);
  EXPECT_EQ(nn::HardSigmoidConfig{}.alpha, 0.2);
  EXPECT_EQ(nn::HardSigmoidConfig{}.beta, 0.5);
  EXPECT_EQ(nn::HardTanhConfig{}.min_val, -1.0);
  EXPECT_EQ(nn::HardTanhConfig{}.max_val, 1.0);
  EXPECT_EQ(nn::EluConfig{}.alpha, 1.0);
  EXPECT_EQ(nn::CeluConfig{}.alpha, 1.0);
  EXPECT_EQ(nn::HardShrinkConfig{}.lambda, 0.5);
  EXPECT_EQ(nn::SoftShrinkConfig{}.lambda, 0.5);
  EXPECT_EQ(nn::GluConfig{}.dim, -1);
  EXPECT_EQ(nn::ThresholdedReluConfig{}.alpha, 1.0);
  EXPECT_EQ(nn::RReluConfig{}.lower, 0.125);
  EXPECT_EQ(nn::RReluConfig{}.upper, 1.0 / 3.0);
  EXPECT_EQ(nn::SoftmaxConfig{}.dim, -1);
  EXPECT_FALSE(nn::SwiGluConfig{}.bias);
}

TEST(ActivationLayer, PReluInitAndParamCount) {
  auto p = nn::PReluConfig{.num_parameters = 3, .alpha = 0.1}.init<AD>();
  EXPECT_EQ(p.weight.val().to_vec<float>(), (std::vector<float>{0.1f, 0.1f, 0.1f}));
  EXPECT_TRUE(p.weight.val().is_require_grad());
  EXPECT_EQ(nn::num_params(p), 3);
  // The shared default slope applies to every channel: -2 * 0.25.
  auto y = nn::PReluConfig{}.init<AD>().forward(Tensor<AD, 2>::from_floats({{-2.0, 3.0}}));
  EXPECT_EQ(y.to_vec<float>(), (std::vector<float>{-0.5f, 3.0f}));
}

TEST(ActivationLayer, PReluWrongChannelsNamesTheLayer) {
  auto p = nn::PReluConfig{.num_parameters = 3}.init<AD>();
  EMBER_EXPECT_THROW_MSG(p.forward(Tensor<AD, 3>::zeros({2, 4, 5})), ShapeError, "[PRelu]");
  EMBER_EXPECT_THROW_MSG(nn::PReluConfig{.num_parameters = 0}.init<AD>(), ValueError,
                         "num_parameters");
}

TEST(ActivationLayer, InvalidSettingsThrow) {
  EMBER_EXPECT_THROW_MSG(nn::SoftplusConfig{.beta = 0.0}.init(), ValueError, "[SoftplusConfig]");
  EMBER_EXPECT_THROW_MSG(nn::CeluConfig{.alpha = 0.0}.init(), ValueError, "[CeluConfig]");
  EMBER_EXPECT_THROW_MSG(nn::HardShrinkConfig{.lambda = -1.0}.init(), ValueError, "lambda");
  EMBER_EXPECT_THROW_MSG(nn::SoftShrinkConfig{.lambda = -0.1}.init(), ValueError, "lambda");
  EMBER_EXPECT_THROW_MSG((nn::HardTanhConfig{.min_val = 1.0, .max_val = 0.0}.init()), ValueError,
                         "max_val");
  EMBER_EXPECT_THROW_MSG(nn::Glu{}.forward(Tensor<AD, 2>::zeros({2, 5})), ShapeError, "odd");
  EMBER_EXPECT_THROW_MSG(nn::Softmax{.dim = 3}.forward(Tensor<AD, 2>::zeros({2, 5})), ShapeError,
                         "softmax");
  EMBER_EXPECT_THROW_MSG((nn::SwiGluConfig{.d_input = 4, .d_output = 3}.init<AD>().forward(
                             Tensor<AD, 2>::zeros({2, 5}))),
                         ShapeError, "[SwiGlu]");
}

TEST(ActivationLayer, HardSigmoidBurnDefaultDiffersFromTorch) {
  // Burn's alpha 0.2: hs(1) = 0.7; torch's alpha 1/6: hs(1) = 0.6667.
  auto x = Tensor<AD, 1>::from_floats({1.0, -3.0, 3.0});
  EXPECT_EQ(nn::HardSigmoid{}.forward(x).to_vec<float>(), (std::vector<float>{0.7f, 0.0f, 1.0f}));
  auto t = nn::HardSigmoidConfig{.alpha = 1.0 / 6.0}.init().forward(x).to_vec<float>();
  EXPECT_NEAR(t[0], 2.0 / 3.0, 1e-7);
  EXPECT_EQ(t[1], 0.0f);
  EXPECT_EQ(t[2], 1.0f);
}

TEST(ActivationLayer, StatelessModulesHaveNoParams) {
  EXPECT_EQ(nn::num_params(nn::Relu{}), 0);
  EXPECT_EQ(nn::num_params(nn::Softmax{}), 0);
  EXPECT_TRUE(nn::state_dict(nn::Gelu{}).empty());
  auto sw = nn::SwiGluConfig{.d_input = 4, .d_output = 3, .bias = true}.init<AD>();
  EXPECT_EQ(nn::num_params(sw), 2 * (4 * 3 + 3));
}

TEST(ActivationLayer, ConfigsRoundTripThroughJson) {
  const auto jg = nn::config_to_json(nn::GeluConfig{.approximate = nn::GeluApproximate::Tanh});
  EXPECT_EQ(jg.at("approximate"), "tanh");
  EXPECT_EQ(nn::config_from_json<nn::GeluConfig>(jg).approximate, nn::GeluApproximate::Tanh);
  EXPECT_EQ(nn::config_from_json<nn::GeluConfig>(nlohmann::json::object()).approximate,
            nn::GeluApproximate::None);
  const auto p = nn::config_from_json<nn::PReluConfig>(
      nn::config_to_json(nn::PReluConfig{.num_parameters = 5, .alpha = 0.1}));
  EXPECT_EQ(p.num_parameters, 5);
  EXPECT_EQ(p.alpha, 0.1);
  const auto sw = nn::config_from_json<nn::SwiGluConfig>(nn::config_to_json(
      nn::SwiGluConfig{.d_input = 3, .d_output = 4, .initializer = nn::Initializer::ones()}));
  EXPECT_EQ(sw.d_output, 4);
  EXPECT_EQ(sw.initializer, nn::Initializer::ones());
  EXPECT_EQ(nn::config_from_json<nn::SoftplusConfig>(nlohmann::json{{"beta", 2.0}}).threshold,
            20.0);
  EXPECT_EQ(nn::config_from_json<nn::GluConfig>(nlohmann::json{{"dim", 1}}).dim, 1);
}

TEST(ActivationLayer, SwiGluConstantInitMatchesBurn) {
  // Burn's swiglu test: constant 0.5 weights, x = [[1, 2, 3], [4, 5, 6]].
  auto sw =
      nn::SwiGluConfig{.d_input = 3, .d_output = 3, .initializer = nn::Initializer::constant(0.5)}
          .init<AD>();
  auto y = sw.forward(Tensor<AD, 2>::from_floats({{1, 2, 3}, {4, 5, 6}})).to_vec<float>();
  EXPECT_NEAR(y[0], 8.5732, 1e-4);
  EXPECT_NEAR(y[5], 56.2189, 1e-4);
  auto swb =
      nn::SwiGluConfig{
          .d_input = 3, .d_output = 3, .bias = true, .initializer = nn::Initializer::constant(0.5)}
          .init<AD>();
  auto yb = swb.forward(Tensor<AD, 2>::from_floats({{1, 2, 3}, {4, 5, 6}})).to_vec<float>();
  EXPECT_NEAR(yb[0], 11.8909, 1e-4);
  EXPECT_NEAR(yb[5], 63.9785, 1e-4);
}

template <class Env>
class RReluTraining : public ::testing::Test {};
using Envs = ::testing::Types<AutodiffCpuEnv, DispatchEnv>;
struct EnvNames {
  template <class T>
  static std::string GetName(int) {
    return T::name();
  }
};
TYPED_TEST_SUITE(RReluTraining, Envs, EnvNames);

TYPED_TEST(RReluTraining, NegativeSlopesAreUniformInRange) {
  // torch's generator is not Ember's: each negative output is x * a with a in [lower, upper),
  // the gradient there is a, the mean slope is (lower + upper) / 2 within 4 sigma, positives
  // pass unchanged with gradient 1.
  using B = typename TypeParam::B;
  B::seed(5);
  const double lo = 0.1, hi = 0.3;
  auto x = Tensor<B, 2>::random({100, 200}, Distribution::uniform(-2.0, 2.0), TypeParam::device())
               .require_grad();
  auto m = nn::RReluConfig{.lower = lo, .upper = hi}.init();
  auto y = m.forward(x);
  auto grads = y.sum().backward();
  const auto xv = x.template to_vec<double>(), yv = y.template to_vec<double>();
  const auto gv = x.grad(grads)->template to_vec<double>();
  double sum = 0;
  int neg = 0;
  for (std::size_t i = 0; i < xv.size(); ++i) {
    if (xv[i] < 0) {
      const double a = yv[i] / xv[i];
      ASSERT_GE(a, lo - 1e-6) << i;
      ASSERT_LE(a, hi + 1e-6) << i;
      ASSERT_NEAR(gv[i], a, 1e-5) << i;
      sum += a;
      ++neg;
    } else {
      ASSERT_EQ(yv[i], xv[i]) << i;
      ASSERT_EQ(gv[i], 1.0) << i;
    }
  }
  ASSERT_GT(neg, 9000);
  const double sigma = (hi - lo) / std::sqrt(12.0 * neg);
  EXPECT_NEAR(sum / neg, 0.5 * (lo + hi), 4 * sigma);
  // Eval: the midpoint slope.
  m.eval();
  auto e = m.forward(Tensor<B, 1>::from_floats({-1.0, 2.0}, TypeParam::device()));
  EXPECT_NEAR(e.template to_vec<double>()[0], -0.2, 1e-7);
  EXPECT_EQ(e.template to_vec<double>()[1], 2.0);
  EMBER_EXPECT_THROW_MSG((nn::RReluConfig{.lower = 0.5, .upper = 0.2}.init()), ValueError,
                         "[RReluConfig]");
}

/// Stateless activation modules as fields of a module.
struct ActBlock {
  nn::Relu act;
  nn::LeakyRelu leaky{.negative_slope = 0.5};
  EMBER_MODULE(act, leaky)
};

TEST(ActivationLayer, ModeAndValidOnStatelessModules) {
  ActBlock b;
  auto v = nn::valid(b);
  EXPECT_EQ(v.leaky.negative_slope, 0.5);
  EXPECT_EQ(v.leaky.forward(Tensor<Cpu, 1>::from_floats({-2.0})).to_vec<float>(),
            std::vector<float>{-1.0f});
  EXPECT_TRUE(nn::state_dict(b).empty());
}

}  // namespace
}  // namespace ember::test::norm
