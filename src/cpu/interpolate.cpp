// CPU backend: interpolate (nearest / bilinear / bicubic) and grid_sample_2d.
// Index and weight computations follow PyTorch's aten/src/ATen/native/UpSample.h and
// GridSampler.h so results agree with torch.nn.functional.interpolate / grid_sample.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "ember/cpu/interpolate_taps.hpp"
#include "ember/cpu/ops_pool.hpp"
#include "kernel.hpp"

namespace ember::cpu {

namespace {

template <class T>
constexpr bool is_float_type = std::is_same_v<T, float> || std::is_same_v<T, double> ||
                               std::is_same_v<T, f16> || std::is_same_v<T, bf16>;

std::int64_t plane_grain(std::int64_t work_per_plane) {
  return std::max<std::int64_t>(1, kParallelGrain / std::max<std::int64_t>(1, work_per_plane));
}

// PyTorch's area_pixel_compute_scale (no explicit scale factor).
template <class A>
A area_scale(std::int64_t in, std::int64_t out, bool align_corners) {
  if (align_corners) return out > 1 ? static_cast<A>(in - 1) / static_cast<A>(out - 1) : A(0);
  return static_cast<A>(in) / static_cast<A>(out);
}

// PyTorch's area_pixel_compute_source_index.
template <class A>
A source_index(A scale, std::int64_t dst, bool align_corners, bool cubic) {
  if (align_corners) return scale * static_cast<A>(dst);
  const A src = scale * (static_cast<A>(dst) + A(0.5)) - A(0.5);
  return (!cubic && src < A(0)) ? A(0) : src;
}

// PyTorch's guard_index_and_lambda.
template <class A>
void guard_index_and_lambda(A real, std::int64_t in, std::int64_t& index, A& lambda) {
  index = std::min(static_cast<std::int64_t>(std::floor(real)), in - 1);
  lambda = std::min(std::max(real - static_cast<A>(index), A(0)), A(1));
}

// PyTorch's nearest_idx (scale computed in float, as torch does for every dtype).
std::int64_t nearest_idx(std::int64_t dst, std::int64_t in, std::int64_t out) {
  if (out == in) return dst;
  if (out == 2 * in) return dst >> 1;
  const float scale = static_cast<float>(in) / static_cast<float>(out);
  return std::min(static_cast<std::int64_t>(std::floor(static_cast<float>(dst) * scale)), in - 1);
}

// PyTorch's reflect_coordinates (GridSampler.h). The parity of the flip count is taken
// in floating point (as torch's vectorised CPU kernel) so huge coordinates do not
// overflow; a non-finite input gives NaN (clipped to 0 afterwards, as torch).
template <class A>
A reflect_coordinates(A in, std::int64_t twice_low, std::int64_t twice_high) {
  if (twice_low == twice_high) return A(0);
  const A mn = static_cast<A>(twice_low) / 2;
  const A span = static_cast<A>(twice_high - twice_low) / 2;
  in = std::fabs(in - mn);
  const A extra = std::fmod(in, span);
  const A flips = std::floor(in / span);
  return std::fmod(flips, A(2)) == A(0) ? extra + mn : span - extra + mn;
}

// Clamp to [0, size - 1]; NaN becomes 0 (torch's vectorised clip_coordinates).
template <class A>
A clip_coordinates(A c, std::int64_t size) {
  return c > A(0) ? std::min(c, static_cast<A>(size - 1)) : A(0);
}

// PyTorch's grid_sampler_compute_source_index without the final int-range downgrade
// (done by the caller, see safe_index).
template <class A>
A grid_source_index(A coord, std::int64_t size, GridSamplePaddingMode pad, bool align) {
  coord = align ? (coord + 1) / 2 * static_cast<A>(size - 1)
                : ((coord + 1) * static_cast<A>(size) - 1) / 2;
  if (pad == GridSamplePaddingMode::Border) {
    coord = clip_coordinates(coord, size);
  } else if (pad == GridSamplePaddingMode::Reflection) {
    coord = align ? reflect_coordinates(coord, 0, 2 * (size - 1))
                  : reflect_coordinates(coord, -1, 2 * size - 1);
    coord = clip_coordinates(coord, size);
  }
  return coord;
}

// PyTorch's safe_downgrade_to_int_range: non-finite or huge coordinates become a point
// out of bounds instead of overflowing the integer conversion.
template <class A>
A safe_index(A coord) {
  if (!std::isfinite(coord) || coord > A(2147483646) || coord < A(-2147483648.0)) return A(-100);
  return coord;
}

}  // namespace

template <class A>
InterpolateTaps<A> interpolate_taps(std::int64_t in, std::int64_t out, InterpolateMode mode,
                                    bool align_corners) {
  InterpolateTaps<A> t;
  if (mode == InterpolateMode::Nearest) {
    t.n = 1;
    for (std::int64_t i = 0; i < out; ++i) {
      t.idx.push_back(nearest_idx(i, in, out));
      t.w.push_back(A(1));
    }
  } else if (mode == InterpolateMode::Bilinear) {
    t.n = 2;
    const A scale = area_scale<A>(in, out, align_corners);
    for (std::int64_t i = 0; i < out; ++i) {
      std::int64_t i0;
      A l1;
      guard_index_and_lambda(source_index(scale, i, align_corners, false), in, i0, l1);
      const std::int64_t i1 = i0 + (i0 < in - 1 ? 1 : 0);
      t.idx.push_back(i0);
      t.idx.push_back(i1);
      t.w.push_back(A(1) - l1);
      t.w.push_back(l1);
    }
  } else {
    t.n = 4;
    const A scale = area_scale<A>(in, out, align_corners);
    const A a = A(-0.75);
    auto conv1 = [a](A x) { return ((a + 2) * x - (a + 3)) * x * x + 1; };
    auto conv2 = [a](A x) { return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a; };
    for (std::int64_t i = 0; i < out; ++i) {
      std::int64_t i0;
      A l;
      guard_index_and_lambda(source_index(scale, i, align_corners, true), in, i0, l);
      const A c[4] = {conv2(l + 1), conv1(l), conv1(1 - l), conv2(2 - l)};
      for (int j = 0; j < 4; ++j) {
        t.idx.push_back(std::clamp<std::int64_t>(i0 - 1 + j, 0, in - 1));
        t.w.push_back(c[j]);
      }
    }
  }
  return t;
}

template InterpolateTaps<float> interpolate_taps<float>(std::int64_t, std::int64_t, InterpolateMode,
                                                        bool);
template InterpolateTaps<double> interpolate_taps<double>(std::int64_t, std::int64_t,
                                                          InterpolateMode, bool);

CpuTensor PoolOps::float_interpolate(const P& x_in, PoolArg2 os, InterpolateOptions opt) {
  const CpuTensor x = contiguous(x_in);
  const std::int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3];
  const std::int64_t OH = os[0], OW = os[1];
  CpuTensor out = alloc(Shape({N, C, OH, OW}), x.dtype);
  visit_dtype(x.dtype, [&]<class T>() {
    if constexpr (is_float_type<T>) {
      using A = compute_t<T>;
      const InterpolateTaps<A> th = interpolate_taps<A>(H, OH, opt.mode, opt.align_corners);
      const InterpolateTaps<A> tw = interpolate_taps<A>(W, OW, opt.mode, opt.align_corners);
      const T* src = x.data<T>();
      T* dst = out.data<T>();
      // Separable: per output row, blend the nh source rows into `tmp` (W values,
      // vectorisable), then blend nw taps of tmp per output column.
      auto run = [&]<int NH, int NW>() {
        parallel_for(N * C, plane_grain(OH * (OW * NW + W * NH)),
                     [&](std::int64_t b, std::int64_t e) {
                       std::vector<A> tmp(static_cast<std::size_t>(W));
                       for (std::int64_t pl = b; pl < e; ++pl) {
                         const T* in = src + pl * H * W;
                         T* o = dst + pl * OH * OW;
                         for (std::int64_t oh = 0; oh < OH; ++oh) {
                           const std::int64_t* hi = &th.idx[static_cast<std::size_t>(oh * NH)];
                           const A* hw = &th.w[static_cast<std::size_t>(oh * NH)];
                           const T* rows[NH];
                           for (int a = 0; a < NH; ++a) rows[a] = in + hi[a] * W;
                           for (std::int64_t w = 0; w < W; ++w) {
                             A acc = hw[0] * static_cast<A>(rows[0][w]);
                             for (int a = 1; a < NH; ++a) acc += hw[a] * static_cast<A>(rows[a][w]);
                             tmp[static_cast<std::size_t>(w)] = acc;
                           }
                           T* orow = o + oh * OW;
                           for (std::int64_t ow = 0; ow < OW; ++ow) {
                             const std::int64_t* wi = &tw.idx[static_cast<std::size_t>(ow * NW)];
                             const A* ww = &tw.w[static_cast<std::size_t>(ow * NW)];
                             A acc = ww[0] * tmp[static_cast<std::size_t>(wi[0])];
                             for (int c = 1; c < NW; ++c)
                               acc += ww[c] * tmp[static_cast<std::size_t>(wi[c])];
                             orow[ow] = static_cast<T>(acc);
                           }
                         }
                       }
                     });
      };
      if (opt.mode == InterpolateMode::Nearest)
        run.template operator()<1, 1>();
      else if (opt.mode == InterpolateMode::Bilinear)
        run.template operator()<2, 2>();
      else
        run.template operator()<4, 4>();
    }
  });
  return out;
}

CpuTensor PoolOps::float_grid_sample_2d(const P& x_in, const P& grid_in, GridSampleOptions opt) {
  const CpuTensor x = contiguous(x_in);
  const CpuTensor grid = contiguous(grid_in);
  const std::int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3];
  const std::int64_t OH = grid.shape[1], OW = grid.shape[2];
  CpuTensor out = alloc(Shape({N, C, OH, OW}), x.dtype);
  visit_dtype(x.dtype, [&]<class T>() {
    if constexpr (is_float_type<T>) {
      using A = compute_t<T>;
      // Phase 1: per output point, up to 4 taps (offset into the plane, weight); offset -1
      // marks a tap outside the input (contributes 0, as torch's mask), -2 in tap 0 a
      // bilinear point with a non-finite coordinate (torch's NaN weights give NaN).
      struct Taps4 {
        std::int64_t off[4];
        A w[4];
      };
      const std::int64_t npts = N * OH * OW;
      std::vector<Taps4> taps(static_cast<std::size_t>(npts));
      const T* g = grid.data<T>();
      const bool nearest = opt.mode == InterpolateMode::Nearest;
      auto inb = [&](std::int64_t yy, std::int64_t xx) {
        return yy >= 0 && yy < H && xx >= 0 && xx < W;
      };
      parallel_for(npts, kParallelGrain / 16, [&](std::int64_t b, std::int64_t e) {
        for (std::int64_t pt = b; pt < e; ++pt) {
          Taps4& t = taps[static_cast<std::size_t>(pt)];
          for (int k = 0; k < 4; ++k) {
            t.off[k] = -1;
            t.w[k] = A(0);
          }
          const T* gp = g + pt * 2;
          const A ix =
              grid_source_index(static_cast<A>(gp[0]), W, opt.padding_mode, opt.align_corners);
          const A iy =
              grid_source_index(static_cast<A>(gp[1]), H, opt.padding_mode, opt.align_corners);
          if (nearest) {
            const auto xn = static_cast<std::int64_t>(std::nearbyint(safe_index(ix)));
            const auto yn = static_cast<std::int64_t>(std::nearbyint(safe_index(iy)));
            if (inb(yn, xn)) {
              t.off[0] = yn * W + xn;
              t.w[0] = A(1);
            }
            continue;
          }
          if (!std::isfinite(ix) || !std::isfinite(iy)) {
            t.off[0] = -2;
            continue;
          }
          const A sx = safe_index(ix), sy = safe_index(iy);
          const A fx = std::floor(sx), fy = std::floor(sy);
          const auto x0 = static_cast<std::int64_t>(fx), y0 = static_cast<std::int64_t>(fy);
          const A wx1 = sx - fx, wx0 = A(1) - wx1;  // (ix - x0), (x1 - ix)
          const A wy1 = sy - fy, wy0 = A(1) - wy1;
          const std::int64_t ys[2] = {y0, y0 + 1}, xs[2] = {x0, x0 + 1};
          const A wys[2] = {wy0, wy1}, wxs[2] = {wx0, wx1};
          for (int a = 0; a < 2; ++a)
            for (int c = 0; c < 2; ++c)
              if (inb(ys[a], xs[c])) {
                t.off[a * 2 + c] = ys[a] * W + xs[c];
                t.w[a * 2 + c] = wys[a] * wxs[c];
              }
        }
      });
      // Phase 2: every (n, c) plane gathers through its batch's taps.
      const T* src = x.data<T>();
      T* dst = out.data<T>();
      const int ntaps = nearest ? 1 : 4;
      parallel_for(N * C, plane_grain(OH * OW * ntaps), [&](std::int64_t b, std::int64_t e) {
        for (std::int64_t pl = b; pl < e; ++pl) {
          const T* in = src + pl * H * W;
          T* o = dst + pl * OH * OW;
          const Taps4* tp = taps.data() + (pl / C) * OH * OW;
          for (std::int64_t q = 0; q < OH * OW; ++q) {
            const Taps4& t = tp[q];
            if (t.off[0] == -2) {
              o[q] = static_cast<T>(std::numeric_limits<A>::quiet_NaN());
              continue;
            }
            if (nearest) {  // a copy (keeps -0.0), 0 outside
              o[q] = t.off[0] >= 0 ? in[t.off[0]] : static_cast<T>(A(0));
              continue;
            }
            A acc = 0;
            for (int k = 0; k < ntaps; ++k)
              if (t.off[k] >= 0) acc += t.w[k] * static_cast<A>(in[t.off[k]]);
            o[q] = static_cast<T>(acc);
          }
        }
      });
    }
  });
  return out;
}

}  // namespace ember::cpu
