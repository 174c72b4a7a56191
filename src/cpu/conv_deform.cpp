// CPU deform_conv2d (torchvision.ops.deform_conv2d semantics, Dai et al. 2017 / Zhu et al.
// 2019): a bilinear-sampling im2col followed by one GEMM per weight group.
#include <cmath>
#include <vector>

#include "conv_kernels.hpp"
#include "ember/cpu/ops_conv.hpp"

namespace ember::cpu {

namespace {

using conv::i64;

/// torchvision's bilinear_interpolate: zero outside (-1, H) x (-1, W), corners outside the
/// image count as zero.
template <class T>
T bilinear(const T* img, i64 H, i64 W, T h, T w) {
  if (h <= T(-1) || T(H) <= h || w <= T(-1) || T(W) <= w) return T(0);
  const i64 hl = static_cast<i64>(std::floor(h)), wl = static_cast<i64>(std::floor(w));
  const i64 hh = hl + 1, wh = wl + 1;
  const T lh = h - T(hl), lw = w - T(wl), uh = T(1) - lh, uw = T(1) - lw;
  const T v1 = (hl >= 0 && wl >= 0) ? img[hl * W + wl] : T(0);
  const T v2 = (hl >= 0 && wh <= W - 1) ? img[hl * W + wh] : T(0);
  const T v3 = (hh <= H - 1 && wl >= 0) ? img[hh * W + wl] : T(0);
  const T v4 = (hh <= H - 1 && wh <= W - 1) ? img[hh * W + wh] : T(0);
  return uh * uw * v1 + uh * lw * v2 + lh * uw * v3 + lh * lw * v4;
}

template <class T>
void deform_forward(const CpuTensor& x, const CpuTensor& offset, const CpuTensor& weight,
                    const std::optional<CpuTensor>& mask, const std::optional<CpuTensor>& bias,
                    const DeformConvOptions& o, CpuTensor& out) {
  const i64 N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3];
  const i64 Cout = weight.shape[0], kh = weight.shape[2], kw = weight.shape[3];
  const i64 Ho = out.shape[2], Wo = out.shape[3], L = Ho * Wo, K = kh * kw;
  const i64 WG = o.weight_groups, OG = o.offset_groups;
  const i64 Cg = C / WG, Cout_g = Cout / WG, C_per_og = C / OG, rowsK = Cg * K;
  const T* xp = x.data<T>();
  const T* op = offset.data<T>();
  const T* mp = mask ? mask->data<T>() : nullptr;
  const T* wp = weight.data<T>();
  const T* bp = bias ? bias->data<T>() : nullptr;
  T* yp = out.data<T>();
  const i64 work = Cout * L * rowsK + C * K * L * 8;  // GEMM + sampling
  conv::run_jobs<T>(N, work, C * K * L, [&](i64 n, T* colp) {
    const i64 grain = std::max<i64>(1, kParallelGrain / std::max<i64>(L, 1));
    parallel_for(C * K, grain, [&](i64 b, i64 e) {
      for (i64 r = b; r < e; ++r) {
        const i64 c = r / K, k = r % K, i = k / kw, j = k % kw, og = c / C_per_og;
        const T* img = xp + (n * C + c) * H * W;
        const T* dy = op + ((n * 2 * OG * K + og * 2 * K + 2 * k) * L);
        const T* dx = dy + L;
        const T* m = mp ? mp + (n * OG + og) * K * L + k * L : nullptr;
        T* dst = colp + r * L;
        for (i64 oh = 0; oh < Ho; ++oh) {
          for (i64 ow = 0; ow < Wo; ++ow) {
            const i64 l = oh * Wo + ow;
            const T h = T(oh * o.stride[0] - o.padding[0] + i * o.dilation[0]) + dy[l];
            const T w = T(ow * o.stride[1] - o.padding[1] + j * o.dilation[1]) + dx[l];
            T v = bilinear(img, H, W, h, w);
            if (m) v *= m[l];
            dst[l] = v;
          }
        }
      }
    });
    for (i64 g = 0; g < WG; ++g) {
      T* yg = yp + (n * Cout + g * Cout_g) * L;
      T beta = T(0);
      if (bp) {
        for (i64 c = 0; c < Cout_g; ++c)
          std::fill(yg + c * L, yg + (c + 1) * L, bp[g * Cout_g + c]);
        beta = T(1);
      }
      conv::gemm<T>(false, false, Cout_g, L, rowsK, T(1), wp + g * Cout_g * rowsK, rowsK,
                    colp + g * rowsK * L, L, beta, yg, L);
    }
  });
}

}  // namespace

CpuTensor ConvOps::deform_conv2d(const P& x0, const P& offset0, const P& w0, const OptP& mask0,
                                 const OptP& b0, const DeformConvOptions& o) {
  const DType dt = x0.dtype, ct = conv::compute_dtype(dt);
  const CpuTensor x = conv::prepare(x0, ct), offset = conv::prepare(offset0, ct),
                  w = conv::prepare(w0, ct);
  const auto mask = conv::prepare(mask0, ct);
  const auto b = conv::prepare(b0, ct);
  CpuTensor out = alloc(Shape{x.shape[0], w.shape[0], offset.shape[2], offset.shape[3]}, ct);
  conv::visit_compute(ct, [&]<class T>() { deform_forward<T>(x, offset, w, mask, b, o, out); });
  return conv::finish(std::move(out), dt);
}

}  // namespace ember::cpu
