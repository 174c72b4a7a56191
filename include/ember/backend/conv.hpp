// Backend contract: convolution functions (Burn's ModuleOps conv part). See core.hpp for the
// conventions. The front end (ember/tensor/module/conv.hpp) validates every argument, so
// backends may assume valid shapes, options and matching float dtypes.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "ember/backend/core.hpp"

namespace ember {

/// Options of conv1d/2d/3d (Burn's ConvOptions): per spatial dim stride, zero padding on
/// both sides and dilation, plus the number of groups.
template <std::size_t N>
struct ConvOptions {
  std::array<std::int64_t, N> stride = filled(1);
  std::array<std::int64_t, N> padding = filled(0);
  std::array<std::int64_t, N> dilation = filled(1);
  std::int64_t groups = 1;

  static constexpr std::array<std::int64_t, N> filled(std::int64_t v) {
    std::array<std::int64_t, N> a{};
    a.fill(v);
    return a;
  }
};

/// Options of conv_transpose1d/2d/3d (Burn's ConvTransposeOptions). `padding_out` adds
/// that many rows/cols at the end of each output dim (PyTorch's output_padding).
template <std::size_t N>
struct ConvTransposeOptions {
  std::array<std::int64_t, N> stride = ConvOptions<N>::filled(1);
  std::array<std::int64_t, N> padding = ConvOptions<N>::filled(0);
  std::array<std::int64_t, N> padding_out = ConvOptions<N>::filled(0);
  std::array<std::int64_t, N> dilation = ConvOptions<N>::filled(1);
  std::int64_t groups = 1;
};

/// Options of deform_conv2d (Burn's DeformConvOptions).
struct DeformConvOptions {
  std::array<std::int64_t, 2> stride = {1, 1};
  std::array<std::int64_t, 2> padding = {0, 0};
  std::array<std::int64_t, 2> dilation = {1, 1};
  std::int64_t weight_groups = 1;
  std::int64_t offset_groups = 1;
};

/// Options of unfold4d/fold4d (Burn's UnfoldOptions).
struct UnfoldOptions {
  std::array<std::int64_t, 2> stride = {1, 1};
  std::array<std::int64_t, 2> padding = {0, 0};
  std::array<std::int64_t, 2> dilation = {1, 1};
};

// Required functions (P = B::FloatTensor, all operands of one float dtype):
//   convKd(x [N, C_in, *S], weight [C_out, C_in/groups, *k], optional<P> bias [C_out],
//          ConvOptions<K>) -> [N, C_out, *S_out]           (K = 1, 2, 3)
//   conv_transposeKd(x [N, C_in, *S], weight [C_in, C_out/groups, *k], optional<P> bias,
//          ConvTransposeOptions<K>) -> [N, C_out, *S_out]
//   deform_conv2d(x [N, C_in, H, W], offset [N, 2*og*kh*kw, Ho, Wo], weight
//          [C_out, C_in/wg, kh, kw], optional<P> mask [N, og*kh*kw, Ho, Wo], optional<P> bias,
//          DeformConvOptions) -> [N, C_out, Ho, Wo]
//   unfold4d(x [N, C, H, W], array<int64, 2> kernel, UnfoldOptions) -> [N, C*kh*kw, L]
//   fold4d(x [N, C*kh*kw, L], array<int64, 2> output_size, array<int64, 2> kernel,
//          UnfoldOptions) -> [N, C, H, W]
template <class B>
concept ConvBackend = CoreBackend<B> &&
    requires(const typename B::FloatTensor& f, const std::optional<typename B::FloatTensor>& o,
             const ConvOptions<1>& c1, const ConvOptions<2>& c2, const ConvOptions<3>& c3,
             const ConvTransposeOptions<1>& t1, const ConvTransposeOptions<2>& t2,
             const ConvTransposeOptions<3>& t3, const DeformConvOptions& dc,
             const UnfoldOptions& uo, const std::array<std::int64_t, 2>& k2) {
  { B::conv1d(f, f, o, c1) } -> std::same_as<typename B::FloatTensor>;
  { B::conv2d(f, f, o, c2) } -> std::same_as<typename B::FloatTensor>;
  { B::conv3d(f, f, o, c3) } -> std::same_as<typename B::FloatTensor>;
  { B::conv_transpose1d(f, f, o, t1) } -> std::same_as<typename B::FloatTensor>;
  { B::conv_transpose2d(f, f, o, t2) } -> std::same_as<typename B::FloatTensor>;
  { B::conv_transpose3d(f, f, o, t3) } -> std::same_as<typename B::FloatTensor>;
  { B::deform_conv2d(f, f, f, o, o, dc) } -> std::same_as<typename B::FloatTensor>;
  { B::unfold4d(f, k2, uo) } -> std::same_as<typename B::FloatTensor>;
  { B::fold4d(f, k2, k2, uo) } -> std::same_as<typename B::FloatTensor>;
};

// Optional functions (Burn's ModuleOps conv backward functions; detected with `requires`, see
// HasConvBackward). Autodiff's conv and transposed-conv rules call them when the inner
// backend defines them and the backward pass is not itself recorded (no create_graph);
// otherwise the rules compose the gradients from conv / conv_transpose (differentiable).
// Unlike Burn they take the shape of the tensor they do not read (x for dx, the weight for
// dw), so Autodiff need not keep that tensor alive.
//   convKd_x_backward(output_grad [N, C_out, *S_out], weight [C_out, C_in/G, *k],
//          Shape x_shape [N, C_in, *S], ConvOptions<K>) -> [N, C_in, *S]
//       dx of y = convKd(x, weight; o): dx[n, ci, i] = sum_{co, o, k : o*s + k*d - p = i}
//       dy[n, co, o] w[co, ci, k] (ci in co's group; a transposed conv of dy)
//   convKd_weight_backward(x [N, C_in, *S], output_grad [N, C_out, *S_out],
//          Shape weight_shape [C_out, C_in/G, *k], ConvOptions<K>) -> weight_shape
//       dw[co, ci, k] = sum_{n, o} dy[n, co, o] x[n, ci, o*s + k*d - p] (zero outside x)
// Both also serve the transposed conv y = conv_transposeKd(x, w): its dw is
// convKd_weight_backward(dy, x, w's shape, the same stride/padding/dilation/groups).

/// Whether B defines convKd_x_backward and convKd_weight_backward for K = N.
template <class B, std::size_t N>
constexpr bool has_conv_backward() {
  using P = typename B::FloatTensor;
  if constexpr (N == 1) {
    return requires(const P& f, const Shape& s, const ConvOptions<1>& o) {
      { B::conv1d_x_backward(f, f, s, o) } -> std::same_as<P>;
      { B::conv1d_weight_backward(f, f, s, o) } -> std::same_as<P>;
    };
  } else if constexpr (N == 2) {
    return requires(const P& f, const Shape& s, const ConvOptions<2>& o) {
      { B::conv2d_x_backward(f, f, s, o) } -> std::same_as<P>;
      { B::conv2d_weight_backward(f, f, s, o) } -> std::same_as<P>;
    };
  } else {
    return requires(const P& f, const Shape& s, const ConvOptions<3>& o) {
      { B::conv3d_x_backward(f, f, s, o) } -> std::same_as<P>;
      { B::conv3d_weight_backward(f, f, s, o) } -> std::same_as<P>;
    };
  }
}
template <class B, std::size_t N>
concept HasConvBackward = has_conv_backward<B, N>();

}  // namespace ember
