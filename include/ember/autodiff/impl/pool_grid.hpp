// Autodiff<B>: backward rule of grid_sample_2d (PyTorch's grid_sampler_2d_backward,
// aten/src/ATen/native/GridSampler.h / GridSampler.cpp).
//
// Per output point p the source coordinate is ix = t(gx) (unnormalise, then clip or
// reflect for border / reflection padding); t is piecewise linear with slope `a` (torch's
// grid_sampler_compute_source_index_set_grad: (size - 1) / 2 or size / 2, times 0 where
// clipped and -1 where reflected). The taps are computed on the host from the grid values
// exactly as the forward (src/cpu/interpolate.cpp) does. Bilinear, with wx = ix - floor(ix)
// (likewise wy) and v_k the input at the 4 corners (0 outside the input):
//   out = sum_k w_k v_k,  w = (1-wx)(1-wy), wx(1-wy), (1-wx)wy, wx wy
//   dx[corner_k] += g w_k
//   dgx = a_x sum_c g ((1-wy)(v_ne - v_nw) + wy (v_se - v_sw)), dgy likewise.
// The rule is written with Autodiff ops on the (tracked) input, grid and output gradient,
// with wx, wy re-expressed as functions of the grid (wx = wx0 + a_x (gx - gx0)), so it is
// differentiable again (grad of grad w.r.t. x, grid and the output gradient). Gathers and
// scatters are row selects (index_select / index_add with 1-d indices) on the input laid
// out channels-last as rows [N * H * W, C].
// Nearest: dx is scattered to the rounded point; the grid gradient is zero (as torch).
// Points with a non-finite coordinate (NaN output in the forward) get no gradient.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "ember/autodiff/impl/common.hpp"

namespace ember::autodiff {

namespace rules {

/// Host-side taps of grid_sample_2d: per batch n, corner k (nw, ne, sw, se; nearest uses
/// only k = 0) and point p, laid out [N, K, P].
struct PoolGridTaps {
  std::vector<std::int64_t> idx;  // flat h * W + w in the plane (0 where out of bounds)
  std::vector<double> mask;       // 1 inside the input, 0 outside
  std::vector<double> wx, wy;     // [N, 1, P] fractional parts (bilinear)
  std::vector<double> ax, ay;     // [N, 1, P] d(ix)/d(gx), d(iy)/d(gy)
};

/// Source coordinate (as the forward) and its derivative w.r.t. the normalised coordinate.
template <class A>
A pool_grid_source(A coord, std::int64_t size, GridSamplePaddingMode pad, bool align, A& grad) {
  coord = align ? (coord + 1) / 2 * static_cast<A>(size - 1)
                : ((coord + 1) * static_cast<A>(size) - 1) / 2;
  grad = align ? static_cast<A>(size - 1) / 2 : static_cast<A>(size) / 2;
  auto clip = [&](A c) {
    if (!(c > A(0) && c < static_cast<A>(size - 1))) grad = A(0);
    return c > A(0) ? std::min(c, static_cast<A>(size - 1)) : A(0);
  };
  if (pad == GridSamplePaddingMode::Border) {
    coord = clip(coord);
  } else if (pad == GridSamplePaddingMode::Reflection) {
    const std::int64_t lo = align ? 0 : -1, hi = align ? 2 * (size - 1) : 2 * size - 1;
    if (lo == hi) {
      coord = A(0);
      grad = A(0);
    } else {
      const A mn = static_cast<A>(lo) / 2;
      const A span = static_cast<A>(hi - lo) / 2;
      const A shifted = coord - mn;
      A sign = shifted < A(0) ? A(-1) : A(1);
      const A in = std::fabs(shifted);
      const A extra = std::fmod(in, span);
      const A flips = std::floor(in / span);
      if (std::fmod(flips, A(2)) == A(0)) {
        coord = extra + mn;
      } else {
        coord = span - extra + mn;
        sign = -sign;
      }
      grad *= sign;
    }
    coord = clip(coord);
  }
  return coord;
}

template <class A>
PoolGridTaps pool_grid_taps_as(const std::vector<double>& g, std::int64_t N, std::int64_t P,
                               std::int64_t H, std::int64_t W, const GridSampleOptions& opt) {
  const bool nearest = opt.mode == InterpolateMode::Nearest;
  const std::int64_t K = nearest ? 1 : 4;
  PoolGridTaps t;
  t.idx.assign(static_cast<std::size_t>(N * K * P), 0);
  t.mask.assign(t.idx.size(), 0.0);
  if (!nearest) {
    for (auto* v : {&t.wx, &t.wy, &t.ax, &t.ay}) v->assign(static_cast<std::size_t>(N * P), 0.0);
  }
  auto safe = [](A c, bool& changed) {
    changed = !std::isfinite(c) || c > A(2147483646) || c < A(-2147483648.0);
    return changed ? A(-100) : c;
  };
  auto inb = [&](std::int64_t y, std::int64_t x) { return y >= 0 && y < H && x >= 0 && x < W; };
  for (std::int64_t n = 0; n < N; ++n) {
    for (std::int64_t p = 0; p < P; ++p) {
      const std::size_t gi = static_cast<std::size_t>((n * P + p) * 2);
      A dx = 0, dy = 0;
      const A ix =
          pool_grid_source(static_cast<A>(g[gi]), W, opt.padding_mode, opt.align_corners, dx);
      const A iy =
          pool_grid_source(static_cast<A>(g[gi + 1]), H, opt.padding_mode, opt.align_corners, dy);
      const std::size_t pp = static_cast<std::size_t>(n * P + p);
      auto put = [&](std::int64_t k, std::int64_t y, std::int64_t x) {
        const std::size_t o = static_cast<std::size_t>((n * K + k) * P + p);
        if (inb(y, x)) {
          t.idx[o] = y * W + x;
          t.mask[o] = 1.0;
        }
      };
      bool cx = false, cy = false;
      if (nearest) {
        const auto xn = static_cast<std::int64_t>(std::nearbyint(safe(ix, cx)));
        const auto yn = static_cast<std::int64_t>(std::nearbyint(safe(iy, cy)));
        put(0, yn, xn);
        continue;
      }
      if (!std::isfinite(ix) || !std::isfinite(iy)) continue;
      const A sx = safe(ix, cx), sy = safe(iy, cy);
      const A fx = std::floor(sx), fy = std::floor(sy);
      const auto x0 = static_cast<std::int64_t>(fx), y0 = static_cast<std::int64_t>(fy);
      t.wx[pp] = static_cast<double>(sx - fx);
      t.wy[pp] = static_cast<double>(sy - fy);
      t.ax[pp] = cx ? 0.0 : static_cast<double>(dx);
      t.ay[pp] = cy ? 0.0 : static_cast<double>(dy);
      put(0, y0, x0);
      put(1, y0, x0 + 1);
      put(2, y0 + 1, x0);
      put(3, y0 + 1, x0 + 1);
    }
  }
  return t;
}

/// Taps from a grid [N, OH, OW, 2] of B, computed in the forward's precision.
template <class B>
PoolGridTaps pool_grid_taps(const typename B::FloatTensor& grid, std::int64_t H, std::int64_t W,
                            const GridSampleOptions& opt) {
  const Shape gs = B::float_shape(grid);
  const std::vector<double> g = B::float_into_data(grid).template to_vec<double>();
  const std::int64_t N = gs[0], P = gs[1] * gs[2];
  if (B::float_dtype(grid) == DType::F64) return pool_grid_taps_as<double>(g, N, P, H, W, opt);
  return pool_grid_taps_as<float>(g, N, P, H, W, opt);
}

}  // namespace rules

template <class B>
AdTensor<B> AdOps<B>::float_grid_sample_2d(const F& x, const F& grid, GridSampleOptions options) {
  using IP = typename B::FloatTensor;
  const Shape xs = B::float_shape(x.inner), gs = B::float_shape(grid.inner);
  return Recorder<B>::binary(
      "grid_sample_2d", Bound::Compute, save_inputs(grid.node ? 3u : 2u), x, grid,
      [options](IP a, IP b) { return B::float_grid_sample_2d(a, b, options); },
      [options, xs, gs](BackwardContext<B>& c) {
        // Channels-last: the input as rows [N * H * W, C], the taps as row indices
        // [N * K * P] (n * H * W + h * W + w) into it, so gathers / scatters are row
        // selects (index_select / index_add) with 1-d indices.
        using O = AdOps<B>;
        const std::int64_t N = xs[0], C = xs[1], H = xs[2], W = xs[3];
        const std::int64_t P = gs[1] * gs[2];
        const bool nearest = options.mode == InterpolateMode::Nearest;
        const std::int64_t K = nearest ? 1 : 4;
        const AP grid = c.input(1);
        rules::PoolGridTaps t = rules::pool_grid_taps<B>(grid.inner, H, W, options);
        for (std::int64_t n = 0; n < N; ++n)
          for (std::int64_t j = 0; j < K * P; ++j)
            t.idx[static_cast<std::size_t>(n * K * P + j)] += n * H * W;
        const auto dev = B::float_device(c.grad.inner);
        const DType dt = B::float_dtype(c.grad.inner);
        const bool ck = c.grad.checkpointing;
        auto cst = [&](const std::vector<double>& v, const Shape& s) {
          return AP{B::float_from_data(TensorData(v, s).convert(dt), dev), nullptr, ck};
        };
        const auto rows = B::int_from_data(TensorData(t.idx, Shape({N * K * P})), dev);
        const AP mask = cst(t.mask, Shape({N, K, P, 1}));
        // g as [N, 1, P, C]
        const AP g = O::float_reshape(O::float_permute(c.grad, {0, 2, 3, 1}), Shape({N, 1, P, C}));
        auto scatter_rows = [&](const AP& vals) {  // vals [N, K, P, C] -> dx [N, C, H, W]
          AP z = rules::full_shape<B>(c.grad, Shape({N * H * W, C}), 0.0);
          AP dx = O::float_select_assign(std::move(z), 0, rows,
                                         O::float_reshape(vals, Shape({N * K * P, C})),
                                         IndexUpdate::Add);
          return O::float_permute(O::float_reshape(std::move(dx), Shape({N, H, W, C})),
                                  {0, 3, 1, 2});
        };
        if (nearest) {
          if (c.needs(0)) c.set(0, scatter_rows(O::template float_binary<ir::op::Mul>(g, mask)));
          if (c.needs(1)) c.set(1, rules::full_shape<B>(c.grad, gs, 0.0));
          return;
        }
        const Shape ps({N, 1, P, 1});
        AP wx = cst(t.wx, ps), wy = cst(t.wy, ps);
        const AP ax = cst(t.ax, ps), ay = cst(t.ay, ps);
        if (grid.tracked() && grad_enabled()) {
          // Same values; the dependence on the grid for higher-order gradients.
          auto coord = [&](std::int64_t j) {
            AP gj = O::float_reshape(
                O::float_slice(grid, {SliceRange{0, N, 1}, SliceRange{0, gs[1], 1},
                                      SliceRange{0, gs[2], 1}, SliceRange{j, 1, 1}}),
                ps);
            return O::template float_binary<ir::op::Sub>(gj, AP{gj.inner, nullptr, ck});
          };
          wx = O::template float_binary<ir::op::Add>(
              O::template float_binary<ir::op::Mul>(coord(0), ax), wx);
          wy = O::template float_binary<ir::op::Add>(
              O::template float_binary<ir::op::Mul>(coord(1), ay), wy);
        }
        const AP wx0 = O::template float_binary_scalar<ir::op::Add>(
            O::template float_unary<ir::op::Neg>(wx), 1.0);
        const AP wy0 = O::template float_binary_scalar<ir::op::Add>(
            O::template float_unary<ir::op::Neg>(wy), 1.0);
        if (c.needs(0)) {
          AP w4 = O::template float_binary<ir::op::Mul>(
              O::float_cat({O::template float_binary<ir::op::Mul>(wx0, wy0),
                            O::template float_binary<ir::op::Mul>(wx, wy0),
                            O::template float_binary<ir::op::Mul>(wx0, wy),
                            O::template float_binary<ir::op::Mul>(wx, wy)},
                           1),
              mask);  // [N, 4, P, 1]
          c.set(0, scatter_rows(O::template float_binary<ir::op::Mul>(g, w4)));
        }
        if (c.needs(1)) {
          AP xr =
              O::float_reshape(O::float_permute(c.input(0), {0, 2, 3, 1}), Shape({N * H * W, C}));
          AP v = O::template float_binary<ir::op::Mul>(
              O::float_reshape(O::float_select(xr, 0, rows), Shape({N, K, P, C})), mask);
          auto corner = [&](std::int64_t k) {
            return O::float_slice(v, {SliceRange{0, N, 1}, SliceRange{k, 1, 1}, SliceRange{0, P, 1},
                                      SliceRange{0, C, 1}});
          };
          const AP nw = corner(0), ne = corner(1), sw = corner(2), se = corner(3);
          AP tx = O::template float_binary<ir::op::Add>(
              O::template float_binary<ir::op::Mul>(wy0,
                                                    O::template float_binary<ir::op::Sub>(ne, nw)),
              O::template float_binary<ir::op::Mul>(wy,
                                                    O::template float_binary<ir::op::Sub>(se, sw)));
          AP ty = O::template float_binary<ir::op::Add>(
              O::template float_binary<ir::op::Mul>(wx0,
                                                    O::template float_binary<ir::op::Sub>(sw, nw)),
              O::template float_binary<ir::op::Mul>(wx,
                                                    O::template float_binary<ir::op::Sub>(se, ne)));
          const Shape one({N, gs[1], gs[2], 1});
          AP gx = O::float_reshape(
              O::template float_binary<ir::op::Mul>(
                  O::float_sum_dim(O::template float_binary<ir::op::Mul>(g, tx), 3), ax),
              one);
          AP gy = O::float_reshape(
              O::template float_binary<ir::op::Mul>(
                  O::float_sum_dim(O::template float_binary<ir::op::Mul>(g, ty), 3), ay),
              one);
          c.set(1, O::float_cat({gx, gy}, 3));
        }
      });
}

}  // namespace ember::autodiff
