// Op descriptions: pooling, interpolation and grid sampling (ember/backend/pool.hpp), pooling
// rank-generic over the number of spatial dims N. x is [B, C, *S].
#pragma once

#include <array>

#include "ember/core/options.hpp"
#include "ember/ir/desc.hpp"

namespace ember::ir {

/// Max pooling: [B, C, *S] -> [B, C, *S_out] (pool_output_size per dim).
template <std::size_t N>
struct MaxPool {
  static constexpr const char* name = N == 1 ? "max_pool1d" : "max_pool2d";
  static constexpr Bound bound = Bound::Compute;
  MaxPoolOptions<N> options;
  EMBER_IR_FIELDS(options)
  TensorType infer(const TensorType& x) const;
};
/// Max pooling plus i64 indices into each input plane (h * W + w; NaN wins, as PyTorch).
template <std::size_t N>
struct MaxPoolWithIndices {
  static constexpr const char* name =
      N == 1 ? "max_pool1d_with_indices" : "max_pool2d_with_indices";
  static constexpr Bound bound = Bound::Compute;
  MaxPoolOptions<N> options;
  EMBER_IR_FIELDS(options)
  TensorTypes2 infer(const TensorType& x) const;
};
/// Gradient of max pooling: grad and indices [B, C, *S_out] -> x_shape (the grads added at
/// their indices into zeros).
template <std::size_t N>
struct MaxPoolBackward {
  static constexpr const char* name = "max_pool_backward";
  static constexpr Bound bound = Bound::Compute;
  Shape x_shape;
  EMBER_IR_FIELDS(x_shape)
  TensorType infer(const TensorType& grad, const TensorType& indices) const;
};
/// Average pooling: [B, C, *S] -> [B, C, *S_out].
template <std::size_t N>
struct AvgPool {
  static constexpr const char* name = N == 1 ? "avg_pool1d" : "avg_pool2d";
  static constexpr Bound bound = Bound::Compute;
  AvgPoolOptions<N> options;
  EMBER_IR_FIELDS(options)
  TensorType infer(const TensorType& x) const;
};
/// Adaptive average pooling to `output_size` (PyTorch's bin edges).
template <std::size_t N>
struct AdaptiveAvgPool {
  static constexpr const char* name = N == 1 ? "adaptive_avg_pool1d" : "adaptive_avg_pool2d";
  static constexpr Bound bound = Bound::Compute;
  std::array<std::int64_t, N> output_size{};
  EMBER_IR_FIELDS(output_size)
  TensorType infer(const TensorType& x) const;
};
/// [B, C, H, W] -> [B, C, output_size] (nearest, bilinear, bicubic).
struct Interpolate {
  static constexpr const char* name = "interpolate";
  static constexpr Bound bound = Bound::Memory;
  std::array<std::int64_t, 2> output_size{};
  InterpolateOptions options;
  EMBER_IR_FIELDS(output_size, options)
  TensorType infer(const TensorType& x) const;
};
/// x [B, C, H, W], grid [B, OH, OW, 2] (same float dtype) -> [B, C, OH, OW].
struct GridSample2d {
  static constexpr const char* name = "grid_sample_2d";
  static constexpr Bound bound = Bound::Memory;
  GridSampleOptions options;
  EMBER_IR_FIELDS(options)
  TensorType infer(const TensorType& x, const TensorType& grid) const;
};

}  // namespace ember::ir

// Registry rows (see ember/ir/core.hpp for the columns).
// clang-format off
#define EMBER_IR_POOL(X, XN) \
  XN(REQ, F, F, float_max_pool, MaxPool, (const F&, const MaxPoolOptions<N>&), (1, 2)) \
  XN(REQ, F, FI, float_max_pool_with_indices, MaxPoolWithIndices, (const F&, const MaxPoolOptions<N>&), (1, 2)) \
  XN(EXT, F, F, float_max_pool_backward, MaxPoolBackward, (const F&, const I&, const Shape&), (1, 2)) \
  XN(REQ, F, F, float_avg_pool, AvgPool, (const F&, const AvgPoolOptions<N>&), (1, 2)) \
  XN(REQ, F, F, float_adaptive_avg_pool, AdaptiveAvgPool, (const F&, const Dims<N>&), (1, 2)) \
  X(REQ, F, F, float_interpolate, Interpolate, (const F&, const Arr2&, InterpolateOptions)) \
  X(REQ, F, F, float_grid_sample_2d, GridSample2d, (const F&, const F&, GridSampleOptions))
// clang-format on
