// Autodiff<B>: backward rules of pooling, interpolation and grid sampling.
#pragma once

#include "ember/autodiff/impl/common.hpp"

namespace ember::autodiff {

template <class B>
AdTensor<B> AdPoolOps<B>::float_max_pool2d(const AP& x, PoolArg2 k, PoolArg2 s, PoolArg2 p,
                                           PoolArg2 d, bool ceil_mode) {
  return rules::no_rule<B>("max_pool2d", {x}, B::float_max_pool2d(x.inner, k, s, p, d, ceil_mode));
}

template <class B>
std::pair<AdTensor<B>, typename B::IntTensor> AdPoolOps<B>::float_max_pool2d_with_indices(
    const AP& x, PoolArg2 k, PoolArg2 s, PoolArg2 p, PoolArg2 d, bool ceil_mode) {
  auto [out, idx] = B::float_max_pool2d_with_indices(x.inner, k, s, p, d, ceil_mode);
  return {rules::no_rule<B>("max_pool2d_with_indices", {x}, std::move(out)), std::move(idx)};
}

template <class B>
AdTensor<B> AdPoolOps<B>::float_avg_pool2d(const AP& x, PoolArg2 k, PoolArg2 s, PoolArg2 p,
                                           bool count_include_pad, bool ceil_mode) {
  return rules::no_rule<B>("avg_pool2d", {x},
                           B::float_avg_pool2d(x.inner, k, s, p, count_include_pad, ceil_mode));
}

template <class B>
AdTensor<B> AdPoolOps<B>::float_adaptive_avg_pool2d(const AP& x, PoolArg2 output_size) {
  return rules::no_rule<B>("adaptive_avg_pool2d", {x},
                           B::float_adaptive_avg_pool2d(x.inner, output_size));
}

template <class B>
AdTensor<B> AdPoolOps<B>::float_interpolate(const AP& x, PoolArg2 output_size,
                                            InterpolateOptions options) {
  return rules::no_rule<B>("interpolate", {x}, B::float_interpolate(x.inner, output_size, options));
}

template <class B>
AdTensor<B> AdPoolOps<B>::float_grid_sample_2d(const AP& x, const AP& grid,
                                               GridSampleOptions options) {
  return rules::no_rule<B>("grid_sample_2d", {x, grid},
                           B::float_grid_sample_2d(x.inner, grid.inner, options));
}

}  // namespace ember::autodiff
