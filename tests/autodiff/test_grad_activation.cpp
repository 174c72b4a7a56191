// Autodiff<Cpu>: gradients of the activation composites (ember/tensor/activation.hpp), which
// Autodiff runs through required ops. f64 central differences on inputs away from the kinks;
// the convention / overflow cases with hand-computed values.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ember/autodiff/cpu.hpp"
#include "ember/tensor/activation.hpp"
#include "ember/tensor/tensor.hpp"
#include "gradcheck.hpp"
#include "test_grad_nn_support.hpp"

namespace ember::test {
namespace {

namespace act = ember::activation;
using nn_grad::kink_free;
using T2 = Tensor<AD, 2>;
using T3 = Tensor<AD, 3>;
using V2 = std::vector<T2>;
using V3 = std::vector<T3>;

const Shape kShape{4, 5};

TEST(GradActivation, PiecewiseLinear) {
  const auto d = kink_free(kShape, 1, -8.0, 8.0, {0.0, 6.0});
  gradcheck<2>("relu", [](const V2& xs) { return act::relu(xs[0]); }, {d});
  gradcheck<2>("relu6", [](const V2& xs) { return act::relu6(xs[0]); }, {d});
  gradcheck<2>("leaky_relu", [](const V2& xs) { return act::leaky_relu(xs[0]); }, {d});
  gradcheck<2>("leaky_relu 0.3", [](const V2& xs) { return act::leaky_relu(xs[0], 0.3); }, {d});
  const auto h = kink_free(kShape, 2, -5.0, 5.0, {-3.0, 3.0, -2.5, 2.5});
  gradcheck<2>("hard_sigmoid", [](const V2& xs) { return act::hard_sigmoid(xs[0]); }, {h});
  gradcheck<2>("hard_sigmoid torch",
               [](const V2& xs) { return act::hard_sigmoid(xs[0], 1.0 / 6, 0.5); }, {h});
  gradcheck<2>("hard_swish", [](const V2& xs) { return act::hard_swish(xs[0]); }, {h});
  const auto s = kink_free(kShape, 3, -1.5, 1.5, {-0.5, 0.5, -0.3, 0.3});
  gradcheck<2>("hard_shrink", [](const V2& xs) { return act::hard_shrink(xs[0]); }, {s});
  gradcheck<2>("soft_shrink", [](const V2& xs) { return act::soft_shrink(xs[0]); }, {s});
  gradcheck<2>("soft_shrink 0.3", [](const V2& xs) { return act::soft_shrink(xs[0], 0.3); }, {s});
}

TEST(GradActivation, PreluGradsToInputAndWeight) {
  // x [3, 4, 2] with per-channel weight [4] (passed as [1, 1, 4]) and a shared weight [1].
  const auto x = kink_free({3, 4, 2}, 4, -2.0, 2.0, {0.0});
  gradcheck<3>("prelu per channel",
               [](const V3& xs) { return act::prelu(xs[0], xs[1].reshape({4})); },
               {x, random_data({1, 1, 4}, 5, 0.05, 0.5)});
  gradcheck<3>("prelu shared", [](const V3& xs) { return act::prelu(xs[0], xs[1].reshape({1})); },
               {x, random_data({1, 1, 1}, 6, 0.05, 0.5)});
  const auto x2 = kink_free(kShape, 7, -2.0, 2.0, {0.0});
  gradcheck<2>("prelu rank 2", [](const V2& xs) { return act::prelu(xs[0], xs[1].reshape({5})); },
               {x2, random_data({1, 5}, 8, -0.5, 0.5)});
}

TEST(GradActivation, Smooth) {
  const auto d = random_data(kShape, 11, -3.0, 3.0);
  gradcheck<2>("gelu", [](const V2& xs) { return act::gelu(xs[0]); }, {d});
  gradcheck<2>("gelu_tanh", [](const V2& xs) { return act::gelu_tanh(xs[0]); }, {d});
  gradcheck<2>("silu", [](const V2& xs) { return act::silu(xs[0]); }, {d});
  gradcheck<2>("mish", [](const V2& xs) { return act::mish(xs[0]); }, {d});
  gradcheck<2>("sigmoid", [](const V2& xs) { return act::sigmoid(xs[0]); }, {d});
  gradcheck<2>("log_sigmoid", [](const V2& xs) { return act::log_sigmoid(xs[0]); }, {d});
  gradcheck<2>("softplus", [](const V2& xs) { return act::softplus(xs[0]); }, {d});
  gradcheck<2>("softsign", [](const V2& xs) { return act::softsign(xs[0]); }, {d});
  gradcheck<2>("tanhshrink", [](const V2& xs) { return act::tanhshrink(xs[0]); }, {d});
  gradcheck<2>("celu", [](const V2& xs) { return act::celu(xs[0]); }, {d});
  gradcheck<2>("celu 0.7", [](const V2& xs) { return act::celu(xs[0], 0.7); }, {d});
  const auto e = kink_free(kShape, 12, -3.0, 3.0, {0.0});
  gradcheck<2>("elu", [](const V2& xs) { return act::elu(xs[0]); }, {e});
  gradcheck<2>("elu 0.5", [](const V2& xs) { return act::elu(xs[0], 0.5); }, {e});
  gradcheck<2>("selu", [](const V2& xs) { return act::selu(xs[0]); }, {e});
}

TEST(GradActivation, SoftplusBetaThreshold) {
  // beta x on both sides of the threshold (the switch to x is a tiny jump: stay away from it).
  const auto d = kink_free(kShape, 13, -4.0, 4.0, {1.5});
  gradcheck<2>("softplus beta 2 threshold 3",
               [](const V2& xs) { return act::softplus(xs[0], 2.0, 3.0); }, {d});
  gradcheck<2>("softplus beta 0.5 threshold 1",
               [](const V2& xs) { return act::softplus(xs[0], 0.5, 1.0); },
               {kink_free(kShape, 14, -4.0, 4.0, {2.0})});
}

TEST(GradActivation, Glu) {
  gradcheck<2>("glu last", [](const V2& xs) { return act::glu(xs[0]); },
               {random_data({3, 6}, 21, -2.0, 2.0)});
  gradcheck<2>("glu dim 0", [](const V2& xs) { return act::glu(xs[0], 0); },
               {random_data({4, 3}, 22, -2.0, 2.0)});
}

TEST(GradActivation, SoftmaxFamily) {
  const auto d = random_data({3, 4, 5}, 31, -3.0, 3.0);
  for (std::int64_t dim : {-1, 0, 1}) {
    SCOPED_TRACE("dim " + std::to_string(dim));
    gradcheck<3>("softmax", [dim](const V3& xs) { return act::softmax(xs[0], dim); }, {d});
    gradcheck<3>("log_softmax", [dim](const V3& xs) { return act::log_softmax(xs[0], dim); }, {d});
    gradcheck<3>("softmin", [dim](const V3& xs) { return act::softmin(xs[0], dim); }, {d});
    gradcheck<3>("quiet_softmax", [dim](const V3& xs) { return act::quiet_softmax(xs[0], dim); },
                 {d});
  }
}

TEST(GradActivation, SoftmaxWithTiedMaximaIsTheAnalyticGradient) {
  // Ties at the maximum: the shift is detached, so the gradient is exactly p (g - <g, p>).
  auto x =
      Tensor<AD, 1>::from_floats({2.0, 2.0, -1.0, 0.5}, AD::Device{}, DType::F64).require_grad();
  const std::vector<double> g{1.0, -2.0, 0.5, 3.0};
  auto p = act::softmax(x, 0);
  auto grads = (p * Tensor<AD, 1>::from_floats({1.0, -2.0, 0.5, 3.0}, AD::Device{}, DType::F64))
                   .sum()
                   .backward();
  const auto pv = p.inner().to_vec<double>();
  double dot = 0;
  for (std::size_t i = 0; i < 4; ++i) dot += g[i] * pv[i];
  const auto gx = x.grad(grads)->to_vec<double>();
  for (std::size_t i = 0; i < 4; ++i) EXPECT_NEAR(gx[i], pv[i] * (g[i] - dot), 1e-15) << i;
  // log_softmax: g - p sum(g)
  auto y =
      Tensor<AD, 1>::from_floats({2.0, 2.0, -1.0, 0.5}, AD::Device{}, DType::F64).require_grad();
  auto gl = (act::log_softmax(y, 0) *
             Tensor<AD, 1>::from_floats({1.0, -2.0, 0.5, 3.0}, AD::Device{}, DType::F64))
                .sum()
                .backward();
  const auto gy = y.grad(gl)->to_vec<double>();
  for (std::size_t i = 0; i < 4; ++i) EXPECT_NEAR(gy[i], g[i] - pv[i] * 2.5, 1e-15) << i;
}

TEST(GradActivation, MaskedSoftmaxRowGivesZeroGradientAtMinusInf) {
  const double ninf = -std::numeric_limits<double>::infinity();
  auto x = Tensor<AD, 1>::from_floats({1.0, ninf, 0.0}).require_grad();
  auto grads = (act::softmax(x, 0) * Tensor<AD, 1>::from_floats({1.0, 2.0, 3.0})).sum().backward();
  const auto g = x.grad(grads)->to_vec<double>();
  EXPECT_EQ(g[1], 0.0);
  EXPECT_TRUE(std::isfinite(g[0]) && std::isfinite(g[2]));
}

// ---- overflow of an unused branch / smooth points reached through kinked ops ---------------

TEST(GradActivation, SaturatedInputsGiveFiniteGradients) {
  // f32: exp(88.8) overflows. torch: sigmoid'(-100) = 0 (underflow), elu'(100) = 1, ...
  const std::vector<double> xs{-1000.0, -100.0, 100.0, 1000.0};
  auto check = [&](const char* name, const std::vector<double>& got,
                   const std::vector<double>& want) {
    SCOPED_TRACE(name);
    for (std::size_t i = 0; i < want.size(); ++i) {
      ASSERT_TRUE(std::isfinite(got[i])) << "x = " << xs[i];
      EXPECT_NEAR(got[i], want[i], 1e-6) << "x = " << xs[i];
    }
  };
  check("sigmoid", nn_grad::grad_at([](auto x) { return act::sigmoid(x); }, xs), {0, 0, 0, 0});
  check("silu", nn_grad::grad_at([](auto x) { return act::silu(x); }, xs), {0, 0, 1, 1});
  check("elu", nn_grad::grad_at([](auto x) { return act::elu(x); }, xs), {0, 0, 1, 1});
  check("celu", nn_grad::grad_at([](auto x) { return act::celu(x, 2.0); }, xs), {0, 0, 1, 1});
  check("selu", nn_grad::grad_at([](auto x) { return act::selu(x); }, xs),
        {0, 0, 1.0507009873554805, 1.0507009873554805});
  check("softplus", nn_grad::grad_at([](auto x) { return act::softplus(x); }, xs), {0, 0, 1, 1});
  check("mish", nn_grad::grad_at([](auto x) { return act::mish(x); }, xs), {0, 0, 1, 1});
  check("log_sigmoid", nn_grad::grad_at([](auto x) { return act::log_sigmoid(x); }, xs),
        {1, 1, 0, 0});
  check("glu", nn_grad::grad_at([](auto x) { return act::glu(x); }, {3.0, -1000.0}), {0, 0});
  // f64 overflows at 709.8
  const std::vector<double> big{-1000.0, 1000.0};
  const auto g64 = nn_grad::grad_at([](auto x) { return act::sigmoid(x); }, big, DType::F64);
  EXPECT_EQ(g64, (std::vector<double>{0.0, 0.0}));
  const auto e64 = nn_grad::grad_at([](auto x) { return act::elu(x); }, big, DType::F64);
  EXPECT_EQ(e64, (std::vector<double>{0.0, 1.0}));
}

TEST(GradActivation, LogSigmoidAtZeroIsOneHalf) {
  // log_sigmoid is smooth at 0: d/dx = sigmoid(-x) = 0.5 (torch). The min(x, 0) form's
  // clamp/abs conventions gave 1.
  const auto g =
      nn_grad::grad_at([](auto x) { return act::log_sigmoid(x); }, {0.0, -0.0}, DType::F64);
  EXPECT_EQ(g, (std::vector<double>{0.5, 0.5}));
}

// The composites changed for their gradients (sigmoid, softplus, log_sigmoid, elu, celu) give
// the same forward values as the expressions they replace, bit for bit, at extreme inputs.
TEST(GradActivation, FixedCompositesKeepTheirForwardValues) {
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> v{
      -inf,  -1000.0, -100.0, -88.8, -30.0,  -20.5, -1.0,
      -1e-4, -0.0,    0.0,    1e-4,  0.5,    1.0,   19.5,
      20.5,  30.0,    88.8,   100.0, 1000.0, inf,   std::numeric_limits<double>::quiet_NaN()};
  for (DType dt : {DType::F32, DType::F64}) {
    SCOPED_TRACE(dt == DType::F32 ? "f32" : "f64");
    // Tracked, as the gradient-only code paths (sigmoid) run for tracked inputs only.
    auto x = Tensor<AD, 1>::from_data(
                 TensorData(v, Shape({static_cast<std::int64_t>(v.size())})).convert(dt))
                 .require_grad();
    auto same = [&](const char* name, const Tensor<AD, 1>& got, const Tensor<AD, 1>& want) {
      const auto a = got.inner().to_vec<double>(), b = want.inner().to_vec<double>();
      for (std::size_t i = 0; i < a.size(); ++i) {
        const bool ok = (std::isnan(a[i]) && std::isnan(b[i])) ||
                        (a[i] == b[i] && std::signbit(a[i]) == std::signbit(b[i]));
        EXPECT_TRUE(ok) << name << " at x = " << v[i] << ": " << a[i] << " vs " << b[i];
      }
    };
    same("sigmoid", act::sigmoid(x), x.neg().exp().add_scalar(1.0).recip());
    same("sigmoid untracked", act::sigmoid(x.detach()), x.neg().exp().add_scalar(1.0).recip());
    for (auto [beta, th] : {std::pair{1.0, 20.0}, std::pair{2.0, 5.0}, std::pair{-1.0, 20.0},
                            std::pair{1.0, 1000.0}}) {
      auto bx = x.mul_scalar(beta);
      same("softplus", act::softplus(x, beta, th),
           bx.exp().log1p().div_scalar(beta).mask_where(bx.greater_elem(th), x));
    }
    same("log_sigmoid", act::log_sigmoid(x), x.clamp_max(0.0).sub(x.abs().neg().exp().log1p()));
    for (double alpha : {1.0, 0.5}) {
      auto neg = x.lower_equal_elem(0.0);
      same("elu", act::elu(x, alpha), x.mask_where(neg, x.exp().sub_scalar(1.0).mul_scalar(alpha)));
      same("celu", act::celu(x, alpha),
           x.mask_where(neg, x.div_scalar(alpha).exp().sub_scalar(1.0).mul_scalar(alpha)));
    }
  }
}

// ---- grad of grad ----------------------------------------------------------------------------

TEST(GradActivation, SecondDerivatives) {
  using nn_grad::gradgradcheck;
  const auto d = random_data({3, 4}, 41, -2.5, 2.5);
  gradgradcheck<2>(
      "gelu", [](const T2& x) { return act::gelu(x); }, d);
  gradgradcheck<2>(
      "gelu_tanh", [](const T2& x) { return act::gelu_tanh(x); }, d);
  gradgradcheck<2>(
      "softmax", [](const T2& x) { return act::softmax(x, 1); }, d);
  gradgradcheck<2>(
      "log_softmax", [](const T2& x) { return act::log_softmax(x, 0); }, d);
  gradgradcheck<2>(
      "silu", [](const T2& x) { return act::silu(x); }, d);
  gradgradcheck<2>(
      "mish", [](const T2& x) { return act::mish(x); }, d);
  gradgradcheck<2>(
      "log_sigmoid", [](const T2& x) { return act::log_sigmoid(x); }, d);
  gradgradcheck<2>(
      "elu", [](const T2& x) { return act::elu(x); }, kink_free({3, 4}, 42, -2.5, 2.5, {0.0}));
}

TEST(GradActivation, GeluSecondDerivativeByHand) {
  // gelu''(x) = phi(x) (2 - x^2), phi the standard normal density.
  const std::vector<double> xs{-1.3, 0.2, 0.9};
  auto x = Tensor<AD, 1>::from_data(TensorData(xs, Shape({3}))).require_grad();
  auto gx = *x.grad_graph(act::gelu(x).sum().backward(true));
  const auto h = x.grad(gx.sum().backward())->to_vec<double>();
  for (std::size_t i = 0; i < 3; ++i) {
    const double phi = std::exp(-xs[i] * xs[i] / 2) / std::sqrt(2 * M_PI);
    EXPECT_NEAR(h[i], phi * (2 - xs[i] * xs[i]), 1e-12) << xs[i];
  }
}

}  // namespace
}  // namespace ember::test
