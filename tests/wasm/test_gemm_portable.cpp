// Ember's own GEMM (src/cpu/gemm_portable.cpp, what the WebAssembly build uses instead of
// OpenBLAS), compiled natively without EMBER_HAVE_BLAS and checked against a plain triple
// loop in double: both transposes, alpha, beta (0 ignores NaN in C), leading dimensions
// wider than the matrices, edge tiles (sizes not multiples of 4 x 8), k beyond one block;
// split over threads, the same bits as on one.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "blas.hpp"

namespace {

using namespace ember::cpu;

template <class T>
void check(bool ta, bool tb, int m, int n, int k, T alpha, T beta) {
  std::mt19937 rng(static_cast<unsigned>(m * 131 + n * 17 + k + ta * 7 + tb * 3));
  std::uniform_real_distribution<double> u(-1, 1);
  const int lda = (ta ? m : k) + 3, ldb = (tb ? k : n) + 2, ldc = n + 5;
  std::vector<T> a(static_cast<std::size_t>((ta ? k : m) * lda));
  std::vector<T> b(static_cast<std::size_t>((tb ? n : k) * ldb));
  std::vector<T> c(static_cast<std::size_t>(m * ldc));
  for (auto& v : a) v = static_cast<T>(u(rng));
  for (auto& v : b) v = static_cast<T>(u(rng));
  for (auto& v : c) v = beta == T(0) ? T(NAN) : static_cast<T>(u(rng));
  std::vector<double> want(static_cast<std::size_t>(m * n));
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      double s = 0;
      for (int p = 0; p < k; ++p) {
        s += static_cast<double>(ta ? a[p * lda + i] : a[i * lda + p]) *
             static_cast<double>(tb ? b[j * ldb + p] : b[p * ldb + j]);
      }
      want[i * n + j] =
          alpha * s + (beta == T(0) ? 0.0 : beta * static_cast<double>(c[i * ldc + j]));
    }
  }
  const auto TA = ta ? CblasTrans : CblasNoTrans, TB = tb ? CblasTrans : CblasNoTrans;
  if constexpr (std::is_same_v<T, float>) {
    cblas_sgemm(CblasRowMajor, TA, TB, m, n, k, alpha, a.data(), lda, b.data(), ldb, beta, c.data(),
                ldc);
  } else {
    cblas_dgemm(CblasRowMajor, TA, TB, m, n, k, alpha, a.data(), lda, b.data(), ldb, beta, c.data(),
                ldc);
  }
  const double tol = std::is_same_v<T, float> ? 1e-4 * std::sqrt(k + 1.0) : 1e-12 * (k + 1);
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      ASSERT_NEAR(c[i * ldc + j], want[i * n + j], tol)
          << "ta " << ta << " tb " << tb << " m " << m << " n " << n << " k " << k << " at (" << i
          << ", " << j << ")";
    }
  }
}

TEST(GemmPortable, MatchesTripleLoop) {
  const int sizes[][3] = {{1, 1, 1},    {4, 8, 3},      {5, 9, 7},   {7, 19, 300},
                          {13, 33, 17}, {64, 196, 288}, {3, 600, 5}, {33, 1, 40}};
  for (const auto& s : sizes) {
    for (const bool ta : {false, true}) {
      for (const bool tb : {false, true}) {
        check<float>(ta, tb, s[0], s[1], s[2], 1.0f, 0.0f);
        check<float>(ta, tb, s[0], s[1], s[2], 0.5f, 2.0f);
        check<double>(ta, tb, s[0], s[1], s[2], -1.5, 1.0);
      }
    }
  }
}

// The threaded WebAssembly build splits C's rows (or, for a few rows times a transposed B,
// its columns) over threads; here OpenMP's threads do the same. Every split must give C bit
// for bit as one thread does, and still match the triple loop.
TEST(GemmPortable, ThreadsGiveTheSameBitsAsOneThread) {
  // Products above 2 x 2^22 multiply-adds: the GEMM splits (below that it stays whole).
  const int sizes[][3] = {{256, 256, 256}, {1, 4096, 2304}, {130, 300, 400}, {7, 1000, 1300}};
  for (const auto& s : sizes) {
    for (const bool ta : {false, true}) {
      for (const bool tb : {false, true}) {
        const int m = s[0], n = s[1], k = s[2];
        std::mt19937 rng(static_cast<unsigned>(m + n + k));
        std::uniform_real_distribution<float> u(-1, 1);
        std::vector<float> a(static_cast<std::size_t>(m * k)), b(static_cast<std::size_t>(k * n));
        for (auto& v : a) v = u(rng);
        for (auto& v : b) v = u(rng);
        const auto TA = ta ? CblasTrans : CblasNoTrans, TB = tb ? CblasTrans : CblasNoTrans;
        const int lda = ta ? m : k, ldb = tb ? k : n;
        std::vector<std::vector<float>> c;
        for (const int threads : {1, 2, 3, 5}) {
          openblas_set_num_threads(threads);
          EXPECT_EQ(openblas_get_num_threads(), threads);
          c.emplace_back(static_cast<std::size_t>(m * n));
          cblas_sgemm(CblasRowMajor, TA, TB, m, n, k, 1.0f, a.data(), lda, b.data(), ldb, 0.0f,
                      c.back().data(), n);
        }
        openblas_set_num_threads(1);
        for (std::size_t t = 1; t < c.size(); ++t) {
          EXPECT_EQ(c[t], c[0]) << "threads variant " << t << ", m " << m << " n " << n << " k "
                                << k << " ta " << ta << " tb " << tb;
        }
        check<float>(ta, tb, m, n, k, 1.0f, 0.0f);
      }
    }
  }
}

TEST(GemmPortable, KZeroOnlyScalesC) {
  std::vector<float> c = {1, 2, 3, 4};
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 2, 2, 0, 1.0f, nullptr, 1, nullptr, 2,
              3.0f, c.data(), 2);
  EXPECT_EQ(c, (std::vector<float>{3, 6, 9, 12}));
}

}  // namespace
