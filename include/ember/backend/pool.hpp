// Backend contract: pooling, interpolation and grid sampling. See core.hpp for the
// conventions. The option types are shared by the front end (ember::module) and backends.
#pragma once

#include <array>
#include <cstdint>
#include <utility>

#include "ember/backend/core.hpp"

namespace ember {

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

// Optional (detected with `requires`, see HasMaxPoolBackward): Autodiff's max_pool2d rule
// calls it when the backward pass is not recorded, else scatter-adds with its own ops.
//   float_max_pool2d_backward(F grad [N, C, OH, OW], I indices [N, C, OH, OW] (from
//       float_max_pool2d_with_indices), Shape x_shape [N, C, H, W]) -> F x_shape:
//       dx[n, c, i] = sum of grad[n, c, o] over the o with indices[n, c, o] == i, zero
//       elsewhere (PyTorch's max_pool2d_with_indices_backward).

/// Whether B defines the optional float_max_pool_backward<N>.
template <class B, std::size_t N = 2>
concept HasMaxPoolBackward = requires(const typename B::FloatTensor& g,
                                      const typename B::IntTensor& i, const Shape& s) {
  { B::template float_max_pool_backward<N>(g, i, s) } -> std::same_as<typename B::FloatTensor>;
};

}  // namespace ember
