// Reduce family: hand-computed edge cases (empty tensors, non-contiguous views, NaN,
// accuracy of large sums, dtypes) and the front end's error checks.
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "backends.hpp"
#include "fixtures.hpp"

using namespace ember;

namespace {

template <class B>
class ReduceTest : public ::testing::Test {};
TYPED_TEST_SUITE(ReduceTest, ember::test::ConformanceBackends, ember::test::BackendNames);

template <class B>
using F1 = Tensor<B, 1>;
template <class B>
using I1 = Tensor<B, 1, Int>;
template <class B>
using B1 = Tensor<B, 1, Bool>;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

/// A view of `t` with its last two dims swapped (strides permuted, data shared): the
/// layout a transpose() returns. CPU only.
template <class B, std::size_t D, class K>
Tensor<B, D, K> swap_last_view(const Tensor<B, D, K>& t) {
  CpuTensor p = ember::test::cpu_of(t.primitive());
  std::swap(p.shape[D - 1], p.shape[D - 2]);
  std::swap(p.strides[D - 1], p.strides[D - 2]);
  return Tensor<B, D, K>(ember::test::with_cpu(t.primitive(), std::move(p)));
}

/// [rows, cols] host values, row-major.
std::vector<double> iota_vals(std::int64_t n, double scale = 1.0) {
  std::vector<double> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) v[i] = std::sin(0.37 * static_cast<double>(i)) * scale;
  return v;
}

template <class B>
Tensor<B, 2> mat(std::int64_t r, std::int64_t c, DType dt = DType::F32) {
  return Tensor<B, 2>::from_data(TensorData(iota_vals(r * c), Shape{r, c}), {}, dt);
}

}  // namespace

// ---- non-contiguous inputs ---------------------------------------------------------------

TYPED_TEST(ReduceTest, TransposedViewReductionsMatchContiguous) {
  using B = TypeParam;
  const auto x = mat<B>(5, 7);        // [5, 7]
  const auto xt = swap_last_view(x);  // [7, 5] view, strides (1, 7)
  if (ember::test::buffers_observable<B>()) {
    ASSERT_FALSE(ember::test::cpu_of(xt.primitive()).is_contiguous());
  }
  const auto c = Tensor<B, 2>::from_data(xt.into_data());  // contiguous copy
  for (std::int64_t d : {0, 1}) {
    ember::test::expect_approx(xt.sum_dim(d).into_data(), c.sum_dim(d).into_data());
    ember::test::expect_eq(xt.max_dim(d).into_data(), c.max_dim(d).into_data());
    ember::test::expect_eq(xt.min_dim(d).into_data(), c.min_dim(d).into_data());
    ember::test::expect_eq(xt.argmax(d).into_data(), c.argmax(d).into_data());
    ember::test::expect_eq(xt.argmin(d).into_data(), c.argmin(d).into_data());
    ember::test::expect_approx(xt.var(d).into_data(), c.var(d).into_data());
    ember::test::expect_approx(xt.prod_dim(d).into_data(), c.prod_dim(d).into_data());
    ember::test::expect_approx(xt.cumsum(d).into_data(), c.cumsum(d).into_data());
    ember::test::expect_eq(xt.cummax(d).into_data(), c.cummax(d).into_data());
    ember::test::expect_eq(xt.sort(d).into_data(), c.sort(d).into_data());
    ember::test::expect_eq(xt.argsort(d, true).into_data(), c.argsort(d, true).into_data());
    ember::test::expect_eq(xt.median_dim(d).into_data(), c.median_dim(d).into_data());
    ember::test::expect_eq(xt.topk(2, d).into_data(), c.topk(2, d).into_data());
    ember::test::expect_eq(xt.any_dim(d).into_data(), c.any_dim(d).into_data());
  }
  ember::test::expect_approx(xt.sum().into_data(), c.sum().into_data());
  ember::test::expect_eq(xt.max().into_data(), c.max().into_data());
}

TYPED_TEST(ReduceTest, LargeTransposedViewUsesStrideOneLines) {
  using B = TypeParam;
  const auto x = mat<B>(300, 257);
  const auto xt = swap_last_view(x);  // [257, 300]; reducing dim 0 walks stride-1 lines
  const auto c = Tensor<B, 2>::from_data(xt.into_data());
  ember::test::expect_approx(xt.sum_dim(0).into_data(), c.sum_dim(0).into_data(),
                             Tolerance::rel_abs(1e-5, 1e-5));
  ember::test::expect_approx(xt.sum_dim(1).into_data(), c.sum_dim(1).into_data(),
                             Tolerance::rel_abs(1e-5, 1e-5));
  ember::test::expect_eq(xt.max_dim(0).into_data(), c.max_dim(0).into_data());
  ember::test::expect_eq(xt.argmin(0).into_data(), c.argmin(0).into_data());
  ember::test::expect_eq(xt.argmax(1).into_data(), c.argmax(1).into_data());
}

TYPED_TEST(ReduceTest, ExpandedStrideZeroView) {
  using B = TypeParam;
  const auto base = Tensor<B, 1>::from_floats({1.0, 2.0, 3.0}).into_primitive();
  CpuTensor p = ember::test::cpu_of(base);
  p.shape = Shape{4, 3};
  p.strides = {0, 1};  // the row repeated 4 times
  const Tensor<B, 2> x(ember::test::with_cpu(base, std::move(p)));
  ember::test::expect_approx(x.sum_dim(0).into_data(),
                             TensorData(std::vector<float>{4, 8, 12}, Shape{1, 3}));
  ember::test::expect_approx(x.sum().into_data(), TensorData(std::vector<float>{24}, Shape{1}));
  ember::test::expect_eq(x.argmax(0).into_data(),
                         TensorData(std::vector<std::int64_t>{0, 0, 0}, Shape{1, 3}));
  ember::test::expect_approx(
      x.cumsum(0).into_data(),
      TensorData(std::vector<float>{1, 2, 3, 2, 4, 6, 3, 6, 9, 4, 8, 12}, Shape{4, 3}));
}

TYPED_TEST(ReduceTest, SlicedViewWithOffset) {
  using B = TypeParam;
  // x = [[0..5],[6..11],[12..17]] as Int; view = x[1:, 2:5] via offset and strides
  std::vector<std::int64_t> v(18);
  std::iota(v.begin(), v.end(), 0);
  const auto base = Tensor<B, 2, Int>::from_data(TensorData(v, Shape{3, 6})).into_primitive();
  CpuTensor p = ember::test::cpu_of(base);
  p.offset = 8;
  p.shape = Shape{2, 3};
  const Tensor<B, 2, Int> x(
      ember::test::with_cpu(base, std::move(p)));  // [[8, 9, 10], [14, 15, 16]]
  ember::test::expect_eq(x.sum_dim(1).into_data(),
                         TensorData(std::vector<std::int64_t>{27, 45}, Shape{2, 1}));
  ember::test::expect_eq(x.sum().into_data(), TensorData(std::vector<std::int64_t>{72}, Shape{1}));
  ember::test::expect_eq(x.min_dim(0).into_data(),
                         TensorData(std::vector<std::int64_t>{8, 9, 10}, Shape{1, 3}));
  ember::test::expect_eq(
      x.cumprod(0).into_data(),
      TensorData(std::vector<std::int64_t>{8, 9, 10, 112, 135, 160}, Shape{2, 3}));
  ember::test::expect_eq(x.sort(0, true).into_data(),
                         TensorData(std::vector<std::int64_t>{14, 15, 16, 8, 9, 10}, Shape{2, 3}));
}

TYPED_TEST(ReduceTest, Permuted3dMiddleDim) {
  using B = TypeParam;
  const auto x = Tensor<B, 3>::from_data(TensorData(iota_vals(2 * 3 * 4), Shape{2, 3, 4}));
  const auto xt = swap_last_view(x);  // [2, 4, 3]
  const auto c = Tensor<B, 3>::from_data(xt.into_data());
  for (std::int64_t d : {0, 1, 2, -1}) {
    ember::test::expect_approx(xt.mean_dim(d).into_data(), c.mean_dim(d).into_data());
    ember::test::expect_eq(xt.max_dim_with_indices(d).second.into_data(),
                           c.max_dim_with_indices(d).second.into_data());
    ember::test::expect_approx(xt.cumprod(d).into_data(), c.cumprod(d).into_data());
  }
}

// ---- empty tensors -------------------------------------------------------------------------

TYPED_TEST(ReduceTest, EmptySumIsZeroProdIsOne) {
  using B = TypeParam;
  const auto x = Tensor<B, 2>::zeros(Shape{0, 3});
  ember::test::expect_eq(x.sum().into_data(), TensorData(std::vector<float>{0}, Shape{1}));
  ember::test::expect_eq(x.prod().into_data(), TensorData(std::vector<float>{1}, Shape{1}));
  ember::test::expect_eq(x.sum_dim(0).into_data(),
                         TensorData(std::vector<float>{0, 0, 0}, Shape{1, 3}));
  ember::test::expect_eq(x.prod_dim(0).into_data(),
                         TensorData(std::vector<float>{1, 1, 1}, Shape{1, 3}));
  EXPECT_EQ(x.sum_dim(1).shape(), (Shape{0, 1}));
  EXPECT_TRUE(std::isnan(x.mean().into_scalar()));
  const auto xi = Tensor<B, 1, Int>::zeros(Shape{0});
  EXPECT_EQ(xi.sum().into_scalar(), 0);
  EXPECT_EQ(xi.prod().into_scalar(), 1);
}

TYPED_TEST(ReduceTest, EmptyScansSortsAndBoolReductions) {
  using B = TypeParam;
  const auto x = Tensor<B, 2>::zeros(Shape{2, 0});
  EXPECT_EQ(x.cumsum(1).shape(), (Shape{2, 0}));
  EXPECT_EQ(x.cummax(1).shape(), (Shape{2, 0}));
  EXPECT_EQ(x.sort(1).shape(), (Shape{2, 0}));
  EXPECT_EQ(x.argsort(0).shape(), (Shape{2, 0}));
  EXPECT_EQ(x.topk(0, 1).shape(), (Shape{2, 0}));
  EXPECT_FALSE(x.any().into_scalar());
  EXPECT_TRUE(x.all().into_scalar());
  ember::test::expect_eq(
      x.all_dim(1).into_data(),
      TensorData(std::vector<std::uint8_t>{1, 1}, Shape{2, 1}).convert(DType::Bool));
  const auto v = x.var(1);
  EXPECT_TRUE(std::isnan(v.template to_vec<double>()[0]));
}

TYPED_TEST(ReduceTest, EmptyMaxMinArgmaxMedianThrow) {
  using B = TypeParam;
  const auto x = Tensor<B, 2>::zeros(Shape{0, 3});
  EMBER_EXPECT_THROW_MSG(x.max(), ShapeError,
                         "[max] cannot reduce an empty tensor of shape [0, 3]");
  EMBER_EXPECT_THROW_MSG(x.min(), ShapeError, "[min] cannot reduce an empty tensor");
  EMBER_EXPECT_THROW_MSG(x.max_abs(), ShapeError, "[max_abs] cannot reduce an empty tensor");
  EMBER_EXPECT_THROW_MSG(x.median(), ShapeError, "[median] cannot reduce an empty tensor");
  EMBER_EXPECT_THROW_MSG(x.max_dim(0), ShapeError,
                         "[max_dim] cannot reduce over dim 0 of size 0 of tensor of shape [0, 3]");
  EMBER_EXPECT_THROW_MSG(x.min_dim(-2), ShapeError,
                         "[min_dim] cannot reduce over dim -2 of size 0");
  EMBER_EXPECT_THROW_MSG(x.argmax(0), ShapeError, "[argmax] cannot reduce over dim 0 of size 0");
  EMBER_EXPECT_THROW_MSG(x.argmin(0), ShapeError, "[argmin] cannot reduce over dim 0 of size 0");
  EMBER_EXPECT_THROW_MSG(x.max_dim_with_indices(0), ShapeError,
                         "[max_dim_with_indices] cannot reduce");
  EMBER_EXPECT_THROW_MSG(x.min_dim_with_indices(0), ShapeError,
                         "[min_dim_with_indices] cannot reduce");
  EMBER_EXPECT_THROW_MSG(x.max_abs_dim(0), ShapeError, "[max_abs_dim] cannot reduce");
  EMBER_EXPECT_THROW_MSG(x.median_dim(0), ShapeError,
                         "[median_dim] cannot reduce over dim 0 of size 0");
  // reducing the non-empty dim of an empty tensor is fine: result [0, 1]
  EXPECT_EQ(x.max_dim(1).shape(), (Shape{0, 1}));
  EXPECT_EQ(x.argmax(1).shape(), (Shape{0, 1}));
}

// ---- errors ----------------------------------------------------------------------------------

TYPED_TEST(ReduceTest, DimOutOfRangeThrowsForEveryOp) {
  using B = TypeParam;
  const auto x = mat<B>(2, 3);
  const auto xi = Tensor<B, 2, Int>::ones(Shape{2, 3});
  const auto xb = Tensor<B, 2, Bool>::ones(Shape{2, 3});
  EMBER_EXPECT_THROW_MSG(x.sum_dim(2), ShapeError,
                         "[sum_dim] dim 2 is out of range for a tensor of rank 2");
  EMBER_EXPECT_THROW_MSG(x.mean_dim(-3), ShapeError, "[mean_dim] dim -3 is out of range");
  EMBER_EXPECT_THROW_MSG(x.prod_dim(5), ShapeError, "[prod_dim] dim 5");
  EMBER_EXPECT_THROW_MSG(x.max_dim(2), ShapeError, "[max_dim] dim 2");
  EMBER_EXPECT_THROW_MSG(x.min_dim(2), ShapeError, "[min_dim] dim 2");
  EMBER_EXPECT_THROW_MSG(x.max_abs_dim(2), ShapeError, "[max_abs_dim] dim 2");
  EMBER_EXPECT_THROW_MSG(x.argmax(2), ShapeError, "[argmax] dim 2");
  EMBER_EXPECT_THROW_MSG(xi.argmin(-3), ShapeError, "[argmin] dim -3");
  EMBER_EXPECT_THROW_MSG(x.max_dim_with_indices(2), ShapeError, "[max_dim_with_indices] dim 2");
  EMBER_EXPECT_THROW_MSG(x.min_dim_with_indices(2), ShapeError, "[min_dim_with_indices] dim 2");
  EMBER_EXPECT_THROW_MSG(x.var(2), ShapeError, "[var] dim 2");
  EMBER_EXPECT_THROW_MSG(x.var_bias(2), ShapeError, "[var_bias] dim 2");
  EMBER_EXPECT_THROW_MSG(x.var_mean(2), ShapeError, "[var_mean] dim 2");
  EMBER_EXPECT_THROW_MSG(x.var_mean_bias(2), ShapeError, "[var_mean_bias] dim 2");
  EMBER_EXPECT_THROW_MSG(x.cumsum(2), ShapeError, "[cumsum] dim 2");
  EMBER_EXPECT_THROW_MSG(xi.cumprod(2), ShapeError, "[cumprod] dim 2");
  EMBER_EXPECT_THROW_MSG(x.cummax(2), ShapeError, "[cummax] dim 2");
  EMBER_EXPECT_THROW_MSG(x.cummin(2), ShapeError, "[cummin] dim 2");
  EMBER_EXPECT_THROW_MSG(x.sort(2), ShapeError, "[sort] dim 2");
  EMBER_EXPECT_THROW_MSG(x.sort_with_indices(-3), ShapeError, "[sort] dim -3");
  EMBER_EXPECT_THROW_MSG(x.argsort(2), ShapeError, "[argsort] dim 2");
  EMBER_EXPECT_THROW_MSG(x.topk(1, 2), ShapeError, "[topk] dim 2");
  EMBER_EXPECT_THROW_MSG(x.topk_with_indices(1, 2), ShapeError, "[topk_with_indices] dim 2");
  EMBER_EXPECT_THROW_MSG(x.median_dim(2), ShapeError, "[median_dim] dim 2");
  EMBER_EXPECT_THROW_MSG(xb.any_dim(2), ShapeError, "[any_dim] dim 2");
  EMBER_EXPECT_THROW_MSG(xb.all_dim(-3), ShapeError, "[all_dim] dim -3");
}

TYPED_TEST(ReduceTest, TopkKOutOfRangeThrows) {
  using B = TypeParam;
  const auto x = mat<B>(2, 3);
  EMBER_EXPECT_THROW_MSG(
      x.topk(4, 1), ValueError,
      "[topk] k = 4 is out of range for dim 1 of size 3 of tensor of shape [2, 3]");
  EMBER_EXPECT_THROW_MSG(x.topk(-1, 0), ValueError, "[topk] k = -1 is out of range");
  EMBER_EXPECT_THROW_MSG(x.topk_with_indices(3, 0), ValueError,
                         "[topk_with_indices] k = 3 is out of range for dim 0 of size 2");
  EXPECT_EQ(x.topk(3, 1).shape(), (Shape{2, 3}));  // k == n is fine
}

// ---- accuracy and SIMD paths ---------------------------------------------------------------

TYPED_TEST(ReduceTest, SumOfManyOnesIsExact) {
  using B = TypeParam;
  // a naive f32 running sum stalls at 2^24 = 16777216
  const std::int64_t n = 20'000'000;
  const auto x = Tensor<B, 1>::ones(Shape{n});
  EXPECT_EQ(x.sum().into_scalar(), 20'000'000.0);
  EXPECT_EQ(x.mean().into_scalar(), 1.0);
  const auto y = Tensor<B, 2>::ones(Shape{2, n / 2});
  ember::test::expect_eq(y.sum_dim(1).into_data(),
                         TensorData(std::vector<float>{1e7f, 1e7f}, Shape{2, 1}));
}

TYPED_TEST(ReduceTest, SumAccuracyVsF64) {
  using B = TypeParam;
  const std::int64_t n = 1 << 22;
  B::seed(7);
  const auto x = Tensor<B, 1>::random(Shape{n}, Distribution::uniform(-1.0, 3.0));
  const auto v = x.template to_vec<float>();
  double ref = 0;
  for (float f : v) ref += static_cast<double>(f);
  EXPECT_NEAR(x.sum().into_scalar(), ref, std::abs(ref) * 2e-7);
  const auto x2 = x.template reshape<2>({4096, 1024});
  const auto cols = x2.sum_dim(0).template to_vec<double>();
  double c0 = 0;
  for (std::int64_t r = 0; r < 4096; ++r)
    c0 += static_cast<double>(v[static_cast<std::size_t>(r * 1024)]);
  EXPECT_NEAR(cols[0], c0, 1e-6 * 4096);
}

TYPED_TEST(ReduceTest, HalfSumsAccumulateInFloat) {
  using B = TypeParam;
  for (DType dt : {DType::F16, DType::BF16}) {
    // 4096 ones: a f16 running sum would stop at 2048, bf16 at 256
    const auto x = Tensor<B, 2>::ones(Shape{2, 4096}, {}, dt);
    ember::test::expect_eq(x.sum_dim(1).into_data(),
                           TensorData(std::vector<float>{4096, 4096}, Shape{2, 1}).convert(dt));
    ember::test::expect_eq(x.sum().into_data(),
                           TensorData(std::vector<float>{8192}, Shape{1}).convert(dt));
    EXPECT_EQ(x.cumsum(1).template to_vec<float>().back(), 4096.0f);
    EXPECT_EQ(x.sum().dtype(), dt);
  }
}

TYPED_TEST(ReduceTest, IntSumsAccumulateInI64) {
  using B = TypeParam;
  const std::int64_t big = (std::int64_t{1} << 53) + 1;  // not representable in f64
  const auto x = Tensor<B, 1, Int>::from_ints({big, 1, 2});
  EXPECT_EQ(x.sum().into_scalar(), big + 3);
  EXPECT_EQ(x.max().into_scalar(), big);
  EXPECT_EQ(x.cumsum(0).template to_vec<std::int64_t>()[2], big + 3);
  // Int mean is floor(sum / n)
  const auto m = Tensor<B, 1, Int>::from_ints({-3, -4}).mean();
  EXPECT_EQ(m.into_scalar(), -4);
  EXPECT_EQ(I1<B>::from_ints({3, 4}).mean().into_scalar(), 3);
}

TYPED_TEST(ReduceTest, LargeRowsMaxArgmaxWithNaN) {
  using B = TypeParam;
  const std::int64_t n = 100'003;
  std::vector<double> v = iota_vals(2 * n);
  v[static_cast<std::size_t>(7777)] = 5.0;         // row 0 max
  v[static_cast<std::size_t>(n + 50'001)] = kNaN;  // row 1: NaN in the middle
  v[static_cast<std::size_t>(n + 60'000)] = 9.0;
  v[static_cast<std::size_t>(n - 1)] = -7.0;  // row 0 min at the tail
  for (DType dt : {DType::F32, DType::F64}) {
    const auto x = Tensor<B, 2>::from_data(TensorData(v, Shape{2, n}), {}, dt);
    const auto mx = x.max_dim(1).template to_vec<double>();
    EXPECT_EQ(mx[0], 5.0);
    EXPECT_TRUE(std::isnan(mx[1]));
    ember::test::expect_eq(x.argmax(1).into_data(),
                           TensorData(std::vector<std::int64_t>{7777, 50'001}, Shape{2, 1}));
    ember::test::expect_eq(x.argmin(1).into_data(),
                           TensorData(std::vector<std::int64_t>{n - 1, 50'001}, Shape{2, 1}));
    EXPECT_EQ(x.min_dim(1).template to_vec<double>()[0], -7.0);
    EXPECT_TRUE(std::isnan(x.max().into_scalar()));
  }
}

TYPED_TEST(ReduceTest, LargeColumnReductions) {
  using B = TypeParam;
  const std::int64_t r = 513, c = 300;
  std::vector<double> v = iota_vals(r * c);
  v[static_cast<std::size_t>(200 * c + 5)] = 10.0;    // col 5 max at row 200
  v[static_cast<std::size_t>(300 * c + 5)] = 10.0;    // tie at row 300 -> 200 wins
  v[static_cast<std::size_t>(100 * c + 299)] = kNaN;  // col 299 NaN at row 100
  const auto x = Tensor<B, 2>::from_data(TensorData(v, Shape{r, c}));
  const auto idx = x.argmax(0).template to_vec<std::int64_t>();
  EXPECT_EQ(idx[5], 200);
  EXPECT_EQ(idx[299], 100);
  const auto mx = x.max_dim(0).template to_vec<double>();
  EXPECT_EQ(mx[5], 10.0);
  EXPECT_TRUE(std::isnan(mx[299]));
  const auto s = x.sum_dim(0).template to_vec<double>();
  double ref = 0;
  for (std::int64_t k = 0; k < r; ++k)
    ref += static_cast<double>(static_cast<float>(v[static_cast<std::size_t>(k * c + 7)]));
  EXPECT_NEAR(s[7], ref, 1e-4);
  const auto xi = x.int_();
  EXPECT_EQ(xi.argmax(0).template to_vec<std::int64_t>()[5], 200);
}

TYPED_TEST(ReduceTest, ResultsDoNotDependOnThreadCount) {
  using B = TypeParam;
  if constexpr (requires { B::set_num_threads(1); }) {
    B::seed(3);
    const auto x = Tensor<B, 2>::random(Shape{1024, 1000});
    const int before = B::num_threads();
    B::set_num_threads(1);
    const auto s1 = x.sum().into_data();
    const auto d1 = x.sum_dim(0).into_data();
    const auto c1 = x.cumsum(1).into_data();
    B::set_num_threads(2);
    const auto s2 = x.sum().into_data();
    const auto d2 = x.sum_dim(0).into_data();
    const auto c2 = x.cumsum(1).into_data();
    B::set_num_threads(before);
    ember::test::expect_eq(s1, s2);
    ember::test::expect_eq(d1, d2);
    ember::test::expect_eq(c1, c2);
  } else {
    GTEST_SKIP() << "backend has no thread control";
  }
}

// ---- semantics ----------------------------------------------------------------------------

TYPED_TEST(ReduceTest, VarianceOfOneElementIsNaNUnbiased) {
  using B = TypeParam;
  const auto x = Tensor<B, 2>::from_floats({{3.0}, {5.0}});
  const auto v = x.var(1).template to_vec<double>();
  EXPECT_TRUE(std::isnan(v[0]) && std::isnan(v[1]));
  ember::test::expect_eq(x.var_bias(1).into_data(),
                         TensorData(std::vector<float>{0, 0}, Shape{2, 1}));
  auto [vm, m] = x.var_mean(1);
  ember::test::expect_eq(m.into_data(), TensorData(std::vector<float>{3, 5}, Shape{2, 1}));
}

TYPED_TEST(ReduceTest, ResultShapesKeepDimAndFullReductionsAreRankOne) {
  using B = TypeParam;
  const auto x = Tensor<B, 3>::ones(Shape{2, 3, 4});
  EXPECT_EQ(x.sum_dim(1).shape(), (Shape{2, 1, 4}));
  EXPECT_EQ(x.argmax(-1).shape(), (Shape{2, 3, 1}));
  EXPECT_EQ(x.argmax(-1).dtype(), DType::I64);
  EXPECT_EQ(x.sum().shape(), (Shape{1}));
  EXPECT_EQ(x.median().shape(), (Shape{1}));
  EXPECT_EQ(x.any().shape(), (Shape{1}));
  EXPECT_EQ(x.all_dim(0).shape(), (Shape{1, 3, 4}));
  EXPECT_EQ(x.topk(2, 2).shape(), (Shape{2, 3, 2}));
  EXPECT_EQ(x.cumsum(0).shape(), (Shape{2, 3, 4}));
  EXPECT_EQ(x.sum_dim(1).dtype(), DType::F32);
}

TYPED_TEST(ReduceTest, ReduceOverSizeOneDimIsIdentity) {
  using B = TypeParam;
  const auto x = Tensor<B, 3>::from_data(TensorData(iota_vals(6), Shape{2, 1, 3}));
  ember::test::expect_eq(x.sum_dim(1).into_data(), x.into_data());
  ember::test::expect_eq(x.max_dim(1).into_data(), x.into_data());
  ember::test::expect_eq(x.argmax(1).into_data(),
                         TensorData(std::vector<std::int64_t>(6, 0), Shape{2, 1, 3}));
  ember::test::expect_eq(x.sort(1).into_data(), x.into_data());
  ember::test::expect_eq(x.cumprod(1).into_data(), x.into_data());
  ember::test::expect_eq(x.median_dim(1).into_data(), x.into_data());
}

TYPED_TEST(ReduceTest, SortIsStableForEqualKeysDescending) {
  using B = TypeParam;
  const auto x = Tensor<B, 1>::from_floats({1.0, 2.0, 1.0, 2.0, kNaN, 1.0});
  auto [v, i] = x.sort_with_indices(0, true);
  ember::test::expect_eq(i.into_data(),
                         TensorData(std::vector<std::int64_t>{4, 1, 3, 0, 2, 5}, Shape{6}));
  auto [va, ia] = x.sort_with_indices(0, false);
  ember::test::expect_eq(ia.into_data(),
                         TensorData(std::vector<std::int64_t>{0, 2, 5, 1, 3, 4}, Shape{6}));
  EXPECT_TRUE(std::isnan(va.template to_vec<double>()[5]));
}

TYPED_TEST(ReduceTest, TopkPutsNaNFirstAndBreaksTiesByIndex) {
  using B = TypeParam;
  const auto x = Tensor<B, 1>::from_floats({3.0, kNaN, 5.0, 5.0, -kInf});
  auto [v, i] = x.topk_with_indices(3, 0);
  const auto vv = v.template to_vec<double>();
  EXPECT_TRUE(std::isnan(vv[0]));
  EXPECT_EQ(vv[1], 5.0);
  EXPECT_EQ(vv[2], 5.0);
  ember::test::expect_eq(i.into_data(), TensorData(std::vector<std::int64_t>{1, 2, 3}, Shape{3}));
}

TYPED_TEST(ReduceTest, MaxAbsAndSmallIntDtypes) {
  using B = TypeParam;
  const auto x = Tensor<B, 2, Int>::from_ints({{-7, 3, 2}, {1, -1, 6}}, {}, DType::I8);
  ember::test::expect_eq(
      x.max_abs_dim(1).into_data(),
      TensorData(std::vector<std::int64_t>{7, 6}, Shape{2, 1}).convert(DType::I8));
  EXPECT_EQ(x.max_abs().into_scalar(), 7);
  ember::test::expect_eq(
      x.sum_dim(0).into_data(),
      TensorData(std::vector<std::int64_t>{-6, 2, 8}, Shape{1, 3}).convert(DType::I8));
  const auto u = Tensor<B, 1, Int>::from_ints({200, 10, 255}, {}, DType::U8);
  EXPECT_EQ(u.argmax(0).into_scalar(), 2);
  EXPECT_EQ(u.min().into_scalar(), 10);
  ember::test::expect_eq(
      u.sort(0).into_data(),
      TensorData(std::vector<std::int64_t>{10, 200, 255}, Shape{3}).convert(DType::U8));
  const auto s = Tensor<B, 1, Int>::from_ints({-5, 7, 0}, {}, DType::I16);
  EXPECT_EQ(s.cummin(0).template to_vec<std::int64_t>(), (std::vector<std::int64_t>{-5, -5, -5}));
}

TYPED_TEST(ReduceTest, MaxAbsPropagatesNaN) {
  using B = TypeParam;
  const auto x = Tensor<B, 1>::from_floats({1.0, -kInf, kNaN});
  EXPECT_TRUE(std::isnan(x.max_abs().into_scalar()));
  EXPECT_EQ(F1<B>::from_floats({1.0, -kInf}).max_abs().into_scalar(), kInf);
}

TYPED_TEST(ReduceTest, AnyAllTreatNaNAsTrue) {
  using B = TypeParam;
  EXPECT_TRUE(F1<B>::from_floats({0.0, kNaN}).any().into_scalar());
  EXPECT_TRUE(F1<B>::from_floats({kNaN, -1.0}).all().into_scalar());
  EXPECT_FALSE(F1<B>::from_floats({0.0, -0.0}).any().into_scalar());
  EXPECT_FALSE(I1<B>::from_ints({1, 0}).all().into_scalar());
  EXPECT_TRUE(B1<B>::from_bools({false, true}).any().into_scalar());
}

TYPED_TEST(ReduceTest, MedianOfIntsAndLowerMedian) {
  using B = TypeParam;
  const auto x = Tensor<B, 2, Int>::from_ints({{4, 1, 3, 2}, {9, 9, 9, 9}});
  ember::test::expect_eq(x.median_dim(1).into_data(),
                         TensorData(std::vector<std::int64_t>{2, 9}, Shape{2, 1}));
  EXPECT_EQ(x.median().into_scalar(), 4);
  EXPECT_EQ(x.median_dim_with_indices(1).second.template to_vec<std::int64_t>()[0], 3);
}

TYPED_TEST(ReduceTest, CumOpsOnF64AndBF16) {
  using B = TypeParam;
  const auto x = Tensor<B, 1>::from_floats({1.5, -2.0, 4.0, 0.5}, {}, DType::F64);
  EXPECT_EQ(x.cumsum(0).template to_vec<double>(), (std::vector<double>{1.5, -0.5, 3.5, 4.0}));
  EXPECT_EQ(x.cumprod(0).template to_vec<double>(), (std::vector<double>{1.5, -3.0, -12.0, -6.0}));
  const auto h = Tensor<B, 1>::from_floats({1.0, 3.0, 2.0}, {}, DType::BF16);
  EXPECT_EQ(h.cummax(0).template to_vec<double>(), (std::vector<double>{1, 3, 3}));
  EXPECT_EQ(h.cummax(0).dtype(), DType::BF16);
  EXPECT_EQ(h.argmax(0).into_scalar(), 1);
}

TYPED_TEST(ReduceTest, LongLinesSortLikeAStableComparatorSort) {
  using B = TypeParam;
  // long lines take the radix path: check against std::stable_sort with torch's order
  const std::int64_t n = 3001;
  std::vector<double> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i)
    v[i] = std::round(std::sin(1.3 * static_cast<double>(i)) * 50.0) / 4.0;
  v[10] = kNaN;
  v[20] = -kNaN;
  v[30] = kInf;
  v[40] = -kInf;
  v[50] = -0.0;
  v[60] = 0.0;
  auto nan_last_less = [](double a, double b) { return std::isnan(b) ? !std::isnan(a) : a < b; };
  for (DType dt : {DType::F32, DType::F64, DType::I64, DType::I32}) {
    for (bool desc : {false, true}) {
      std::vector<std::int64_t> ref(static_cast<std::size_t>(n));
      std::iota(ref.begin(), ref.end(), 0);
      std::vector<double> w = v;
      if (is_int(dt)) {
        for (auto& x : w) x = std::isfinite(x) ? std::trunc(x * 4.0) : (x > 0 ? 1e6 : -1e6);
      }
      std::stable_sort(ref.begin(), ref.end(), [&](std::int64_t a, std::int64_t b) {
        return desc ? nan_last_less(w[b], w[a]) : nan_last_less(w[a], w[b]);
      });
      std::vector<std::int64_t> got;
      if (is_int(dt)) {
        const auto x = Tensor<B, 1, Int>::from_data(TensorData(w, Shape{n}).convert(dt));
        got = x.argsort(0, desc).template to_vec<std::int64_t>();
      } else {
        const auto x = Tensor<B, 1>::from_data(TensorData(w, Shape{n}), {}, dt);
        auto [vals, idx] = x.sort_with_indices(0, desc);
        got = idx.template to_vec<std::int64_t>();
        const auto sv = vals.template to_vec<double>();
        for (std::size_t k = 0; k < sv.size(); ++k) {
          const double e = w[static_cast<std::size_t>(ref[k])];
          if (std::isnan(e))
            EXPECT_TRUE(std::isnan(sv[k]));
          else
            EXPECT_EQ(sv[k], e);
        }
      }
      EXPECT_EQ(got, ref) << dtype_name(dt) << (desc ? " descending" : " ascending");
    }
  }
}

TYPED_TEST(ReduceTest, LongRowArgmaxTiesAcrossLanesTakeLowestIndex) {
  using B = TypeParam;
  const std::int64_t n = 1000;
  std::vector<double> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) v[i] = static_cast<double>((i * 37) % 101) - 50.0;
  v[700] = v[33] = v[500] = 99.0;   // tied max in different lanes
  v[801] = v[65] = v[402] = -99.0;  // tied min
  for (DType dt : {DType::F32, DType::F64, DType::I32, DType::I64}) {
    std::int64_t amax = 0, amin = 0;
    if (is_int(dt)) {
      const auto x = Tensor<B, 1, Int>::from_data(TensorData(v, Shape{n}).convert(dt));
      amax = x.argmax(0).into_scalar();
      amin = x.argmin(0).into_scalar();
    } else {
      const auto x = Tensor<B, 1>::from_data(TensorData(v, Shape{n}), {}, dt);
      amax = x.argmax(0).into_scalar();
      amin = x.argmin(0).into_scalar();
    }
    EXPECT_EQ(amax, 33) << dtype_name(dt);
    EXPECT_EQ(amin, 65) << dtype_name(dt);
  }
  std::vector<double> w = v;
  w[900] = kNaN;
  w[100] = kNaN;  // the first NaN wins for both argmax and argmin
  const auto x = Tensor<B, 1>::from_data(TensorData(w, Shape{n}));
  EXPECT_EQ(x.argmax(0).into_scalar(), 100);
  EXPECT_EQ(x.argmin(0).into_scalar(), 100);
  auto [mv, mi] = x.max_dim_with_indices(0);
  EXPECT_TRUE(std::isnan(mv.into_scalar()));
  EXPECT_EQ(mi.into_scalar(), 100);
}

// ---- cummax / cummin with indices (added with the op-description redesign) ----------------
TYPED_TEST(ReduceTest, CummaxCumminWithIndices) {
  using B = TypeParam;
  const auto x = Tensor<B, 2>::from_floats({{1, 3, 2, 3, 0}, {5, 4, 6, 1, 6}});
  const auto [mv, mi] = x.cummax_with_indices(1);
  EXPECT_EQ(mv.template to_vec<float>(), (std::vector<float>{1, 3, 3, 3, 3, 5, 5, 6, 6, 6}));
  // Ties take the later index (torch.cummax).
  EXPECT_EQ(mi.template to_vec<std::int64_t>(),
            (std::vector<std::int64_t>{0, 1, 1, 3, 3, 0, 0, 2, 2, 4}));
  EXPECT_EQ(mi.dtype(), DType::I64);
  const auto [nv, ni] = x.cummin_with_indices(-1);
  EXPECT_EQ(nv.template to_vec<float>(), (std::vector<float>{1, 1, 1, 1, 0, 5, 4, 4, 1, 1}));
  EXPECT_EQ(ni.template to_vec<std::int64_t>(),
            (std::vector<std::int64_t>{0, 0, 0, 0, 4, 0, 1, 1, 3, 3}));
  // Along dim 0.
  const auto [cv, ci] = x.cummax_with_indices(0);
  EXPECT_EQ(cv.template to_vec<float>(), (std::vector<float>{1, 3, 2, 3, 0, 5, 4, 6, 3, 6}));
  EXPECT_EQ(ci.template to_vec<std::int64_t>(),
            (std::vector<std::int64_t>{0, 0, 0, 0, 0, 1, 1, 1, 0, 1}));
  // NaN propagates and takes the index of the latest NaN.
  const auto [qv, qi] = F1<B>::from_floats({1, kNaN, 3, kNaN, 0}).cummax_with_indices(0);
  const auto q = qv.template to_vec<double>();
  EXPECT_EQ(q[0], 1.0);
  for (std::size_t k = 1; k < q.size(); ++k) EXPECT_TRUE(std::isnan(q[k])) << k;
  EXPECT_EQ(qi.template to_vec<std::int64_t>(), (std::vector<std::int64_t>{0, 1, 1, 3, 3}));
  // Ints.
  const auto [iv, ii] = I1<B>::from_ints({2, 2, 1, 5}).cummax_with_indices(0);
  EXPECT_EQ(iv.template to_vec<std::int64_t>(), (std::vector<std::int64_t>{2, 2, 2, 5}));
  EXPECT_EQ(ii.template to_vec<std::int64_t>(), (std::vector<std::int64_t>{0, 1, 1, 3}));
  const auto [jv, ji] = I1<B>::from_ints({2, 2, 1, 5}).cummin_with_indices(0);
  EXPECT_EQ(jv.template to_vec<std::int64_t>(), (std::vector<std::int64_t>{2, 2, 1, 1}));
  EXPECT_EQ(ji.template to_vec<std::int64_t>(), (std::vector<std::int64_t>{0, 1, 2, 2}));
  // Empty and errors.
  const auto empty = Tensor<B, 2>::zeros(Shape{2, 0}).cummax_with_indices(1);
  EXPECT_EQ(empty.second.shape(), (Shape{2, 0}));
  EMBER_EXPECT_THROW_MSG(x.cummax_with_indices(2), ShapeError, "[cummax_with_indices] dim 2");
  // The gradient goes to the element each running value came from: d sum(w * cummax(x)) / dx.
  if constexpr (AutodiffBackend<B>) {
    if constexpr (std::is_same_v<B, Dispatch>) {
      if (!Device::default_().is_autodiff()) return;
    }
    const auto xg = x.require_grad();
    const auto w = Tensor<B, 2>::from_floats({{1, 2, 3, 4, 5}, {1, 2, 3, 4, 5}});
    const auto gmax = xg.cummax_with_indices(1).first.mul(w).sum().backward();
    EXPECT_EQ(xg.grad(gmax)->template to_vec<float>(),
              (std::vector<float>{1, 5, 0, 9, 0, 3, 0, 7, 0, 5}));
    const auto gmin = xg.cummin_with_indices(1).first.mul(w).sum().backward();
    EXPECT_EQ(xg.grad(gmin)->template to_vec<float>(),
              (std::vector<float>{10, 0, 0, 0, 5, 1, 5, 0, 9, 0}));
  }
}
