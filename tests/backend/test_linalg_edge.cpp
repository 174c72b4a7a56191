// Linalg conformance: hand-computed edge cases (strided views, threads, overflow, NaN,
// dtype promotion) and one test per front-end check.
#include <cmath>
#include <limits>
#include <random>

#include "linalg_support.hpp"

using namespace ember;
using namespace ember::test::linalg;
using ember::test::expect_approx;
using ember::test::expect_eq;

template <class B>
class LinalgTest : public ::testing::Test {};
TYPED_TEST_SUITE(LinalgTest, ember::test::ConformanceBackends, ember::test::BackendNames);

namespace {

/// Row-major random values in [-1, 1).
std::vector<float> random_values(std::size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = d(gen);
  return v;
}

/// Naive [m, k] x [k, n] in double.
std::vector<double> naive(const std::vector<float>& a, const std::vector<float>& b, int m, int k,
                          int n) {
  std::vector<double> c(static_cast<std::size_t>(m) * n, 0.0);
  for (int i = 0; i < m; ++i)
    for (int p = 0; p < k; ++p)
      for (int j = 0; j < n; ++j) c[i * n + j] += double(a[i * k + p]) * double(b[p * n + j]);
  return c;
}

/// A Cpu view with the given shape/strides/offset over `base`'s storage.
template <std::size_t R, class K = Float>
Tensor<Cpu, R, K> cpu_view(const CpuTensor& base, Shape shape, std::vector<std::int64_t> strides,
                           std::int64_t offset) {
  CpuTensor p = base;
  p.shape = std::move(shape);
  p.strides = std::move(strides);
  p.offset = offset;
  return Tensor<Cpu, R, K>(p);
}

/// Restores the thread count when a test changes it.
struct ThreadGuard {
  int saved = Cpu::num_threads();
  ~ThreadGuard() { Cpu::set_num_threads(saved); }
};

}  // namespace

// ---- matmul ---------------------------------------------------------------------------

TYPED_TEST(LinalgTest, MatmulLargeMatchesNaive) {
  using B = TypeParam;
  const int m = 70, k = 130, n = 90;
  const auto av = random_values(m * k, 1), bv = random_values(k * n, 2);
  const auto a = Tensor<B, 2>::from_data(TensorData(av, Shape{m, k}));
  const auto b = Tensor<B, 2>::from_data(TensorData(bv, Shape{k, n}));
  const TensorData expected(naive(av, bv, m, k, n), Shape{m, n});
  expect_approx(a.matmul(b).into_data(), expected, Tolerance::rel_abs(1e-4, 1e-4));
  // f64 through dgemm: tighter.
  expect_approx(a.cast(DType::F64).matmul(b.cast(DType::F64)).into_data(), expected,
                Tolerance::rel_abs(1e-10, 1e-10));
}

TYPED_TEST(LinalgTest, MatmulThreadCountDoesNotChangeResult) {
  using B = TypeParam;
  ThreadGuard guard;
  // many small matrices (one matrix per thread) and one large one (threaded BLAS)
  for (auto [bs, m] : {std::pair<int, int>{32, 12}, std::pair<int, int>{1, 200}}) {
    const auto av = random_values(bs * m * m, 3), bv = random_values(bs * m * m, 4);
    const auto a = Tensor<B, 3>::from_data(TensorData(av, Shape{bs, m, m}));
    const auto b = Tensor<B, 3>::from_data(TensorData(bv, Shape{bs, m, m}));
    Cpu::set_num_threads(1);
    const TensorData one = a.matmul(b).into_data();
    Cpu::set_num_threads(2);
    const TensorData two = a.matmul(b).into_data();
    expect_approx(two, one, Tolerance::rel_abs(1e-5, 1e-5));
    // batch 0 against the naive product
    std::vector<float> a0(av.begin(), av.begin() + m * m), b0(bv.begin(), bv.begin() + m * m);
    const auto ref = naive(a0, b0, m, m, m);
    const auto got = two.to_vec<double>();
    for (int i = 0; i < m * m; i += 7) EXPECT_NEAR(got[i], ref[i], 1e-4);
  }
}

TYPED_TEST(LinalgTest, MatmulSlicedColumnsUseLeadingDim) {
  using B = TypeParam;
  if constexpr (!std::is_same_v<B, Cpu>)
    GTEST_SKIP() << "builds CpuTensor views";
  else {
    // base [3, 5]; view = base[:, 1:4] (shape [3, 3], strides [5, 1], offset 1)
    const auto base =
        Tensor<B, 2>::from_floats({{0, 1, 2, 3, 4}, {5, 6, 7, 8, 9}, {10, 11, 12, 13, 14}});
    const auto v = cpu_view<2>(base.primitive(), Shape{3, 3}, {5, 1}, 1);
    const auto eye = Tensor<B, 2>::from_floats({{1, 0, 0}, {0, 2, 0}, {0, 0, 1}});
    expect_eq(v.matmul(eye).into_data(),
              Tensor<B, 2>::from_floats({{1, 4, 3}, {6, 14, 8}, {11, 24, 13}}).into_data());
    // the same view on the right, transposed view (strides [1, 5]) on the left
    const auto vt = cpu_view<2>(base.primitive(), Shape{3, 3}, {1, 5}, 1);
    expect_eq(vt.matmul(eye).into_data(),
              Tensor<B, 2>::from_floats({{1, 12, 11}, {2, 14, 12}, {3, 16, 13}}).into_data());
  }
}

TYPED_TEST(LinalgTest, MatmulExpandedAndSteppedViews) {
  using B = TypeParam;
  if constexpr (!std::is_same_v<B, Cpu>)
    GTEST_SKIP() << "builds CpuTensor views";
  else {
    const auto base = Tensor<B, 2>::from_floats({{1, 2}, {3, 4}});
    // lhs expanded over a batch of 3 (batch stride 0)
    const auto a = cpu_view<3>(base.primitive(), Shape{3, 2, 2}, {0, 2, 1}, 0);
    const auto b =
        Tensor<B, 3>::from_floats({{{1, 0}, {0, 1}}, {{2, 0}, {0, 2}}, {{0, 1}, {1, 0}}});
    expect_eq(a.matmul(b).into_data(),
              Tensor<B, 3>::from_floats({{{1, 2}, {3, 4}}, {{2, 4}, {6, 8}}, {{2, 1}, {4, 3}}})
                  .into_data());
    // rhs with a stride-0 column dim ([2, 3] expanded from [2, 1]) and a stepped lhs
    // (every other column of [2, 4]) - neither is BLAS-readable, both get copied
    const auto col = Tensor<B, 2>::from_floats({{1}, {2}});
    const auto r = cpu_view<2>(col.primitive(), Shape{2, 3}, {1, 0}, 0);
    const auto wide = Tensor<B, 2>::from_floats({{1, 9, 2, 9}, {3, 9, 4, 9}});
    const auto l = cpu_view<2>(wide.primitive(), Shape{2, 2}, {4, 2}, 0);
    expect_eq(l.matmul(r).into_data(),
              Tensor<B, 2>::from_floats({{5, 5, 5}, {11, 11, 11}}).into_data());
    // int kernel on the same strided views
    const auto li =
        cpu_view<2, Int>(Tensor<B, 2, Int>::from_ints({{1, 9, 2, 9}, {3, 9, 4, 9}}).primitive(),
                         Shape{2, 2}, {4, 2}, 0);
    const auto ri = cpu_view<2, Int>(Tensor<B, 2, Int>::from_ints({{1}, {2}}).primitive(),
                                     Shape{2, 3}, {1, 0}, 0);
    expect_eq(li.matmul(ri).into_data(),
              Tensor<B, 2, Int>::from_ints({{5, 5, 5}, {11, 11, 11}}).into_data());
  }
}

TYPED_TEST(LinalgTest, MatmulTransposedBatchedViewWithBroadcastRhs) {
  using B = TypeParam;
  const auto av = random_values(4 * 6 * 5, 7), bv = random_values(6 * 3, 8);
  // a_t holds [4, 6, 5]; a = a_t^T is [4, 5, 6]; b [1, 6, 3] shared by every batch
  const auto a = transposed_view(Tensor<B, 3>::from_data(TensorData(av, Shape{4, 6, 5})));
  const auto b = Tensor<B, 3>::from_data(TensorData(bv, Shape{1, 6, 3}));
  const TensorData got = a.matmul(b).into_data();
  ASSERT_EQ(got.shape(), (Shape{4, 5, 3}));
  const auto g = got.to_vec<double>();
  for (int bi = 0; bi < 4; ++bi)
    for (int i = 0; i < 5; ++i)
      for (int j = 0; j < 3; ++j) {
        double s = 0;
        for (int p = 0; p < 6; ++p) s += double(av[bi * 30 + p * 5 + i]) * double(bv[p * 3 + j]);
        EXPECT_NEAR(g[(bi * 5 + i) * 3 + j], s, 1e-5);
      }
}

TYPED_TEST(LinalgTest, MatmulPromotesDtypes) {
  using B = TypeParam;
  const auto a = Tensor<B, 2>::from_floats({{1, 2}});
  const auto b = Tensor<B, 2>::from_floats({{3}, {4}}, {}, DType::F64);
  const auto c = a.matmul(b);
  EXPECT_EQ(c.dtype(), DType::F64);
  EXPECT_EQ(c.into_scalar(), 11.0);
  const auto h = Tensor<B, 2>::from_floats({{1, 2}}, {}, DType::F16);
  const auto bf = Tensor<B, 2>::from_floats({{3}, {4}}, {}, DType::BF16);
  EXPECT_EQ(h.matmul(bf).dtype(), DType::F32);
  const auto i = Tensor<B, 2, Int>::from_ints({{1, 2}}, {}, DType::I32);
  const auto j = Tensor<B, 2, Int>::from_ints({{3}, {4}});
  EXPECT_EQ(i.matmul(j).dtype(), DType::I64);
  EXPECT_EQ(i.matmul(j).into_scalar(), 11);
}

TYPED_TEST(LinalgTest, MatmulIntWrapsLikeTorch) {
  using B = TypeParam;
  // int32: 2^30 * 2 + 2^30 * 2 = 2^32 wraps to 0; torch.matmul gives 0 as well
  const auto a = Tensor<B, 2, Int>::from_ints({{1 << 30, 1 << 30}}, {}, DType::I32);
  const auto b = Tensor<B, 2, Int>::from_ints({{2}, {2}}, {}, DType::I32);
  EXPECT_EQ(a.matmul(b).into_scalar(), 0);
  const auto c = Tensor<B, 2, Int>::from_ints({{100, 100}}, {}, DType::U8);
  const auto d = Tensor<B, 2, Int>::from_ints({{2}, {1}}, {}, DType::U8);
  EXPECT_EQ(c.matmul(d).into_scalar(), 300 % 256);
}

TYPED_TEST(LinalgTest, MatmulNaNAndInfPropagate) {
  using B = TypeParam;
  const double nan = std::numeric_limits<double>::quiet_NaN(),
               inf = std::numeric_limits<double>::infinity();
  const auto a = Tensor<B, 2>::from_floats({{nan, 1}, {1, 1}, {inf, 1}});
  const auto b = Tensor<B, 2>::from_floats({{1, 2}, {3, 4}});
  const auto v = a.matmul(b).template to_vec<double>();
  EXPECT_TRUE(std::isnan(v[0]));
  EXPECT_TRUE(std::isnan(v[1]));
  EXPECT_EQ(v[2], 4.0);
  EXPECT_EQ(v[4], inf);
}

TYPED_TEST(LinalgTest, MatmulRank5Broadcast) {
  using B = TypeParam;
  const auto a = Tensor<B, 5>::ones(Shape{2, 1, 3, 2, 4});
  const auto b = Tensor<B, 5>::full(Shape{1, 2, 1, 4, 3}, 0.5);
  const auto c = a.matmul(b);
  EXPECT_EQ(c.shape(), (Shape{2, 2, 3, 2, 3}));
  expect_eq(c.into_data(), TensorData::full(Shape{2, 2, 3, 2, 3}, 2.0, DType::F32));
}

TYPED_TEST(LinalgTest, MatmulInnerDimsMismatch) {
  using B = TypeParam;
  const auto a = Tensor<B, 2>::zeros(Shape{2, 3});
  const auto b = Tensor<B, 2>::zeros(Shape{4, 5});
  EMBER_EXPECT_THROW_MSG(a.matmul(b), ShapeError,
                         "[matmul] inner dims do not match: lhs [2, 3] and rhs [4, 5] (3 vs 4)");
}

TYPED_TEST(LinalgTest, MatmulBatchNotBroadcastable) {
  using B = TypeParam;
  const auto a = Tensor<B, 3, Int>::zeros(Shape{2, 3, 4});
  const auto b = Tensor<B, 3, Int>::zeros(Shape{3, 4, 5});
  EMBER_EXPECT_THROW_MSG(a.matmul(b), ShapeError,
                         "[matmul] batch dims of [2, 3, 4] and [3, 4, 5] are not "
                         "broadcast-compatible (dim 0: 2 vs 3)");
}

// ---- dot / outer / matvec ---------------------------------------------------------------

TYPED_TEST(LinalgTest, DotLengthsDiffer) {
  using B = TypeParam;
  const auto a = Tensor<B, 1>::zeros(Shape{3});
  const auto b = Tensor<B, 1>::zeros(Shape{4});
  EMBER_EXPECT_THROW_MSG(a.dot(b), ShapeError, "[dot] vectors of different lengths: [3] and [4]");
}

TYPED_TEST(LinalgTest, DotOfStridedVectors) {
  using B = TypeParam;
  if constexpr (!std::is_same_v<B, Cpu>)
    GTEST_SKIP() << "builds CpuTensor views";
  else {
    const auto base = Tensor<B, 1>::from_floats({1, 10, 2, 10, 3, 10});
    const auto x = cpu_view<1>(base.primitive(), Shape{3}, {2}, 0);  // [1, 2, 3]
    const auto y = cpu_view<1>(base.primitive(), Shape{3}, {0}, 1);  // [10, 10, 10]
    EXPECT_EQ(x.dot(y).into_scalar(), 60.0);
  }
}

TYPED_TEST(LinalgTest, OuterBatchNotBroadcastable) {
  using B = TypeParam;
  const auto a = Tensor<B, 2>::zeros(Shape{2, 3});
  const auto b = Tensor<B, 2>::zeros(Shape{3, 4});
  EMBER_EXPECT_THROW_MSG(a.outer(b), ShapeError,
                         "[outer] batch dims of [2, 3] and [3, 4] are not broadcast-compatible");
}

TYPED_TEST(LinalgTest, MatvecBatched) {
  using B = TypeParam;
  const auto m = Tensor<B, 3>::from_floats({{{1, 2}, {3, 4}}, {{0, 1}, {1, 0}}});
  const auto v = Tensor<B, 2>::from_floats({{1, 1}, {2, 3}});
  expect_eq(ember::linalg::matvec(m, v).into_data(),
            Tensor<B, 2>::from_floats({{3, 7}, {3, 2}}).into_data());
  const auto vi = Tensor<B, 1, Int>::from_ints({1, 2});
  const auto mi = Tensor<B, 2, Int>::from_ints({{1, 1}, {2, -1}, {0, 3}});
  expect_eq(ember::linalg::matvec(mi, vi).into_data(),
            Tensor<B, 1, Int>::from_ints({3, 0, 6}).into_data());
  EMBER_EXPECT_THROW_MSG(
      ember::linalg::matvec(mi, Tensor<B, 1, Int>::from_ints({1, 2, 3})), ShapeError,
      "[matvec] matrix [3, 2] and vector [3] have different inner dims (2 vs 3)");
}

// ---- cross ----------------------------------------------------------------------------

TYPED_TEST(LinalgTest, CrossOfBasisVectorsAndPromotion) {
  using B = TypeParam;
  const auto x = Tensor<B, 2>::from_floats({{1, 0, 0}, {0, 1, 0}});
  const auto y = Tensor<B, 2>::from_floats({{0, 1, 0}, {0, 0, 1}}, {}, DType::F64);
  const auto z = x.cross(y, -1);
  EXPECT_EQ(z.dtype(), DType::F64);
  expect_eq(z.into_data(),
            Tensor<B, 2>::from_floats({{0, 0, 1}, {1, 0, 0}}, {}, DType::F64).into_data());
  // cross of a vector with itself is zero; NaN propagates
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const auto w = Tensor<B, 1>::from_floats({nan, 1, 2});
  const auto v = w.cross(Tensor<B, 1>::from_floats({1, 1, 1}), 0).template to_vec<double>();
  EXPECT_EQ(v[0], -1.0);
  EXPECT_TRUE(std::isnan(v[1]));
  EXPECT_TRUE(std::isnan(v[2]));
}

TYPED_TEST(LinalgTest, CrossDimNotSize3) {
  using B = TypeParam;
  const auto a = Tensor<B, 2>::zeros(Shape{2, 4});
  EMBER_EXPECT_THROW_MSG(a.cross(a, 1), ShapeError,
                         "[cross] dim 1 must have size 3 in both operands, got [2, 4] and [2, 4]");
  const auto b = Tensor<B, 2>::zeros(Shape{2, 3});
  EMBER_EXPECT_THROW_MSG(b.cross(Tensor<B, 2>::zeros(Shape{2, 1}), 1), ShapeError,
                         "got [2, 3] and [2, 1]");
}

TYPED_TEST(LinalgTest, CrossShapesNotBroadcastable) {
  using B = TypeParam;
  const auto a = Tensor<B, 2, Int>::zeros(Shape{2, 3});
  const auto b = Tensor<B, 2, Int>::zeros(Shape{4, 3});
  EMBER_EXPECT_THROW_MSG(a.cross(b, 1), ShapeError,
                         "[cross] shapes [2, 3] and [4, 3] are not broadcast-compatible");
}

TYPED_TEST(LinalgTest, CrossDimOutOfRange) {
  using B = TypeParam;
  const auto a = Tensor<B, 2>::zeros(Shape{3, 3});
  EMBER_EXPECT_THROW_MSG(a.cross(a, 2), ShapeError, "[cross] dim 2 is out of range");
}

// ---- diag / trace -----------------------------------------------------------------------

TYPED_TEST(LinalgTest, DiagOfTransposedView) {
  using B = TypeParam;
  const auto x = Tensor<B, 2>::from_floats({{1, 2, 3}, {4, 5, 6}});
  const auto t = transposed_view(x);  // [[1, 4], [2, 5], [3, 6]]
  expect_eq(t.diag().into_data(), Tensor<B, 1>::from_floats({1, 5}).into_data());
  expect_eq(ember::linalg::diag(t).into_data(), Tensor<B, 1>::from_floats({1, 5}).into_data());
  EXPECT_EQ(t.trace().into_scalar(), 6.0);
}

TYPED_TEST(LinalgTest, TraceShapesAndInt) {
  using B = TypeParam;
  const auto x = Tensor<B, 3, Int>::from_ints({{{1, 2}, {3, 4}}, {{-5, 0}, {0, 7}}});
  const auto t = ember::linalg::trace(x);
  EXPECT_EQ(t.shape(), (Shape{2, 1}));
  EXPECT_EQ(t.dtype(), DType::I64);
  expect_eq(t.into_data(), Tensor<B, 2, Int>::from_ints({{5}, {2}}).into_data());
  const auto e = Tensor<B, 2>::zeros(Shape{0, 0});
  EXPECT_EQ(e.trace().shape(), (Shape{1}));
  EXPECT_EQ(e.trace().into_scalar(), 0.0);
}

// ---- vector_norm ------------------------------------------------------------------------

TYPED_TEST(LinalgTest, NormAliases) {
  using B = TypeParam;
  namespace la = ember::linalg;
  const auto x = Tensor<B, 2>::from_floats({{3, -4, 0}});
  EXPECT_EQ(la::l0_norm(x, 1).into_scalar(), 2.0);
  EXPECT_EQ(la::l1_norm(x, 1).into_scalar(), 7.0);
  EXPECT_EQ(la::l2_norm(x, 1).into_scalar(), 5.0);
  EXPECT_NEAR(la::lp_norm(x, 3, 1).into_scalar(), std::cbrt(91.0), 1e-5);
  EXPECT_EQ(la::max_abs_norm(x, 1).into_scalar(), 4.0);
  EXPECT_EQ(la::min_abs_norm(x, 1).into_scalar(), 0.0);
  EXPECT_EQ(la::l2_norm(x, 0).shape(), (Shape{1, 3}));
  expect_eq(la::l2_norm(x, -2).into_data(), Tensor<B, 2>::from_floats({{3, 4, 0}}).into_data());
}

TYPED_TEST(LinalgTest, VectorNormOfStridedViewAndBF16) {
  using B = TypeParam;
  const auto x = transposed_view(Tensor<B, 2>::from_floats({{3, 0}, {4, 1}}));  // [[3, 4], [0, 1]]
  expect_eq(ember::linalg::l2_norm(x, 1).into_data(),
            Tensor<B, 2>::from_floats({{5}, {1}}).into_data());
  const auto h = Tensor<B, 1>::from_floats({6, 8}, {}, DType::BF16);
  const auto n = ember::linalg::l2_norm(h, 0);
  EXPECT_EQ(n.dtype(), DType::BF16);
  EXPECT_EQ(n.into_scalar(), 10.0);
}

TYPED_TEST(LinalgTest, VectorNormErrors) {
  using B = TypeParam;
  const auto x = Tensor<B, 2>::zeros(Shape{3, 0});
  const double inf = std::numeric_limits<double>::infinity();
  EMBER_EXPECT_THROW_MSG(
      ember::linalg::vector_norm(x, inf, 1), ShapeError,
      "[vector_norm] the inf norm of an empty dim 1 of shape [3, 0] is undefined");
  EMBER_EXPECT_THROW_MSG(ember::linalg::vector_norm(x, -inf, -1), ShapeError,
                         "[vector_norm] the -inf norm of an empty dim -1");
  EMBER_EXPECT_THROW_MSG(ember::linalg::vector_norm(x, std::nan(""), 0), ValueError,
                         "[vector_norm] p must not be NaN");
  EMBER_EXPECT_THROW_MSG(ember::linalg::vector_norm(x, 2.0, 2), ShapeError,
                         "[vector_norm] dim 2 is out of range");
  // an inf norm over a non-empty dim of an empty tensor is fine (torch agrees)
  EXPECT_EQ(ember::linalg::max_abs_norm(x, 0).shape(), (Shape{1, 0}));
}

// ---- cosine_similarity -------------------------------------------------------------------

TYPED_TEST(LinalgTest, CosineSimilarityStridedAndPromoted) {
  using B = TypeParam;
  const auto a = transposed_view(Tensor<B, 2>::from_floats({{1, 0}, {0, 1}}));  // identity
  const auto b = Tensor<B, 2>::from_floats({{1, 1}, {0, 2}}, {}, DType::F64);
  const auto c = ember::linalg::cosine_similarity(a, b, 1);
  EXPECT_EQ(c.dtype(), DType::F64);
  expect_approx(c.into_data(),
                TensorData(std::vector<double>{1 / std::sqrt(2.0), 1.0}, Shape{2, 1}),
                Tolerance::strict());
}

TYPED_TEST(LinalgTest, CosineSimilarityErrors) {
  using B = TypeParam;
  const auto a = Tensor<B, 2>::zeros(Shape{2, 3});
  const auto b = Tensor<B, 2>::zeros(Shape{4, 3});
  EMBER_EXPECT_THROW_MSG(
      ember::linalg::cosine_similarity(a, b, 1), ShapeError,
      "[cosine_similarity] shapes [2, 3] and [4, 3] are not broadcast-compatible");
  EMBER_EXPECT_THROW_MSG(ember::linalg::cosine_similarity(a, a, -3), ShapeError,
                         "[cosine_similarity] dim -3 is out of range");
}

TYPED_TEST(LinalgTest, MatmulTransposedViewsAreNotCopied) {
  using B = TypeParam;
  if constexpr (!std::is_same_v<B, Cpu>)
    GTEST_SKIP() << "counts CPU buffer allocations";
  else {
    // 256 x 256 f32 buffers are pooled, so every allocation shows in buffer_pool_stats.
    const auto a = transposed_view(Tensor<B, 2>::random(Shape{256, 256}));
    const auto b = transposed_view(Tensor<B, 2>::random(Shape{256, 256}));
    const auto allocs = [] {
      const auto s = cpu::buffer_pool_stats();
      return s.hits + s.misses;
    };
    const auto before = allocs();
    const auto c = a.matmul(b);
    EXPECT_EQ(allocs() - before, 1u) << "only the output is allocated (trans flags, no copy)";
    const auto ac = Tensor<B, 2>::from_data(a.into_data()),
               bc = Tensor<B, 2>::from_data(b.into_data());
    expect_approx(c.into_data(), ac.matmul(bc).into_data(), Tolerance::rel_abs(1e-5, 1e-5));
    // a view with a column step is not BLAS-readable: it is copied once
    const auto wide = Tensor<B, 2>::random(Shape{256, 512});
    const auto stepped = cpu_view<2>(wide.primitive(), Shape{256, 256}, {512, 2}, 0);
    const auto before2 = allocs();
    const auto d = stepped.matmul(ac);
    EXPECT_EQ(allocs() - before2, 2u);
    const auto sc = Tensor<B, 2>::from_data(stepped.into_data());
    expect_approx(d.into_data(), sc.matmul(ac).into_data(), Tolerance::rel_abs(1e-5, 1e-5));
  }
}
