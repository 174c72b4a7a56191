// Autodiff<B>: backward rule of deform_conv2d (torchvision.ops.deform_conv2d semantics).
//
// The forward runs B::deform_conv2d. The rule re-expresses the op as a composite of this
// backend's ops and writes out that composite's vector-Jacobian product, so that it runs on
// any B and is itself differentiable (create_graph):
//   for each image n, input channel c (offset group g), kernel tap k = (i, j), output
//   position l = (oh, ow):
//     py = oh*sh - ph + i*dh + dy[n, g, k, l],  px = ow*sw - pw + j*dw + dx[n, g, k, l]
//     y0 = floor(py), x0 = floor(px), ly = py - y0, lx = px - x0, hy = 1 - ly, hx = 1 - lx
//     val = hy hx V00 x[y0, x0] + hy lx V01 x[y0, x0+1] + ly hx V10 x[y0+1, x0]
//           + ly lx V11 x[y0+1, x0+1]
//     (Vab: 1 when the corner is inside the image and (py, px) inside (-1, H) x (-1, W),
//      torchvision's bilinear_interpolate; else 0)
//     col[n, c, k, l] = val * mask[n, g, k, l]
//   out[n, group of co] = W[co] @ col[n, group] + b[co]
// The integer parts (y0, x0, corner indices, V) are constants of the rule (computed from
// the offset values on the host); the fractional parts ly, lx stay functions of the offset,
// so d/d offset is the derivative of the bilinear weights (zero at exact integer positions
// from one side: not differentiable there, as in torchvision).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include "ember/autodiff/impl/common.hpp"
#include "ember/autodiff/impl/linalg.hpp"

namespace ember::autodiff {

namespace rules {

/// Host-side constants of one deform_conv2d backward: per corner q (00, 01, 10, 11) the
/// index of the sampled pixel in the planes of x laid out as [N, OG, H*W] (one entry per
/// (n, g, k, l); a valid in-plane index where the corner is invalid) and the validity V
/// ([N, OG, 1, K, L] as 0/1); cy = base_y - y0 and cx = base_x - x0 ([N, OG, 1, K, L]) so
/// that ly = dy + cy, lx = dx + cx.
struct DeformConsts {
  std::vector<std::int64_t> index[4];
  std::vector<double> valid[4];
  std::vector<double> cy, cx;
};

template <class T>
DeformConsts deform_consts(const std::vector<T>& off, std::int64_t N, std::int64_t H,
                           std::int64_t W, std::int64_t kh, std::int64_t kw, std::int64_t Ho,
                           std::int64_t Wo, std::int64_t OG, const DeformConvOptions& o) {
  const std::int64_t K = kh * kw, L = Ho * Wo;
  const std::size_t small = static_cast<std::size_t>(N * OG * K * L);
  DeformConsts r;
  r.cy.resize(small);
  r.cx.resize(small);
  for (auto& v : r.valid) v.assign(small, 0.0);
  for (auto& v : r.index) v.assign(small, 0);
  for (std::int64_t n = 0; n < N; ++n) {
    for (std::int64_t g = 0; g < OG; ++g) {
      for (std::int64_t k = 0; k < K; ++k) {
        const std::int64_t i = k / kw, j = k % kw;
        const T* dy = off.data() + ((n * OG + g) * 2 * K + 2 * k) * L;
        const T* dx = dy + L;
        for (std::int64_t oh = 0; oh < Ho; ++oh) {
          for (std::int64_t ow = 0; ow < Wo; ++ow) {
            const std::int64_t l = oh * Wo + ow;
            const std::size_t s = static_cast<std::size_t>(((n * OG + g) * K + k) * L + l);
            // Same arithmetic (in T) as the CPU forward, so floor() agrees with it.
            const T by = T(oh * o.stride[0] - o.padding[0] + i * o.dilation[0]);
            const T bx = T(ow * o.stride[1] - o.padding[1] + j * o.dilation[1]);
            const T h = by + dy[l], w = bx + dx[l];
            const T fy = std::floor(h), fx = std::floor(w);
            const std::int64_t plane = (n * OG + g) * H * W;
            for (auto& v : r.index) v[s] = plane;
            r.cy[s] = static_cast<double>(by - fy);
            r.cx[s] = static_cast<double>(bx - fx);
            if (h <= T(-1) || T(H) <= h || w <= T(-1) || T(W) <= w) continue;
            const std::int64_t y0 = static_cast<std::int64_t>(fy),
                               x0 = static_cast<std::int64_t>(fx);
            for (int q = 0; q < 4; ++q) {
              const std::int64_t y = y0 + q / 2, x = x0 + q % 2;
              if (y < 0 || y >= H || x < 0 || x >= W) continue;
              r.valid[q][s] = 1.0;
              r.index[q][s] = plane + y * W + x;
            }
          }
        }
      }
    }
  }
  return r;
}

}  // namespace rules

template <class B>
AdTensor<B> AdOps<B>::deform_conv2d(const F& x, const F& offset, const F& weight, const OptF& mask,
                                    const OptF& bias, const DeformConvOptions& opt) {
  const bool has_mask = mask.has_value(), has_bias = bias.has_value();
  auto ins = rules::with_opt<B>(rules::with_opt<B>({x, offset, weight}, mask), bias);
  return Recorder<B>::record(
      "deform_conv2d", Bound::Compute, save_inputs(has_mask ? 15u : 7u), std::move(ins),
      [opt, has_mask, has_bias](std::vector<typename B::FloatTensor>& v) {
        std::optional<typename B::FloatTensor> m, b;
        if (has_mask) m = v[3];
        if (has_bias) b = v[has_mask ? 4 : 3];
        return B::deform_conv2d(v[0], v[1], v[2], m, b, opt);
      },
      [opt, has_mask, has_bias](BackwardContext<B>& c) {
        using O = AdOps<B>;
        using A = AdTensor<B>;
        const std::size_t mask_i = 3, bias_i = has_mask ? 4 : 3;
        const bool need_x = c.needs(0), need_off = c.needs(1), need_w = c.needs(2);
        const bool need_mask = has_mask && c.needs(mask_i);
        if (has_bias && c.needs(bias_i)) c.set(bias_i, rules::conv_bias_grad<B>(c.grad));
        if (!need_x && !need_off && !need_w && !need_mask) return;

        const A xv = c.input(0), off = c.input(1), wv = c.input(2);
        const Shape xs = rules::shape_of<B>(xv), ws = rules::shape_of<B>(wv),
                    gs = rules::shape_of<B>(c.grad);
        const std::int64_t N = xs[0], C = xs[1], H = xs[2], W = xs[3];
        const std::int64_t Cout = ws[0], kh = ws[2], kw = ws[3], K = kh * kw;
        const std::int64_t Ho = gs[2], Wo = gs[3], L = Ho * Wo;
        const std::int64_t OG = opt.offset_groups, WG = opt.weight_groups;
        const std::int64_t cpo = C / OG, cg = C / WG, cout_g = Cout / WG;
        const DType dt = B::float_dtype(off.inner);
        const auto dev = B::float_device(off.inner);

        const TensorData od = B::float_into_data(off.inner);
        const rules::DeformConsts k =
            dt == DType::F64
                ? rules::deform_consts<double>(od.to_vec<double>(), N, H, W, kh, kw, Ho, Wo, OG,
                                               opt)
                : rules::deform_consts<float>(od.to_vec<float>(), N, H, W, kh, kw, Ho, Wo, OG, opt);
        const Shape small{N, OG, 1, K, L}, big{N, OG, cpo, K, L};
        auto constant = [&](std::vector<double> v, const Shape& s) {
          return A{B::float_from_data(TensorData(std::move(v), s).convert(dt), dev), nullptr,
                   c.grad.checkpointing};
        };
        auto index = [&](const std::vector<std::int64_t>& v) {
          return B::int_from_data(TensorData(v, Shape{N * OG * K * L}), dev);
        };

        // Bilinear weights as functions of the offset.
        const Shape o5{N, OG, K, 2, L};
        const A off5 = O::float_reshape(off, o5);
        auto part = [&](std::int64_t which) {
          std::vector<SliceRange> r{{0, N, 1}, {0, OG, 1}, {0, K, 1}, {which, 1, 1}, {0, L, 1}};
          return O::float_reshape(O::float_slice(off5, r), small);
        };
        const A ly = O::template float_binary<ir::op::Add>(part(0), constant(k.cy, small));
        const A lx = O::template float_binary<ir::op::Add>(part(1), constant(k.cx, small));
        const A hy = O::template float_binary_scalar<ir::op::Add>(
            O::template float_unary<ir::op::Neg>(ly), 1.0);
        const A hx = O::template float_binary_scalar<ir::op::Add>(
            O::template float_unary<ir::op::Neg>(lx), 1.0);
        auto bilinear = [&](int q) {
          return O::template float_binary<ir::op::Mul>(q / 2 ? ly : hy, q % 2 ? lx : hx);
        };
        A V[4];
        for (int q = 0; q < 4; ++q) V[q] = constant(k.valid[q], small);
        // x as [cpo, N*OG*H*W]: one index per (n, g, k, l) selects a column for every
        // channel of the offset group (the indices are not expanded over channels).
        const std::vector<std::size_t> to_cols{2, 0, 1, 3}, from_cols{1, 2, 0, 3, 4};
        const bool need_val = need_w || need_mask;
        std::optional<A> xc;
        if (need_val || need_off) {
          xc = O::float_reshape(
              O::float_permute(O::float_reshape(xv, Shape{N, OG, cpo, H * W}), to_cols),
              Shape{cpo, N * OG * H * W});
        }
        typename B::IntTensor idx[4] = {index(k.index[0]), index(k.index[1]), index(k.index[2]),
                                        index(k.index[3])};
        // Corner values sampled from x, times validity: [N, OG, cpo, K, L].
        A gv[4];
        for (int q = 0; q < 4 && xc; ++q) {
          const A s = O::float_reshape(O::float_select(*xc, 1, idx[q]), Shape{cpo, N, OG, K, L});
          gv[q] = O::template float_binary<ir::op::Mul>(O::float_permute(s, from_cols), V[q]);
        }
        std::optional<A> m;
        if (has_mask) m = O::float_reshape(c.input(mask_i), small);
        // Sampled values (without mask) and columns, only when needed (dw, dmask).
        std::optional<A> val;
        if (need_val) {
          for (int q = 0; q < 4; ++q) {
            A t = O::template float_binary<ir::op::Mul>(gv[q], bilinear(q));
            val = val ? O::template float_binary<ir::op::Add>(*val, t) : t;
          }
        }

        // out[n, wg] = Wm[wg] @ col[n, wg]
        const A G = O::float_reshape(c.grad, Shape{N, WG, cout_g, L});
        if (need_w) {
          const A col =
              m ? O::template float_binary<ir::op::Mul>(*val, *m) : *val;  // [N, OG, cpo, K, L]
          const A colw = O::float_reshape(col, Shape{N, WG, cg * K, L});
          const A dw = O::float_sum_dim(O::float_matmul(G, rules::transpose_last<B>(colw)), 0);
          c.set(2, O::float_reshape(dw, ws));
        }
        if (!need_x && !need_off && !need_mask) return;
        const A wm = O::float_reshape(wv, Shape{1, WG, cout_g, cg * K});
        const A dcol = O::float_reshape(O::float_matmul(rules::transpose_last<B>(wm), G), big);
        if (need_mask) {
          const A dm = O::float_sum_dim(O::template float_binary<ir::op::Mul>(dcol, *val), 2);
          c.set(mask_i, O::float_reshape(dm, Shape{N, OG * K, Ho, Wo}));
        }
        const A dval = m ? O::template float_binary<ir::op::Mul>(dcol, *m) : dcol;
        if (need_x) {
          const std::vector<std::size_t> to_cols5{2, 0, 1, 3, 4};
          A dxc = rules::full_shape<B>(c.grad, Shape{cpo, N * OG * H * W}, 0.0);
          for (int q = 0; q < 4; ++q) {
            const A v = O::template float_binary<ir::op::Mul>(
                dval, O::template float_binary<ir::op::Mul>(bilinear(q), V[q]));
            dxc = O::float_select_assign(
                std::move(dxc), 1, idx[q],
                O::float_reshape(O::float_permute(v, to_cols5), Shape{cpo, N * OG * K * L}),
                IndexUpdate::Add);
          }
          const A dx = O::float_permute(O::float_reshape(dxc, Shape{cpo, N, OG, H, W}), from_cols);
          c.set(0, O::float_reshape(dx, xs));
        }
        if (need_off) {
          // d val / d ly = hx (v10 - v00) + lx (v11 - v01); d val / d lx = hy (v01 - v00)
          // + ly (v11 - v10) (v = corner value times validity).
          const A dly = O::template float_binary<ir::op::Add>(
              O::template float_binary<ir::op::Mul>(
                  O::template float_binary<ir::op::Sub>(gv[2], gv[0]), hx),
              O::template float_binary<ir::op::Mul>(
                  O::template float_binary<ir::op::Sub>(gv[3], gv[1]), lx));
          const A dlx = O::template float_binary<ir::op::Add>(
              O::template float_binary<ir::op::Mul>(
                  O::template float_binary<ir::op::Sub>(gv[1], gv[0]), hy),
              O::template float_binary<ir::op::Mul>(
                  O::template float_binary<ir::op::Sub>(gv[3], gv[2]), ly));
          const Shape one{N, OG, K, 1, L};
          const A gy = O::float_reshape(
              O::float_sum_dim(O::template float_binary<ir::op::Mul>(dval, dly), 2), one);
          const A gx = O::float_reshape(
              O::float_sum_dim(O::template float_binary<ir::op::Mul>(dval, dlx), 2), one);
          c.set(1, O::float_reshape(O::float_cat({gy, gx}, 3), rules::shape_of<B>(off)));
        }
      });
}

}  // namespace ember::autodiff
