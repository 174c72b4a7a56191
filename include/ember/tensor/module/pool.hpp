// Pooling as free functions (Burn's burn::tensor::module / torch.nn.functional):
// max_pool1d/2d (+ _with_indices), avg_pool1d/2d, adaptive_avg_pool1d/2d.
//
// Inputs must have the batched rank: [N, C, L] for the 1-d ops, [N, C, H, W] for the 2-d
// ops (as Burn, which takes Tensor<B, 3> / Tensor<B, 4>; the unbatched [C, L] / [C, H, W]
// forms of PyTorch are not accepted: unsqueeze first). Another rank throws ShapeError.
// N and C may be 0; spatial dims must be > 0. Numerics follow PyTorch exactly (see each
// function). The 1-d ops run the 2-d kernels on [N, C, 1, L].
#pragma once

#include <array>
#include <cstdint>
#include <utility>

#include "ember/tensor/tensor.hpp"

namespace ember::module {

using ember::PoolArg2;

namespace pool_detail {

template <std::size_t Want, std::size_t D, class S>
void check_rank(const char* op, const S& shape, const char* layout) {
  if constexpr (D != Want) {
    ember::detail::fail<ShapeError>(op, "input of shape ", shape, " has rank ", D,
                                    ", expected rank ", Want, " ", layout);
  }
}

inline void check_spatial(const char* op, const Shape& shape) {
  for (std::size_t i = 2; i < shape.rank(); ++i) {
    if (shape[i] <= 0) {
      ember::detail::fail<ShapeError>(op, "input of shape ", shape, " has an empty spatial dim ",
                                      i);
    }
  }
}

/// Validates one spatial axis of a pooling op (PyTorch's pool2d_shape_check rules:
/// padding <= kernel / 2, not the dilated kernel).
inline void check_pool_axis(const char* op, const Shape& shape, std::size_t dim, std::int64_t k,
                            std::int64_t s, std::int64_t p, std::int64_t d, bool ceil_mode) {
  using ember::detail::fail;
  if (k <= 0) fail<ValueError>(op, "kernel size should be greater than zero, but got ", k);
  if (s <= 0) fail<ValueError>(op, "stride should be greater than zero, but got ", s);
  if (d <= 0) fail<ValueError>(op, "dilation should be greater than zero, but got ", d);
  if (p < 0) fail<ValueError>(op, "padding should be non-negative, but got ", p);
  const std::int64_t eff = (k - 1) * d + 1;
  if (p > k / 2) {
    fail<ValueError>(op, "pad should be at most half of kernel size, but got pad=", p,
                     " and kernel_size=", k, " (input of shape ", shape, ")");
  }
  const std::int64_t in = shape[dim];
  if (eff > in + 2 * p) {
    fail<ShapeError>(op, "input of shape ", shape, ": kernel of effective size ", eff,
                     " is larger than the padded input size ", in + 2 * p, " of dim ", dim);
  }
  if (pool_output_size(in, k, s, p, d, ceil_mode) < 1) {
    fail<ShapeError>(op, "input of shape ", shape, ": output size of dim ", dim, " is too small");
  }
}

template <class B, std::size_t D>
void check_pool2d(const char* op, const Tensor<B, D, Float>& x, PoolArg2 k, PoolArg2 s, PoolArg2 p,
                  PoolArg2 d, bool ceil_mode) {
  const Shape shape = x.shape();
  check_rank<4, D>(op, shape, "[batch, channels, height, width]");
  check_spatial(op, shape);
  check_pool_axis(op, shape, 2, k[0], s[0], p[0], d[0], ceil_mode);
  check_pool_axis(op, shape, 3, k[1], s[1], p[1], d[1], ceil_mode);
}

template <class B, std::size_t D>
void check_pool1d(const char* op, const Tensor<B, D, Float>& x, std::int64_t k, std::int64_t s,
                  std::int64_t p, std::int64_t d, bool ceil_mode) {
  const Shape shape = x.shape();
  check_rank<3, D>(op, shape, "[batch, channels, length]");
  check_spatial(op, shape);
  check_pool_axis(op, shape, 2, k, s, p, d, ceil_mode);
}

}  // namespace pool_detail

/// 2-d max pooling, torch.nn.functional.max_pool2d.
/// x: [N, C, H, W] (any float dtype) -> [N, C, OH, OW] with
/// O = floor_or_ceil((I + 2p - d(k-1) - 1) / s) + 1; with ceil_mode a last window starting
/// in the right padding is dropped. Padding counts as -inf; NaN propagates.
/// Throws ShapeError (rank != 4, empty spatial dim, kernel larger than the padded input),
/// ValueError (kernel/stride/dilation <= 0, padding < 0 or > kernel / 2).
template <class B, std::size_t D>
Tensor<B, D, Float> max_pool2d(const Tensor<B, D, Float>& x, PoolArg2 kernel_size, PoolArg2 stride,
                               PoolArg2 padding = {0, 0}, PoolArg2 dilation = {1, 1},
                               bool ceil_mode = false) {
  pool_detail::check_pool2d("max_pool2d", x, kernel_size, stride, padding, dilation, ceil_mode);
  if constexpr (D == 4) {
    return Tensor<B, D, Float>(
        B::template float_max_pool<2>(
            x.primitive(), MaxPoolOptions<2>{kernel_size, stride, padding, dilation, ceil_mode}));
  } else {
    return x;  // unreachable: check_pool2d throws
  }
}

/// max_pool2d plus the i64 index of each maximum, flat (h * W + w) within its input plane,
/// as torch.nn.functional.max_pool2d(return_indices=True). Ties keep the first index;
/// a NaN takes the index of the last NaN in the window. Throws as max_pool2d.
template <class B, std::size_t D>
std::pair<Tensor<B, D, Float>, Tensor<B, D, Int>> max_pool2d_with_indices(
    const Tensor<B, D, Float>& x, PoolArg2 kernel_size, PoolArg2 stride, PoolArg2 padding = {0, 0},
    PoolArg2 dilation = {1, 1}, bool ceil_mode = false) {
  pool_detail::check_pool2d("max_pool2d_with_indices", x, kernel_size, stride, padding, dilation,
                            ceil_mode);
  if constexpr (D == 4) {
    auto [v, i] = B::template float_max_pool_with_indices<2>(
        x.primitive(), MaxPoolOptions<2>{kernel_size, stride, padding, dilation, ceil_mode});
    return {Tensor<B, D, Float>(std::move(v)), Tensor<B, D, Int>(std::move(i))};
  } else {
    return {x, Tensor<B, D, Int>::zeros(x.shape())};  // unreachable
  }
}

/// 1-d max pooling, torch.nn.functional.max_pool1d: [N, C, L] -> [N, C, OL]
/// (same rules as max_pool2d on one axis). Throws as max_pool2d (rank != 3).
template <class B, std::size_t D>
Tensor<B, D, Float> max_pool1d(const Tensor<B, D, Float>& x, std::int64_t kernel_size,
                               std::int64_t stride, std::int64_t padding = 0,
                               std::int64_t dilation = 1, bool ceil_mode = false) {
  pool_detail::check_pool1d("max_pool1d", x, kernel_size, stride, padding, dilation, ceil_mode);
  if constexpr (D == 3) {
    return Tensor<B, D, Float>(B::template float_max_pool<1>(
        x.primitive(), MaxPoolOptions<1>{{kernel_size}, {stride}, {padding}, {dilation}, ceil_mode}));
  } else {
    return x;
  }
}

/// max_pool1d plus i64 indices into each input row [0, L). Throws as max_pool1d.
template <class B, std::size_t D>
std::pair<Tensor<B, D, Float>, Tensor<B, D, Int>> max_pool1d_with_indices(
    const Tensor<B, D, Float>& x, std::int64_t kernel_size, std::int64_t stride,
    std::int64_t padding = 0, std::int64_t dilation = 1, bool ceil_mode = false) {
  pool_detail::check_pool1d("max_pool1d_with_indices", x, kernel_size, stride, padding, dilation,
                            ceil_mode);
  if constexpr (D == 3) {
    auto [v, i] = B::template float_max_pool_with_indices<1>(
        x.primitive(), MaxPoolOptions<1>{{kernel_size}, {stride}, {padding}, {dilation}, ceil_mode});
    return {Tensor<B, D, Float>(std::move(v)), Tensor<B, D, Int>(std::move(i))};
  } else {
    return {x, Tensor<B, D, Int>::zeros(x.shape())};
  }
}

/// 2-d average pooling, torch.nn.functional.avg_pool2d: [N, C, H, W] -> [N, C, OH, OW]
/// (output size as max_pool2d with dilation 1). The divisor is the window clipped to the
/// padded input (count_include_pad = true) or to the input (false); the part of a ceil_mode
/// window beyond the padded input is never counted (PyTorch's AvgPoolKernel).
/// Throws ShapeError (rank != 4, empty spatial dim, kernel larger than the padded input),
/// ValueError (kernel/stride <= 0, padding < 0 or > kernel / 2).
template <class B, std::size_t D>
Tensor<B, D, Float> avg_pool2d(const Tensor<B, D, Float>& x, PoolArg2 kernel_size, PoolArg2 stride,
                               PoolArg2 padding = {0, 0}, bool count_include_pad = true,
                               bool ceil_mode = false) {
  pool_detail::check_pool2d("avg_pool2d", x, kernel_size, stride, padding, {1, 1}, ceil_mode);
  if constexpr (D == 4) {
    return Tensor<B, D, Float>(B::template float_avg_pool<2>(
        x.primitive(),
        AvgPoolOptions<2>{kernel_size, stride, padding, count_include_pad, ceil_mode}));
  } else {
    return x;
  }
}

/// 1-d average pooling, torch.nn.functional.avg_pool1d: [N, C, L] -> [N, C, OL].
/// Throws as avg_pool2d (rank != 3).
template <class B, std::size_t D>
Tensor<B, D, Float> avg_pool1d(const Tensor<B, D, Float>& x, std::int64_t kernel_size,
                               std::int64_t stride, std::int64_t padding = 0,
                               bool count_include_pad = true, bool ceil_mode = false) {
  pool_detail::check_pool1d("avg_pool1d", x, kernel_size, stride, padding, 1, ceil_mode);
  if constexpr (D == 3) {
    return Tensor<B, D, Float>(B::template float_avg_pool<1>(
        x.primitive(),
        AvgPoolOptions<1>{{kernel_size}, {stride}, {padding}, count_include_pad, ceil_mode}));
  } else {
    return x;
  }
}

/// Adaptive average pooling, torch.nn.functional.adaptive_avg_pool2d:
/// [N, C, H, W] -> [N, C, OH, OW]; output cell i averages input [floor(i*I/O), ceil((i+1)*I/O)).
/// Throws ShapeError (rank != 4, empty spatial dim), ValueError (an output size <= 0;
/// PyTorch would return an empty tensor for 0).
template <class B, std::size_t D>
Tensor<B, D, Float> adaptive_avg_pool2d(const Tensor<B, D, Float>& x, PoolArg2 output_size) {
  const Shape shape = x.shape();
  pool_detail::check_rank<4, D>("adaptive_avg_pool2d", shape, "[batch, channels, height, width]");
  pool_detail::check_spatial("adaptive_avg_pool2d", shape);
  if (output_size[0] <= 0 || output_size[1] <= 0) {
    ember::detail::fail<ValueError>("adaptive_avg_pool2d", "output size [", output_size[0], ", ",
                                    output_size[1], "] must be positive (input of shape ", shape,
                                    ")");
  }
  if constexpr (D == 4) {
    return Tensor<B, D, Float>(B::template float_adaptive_avg_pool<2>(x.primitive(), output_size));
  } else {
    return x;
  }
}

/// Adaptive average pooling over [N, C, L] -> [N, C, output_size]
/// (torch.nn.functional.adaptive_avg_pool1d). Throws as adaptive_avg_pool2d (rank != 3).
template <class B, std::size_t D>
Tensor<B, D, Float> adaptive_avg_pool1d(const Tensor<B, D, Float>& x, std::int64_t output_size) {
  const Shape shape = x.shape();
  pool_detail::check_rank<3, D>("adaptive_avg_pool1d", shape, "[batch, channels, length]");
  pool_detail::check_spatial("adaptive_avg_pool1d", shape);
  if (output_size <= 0) {
    ember::detail::fail<ValueError>("adaptive_avg_pool1d", "output size ", output_size,
                                    " must be positive (input of shape ", shape, ")");
  }
  if constexpr (D == 3) {
    return Tensor<B, D, Float>(
        B::template float_adaptive_avg_pool<1>(x.primitive(), ir::Dims<1>{output_size}));
  } else {
    return x;
  }
}

}  // namespace ember::module
