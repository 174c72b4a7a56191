// Convolutions as free functions (Burn's burn::tensor::module conv functions):
// conv1d/2d/3d, conv_transpose1d/2d/3d, deform_conv2d, unfold4d, fold4d.
//
// Every argument is checked by the op's description (ember/ir/conv.hpp, src/ir/conv.cpp), the
// one copy of each shape rule; errors name the op and the shapes:
//   ShapeError  channel / group / bias / offset / mask mismatches, output size <= 0
//   ValueError  stride or dilation < 1, padding < 0, groups < 1, bad padding_out
//   DTypeError  operands of different float dtypes
// Ranks are part of the types (x is Tensor<B, N + 2>), so a wrong rank does not compile.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <type_traits>
#include <vector>

#include "ember/backend/conv.hpp"
#include "ember/core/autocast.hpp"
#include "ember/ir/conv.hpp"
#include "ember/tensor/infer.hpp"
#include "ember/tensor/tensor.hpp"

namespace ember::module {

using ember::ConvOptions;
using ember::ConvTransposeOptions;
using ember::DeformConvOptions;
using ember::UnfoldOptions;

namespace detail {

template <class B, std::size_t D>
std::optional<typename B::FloatTensor> prim_of(const std::optional<Tensor<B, D>>& t) {
  if (!t) return std::nullopt;
  return t->primitive();
}

template <class B>
using OptBias = std::type_identity_t<std::optional<Tensor<B, 1>>>;

/// A convolution's operands as it runs: cast to the autocast dtype under Autocast
/// (ember/core/autocast.hpp), else as given.
template <class B, std::size_t D>
struct ConvOperands {
  Tensor<B, D> x, weight;
  std::optional<Tensor<B, 1>> bias;
};
template <class B, std::size_t D>
ConvOperands<B, D> autocast_operands(const Tensor<B, D>& x, const Tensor<B, D>& weight,
                                     const std::optional<Tensor<B, 1>>& bias) {
  return {ember::detail::autocast_lower(x), ember::detail::autocast_lower(weight),
          ember::detail::autocast_lower(bias)};
}

}  // namespace detail

// ---- convolution --------------------------------------------------------------------------

/// 1d convolution (torch.nn.functional.conv1d):
/// x [N, C_in, L], weight [C_out, C_in/groups, k], bias [C_out] -> [N, C_out, L_out] with
/// L_out = floor((L + 2p - d(k-1) - 1)/s) + 1. Float dtypes (f16/bf16 compute in f32).
/// Throws ShapeError (channels, groups, bias, output size), ValueError (options),
/// DTypeError (mixed dtypes).
template <class B>
Tensor<B, 3> conv1d(const Tensor<B, 3>& x, const Tensor<B, 3>& weight,
                    const detail::OptBias<B>& bias, const ConvOptions<1>& options = {}) {
  const auto a = detail::autocast_operands(x, weight, bias);
  ember::detail::ir_infer(ir::Conv<1>{options}, a.x, a.weight, a.bias);
  return Tensor<B, 3>(
      B::template conv<1>(a.x.primitive(), a.weight.primitive(), detail::prim_of(a.bias), options));
}

/// 2d convolution (torch.nn.functional.conv2d):
/// x [N, C_in, H, W], weight [C_out, C_in/groups, kh, kw], bias [C_out] -> [N, C_out, H_out,
/// W_out]. Output size per dim floor((L + 2p - d(k-1) - 1)/s) + 1. Throws as conv1d.
template <class B>
Tensor<B, 4> conv2d(const Tensor<B, 4>& x, const Tensor<B, 4>& weight,
                    const detail::OptBias<B>& bias, const ConvOptions<2>& options = {}) {
  const auto a = detail::autocast_operands(x, weight, bias);
  ember::detail::ir_infer(ir::Conv<2>{options}, a.x, a.weight, a.bias);
  return Tensor<B, 4>(
      B::template conv<2>(a.x.primitive(), a.weight.primitive(), detail::prim_of(a.bias), options));
}

/// 3d convolution (torch.nn.functional.conv3d):
/// x [N, C_in, D, H, W], weight [C_out, C_in/groups, kd, kh, kw] -> [N, C_out, D_o, H_o, W_o].
/// Throws as conv1d.
template <class B>
Tensor<B, 5> conv3d(const Tensor<B, 5>& x, const Tensor<B, 5>& weight,
                    const detail::OptBias<B>& bias, const ConvOptions<3>& options = {}) {
  const auto a = detail::autocast_operands(x, weight, bias);
  ember::detail::ir_infer(ir::Conv<3>{options}, a.x, a.weight, a.bias);
  return Tensor<B, 5>(
      B::template conv<3>(a.x.primitive(), a.weight.primitive(), detail::prim_of(a.bias), options));
}

// ---- transposed convolution ---------------------------------------------------------------

/// 1d transposed convolution (torch.nn.functional.conv_transpose1d):
/// x [N, C_in, L], weight [C_in, C_out/groups, k], bias [C_out] -> [N, C_out, L_out] with
/// L_out = (L-1)s - 2p + d(k-1) + padding_out + 1. padding_out must be smaller than stride
/// or dilation (ValueError). Throws ShapeError / DTypeError as conv1d.
template <class B>
Tensor<B, 3> conv_transpose1d(const Tensor<B, 3>& x, const Tensor<B, 3>& weight,
                              const detail::OptBias<B>& bias,
                              const ConvTransposeOptions<1>& options = {}) {
  const auto a = detail::autocast_operands(x, weight, bias);
  ember::detail::ir_infer(ir::ConvTranspose<1>{options}, a.x, a.weight, a.bias);
  return Tensor<B, 3>(B::template conv_transpose<1>(a.x.primitive(), a.weight.primitive(),
                                                    detail::prim_of(a.bias), options));
}

/// 2d transposed convolution (torch.nn.functional.conv_transpose2d):
/// x [N, C_in, H, W], weight [C_in, C_out/groups, kh, kw] -> [N, C_out, H_out, W_out].
template <class B>
Tensor<B, 4> conv_transpose2d(const Tensor<B, 4>& x, const Tensor<B, 4>& weight,
                              const detail::OptBias<B>& bias,
                              const ConvTransposeOptions<2>& options = {}) {
  const auto a = detail::autocast_operands(x, weight, bias);
  ember::detail::ir_infer(ir::ConvTranspose<2>{options}, a.x, a.weight, a.bias);
  return Tensor<B, 4>(B::template conv_transpose<2>(a.x.primitive(), a.weight.primitive(),
                                                    detail::prim_of(a.bias), options));
}

/// 3d transposed convolution (torch.nn.functional.conv_transpose3d):
/// x [N, C_in, D, H, W], weight [C_in, C_out/groups, kd, kh, kw] -> [N, C_out, D_o, H_o, W_o].
template <class B>
Tensor<B, 5> conv_transpose3d(const Tensor<B, 5>& x, const Tensor<B, 5>& weight,
                              const detail::OptBias<B>& bias,
                              const ConvTransposeOptions<3>& options = {}) {
  const auto a = detail::autocast_operands(x, weight, bias);
  ember::detail::ir_infer(ir::ConvTranspose<3>{options}, a.x, a.weight, a.bias);
  return Tensor<B, 5>(B::template conv_transpose<3>(a.x.primitive(), a.weight.primitive(),
                                                    detail::prim_of(a.bias), options));
}

// ---- deformable convolution ---------------------------------------------------------------

/// Deformable 2d convolution (torchvision.ops.deform_conv2d; Dai et al. 2017, v2 with mask
/// Zhu et al. 2019): x [N, C_in, H, W], offset [N, 2*offset_groups*kh*kw, H_out, W_out]
/// ((dy, dx) pairs per kernel position), weight [C_out, C_in/weight_groups, kh, kw],
/// mask [N, offset_groups*kh*kw, H_out, W_out], bias [C_out] -> [N, C_out, H_out, W_out].
/// Samples bilinearly, zero outside the input. Throws ShapeError (channels, groups, offset
/// or mask shape, bias, output size), ValueError (options), DTypeError (mixed dtypes).
template <class B>
Tensor<B, 4> deform_conv2d(const Tensor<B, 4>& x, const Tensor<B, 4>& offset,
                           const Tensor<B, 4>& weight,
                           const std::type_identity_t<std::optional<Tensor<B, 4>>>& mask,
                           const detail::OptBias<B>& bias, const DeformConvOptions& options = {}) {
  ember::detail::ir_infer(ir::DeformConv2d{options}, x, offset, weight, mask, bias);
  std::optional<typename B::FloatTensor> mp;
  if (mask) mp = mask->primitive();
  return Tensor<B, 4>(B::deform_conv2d(x.primitive(), offset.primitive(), weight.primitive(), mp,
                                       detail::prim_of(bias), options));
}

// ---- unfold / fold ------------------------------------------------------------------------

/// Sliding local blocks (torch.nn.functional.unfold): x [N, C, H, W] -> [N, C*kh*kw, L],
/// L the number of block positions (conv output size per dim). Rows are ordered channel
/// major, then kernel row, then kernel column. Throws ValueError (kernel size < 1 or bad
/// options), ShapeError (no block fits).
template <class B>
Tensor<B, 3> unfold4d(const Tensor<B, 4>& x, const std::array<std::int64_t, 2>& kernel_size,
                      const UnfoldOptions& options = {}) {
  ember::detail::ir_infer(ir::Unfold4d{kernel_size, options}, x);
  return Tensor<B, 3>(B::unfold4d(x.primitive(), kernel_size, options));
}

/// Combines sliding blocks into a tensor, summing overlaps (torch.nn.functional.fold; the
/// adjoint of unfold4d): x [N, C*kh*kw, L] -> [N, C, output_size[0], output_size[1]].
/// Throws ValueError (kernel or output size < 1, bad options), ShapeError (dim 1 not a
/// multiple of kh*kw, L not the number of blocks of output_size).
template <class B>
Tensor<B, 4> fold4d(const Tensor<B, 3>& x, const std::array<std::int64_t, 2>& output_size,
                    const std::array<std::int64_t, 2>& kernel_size,
                    const UnfoldOptions& options = {}) {
  ember::detail::ir_infer(ir::Fold4d{output_size, kernel_size, options}, x);
  return Tensor<B, 4>(B::fold4d(x.primitive(), output_size, kernel_size, options));
}

}  // namespace ember::module
