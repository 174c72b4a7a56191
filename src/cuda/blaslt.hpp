// cuBLASLt, NVIDIA's GEMM library, as a matrix-product candidate of the CUDA backend
// (src/gpu/matmul.cpp lets autotune choose between it and Ember's tiled kernel).
//
// cuBLASLt is opened at run time with dlopen, never linked (it is 0.5 GB; programs start and
// GPU bundles stay small without it). The first of these that loads is used:
// $EMBER_CUBLASLT_LIB (a file, or a folder holding libcublasLt.so.*), libcublasLt.so.13 and
// .12 from the loader's path (LD_LIBRARY_PATH, ldconfig), the toolkit Ember was built with,
// $CUDA_HOME/lib64 and $CUDA_PATH/lib64, /usr/local/cuda/lib64, and NVRTC's folder (pip's
// nvidia packages keep both in one folder). Without it the candidate is simply absent.
//
// Internal to Ember (ember::cuda's sources and src/gpu/): no CUDA types in this header.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "ember/kernel/device.hpp"

namespace ember::cuda::blaslt {

/// True when cuBLASLt is loaded (tried once, on the first call); otherwise `why` lists the
/// places tried.
bool available(std::string* why = nullptr);
/// The file cuBLASLt was loaded from ("" when missing).
std::string library_path();
/// cublasLtGetVersion(): 130100 for 13.1.0 (0 when missing).
std::size_t version();

/// One operand of a batched product: row-major matrices with packed rows in `buffer`, the
/// first at element `offset`, each next one `batch_stride` elements further (0: the same
/// matrix for every batch, a broadcast batch dim).
struct Operand {
  const kernel::BufferStorage* buffer = nullptr;
  std::uint64_t offset = 0;
  std::int64_t batch_stride = 0;
};

/// Enqueues C_i = A_i B_i for i < batches on `device`'s stream: A_i [m, k], B_i [k, n],
/// C_i [m, n] (m, n, k > 0), elements of type `elem`: F32 (fp32 products and sums,
/// CUBLAS_COMPUTE_32F: no TF32), F16 and BF16 (f32 accumulation, rounded once on store), F64
/// (CUBLAS_COMPUTE_64F). Computed as the column-major product B^T A^T, no copies; the
/// algorithm comes from cublasLtMatmulAlgoGetHeuristic, cached per shape, alignment and
/// device, with a workspace of at most 32 MiB from the device's pool. UnsupportedError when
/// cuBLASLt is missing, `device` is not a CUDA device, the type is another or cuBLASLt has no
/// algorithm for the case; DeviceError naming the cuBLASLt status when a call fails.
void matmul(kernel::ComputeDevice& device, kernel::Elem elem, std::int64_t batches, std::int64_t m,
            std::int64_t n, std::int64_t k, const Operand& a, const Operand& b, const Operand& c);

}  // namespace ember::cuda::blaslt
