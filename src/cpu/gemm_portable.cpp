// Ember's own GEMM for builds without a BLAS (the WebAssembly build; src/cpu/blas.hpp).
// Row-major C = alpha op(A) op(B) + beta C, blocked over k and n so a strip of op(B) stays in
// cache; 4 x 8 tiles of C are summed in registers from a packed panel of op(A), the edges
// four rows (or one) at a time. Plain loops the compiler vectorises (WASM SIMD128 with
// -msimd128). Threaded WebAssembly builds split the rows of C (the columns for a few rows
// times a transposed B) over openblas_get_num_threads() threads (team.hpp); each element is
// summed in the same order whatever the split, so results do not depend on the thread count.
#ifndef EMBER_HAVE_BLAS

#include <algorithm>
#include <cstdint>
#include <vector>

#include "blas.hpp"
#include "team.hpp"

#if defined(__wasm_simd128__)
#include <wasm_simd128.h>
#endif

namespace ember::cpu {

namespace {

constexpr int kBlockK = 256;  // rows of op(B) per strip
constexpr int kBlockN = 512;  // columns of op(B) per strip
// Multiply-adds below which a GEMM (or a thread's share of one) is not split further. Waking
// a Web Worker for a task costs ~80 us (node, the 2-core VM): with 2^16 or 2^20 the 28x28 CNN
// ran a single image slower on 2 threads than on 1 (2.3 against 2.0 ms); at 2^22 its GEMMs
// (at most 3.6M multiply-adds) stay whole, and batches gain from the other parallel loops.
constexpr double kMinTaskWork = 1 << 22;

/// How many parts `units` independent units of a GEMM of `work` multiply-adds are split into.
int parts(double work, std::int64_t units) {
  const int nt = openblas_get_num_threads();
  const auto by_work = static_cast<std::int64_t>(work / kMinTaskWork);
  return static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>({nt, units, by_work})));
}

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

/// c[r * ldc + j] += sum_p a[p * 4 + r] * b[p * ldb + j] for a 4 x 8 tile of C, summed in
/// registers (the fixed-size loops unroll into 8 SIMD accumulators for f32).
template <class T>
void tile_4x8(const T* __restrict a, const T* __restrict b, std::int64_t ldb, int kc,
              T* __restrict c, std::int64_t ldc) {
  T acc[4][8] = {};
  for (int p = 0; p < kc; ++p) {
    const T* bp = b + p * ldb;
    for (int r = 0; r < 4; ++r) {
      const T ar = a[p * 4 + r];
      for (int j = 0; j < 8; ++j) acc[r][j] += ar * bp[j];
    }
  }
  for (int r = 0; r < 4; ++r) {
    for (int j = 0; j < 8; ++j) c[r * ldc + j] += acc[r][j];
  }
}

#if defined(__wasm_simd128__)
/// The f32 tile with explicit WASM SIMD128: 8 accumulators, two loads of op(B) and four
/// broadcasts of op(A) per step (the same sums in the same order as the plain loops).
template <>
void tile_4x8<float>(const float* __restrict a, const float* __restrict b, std::int64_t ldb, int kc,
                     float* __restrict c, std::int64_t ldc) {
  v128_t c00 = wasm_f32x4_splat(0), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00,
         c30 = c00, c31 = c00;
  for (int p = 0; p < kc; ++p) {
    const float* bp = b + p * ldb;
    const v128_t b0 = wasm_v128_load(bp), b1 = wasm_v128_load(bp + 4);
    const float* ap = a + p * 4;
    v128_t x = wasm_v128_load32_splat(ap);
    c00 = wasm_f32x4_add(c00, wasm_f32x4_mul(x, b0));
    c01 = wasm_f32x4_add(c01, wasm_f32x4_mul(x, b1));
    x = wasm_v128_load32_splat(ap + 1);
    c10 = wasm_f32x4_add(c10, wasm_f32x4_mul(x, b0));
    c11 = wasm_f32x4_add(c11, wasm_f32x4_mul(x, b1));
    x = wasm_v128_load32_splat(ap + 2);
    c20 = wasm_f32x4_add(c20, wasm_f32x4_mul(x, b0));
    c21 = wasm_f32x4_add(c21, wasm_f32x4_mul(x, b1));
    x = wasm_v128_load32_splat(ap + 3);
    c30 = wasm_f32x4_add(c30, wasm_f32x4_mul(x, b0));
    c31 = wasm_f32x4_add(c31, wasm_f32x4_mul(x, b1));
  }
  const auto add = [](float* dst, v128_t v) {
    wasm_v128_store(dst, wasm_f32x4_add(wasm_v128_load(dst), v));
  };
  add(c, c00);
  add(c + 4, c01);
  add(c + ldc, c10);
  add(c + ldc + 4, c11);
  add(c + 2 * ldc, c20);
  add(c + 2 * ldc + 4, c21);
  add(c + 3 * ldc, c30);
  add(c + 3 * ldc + 4, c31);
}
#endif

/// sum_p x[p] * y[p] over 8 interleaved partial sums (vectorisable without reassociation).
template <class T>
T dot(const T* __restrict x, const T* __restrict y, int k) {
  T part[8] = {};
  int p = 0;
  for (; p + 8 <= k; p += 8) {
    for (int l = 0; l < 8; ++l) part[l] += x[p + l] * y[p + l];
  }
  T s = ((part[0] + part[4]) + (part[1] + part[5])) + ((part[2] + part[6]) + (part[3] + part[7]));
  for (; p < k; ++p) s += x[p] * y[p];
  return s;
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
  // A few rows times a transposed B (a Linear layer on a small batch): dot products of
  // contiguous rows, no transposed copy of B.
  const double work = static_cast<double>(m) * n * k;
  if (tb && !ta && m <= 8) {
    const int np = parts(work, n);
    parallel_tasks(np, np, Schedule::Static, [&](std::int64_t t) {
      const auto j0 = static_cast<int>(n * t / np), j1 = static_cast<int>(n * (t + 1) / np);
      for (int i = 0; i < m; ++i) {
        const T* ai = a + static_cast<std::int64_t>(i) * lda;
        T* ci = c + static_cast<std::int64_t>(i) * ldc;
        for (int j = j0; j < j1; ++j)
          ci[j] += alpha * dot(ai, b + static_cast<std::int64_t>(j) * ldb, k);
      }
    });
    return;
  }
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
  // Rows [i0, i1) of C; i0 is a multiple of 4, so rows go through the same 4-row tiles as in
  // one piece.
  const auto rows = [&](int i0, int i1) {
    std::vector<T> apack(static_cast<std::size_t>(kBlockK) * 4);
    for (int p0 = 0; p0 < k; p0 += kBlockK) {
      const int kc = std::min(k, p0 + kBlockK) - p0;
      for (int j0 = 0; j0 < n; j0 += kBlockN) {
        const int w = std::min(n, j0 + kBlockN) - j0, w8 = w / 8 * 8;
        const T* bblock = bm + p0 * ldbm + j0;
        int i = i0;
        for (; i + 4 <= i1; i += 4) {
          // alpha * op(A)[i..i+4, p0..p0+kc) packed as [p][4].
          for (int p = 0; p < kc; ++p) {
            for (int r = 0; r < 4; ++r) apack[p * 4 + r] = A(i + r, p0 + p);
          }
          T* c0 = c + static_cast<std::int64_t>(i) * ldc + j0;
          for (int j = 0; j < w8; j += 8) tile_4x8(apack.data(), bblock + j, ldbm, kc, c0 + j, ldc);
          if (w8 < w) {
            for (int p = 0; p < kc; ++p) {
              const T* ap = apack.data() + p * 4;
              rows_axpy<T, 4>(c0 + w8, c0 + ldc + w8, c0 + 2 * ldc + w8, c0 + 3 * ldc + w8,
                              bblock + p * ldbm + w8, w - w8, ap[0], ap[1], ap[2], ap[3]);
            }
          }
        }
        for (; i < i1; ++i) {
          T* c0 = c + static_cast<std::int64_t>(i) * ldc + j0;
          for (int p = 0; p < kc; ++p) {
            rows_axpy<T, 1>(c0, nullptr, nullptr, nullptr, bblock + p * ldbm, w, A(i, p0 + p), T(0),
                            T(0), T(0));
          }
        }
      }
    }
  };
  const int quads = (m + 3) / 4, np = parts(work, quads);
  parallel_tasks(np, np, Schedule::Static, [&](std::int64_t t) {
    rows(static_cast<int>(quads * t / np) * 4,
         std::min(m, static_cast<int>(quads * (t + 1) / np) * 4));
  });
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
