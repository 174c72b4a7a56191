// Option structs of the structured ops (Burn's ConvOptions, InterpolateOptions, ...), shared
// by the front end, the op descriptions (ember/ir) and every backend.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

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

  bool operator==(const ConvOptions&) const = default;
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

  bool operator==(const ConvTransposeOptions&) const = default;
};

/// Options of deform_conv2d (Burn's DeformConvOptions).
struct DeformConvOptions {
  std::array<std::int64_t, 2> stride = {1, 1};
  std::array<std::int64_t, 2> padding = {0, 0};
  std::array<std::int64_t, 2> dilation = {1, 1};
  std::int64_t weight_groups = 1;
  std::int64_t offset_groups = 1;

  bool operator==(const DeformConvOptions&) const = default;
};

/// Options of unfold4d/fold4d (Burn's UnfoldOptions).
struct UnfoldOptions {
  std::array<std::int64_t, 2> stride = {1, 1};
  std::array<std::int64_t, 2> padding = {0, 0};
  std::array<std::int64_t, 2> dilation = {1, 1};

  bool operator==(const UnfoldOptions&) const = default;
};

/// Padding modes of Tensor::pad (torch.nn.functional.pad's "constant", "reflect",
/// "replicate").
enum class PadMode { Constant, Reflect, Edge };

/// How select_assign / scatter combine the new values with the existing ones.
enum class IndexUpdate : std::uint8_t {
  Assign,  ///< replace (torch.index_copy / scatter); duplicates: the last one wins
  Add,     ///< accumulate (torch.index_add / scatter_add); duplicates all add up
};

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

  bool operator==(const InterpolateOptions&) const = default;
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

  bool operator==(const GridSampleOptions&) const = default;
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

/// Options of max pooling over N spatial dims (PyTorch's max_poolNd arguments): window,
/// stride, zero padding on both sides (at most half the window), dilation, and ceil_mode
/// (a last window that starts inside the input or the left padding is kept).
template <std::size_t N>
struct MaxPoolOptions {
  std::array<std::int64_t, N> kernel = ConvOptions<N>::filled(1);
  std::array<std::int64_t, N> stride = ConvOptions<N>::filled(1);
  std::array<std::int64_t, N> padding = ConvOptions<N>::filled(0);
  std::array<std::int64_t, N> dilation = ConvOptions<N>::filled(1);
  bool ceil_mode = false;

  bool operator==(const MaxPoolOptions&) const = default;
};

/// Options of average pooling over N spatial dims (PyTorch's avg_poolNd arguments).
template <std::size_t N>
struct AvgPoolOptions {
  std::array<std::int64_t, N> kernel = ConvOptions<N>::filled(1);
  std::array<std::int64_t, N> stride = ConvOptions<N>::filled(1);
  std::array<std::int64_t, N> padding = ConvOptions<N>::filled(0);
  bool count_include_pad = true;
  bool ceil_mode = false;

  bool operator==(const AvgPoolOptions&) const = default;
};

}  // namespace ember
