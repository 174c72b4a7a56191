// infer of the convolution descriptions (ember/ir/conv.hpp): the one copy of their shape
// rules. The front end (ember/tensor/module/conv.hpp) calls these, so the messages here are
// the ones users see.
#include "ember/ir/conv.hpp"

#include <sstream>
#include <string>

#include "spatial.hpp"

namespace ember::ir {

using ember::detail::fail;
using spatial::arr_str;

namespace {

void check_dtype(const char* op, const char* what, const TensorType& x, const TensorType& other) {
  if (x.dtype != other.dtype)
    fail<DTypeError>(op, what, " dtype ", other.dtype, " differs from input dtype ", x.dtype);
}

void check_bias(const char* op, const std::optional<TensorType>& bias, std::int64_t c_out,
                const Shape& w) {
  if (!bias) return;
  if (bias->shape.rank() != 1 || bias->shape[0] != c_out)
    fail<ShapeError>(op, "bias of shape ", bias->shape, " does not match the ", c_out,
                     " output channels of weight ", w);
}

/// floor((L + 2p - d(k-1) - 1) / s) + 1 (PyTorch Conv docs); ShapeError when <= 0.
std::int64_t conv_out_size(const char* op, const Shape& x, const Shape& w, std::size_t i,
                           std::int64_t L, std::int64_t k, std::int64_t s, std::int64_t p,
                           std::int64_t d) {
  const std::int64_t num = L + 2 * p - d * (k - 1) - 1;
  const std::int64_t out = num < 0 ? 0 : num / s + 1;
  if (out <= 0)
    fail<ShapeError>(op, "output size ", out, " along spatial dim ", i, " is not positive: input ",
                     x, ", kernel ", w, " (size ", k, ", padding ", p, ", dilation ", d, ")");
  return out;
}

/// The shape rule of conv<N> under the name `op` (conv1d/2d/3d, deform_conv2d).
template <std::size_t N>
Shape conv_shape(const char* op, const TensorType& x, const TensorType& w,
                 const std::optional<TensorType>& bias, const ConvOptions<N>& o) {
  spatial::check_rank<N>(op, x, "input");
  spatial::check_rank<N>(op, w, "weight");
  check_dtype(op, "weight", x, w);
  if (bias) check_dtype(op, "bias", x, *bias);
  spatial::check_options<N>(op, o.stride, o.padding, o.dilation);
  if (o.groups < 1) fail<ValueError>(op, "groups ", o.groups, " must be >= 1");
  const Shape &xs = x.shape, &ws = w.shape;
  const std::int64_t c_in = xs[1], c_out = ws[0];
  if (c_in % o.groups != 0)
    fail<ShapeError>(op, "groups ", o.groups, " does not divide the ", c_in,
                     " input channels of input ", xs);
  if (c_out % o.groups != 0)
    fail<ShapeError>(op, "groups ", o.groups, " does not divide the ", c_out,
                     " output channels of weight ", ws);
  if (ws[1] * o.groups != c_in)
    fail<ShapeError>(op, "input ", xs, " has ", c_in, " channels but weight ", ws, " with groups ",
                     o.groups, " expects ", ws[1] * o.groups);
  check_bias(op, bias, c_out, ws);
  Shape out{xs[0], c_out};
  for (std::size_t i = 0; i < N; ++i) {
    if (ws[2 + i] < 1) fail<ShapeError>(op, "weight ", ws, " has an empty kernel");
    out.dims.push_back(conv_out_size(op, xs, ws, i, xs[2 + i], ws[2 + i], o.stride[i], o.padding[i],
                                     o.dilation[i]));
  }
  return out;
}

}  // namespace

template <std::size_t N>
TensorType Conv<N>::infer(const TensorType& x, const TensorType& weight,
                          const std::optional<TensorType>& bias) const {
  return {conv_shape<N>(name, x, weight, bias, options), x.dtype};
}

/// Output size per dim (L-1)s - 2p + d(k-1) + padding_out + 1 (PyTorch ConvTranspose docs).
template <std::size_t N>
TensorType ConvTranspose<N>::infer(const TensorType& x, const TensorType& weight,
                                   const std::optional<TensorType>& bias) const {
  const char* op = name;
  const ConvTransposeOptions<N>& o = options;
  spatial::check_rank<N>(op, x, "input");
  spatial::check_rank<N>(op, weight, "weight");
  check_dtype(op, "weight", x, weight);
  if (bias) check_dtype(op, "bias", x, *bias);
  spatial::check_options<N>(op, o.stride, o.padding, o.dilation);
  if (o.groups < 1) fail<ValueError>(op, "groups ", o.groups, " must be >= 1");
  for (std::size_t i = 0; i < N; ++i) {
    if (o.padding_out[i] < 0 ||
        (o.padding_out[i] >= o.stride[i] && o.padding_out[i] >= o.dilation[i]))
      fail<ValueError>(op, "padding_out ", arr_str(o.padding_out),
                       " must be >= 0 and smaller than stride ", arr_str(o.stride), " or dilation ",
                       arr_str(o.dilation));
  }
  const Shape &xs = x.shape, &ws = weight.shape;
  const std::int64_t c_in = xs[1];
  if (c_in % o.groups != 0)
    fail<ShapeError>(op, "groups ", o.groups, " does not divide the ", c_in,
                     " input channels of input ", xs);
  if (ws[0] != c_in)
    fail<ShapeError>(op, "input ", xs, " has ", c_in, " channels but weight ", ws, " expects ",
                     ws[0], " (weight is [C_in, C_out/groups, ...k])");
  const std::int64_t c_out = ws[1] * o.groups;
  check_bias(op, bias, c_out, ws);
  Shape out{xs[0], c_out};
  for (std::size_t i = 0; i < N; ++i) {
    if (ws[2 + i] < 1) fail<ShapeError>(op, "weight ", ws, " has an empty kernel");
    const std::int64_t s = (xs[2 + i] - 1) * o.stride[i] - 2 * o.padding[i] +
                           o.dilation[i] * (ws[2 + i] - 1) + o.padding_out[i] + 1;
    if (s <= 0)
      fail<ShapeError>(op, "output size ", s, " along spatial dim ", i, " is not positive: input ",
                       xs, ", kernel ", ws, " (padding ", o.padding[i], ")");
    out.dims.push_back(s);
  }
  return {out, x.dtype};
}

template <std::size_t N>
TensorType ConvXBackward<N>::infer(const TensorType& output_grad, const TensorType& weight) const {
  spatial::check_rank<N>(name, output_grad, "output gradient");
  check_dtype(name, "weight", output_grad, weight);
  return {x_shape, output_grad.dtype};
}
template <std::size_t N>
TensorType ConvWeightBackward<N>::infer(const TensorType& x, const TensorType& output_grad) const {
  spatial::check_rank<N>(name, x, "input");
  check_dtype(name, "output gradient", x, output_grad);
  return {weight_shape, x.dtype};
}
template struct Conv<1>;
template struct Conv<2>;
template struct Conv<3>;
template struct ConvTranspose<1>;
template struct ConvTranspose<2>;
template struct ConvTranspose<3>;
template struct ConvXBackward<1>;
template struct ConvXBackward<2>;
template struct ConvXBackward<3>;
template struct ConvWeightBackward<1>;
template struct ConvWeightBackward<2>;
template struct ConvWeightBackward<3>;

TensorType DeformConv2d::infer(const TensorType& x, const TensorType& offset,
                               const TensorType& weight, const std::optional<TensorType>& mask,
                               const std::optional<TensorType>& bias) const {
  const char* op = name;
  const DeformConvOptions& o = options;
  spatial::check_rank<2>(op, offset, "offset");
  if (mask) spatial::check_rank<2>(op, *mask, "mask");
  check_dtype(op, "weight", x, weight);
  if (bias) check_dtype(op, "bias", x, *bias);
  check_dtype(op, "offset", x, offset);
  if (mask) check_dtype(op, "mask", x, *mask);
  if (o.offset_groups < 1) fail<ValueError>(op, "offset_groups ", o.offset_groups, " must be >= 1");
  const ConvOptions<2> co{o.stride, o.padding, o.dilation, o.weight_groups};
  const Shape out = conv_shape<2>(op, x, weight, bias, co);
  const Shape &xs = x.shape, &ws = weight.shape;
  if (xs[1] % o.offset_groups != 0)
    fail<ShapeError>(op, "offset_groups ", o.offset_groups, " does not divide the ", xs[1],
                     " input channels of input ", xs);
  const std::int64_t kk = ws[2] * ws[3];
  const Shape want_off{xs[0], 2 * o.offset_groups * kk, out[2], out[3]};
  if (offset.shape != want_off)
    fail<ShapeError>(op, "offset of shape ", offset.shape, " does not match ", want_off,
                     " expected from input ", xs, ", weight ", ws, " and offset_groups ",
                     o.offset_groups);
  if (mask) {
    const Shape want_mask{xs[0], o.offset_groups * kk, out[2], out[3]};
    if (mask->shape != want_mask)
      fail<ShapeError>(op, "mask of shape ", mask->shape, " does not match ", want_mask,
                       " expected from input ", xs, ", weight ", ws, " and offset_groups ",
                       o.offset_groups);
  }
  return {out, x.dtype};
}

TensorType Unfold4d::infer(const TensorType& x) const {
  const char* op = name;
  spatial::check_rank<2>(op, x, "input");
  spatial::check_options<2>(op, options.stride, options.padding, options.dilation);
  if (kernel_size[0] < 1 || kernel_size[1] < 1)
    fail<ValueError>(op, "kernel_size ", arr_str(kernel_size), " must be >= 1");
  const Shape& xs = x.shape;
  const Shape ks{xs[1], xs[1], kernel_size[0], kernel_size[1]};
  std::int64_t blocks = 1;
  for (std::size_t i = 0; i < 2; ++i)
    blocks *= conv_out_size(op, xs, ks, i, xs[2 + i], kernel_size[i], options.stride[i],
                            options.padding[i], options.dilation[i]);
  return {Shape{xs[0], xs[1] * kernel_size[0] * kernel_size[1], blocks}, x.dtype};
}

TensorType Fold4d::infer(const TensorType& x) const {
  const char* op = name;
  check::rank(op, x, 3, "input [N, C*kh*kw, L]");
  spatial::check_options<2>(op, options.stride, options.padding, options.dilation);
  if (kernel_size[0] < 1 || kernel_size[1] < 1)
    fail<ValueError>(op, "kernel_size ", arr_str(kernel_size), " must be >= 1");
  if (output_size[0] < 1 || output_size[1] < 1)
    fail<ValueError>(op, "output_size ", arr_str(output_size), " must be >= 1");
  const Shape& xs = x.shape;
  const std::int64_t kk = kernel_size[0] * kernel_size[1];
  if (xs[1] % kk != 0)
    fail<ShapeError>(op, "input ", xs, ": dim 1 (", xs[1],
                     ") is not a multiple of the kernel size ", arr_str(kernel_size));
  const Shape virt{xs[0], xs[1] / kk, output_size[0], output_size[1]};
  const Shape ks{1, 1, kernel_size[0], kernel_size[1]};
  std::int64_t blocks = 1;
  for (std::size_t i = 0; i < 2; ++i)
    blocks *= conv_out_size(op, virt, ks, i, output_size[i], kernel_size[i], options.stride[i],
                            options.padding[i], options.dilation[i]);
  if (xs[2] != blocks)
    fail<ShapeError>(op, "input ", xs, " has ", xs[2], " blocks but output_size ",
                     arr_str(output_size), " with kernel ", arr_str(kernel_size), " gives ",
                     blocks);
  return {Shape{xs[0], xs[1] / kk, output_size[0], output_size[1]}, x.dtype};
}

}  // namespace ember::ir
