// Autodiff<B>: backward rules of pooling and interpolation (grid sampling in
// ember/autodiff/impl/pool_grid.hpp).
//
// - max_pool2d: the output gradient is scatter-added into the flattened input planes at the
//   indices of the maxima (PyTorch's max_pool2d_with_indices_backward: ties and NaN follow
//   the index the forward returns, which gets the whole gradient); B's optional
//   float_max_pool2d_backward does it in one pass when the backward is not recorded.
// - avg_pool2d, adaptive_avg_pool2d and interpolate are separable linear maps,
//   out = M_h x M_w^T per plane, so dx = M_h^T g M_w (two matmuls with constant matrices,
//   hence differentiable again). The matrices are not re-derived: they are read off the
//   inner backend's own forward applied to an identity along one axis (size-1 windows /
//   taps along the other), so they match the forward's windows, divisors
//   (count_include_pad, ceil_mode) and interpolation coordinates exactly.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "ember/autodiff/impl/common.hpp"
#include "ember/autodiff/impl/pool_grid.hpp"

namespace ember::autodiff {

namespace rules {

/// The transposed matrix [in, out] of a per-axis linear map along H (`height`) or W:
/// `fwd` (B's forward on [N, C, H, W], a size-preserving identity map along the other axis)
/// applied to the identity laid out as [1, in, in, 1] or [1, in, 1, in].
template <class B, class Fwd>
typename B::FloatTensor pool_axis_matrix_t(std::int64_t in, bool height,
                                           const typename B::FloatTensor& like, Fwd fwd) {
  std::vector<double> eye(static_cast<std::size_t>(in * in), 0.0);
  for (std::int64_t i = 0; i < in; ++i) eye[static_cast<std::size_t>(i * in + i)] = 1.0;
  const Shape s = height ? Shape({1, in, in, 1}) : Shape({1, in, 1, in});
  auto e = B::float_from_data(TensorData(std::move(eye), s).convert(B::float_dtype(like)),
                              B::float_device(like));
  auto m = fwd(e);
  const Shape ms = B::float_shape(m);
  return B::float_reshape(m, Shape({in, height ? ms[2] : ms[3]}));
}

/// Records a separable linear op: `out` (already computed by B) = M_h x M_w^T per plane,
/// with M_h^T, M_w^T from `fwd_h`, `fwd_w` (see pool_axis_matrix_t).
template <class B, class FH, class FW>
AP<B> pool_separable(const char* op, const AP<B>& x, typename B::FloatTensor out, FH fwd_h,
                     FW fwd_w) {
  using IP = typename B::FloatTensor;
  if (!x.node || !grad_enabled())
    return AP<B>{std::move(out), nullptr, x.checkpointing || checkpointing_scope_active()};
  const Shape xs = B::float_shape(x.inner), os = B::float_shape(out);
  const std::int64_t H = xs[2], W = xs[3], OH = os[2], OW = os[3];
  IP mh_t = B::float_reshape(pool_axis_matrix_t<B>(H, true, x.inner, fwd_h), Shape({1, 1, H, OH}));
  IP mw_t = pool_axis_matrix_t<B>(W, false, x.inner, fwd_w);  // [W, OW]
  IP mw = B::float_reshape(B::float_permute(mw_t, {1, 0}), Shape({1, 1, OW, W}));
  // dx = M_h^T (g M_w) or (M_h^T g) M_w, whichever multiplies less.
  const bool rows_first = H * OW * (OH + W) <= OH * W * (OW + H);
  return Recorder<B>::record(
      op, Bound::Compute, kSaveNothing, {x}, [out](std::vector<IP>&) { return out; },
      [mh_t, mw, rows_first](BackwardContext<B>& c) {
        using O = AdOps<B>;
        const AP<B> a{mh_t, nullptr, c.grad.checkpointing}, b{mw, nullptr, c.grad.checkpointing};
        c.set(0, rows_first ? O::float_matmul(O::float_matmul(a, c.grad), b)
                            : O::float_matmul(a, O::float_matmul(c.grad, b)));
      });
}

/// Records max pooling: `out` with the flat per-plane indices `idx` of its maxima.
template <class B>
AP<B> pool_max_record(const char* op, const AP<B>& x, typename B::FloatTensor out,
                      const typename B::IntTensor& idx) {
  using IP = typename B::FloatTensor;
  const Shape xs = B::float_shape(x.inner), os = B::float_shape(out);
  const std::int64_t N = xs[0], C = xs[1];
  auto flat = B::int_reshape(idx, Shape({N, C, os[2] * os[3]}));
  return Recorder<B>::record(
      op, Bound::Compute, kSaveNothing, {x}, [out](std::vector<IP>&) { return out; },
      [xs, idx, flat, N, C](BackwardContext<B>& c) {
        using O = AdOps<B>;
        if constexpr (HasMaxPoolBackward<B, 2>) {
          // B's kernel when the result need not be differentiable (indices are constants).
          if (!grad_enabled() || !c.grad.node) {
            c.set(0, AP<B>{B::template float_max_pool_backward<2>(c.grad.inner, idx, xs), nullptr,
                           c.grad.checkpointing});
            return;
          }
        }
        const Shape gs = shape_of<B>(c.grad);
        AP<B> g = O::float_reshape(c.grad, Shape({N, C, gs[2] * gs[3]}));
        AP<B> z = full_shape<B>(c.grad, Shape({N, C, xs[2] * xs[3]}), 0.0);
        c.set(0,
              O::float_reshape(O::float_scatter(2, std::move(z), flat, g, IndexUpdate::Add), xs));
      });
}

/// The 2d options of a 1d pool run as a 2d pool of [B, C, 1, L].
inline MaxPoolOptions<2> as_2d(const MaxPoolOptions<1>& o) {
  return {{1, o.kernel[0]}, {1, o.stride[0]}, {0, o.padding[0]}, {1, o.dilation[0]}, o.ceil_mode};
}
inline AvgPoolOptions<2> as_2d(const AvgPoolOptions<1>& o) {
  return {{1, o.kernel[0]}, {1, o.stride[0]}, {0, o.padding[0]}, o.count_include_pad, o.ceil_mode};
}
/// [B, C, L] <-> [B, C, 1, L] (recorded, so 1d pools are differentiated as 2d ones).
template <class B>
AP<B> lift_1d(const AP<B>& x) {
  const Shape s = shape_of<B>(x);
  return O<B>::float_reshape(x, Shape({s[0], s[1], 1, s[2]}));
}
template <class B>
AP<B> drop_1d(AP<B> x) {
  const Shape s = shape_of<B>(x);
  return O<B>::float_reshape(std::move(x), Shape({s[0], s[1], s[3]}));
}

}  // namespace rules

template <class B>
template <std::size_t N>
AdTensor<B> AdOps<B>::float_max_pool(const F& x, const MaxPoolOptions<N>& o) {
  if constexpr (N == 1) {
    return rules::drop_1d<B>(float_max_pool<2>(rules::lift_1d<B>(x), rules::as_2d(o)));
  } else {
    if (!x.node || !grad_enabled()) {
      return AP{B::template float_max_pool<2>(x.inner, o), nullptr,
                x.checkpointing || checkpointing_scope_active()};
    }
    auto [out, idx] = B::template float_max_pool_with_indices<2>(x.inner, o);
    return rules::pool_max_record<B>("max_pool2d", x, std::move(out), idx);
  }
}

template <class B>
template <std::size_t N>
std::pair<AdTensor<B>, typename B::IntTensor> AdOps<B>::float_max_pool_with_indices(
    const F& x, const MaxPoolOptions<N>& o) {
  if constexpr (N == 1) {
    auto [v, i] = float_max_pool_with_indices<2>(rules::lift_1d<B>(x), rules::as_2d(o));
    const Shape is = B::int_shape(i);
    return {rules::drop_1d<B>(std::move(v)), B::int_reshape(i, Shape({is[0], is[1], is[3]}))};
  } else {
    auto [out, idx] = B::template float_max_pool_with_indices<2>(x.inner, o);
    if (!x.node || !grad_enabled()) {
      return {AP{std::move(out), nullptr, x.checkpointing || checkpointing_scope_active()},
              std::move(idx)};
    }
    AP r = rules::pool_max_record<B>("max_pool2d_with_indices", x, std::move(out), idx);
    return {std::move(r), std::move(idx)};
  }
}

// avg_pool2d's divisor is a product of per-axis counts (PyTorch: (hend - hstart) *
// (wend - wstart), clipped to the padded input with count_include_pad, to the input
// without), so the op is separable.
template <class B>
template <std::size_t N>
AdTensor<B> AdOps<B>::float_avg_pool(const F& x, const AvgPoolOptions<N>& o) {
  if constexpr (N == 1) {
    return rules::drop_1d<B>(float_avg_pool<2>(rules::lift_1d<B>(x), rules::as_2d(o)));
  } else {
    const auto k = o.kernel, s = o.stride, p = o.padding;
    const bool cip = o.count_include_pad, ceil_mode = o.ceil_mode;
    return rules::pool_separable<B>(
        "avg_pool2d", x, B::template float_avg_pool<2>(x.inner, o),
        [=](const IP& e) {
          return B::template float_avg_pool<2>(
              e, AvgPoolOptions<2>{{k[0], 1}, {s[0], 1}, {p[0], 0}, cip, ceil_mode});
        },
        [=](const IP& e) {
          return B::template float_avg_pool<2>(
              e, AvgPoolOptions<2>{{1, k[1]}, {1, s[1]}, {0, p[1]}, cip, ceil_mode});
        });
  }
}

template <class B>
template <std::size_t N>
AdTensor<B> AdOps<B>::float_adaptive_avg_pool(const F& x, const Dims<N>& out) {
  if constexpr (N == 1) {
    return rules::drop_1d<B>(float_adaptive_avg_pool<2>(rules::lift_1d<B>(x), Dims<2>{1, out[0]}));
  } else {
    return rules::pool_separable<B>(
        "adaptive_avg_pool2d", x, B::template float_adaptive_avg_pool<2>(x.inner, out),
        [=](const IP& e) {
          return B::template float_adaptive_avg_pool<2>(e, Dims<2>{out[0], 1});
        },
        [=](const IP& e) {
          return B::template float_adaptive_avg_pool<2>(e, Dims<2>{1, out[1]});
        });
  }
}

// A size-1 axis resampled to size 1 is the identity in every mode (nearest: same size;
// bilinear: source 0, weight 1; bicubic: the taps at 0 have weights 0, 1, 0, 0).
template <class B>
AdTensor<B> AdOps<B>::float_interpolate(const F& x, const Arr2& output_size,
                                        InterpolateOptions options) {
  using IP = typename B::FloatTensor;
  return rules::pool_separable<B>(
      "interpolate", x, B::float_interpolate(x.inner, output_size, options),
      [=](const IP& e) {
        return B::float_interpolate(e, {output_size[0], 1}, options);
      },
      [=](const IP& e) {
        return B::float_interpolate(e, {1, output_size[1]}, options);
      });
}

}  // namespace ember::autodiff
