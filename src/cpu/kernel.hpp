// Internal helpers for CPU kernels (not installed).
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "ember/core/dtype.hpp"
#include "ember/cpu/tensor.hpp"
#include "omp.hpp"
#include "team.hpp"

namespace ember::cpu {

/// A new contiguous tensor (values uninitialised).
CpuTensor alloc(const Shape& shape, DType dtype);

/// `t` itself when contiguous, else a contiguous copy.
CpuTensor contiguous(const CpuTensor& t);

/// Copies `src` (any strides) into `dst` (any strides, same shape and dtype).
void strided_copy(const CpuTensor& src, const CpuTensor& dst);

/// Number of threads kernels use.
int threads();

/// 1 when kernels are compiled in AVX2 and AVX-512 variants besides the baseline (x86); 0
/// elsewhere (the WebAssembly build: one variant, SIMD128 from the compiler flags).
#if defined(__x86_64__) || defined(__i386__)
#define EMBER_CPU_X86 1
#else
#define EMBER_CPU_X86 0
#endif

/// SIMD instruction sets kernels are compiled for (run-time dispatch, no -march=native).
enum class Isa { Base = 0, Avx2 = 1, Avx512 = 2 };

/// The best ISA of this CPU, detected once with __builtin_cpu_supports. The environment
/// variable EMBER_CPU_ISA=base|avx2|avx512 caps it (to test every variant on one machine).
Isa cpu_isa();

/// Elements below which a kernel stays single-threaded.
inline constexpr std::int64_t kParallelGrain = 32768;

/// Runs f(begin, end) over [0, n) split into contiguous chunks, one per thread, when
/// n >= grain; otherwise runs f(0, n) on the calling thread.
template <class F>
void parallel_for(std::int64_t n, std::int64_t grain, F&& f) {
  if (n <= 0) return;
#ifdef __EMSCRIPTEN_PTHREADS__
  // Ember's team in the threaded WebAssembly build: waking a Web Worker costs ~80 us (node;
  // more on a browser's main thread), against a few us for an OpenMP fork, so only loops 16
  // times longer are split (a single 28x28 image then runs on one thread; batches split).
  grain *= 16;
#endif
  const int nt = threads();
  if (n < grain || nt <= 1 || omp_in_parallel()) {
    f(std::int64_t{0}, n);
    return;
  }
  const std::int64_t chunks = std::min<std::int64_t>(nt, (n + grain - 1) / grain);
  parallel_tasks(chunks, static_cast<int>(chunks), Schedule::Static, [&](std::int64_t c) {
    const std::int64_t b = n * c / chunks, e = n * (c + 1) / chunks;
    f(b, e);
  });
}

/// The C++ type kernels compute in for a stored type: float for f16/bf16, else itself.
template <class T>
using compute_t = std::conditional_t<std::is_same_v<T, f16> || std::is_same_v<T, bf16>, float, T>;

inline bool is_half(DType d) {
  return d == DType::F16 || d == DType::BF16;
}

/// Visits the offsets (in elements) of every element of `shape` under `strides`, in
/// row-major order, calling f(offset) - a slow generic path for odd layouts.
template <class F>
void for_each_offset(const Shape& shape, const std::vector<std::int64_t>& strides,
                     std::int64_t offset, F&& f) {
  const std::size_t r = shape.rank();
  if (shape.numel() == 0) return;
  if (r == 0) {
    f(offset);
    return;
  }
  std::vector<std::int64_t> idx(r, 0);
  const std::int64_t inner = shape[r - 1], inner_stride = strides[r - 1];
  std::int64_t off = offset;
  while (true) {
    for (std::int64_t i = 0; i < inner; ++i) f(off + i * inner_stride);
    std::size_t d = r - 1;
    while (true) {
      if (d == 0) return;
      --d;
      ++idx[d];
      off += strides[d];
      if (idx[d] < shape[d]) break;
      off -= idx[d] * strides[d];
      idx[d] = 0;
    }
  }
}

}  // namespace ember::cpu
