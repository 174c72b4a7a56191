// CPU backend: max / avg / adaptive-avg pooling over [N, C, H, W].
// Loops follow PyTorch's CPU kernels (aten/src/ATen/native/cpu/MaxPoolKernel.cpp,
// AvgPoolKernel.cpp, AdaptiveAvgPoolKernel.cpp) so edge cases (ceil_mode, padding,
// NaN) agree exactly.
#include <algorithm>
#include <cmath>
#include <limits>

#include "ember/cpu/ops_pool.hpp"
#include "kernel.hpp"

namespace ember::cpu {

namespace {

std::int64_t plane_grain(std::int64_t work_per_plane) {
  return std::max<std::int64_t>(1, kParallelGrain / std::max<std::int64_t>(1, work_per_plane));
}

template <bool WithIndices>
void max_pool2d_impl(const CpuTensor& x_in, PoolArg2 k, PoolArg2 s, PoolArg2 p, PoolArg2 d,
                     bool ceil_mode, CpuTensor& out, CpuTensor* idx) {
  const CpuTensor x = contiguous(x_in);
  const std::int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3];
  const std::int64_t OH = pool_output_size(H, k[0], s[0], p[0], d[0], ceil_mode);
  const std::int64_t OW = pool_output_size(W, k[1], s[1], p[1], d[1], ceil_mode);
  out = alloc(Shape({N, C, OH, OW}), x.dtype);
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
            for (std::int64_t ow = 0; ow < OW; ++ow) {
              const std::int64_t at[4] = {2 * oh * W + 2 * ow, 2 * oh * W + 2 * ow + 1,
                                          (2 * oh + 1) * W + 2 * ow, (2 * oh + 1) * W + 2 * ow + 1};
              const A v[4] = {static_cast<A>(r0[2 * ow]), static_cast<A>(r0[2 * ow + 1]),
                              static_cast<A>(r1[2 * ow]), static_cast<A>(r1[2 * ow + 1])};
              A mx = -std::numeric_limits<A>::infinity();
              std::int64_t best = at[0];
              for (int j = 0; j < 4; ++j) {
                if (v[j] > mx || std::isnan(v[j])) {
                  mx = v[j];
                  best = at[j];
                }
              }
              o[oh * OW + ow] = static_cast<T>(mx);
              if constexpr (WithIndices) ind[pl * OH * OW + oh * OW + ow] = best;
            }
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

CpuTensor PoolOps::float_avg_pool2d(const P& x_in, PoolArg2 k, PoolArg2 s, PoolArg2 p,
                                    bool count_include_pad, bool ceil_mode) {
  const CpuTensor x = contiguous(x_in);
  const std::int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3];
  const std::int64_t OH = pool_output_size(H, k[0], s[0], p[0], 1, ceil_mode);
  const std::int64_t OW = pool_output_size(W, k[1], s[1], p[1], 1, ceil_mode);
  CpuTensor out = alloc(Shape({N, C, OH, OW}), x.dtype);
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
  CpuTensor out = alloc(Shape({N, C, OH, OW}), x.dtype);
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
