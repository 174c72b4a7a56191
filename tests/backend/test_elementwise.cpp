// Element-wise ops: hand-computed edge cases (layouts, reuse, operators, errors).
#include <cmath>
#include <limits>

#include "backends.hpp"
#include "fixtures.hpp"

using namespace ember;
using ember::test::expect_approx;
using ember::test::expect_eq;

template <class B>
class ElementwiseTest : public ::testing::Test {};
TYPED_TEST_SUITE(ElementwiseTest, ember::test::ConformanceBackends, ember::test::BackendNames);

namespace {
template <class B, std::size_t D>
Tensor<B, D> floats(std::vector<float> v, Shape s) {
  return Tensor<B, D>::from_data(TensorData(std::move(v), std::move(s)));
}
template <class B, std::size_t D>
Tensor<B, D, Int> ints(std::vector<std::int64_t> v, Shape s) {
  return Tensor<B, D, Int>::from_data(TensorData(std::move(v), std::move(s)));
}
TensorData fdata(std::vector<float> v, Shape s) {
  return TensorData(std::move(v), std::move(s));
}
TensorData idata(std::vector<std::int64_t> v, Shape s) {
  return TensorData(std::move(v), std::move(s));
}
TensorData bdata(std::vector<bool> v, Shape s) {
  return TensorData(std::move(v), std::move(s));
}

/// A CPU view with the given shape/strides/offset over `base`'s storage.
template <class P>
P view(const P& base, Shape shape, std::vector<std::int64_t> strides, std::int64_t offset) {
  CpuTensor v = ember::test::cpu_of(base);
  v.shape = std::move(shape);
  v.strides = std::move(strides);
  v.offset = offset;
  return ember::test::with_cpu(base, std::move(v));
}
template <class B>
const void* buffer_of(const Tensor<B, 2>& t) {
  return ember::test::storage_id(t.primitive());
}
}  // namespace

TYPED_TEST(ElementwiseTest, TransposedInputUnaryAndBinary) {
  using B = TypeParam;
  auto base = floats<B, 2>({1, 2, 3, 4, 5, 6}, Shape{2, 3});
  Tensor<B, 2> t(view(base.primitive(), Shape{3, 2}, {1, 3}, 0));  // transpose
  expect_approx(t.neg().into_data(), fdata({-1, -4, -2, -5, -3, -6}, Shape{3, 2}));
  auto o = floats<B, 2>({10, 20, 30, 40, 50, 60}, Shape{3, 2});
  expect_approx(t.add(o).into_data(), fdata({11, 24, 32, 45, 53, 66}, Shape{3, 2}));
  expect_approx(o.sub(t).into_data(), fdata({9, 16, 28, 35, 47, 54}, Shape{3, 2}));
}

TYPED_TEST(ElementwiseTest, SlicedViewWithOffset) {
  using B = TypeParam;
  auto base = floats<B, 2>({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, Shape{3, 4});
  // rows 1..2, columns 1 and 3: offset 5, strides {4, 2}
  Tensor<B, 2> v(view(base.primitive(), Shape{2, 2}, {4, 2}, 5));
  expect_approx(v.mul_scalar(2.0).into_data(), fdata({10, 14, 18, 22}, Shape{2, 2}));
  expect_approx(v.exp().log().into_data(), fdata({5, 7, 9, 11}, Shape{2, 2}));
  expect_eq(v.greater_elem(8.0).into_data(), bdata({false, false, true, true}, Shape{2, 2}));
  // the base is unchanged by the rvalue op on a shared view
  auto w = Tensor<B, 2>(view(base.primitive(), Shape{2, 2}, {4, 2}, 5));
  auto r = std::move(w).neg();
  expect_approx(base.into_data(), fdata({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, Shape{3, 4}));
  expect_approx(r.into_data(), fdata({-5, -7, -9, -11}, Shape{2, 2}));
}

TYPED_TEST(ElementwiseTest, ExpandedStrideZeroInput) {
  using B = TypeParam;
  auto row = floats<B, 2>({1, 2, 3}, Shape{1, 3});
  Tensor<B, 2> e(view(row.primitive(), Shape{4, 3}, {0, 1}, 0));
  auto col = floats<B, 2>({10, 20, 30, 40}, Shape{4, 1});
  expect_approx(e.add(col).into_data(),
                fdata({11, 12, 13, 21, 22, 23, 31, 32, 33, 41, 42, 43}, Shape{4, 3}));
  expect_approx(e.square().into_data(), fdata({1, 4, 9, 1, 4, 9, 1, 4, 9, 1, 4, 9}, Shape{4, 3}));
}

TYPED_TEST(ElementwiseTest, LargeBroadcastAndTransposeAcrossThreads) {
  using B = TypeParam;
  const std::int64_t R = 301, C = 257;
  std::vector<float> a(R * C), bias(C);
  for (std::int64_t i = 0; i < R * C; ++i) a[i] = static_cast<float>(i % 97) * 0.5f - 20.f;
  for (std::int64_t j = 0; j < C; ++j) bias[j] = static_cast<float>(j) * 0.25f;
  auto ta = floats<B, 2>(a, Shape{R, C});
  auto tb = floats<B, 2>(bias, Shape{1, C});
  const auto sum = ta.add(tb).template to_vec<float>();
  // transposed view of ta: [C, R]
  Tensor<B, 2> tt(view(ta.primitive(), Shape{C, R}, {1, C}, 0));
  const auto ex = tt.exp().template to_vec<float>();
  int bad = 0;
  for (std::int64_t i = 0; i < R; ++i)
    for (std::int64_t j = 0; j < C; ++j) {
      if (sum[i * C + j] != a[i * C + j] + bias[j]) ++bad;
      const double want = std::exp(static_cast<double>(a[i * C + j]));
      if (std::fabs(ex[j * R + i] - want) > 1e-6 * want) ++bad;
    }
  EXPECT_EQ(bad, 0);
}

TYPED_TEST(ElementwiseTest, EmptyTensors) {
  using B = TypeParam;
  auto e = Tensor<B, 2>::zeros(Shape{0, 3});
  auto r = floats<B, 2>({1, 2, 3}, Shape{1, 3});
  EXPECT_EQ(e.add(r).shape(), (Shape{0, 3}));
  EXPECT_EQ(r.mul(e).shape(), (Shape{0, 3}));
  EXPECT_EQ(e.exp().numel(), 0);
  EXPECT_EQ(e.equal(r).shape(), (Shape{0, 3}));
  EXPECT_TRUE(e.all_close(e));
  auto ei = Tensor<B, 2, Int>::zeros(Shape{2, 0});
  EXPECT_EQ(ei.div(ei).shape(), (Shape{2, 0}));
}

TYPED_TEST(ElementwiseTest, UnaryReusesUniqueMovedBuffer) {
  using B = TypeParam;
  if (!ember::test::buffers_observable<B>())
    GTEST_SKIP() << "buffers of a GPU device are not observable here";
  auto x = floats<B, 2>({0, 1, 2, 3}, Shape{2, 2});
  const void* p = buffer_of(x);
  auto y = std::move(x).exp();
  EXPECT_EQ(buffer_of(y), p);
  expect_approx(y.into_data(), fdata({1, 2.7182817f, 7.389056f, 20.085537f}, Shape{2, 2}));
}

TYPED_TEST(ElementwiseTest, UnaryDoesNotReuseSharedBuffer) {
  using B = TypeParam;
  if (!ember::test::buffers_observable<B>())
    GTEST_SKIP() << "buffers of a GPU device are not observable here";
  auto x = floats<B, 2>({0, 1, 2, 3}, Shape{2, 2});
  auto keep = x;
  auto y = std::move(x).neg();
  EXPECT_NE(buffer_of(y), buffer_of(keep));
  expect_approx(keep.into_data(), fdata({0, 1, 2, 3}, Shape{2, 2}));
  auto z = keep.neg();  // const& never reuses
  EXPECT_NE(buffer_of(z), buffer_of(keep));
}

TYPED_TEST(ElementwiseTest, MulAddReusesTemporary) {
  using B = TypeParam;
  if (!ember::test::buffers_observable<B>())
    GTEST_SKIP() << "buffers of a GPU device are not observable here";
  auto x = floats<B, 2>({1, 2, 3, 4}, Shape{2, 2});
  auto y = floats<B, 2>({5, 6, 7, 8}, Shape{2, 2});
  auto z = floats<B, 2>({1, 1, 1, 1}, Shape{2, 2});
  auto t = x * y;
  const void* p = buffer_of(t);
  auto r = std::move(t) + z;
  EXPECT_EQ(buffer_of(r), p);
  expect_approx(r.into_data(), fdata({6, 13, 22, 33}, Shape{2, 2}));
  expect_approx((x * y + z).into_data(), fdata({6, 13, 22, 33}, Shape{2, 2}));
  // rhs temporary is reused too
  auto t2 = x * y;
  const void* p2 = buffer_of(t2);
  auto r2 = z - std::move(t2);
  EXPECT_EQ(buffer_of(r2), p2);
  expect_approx(r2.into_data(), fdata({-4, -11, -20, -31}, Shape{2, 2}));
  // inputs untouched
  expect_approx(x.into_data(), fdata({1, 2, 3, 4}, Shape{2, 2}));
}

TYPED_TEST(ElementwiseTest, BinaryNoReuseWhenSharedOrBroadcastSmaller) {
  using B = TypeParam;
  if (!ember::test::buffers_observable<B>())
    GTEST_SKIP() << "buffers of a GPU device are not observable here";
  auto x = floats<B, 2>({1, 2, 3, 4}, Shape{2, 2});
  auto keep = x;
  auto r = std::move(x) + keep;
  EXPECT_NE(buffer_of(r), buffer_of(keep));
  expect_approx(keep.into_data(), fdata({1, 2, 3, 4}, Shape{2, 2}));
  auto row = floats<B, 2>({1, 2}, Shape{1, 2});
  const void* prow = buffer_of(row);
  auto r2 = std::move(row) + keep;  // lhs [1, 2] cannot hold the [2, 2] result
  EXPECT_NE(buffer_of(r2), prow);
  expect_approx(r2.into_data(), fdata({2, 4, 4, 6}, Shape{2, 2}));
}

TYPED_TEST(ElementwiseTest, DtypeMismatchDoesNotReuse) {
  using B = TypeParam;
  if (!ember::test::buffers_observable<B>())
    GTEST_SKIP() << "buffers of a GPU device are not observable here";
  auto h = Tensor<B, 2>::from_data(fdata({1, 2}, Shape{1, 2}), {}, DType::F16);
  auto f = floats<B, 2>({0.5f, 0.25f}, Shape{1, 2});
  const void* ph = buffer_of(h);
  auto r = std::move(h) + f;
  EXPECT_EQ(r.dtype(), DType::F32);
  EXPECT_NE(buffer_of(r), ph);
  expect_approx(r.into_data(), fdata({1.5f, 2.25f}, Shape{1, 2}));
}

TYPED_TEST(ElementwiseTest, ScalarsOnEitherSide) {
  using B = TypeParam;
  auto x = floats<B, 2>({1, 2, 4, -3}, Shape{2, 2});
  expect_approx((2.0 * x).into_data(), fdata({2, 4, 8, -6}, Shape{2, 2}));
  expect_approx((x * 2).into_data(), fdata({2, 4, 8, -6}, Shape{2, 2}));
  expect_approx((1 - x).into_data(), fdata({0, -1, -3, 4}, Shape{2, 2}));
  expect_approx((x - 1).into_data(), fdata({0, 1, 3, -4}, Shape{2, 2}));
  expect_approx((1.5f + x).into_data(), fdata({2.5f, 3.5f, 5.5f, -1.5f}, Shape{2, 2}));
  expect_approx((8 / x).into_data(), fdata({8, 4, 2, -8.0f / 3}, Shape{2, 2}));
  expect_approx((x / 2).into_data(), fdata({0.5f, 1, 2, -1.5f}, Shape{2, 2}));
  expect_approx((x % 3).into_data(), fdata({1, 2, 1, 0}, Shape{2, 2}));
  expect_approx((5 % x).into_data(), fdata({0, 1, 1, -1}, Shape{2, 2}));
  expect_approx((-x).into_data(), fdata({-1, -2, -4, 3}, Shape{2, 2}));
}

TYPED_TEST(ElementwiseTest, IntOperatorsFloorSemantics) {
  using B = TypeParam;
  auto a = ints<B, 2>({7, -7, 7, -7}, Shape{2, 2});
  auto b = ints<B, 2>({2, 2, -2, -2}, Shape{2, 2});
  expect_eq((a / b).into_data(), idata({3, -4, -4, 3}, Shape{2, 2}));
  expect_eq((a % b).into_data(), idata({1, 1, -1, -1}, Shape{2, 2}));
  // a == div(a, b) * b + rem(a, b)
  expect_eq(((a / b) * b + (a % b)).into_data(), a.into_data());
  expect_eq((a / 2).into_data(), idata({3, -4, 3, -4}, Shape{2, 2}));
  expect_eq((-7 / b).into_data(), idata({-4, -4, 3, 3}, Shape{2, 2}));
  expect_eq((a + 1).into_data(), idata({8, -6, 8, -6}, Shape{2, 2}));
  expect_eq((10 - a).into_data(), idata({3, 17, 3, 17}, Shape{2, 2}));
  expect_eq((~a).into_data(), idata({-8, 6, -8, 6}, Shape{2, 2}));
  expect_eq((a & 3).into_data(), idata({3, 1, 3, 1}, Shape{2, 2}));
  expect_eq((a | b).into_data(), idata({7, -5, -1, -1}, Shape{2, 2}));
  expect_eq((a ^ b).into_data(), idata({5, -5, -7, 7}, Shape{2, 2}));
  expect_eq((a << 2).into_data(), idata({28, -28, 28, -28}, Shape{2, 2}));
  expect_eq((a >> 1).into_data(), idata({3, -4, 3, -4}, Shape{2, 2}));
  expect_eq((-a).into_data(), idata({-7, 7, -7, 7}, Shape{2, 2}));
}

TYPED_TEST(ElementwiseTest, IntDivisionByZeroTensorIsZero) {
  using B = TypeParam;
  auto a = ints<B, 2>({5, -5, 0, std::numeric_limits<std::int64_t>::min()}, Shape{2, 2});
  auto z = ints<B, 2>({0, 0, 0, -1}, Shape{2, 2});
  expect_eq(a.div(z).into_data(),
            idata({0, 0, 0, std::numeric_limits<std::int64_t>::min()}, Shape{2, 2}));
  expect_eq(a.remainder(z).into_data(), idata({0, 0, 0, 0}, Shape{2, 2}));
  auto a32 = a.cast(DType::I32);
  EXPECT_EQ(a32.div(z.cast(DType::I32)).dtype(), DType::I32);
}

TYPED_TEST(ElementwiseTest, BoolOperators) {
  using B = TypeParam;
  auto a = Tensor<B, 2, Bool>::from_bools({{true, true, false, false}});
  auto b = Tensor<B, 2, Bool>::from_bools({{true, false, true, false}});
  expect_eq((!a).into_data(), bdata({false, false, true, true}, Shape{1, 4}));
  expect_eq((a & b).into_data(), bdata({true, false, false, false}, Shape{1, 4}));
  expect_eq((a | b).into_data(), bdata({true, true, true, false}, Shape{1, 4}));
  expect_eq((a ^ b).into_data(), bdata({false, true, true, false}, Shape{1, 4}));
}

TYPED_TEST(ElementwiseTest, ClampPropagatesNaN) {
  using B = TypeParam;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto x = floats<B, 2>({nan, -5, 0.5f, 5}, Shape{2, 2});
  const auto v = x.clamp(-1.0, 1.0).template to_vec<float>();
  EXPECT_TRUE(std::isnan(v[0]));
  EXPECT_EQ(v[1], -1.0f);
  EXPECT_EQ(v[2], 0.5f);
  EXPECT_EQ(v[3], 1.0f);
  const auto m = x.max_pair(floats<B, 2>({0, 0, 0, nan}, Shape{2, 2})).template to_vec<float>();
  EXPECT_TRUE(std::isnan(m[0]));
  EXPECT_TRUE(std::isnan(m[3]));
  EXPECT_EQ(m[1], 0.0f);
}

TYPED_TEST(ElementwiseTest, HalfDtypesKeepDtype) {
  using B = TypeParam;
  for (DType dt : {DType::F16, DType::BF16, DType::F64}) {
    auto x = Tensor<B, 2>::from_data(fdata({1, 2, 3, 4}, Shape{2, 2}), {}, dt);
    auto y = std::move(x).mul_scalar(0.5);
    EXPECT_EQ(y.dtype(), dt);
    expect_approx(y.into_data(), fdata({0.5f, 1, 1.5f, 2}, Shape{2, 2}));
  }
}

TYPED_TEST(ElementwiseTest, AllClose) {
  using B = TypeParam;
  auto a = floats<B, 2>({1, 2, 3}, Shape{1, 3});
  EXPECT_TRUE(a.all_close(floats<B, 2>({1, 2, 3.00001f}, Shape{1, 3})));
  EXPECT_FALSE(a.all_close(floats<B, 2>({1, 2, 3.1f}, Shape{1, 3})));
  EXPECT_TRUE(a.all_close(floats<B, 2>({1, 2, 3.1f}, Shape{1, 3}), 0.1));
  EXPECT_TRUE(a.all_close(floats<B, 2>({1, 2, 3, 1, 2, 3}, Shape{2, 3})));  // broadcasts
}

TYPED_TEST(ElementwiseTest, ErrorBroadcastShapes) {
  using B = TypeParam;
  auto a = Tensor<B, 2>::zeros(Shape{2, 3});
  auto b = Tensor<B, 2>::zeros(Shape{4, 3});
  EMBER_EXPECT_THROW_MSG(
      a.add(b), ShapeError,
      "[add] shapes [2, 3] and [4, 3] are not broadcast-compatible (dim 0: 2 vs 4)");
  EMBER_EXPECT_THROW_MSG((a * b), ShapeError, "[mul] shapes [2, 3] and [4, 3]");
  EMBER_EXPECT_THROW_MSG(std::move(a).sub(b), ShapeError, "[sub] shapes [2, 3] and [4, 3]");
}

TYPED_TEST(ElementwiseTest, ErrorBroadcastShapesCompare) {
  using B = TypeParam;
  auto a = Tensor<B, 2>::zeros(Shape{2, 3});
  auto b = Tensor<B, 2>::zeros(Shape{2, 2});
  EMBER_EXPECT_THROW_MSG(a.greater(b), ShapeError, "[greater] shapes [2, 3] and [2, 2]");
  EMBER_EXPECT_THROW_MSG(a.is_close(b), ShapeError, "[is_close] shapes [2, 3] and [2, 2]");
  EMBER_EXPECT_THROW_MSG(a.all_close(b), ShapeError, "[all_close] shapes [2, 3] and [2, 2]");
  EMBER_EXPECT_THROW_MSG(a.powf(b), ShapeError, "[powf] shapes [2, 3] and [2, 2]");
}

TYPED_TEST(ElementwiseTest, ErrorBroadcastShapesIntBool) {
  using B = TypeParam;
  auto a = Tensor<B, 2, Int>::zeros(Shape{3, 1});
  auto b = Tensor<B, 2, Int>::zeros(Shape{2, 2});
  EMBER_EXPECT_THROW_MSG(a.bitwise_and(b), ShapeError, "[bitwise_and] shapes [3, 1] and [2, 2]");
  EMBER_EXPECT_THROW_MSG(a.powi(b), ShapeError, "[powi] shapes [3, 1] and [2, 2]");
  auto c = Tensor<B, 2, Bool>::full(Shape{3, 1}, 1);
  auto d = Tensor<B, 2, Bool>::full(Shape{2, 2}, 0);
  EMBER_EXPECT_THROW_MSG((c | d), ShapeError, "[bool_or] shapes [3, 1] and [2, 2]");
}

TYPED_TEST(ElementwiseTest, ErrorIntScalarDivisionByZero) {
  using B = TypeParam;
  auto a = Tensor<B, 2, Int>::ones(Shape{2, 2});
  EMBER_EXPECT_THROW_MSG(a.div_scalar(0), ValueError,
                         "[div_scalar] integer division by zero (tensor of shape [2, 2])");
  EMBER_EXPECT_THROW_MSG((a % 0), ValueError, "[remainder_scalar] integer division by zero");
  // float division by zero is IEEE
  auto f = Tensor<B, 2>::ones(Shape{1, 1});
  EXPECT_TRUE(std::isinf(f.div_scalar(0.0).into_scalar()));
}

TYPED_TEST(ElementwiseTest, ErrorNegativeIntPowAndTolerances) {
  using B = TypeParam;
  auto a = Tensor<B, 2, Int>::ones(Shape{2, 2});
  EMBER_EXPECT_THROW_MSG(a.powi_scalar(-1), ValueError,
                         "[powi_scalar] integers to negative integer powers are not allowed");
  auto f = Tensor<B, 2>::ones(Shape{2, 2});
  EMBER_EXPECT_THROW_MSG(f.is_close(f, -1.0), ValueError,
                         "[is_close] rtol and atol must be non-negative");
  EMBER_EXPECT_THROW_MSG(f.all_close(f, 1e-5, -1.0), ValueError, "[all_close] rtol and atol");
}
