// Pooling kernels of the GPU backends (src/gpu/pool.cpp), 1-d and 2-d, and interpolation
// (src/gpu/interpolate.cpp); shapes and options as the backend contract's
// (ember/backend/pool.hpp). Each returns nullopt when the device
// kernels do not serve the case (a dtype the device lacks; the max-pool gradient is f32
// only, since it adds with atomics): the caller then takes the host path.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <utility>

#include "ember/core/options.hpp"
#include "ember/gpu/tensor.hpp"

namespace ember::gpu {

/// Max pooling; with_indices also gives the i64 index of each maximum in its input plane.
template <std::size_t N>
std::optional<std::pair<GpuTensor, std::optional<GpuTensor>>> max_pool(
    const GpuTensor& x, const MaxPoolOptions<N>& options, bool with_indices);
/// dx (x_shape): each gradient added at its index of the input plane.
template <std::size_t N>
std::optional<GpuTensor> max_pool_backward(const GpuTensor& grad, const GpuTensor& indices,
                                           const Shape& x_shape);
template <std::size_t N>
std::optional<GpuTensor> avg_pool(const GpuTensor& x, const AvgPoolOptions<N>& options);
template <std::size_t N>
std::optional<GpuTensor> adaptive_avg_pool(const GpuTensor& x,
                                           const std::array<std::int64_t, N>& output_size);

/// torch.nn.functional.interpolate of x [N, C, H, W] to `output_size` (nearest, bilinear,
/// bicubic): the CPU backend's taps (PyTorch's source indices and weights) blended on the
/// device in the CPU's order.
std::optional<GpuTensor> interpolate(const GpuTensor& x,
                                     const std::array<std::int64_t, 2>& output_size,
                                     const InterpolateOptions& options);

}  // namespace ember::gpu
