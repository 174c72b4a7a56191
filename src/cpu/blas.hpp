// The BLAS the CPU kernels call (not installed): OpenBLAS's CBLAS when the build has it
// (EMBER_HAVE_BLAS, every native build), else Ember's own GEMM under the same names
// (src/cpu/gemm_portable.cpp; the WebAssembly build). Only what the kernels use is declared.
#pragma once

#ifdef EMBER_HAVE_BLAS
#include <cblas.h>
#else

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

/// One thread: Ember's GEMM runs on the calling thread.
inline int openblas_get_num_threads() {
  return 1;
}
inline void openblas_set_num_threads(int) {}

}  // namespace ember::cpu

#endif
