// Backend contract: pooling, interpolation and grid sampling. See core.hpp for the
// conventions. The option types are shared by the front end (ember::module) and backends.
#pragma once

#include <array>
#include <cstdint>
#include <utility>

#include "ember/backend/core.hpp"

namespace ember {

/// Interpolation algorithm (Burn's `InterpolateMode`).
enum class InterpolateMode { Nearest, Bilinear, Bicubic };

/// Options of `module::interpolate` (Burn's `InterpolateOptions`; Burn's default
/// `align_corners` is true, unlike PyTorch's false, so set it explicitly when porting).
struct InterpolateOptions {
  InterpolateMode mode = InterpolateMode::Nearest;
  /// Bilinear/bicubic only: true maps the corner pixel centres of input and output onto
  /// each other; false uses half-pixel centres (PyTorch's align_corners=False).
  bool align_corners = true;

  /// Burn's builder: InterpolateOptions{InterpolateMode::Bilinear}.with_align_corners(false).
  InterpolateOptions with_align_corners(bool value) const {
    InterpolateOptions o = *this;
    o.align_corners = value;
    return o;
  }
};

/// How `grid_sample_2d` treats sample points outside the input (Burn's
/// `GridSamplePaddingMode`, PyTorch's padding_mode).
enum class GridSamplePaddingMode { Zeros, Border, Reflection };

/// Options of `module::grid_sample_2d` (Burn's `GridSampleOptions`, same defaults as
/// PyTorch: bilinear, zeros, align_corners = false).
struct GridSampleOptions {
  InterpolateMode mode = InterpolateMode::Bilinear;
  GridSamplePaddingMode padding_mode = GridSamplePaddingMode::Zeros;
  bool align_corners = false;

  /// Burn's builders: GridSampleOptions{InterpolateMode::Nearest}.with_padding_mode(...).
  GridSampleOptions with_padding_mode(GridSamplePaddingMode value) const {
    GridSampleOptions o = *this;
    o.padding_mode = value;
    return o;
  }
  GridSampleOptions with_align_corners(bool value) const {
    GridSampleOptions o = *this;
    o.align_corners = value;
    return o;
  }
};

/// Output length of a pooling window sweep, PyTorch's `pooling_output_shape`:
/// floor_or_ceil((in + 2p - d(k-1) - 1) / s) + 1; with ceil_mode a last window that would
/// start inside the right padding is dropped. May be <= 0 for invalid arguments (the front
/// end rejects those).
inline std::int64_t pool_output_size(std::int64_t in, std::int64_t kernel, std::int64_t stride,
                                     std::int64_t pad, std::int64_t dilation, bool ceil_mode) {
  const std::int64_t num =
      in + 2 * pad - dilation * (kernel - 1) - 1 + (ceil_mode ? stride - 1 : 0);
  // floor division (num may be negative)
  std::int64_t q = num / stride;
  if ((num % stride != 0) && ((num < 0) != (stride < 0))) --q;
  std::int64_t out = q + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;
  return out;
}

using PoolArg2 = std::array<std::int64_t, 2>;

// Required functions (F = FloatTensor, I = IntTensor; x is [N, C, H, W], any float dtype,
// arguments validated by the front end; outputs are new tensors of x's dtype):
//   float_max_pool2d(F x, k, s, p, d, ceil_mode) -> F  [N, C, OH, OW]
//   float_max_pool2d_with_indices(F x, k, s, p, d, ceil_mode) -> pair<F, I (i64)>
//       indices are flat h * W + w into each input plane; NaN wins (PyTorch)
//   float_avg_pool2d(F x, k, s, p, count_include_pad, ceil_mode) -> F
//   float_adaptive_avg_pool2d(F x, {OH, OW}) -> F
//   float_interpolate(F x, {OH, OW}, InterpolateOptions) -> F
//   float_grid_sample_2d(F x, F grid [N, OH, OW, 2] same dtype, GridSampleOptions) -> F
// with k, s, p, d of type PoolArg2 ({h, w}).
template <class B>
concept PoolBackend = CoreBackend<B> &&
    requires(const typename B::FloatTensor& f, PoolArg2 a, bool flag, InterpolateOptions io,
             GridSampleOptions go) {
  { B::float_max_pool2d(f, a, a, a, a, flag) } -> std::same_as<typename B::FloatTensor>;
  {
    B::float_max_pool2d_with_indices(f, a, a, a, a, flag)
    } -> std::same_as<std::pair<typename B::FloatTensor, typename B::IntTensor>>;
  { B::float_avg_pool2d(f, a, a, a, flag, flag) } -> std::same_as<typename B::FloatTensor>;
  { B::float_adaptive_avg_pool2d(f, a) } -> std::same_as<typename B::FloatTensor>;
  { B::float_interpolate(f, a, io) } -> std::same_as<typename B::FloatTensor>;
  { B::float_grid_sample_2d(f, f, go) } -> std::same_as<typename B::FloatTensor>;
};

// Optional (detected with `requires`, see HasMaxPoolBackward): Autodiff's max_pool2d rule
// calls it when the backward pass is not recorded, else scatter-adds with its own ops.
//   float_max_pool2d_backward(F grad [N, C, OH, OW], I indices [N, C, OH, OW] (from
//       float_max_pool2d_with_indices), Shape x_shape [N, C, H, W]) -> F x_shape:
//       dx[n, c, i] = sum of grad[n, c, o] over the o with indices[n, c, o] == i, zero
//       elsewhere (PyTorch's max_pool2d_with_indices_backward).

/// Whether B defines float_max_pool2d_backward.
template <class B>
concept HasMaxPoolBackward = requires(const typename B::FloatTensor& g,
                                      const typename B::IntTensor& i, const Shape& s) {
  { B::float_max_pool2d_backward(g, i, s) } -> std::same_as<typename B::FloatTensor>;
};

}  // namespace ember
