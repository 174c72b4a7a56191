// Autodiff<B>: backward rules of convolutions, transposed convolutions and unfold/fold
// (deformable convolution: conv_deform.hpp).
//
// Formulas (PyTorch's convolution_backward, Burn's burn-autodiff conv backward; written here
// with this backend's own ops so that they run on any B and are recorded under create_graph):
//   y = conv(x, w; s, p, d, G) + b
//     dx = conv_transpose(dy, w; s, p, d, G, output padding chosen so dx has x's size)
//     dw = conv of x and dy with batch and channel roles swapped (stride and dilation
//          exchanged), cropped to the kernel size: conv_weight_grad below
//     db = sum of dy over batch and spatial dims
//   y = conv_transpose(x, w; s, p, op, d, G) + b
//     dx = conv(dy, w; s, p, d, G), cropped to x's size
//     dw = conv_weight_grad with the roles of x and dy exchanged
//   unfold4d and fold4d are each other's adjoints.
// When the inner backend has the optional convKd_x_backward / convKd_weight_backward
// (ember/backend/conv.hpp) and the gradient need not be differentiable (backward without
// create_graph), dx and dw come from those kernels instead of the composites above.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "ember/autodiff/impl/common.hpp"

namespace ember::autodiff {

namespace rules {

/// AdOps' conv<N> / conv_transpose<N> without bias.
template <class B, std::size_t N>
AP<B> conv_call(const AP<B>& x, const AP<B>& w, const ConvOptions<N>& o) {
  return O<B>::template conv<N>(x, w, std::nullopt, o);
}
template <class B, std::size_t N>
AP<B> conv_transpose_call(const AP<B>& x, const AP<B>& w, const ConvTransposeOptions<N>& o) {
  return O<B>::template conv_transpose<N>(x, w, std::nullopt, o);
}

/// Whether a gradient computed from `a` and `b` may come straight from B's kernels: the
/// backward pass is not recorded (no create_graph), or neither operand is tracked, so the
/// result would be a constant anyway.
template <class B>
bool direct_grad(const AP<B>& a, const AP<B>& b) {
  return !grad_enabled() || (!a.node && !b.node);
}

/// B's conv_x_backward<N> / conv_weight_backward<N> (B must satisfy HasConvBackward<B, N>).
template <class B, std::size_t N>
AP<B> conv_x_backward_inner(const AP<B>& dy, const AP<B>& w, const Shape& xs,
                            const ConvOptions<N>& o) {
  return AP<B>{B::template conv_x_backward<N>(dy.inner, w.inner, xs, o), nullptr, dy.checkpointing};
}
template <class B, std::size_t N>
AP<B> conv_weight_backward_inner(const AP<B>& x, const AP<B>& dy, const Shape& ws,
                                 const ConvOptions<N>& o) {
  return AP<B>{B::template conv_weight_backward<N>(x.inner, dy.inner, ws, o), nullptr,
               dy.checkpointing};
}

/// `t` cropped to the first `dims` entries of each dim (no-op when already that shape).
template <class B>
AP<B> conv_crop(AP<B> t, const Shape& dims) {
  const Shape s = shape_of<B>(t);
  if (s == dims) return t;
  std::vector<SliceRange> ranges(s.rank());
  for (std::size_t d = 0; d < s.rank(); ++d) ranges[d] = SliceRange{0, dims[d], 1};
  return O<B>::float_slice(std::move(t), ranges);
}

/// Gradient of a bias added per channel (dim 1): the sum over every other dim.
template <class B>
AP<B> conv_bias_grad(const AP<B>& g) {
  const Shape s = shape_of<B>(g);
  AP<B> r = O<B>::float_sum_dim(g, 0);
  for (std::size_t d = 2; d < s.rank(); ++d)
    r = O<B>::float_sum_dim(std::move(r), static_cast<std::int64_t>(d));
  return O<B>::float_reshape(std::move(r), Shape{s[1]});
}

/// Gradient of the weight of y = conv(x, w; s, p, d, G), x [Nb, Ci, *S], y [Nb, Co, *So],
/// w [Co, Ci/G, *k]: dw[co, ci, k] = sum_{n, o} dy[n, co, o] x[n, ci, o*s + k*d - p] (ci in
/// co's group). As one grouped convolution: x as a batch of Ci/G images of G*Nb channels,
/// dy as G*Co/G = Co filters of Nb channels with kernel So, stride d, dilation s, padding
/// p; the result [Ci/G, Co, *k'] (k' >= k: strides that do not divide leave extra rows)
/// is cropped to k and permuted to [Co, Ci/G, *k].
template <class B, std::size_t N>
AP<B> conv_weight_grad(const AP<B>& x, const AP<B>& dy, const Shape& wshape,
                       const std::array<std::int64_t, N>& stride,
                       const std::array<std::int64_t, N>& padding,
                       const std::array<std::int64_t, N>& dilation, std::int64_t groups) {
  const Shape xs = shape_of<B>(x), ys = shape_of<B>(dy);
  const std::int64_t nb = xs[0], ci = xs[1], co = ys[1], G = groups;
  const std::int64_t ci_g = ci / G, co_g = co / G;
  // x [Nb, G, Ci/G, *S] -> [Ci/G, G, Nb, *S] -> [Ci/G, G*Nb, *S]
  Shape x5{nb, G, ci_g}, xin{ci_g, G * nb};
  std::vector<std::size_t> px{2, 1, 0};
  // dy [Nb, G, Co/G, *So] -> [G, Co/G, Nb, *So] -> [Co, Nb, *So]
  Shape y5{nb, G, co_g}, yw{co, nb};
  std::vector<std::size_t> py{1, 2, 0};
  for (std::size_t i = 0; i < N; ++i) {
    x5.dims.push_back(xs[2 + i]);
    xin.dims.push_back(xs[2 + i]);
    px.push_back(3 + i);
    y5.dims.push_back(ys[2 + i]);
    yw.dims.push_back(ys[2 + i]);
    py.push_back(3 + i);
  }
  AP<B> a = x, f = dy;
  if (G == 1) {
    std::vector<std::size_t> swap{1, 0};
    for (std::size_t i = 0; i < N; ++i) swap.push_back(2 + i);
    a = O<B>::float_permute(std::move(a), swap);
    f = O<B>::float_permute(std::move(f), swap);
  } else {
    a = O<B>::float_reshape(O<B>::float_permute(O<B>::float_reshape(std::move(a), x5), px), xin);
    f = O<B>::float_reshape(O<B>::float_permute(O<B>::float_reshape(std::move(f), y5), py), yw);
  }
  ConvOptions<N> o;
  o.stride = dilation;
  o.padding = padding;
  o.dilation = stride;
  o.groups = G;
  AP<B> r = conv_call<B, N>(a, f, o);  // [Ci/G, Co, *k']
  Shape crop{ci_g, co};
  for (std::size_t i = 0; i < N; ++i) crop.dims.push_back(wshape[2 + i]);
  r = conv_crop<B>(std::move(r), crop);
  std::vector<std::size_t> back{1, 0};
  for (std::size_t i = 0; i < N; ++i) back.push_back(2 + i);
  return O<B>::float_permute(std::move(r), back);
}

/// What a conv (or transposed conv) rule reads: x for dw (when w is tracked), w for dx
/// (when x is tracked).
template <class B>
Saves conv_saves(const AP<B>& x, const AP<B>& w) {
  return save_inputs((w.tracked() ? 1u : 0u) | (x.tracked() ? 2u : 0u));
}

/// y = convNd(x, w, b): records the node and its rule.
template <class B, std::size_t N>
AP<B> conv_record(const char* name, const AP<B>& x, const AP<B>& w,
                  const std::optional<AP<B>>& bias, const ConvOptions<N>& opt) {
  const Shape xs = B::float_shape(x.inner), ws = B::float_shape(w.inner);
  const bool has_bias = bias.has_value();
  return Recorder<B>::record(
      name, Bound::Compute, conv_saves<B>(x, w), with_opt<B>({x, w}, bias),
      [opt, has_bias](std::vector<typename B::FloatTensor>& v) {
        std::optional<typename B::FloatTensor> b;
        if (has_bias) b = v[2];
        return B::template conv<N>(v[0], v[1], b, opt);
      },
      [opt, xs, ws, has_bias](BackwardContext<B>& c) {
        const Shape gs = shape_of<B>(c.grad);
        bool dx_done = false, dw_done = false;
        if constexpr (HasConvBackward<B, N>) {
          // B's gradient kernels, when the result need not be differentiable.
          if (c.needs(0)) {
            const AP<B> w = c.input(1);
            if (direct_grad<B>(c.grad, w)) {
              c.set(0, conv_x_backward_inner<B, N>(c.grad, w, xs, opt));
              dx_done = true;
            }
          }
          if (c.needs(1)) {
            const AP<B> x = c.input(0);
            if (direct_grad<B>(x, c.grad)) {
              c.set(1, conv_weight_backward_inner<B, N>(x, c.grad, ws, opt));
              dw_done = true;
            }
          }
        }
        if (c.needs(0) && !dx_done) {
          ConvTransposeOptions<N> t;
          t.stride = opt.stride;
          t.padding = opt.padding;
          t.dilation = opt.dilation;
          t.groups = opt.groups;
          for (std::size_t i = 0; i < N; ++i) {
            // Rows of x past the last window (stride not dividing) get no gradient: the
            // transposed conv's output padding (< stride) restores x's size.
            const std::int64_t reach = (gs[2 + i] - 1) * opt.stride[i] - 2 * opt.padding[i] +
                                       opt.dilation[i] * (ws[2 + i] - 1) + 1;
            t.padding_out[i] = xs[2 + i] - reach;
          }
          c.set(0, conv_transpose_call<B, N>(c.grad, c.input(1), t));
        }
        if (c.needs(1) && !dw_done) {
          c.set(1, conv_weight_grad<B, N>(c.input(0), c.grad, ws, opt.stride, opt.padding,
                                          opt.dilation, opt.groups));
        }
        if (has_bias && c.needs(2)) c.set(2, conv_bias_grad<B>(c.grad));
      });
}

/// y = conv_transposeNd(x, w, b): records the node and its rule.
template <class B, std::size_t N>
AP<B> conv_transpose_record(const char* name, const AP<B>& x, const AP<B>& w,
                            const std::optional<AP<B>>& bias, const ConvTransposeOptions<N>& opt) {
  const Shape xs = B::float_shape(x.inner), ws = B::float_shape(w.inner);
  const bool has_bias = bias.has_value();
  return Recorder<B>::record(
      name, Bound::Compute, conv_saves<B>(x, w), with_opt<B>({x, w}, bias),
      [opt, has_bias](std::vector<typename B::FloatTensor>& v) {
        std::optional<typename B::FloatTensor> b;
        if (has_bias) b = v[2];
        return B::template conv_transpose<N>(v[0], v[1], b, opt);
      },
      [opt, xs, ws, has_bias](BackwardContext<B>& c) {
        ConvOptions<N> o;
        o.stride = opt.stride;
        o.padding = opt.padding;
        o.dilation = opt.dilation;
        o.groups = opt.groups;
        if (c.needs(0)) {
          // padding_out >= stride (allowed when < dilation) leaves extra rows: crop.
          c.set(0, conv_crop<B>(conv_call<B, N>(c.grad, c.input(1), o), xs));
        }
        if (c.needs(1)) {
          const AP<B> x = c.input(0);
          bool done = false;
          if constexpr (HasConvBackward<B, N>) {
            // dw of the transposed conv = dw of the forward conv from dy to x.
            if (direct_grad<B>(x, c.grad)) {
              c.set(1, conv_weight_backward_inner<B, N>(c.grad, x, ws, o));
              done = true;
            }
          }
          if (!done) {
            c.set(1, conv_weight_grad<B, N>(c.grad, x, ws, opt.stride, opt.padding, opt.dilation,
                                            opt.groups));
          }
        }
        if (has_bias && c.needs(2)) c.set(2, conv_bias_grad<B>(c.grad));
      });
}
}  // namespace rules

template <class B>
template <std::size_t N>
AdTensor<B> AdOps<B>::conv(const F& x, const F& w, const OptF& b, const ConvOptions<N>& opt) {
  return rules::conv_record<B, N>(ir::Conv<N>::name, x, w, b, opt);
}
template <class B>
template <std::size_t N>
AdTensor<B> AdOps<B>::conv_transpose(const F& x, const F& w, const OptF& b,
                                     const ConvTransposeOptions<N>& opt) {
  return rules::conv_transpose_record<B, N>(ir::ConvTranspose<N>::name, x, w, b, opt);
}

// unfold4d and fold4d are adjoint linear maps (torch.nn.functional.unfold/fold).
template <class B>
AdTensor<B> AdOps<B>::unfold4d(const F& x, const Arr2& kernel, const UnfoldOptions& opt) {
  const Shape xs = B::float_shape(x.inner);
  const std::array<std::int64_t, 2> size{xs[2], xs[3]};
  return Recorder<B>::unary(
      "unfold4d", Bound::Memory, kSaveNothing, x,
      [kernel, opt](typename B::FloatTensor v) { return B::unfold4d(v, kernel, opt); },
      [size, kernel, opt](BackwardContext<B>& c) {
        c.set(0, AdOps<B>::fold4d(c.grad, size, kernel, opt));
      });
}

template <class B>
AdTensor<B> AdOps<B>::fold4d(const F& x, const Arr2& output_size, const Arr2& kernel,
                             const UnfoldOptions& opt) {
  return Recorder<B>::unary(
      "fold4d", Bound::Memory, kSaveNothing, x,
      [output_size, kernel, opt](typename B::FloatTensor v) {
        return B::fold4d(v, output_size, kernel, opt);
      },
      [kernel, opt](BackwardContext<B>& c) { c.set(0, AdOps<B>::unfold4d(c.grad, kernel, opt)); });
}

}  // namespace ember::autodiff

#include "ember/autodiff/impl/conv_deform.hpp"
