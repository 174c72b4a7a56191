// CPU backend: max / avg / adaptive-avg pooling over [N, C, H, W].
// Loops follow PyTorch's CPU kernels (aten/src/ATen/native/cpu/MaxPoolKernel.cpp,
// AvgPoolKernel.cpp, AdaptiveAvgPoolKernel.cpp) so edge cases (ceil_mode, padding,
// NaN) agree exactly.
#include "ember/ir/pool.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "ember/cpu/ops_pool.hpp"
#include "kernel.hpp"
#include "reduce_simd.hpp"

namespace ember::cpu {

namespace {

std::int64_t plane_grain(std::int64_t work_per_plane) {
  return std::max<std::int64_t>(1, kParallelGrain / std::max<std::int64_t>(1, work_per_plane));
}

/// One output row of a 2x2, stride-2 max pooling: out[ow] = max of r0[2ow], r0[2ow + 1],
/// r1[2ow], r1[2ow + 1] in that order (ties keep the first; a NaN wins over what precedes
/// it, as PyTorch's loop), idx[ow] its flat index i0 + 2ow + {0, 1, W, W + 1} (idx may be
/// null). Runs in blocks of 16 outputs whose inputs are copied to zero-padded buffers, so the
/// selects compile to full-width vector code whatever the row length (rows of the CNN have
/// 7-14 outputs); random data would mispredict branches on every comparison.
template <class A, class T>
EMBER_RD_INLINE void max2x2_row_impl(const T* r0, const T* r1, T* out, std::int64_t* idx,
                                     std::int64_t ow_count, std::int64_t i0, std::int64_t W) {
  constexpr int kB = 16;
  for (std::int64_t o0 = 0; o0 < ow_count; o0 += kB) {
    const int n = static_cast<int>(std::min<std::int64_t>(kB, ow_count - o0));
    A top[2 * kB], bot[2 * kB], mx[kB];
    std::int32_t at[kB];
    for (int j = 0; j < 2 * kB; ++j) {
      top[j] = j < 2 * n ? static_cast<A>(r0[2 * o0 + j]) : A(0);
      bot[j] = j < 2 * n ? static_cast<A>(r1[2 * o0 + j]) : A(0);
    }
    const std::int32_t w = static_cast<std::int32_t>(W);
    for (int j = 0; j < kB; ++j) {
      const A a = top[2 * j], b = top[2 * j + 1], c = bot[2 * j], d = bot[2 * j + 1];
      const bool t1 = (b > a) | (b != b);
      A m = t1 ? b : a;
      std::int32_t k = t1 ? 1 : 0;
      const bool t2 = (c > m) | (c != c);
      m = t2 ? c : m;
      k = t2 ? w : k;
      const bool t3 = (d > m) | (d != d);
      m = t3 ? d : m;
      k = t3 ? w + 1 : k;
      mx[j] = m;
      at[j] = k;
    }
    for (int j = 0; j < n; ++j) out[o0 + j] = static_cast<T>(mx[j]);
    if (idx) {
      for (int j = 0; j < n; ++j) idx[o0 + j] = i0 + 2 * (o0 + j) + at[j];
    }
  }
}
EMBER_RD_MULTIVERSION(max2x2_row, max2x2_row_impl)

template <bool WithIndices>
void max_pool2d_impl(const CpuTensor& x_in, PoolArg2 k, PoolArg2 s, PoolArg2 p, PoolArg2 d,
                     bool ceil_mode, CpuTensor& out, CpuTensor* idx) {
  const CpuTensor x = contiguous(x_in);
  const std::int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3];
  // The output shape (and every check) is the description's (ember/ir/pool.hpp).
  const Shape os = ir::MaxPool<2>{{k, s, p, d, ceil_mode}}.infer({x.shape, x.dtype}).shape;
  const std::int64_t OH = os[2], OW = os[3];
  out = alloc(os, x.dtype);
  if constexpr (WithIndices) *idx = alloc(Shape({N, C, OH, OW}), DType::I64);
  const std::int64_t planes = N * C;
  visit_dtype(x.dtype, [&]<class T>() {
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, f16> ||
                  std::is_same_v<T, bf16>) {
      using A = compute_t<T>;
      const T* src = x.data<T>();
      T* dst = out.data<T>();
      std::int64_t* ind = nullptr;
      if constexpr (WithIndices) ind = idx->data<std::int64_t>();
      // 2x2 windows, stride 2, no padding or dilation, every window inside x (the common
      // CNN pooling): the same comparisons in the same order, unrolled.
      const bool k2 = k[0] == 2 && k[1] == 2 && s[0] == 2 && s[1] == 2 && p[0] == 0 && p[1] == 0 &&
                      d[0] == 1 && d[1] == 1 && 2 * OH <= H && 2 * OW <= W;
      parallel_for(planes, plane_grain(OH * OW * k[0] * k[1]), [&](std::int64_t b, std::int64_t e) {
        for (std::int64_t pl = b; pl < e && k2; ++pl) {
          const T* in = src + pl * H * W;
          T* o = dst + pl * OH * OW;
          for (std::int64_t oh = 0; oh < OH; ++oh) {
            const T* r0 = in + 2 * oh * W;
            const T* r1 = r0 + W;
            std::int64_t* irow = nullptr;
            if constexpr (WithIndices) irow = ind + pl * OH * OW + oh * OW;
            max2x2_row<A, T>(r0, r1, o + oh * OW, irow, OW, 2 * oh * W, W);
          }
        }
        for (std::int64_t pl = b; pl < e && !k2; ++pl) {
          const T* in = src + pl * H * W;
          T* o = dst + pl * OH * OW;
          for (std::int64_t oh = 0; oh < OH; ++oh) {
            std::int64_t ih0 = oh * s[0] - p[0];
            const std::int64_t ih1 = std::min(ih0 + (k[0] - 1) * d[0] + 1, H);
            while (ih0 < 0) ih0 += d[0];
            for (std::int64_t ow = 0; ow < OW; ++ow) {
              std::int64_t iw0 = ow * s[1] - p[1];
              const std::int64_t iw1 = std::min(iw0 + (k[1] - 1) * d[1] + 1, W);
              while (iw0 < 0) iw0 += d[1];
              std::int64_t best = ih0 * W + iw0;
              A mx = -std::numeric_limits<A>::infinity();
              for (std::int64_t ih = ih0; ih < ih1; ih += d[0]) {
                for (std::int64_t iw = iw0; iw < iw1; iw += d[1]) {
                  const A v = static_cast<A>(in[ih * W + iw]);
                  if (v > mx || std::isnan(v)) {
                    mx = v;
                    best = ih * W + iw;
                  }
                }
              }
              o[oh * OW + ow] = static_cast<T>(mx);
              if constexpr (WithIndices) ind[pl * OH * OW + oh * OW + ow] = best;
            }
          }
        }
      });
    }
  });
}

}  // namespace

CpuTensor PoolOps::float_max_pool2d(const P& x, PoolArg2 kernel, PoolArg2 stride, PoolArg2 padding,
                                    PoolArg2 dilation, bool ceil_mode) {
  CpuTensor out;
  max_pool2d_impl<false>(x, kernel, stride, padding, dilation, ceil_mode, out, nullptr);
  return out;
}

std::pair<CpuTensor, CpuTensor> PoolOps::float_max_pool2d_with_indices(const P& x, PoolArg2 kernel,
                                                                       PoolArg2 stride,
                                                                       PoolArg2 padding,
                                                                       PoolArg2 dilation,
                                                                       bool ceil_mode) {
  CpuTensor out, idx;
  max_pool2d_impl<true>(x, kernel, stride, padding, dilation, ceil_mode, out, &idx);
  return {std::move(out), std::move(idx)};
}

CpuTensor PoolOps::float_max_pool2d_backward(const P& grad_in, const P& indices_in,
                                             const Shape& x_shape) {
  const CpuTensor g = contiguous(grad_in), idx = contiguous(indices_in);
  const std::int64_t planes = x_shape[0] * x_shape[1], HW = x_shape[2] * x_shape[3];
  const std::int64_t OHW = planes == 0 ? 0 : g.numel() / planes;
  CpuTensor out = alloc(x_shape, g.dtype);
  visit_dtype(g.dtype, [&]<class T>() {
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, f16> ||
                  std::is_same_v<T, bf16>) {
      using A = compute_t<T>;
      const T* gs = g.data<T>();
      const std::int64_t* is = idx.data<std::int64_t>();
      T* dst = out.data<T>();
      parallel_for(planes, plane_grain(HW + OHW), [&](std::int64_t b, std::int64_t e) {
        std::vector<A> acc(static_cast<std::size_t>(HW));
        for (std::int64_t pl = b; pl < e; ++pl) {
          std::fill(acc.begin(), acc.end(), A(0));
          const T* gp = gs + pl * OHW;
          const std::int64_t* ip = is + pl * OHW;
          for (std::int64_t o = 0; o < OHW; ++o) acc[ip[o]] += static_cast<A>(gp[o]);
          T* op = dst + pl * HW;
          for (std::int64_t i = 0; i < HW; ++i) op[i] = static_cast<T>(acc[i]);
        }
      });
    }
  });
  return out;
}

CpuTensor PoolOps::float_avg_pool2d(const P& x_in, PoolArg2 k, PoolArg2 s, PoolArg2 p,
                                    bool count_include_pad, bool ceil_mode) {
  const CpuTensor x = contiguous(x_in);
  const std::int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3];
  const Shape os =
      ir::AvgPool<2>{{k, s, p, count_include_pad, ceil_mode}}.infer({x.shape, x.dtype}).shape;
  const std::int64_t OH = os[2], OW = os[3];
  CpuTensor out = alloc(os, x.dtype);
  visit_dtype(x.dtype, [&]<class T>() {
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, f16> ||
                  std::is_same_v<T, bf16>) {
      using A = compute_t<T>;
      const T* src = x.data<T>();
      T* dst = out.data<T>();
      parallel_for(N * C, plane_grain(OH * OW * k[0] * k[1]), [&](std::int64_t b, std::int64_t e) {
        for (std::int64_t pl = b; pl < e; ++pl) {
          const T* in = src + pl * H * W;
          T* o = dst + pl * OH * OW;
          for (std::int64_t oh = 0; oh < OH; ++oh) {
            for (std::int64_t ow = 0; ow < OW; ++ow) {
              std::int64_t ih0 = oh * s[0] - p[0], iw0 = ow * s[1] - p[1];
              std::int64_t ih1 = std::min(ih0 + k[0], H + p[0]);
              std::int64_t iw1 = std::min(iw0 + k[1], W + p[1]);
              const std::int64_t pool_size = (ih1 - ih0) * (iw1 - iw0);
              ih0 = std::max<std::int64_t>(ih0, 0);
              iw0 = std::max<std::int64_t>(iw0, 0);
              ih1 = std::min(ih1, H);
              iw1 = std::min(iw1, W);
              if (ih0 >= ih1 || iw0 >= iw1) {
                o[oh * OW + ow] = static_cast<T>(A(0));
                continue;
              }
              A sum = 0;
              for (std::int64_t ih = ih0; ih < ih1; ++ih)
                for (std::int64_t iw = iw0; iw < iw1; ++iw) sum += static_cast<A>(in[ih * W + iw]);
              const std::int64_t div = count_include_pad ? pool_size : (ih1 - ih0) * (iw1 - iw0);
              o[oh * OW + ow] = static_cast<T>(sum / static_cast<A>(div));
            }
          }
        }
      });
    }
  });
  return out;
}

CpuTensor PoolOps::float_adaptive_avg_pool2d(const P& x_in, PoolArg2 os) {
  const CpuTensor x = contiguous(x_in);
  const std::int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3];
  const std::int64_t OH = os[0], OW = os[1];
  CpuTensor out = alloc(ir::AdaptiveAvgPool<2>{os}.infer({x.shape, x.dtype}).shape, x.dtype);
  visit_dtype(x.dtype, [&]<class T>() {
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, f16> ||
                  std::is_same_v<T, bf16>) {
      using A = compute_t<T>;
      const T* src = x.data<T>();
      T* dst = out.data<T>();
      parallel_for(N * C, plane_grain(H * W + OH * OW), [&](std::int64_t b, std::int64_t e) {
        for (std::int64_t pl = b; pl < e; ++pl) {
          const T* in = src + pl * H * W;
          T* o = dst + pl * OH * OW;
          for (std::int64_t oh = 0; oh < OH; ++oh) {
            const std::int64_t ih0 = oh * H / OH, ih1 = ((oh + 1) * H + OH - 1) / OH;
            for (std::int64_t ow = 0; ow < OW; ++ow) {
              const std::int64_t iw0 = ow * W / OW, iw1 = ((ow + 1) * W + OW - 1) / OW;
              A sum = 0;
              for (std::int64_t ih = ih0; ih < ih1; ++ih)
                for (std::int64_t iw = iw0; iw < iw1; ++iw) sum += static_cast<A>(in[ih * W + iw]);
              o[oh * OW + ow] = static_cast<T>(sum / static_cast<A>((ih1 - ih0) * (iw1 - iw0)));
            }
          }
        }
      });
    }
  });
  return out;
}

}  // namespace ember::cpu
