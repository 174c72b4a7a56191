// The BLAS the CPU kernels call (not installed): OpenBLAS's CBLAS when the build has it
// (EMBER_HAVE_BLAS, every native build), else Ember's own GEMM under the same names
// (src/cpu/gemm_portable.cpp; the WebAssembly build). Only what the kernels use is declared.
#pragma once

#ifdef EMBER_HAVE_BLAS
#include <cblas.h>
#else

#include <atomic>

namespace ember::cpu {

enum CBLAS_ORDER { CblasRowMajor = 101 };
enum CBLAS_TRANSPOSE { CblasNoTrans = 111, CblasTrans = 112 };

/// C = alpha * op(A) op(B) + beta * C, row major: op(A) [m, k], op(B) [k, n], C [m, n] with
/// leading dimensions lda, ldb, ldc (CBLAS's sgemm/dgemm). beta == 0 ignores C's old values.
void cblas_sgemm(CBLAS_ORDER order, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k,
                 float alpha, const float* a, int lda, const float* b, int ldb, float beta,
                 float* c, int ldc);
void cblas_dgemm(CBLAS_ORDER order, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k,
                 double alpha, const double* a, int lda, const double* b, int ldb, double beta,
                 double* c, int ldc);

/// Threads Ember's GEMM may use (OpenBLAS's names): 1 in the single-threaded WebAssembly
/// build; in the threaded one the kernels set it as they would OpenBLAS's pool size.
inline std::atomic<int> g_portable_gemm_threads{1};
inline int openblas_get_num_threads() {
  return g_portable_gemm_threads.load(std::memory_order_relaxed);
}
inline void openblas_set_num_threads(int n) {
  g_portable_gemm_threads.store(n < 1 ? 1 : n, std::memory_order_relaxed);
}

}  // namespace ember::cpu

#endif
