// Activation family: hand-computed edge cases (dtypes, NaN, empty and strided inputs,
// large inputs against a double reference) and one test per front-end check.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "activation_backends.hpp"
#include "backends.hpp"
#include "ember/tensor/activation.hpp"
#include "ember/tensor/loss.hpp"
#include "ember/tensor/module/nn.hpp"
#include "fixtures.hpp"

using namespace ember;
using ember::test::expect_approx;

template <class B>
class ActivationEdge : public ::testing::Test {};
TYPED_TEST_SUITE(ActivationEdge, ember::test::ActivationBackends, ember::test::BackendNames);

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// A [rows, cols] view of a [cols, rows] buffer (transposed strides).
template <class B>
Tensor<B, 2> transposed(const std::vector<float>& v, std::int64_t rows, std::int64_t cols) {
  auto base = Tensor<B, 2>::from_data(TensorData(v, Shape{cols, rows}));
  CpuTensor p = ember::test::cpu_of(base.primitive());
  p.shape = Shape{rows, cols};
  p.strides = {1, rows};
  return Tensor<B, 2>(ember::test::with_cpu(base.primitive(), std::move(p)));
}

std::vector<double> softmax_ref(const std::vector<float>& x, std::int64_t outer, std::int64_t n,
                                std::int64_t inner, bool log) {
  std::vector<double> out(x.size());
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t i = 0; i < inner; ++i) {
      double m = -kInf, s = 0;
      for (std::int64_t j = 0; j < n; ++j) m = std::max(m, double(x[(o * n + j) * inner + i]));
      for (std::int64_t j = 0; j < n; ++j) s += std::exp(double(x[(o * n + j) * inner + i]) - m);
      for (std::int64_t j = 0; j < n; ++j) {
        const double v = double(x[(o * n + j) * inner + i]) - m;
        out[(o * n + j) * inner + i] = log ? v - std::log(s) : std::exp(v) / s;
      }
    }
  return out;
}
}  // namespace

TYPED_TEST(ActivationEdge, NaNPropagates) {
  using B = TypeParam;
  auto x = Tensor<B, 1>::from_floats({kNaN, -1.0, 2.0});
  for (auto y : {activation::relu(x), activation::relu6(x), activation::sigmoid(x),
                 activation::gelu(x), activation::silu(x), activation::hard_shrink(x),
                 activation::soft_shrink(x), activation::elu(x)}) {
    EXPECT_TRUE(std::isnan(y.template to_vec<double>()[0]));
  }
  auto s = activation::softmax(Tensor<B, 2>::from_floats({{1.0, kNaN, 2.0}, {1.0, 2.0, 3.0}}), -1)
               .template to_vec<double>();
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(std::isnan(s[i]));
  EXPECT_NEAR(s[3] + s[4] + s[5], 1.0, 1e-6);
}

TYPED_TEST(ActivationEdge, HalfAndBFloat16) {
  using B = TypeParam;
  for (DType dt : {DType::F16, DType::BF16}) {
    auto x = Tensor<B, 2>::from_floats({{-2.0, -0.5, 0.0}, {0.5, 1.0, 3.0}}, {}, dt);
    auto r = activation::relu(x);
    EXPECT_EQ(r.dtype(), dt);
    expect_approx(r.into_data(), TensorData(std::vector<double>{0, 0, 0, 0.5, 1, 3}, Shape{2, 3}));
    auto sm = activation::softmax(x, 1);
    EXPECT_EQ(sm.dtype(), dt);
    const double e0 = std::exp(-2.0), e1 = std::exp(-0.5), e2 = 1.0, e3 = std::exp(0.5),
                 e4 = std::exp(1.0), e5 = std::exp(3.0);
    expect_approx(sm.into_data(),
                  TensorData(std::vector<double>{e0 / (e0 + e1 + e2), e1 / (e0 + e1 + e2),
                                                 e2 / (e0 + e1 + e2), e3 / (e3 + e4 + e5),
                                                 e4 / (e3 + e4 + e5), e5 / (e3 + e4 + e5)},
                             Shape{2, 3}),
                  Tolerance::permissive());
    auto g = activation::gelu(x).template to_vec<double>();
    EXPECT_NEAR(g[5], 3.0 * 0.5 * (1.0 + std::erf(3.0 / std::sqrt(2.0))), 0.02);
  }
}

TYPED_TEST(ActivationEdge, EmptyTensors) {
  using B = TypeParam;
  auto x = Tensor<B, 2>::zeros(Shape{0, 3});
  EXPECT_EQ(activation::relu(x).shape(), (Shape{0, 3}));
  EXPECT_EQ(activation::softmax(x, 0).shape(), (Shape{0, 3}));
  EXPECT_EQ(activation::log_softmax(x, 1).shape(), (Shape{0, 3}));
  EXPECT_EQ(module::layer_norm<1>(x).shape(), (Shape{0, 3}));
}

TYPED_TEST(ActivationEdge, StridedInputs) {
  using B = TypeParam;
  // buffer [3, 2] = [[1, 2], [3, 4], [5, 6]] seen as [2, 3] = [[1, 3, 5], [2, 4, 6]]
  auto x = transposed<B>({1, 2, 3, 4, 5, 6}, 2, 3);
  auto sm = activation::softmax(x, 1).template to_vec<double>();
  const double z = std::exp(1.0) + std::exp(3.0) + std::exp(5.0);
  EXPECT_NEAR(sm[0], std::exp(1.0) / z, 1e-6);
  EXPECT_NEAR(sm[5], std::exp(6.0) / (std::exp(2.0) + std::exp(4.0) + std::exp(6.0)), 1e-6);
  auto y = transposed<B>({-1, 2, -3, 4, 5, -6}, 2, 3);
  expect_approx(activation::relu(y).into_data(),
                TensorData(std::vector<float>{0, 0, 5, 2, 4, 0}, Shape{2, 3}));
  expect_approx(
      activation::log_softmax(y, 0).into_data(),
      TensorData(
          std::vector<double>{-3 - std::log1p(std::exp(-3.0)), -7 - std::log1p(std::exp(-7.0)),
                              -std::log1p(std::exp(-11.0)), -std::log1p(std::exp(-3.0)),
                              -std::log1p(std::exp(-7.0)), -11 - std::log1p(std::exp(-11.0))},
          Shape{2, 3}));
  expect_approx(
      module::layer_norm<1>(y).into_data(),
      module::layer_norm<1>(Tensor<B, 2>::from_floats({{-1, -3, 5}, {2, 4, -6}})).into_data());
}

TYPED_TEST(ActivationEdge, RvalueReusesBuffer) {
  using B = TypeParam;
  if (!ember::test::buffers_observable<B>())
    GTEST_SKIP() << "buffers of a GPU device are not observable here";
  auto x = Tensor<B, 2>::from_floats({{-1.0, 2.0}, {3.0, -4.0}});
  const void* before = ember::test::cpu_of(x.primitive()).raw();
  auto y = activation::sigmoid(std::move(x));
  EXPECT_EQ(ember::test::cpu_of(y.primitive()).raw(), before);
  EXPECT_NEAR(y.template to_vec<double>()[1], 1.0 / (1.0 + std::exp(-2.0)), 1e-6);
}

TYPED_TEST(ActivationEdge, LargeSoftmaxMatchesDoubleReference) {
  using B = TypeParam;
  // Big enough for the threaded, vectorised paths: rows, and columns with inner > 256.
  B::seed(7);
  auto x = Tensor<B, 3>::random(Shape{3, 64, 300}, Distribution::normal(0.0, 4.0));
  const auto xv = x.template to_vec<float>();
  for (bool log : {false, true}) {
    for (int dim : {2, 1, 0}) {
      const std::int64_t outer = dim == 0 ? 1 : (dim == 1 ? 3 : 3 * 64);
      const std::int64_t n = x.dim(dim), inner = dim == 2 ? 1 : (dim == 1 ? 300 : 64 * 300);
      auto y = log ? activation::log_softmax(x, dim) : activation::softmax(x, dim);
      // absolute 1e-5: log_softmax near 0 is x - max - log(sum), whose f32 rounding error is
      // about eps * |max| ~ 1.2e-7 * 20 (normal(0, 4) inputs), whatever the kernel
      expect_approx(y.into_data(), TensorData(softmax_ref(xv, outer, n, inner, log), x.shape()),
                    Tolerance::rel_abs(1e-4, 1e-5));
    }
  }
}

TYPED_TEST(ActivationEdge, SoftmaxOfAMillionsLongRowSumsToOne) {
  using B = TypeParam;
  // 5.6M values in one row: a sum in f32 lanes alone drifts by ~3 % (the CPU's did).
  const std::int64_t n = 5592065;
  std::vector<float> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) v[i] = -5.0f + 10.0f * std::fmod(0.618034f * (i + 1), 1.0f);
  const auto x = Tensor<B, 2>::from_data(TensorData(v, Shape{1, n}));
  double total = 0, log_total = 0;
  for (float p : activation::softmax(x, 1).template to_vec<float>()) total += p;
  for (float p : activation::log_softmax(x, 1).template to_vec<float>()) log_total += std::exp(p);
  EXPECT_NEAR(total, 1.0, 1e-4);
  EXPECT_NEAR(log_total, 1.0, 1e-4);
}

TYPED_TEST(ActivationEdge, SoftmaxOfALongRowOfEqualTermsSumsToOne) {
  using B = TypeParam;
  // One maximum and 4M values whose terms exp(-1.2) are all equal: a running f32 sum of a few
  // thousand equal terms rounds the same way every time (a GPU thread's loop drifted by 2e-4).
  const std::int64_t n = (std::int64_t{1} << 22) + 1;
  std::vector<float> v(static_cast<std::size_t>(n), -1.2f);
  v[0] = 0.0f;
  const auto x = Tensor<B, 2>::from_data(TensorData(v, Shape{1, n}));
  double total = 0;
  for (float p : activation::softmax(x, 1).template to_vec<float>()) total += p;
  EXPECT_NEAR(total, 1.0, 1e-5);
  // The one maximum's probability: 1 / (1 + (n - 1) exp(-1.2)), in double.
  const double want = 1.0 / (1.0 + static_cast<double>(n - 1) * std::exp(double(-1.2f)));
  const float p0 = activation::softmax(x, 1).template to_vec<float>()[0];
  EXPECT_NEAR(p0, want, 1e-5 * want);
  // The same along a column (one GPU thread per line of [n, 2]).
  std::vector<float> vc(2 * v.size());
  for (std::size_t i = 0; i < vc.size(); ++i) vc[i] = v[i / 2];
  const auto xt = Tensor<B, 2>::from_data(TensorData(std::move(vc), Shape{n, 2}));
  double column = 0;
  const std::vector<float> pc = activation::softmax(xt, 0).template to_vec<float>();
  for (std::size_t i = 0; i < pc.size(); i += 2) column += pc[i];
  EXPECT_NEAR(column, 1.0, 1e-5);
}

TYPED_TEST(ActivationEdge, LogSoftmaxOfLargeValuesKeepsTheLogSum) {
  using B = TypeParam;
  // x - max - log(sum) in that order: max + log(sum) would round log(sum) away. Along rows
  // and along columns; reference values in double.
  const auto x = Tensor<B, 2>::from_floats({{1e30f, 1e30f, 1e7f}, {1e7f, 1e7f + 1, 1e7f + 2}});
  const double ln2 = std::log(2.0), l3 = std::log(1.0 + std::exp(-1.0) + std::exp(-2.0));
  expect_approx(activation::log_softmax(x, 1).into_data(),
                TensorData(std::vector<float>{static_cast<float>(-ln2), static_cast<float>(-ln2),
                                              -1e30f, static_cast<float>(-2 - l3),
                                              static_cast<float>(-1 - l3), static_cast<float>(-l3)},
                           Shape{2, 3}),
                Tolerance::rel_abs(1e-5, 1e-6));
  expect_approx(activation::log_softmax(x.transpose(), 0).into_data(),
                activation::log_softmax(x, 1).transpose().into_data(),
                Tolerance::rel_abs(1e-5, 1e-6));
}

TYPED_TEST(ActivationEdge, LargeUnaryMatchesScalarReference) {
  using B = TypeParam;
  B::seed(11);
  auto x = Tensor<B, 1>::random(Shape{100003}, Distribution::uniform(-90.0, 90.0));
  const auto xv = x.template to_vec<float>();
  const auto sg = activation::sigmoid(x).template to_vec<double>();
  const auto si = activation::silu(x).template to_vec<double>();
  const auto hs = activation::hard_swish(x).template to_vec<double>();
  for (std::size_t i = 0; i < xv.size(); i += 7) {
    const double v = xv[i], s = 1.0 / (1.0 + std::exp(-v));
    ASSERT_NEAR(sg[i], s, 1e-6 + 1e-5 * s) << v;
    ASSERT_NEAR(si[i], v * s, 1e-6 + 1e-5 * std::abs(v * s)) << v;
    ASSERT_NEAR(hs[i], v * std::clamp(v + 3.0, 0.0, 6.0) / 6.0, 1e-5 * (1 + std::abs(v))) << v;
  }
}

TYPED_TEST(ActivationEdge, CausalAttentionWithMoreKeys) {
  using B = TypeParam;
  // L = 2, S = 3, E = 1, q = k = 0: query 0 sees v[0], query 1 averages v[0..1].
  auto q = Tensor<B, 2>::zeros(Shape{2, 1});
  auto k = Tensor<B, 2>::zeros(Shape{3, 1});
  auto v = Tensor<B, 2>::from_floats({{1.0, 10.0}, {3.0, 20.0}, {5.0, 30.0}});
  auto y = module::scaled_dot_product_attention(q, k, v, std::nullopt, std::nullopt, true);
  expect_approx(y.into_data(), TensorData(std::vector<float>{1, 10, 2, 15}, Shape{2, 2}));
}

TYPED_TEST(ActivationEdge, QuietSoftmaxOfVeryNegativeRowIsNearZero) {
  using B = TypeParam;
  auto y = activation::quiet_softmax(Tensor<B, 1>::from_floats({-50.0, -60.0}), 0)
               .template to_vec<double>();
  EXPECT_LT(y[0], 1e-20);
  auto z =
      activation::quiet_softmax(Tensor<B, 1>::from_floats({0.0, 0.0}), 0).template to_vec<double>();
  EXPECT_NEAR(z[0], 1.0 / 3.0, 1e-6);
}

// ---- errors: one per front-end check --------------------------------------------------

TYPED_TEST(ActivationEdge, PreluWeightSizeThrows) {
  using B = TypeParam;
  auto x = Tensor<B, 3>::zeros(Shape{2, 3, 4});
  EMBER_EXPECT_THROW_MSG(
      activation::prelu(x, Tensor<B, 1>::zeros(Shape{4})), ShapeError,
      "[prelu] weight of shape [4] does not match 3 channels of input [2, 3, 4]");
}

TYPED_TEST(ActivationEdge, GluOddDimThrows) {
  using B = TypeParam;
  auto x = Tensor<B, 2>::zeros(Shape{2, 5});
  EMBER_EXPECT_THROW_MSG(activation::glu(x, -1), ShapeError,
                         "[glu] dim -1 of input [2, 5] has odd size 5");
  EMBER_EXPECT_THROW_MSG(activation::glu(x, 2), ShapeError, "[glu] dim 2 is out of range");
}

TYPED_TEST(ActivationEdge, SoftmaxDimOutOfRangeThrows) {
  using B = TypeParam;
  auto x = Tensor<B, 2>::zeros(Shape{2, 5});
  EMBER_EXPECT_THROW_MSG(activation::softmax(x, 2), ShapeError, "[softmax] dim 2 is out of range");
  EMBER_EXPECT_THROW_MSG(activation::log_softmax(x, -3), ShapeError,
                         "[log_softmax] dim -3 is out of range");
  EMBER_EXPECT_THROW_MSG(activation::softmin(x, 5), ShapeError, "[softmin]");
  EMBER_EXPECT_THROW_MSG(activation::quiet_softmax(x, -4), ShapeError, "[quiet_softmax]");
}

TYPED_TEST(ActivationEdge, ParameterDomainThrows) {
  using B = TypeParam;
  auto x = Tensor<B, 1>::zeros(Shape{3});
  EMBER_EXPECT_THROW_MSG(activation::softplus(x, 0.0), ValueError,
                         "[softplus] beta must be non-zero");
  EMBER_EXPECT_THROW_MSG(activation::celu(x, 0.0), ValueError, "[celu] alpha must be non-zero");
  EMBER_EXPECT_THROW_MSG(activation::hard_shrink(x, -1.0), ValueError,
                         "[hard_shrink] lambda must be >= 0");
  EMBER_EXPECT_THROW_MSG(activation::soft_shrink(x, -1.0), ValueError,
                         "[soft_shrink] lambda must be >= 0");
}

TYPED_TEST(ActivationEdge, LayerNormShapeMismatchThrows) {
  using B = TypeParam;
  auto x = Tensor<B, 3>::zeros(Shape{2, 3, 4});
  EMBER_EXPECT_THROW_MSG(
      module::layer_norm(x, Tensor<B, 1>::ones(Shape{3})), ShapeError,
      "[layer_norm] input of shape [2, 3, 4] does not end with the normalized shape [3]");
  EMBER_EXPECT_THROW_MSG(
      module::layer_norm(x, Tensor<B, 1>::ones(Shape{4}), Tensor<B, 1>::ones(Shape{3})), ShapeError,
      "[layer_norm] bias of shape [3] differs from weight of shape [4]");
}

TYPED_TEST(ActivationEdge, RmsNormWeightMismatchThrows) {
  using B = TypeParam;
  auto x = Tensor<B, 2>::zeros(Shape{2, 4});
  EMBER_EXPECT_THROW_MSG(
      module::rms_norm(x, Tensor<B, 1>::ones(Shape{3})), ShapeError,
      "[rms_norm] weight of shape [3] does not match the last dim 4 of input [2, 4]");
}

TYPED_TEST(ActivationEdge, GroupNormChecksThrow) {
  using B = TypeParam;
  auto x = Tensor<B, 3>::zeros(Shape{2, 6, 4});
  EMBER_EXPECT_THROW_MSG(module::group_norm(x, 4), ValueError,
                         "[group_norm] num_groups 4 does not divide the 6 channels");
  EMBER_EXPECT_THROW_MSG(module::group_norm(x, 0), ValueError, "[group_norm] num_groups 0");
  EMBER_EXPECT_THROW_MSG(
      module::group_norm(x, 3, Tensor<B, 1>::ones(Shape{3})), ShapeError,
      "[group_norm] weight of shape [3] does not match 6 channels of input [2, 6, 4]");
  EMBER_EXPECT_THROW_MSG(module::group_norm(x, 1, std::nullopt, Tensor<B, 1>::ones(Shape{2})),
                         ShapeError, "[group_norm] bias of shape [2]");
  EMBER_EXPECT_THROW_MSG(module::group_norm(Tensor<B, 1>::zeros(Shape{6}), 1), ShapeError,
                         "[group_norm] input of shape [6] must have rank >= 2");
}

TYPED_TEST(ActivationEdge, BatchNormChecksThrow) {
  using B = TypeParam;
  auto x = Tensor<B, 3>::zeros(Shape{2, 3, 4});
  auto c3 = Tensor<B, 1>::ones(Shape{3});
  auto c4 = Tensor<B, 1>::ones(Shape{4});
  EMBER_EXPECT_THROW_MSG(
      module::batch_norm(x, c4, c3), ShapeError,
      "[batch_norm] running_mean of shape [4] does not match 3 channels of input [2, 3, 4]");
  EMBER_EXPECT_THROW_MSG(module::batch_norm(x, c3, c4), ShapeError,
                         "[batch_norm] running_var of shape [4]");
  EMBER_EXPECT_THROW_MSG(module::batch_norm(x, c3, c3, c4), ShapeError,
                         "[batch_norm] weight of shape [4]");
  EMBER_EXPECT_THROW_MSG(module::batch_norm(x, c3, c3, c3, c4), ShapeError,
                         "[batch_norm] bias of shape [4]");
  EMBER_EXPECT_THROW_MSG(module::batch_norm(Tensor<B, 1>::zeros(Shape{3}), c3, c3), ShapeError,
                         "[batch_norm] input of shape [3] must have rank >= 2");
}

TYPED_TEST(ActivationEdge, LinearShapeMismatchThrows) {
  using B = TypeParam;
  auto x = Tensor<B, 2>::zeros(Shape{2, 4});
  EMBER_EXPECT_THROW_MSG(
      module::linear(x, Tensor<B, 2>::zeros(Shape{4, 3})), ShapeError,
      "[linear] input of shape [2, 4] has last dim 4 but weight of shape [4, 3] expects 3");
  EMBER_EXPECT_THROW_MSG(
      module::linear(x, Tensor<B, 2>::zeros(Shape{3, 4}), Tensor<B, 1>::zeros(Shape{4})),
      ShapeError, "[linear] bias of shape [4] does not match 3 output features of weight [3, 4]");
}

TYPED_TEST(ActivationEdge, EmbeddingIndexOutOfRangeThrows) {
  using B = TypeParam;
  auto w = Tensor<B, 2>::zeros(Shape{5, 2});
  EMBER_EXPECT_THROW_MSG(module::embedding(w, Tensor<B, 2, Int>::from_ints({{0, 1}, {7, 2}})),
                         ValueError,
                         "[embedding] index 7 (at flat position 2 of indices [2, 2]) is out of "
                         "range for 5 embeddings");
  EMBER_EXPECT_THROW_MSG(module::embedding(w, Tensor<B, 1, Int>::from_ints({-1})), ValueError,
                         "[embedding] index -1");
}

TYPED_TEST(ActivationEdge, AttentionShapeChecksThrow) {
  using B = TypeParam;
  auto q = Tensor<B, 3>::zeros(Shape{2, 3, 4});
  auto k = Tensor<B, 3>::zeros(Shape{2, 5, 4});
  auto v = Tensor<B, 3>::zeros(Shape{2, 5, 6});
  EMBER_EXPECT_THROW_MSG(
      module::scaled_dot_product_attention(q, Tensor<B, 3>::zeros(Shape{2, 5, 3}), v), ShapeError,
      "[scaled_dot_product_attention] q of shape [2, 3, 4] and k of shape [2, 5, 3] have different "
      "embedding dims");
  EMBER_EXPECT_THROW_MSG(
      module::scaled_dot_product_attention(q, k, Tensor<B, 3>::zeros(Shape{2, 4, 6})), ShapeError,
      "k of shape [2, 5, 4] and v of shape [2, 4, 6] have different sequence lengths");
  EMBER_EXPECT_THROW_MSG(
      module::scaled_dot_product_attention(Tensor<B, 3>::zeros(Shape{1, 3, 4}), k, v), ShapeError,
      "batch dims of q [1, 3, 4], k [2, 5, 4] and v [2, 5, 6] differ");
  EMBER_EXPECT_THROW_MSG(
      module::scaled_dot_product_attention(q, k, v, Tensor<B, 2, Bool>::full(Shape{3, 4}, 1.0)),
      ShapeError, "mask of shape [3, 4] does not broadcast to the attention scores [2, 3, 5]");
  EMBER_EXPECT_THROW_MSG(
      module::scaled_dot_product_attention(q, k, v, Tensor<B, 3>::zeros(Shape{3, 3, 5})),
      ShapeError, "bias of shape [3, 3, 5] does not broadcast");
  std::optional<Tensor<B, 3, Bool>> m = Tensor<B, 3, Bool>::full(Shape{1, 3, 5}, 1.0);
  EMBER_EXPECT_THROW_MSG(
      module::scaled_dot_product_attention(q, k, v, m, std::nullopt, true), ValueError,
      "[scaled_dot_product_attention] is_causal cannot be combined with an explicit mask");
}

TYPED_TEST(ActivationEdge, CrossEntropyChecksThrow) {
  using B = TypeParam;
  auto x = Tensor<B, 2>::zeros(Shape{2, 3});
  EMBER_EXPECT_THROW_MSG(loss::cross_entropy_with_logits(x, Tensor<B, 2>::zeros(Shape{2, 4})),
                         ShapeError,
                         "[cross_entropy_with_logits] logits of shape [2, 3] and target "
                         "probabilities of shape [2, 4] differ");
  EMBER_EXPECT_THROW_MSG(
      loss::cross_entropy_with_logits(x, Tensor<B, 1, Int>::from_ints({0, 1, 2})), ShapeError,
      "[cross_entropy_with_logits] logits of shape [2, 3] and class targets of shape [3] have "
      "different batch sizes");
  EMBER_EXPECT_THROW_MSG(
      loss::cross_entropy_with_logits(x, Tensor<B, 1, Int>::from_ints({0, 3})), ValueError,
      "[cross_entropy_with_logits] target 3 at position 1 is out of range for 3 classes");
}
