// infer of the pooling and resampling descriptions (ember/ir/pool.hpp): the one copy of their
// shape rules, with the messages users see (ember/tensor/module/pool.hpp, interpolate.hpp).
#include "ember/ir/pool.hpp"

#include "spatial.hpp"

namespace ember::ir {

using ember::detail::fail;

namespace {

/// x is [N, C, L] (N == 1) or [N, C, H, W] (N == 2) with non-empty spatial dims.
template <std::size_t N>
void check_input(const char* op, const TensorType& x) {
  const Shape& s = x.shape;
  if (s.rank() != N + 2)
    fail<ShapeError>(op, "input of shape ", s, " has rank ", s.rank(), ", expected rank ", N + 2,
                     N == 1 ? " [batch, channels, length]" : " [batch, channels, height, width]");
  for (std::size_t i = 2; i < s.rank(); ++i)
    if (s[i] <= 0) fail<ShapeError>(op, "input of shape ", s, " has an empty spatial dim ", i);
}

/// One spatial axis of a pooling window (PyTorch's pool2d_shape_check: padding at most half
/// the kernel, not the dilated kernel); the output size.
std::int64_t pool_axis(const char* op, const Shape& shape, std::size_t dim, std::int64_t k,
                       std::int64_t s, std::int64_t p, std::int64_t d, bool ceil_mode) {
  if (k <= 0) fail<ValueError>(op, "kernel size should be greater than zero, but got ", k);
  if (s <= 0) fail<ValueError>(op, "stride should be greater than zero, but got ", s);
  if (d <= 0) fail<ValueError>(op, "dilation should be greater than zero, but got ", d);
  if (p < 0) fail<ValueError>(op, "padding should be non-negative, but got ", p);
  const std::int64_t eff = (k - 1) * d + 1;
  if (p > k / 2)
    fail<ValueError>(op, "pad should be at most half of kernel size, but got pad=", p,
                     " and kernel_size=", k, " (input of shape ", shape, ")");
  const std::int64_t in = shape[dim];
  if (eff > in + 2 * p)
    fail<ShapeError>(op, "input of shape ", shape, ": kernel of effective size ", eff,
                     " is larger than the padded input size ", in + 2 * p, " of dim ", dim);
  const std::int64_t out = pool_output_size(in, k, s, p, d, ceil_mode);
  if (out < 1)
    fail<ShapeError>(op, "input of shape ", shape, ": output size of dim ", dim, " is too small");
  return out;
}

template <std::size_t N>
Shape pooled(const char* op, const TensorType& x, const std::array<std::int64_t, N>& k,
             const std::array<std::int64_t, N>& s, const std::array<std::int64_t, N>& p,
             const std::array<std::int64_t, N>& d, bool ceil_mode) {
  check_input<N>(op, x);
  Shape out{x.shape[0], x.shape[1]};
  for (std::size_t i = 0; i < N; ++i)
    out.dims.push_back(pool_axis(op, x.shape, 2 + i, k[i], s[i], p[i], d[i], ceil_mode));
  return out;
}

/// Output sizes of adaptive pooling / interpolation: each > 0; ValueError otherwise.
template <std::size_t N>
void check_output_size(const char* op, const std::array<std::int64_t, N>& size, const Shape& x) {
  for (std::size_t i = 0; i < N; ++i) {
    if (size[i] > 0) continue;
    if constexpr (N == 1)
      fail<ValueError>(op, "output size ", size[0], " must be positive (input of shape ", x, ")");
    else
      fail<ValueError>(op, "output size ", spatial::arr_str(size),
                       " must be positive (input of shape ", x, ")");
  }
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
  spatial::check_rank<N>(name, grad, "gradient");
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
  check_input<N>(name, x);
  check_output_size<N>(name, output_size, x.shape);
  Shape out{x.shape[0], x.shape[1]};
  for (std::size_t i = 0; i < N; ++i) out.dims.push_back(output_size[i]);
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
  check_input<2>(name, x);
  check_output_size<2>(name, output_size, x.shape);
  return {Shape{x.shape[0], x.shape[1], output_size[0], output_size[1]}, x.dtype};
}

TensorType GridSample2d::infer(const TensorType& x, const TensorType& grid) const {
  const char* op = name;
  const Shape &xs = x.shape, &gs = grid.shape;
  if (xs.rank() != 4)
    fail<ShapeError>(op, "input of shape ", xs, " has rank ", xs.rank(),
                     ", expected rank 4 [batch, channels, height, width]");
  if (gs.rank() != 4)
    fail<ShapeError>(op, "grid of shape ", gs, " has rank ", gs.rank(),
                     ", expected rank 4 [batch, out_height, out_width, 2] (input of shape ", xs,
                     ")");
  if (gs[3] != 2)
    fail<ShapeError>(op, "grid of shape ", gs, " must have last dim 2 (x, y), input of shape ", xs);
  if (gs[0] != xs[0])
    fail<ShapeError>(op, "grid of shape ", gs, " and input of shape ", xs,
                     " have different batch sizes (", gs[0], " vs ", xs[0], ")");
  check_input<2>(op, x);
  if (grid.dtype != x.dtype)
    fail<DTypeError>(op, "grid dtype ", grid.dtype, " differs from input dtype ", x.dtype,
                     " (input ", xs, ", grid ", gs, ")");
  if (options.mode == InterpolateMode::Bicubic)
    fail<UnsupportedError>(op, "bicubic mode is not supported (input of shape ", xs,
                           "); use Bilinear or Nearest");
  return {Shape{xs[0], xs[1], gs[1], gs[2]}, x.dtype};
}

}  // namespace ember::ir
