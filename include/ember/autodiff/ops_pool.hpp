// Autodiff<B>: pooling, interpolation, grid sampling (rules in ember/autodiff/impl/pool.hpp).
#pragma once

#include <utility>

#include "ember/autodiff/ops_core.hpp"

namespace ember::autodiff {

template <class B>
struct AdPoolOps {
  using AP = AdTensor<B>;
  using IP = typename B::IntTensor;

  static AP float_max_pool2d(const AP& x, PoolArg2 kernel, PoolArg2 stride, PoolArg2 padding,
                             PoolArg2 dilation, bool ceil_mode);
  static std::pair<AP, IP> float_max_pool2d_with_indices(const AP& x, PoolArg2 kernel,
                                                         PoolArg2 stride, PoolArg2 padding,
                                                         PoolArg2 dilation, bool ceil_mode);
  static AP float_avg_pool2d(const AP& x, PoolArg2 kernel, PoolArg2 stride, PoolArg2 padding,
                             bool count_include_pad, bool ceil_mode);
  static AP float_adaptive_avg_pool2d(const AP& x, PoolArg2 output_size);
  static AP float_interpolate(const AP& x, PoolArg2 output_size, InterpolateOptions options);
  static AP float_grid_sample_2d(const AP& x, const AP& grid, GridSampleOptions options);
};

}  // namespace ember::autodiff
