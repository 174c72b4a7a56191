// Pooling as free functions (Burn's burn::tensor::module / torch.nn.functional):
// max_pool1d/2d (+ _with_indices), avg_pool1d/2d, adaptive_avg_pool1d/2d.
//
// Inputs must have the batched rank: [N, C, L] for the 1-d ops, [N, C, H, W] for the 2-d
// ops (as Burn, which takes Tensor<B, 3> / Tensor<B, 4>; the unbatched [C, L] / [C, H, W]
// forms of PyTorch are not accepted: unsqueeze first). Another rank throws ShapeError.
// N and C may be 0; spatial dims must be > 0. Numerics follow PyTorch exactly (see each
// function). The 1-d ops run the 2-d kernels on [N, C, 1, L]. Checks: the ops' descriptions
// (ember/ir/pool.hpp, src/ir/pool.cpp).
#pragma once

#include <array>
#include <cstdint>
#include <utility>

#include "ember/ir/pool.hpp"
#include "ember/tensor/infer.hpp"
#include "ember/tensor/tensor.hpp"

namespace ember::module {

using ember::PoolArg2;

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
  const MaxPoolOptions<2> options{kernel_size, stride, padding, dilation, ceil_mode};
  ember::detail::ir_infer(ir::MaxPool<2>{options}, x);
  if constexpr (D == 4) {
    return Tensor<B, D, Float>(B::template float_max_pool<2>(x.primitive(), options));
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
  const MaxPoolOptions<2> options{kernel_size, stride, padding, dilation, ceil_mode};
  ember::detail::ir_infer(ir::MaxPoolWithIndices<2>{options}, x);
  if constexpr (D == 4) {
    auto [v, i] = B::template float_max_pool_with_indices<2>(x.primitive(), options);
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
  const MaxPoolOptions<1> options{{kernel_size}, {stride}, {padding}, {dilation}, ceil_mode};
  ember::detail::ir_infer(ir::MaxPool<1>{options}, x);
  if constexpr (D == 3) {
    return Tensor<B, D, Float>(B::template float_max_pool<1>(x.primitive(), options));
  } else {
    return x;
  }
}

/// max_pool1d plus i64 indices into each input row [0, L). Throws as max_pool1d.
template <class B, std::size_t D>
std::pair<Tensor<B, D, Float>, Tensor<B, D, Int>> max_pool1d_with_indices(
    const Tensor<B, D, Float>& x, std::int64_t kernel_size, std::int64_t stride,
    std::int64_t padding = 0, std::int64_t dilation = 1, bool ceil_mode = false) {
  const MaxPoolOptions<1> options{{kernel_size}, {stride}, {padding}, {dilation}, ceil_mode};
  ember::detail::ir_infer(ir::MaxPoolWithIndices<1>{options}, x);
  if constexpr (D == 3) {
    auto [v, i] = B::template float_max_pool_with_indices<1>(x.primitive(), options);
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
  const AvgPoolOptions<2> options{kernel_size, stride, padding, count_include_pad, ceil_mode};
  ember::detail::ir_infer(ir::AvgPool<2>{options}, x);
  if constexpr (D == 4) {
    return Tensor<B, D, Float>(B::template float_avg_pool<2>(x.primitive(), options));
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
  const AvgPoolOptions<1> options{{kernel_size}, {stride}, {padding}, count_include_pad, ceil_mode};
  ember::detail::ir_infer(ir::AvgPool<1>{options}, x);
  if constexpr (D == 3) {
    return Tensor<B, D, Float>(B::template float_avg_pool<1>(x.primitive(), options));
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
  ember::detail::ir_infer(ir::AdaptiveAvgPool<2>{output_size}, x);
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
  ember::detail::ir_infer(ir::AdaptiveAvgPool<1>{{output_size}}, x);
  if constexpr (D == 3) {
    return Tensor<B, D, Float>(
        B::template float_adaptive_avg_pool<1>(x.primitive(), ir::Dims<1>{output_size}));
  } else {
    return x;
  }
}

}  // namespace ember::module
