// CPU backend: pool functions of the contract (see ember/backend/pool.hpp).
// Direct loops, parallel over the N*C planes; strided inputs are made contiguous once;
// f32/f64 computed natively, f16/bf16 through f32.
#pragma once

#include <utility>

#include "ember/backend/pool.hpp"
#include "ember/cpu/tensor.hpp"

namespace ember::cpu {

struct PoolOps {
  using P = CpuTensor;

  /// [N, C, H, W] -> [N, C, OH, OW] (src/cpu/pool.cpp).
  static P float_max_pool2d(const P& x, PoolArg2 kernel, PoolArg2 stride, PoolArg2 padding,
                            PoolArg2 dilation, bool ceil_mode);
  /// As float_max_pool2d plus i64 indices h * W + w into each input plane.
  static std::pair<P, P> float_max_pool2d_with_indices(const P& x, PoolArg2 kernel, PoolArg2 stride,
                                                       PoolArg2 padding, PoolArg2 dilation,
                                                       bool ceil_mode);
  /// Gradient of max pooling: grad [N, C, OH, OW] added at indices [N, C, OH, OW] into zeros
  /// of x_shape [N, C, H, W] (one pass per plane, parallel over planes).
  static P float_max_pool2d_backward(const P& grad, const P& indices, const Shape& x_shape);
  static P float_avg_pool2d(const P& x, PoolArg2 kernel, PoolArg2 stride, PoolArg2 padding,
                            bool count_include_pad, bool ceil_mode);
  static P float_adaptive_avg_pool2d(const P& x, PoolArg2 output_size);

  /// [N, C, H, W] -> [N, C, OH, OW] (src/cpu/interpolate.cpp).
  static P float_interpolate(const P& x, PoolArg2 output_size, InterpolateOptions options);
  /// x [N, C, H, W], grid [N, OH, OW, 2] -> [N, C, OH, OW] (src/cpu/interpolate.cpp).
  static P float_grid_sample_2d(const P& x, const P& grid, GridSampleOptions options);
};

}  // namespace ember::cpu
