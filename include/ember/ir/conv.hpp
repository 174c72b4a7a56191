// Op descriptions: convolutions (ember/backend/conv.hpp), rank-generic over the number of
// spatial dims N (1, 2, 3).
#pragma once

#include <array>

#include "ember/core/options.hpp"
#include "ember/ir/desc.hpp"

namespace ember::ir {

/// x [B, C_in, *S] * weight [C_out, C_in / groups, *k] (+ bias [C_out]) -> [B, C_out, *S_out]
/// with S_out = floor((S + 2 p - d (k - 1) - 1) / s) + 1.
template <std::size_t N>
struct Conv {
  static constexpr const char* name = N == 1 ? "conv1d" : N == 2 ? "conv2d" : "conv3d";
  static constexpr Bound bound = Bound::Compute;
  ConvOptions<N> options;
  EMBER_IR_FIELDS(options)
  TensorType infer(const TensorType& x, const TensorType& weight,
                   const std::optional<TensorType>& bias) const;
};
/// x [B, C_in, *S] * weight [C_in, C_out / groups, *k] -> [B, C_out, *S_out] with
/// S_out = (S - 1) s - 2 p + d (k - 1) + padding_out + 1.
template <std::size_t N>
struct ConvTranspose {
  static constexpr const char* name = N == 1   ? "conv_transpose1d"
                                      : N == 2 ? "conv_transpose2d"
                                               : "conv_transpose3d";
  static constexpr Bound bound = Bound::Compute;
  ConvTransposeOptions<N> options;
  EMBER_IR_FIELDS(options)
  TensorType infer(const TensorType& x, const TensorType& weight,
                   const std::optional<TensorType>& bias) const;
};
/// dx of y = conv(x, weight): output_grad [B, C_out, *S_out], weight -> x_shape.
template <std::size_t N>
struct ConvXBackward {
  static constexpr const char* name = "conv_x_backward";
  static constexpr Bound bound = Bound::Compute;
  Shape x_shape;
  ConvOptions<N> options;
  EMBER_IR_FIELDS(x_shape, options)
  TensorType infer(const TensorType& output_grad, const TensorType& weight) const;
};
/// dweight of y = conv(x, weight): x, output_grad -> weight_shape.
template <std::size_t N>
struct ConvWeightBackward {
  static constexpr const char* name = "conv_weight_backward";
  static constexpr Bound bound = Bound::Compute;
  Shape weight_shape;
  ConvOptions<N> options;
  EMBER_IR_FIELDS(weight_shape, options)
  TensorType infer(const TensorType& x, const TensorType& output_grad) const;
};
/// torchvision.ops.deform_conv2d: x [B, C_in, H, W], offset [B, 2 og kh kw, Ho, Wo], weight
/// [C_out, C_in / wg, kh, kw], mask [B, og kh kw, Ho, Wo], bias [C_out] -> [B, C_out, Ho, Wo].
struct DeformConv2d {
  static constexpr const char* name = "deform_conv2d";
  static constexpr Bound bound = Bound::Compute;
  DeformConvOptions options;
  EMBER_IR_FIELDS(options)
  TensorType infer(const TensorType& x, const TensorType& offset, const TensorType& weight,
                   const std::optional<TensorType>& mask,
                   const std::optional<TensorType>& bias) const;
};
/// [B, C, H, W] -> [B, C kh kw, L] (torch.nn.functional.unfold).
struct Unfold4d {
  static constexpr const char* name = "unfold4d";
  static constexpr Bound bound = Bound::Memory;
  std::array<std::int64_t, 2> kernel_size{1, 1};
  UnfoldOptions options;
  EMBER_IR_FIELDS(kernel_size, options)
  TensorType infer(const TensorType& x) const;
};
/// [B, C kh kw, L] -> [B, C, H, W], summing overlaps (torch.nn.functional.fold).
struct Fold4d {
  static constexpr const char* name = "fold4d";
  static constexpr Bound bound = Bound::Memory;
  std::array<std::int64_t, 2> output_size{1, 1};
  std::array<std::int64_t, 2> kernel_size{1, 1};
  UnfoldOptions options;
  EMBER_IR_FIELDS(output_size, kernel_size, options)
  TensorType infer(const TensorType& x) const;
};

}  // namespace ember::ir

// Registry rows (see ember/ir/core.hpp for the columns); XN rows are templates over the
// number of spatial dims N, instantiated for the listed N.
// clang-format off
#define EMBER_IR_CONV(X, XN) \
  XN(REQ, F, F, conv, Conv, (const F&, const F&, const OptF&, const ConvOptions<N>&), (1, 2, 3)) \
  XN(REQ, F, F, conv_transpose, ConvTranspose, (const F&, const F&, const OptF&, const ConvTransposeOptions<N>&), (1, 2, 3)) \
  XN(EXT, F, F, conv_x_backward, ConvXBackward, (const F&, const F&, const Shape&, const ConvOptions<N>&), (1, 2, 3)) \
  XN(EXT, F, F, conv_weight_backward, ConvWeightBackward, (const F&, const F&, const Shape&, const ConvOptions<N>&), (1, 2, 3)) \
  X(REQ, F, F, deform_conv2d, DeformConv2d, (const F&, const F&, const F&, const OptF&, const OptF&, const DeformConvOptions&)) \
  X(REQ, F, F, unfold4d, Unfold4d, (const F&, const Arr2&, const UnfoldOptions&)) \
  X(REQ, F, F, fold4d, Fold4d, (const F&, const Arr2&, const Arr2&, const UnfoldOptions&))
// clang-format on
