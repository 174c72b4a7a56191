// CPU backend: conv functions of the contract (see ember/backend/conv.hpp).
//
// Convolutions run as im2col (vol2col for 3d) + GEMM (OpenBLAS sgemm/dgemm), one GEMM per
// (image, group) with BLAS threading; transposed convolutions as GEMM + col2im. f16/bf16
// compute through f32. Inputs may have any strides.
#pragma once

#include <array>
#include <cstdint>
#include <optional>

#include "ember/backend/conv.hpp"
#include "ember/cpu/tensor.hpp"

namespace ember::cpu {

struct ConvOps {
  using P = CpuTensor;
  using OptP = std::optional<CpuTensor>;

  /// [N, C_in, L] * [C_out, C_in/g, k] -> [N, C_out, L_out]
  static P conv1d(const P& x, const P& weight, const OptP& bias, const ConvOptions<1>& opt);
  /// [N, C_in, H, W] * [C_out, C_in/g, kh, kw] -> [N, C_out, H_out, W_out]
  static P conv2d(const P& x, const P& weight, const OptP& bias, const ConvOptions<2>& opt);
  /// [N, C_in, D, H, W] * [C_out, C_in/g, kd, kh, kw] -> [N, C_out, D_out, H_out, W_out]
  static P conv3d(const P& x, const P& weight, const OptP& bias, const ConvOptions<3>& opt);
  /// [N, C_in, L] * [C_in, C_out/g, k] -> [N, C_out, L_out]
  static P conv_transpose1d(const P& x, const P& weight, const OptP& bias,
                            const ConvTransposeOptions<1>& opt);
  static P conv_transpose2d(const P& x, const P& weight, const OptP& bias,
                            const ConvTransposeOptions<2>& opt);
  static P conv_transpose3d(const P& x, const P& weight, const OptP& bias,
                            const ConvTransposeOptions<3>& opt);
  /// Gradients of y = convKd(x, w; opt) (ember/backend/conv.hpp, optional functions): dx from
  /// dy [N, C_out, *S_out] and w [C_out, C_in/g, *k] -> x_shape; dw from x [N, C_in, *S] and
  /// dy -> w_shape. f32 runs oneDNN's convolution backward-data / backward-weights
  /// primitives (cached by shape); other dtypes, and builds without oneDNN, run GEMM +
  /// col2im for dx and im2col + GEMM (summed over images) for dw.
  static P conv1d_x_backward(const P& output_grad, const P& weight, const Shape& x_shape,
                             const ConvOptions<1>& opt);
  static P conv2d_x_backward(const P& output_grad, const P& weight, const Shape& x_shape,
                             const ConvOptions<2>& opt);
  static P conv3d_x_backward(const P& output_grad, const P& weight, const Shape& x_shape,
                             const ConvOptions<3>& opt);
  static P conv1d_weight_backward(const P& x, const P& output_grad, const Shape& weight_shape,
                                  const ConvOptions<1>& opt);
  static P conv2d_weight_backward(const P& x, const P& output_grad, const Shape& weight_shape,
                                  const ConvOptions<2>& opt);
  static P conv3d_weight_backward(const P& x, const P& output_grad, const Shape& weight_shape,
                                  const ConvOptions<3>& opt);
  /// torchvision.ops.deform_conv2d semantics (bilinear sampling, zero outside).
  static P deform_conv2d(const P& x, const P& offset, const P& weight, const OptP& mask,
                         const OptP& bias, const DeformConvOptions& opt);
  /// [N, C, H, W] -> [N, C*kh*kw, L] (torch.nn.functional.unfold).
  static P unfold4d(const P& x, const std::array<std::int64_t, 2>& kernel_size,
                    const UnfoldOptions& opt);
  /// [N, C*kh*kw, L] -> [N, C, H, W], summing overlaps (torch.nn.functional.fold).
  static P fold4d(const P& x, const std::array<std::int64_t, 2>& output_size,
                  const std::array<std::int64_t, 2>& kernel_size, const UnfoldOptions& opt);
};

}  // namespace ember::cpu
