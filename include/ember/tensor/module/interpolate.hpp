// Resampling as free functions (Burn's burn::tensor::module / torch.nn.functional):
// interpolate (nearest / bilinear / bicubic) and grid_sample_2d.
//
// Inputs must be batched [N, C, H, W] (as Burn's Tensor<B, 4>); another rank throws
// ShapeError. N and C may be 0; H and W must be > 0.
#pragma once

#include <array>
#include <cstdint>

#include "ember/tensor/module/pool.hpp"
#include "ember/tensor/tensor.hpp"

namespace ember::module {

using ember::GridSampleOptions;
using ember::GridSamplePaddingMode;
using ember::InterpolateMode;
using ember::InterpolateOptions;

/// Resizes [N, C, H, W] -> [N, C, OH, OW], output_size = {OH, OW}
/// (torch.nn.functional.interpolate with size=output_size; Burn's module::interpolate).
/// - Nearest: src = min(floor(dst * (in / out)), in - 1) with the scale in f32 (PyTorch's
///   "nearest"; align_corners is ignored).
/// - Bilinear: src = dst * (in - 1) / (out - 1) with align_corners, else
///   (dst + 0.5) * in / out - 0.5 clamped at 0.
/// - Bicubic: Keys' cubic convolution with A = -0.75 over 4x4 taps, indices clamped to the
///   border (PyTorch's upsample_bicubic2d, same source index without the clamp at 0).
/// Note Burn's InterpolateOptions defaults align_corners to true, PyTorch to false.
/// Throws ShapeError (rank != 4, empty H or W), ValueError (an output size <= 0).
template <class B, std::size_t D>
Tensor<B, D, Float> interpolate(const Tensor<B, D, Float>& x, PoolArg2 output_size,
                                InterpolateOptions options = {}) {
  ember::detail::ir_infer(ir::Interpolate{output_size, options}, x);
  if constexpr (D == 4) {
    return Tensor<B, D, Float>(B::float_interpolate(x.primitive(), output_size, options));
  } else {
    return x;
  }
}

/// Samples x [N, C, H, W] at the points of grid [N, OH, OW, 2] -> [N, C, OH, OW]
/// (torch.nn.functional.grid_sample for 4-d input; Burn's module::grid_sample_2d).
/// grid[..., 0] is x (width), grid[..., 1] is y (height), both normalised to [-1, 1]:
/// with align_corners -1/1 are the centres of the corner pixels, else their outer edges.
/// Modes: Bilinear, Nearest (round half to even, as torch); padding_mode Zeros, Border
/// (clamp) or Reflection (mirror at the borders, then clamp).
/// Throws ShapeError (rank of x or grid != 4, grid's last dim != 2, batch sizes differ,
/// empty H or W), DTypeError (grid dtype != x dtype), UnsupportedError (Bicubic mode).
template <class B, std::size_t D, std::size_t DG>
Tensor<B, D, Float> grid_sample_2d(const Tensor<B, D, Float>& x, const Tensor<B, DG, Float>& grid,
                                   GridSampleOptions options = {}) {
  ember::detail::ir_infer(ir::GridSample2d{options}, x, grid);
  if constexpr (D == 4 && DG == 4) {
    return Tensor<B, D, Float>(B::float_grid_sample_2d(x.primitive(), grid.primitive(), options));
  } else {
    return x;
  }
}

}  // namespace ember::module
