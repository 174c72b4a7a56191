// The convolution gradients as implicit matrix products (src/gpu/conv_backward.cpp), used by
// src/gpu/conv.cpp for conv_x_backward (and so conv_transpose) and conv_weight_backward.
// Not installed.
#pragma once

#include <array>
#include <cstdint>
#include <optional>

#include "ember/core/shape.hpp"
#include "ember/gpu/tensor.hpp"

namespace ember::gpu::detail {

/// One convolution y = conv(x, w) in 3-d (1-d and 2-d ones have leading spatial dims of
/// size 1): batch, groups, input and output channels per group, and per spatial dim the
/// input size, kernel size, output size, stride, padding and dilation.
struct ConvShape {
  std::int64_t batch = 1, groups = 1, cg = 1, cog = 1;
  std::array<std::int64_t, 3> in{1, 1, 1}, k{1, 1, 1}, out{1, 1, 1};
  std::array<std::int64_t, 3> stride{1, 1, 1}, pad{0, 0, 0}, dil{1, 1, 1};
};

/// dx (x_shape, [B, G * cg, *in]) from dy [B, G * cog, *out] and w [G * cog, cg, *k]: one
/// tiled kernel, no column matrix. nullopt when the kernel does not serve the case (a
/// software device whose loop limit the walk would pass, a grid beyond the device's limits,
/// EMBER_GPU_CONV_IM2COL=1); the caller then takes the im2col path.
std::optional<GpuTensor> conv_data_grad(const GpuTensor& dy, const GpuTensor& w,
                                        const Shape& x_shape, const ConvShape& s);

/// dw (w_shape, [G * cog, cg, *k]) from x [B, G * cg, *in] and dy [B, G * cog, *out]: a
/// tiled kernel over slices of the batch and the output positions (accumulating in f32, f64
/// for f64) and one kernel that sums the slices in order. nullopt as for conv_data_grad.
std::optional<GpuTensor> conv_weight_grad(const GpuTensor& x, const GpuTensor& dy,
                                          const Shape& w_shape, const ConvShape& s);

}  // namespace ember::gpu::detail
