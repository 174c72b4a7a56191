// Autodiff<Cpu>: finite-difference gradient checks of the element-wise family (unary,
// tensor-scalar, binary with broadcasting, clamp, reshape, cast, C++ operators) and
// hand-computed checks of the conventions at non-smooth points (PyTorch's
// tools/autograd/derivatives.yaml).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "ember/autodiff/cpu.hpp"
#include "ember/tensor/tensor.hpp"
#include "gradcheck.hpp"

namespace ember::test {
namespace {

using T2 = Tensor<AD, 2>;
using V2 = std::vector<T2>;

/// Values with |x| in [lo, hi] and a random sign (away from 0).
TensorData away_from_zero(const Shape& shape, std::uint64_t seed, double lo = 0.2,
                          double hi = 1.0) {
  auto v = random_data(shape, seed).to_vec<double>();
  for (auto& x : v) x = (x < 0 ? -1.0 : 1.0) * (lo + (hi - lo) * std::abs(x));
  return TensorData(std::move(v), shape);
}

/// Values k + [0.1, 0.4] for integers k in [-3, 2]: away from integers and from k + 0.5
/// (the jumps of floor/ceil/trunc/round).
TensorData off_integers(const Shape& shape, std::uint64_t seed) {
  auto v = random_data(shape, seed, -3.0, 3.0).to_vec<double>();
  for (auto& x : v) {
    const double k = std::floor(x);
    x = k + 0.1 + 0.3 * (x - k);
  }
  return TensorData(std::move(v), shape);
}

const Shape kShape{3, 4};

struct UnaryCase {
  std::string name;
  std::function<T2(const T2&)> op;
  TensorData input;
};

TEST(GradElementwise, UnaryOps) {
  const std::vector<UnaryCase> cases = {
      {"neg", [](const T2& x) { return x.neg(); }, random_data(kShape, 1)},
      {"abs", [](const T2& x) { return x.abs(); }, away_from_zero(kShape, 2)},
      {"sign", [](const T2& x) { return x.sign(); }, away_from_zero(kShape, 3)},
      {"square", [](const T2& x) { return x.square(); }, random_data(kShape, 4)},
      {"recip", [](const T2& x) { return x.recip(); }, away_from_zero(kShape, 5, 0.3, 2.0)},
      {"exp", [](const T2& x) { return x.exp(); }, random_data(kShape, 6)},
      {"log", [](const T2& x) { return x.log(); }, random_data(kShape, 7, 0.2, 3.0)},
      {"log1p", [](const T2& x) { return x.log1p(); }, random_data(kShape, 8, -0.6, 2.0)},
      {"sqrt", [](const T2& x) { return x.sqrt(); }, random_data(kShape, 9, 0.2, 3.0)},
      {"erf", [](const T2& x) { return x.erf(); }, random_data(kShape, 10, -2.0, 2.0)},
      {"sin", [](const T2& x) { return x.sin(); }, random_data(kShape, 11, -3.0, 3.0)},
      {"cos", [](const T2& x) { return x.cos(); }, random_data(kShape, 12, -3.0, 3.0)},
      {"tan", [](const T2& x) { return x.tan(); }, random_data(kShape, 13, -1.2, 1.2)},
      {"sinh", [](const T2& x) { return x.sinh(); }, random_data(kShape, 14, -2.0, 2.0)},
      {"cosh", [](const T2& x) { return x.cosh(); }, random_data(kShape, 15, -2.0, 2.0)},
      {"tanh", [](const T2& x) { return x.tanh(); }, random_data(kShape, 16, -2.0, 2.0)},
      {"asin", [](const T2& x) { return x.asin(); }, random_data(kShape, 17, -0.9, 0.9)},
      {"acos", [](const T2& x) { return x.acos(); }, random_data(kShape, 18, -0.9, 0.9)},
      {"atan", [](const T2& x) { return x.atan(); }, random_data(kShape, 19, -3.0, 3.0)},
      {"asinh", [](const T2& x) { return x.asinh(); }, random_data(kShape, 20, -3.0, 3.0)},
      {"acosh", [](const T2& x) { return x.acosh(); }, random_data(kShape, 21, 1.1, 4.0)},
      {"atanh", [](const T2& x) { return x.atanh(); }, random_data(kShape, 22, -0.9, 0.9)},
      {"round", [](const T2& x) { return x.round(); }, off_integers(kShape, 23)},
      {"floor", [](const T2& x) { return x.floor(); }, off_integers(kShape, 24)},
      {"ceil", [](const T2& x) { return x.ceil(); }, off_integers(kShape, 25)},
      {"trunc", [](const T2& x) { return x.trunc(); }, off_integers(kShape, 26)},
  };
  for (const auto& c : cases) {
    gradcheck<2>(c.name, [&](const V2& x) { return c.op(x[0]); }, {c.input});
  }
}

// expm1 (added with the op-description redesign): d/dx e^x - 1 = e^x, by finite differences.
TEST(GradElementwise, Expm1) {
  gradcheck<2>("expm1", [](const V2& x) { return x[0].expm1(); },
               {random_data(kShape, 27, -3.0, 3.0)});
}

TEST(GradElementwise, PiecewiseConstantOpsHaveZeroGradient) {
  auto x = T2::from_data(off_integers(kShape, 30)).require_grad();
  auto y = x.round() + x.floor() * 2.0 + x.ceil() * 3.0 + x.trunc() * 4.0 + x.sign() * 5.0;
  auto grads = y.sum().backward();
  for (double v : x.grad(grads)->to_vec<double>()) EXPECT_EQ(v, 0.0);
}

struct ScalarCase {
  std::string name;
  std::function<T2(const T2&)> op;
  TensorData input;
};

TEST(GradElementwise, TensorScalarOps) {
  const std::vector<ScalarCase> cases = {
      {"add_scalar", [](const T2& x) { return x.add_scalar(2.5); }, random_data(kShape, 40)},
      {"sub_scalar", [](const T2& x) { return x.sub_scalar(-1.5); }, random_data(kShape, 41)},
      {"mul_scalar", [](const T2& x) { return x.mul_scalar(-3.0); }, random_data(kShape, 42)},
      {"div_scalar", [](const T2& x) { return x.div_scalar(0.7); }, random_data(kShape, 43)},
      {"remainder_scalar", [](const T2& x) { return x.remainder_scalar(0.7); },
       random_data(kShape, 44, -3.0, 3.0)},
      {"remainder_scalar negative divisor", [](const T2& x) { return x.remainder_scalar(-0.9); },
       random_data(kShape, 45, -3.0, 3.0)},
      {"fmod_scalar", [](const T2& x) { return x.fmod_scalar(0.7); },
       random_data(kShape, 46, -3.0, 3.0)},
      {"powf_scalar 0", [](const T2& x) { return x.powf_scalar(0.0); },
       random_data(kShape, 47, 0.2, 2.0)},
      {"powf_scalar 1", [](const T2& x) { return x.powf_scalar(1.0); },
       random_data(kShape, 48, 0.2, 2.0)},
      {"powf_scalar 2.5", [](const T2& x) { return x.powf_scalar(2.5); },
       random_data(kShape, 49, 0.2, 2.0)},
      {"powf_scalar -1", [](const T2& x) { return x.powf_scalar(-1.0); },
       random_data(kShape, 50, 0.2, 2.0)},
      {"powf_scalar 2 (negative base)", [](const T2& x) { return x.powf_scalar(2.0); },
       random_data(kShape, 51, -2.0, 2.0)},
      {"powi_scalar 3", [](const T2& x) { return x.powi_scalar(3); }, random_data(kShape, 52)},
      {"rsub_scalar", [](const T2& x) { return x.rsub_scalar(2.0); }, random_data(kShape, 53)},
      {"rdiv_scalar", [](const T2& x) { return x.rdiv_scalar(2.0); }, away_from_zero(kShape, 54)},
      {"rremainder_scalar", [](const T2& x) { return x.rremainder_scalar(2.3); },
       random_data(kShape, 55, 0.4, 1.5)},
      {"clamp", [](const T2& x) { return x.clamp(-0.5, 0.4); }, random_data(kShape, 56)},
      {"clamp_min", [](const T2& x) { return x.clamp_min(0.1); }, random_data(kShape, 57)},
      {"clamp_max", [](const T2& x) { return x.clamp_max(-0.2); }, random_data(kShape, 58)},
  };
  for (const auto& c : cases) {
    gradcheck<2>(c.name, [&](const V2& x) { return c.op(x[0]); }, {c.input});
  }
}

struct BinaryCase {
  std::string name;
  std::function<T2(const T2&, const T2&)> op;
  // Inputs for shapes [3, 1] x [1, 4] (broadcasting) and [2, 3] x [2, 3].
  std::function<TensorData(const Shape&, std::uint64_t)> lhs, rhs;
};

TEST(GradElementwise, BinaryOpsWithBroadcasting) {
  auto unit = [](const Shape& s, std::uint64_t seed) { return random_data(s, seed); };
  auto nonzero = [](const Shape& s, std::uint64_t seed) { return away_from_zero(s, seed, 0.3); };
  auto wide = [](const Shape& s, std::uint64_t seed) { return random_data(s, seed, -3.0, 3.0); };
  auto positive = [](const Shape& s, std::uint64_t seed) { return random_data(s, seed, 0.3, 2.0); };
  auto exponent = [](const Shape& s, std::uint64_t seed) {
    return random_data(s, seed, -1.5, 2.5);
  };
  const std::vector<BinaryCase> cases = {
      {"add", [](const T2& a, const T2& b) { return a.add(b); }, unit, unit},
      {"sub", [](const T2& a, const T2& b) { return a.sub(b); }, unit, unit},
      {"mul", [](const T2& a, const T2& b) { return a.mul(b); }, unit, unit},
      {"div", [](const T2& a, const T2& b) { return a.div(b); }, unit, nonzero},
      {"remainder", [](const T2& a, const T2& b) { return a.remainder(b); }, wide, nonzero},
      {"fmod", [](const T2& a, const T2& b) { return a.fmod(b); }, wide, nonzero},
      {"powf", [](const T2& a, const T2& b) { return a.powf(b); }, positive, exponent},
      {"atan2", [](const T2& a, const T2& b) { return a.atan2(b); }, nonzero, nonzero},
      {"hypot", [](const T2& a, const T2& b) { return a.hypot(b); }, nonzero, nonzero},
      {"max_pair", [](const T2& a, const T2& b) { return a.max_pair(b); }, unit, unit},
      {"min_pair", [](const T2& a, const T2& b) { return a.min_pair(b); }, unit, unit},
  };
  const std::vector<std::pair<Shape, Shape>> shapes = {
      {Shape{3, 1}, Shape{1, 4}}, {Shape{2, 3}, Shape{2, 3}}, {Shape{2, 3}, Shape{1, 3}}};
  std::uint64_t seed = 100;
  for (const auto& c : cases) {
    for (const auto& [sa, sb] : shapes) {
      gradcheck<2>(c.name + " " + sa.to_string() + " x " + sb.to_string(),
                   [&](const V2& x) { return c.op(x[0], x[1]); },
                   {c.lhs(sa, seed), c.rhs(sb, seed + 1)});
      seed += 2;
    }
  }
}

TEST(GradElementwise, OneOperandConstant) {
  // Only the tracked operand gets a gradient; the rule must not touch the other.
  const auto a = random_data(Shape{3, 4}, 140), b = away_from_zero(Shape{1, 4}, 141);
  GradCheckOptions lhs_only;
  lhs_only.constant_inputs = {1};
  GradCheckOptions rhs_only;
  rhs_only.constant_inputs = {0};
  gradcheck<2>(
      "div lhs only", [](const V2& x) { return x[0] / x[1]; }, {a, b}, lhs_only);
  gradcheck<2>(
      "div rhs only", [](const V2& x) { return x[0] / x[1]; }, {a, b}, rhs_only);
  gradcheck<2>(
      "powf rhs only", [](const V2& x) { return x[0].abs().add_scalar(0.5).powf(x[1]); }, {a, b},
      rhs_only);
}

TEST(GradElementwise, CppOperators) {
  const auto a = random_data(Shape{3, 4}, 150), b = away_from_zero(Shape{3, 4}, 151);
  const auto c = random_data(Shape{1, 4}, 152);
  gradcheck<2>("a + b * c - a / b", [](const V2& x) { return x[0] + x[1] * x[2] - x[0] / x[1]; },
               {a, b, c});
  gradcheck<2>("-a * 2 + 3 - 1.5 / b", [](const V2& x) { return -x[0] * 2 + 3 - 1.5 / x[1]; },
               {a, b});
  gradcheck<2>("2 - a, a / 4, 5 * a",
               [](const V2& x) { return (2.0 - x[0]) * (x[0] / 4) + 5 * x[0]; }, {a});
  gradcheck<2>("a % b (operator)", [](const V2& x) { return (x[0] * 3.0) % x[1]; }, {a, b});
  gradcheck<2>("a * a (shared operand)", [](const V2& x) { return x[0] * x[0] * x[0]; }, {a});
}

TEST(GradElementwise, Reshape) {
  gradcheck<2>("reshape [3,4] -> [2,3,2]",
               [](const V2& x) {
                 return x[0].reshape<3>({2, 3, 2}).sin();
               },
               {random_data(kShape, 160)});
  gradcheck<2>("reshape [3,4] -> [12] (-1)",
               [](const V2& x) { return x[0].reshape<1>({-1}).square(); },
               {random_data(kShape, 161)});
  gradcheck<2>("reshape [3,4] -> [4,3]",
               [](const V2& x) {
                 return x[0].reshape<2>({4, 3}) * 2.0;
               },
               {random_data(kShape, 162)});
}

TEST(GradElementwise, ToDevice) {
  gradcheck<2>("to_device (cpu -> cpu)",
               [](const V2& x) { return x[0].to_device(AD::Device{}).exp(); },
               {random_data(kShape, 165)});
}

TEST(GradElementwise, CastChain) {
  // f64 -> f32 -> f64 is the identity up to f32 rounding, so the gradient is the upstream
  // gradient rounded to f32 and back, as f64. The functions are (bi)linear, so a large
  // eps = 2^-6 is exact for central differences and keeps the f32 rounding of the shifted
  // inputs (<= 2^-24 per difference) below 1e-5 after dividing by 2 eps.
  GradCheckOptions opt;
  opt.eps = 1.0 / 64;
  opt.rtol = 1e-4;
  opt.atol = 1e-5;
  gradcheck<2>(
      "cast f64 -> f32 -> f64",
      [](const V2& x) { return x[0].cast(DType::F32).cast(DType::F64).mul_scalar(3.0); },
      {random_data(kShape, 170)}, opt);
  gradcheck<2>(
      "f32 product, cast back",
      [](const V2& x) { return (x[0].cast(DType::F32) * x[1].cast(DType::F32)).cast(DType::F64); },
      {random_data(kShape, 171), random_data(kShape, 172)}, opt);

  auto x = T2::from_data(random_data(kShape, 173)).require_grad();
  const auto w = random_data(kShape, 174);
  auto y = x.cast(DType::F32).cast(DType::F64);
  EXPECT_EQ(y.dtype(), DType::F64);
  auto grads = (y * T2::from_data(w)).sum().backward();
  auto g = *x.grad(grads);
  EXPECT_EQ(g.dtype(), DType::F64);
  const auto gv = g.to_vec<double>();
  const auto wv = w.to_vec<double>();
  for (std::size_t i = 0; i < gv.size(); ++i)
    EXPECT_EQ(gv[i], static_cast<double>(static_cast<float>(wv[i]))) << i;
}

TEST(GradElementwise, GradientsKeepTheOperandDtype) {
  // The front end promotes f32 (+) f64 to f64 with a recorded cast: each operand's gradient
  // comes back in its own dtype and shape.
  auto a = T2::from_floats({{1.0, 2.0, 3.0}}, AD::Device{}, DType::F32).require_grad();
  auto b = T2::from_floats({{0.5}, {-2.0}}, AD::Device{}, DType::F64).require_grad();
  auto y = a * b;
  EXPECT_EQ(y.dtype(), DType::F64);
  auto grads = y.sum().backward();
  auto ga = *a.grad(grads), gb = *b.grad(grads);
  EXPECT_EQ(ga.dtype(), DType::F32);
  EXPECT_EQ(gb.dtype(), DType::F64);
  EXPECT_EQ(ga.shape(), Shape({1, 3}));
  EXPECT_EQ(gb.shape(), Shape({2, 1}));
  EXPECT_EQ(ga.to_vec<double>(), (std::vector<double>{-1.5, -1.5, -1.5}));
  EXPECT_EQ(gb.to_vec<double>(), (std::vector<double>{6.0, 6.0}));
  // f32 unary chain: the gradient stays f32.
  auto x = T2::from_floats({{0.25, -0.5}}, AD::Device{}, DType::F32).require_grad();
  auto gx = *x.grad(x.tanh().exp().sum().backward());
  EXPECT_EQ(gx.dtype(), DType::F32);
  const auto v = gx.to_vec<double>();
  for (std::size_t i = 0; i < v.size(); ++i) {
    const double xi = i == 0 ? 0.25 : -0.5, t = std::tanh(xi);
    EXPECT_NEAR(v[i], std::exp(t) * (1 - t * t), 1e-6);
  }
}

// ---- conventions at non-smooth points (hand-computed) ------------------------------------

std::vector<double> grad_of(const T2& x, const AD::Gradients& grads) {
  return x.grad(grads)->to_vec<double>();
}

TEST(GradElementwise, ClampPassesGradientAtTheBoundaries) {
  // derivatives.yaml clamp: grad * ((self >= min) & (self <= max)).
  auto x = T2::from_floats({{-0.5, 0.5, 0.0, 1.0, -1.0}}, AD::Device{}, DType::F64).require_grad();
  EXPECT_EQ(grad_of(x, x.clamp(-0.5, 0.5).sum().backward()), (std::vector<double>{1, 1, 1, 0, 0}));
  EXPECT_EQ(grad_of(x, x.clamp_min(0.5).sum().backward()), (std::vector<double>{0, 1, 0, 1, 0}));
  EXPECT_EQ(grad_of(x, x.clamp_max(-0.5).sum().backward()), (std::vector<double>{1, 0, 0, 0, 1}));
}

TEST(GradElementwise, MaxMinPairTiesSplitTheGradient) {
  auto a = T2::from_floats({{1.0, 2.0, 3.0}}, AD::Device{}, DType::F64).require_grad();
  auto b = T2::from_floats({{1.0, 3.0, 2.0}}, AD::Device{}, DType::F64).require_grad();
  auto w = T2::from_floats({{2.0, 4.0, 8.0}}, AD::Device{}, DType::F64);
  auto gmax = (a.max_pair(b) * w).sum().backward();
  EXPECT_EQ(grad_of(a, gmax), (std::vector<double>{1, 0, 8}));
  EXPECT_EQ(grad_of(b, gmax), (std::vector<double>{1, 4, 0}));
  auto gmin = (a.min_pair(b) * w).sum().backward();
  EXPECT_EQ(grad_of(a, gmin), (std::vector<double>{1, 4, 0}));
  EXPECT_EQ(grad_of(b, gmin), (std::vector<double>{1, 0, 8}));
  // Broadcast ties: a [2, 1] against b [1, 2].
  auto c = T2::from_floats({{1.0}, {2.0}}, AD::Device{}, DType::F64).require_grad();
  auto d = T2::from_floats({{1.0, 2.0}}, AD::Device{}, DType::F64).require_grad();
  auto gb = c.max_pair(d).sum().backward();
  // max: (1,1) tie, (1,2) d wins, (2,1) c wins, (2,2) tie.
  EXPECT_EQ(grad_of(c, gb), (std::vector<double>{0.5, 1.5}));
  EXPECT_EQ(grad_of(d, gb), (std::vector<double>{0.5, 1.5}));
}

TEST(GradElementwise, AbsAtZeroHasZeroGradient) {
  auto x = T2::from_floats({{0.0, -2.0, 3.0}}, AD::Device{}, DType::F64).require_grad();
  EXPECT_EQ(grad_of(x, x.abs().sum().backward()), (std::vector<double>{0, -1, 1}));
}

TEST(GradElementwise, PowfScalarZeroHasZeroGradient) {
  // derivatives.yaml pow_backward: exponent == 0 -> zeros (also at x = 0).
  auto x = T2::from_floats({{0.0, -2.0, 3.0}}, AD::Device{}, DType::F64).require_grad();
  auto y = x.powf_scalar(0.0);
  EXPECT_EQ(y.inner().to_vec<double>(), (std::vector<double>{1, 1, 1}));
  EXPECT_EQ(grad_of(x, y.sum().backward()), (std::vector<double>{0, 0, 0}));
  // Exponent 1 at 0: x^0 = 1.
  EXPECT_EQ(grad_of(x, x.powf_scalar(1.0).sum().backward()), (std::vector<double>{1, 1, 1}));
}

TEST(GradElementwise, PowfTensorConventionsAtZero) {
  // d/da a^b = b a^(b-1), 0 where b == 0; d/db a^b = a^b log a, 0 where a == 0 and b >= 0.
  auto a = T2::from_floats({{0.0, 0.0, 2.0}}, AD::Device{}, DType::F64).require_grad();
  auto b = T2::from_floats({{0.0, 2.0, 0.0}}, AD::Device{}, DType::F64).require_grad();
  auto grads = a.powf(b).sum().backward();
  EXPECT_EQ(grad_of(a, grads), (std::vector<double>{0, 0, 0}));
  const auto gb = grad_of(b, grads);
  EXPECT_EQ(gb[0], 0.0);
  EXPECT_EQ(gb[1], 0.0);
  EXPECT_DOUBLE_EQ(gb[2], std::log(2.0));
}

}  // namespace
}  // namespace ember::test
