// Linalg conformance: f32/f64 GEMM at sizes that take the threaded large-matrix path
// (m n k >= 512^3: oneDNN's sgemm in blocks when built with oneDNN, else OpenBLAS;
// EMBER_MATMUL_IMPL=blas forces OpenBLAS): non-square shapes not multiples of any kernel block,
// transposed views, leading dims larger than the column count, broadcast batches, shared rhs
// (folded into one tall GEMM), k == 0, f16/bf16 through f32. Reference: naive product in double.
// Tolerance: |got - ref| <= 1e-4 + 1e-4 |ref| for f32 (k <= 1400, |values| < 1),
// 1e-10 for f64, 1e-2 relative for f16/bf16 (their rounding of the output).
#include <random>

#include "linalg_support.hpp"

using namespace ember;
using namespace ember::test::linalg;
using ember::test::expect_approx;

template <class B>
class LinalgGemmTest : public ::testing::Test {};
TYPED_TEST_SUITE(LinalgGemmTest, ember::test::ConformanceBackends, ember::test::BackendNames);

namespace {

std::vector<float> random_values(std::size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = d(gen);
  return v;
}

/// Batched naive product: a [batch_a, m, k] (batch index ia(b)), b [batch_b, k, n].
template <class IA, class IB>
std::vector<double> naive(const std::vector<float>& a, const std::vector<float>& b, int batch,
                          int m, int k, int n, IA ia, IB ib) {
  std::vector<double> c(static_cast<std::size_t>(batch) * m * n, 0.0);
  for (int t = 0; t < batch; ++t) {
    const float* pa = a.data() + static_cast<std::size_t>(ia(t)) * m * k;
    const float* pb = b.data() + static_cast<std::size_t>(ib(t)) * k * n;
    double* pc = c.data() + static_cast<std::size_t>(t) * m * n;
    for (int i = 0; i < m; ++i)
      for (int p = 0; p < k; ++p) {
        const double av = pa[i * k + p];
        for (int j = 0; j < n; ++j) pc[i * n + j] += av * double(pb[p * n + j]);
      }
  }
  return c;
}

std::vector<float> transpose(const std::vector<float>& v, int batch, int rows, int cols) {
  std::vector<float> t(v.size());
  for (int b = 0; b < batch; ++b)
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < cols; ++j)
        t[(static_cast<std::size_t>(b) * cols + j) * rows + i] =
            v[(static_cast<std::size_t>(b) * rows + i) * cols + j];
  return t;
}

const auto kF32 = Tolerance::rel_abs(1e-4, 1e-4);

template <class B>
void check_all_transposes(int m, int k, int n, unsigned seed) {
  const auto av = random_values(m * k, seed), bv = random_values(k * n, seed + 1);
  const auto id = [](int) { return 0; };
  const TensorData expected(naive(av, bv, 1, m, k, n, id, id), Shape{m, n});
  const auto a = Tensor<B, 2>::from_data(TensorData(av, Shape{m, k}));
  const auto b = Tensor<B, 2>::from_data(TensorData(bv, Shape{k, n}));
  // a^T and b^T stored contiguous, viewed transposed (the GEMM gets trans flags, no copy)
  const auto at =
      transposed_view(Tensor<B, 2>::from_data(TensorData(transpose(av, 1, m, k), Shape{k, m})));
  const auto bt =
      transposed_view(Tensor<B, 2>::from_data(TensorData(transpose(bv, 1, k, n), Shape{n, k})));
  expect_approx(a.matmul(b).into_data(), expected, kF32);
  expect_approx(at.matmul(b).into_data(), expected, kF32);
  expect_approx(a.matmul(bt).into_data(), expected, kF32);
  expect_approx(at.matmul(bt).into_data(), expected, kF32);
  if (seed != 11) return;  // the dtype variants once
  expect_approx(a.cast(DType::F64).matmul(bt.cast(DType::F64)).into_data(), expected,
                Tolerance::rel_abs(1e-10, 1e-10));
  expect_approx(a.cast(DType::F16).matmul(b.cast(DType::F16)).cast(DType::F32).into_data(),
                expected, Tolerance::rel_abs(1e-2, 5e-2));
  expect_approx(at.cast(DType::BF16).matmul(b.cast(DType::BF16)).cast(DType::F32).into_data(),
                expected, Tolerance::rel_abs(2e-2, 2e-1));
}

}  // namespace

TYPED_TEST(LinalgGemmTest, LargeNonSquareAllTransposeCombinations) {
  // m n k >= 512^3 (oneDNN's sgemm when built with it): m >= n is cut into row blocks,
  // m < n into column blocks
  check_all_transposes<TypeParam>(640, 530, 410, 11);
  check_all_transposes<TypeParam>(410, 530, 640, 13);
  check_all_transposes<TypeParam>(100, 1400, 1000, 15);
  check_all_transposes<TypeParam>(301, 517, 263, 17);  // below the oneDNN threshold
}

TYPED_TEST(LinalgGemmTest, LeadingDimLargerThanColumns) {
  using B = TypeParam;
  if constexpr (!std::is_same_v<B, Cpu>)
    GTEST_SKIP() << "builds CpuTensor views";
  else {
    // lhs = wide[:, 7:7+k] (ld 700), rhs = a transposed view of columns 3..3+k of [n, 600]
    const int m = 600, k = 560, n = 420, lda = 700, ldb = 600;
    const auto wv = random_values(m * lda, 21), rv = random_values(n * ldb, 22);
    std::vector<float> av(m * k), bv(k * n);
    for (int i = 0; i < m; ++i)
      for (int p = 0; p < k; ++p) av[i * k + p] = wv[i * lda + 7 + p];
    for (int p = 0; p < k; ++p)
      for (int j = 0; j < n; ++j) bv[p * n + j] = rv[j * ldb + 3 + p];
    const auto id = [](int) { return 0; };
    const TensorData expected(naive(av, bv, 1, m, k, n, id, id), Shape{m, n});
    const auto wide = Tensor<B, 2>::from_data(TensorData(wv, Shape{m, lda}));
    const auto rwide = Tensor<B, 2>::from_data(TensorData(rv, Shape{n, ldb}));
    CpuTensor pa = wide.primitive();
    pa.shape = Shape{m, k};
    pa.offset = 7;
    CpuTensor pb = rwide.primitive();
    pb.shape = Shape{k, n};
    pb.strides = {1, ldb};
    pb.offset = 3;
    const Tensor<B, 2> a(pa), b(pb);
    expect_approx(a.matmul(b).into_data(), expected, kF32);
  }
}

TYPED_TEST(LinalgGemmTest, BroadcastBatchesAtLargeSizes) {
  using B = TypeParam;
  // a [2, 1, m, k] x b [1, 2, k, n] -> [2, 2, m, n]; m n k >= 512^3, n > m (column blocks)
  const int m = 500, k = 530, n = 520;
  const auto av = random_values(2 * m * k, 31), bv = random_values(2 * k * n, 32);
  const auto a = Tensor<B, 4>::from_data(TensorData(av, Shape{2, 1, m, k}));
  const auto b = Tensor<B, 4>::from_data(TensorData(bv, Shape{1, 2, k, n}));
  const TensorData expected(
      naive(
          av, bv, 4, m, k, n, [](int t) { return t / 2; }, [](int t) { return t % 2; }),
      Shape{2, 2, m, n});
  expect_approx(a.matmul(b).into_data(), expected, kF32);
  // the same with a as transposed views of [2, 1, k, m]
  const auto at = transposed_view(
      Tensor<B, 4>::from_data(TensorData(transpose(av, 2, m, k), Shape{2, 1, k, m})));
  expect_approx(at.matmul(b).into_data(), expected, kF32);
}

TYPED_TEST(LinalgGemmTest, SharedRhsFoldsIntoOneTallGemm) {
  using B = TypeParam;
  // a [5, m, k] contiguous, b [1, k, n] shared: one GEMM of 5 m rows (b also transposed)
  const int bs = 4, m = 160, k = 512, n = 520;
  const auto av = random_values(bs * m * k, 41), bv = random_values(k * n, 42);
  const auto a = Tensor<B, 3>::from_data(TensorData(av, Shape{bs, m, k}));
  const auto b = Tensor<B, 3>::from_data(TensorData(bv, Shape{1, k, n}));
  const auto bt =
      transposed_view(Tensor<B, 3>::from_data(TensorData(transpose(bv, 1, k, n), Shape{1, n, k})));
  const TensorData expected(
      naive(
          av, bv, bs, m, k, n, [](int t) { return t; }, [](int) { return 0; }),
      Shape{bs, m, n});
  expect_approx(a.matmul(b).into_data(), expected, kF32);
  expect_approx(a.matmul(bt).into_data(), expected, kF32);
}

TYPED_TEST(LinalgGemmTest, EmptyInnerDimGivesZeros) {
  using B = TypeParam;
  const auto a = Tensor<B, 3>::zeros(Shape{2, 300, 0});
  const auto b = Tensor<B, 3>::zeros(Shape{2, 0, 400});
  const auto c = a.matmul(b);
  EXPECT_EQ(c.shape(), (Shape{2, 300, 400}));
  expect_approx(c.into_data(), TensorData::full(Shape{2, 300, 400}, 0.0, DType::F32), kF32);
}
