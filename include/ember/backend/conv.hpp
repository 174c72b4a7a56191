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

// Required functions (P = B::FloatTensor, all operands of one float dtype):
//   conv<K>(x [N, C_in, *S], weight [C_out, C_in/groups, *k], optional<P> bias [C_out],
//          ConvOptions<K>) -> [N, C_out, *S_out]           (K = 1, 2, 3)
//   conv_transpose<K>(x [N, C_in, *S], weight [C_in, C_out/groups, *k], optional<P> bias,
//          ConvTransposeOptions<K>) -> [N, C_out, *S_out]
//   deform_conv2d(x [N, C_in, H, W], offset [N, 2*og*kh*kw, Ho, Wo], weight
//          [C_out, C_in/wg, kh, kw], optional<P> mask [N, og*kh*kw, Ho, Wo], optional<P> bias,
//          DeformConvOptions) -> [N, C_out, Ho, Wo]
//   unfold4d(x [N, C, H, W], array<int64, 2> kernel, UnfoldOptions) -> [N, C*kh*kw, L]
//   fold4d(x [N, C*kh*kw, L], array<int64, 2> output_size, array<int64, 2> kernel,
//          UnfoldOptions) -> [N, C, H, W]

// Optional functions (Burn's ModuleOps conv backward functions; detected with `requires`, see
// HasConvBackward). Autodiff's conv and transposed-conv rules call them when the inner
// backend defines them and the backward pass is not itself recorded (no create_graph);
// otherwise the rules compose the gradients from conv / conv_transpose (differentiable).
// Unlike Burn they take the shape of the tensor they do not read (x for dx, the weight for
// dw), so Autodiff need not keep that tensor alive.
//   conv_x_backward<K>(output_grad [N, C_out, *S_out], weight [C_out, C_in/G, *k],
//          Shape x_shape [N, C_in, *S], ConvOptions<K>) -> [N, C_in, *S]
//       dx of y = conv<K>(x, weight; o): dx[n, ci, i] = sum_{co, o, k : o*s + k*d - p = i}
//       dy[n, co, o] w[co, ci, k] (ci in co's group; a transposed conv of dy)
//   conv_weight_backward<K>(x [N, C_in, *S], output_grad [N, C_out, *S_out],
//          Shape weight_shape [C_out, C_in/G, *k], ConvOptions<K>) -> weight_shape
//       dw[co, ci, k] = sum_{n, o} dy[n, co, o] x[n, ci, o*s + k*d - p] (zero outside x)
// Both also serve the transposed conv y = conv_transpose<K>(x, w): its dw is
// conv_weight_backward<K>(dy, x, w's shape, the same stride/padding/dilation/groups).

/// Whether B defines the optional conv_x_backward<N> and conv_weight_backward<N>.
template <class B, std::size_t N>
concept HasConvBackward = requires(const typename B::FloatTensor& f, const Shape& s,
                                   const ConvOptions<N>& o) {
  { B::template conv_x_backward<N>(f, f, s, o) } -> std::same_as<typename B::FloatTensor>;
  { B::template conv_weight_backward<N>(f, f, s, o) } -> std::same_as<typename B::FloatTensor>;
};

}  // namespace ember
