// infer of the convolution and pooling descriptions (ember/ir/conv.hpp, pool.hpp).
#include "ember/ir/conv.hpp"
#include "ember/ir/pool.hpp"

namespace ember::ir {

using ember::detail::fail;

namespace {
/// x [B, C, *S] with N spatial dims; the spatial sizes.
template <std::size_t N>
void check_spatial(const char* op, const TensorType& x, const char* what) {
  if (x.shape.rank() != N + 2)
    fail<ShapeError>(op, "expected a rank-", N + 2, " ", what, ", got shape ", x.shape);
}
void check_bias(const char* op, const std::optional<TensorType>& bias, std::int64_t c,
                const TensorType& x) {
  if (!bias) return;
  if (bias->shape != Shape{c})
    fail<ShapeError>(op, "bias of shape ", bias->shape, ", expected [", c, "]");
  check::same_dtype(op, x, *bias);
}
}  // namespace

template <std::size_t N>
TensorType Conv<N>::infer(const TensorType& x, const TensorType& weight,
                          const std::optional<TensorType>& bias) const {
  check_spatial<N>(name, x, "input");
  check_spatial<N>(name, weight, "weight");
  check::same_dtype(name, x, weight);
  const ConvOptions<N>& o = options;
  if (o.groups <= 0 || x.shape[1] != weight.shape[1] * o.groups ||
      weight.shape[0] % o.groups != 0)
    fail<ShapeError>(name, "input ", x.shape, " and weight ", weight.shape,
                     " do not match with groups = ", o.groups);
  check_bias(name, bias, weight.shape[0], x);
  Shape out{x.shape[0], weight.shape[0]};
  for (std::size_t i = 0; i < N; ++i) {
    const std::int64_t span = x.shape[2 + i] + 2 * o.padding[i] - o.dilation[i] * (weight.shape[2 + i] - 1) - 1;
    if (o.stride[i] <= 0 || span < 0)
      fail<ShapeError>(name, "kernel ", weight.shape, " does not fit the padded input ", x.shape);
    out.dims.push_back(span / o.stride[i] + 1);
  }
  return {out, x.dtype};
}
template <std::size_t N>
TensorType ConvTranspose<N>::infer(const TensorType& x, const TensorType& weight,
                                   const std::optional<TensorType>& bias) const {
  check_spatial<N>(name, x, "input");
  check_spatial<N>(name, weight, "weight");
  check::same_dtype(name, x, weight);
  const ConvTransposeOptions<N>& o = options;
  if (o.groups <= 0 || x.shape[1] != weight.shape[0])
    fail<ShapeError>(name, "input ", x.shape, " and weight ", weight.shape, " do not match");
  const std::int64_t c_out = weight.shape[1] * o.groups;
  check_bias(name, bias, c_out, x);
  Shape out{x.shape[0], c_out};
  for (std::size_t i = 0; i < N; ++i) {
    const std::int64_t n = (x.shape[2 + i] - 1) * o.stride[i] - 2 * o.padding[i] +
                           o.dilation[i] * (weight.shape[2 + i] - 1) + o.padding_out[i] + 1;
    if (n < 0) fail<ShapeError>(name, "negative output size for input ", x.shape);
    out.dims.push_back(n);
  }
  return {out, x.dtype};
}
template <std::size_t N>
TensorType ConvXBackward<N>::infer(const TensorType& output_grad, const TensorType& weight) const {
  check_spatial<N>(name, output_grad, "output gradient");
  check::same_dtype(name, output_grad, weight);
  return {x_shape, output_grad.dtype};
}
template <std::size_t N>
TensorType ConvWeightBackward<N>::infer(const TensorType& x, const TensorType& output_grad) const {
  check_spatial<N>(name, x, "input");
  check::same_dtype(name, x, output_grad);
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
  check_spatial<2>(name, x, "input");
  check_spatial<2>(name, offset, "offset");
  check_spatial<2>(name, weight, "weight");
  check::same_dtype(name, x, weight);
  check_bias(name, bias, weight.shape[0], x);
  if (mask) check_spatial<2>(name, *mask, "mask");
  return {Shape{x.shape[0], weight.shape[0], offset.shape[2], offset.shape[3]}, x.dtype};
}
TensorType Unfold4d::infer(const TensorType& x) const {
  check_spatial<2>(name, x, "input");
  std::int64_t blocks = 1;
  for (std::size_t i = 0; i < 2; ++i) {
    const std::int64_t span = x.shape[2 + i] + 2 * options.padding[i] -
                              options.dilation[i] * (kernel_size[i] - 1) - 1;
    if (options.stride[i] <= 0 || span < 0)
      fail<ShapeError>(name, "kernel does not fit the padded input ", x.shape);
    blocks *= span / options.stride[i] + 1;
  }
  return {Shape{x.shape[0], x.shape[1] * kernel_size[0] * kernel_size[1], blocks}, x.dtype};
}
TensorType Fold4d::infer(const TensorType& x) const {
  check::rank(name, x, 3, "input [N, C*kh*kw, L]");
  const std::int64_t k = kernel_size[0] * kernel_size[1];
  if (k <= 0 || x.shape[1] % k != 0)
    fail<ShapeError>(name, "input channels ", x.shape[1], " are not a multiple of the kernel size ", k);
  return {Shape{x.shape[0], x.shape[1] / k, output_size[0], output_size[1]}, x.dtype};
}

// ---- pooling ---------------------------------------------------------------------------------------

namespace {
template <std::size_t N>
Shape pooled(const char* op, const TensorType& x, const std::array<std::int64_t, N>& k,
             const std::array<std::int64_t, N>& s, const std::array<std::int64_t, N>& p,
             const std::array<std::int64_t, N>& d, bool ceil_mode) {
  check_spatial<N>(op, x, "input");
  Shape out{x.shape[0], x.shape[1]};
  for (std::size_t i = 0; i < N; ++i) {
    if (k[i] <= 0 || s[i] <= 0 || d[i] <= 0 || p[i] < 0)
      fail<ValueError>(op, "invalid window, stride, padding or dilation");
    const std::int64_t n = pool_output_size(x.shape[2 + i], k[i], s[i], p[i], d[i], ceil_mode);
    if (n <= 0) fail<ShapeError>(op, "the window does not fit the padded input ", x.shape);
    out.dims.push_back(n);
  }
  return out;
}
}  // namespace

template <std::size_t N>
TensorType MaxPool<N>::infer(const TensorType& x) const {
  const auto& o = options;
  return {pooled<N>(name, x, o.kernel, o.stride, o.padding, o.dilation, o.ceil_mode), x.dtype};
}
template <std::size_t N>
TensorTypes2 MaxPoolWithIndices<N>::infer(const TensorType& x) const {
  const auto& o = options;
  const Shape s = pooled<N>(name, x, o.kernel, o.stride, o.padding, o.dilation, o.ceil_mode);
  return {{s, x.dtype}, {s, DType::I64}};
}
template <std::size_t N>
TensorType MaxPoolBackward<N>::infer(const TensorType& grad, const TensorType& indices) const {
  check_spatial<N>(name, grad, "gradient");
  if (indices.shape != grad.shape)
    fail<ShapeError>(name, "indices of shape ", indices.shape, " for a gradient of shape ",
                     grad.shape);
  return {x_shape, grad.dtype};
}
template <std::size_t N>
TensorType AvgPool<N>::infer(const TensorType& x) const {
  const auto& o = options;
  std::array<std::int64_t, N> one{};
  one.fill(1);
  return {pooled<N>(name, x, o.kernel, o.stride, o.padding, one, o.ceil_mode), x.dtype};
}
template <std::size_t N>
TensorType AdaptiveAvgPool<N>::infer(const TensorType& x) const {
  check_spatial<N>(name, x, "input");
  Shape out{x.shape[0], x.shape[1]};
  for (std::size_t i = 0; i < N; ++i) {
    if (output_size[i] <= 0) fail<ValueError>(name, "output size must be positive");
    out.dims.push_back(output_size[i]);
  }
  return {out, x.dtype};
}
template struct MaxPool<1>;
template struct MaxPool<2>;
template struct MaxPoolWithIndices<1>;
template struct MaxPoolWithIndices<2>;
template struct MaxPoolBackward<1>;
template struct MaxPoolBackward<2>;
template struct AvgPool<1>;
template struct AvgPool<2>;
template struct AdaptiveAvgPool<1>;
template struct AdaptiveAvgPool<2>;

TensorType Interpolate::infer(const TensorType& x) const {
  check_spatial<2>(name, x, "input");
  if (output_size[0] <= 0 || output_size[1] <= 0)
    fail<ValueError>(name, "output size must be positive");
  return {Shape{x.shape[0], x.shape[1], output_size[0], output_size[1]}, x.dtype};
}
TensorType GridSample2d::infer(const TensorType& x, const TensorType& grid) const {
  check_spatial<2>(name, x, "input");
  check::rank(name, grid, 4, "grid [N, OH, OW, 2]");
  check::same_dtype(name, x, grid);
  if (grid.shape[0] != x.shape[0] || grid.shape[3] != 2)
    fail<ShapeError>(name, "grid of shape ", grid.shape, " for an input of shape ", x.shape);
  return {Shape{x.shape[0], x.shape[1], grid.shape[1], grid.shape[2]}, x.dtype};
}

}  // namespace ember::ir
