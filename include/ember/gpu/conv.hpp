// Convolutions of the GPU backends (src/gpu/conv.cpp): im2col + the tiled matrix product,
// col2im for the input gradient; 1-3 spatial dims, stride, padding, dilation, groups; and
// unfold / fold (im2col / col2im alone).
// Shapes as the backend contract's (ember/backend/conv.hpp): x [B, C_in, *S], weight
// [C_out, C_in/G, *k], bias [C_out]; the transposed convolution's weight [C_in, C_out/G, *k].
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "ember/core/options.hpp"
#include "ember/gpu/tensor.hpp"

namespace ember::gpu {

/// Whether the device kernels serve a convolution of x with w (float dtypes the device has,
/// one dtype, one device, 32-bit element counts, kernel extents of at most 65,535: col2im loops
/// over each kernel dim and llvmpipe ends a loop after 65,535 iterations).
bool conv_native(const GpuTensor& x, const GpuTensor& w);

template <std::size_t N>
GpuTensor conv(const GpuTensor& x, const GpuTensor& w, const std::optional<GpuTensor>& bias,
               const ConvOptions<N>& options);
/// The input gradient [B, C_in, *S] (x_shape) from the output gradient dy [B, C_out, *O].
template <std::size_t N>
GpuTensor conv_x_backward(const GpuTensor& dy, const GpuTensor& w, const Shape& x_shape,
                          const ConvOptions<N>& options);
/// The weight gradient (w_shape) from the input x and the output gradient dy.
template <std::size_t N>
GpuTensor conv_weight_backward(const GpuTensor& x, const GpuTensor& dy, const Shape& w_shape,
                               const ConvOptions<N>& options);
template <std::size_t N>
GpuTensor conv_transpose(const GpuTensor& x, const GpuTensor& w,
                         const std::optional<GpuTensor>& bias,
                         const ConvTransposeOptions<N>& options);

/// torch.nn.functional.unfold of x [N, C, H, W]: [N, C * kh * kw, L] (im2col); nullopt for a
/// dtype the kernels lack.
std::optional<GpuTensor> unfold4d(const GpuTensor& x, const std::array<std::int64_t, 2>& kernel,
                                  const UnfoldOptions& options);
/// torch.nn.functional.fold of cols [N, C * kh * kw, L] into [N, C, H, W] (output_size), the
/// overlapping entries summed (col2im); nullopt for a dtype the kernels lack or a kernel
/// extent above 65,535.
std::optional<GpuTensor> fold4d(const GpuTensor& cols,
                                const std::array<std::int64_t, 2>& output_size,
                                const std::array<std::int64_t, 2>& kernel,
                                const UnfoldOptions& options);

}  // namespace ember::gpu
