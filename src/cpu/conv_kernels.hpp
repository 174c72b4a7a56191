// Internal helpers of the CPU conv family: im2col / col2im over up to 3 spatial dims, a
// typed GEMM over OpenBLAS, and dtype preparation (not installed).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <optional>
#include <vector>

#include "blas.hpp"
#include "ember/cpu/ops_core.hpp"
#include "kernel.hpp"

namespace ember::cpu::conv {

using i64 = std::int64_t;

/// Geometry of one im2col: C channels of an `in` volume, kernel `k`, output grid `out`
/// (conv output positions), stride/padding/dilation. 1d/2d use leading dims of size 1.
struct Geo {
  i64 C = 1;
  std::array<i64, 3> in{1, 1, 1}, k{1, 1, 1}, out{1, 1, 1};
  std::array<i64, 3> s{1, 1, 1}, p{0, 0, 0}, d{1, 1, 1};
  i64 in_numel() const { return in[0] * in[1] * in[2]; }
  i64 k_numel() const { return k[0] * k[1] * k[2]; }
  i64 out_numel() const { return out[0] * out[1] * out[2]; }
  /// 1x1x1 kernel, stride 1, no padding: the column matrix is the input itself.
  bool is_pointwise() const {
    for (int i = 0; i < 3; ++i)
      if (k[i] != 1 || s[i] != 1 || p[i] != 0 || in[i] != out[i]) return false;
    return true;
  }
};

/// Range [lo, hi) of output positions o whose input index base + o*s lies in [0, n).
inline void valid_range(i64 base, i64 s, i64 n, i64 count, i64& lo, i64& hi) {
  lo = 0;
  if (base < 0) lo = std::min(count, (-base + s - 1) / s);
  hi = count;
  const i64 last = n - 1 - base;  // o*s <= last
  if (last < 0)
    hi = 0;
  else
    hi = std::min(count, last / s + 1);
  if (hi < lo) hi = lo;
}

/// col[C*K, L] from x[C, in...] (zero outside the input).
template <class T>
void im2col(const T* x, T* col, const Geo& g) {
  const i64 K = g.k_numel(), L = g.out_numel(), rows = g.C * K, inS = g.in_numel();
  const i64 grain = std::max<i64>(1, kParallelGrain / std::max<i64>(L, 1));
  parallel_for(rows, grain, [&](i64 b, i64 e) {
    for (i64 r = b; r < e; ++r) {
      const i64 c = r / K, kk = r % K;
      const i64 kd = kk / (g.k[1] * g.k[2]), kh = (kk / g.k[2]) % g.k[1], kw = kk % g.k[2];
      T* dst = col + r * L;
      const T* src = x + c * inS;
      i64 wlo, whi;
      const i64 wbase = kw * g.d[2] - g.p[2];
      valid_range(wbase, g.s[2], g.in[2], g.out[2], wlo, whi);
      for (i64 od = 0; od < g.out[0]; ++od) {
        const i64 id = od * g.s[0] - g.p[0] + kd * g.d[0];
        for (i64 oh = 0; oh < g.out[1]; ++oh, dst += g.out[2]) {
          const i64 ih = oh * g.s[1] - g.p[1] + kh * g.d[1];
          if (id < 0 || id >= g.in[0] || ih < 0 || ih >= g.in[1]) {
            std::fill(dst, dst + g.out[2], T(0));
            continue;
          }
          const T* srow = src + (id * g.in[1] + ih) * g.in[2] + wbase;
          std::fill(dst, dst + wlo, T(0));
          if (g.s[2] == 1) {
            std::memcpy(dst + wlo, srow + wlo, static_cast<std::size_t>(whi - wlo) * sizeof(T));
          } else {
            for (i64 ow = wlo; ow < whi; ++ow) dst[ow] = srow[ow * g.s[2]];
          }
          std::fill(dst + whi, dst + g.out[2], T(0));
        }
      }
    }
  });
}

/// x[C, in...] += scatter of col[C*K, L] (the adjoint of im2col). Parallel over channels.
template <class T>
void col2im(const T* col, T* x, const Geo& g) {
  const i64 K = g.k_numel(), L = g.out_numel(), inS = g.in_numel();
  const i64 grain = std::max<i64>(1, kParallelGrain / std::max<i64>(L * K, 1));
  parallel_for(g.C, grain, [&](i64 b, i64 e) {
    for (i64 c = b; c < e; ++c) {
      T* dstc = x + c * inS;
      for (i64 kk = 0; kk < K; ++kk) {
        const i64 kd = kk / (g.k[1] * g.k[2]), kh = (kk / g.k[2]) % g.k[1], kw = kk % g.k[2];
        const T* src = col + (c * K + kk) * L;
        i64 wlo, whi;
        const i64 wbase = kw * g.d[2] - g.p[2];
        valid_range(wbase, g.s[2], g.in[2], g.out[2], wlo, whi);
        for (i64 od = 0; od < g.out[0]; ++od) {
          const i64 id = od * g.s[0] - g.p[0] + kd * g.d[0];
          for (i64 oh = 0; oh < g.out[1]; ++oh, src += g.out[2]) {
            const i64 ih = oh * g.s[1] - g.p[1] + kh * g.d[1];
            if (id < 0 || id >= g.in[0] || ih < 0 || ih >= g.in[1]) continue;
            T* drow = dstc + (id * g.in[1] + ih) * g.in[2] + wbase;
            for (i64 ow = wlo; ow < whi; ++ow) drow[ow * g.s[2]] += src[ow];
          }
        }
      }
    }
  });
}

/// Sets OpenBLAS's thread count for a scope and restores it after. Conv kernels use one
/// source of parallelism at a time: either OpenMP over (image, group) jobs with
/// single-threaded GEMMs, or one threaded GEMM at a time.
class BlasThreads {
 public:
  explicit BlasThreads(int n) : prev_(openblas_get_num_threads()) {
    if (n != prev_) openblas_set_num_threads(n);
  }
  ~BlasThreads() {
    if (openblas_get_num_threads() != prev_) openblas_set_num_threads(prev_);
  }
  BlasThreads(const BlasThreads&) = delete;
  BlasThreads& operator=(const BlasThreads&) = delete;

 private:
  int prev_;
};

/// Runs job(j, scratch) for j in [0, jobs): in parallel over jobs (single-threaded BLAS,
/// one scratch buffer of `scratch` elements per thread) when there are at least as many
/// jobs as threads or each job is small, else serially with threaded BLAS.
/// `work` is one job's multiply-adds.
template <class T, class F>
void run_jobs(i64 jobs, i64 work, i64 scratch, F&& job) {
  const int nt = threads();
  constexpr i64 kSmall = i64{1} << 18;
  if (nt > 1 && jobs > 1 && (jobs >= nt || work < kSmall)) {
    BlasThreads guard(1);
    const i64 grain = std::max<i64>(1, (i64{1} << 16) / std::max<i64>(work, 1));
    parallel_for(jobs, grain, [&](i64 b, i64 e) {
      std::vector<T> buf(static_cast<std::size_t>(scratch));
      for (i64 j = b; j < e; ++j) job(j, buf.data());
    });
  } else {
    BlasThreads guard(nt);
    std::vector<T> buf(static_cast<std::size_t>(scratch));
    for (i64 j = 0; j < jobs; ++j) job(j, buf.data());
  }
}

/// Row-major C[M, N] = alpha * op(A) op(B) + beta * C.
template <class T>
void gemm(bool ta, bool tb, i64 M, i64 N, i64 K, T alpha, const T* A, i64 lda, const T* B, i64 ldb,
          T beta, T* C, i64 ldc) {
  if (M == 0 || N == 0) return;
  if (K == 0) {  // BLAS rejects lda = 0; C = beta * C
    for (i64 i = 0; i < M; ++i)
      for (i64 j = 0; j < N; ++j) C[i * ldc + j] = beta == T(0) ? T(0) : beta * C[i * ldc + j];
    return;
  }
  const auto TA = ta ? CblasTrans : CblasNoTrans, TB = tb ? CblasTrans : CblasNoTrans;
  if constexpr (std::is_same_v<T, double>) {
    cblas_dgemm(CblasRowMajor, TA, TB, (int)M, (int)N, (int)K, alpha, A, (int)lda, B, (int)ldb,
                beta, C, (int)ldc);
  } else {
    cblas_sgemm(CblasRowMajor, TA, TB, (int)M, (int)N, (int)K, alpha, A, (int)lda, B, (int)ldb,
                beta, C, (int)ldc);
  }
}

/// f32 convolution through oneDNN (conv_dnnl.cpp): writes `out` and returns true, or returns
/// false when oneDNN is not built in or declines (the caller then runs im2col + GEMM).
/// `s`, `p`, `d`: stride, padding, dilation per spatial dim.
bool dnnl_conv(const CpuTensor& x, const CpuTensor& w, const std::optional<CpuTensor>& b,
               CpuTensor& out, const std::vector<i64>& s, const std::vector<i64>& p,
               const std::vector<i64>& d, i64 groups);
/// The same for transposed convolutions (oneDNN's deconvolution); `out` sized by the caller.
bool dnnl_conv_transpose(const CpuTensor& x, const CpuTensor& w, const std::optional<CpuTensor>& b,
                         CpuTensor& out, const std::vector<i64>& s, const std::vector<i64>& p,
                         const std::vector<i64>& d, i64 groups);

/// Gradients of a convolution through oneDNN: dx from dy and w (backward-data), dw from x
/// and dy (backward-weights); `dx` / `dw` allocated by the caller with the result's shape.
/// Same options and return value as dnnl_conv.
bool dnnl_conv_backward_data(const CpuTensor& dy, const CpuTensor& w, CpuTensor& dx,
                             const std::vector<i64>& s, const std::vector<i64>& p,
                             const std::vector<i64>& d, i64 groups);
bool dnnl_conv_backward_weights(const CpuTensor& x, const CpuTensor& dy, CpuTensor& dw,
                                const std::vector<i64>& s, const std::vector<i64>& p,
                                const std::vector<i64>& d, i64 groups);

/// The dtype kernels compute in: f64 stays f64, everything else goes through f32.
inline DType compute_dtype(DType d) {
  return d == DType::F64 ? DType::F64 : DType::F32;
}

/// `t` as a contiguous tensor of dtype `dt`.
inline CpuTensor prepare(const CpuTensor& t, DType dt) {
  return t.dtype == dt ? contiguous(t) : CoreOps::cast(t, dt);
}
inline std::optional<CpuTensor> prepare(const std::optional<CpuTensor>& t, DType dt) {
  if (!t) return std::nullopt;
  return prepare(*t, dt);
}

/// Calls f.template operator()<T>() with T = float or double for compute dtype `dt`.
template <class F>
decltype(auto) visit_compute(DType dt, F&& f) {
  if (dt == DType::F64) return f.template operator()<double>();
  return f.template operator()<float>();
}

/// Casts a result computed in f32 back to the operands' dtype.
inline CpuTensor finish(CpuTensor out, DType dt) {
  return out.dtype == dt ? out : CoreOps::cast(std::move(out), dt);
}

}  // namespace ember::cpu::conv
