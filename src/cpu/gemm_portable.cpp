// Ember's own GEMM for builds without a BLAS (the WebAssembly build; src/cpu/blas.hpp).
// Row-major C = alpha op(A) op(B) + beta C, blocked over k and n so a strip of op(B) stays in
// cache, four rows of C at a time sharing each load of op(B); the inner loop over columns is
// plain code the compiler vectorises (WASM SIMD128 with -msimd128). Single threaded.
#ifndef EMBER_HAVE_BLAS

#include <algorithm>
#include <cstdint>
#include <vector>

#include "blas.hpp"

namespace ember::cpu {

namespace {

constexpr int kBlockK = 128;  // rows of op(B) per strip
constexpr int kBlockN = 512;  // columns of op(B) per strip

/// c_r[j] += a_r * b[j] for j < w, for up to four rows r sharing the loads of b.
template <class T, int R>
void rows_axpy(T* __restrict c0, T* __restrict c1, T* __restrict c2, T* __restrict c3,
               const T* __restrict b, int w, T a0, T a1, T a2, T a3) {
  for (int j = 0; j < w; ++j) {
    const T bj = b[j];
    c0[j] += a0 * bj;
    if constexpr (R > 1) c1[j] += a1 * bj;
    if constexpr (R > 2) c2[j] += a2 * bj;
    if constexpr (R > 3) c3[j] += a3 * bj;
  }
}

template <class T>
void gemm(bool ta, bool tb, int m, int n, int k, T alpha, const T* a, int lda, const T* b, int ldb,
          T beta, T* c, int ldc) {
  if (m <= 0 || n <= 0) return;
  for (int i = 0; i < m; ++i) {
    T* row = c + static_cast<std::int64_t>(i) * ldc;
    if (beta == T(0)) {
      std::fill(row, row + n, T(0));
    } else if (beta != T(1)) {
      for (int j = 0; j < n; ++j) row[j] *= beta;
    }
  }
  if (k <= 0 || alpha == T(0)) return;
  // op(B) as a contiguous row-major [k, n] matrix.
  std::vector<T> bt;
  const T* bm = b;
  std::int64_t ldbm = ldb;
  if (tb) {
    bt.resize(static_cast<std::size_t>(k) * static_cast<std::size_t>(n));
    for (int j = 0; j < n; ++j) {
      const T* src = b + static_cast<std::int64_t>(j) * ldb;
      for (int p = 0; p < k; ++p) bt[static_cast<std::size_t>(p) * n + j] = src[p];
    }
    bm = bt.data();
    ldbm = n;
  }
  const auto A = [&](int i, int p) {
    return alpha * (ta ? a[static_cast<std::int64_t>(p) * lda + i]
                       : a[static_cast<std::int64_t>(i) * lda + p]);
  };
  for (int p0 = 0; p0 < k; p0 += kBlockK) {
    const int p1 = std::min(k, p0 + kBlockK);
    for (int j0 = 0; j0 < n; j0 += kBlockN) {
      const int w = std::min(n, j0 + kBlockN) - j0;
      int i = 0;
      for (; i + 4 <= m; i += 4) {
        T* c0 = c + static_cast<std::int64_t>(i) * ldc + j0;
        for (int p = p0; p < p1; ++p) {
          rows_axpy<T, 4>(c0, c0 + ldc, c0 + 2 * ldc, c0 + 3 * ldc, bm + p * ldbm + j0, w, A(i, p),
                          A(i + 1, p), A(i + 2, p), A(i + 3, p));
        }
      }
      for (; i < m; ++i) {
        T* c0 = c + static_cast<std::int64_t>(i) * ldc + j0;
        for (int p = p0; p < p1; ++p) {
          rows_axpy<T, 1>(c0, c0, c0, c0, bm + p * ldbm + j0, w, A(i, p), T(0), T(0), T(0));
        }
      }
    }
  }
}

}  // namespace

void cblas_sgemm(CBLAS_ORDER, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k,
                 float alpha, const float* a, int lda, const float* b, int ldb, float beta,
                 float* c, int ldc) {
  gemm<float>(ta == CblasTrans, tb == CblasTrans, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void cblas_dgemm(CBLAS_ORDER, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k,
                 double alpha, const double* a, int lda, const double* b, int ldb, double beta,
                 double* c, int ldc) {
  gemm<double>(ta == CblasTrans, tb == CblasTrans, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

}  // namespace ember::cpu

#endif  // EMBER_HAVE_BLAS
