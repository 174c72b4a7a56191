// Convolutions as free functions (Burn's burn::tensor::module conv functions):
// conv1d/2d/3d, conv_transpose1d/2d/3d, deform_conv2d, unfold4d, fold4d.
//
// Every argument is checked here; errors name the op and the shapes:
//   ShapeError  channel / group / bias / offset / mask mismatches, output size <= 0
//   ValueError  stride or dilation < 1, padding < 0, groups < 1, bad padding_out
//   DTypeError  operands of different float dtypes
// Ranks are part of the types (x is Tensor<B, N + 2>), so a wrong rank does not compile.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "ember/backend/conv.hpp"
#include "ember/tensor/tensor.hpp"

namespace ember::module {

using ember::ConvOptions;
using ember::ConvTransposeOptions;
using ember::DeformConvOptions;
using ember::UnfoldOptions;

namespace detail {

using i64 = std::int64_t;

template <std::size_t N>
std::string arr_str(const std::array<i64, N>& a) {
  std::ostringstream os;
  os << "[";
  for (std::size_t i = 0; i < N; ++i) os << (i ? ", " : "") << a[i];
  os << "]";
  return os.str();
}

template <std::size_t N>
void check_spatial_options(const char* op, const std::array<i64, N>& stride,
                           const std::array<i64, N>& padding, const std::array<i64, N>& dilation) {
  for (std::size_t i = 0; i < N; ++i) {
    if (stride[i] < 1)
      ember::detail::fail<ValueError>(op, "stride ", arr_str(stride), " must be >= 1");
    if (padding[i] < 0)
      ember::detail::fail<ValueError>(op, "padding ", arr_str(padding), " must be >= 0");
    if (dilation[i] < 1)
      ember::detail::fail<ValueError>(op, "dilation ", arr_str(dilation), " must be >= 1");
  }
}

inline void check_dtype(const char* op, const char* what, DType x, DType other) {
  if (x != other)
    ember::detail::fail<DTypeError>(op, what, " dtype ", other, " differs from input dtype ", x);
}

inline void check_bias(const char* op, const std::optional<Shape>& bias, i64 c_out,
                       const Shape& w) {
  if (bias && (*bias)[0] != c_out)
    ember::detail::fail<ShapeError>(op, "bias of shape ", *bias, " does not match the ", c_out,
                                    " output channels of weight ", w);
}

/// Output size of a convolution along one dim (PyTorch Conv docs):
/// floor((L + 2p - d(k-1) - 1) / s) + 1; throws ShapeError when <= 0.
inline i64 conv_out_size(const char* op, const Shape& x, const Shape& w, std::size_t i, i64 L,
                         i64 k, i64 s, i64 p, i64 d) {
  const i64 num = L + 2 * p - d * (k - 1) - 1;
  const i64 out = num < 0 ? 0 : num / s + 1;
  if (out <= 0)
    ember::detail::fail<ShapeError>(op, "output size ", out, " along spatial dim ", i,
                                    " is not positive: input ", x, ", kernel ", w, " (size ", k,
                                    ", padding ", p, ", dilation ", d, ")");
  return out;
}

/// Checks of conv1d/2d/3d; returns the output shape.
template <std::size_t N>
Shape check_conv(const char* op, const Shape& x, const Shape& w, const std::optional<Shape>& bias,
                 const ConvOptions<N>& o) {
  check_spatial_options<N>(op, o.stride, o.padding, o.dilation);
  if (o.groups < 1) ember::detail::fail<ValueError>(op, "groups ", o.groups, " must be >= 1");
  const i64 c_in = x[1], c_out = w[0];
  if (c_in % o.groups != 0)
    ember::detail::fail<ShapeError>(op, "groups ", o.groups, " does not divide the ", c_in,
                                    " input channels of input ", x);
  if (c_out % o.groups != 0)
    ember::detail::fail<ShapeError>(op, "groups ", o.groups, " does not divide the ", c_out,
                                    " output channels of weight ", w);
  if (w[1] * o.groups != c_in)
    ember::detail::fail<ShapeError>(op, "input ", x, " has ", c_in, " channels but weight ", w,
                                    " with groups ", o.groups, " expects ", w[1] * o.groups);
  check_bias(op, bias, c_out, w);
  Shape out{x[0], c_out};
  for (std::size_t i = 0; i < N; ++i) {
    if (w[2 + i] < 1) ember::detail::fail<ShapeError>(op, "weight ", w, " has an empty kernel");
    out.dims.push_back(
        conv_out_size(op, x, w, i, x[2 + i], w[2 + i], o.stride[i], o.padding[i], o.dilation[i]));
  }
  return out;
}

/// Checks of conv_transpose1d/2d/3d; returns the output shape
/// (L-1)s - 2p + d(k-1) + padding_out + 1 (PyTorch ConvTranspose docs).
template <std::size_t N>
Shape check_conv_transpose(const char* op, const Shape& x, const Shape& w,
                           const std::optional<Shape>& bias, const ConvTransposeOptions<N>& o) {
  check_spatial_options<N>(op, o.stride, o.padding, o.dilation);
  if (o.groups < 1) ember::detail::fail<ValueError>(op, "groups ", o.groups, " must be >= 1");
  for (std::size_t i = 0; i < N; ++i) {
    if (o.padding_out[i] < 0 ||
        (o.padding_out[i] >= o.stride[i] && o.padding_out[i] >= o.dilation[i]))
      ember::detail::fail<ValueError>(op, "padding_out ", arr_str(o.padding_out),
                                      " must be >= 0 and smaller than stride ", arr_str(o.stride),
                                      " or dilation ", arr_str(o.dilation));
  }
  const i64 c_in = x[1];
  if (c_in % o.groups != 0)
    ember::detail::fail<ShapeError>(op, "groups ", o.groups, " does not divide the ", c_in,
                                    " input channels of input ", x);
  if (w[0] != c_in)
    ember::detail::fail<ShapeError>(op, "input ", x, " has ", c_in, " channels but weight ", w,
                                    " expects ", w[0], " (weight is [C_in, C_out/groups, ...k])");
  const i64 c_out = w[1] * o.groups;
  check_bias(op, bias, c_out, w);
  Shape out{x[0], c_out};
  for (std::size_t i = 0; i < N; ++i) {
    if (w[2 + i] < 1) ember::detail::fail<ShapeError>(op, "weight ", w, " has an empty kernel");
    const i64 s = (x[2 + i] - 1) * o.stride[i] - 2 * o.padding[i] + o.dilation[i] * (w[2 + i] - 1) +
                  o.padding_out[i] + 1;
    if (s <= 0)
      ember::detail::fail<ShapeError>(op, "output size ", s, " along spatial dim ", i,
                                      " is not positive: input ", x, ", kernel ", w, " (padding ",
                                      o.padding[i], ")");
    out.dims.push_back(s);
  }
  return out;
}

template <class B, std::size_t D>
std::optional<Shape> shape_of(const std::optional<Tensor<B, D>>& t) {
  if (!t) return std::nullopt;
  return t->shape();
}
template <class B, std::size_t D>
std::optional<typename B::FloatTensor> prim_of(const std::optional<Tensor<B, D>>& t) {
  if (!t) return std::nullopt;
  return t->primitive();
}

template <class B, std::size_t D>
void check_operand_dtypes(const char* op, const Tensor<B, D>& x, const Tensor<B, D>& w,
                          const std::optional<Tensor<B, 1>>& bias) {
  check_dtype(op, "weight", x.dtype(), w.dtype());
  if (bias) check_dtype(op, "bias", x.dtype(), bias->dtype());
}

template <class B>
using OptBias = std::type_identity_t<std::optional<Tensor<B, 1>>>;

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
  detail::check_operand_dtypes("conv1d", x, weight, bias);
  detail::check_conv<1>("conv1d", x.shape(), weight.shape(), detail::shape_of(bias), options);
  return Tensor<B, 3>(B::template conv<1>(x.primitive(), weight.primitive(), detail::prim_of(bias), options));
}

/// 2d convolution (torch.nn.functional.conv2d):
/// x [N, C_in, H, W], weight [C_out, C_in/groups, kh, kw], bias [C_out] -> [N, C_out, H_out,
/// W_out]. Output size per dim floor((L + 2p - d(k-1) - 1)/s) + 1. Throws as conv1d.
template <class B>
Tensor<B, 4> conv2d(const Tensor<B, 4>& x, const Tensor<B, 4>& weight,
                    const detail::OptBias<B>& bias, const ConvOptions<2>& options = {}) {
  detail::check_operand_dtypes("conv2d", x, weight, bias);
  detail::check_conv<2>("conv2d", x.shape(), weight.shape(), detail::shape_of(bias), options);
  return Tensor<B, 4>(B::template conv<2>(x.primitive(), weight.primitive(), detail::prim_of(bias), options));
}

/// 3d convolution (torch.nn.functional.conv3d):
/// x [N, C_in, D, H, W], weight [C_out, C_in/groups, kd, kh, kw] -> [N, C_out, D_o, H_o, W_o].
/// Throws as conv1d.
template <class B>
Tensor<B, 5> conv3d(const Tensor<B, 5>& x, const Tensor<B, 5>& weight,
                    const detail::OptBias<B>& bias, const ConvOptions<3>& options = {}) {
  detail::check_operand_dtypes("conv3d", x, weight, bias);
  detail::check_conv<3>("conv3d", x.shape(), weight.shape(), detail::shape_of(bias), options);
  return Tensor<B, 5>(B::template conv<3>(x.primitive(), weight.primitive(), detail::prim_of(bias), options));
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
  detail::check_operand_dtypes("conv_transpose1d", x, weight, bias);
  detail::check_conv_transpose<1>("conv_transpose1d", x.shape(), weight.shape(),
                                  detail::shape_of(bias), options);
  return Tensor<B, 3>(
      B::template conv_transpose<1>(x.primitive(), weight.primitive(), detail::prim_of(bias), options));
}

/// 2d transposed convolution (torch.nn.functional.conv_transpose2d):
/// x [N, C_in, H, W], weight [C_in, C_out/groups, kh, kw] -> [N, C_out, H_out, W_out].
template <class B>
Tensor<B, 4> conv_transpose2d(const Tensor<B, 4>& x, const Tensor<B, 4>& weight,
                              const detail::OptBias<B>& bias,
                              const ConvTransposeOptions<2>& options = {}) {
  detail::check_operand_dtypes("conv_transpose2d", x, weight, bias);
  detail::check_conv_transpose<2>("conv_transpose2d", x.shape(), weight.shape(),
                                  detail::shape_of(bias), options);
  return Tensor<B, 4>(
      B::template conv_transpose<2>(x.primitive(), weight.primitive(), detail::prim_of(bias), options));
}

/// 3d transposed convolution (torch.nn.functional.conv_transpose3d):
/// x [N, C_in, D, H, W], weight [C_in, C_out/groups, kd, kh, kw] -> [N, C_out, D_o, H_o, W_o].
template <class B>
Tensor<B, 5> conv_transpose3d(const Tensor<B, 5>& x, const Tensor<B, 5>& weight,
                              const detail::OptBias<B>& bias,
                              const ConvTransposeOptions<3>& options = {}) {
  detail::check_operand_dtypes("conv_transpose3d", x, weight, bias);
  detail::check_conv_transpose<3>("conv_transpose3d", x.shape(), weight.shape(),
                                  detail::shape_of(bias), options);
  return Tensor<B, 5>(
      B::template conv_transpose<3>(x.primitive(), weight.primitive(), detail::prim_of(bias), options));
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
  constexpr const char* op = "deform_conv2d";
  using ember::detail::fail;
  detail::check_operand_dtypes(op, x, weight, bias);
  detail::check_dtype(op, "offset", x.dtype(), offset.dtype());
  if (mask) detail::check_dtype(op, "mask", x.dtype(), mask->dtype());
  const Shape xs = x.shape(), ws = weight.shape(), os = offset.shape();
  ConvOptions<2> co{options.stride, options.padding, options.dilation, options.weight_groups};
  if (options.offset_groups < 1)
    fail<ValueError>(op, "offset_groups ", options.offset_groups, " must be >= 1");
  const Shape out = detail::check_conv<2>(op, xs, ws, detail::shape_of(bias), co);
  if (xs[1] % options.offset_groups != 0)
    fail<ShapeError>(op, "offset_groups ", options.offset_groups, " does not divide the ", xs[1],
                     " input channels of input ", xs);
  const std::int64_t kk = ws[2] * ws[3];
  const Shape want_off{xs[0], 2 * options.offset_groups * kk, out[2], out[3]};
  if (os != want_off)
    fail<ShapeError>(op, "offset of shape ", os, " does not match ", want_off,
                     " expected from input ", xs, ", weight ", ws, " and offset_groups ",
                     options.offset_groups);
  if (mask) {
    const Shape want_mask{xs[0], options.offset_groups * kk, out[2], out[3]};
    if (mask->shape() != want_mask)
      fail<ShapeError>(op, "mask of shape ", mask->shape(), " does not match ", want_mask,
                       " expected from input ", xs, ", weight ", ws, " and offset_groups ",
                       options.offset_groups);
  }
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
  constexpr const char* op = "unfold4d";
  detail::check_spatial_options<2>(op, options.stride, options.padding, options.dilation);
  if (kernel_size[0] < 1 || kernel_size[1] < 1)
    ember::detail::fail<ValueError>(op, "kernel_size ", detail::arr_str(kernel_size),
                                    " must be >= 1");
  const Shape xs = x.shape();
  const Shape ks{xs[1], xs[1], kernel_size[0], kernel_size[1]};
  for (std::size_t i = 0; i < 2; ++i)
    detail::conv_out_size(op, xs, ks, i, xs[2 + i], kernel_size[i], options.stride[i],
                          options.padding[i], options.dilation[i]);
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
  constexpr const char* op = "fold4d";
  using ember::detail::fail;
  detail::check_spatial_options<2>(op, options.stride, options.padding, options.dilation);
  if (kernel_size[0] < 1 || kernel_size[1] < 1)
    fail<ValueError>(op, "kernel_size ", detail::arr_str(kernel_size), " must be >= 1");
  if (output_size[0] < 1 || output_size[1] < 1)
    fail<ValueError>(op, "output_size ", detail::arr_str(output_size), " must be >= 1");
  const Shape xs = x.shape();
  const std::int64_t kk = kernel_size[0] * kernel_size[1];
  if (xs[1] % kk != 0)
    fail<ShapeError>(op, "input ", xs, ": dim 1 (", xs[1],
                     ") is not a multiple of the kernel size ", detail::arr_str(kernel_size));
  const Shape virt{xs[0], xs[1] / kk, output_size[0], output_size[1]};
  const Shape ks{1, 1, kernel_size[0], kernel_size[1]};
  std::int64_t blocks = 1;
  for (std::size_t i = 0; i < 2; ++i)
    blocks *= detail::conv_out_size(op, virt, ks, i, output_size[i], kernel_size[i],
                                    options.stride[i], options.padding[i], options.dilation[i]);
  if (xs[2] != blocks)
    fail<ShapeError>(op, "input ", xs, " has ", xs[2], " blocks but output_size ",
                     detail::arr_str(output_size), " with kernel ", detail::arr_str(kernel_size),
                     " gives ", blocks);
  return Tensor<B, 4>(B::fold4d(x.primitive(), output_size, kernel_size, options));
}

}  // namespace ember::module
