// CPU backend: quantization kernels (schemes in ember/core/quant.hpp, descriptions in
// ember/ir/quant.hpp). Operands are checked by the front end (ember/tensor/quant.hpp).
#pragma once

#include <optional>
#include <utility>

#include "ember/core/options.hpp"
#include "ember/core/quant.hpp"
#include "ember/cpu/tensor.hpp"

namespace ember::cpu {

/// Quantize, dequantize and the int8 linear of `cpu::Ops` (src/cpu/quant*.cpp).
struct QuantOps {
  using P = CpuTensor;
  using OptP = std::optional<CpuTensor>;

  /// x (float) -> (scales [params_shape] f32 or f16, zero points [params_shape] i32) by
  /// PyTorch's MinMaxObserver per group (torch.ao.quantization.observer, _calculate_qparams):
  /// lo = min(min x, 0), hi = max(max x, 0); symmetric: scale = max(-lo, hi) / ((qmax - qmin)
  /// / 2), zero point 0; affine: scale = (hi - lo) / (qmax - qmin), zero point = qmin -
  /// round(lo / scale) clamped to [qmin, qmax]; scale at least f32 epsilon; computed in f32
  /// (f16 scales are rounded before the zero point). NaN in x: ValueError naming the group
  /// ("[quantize] the scale of group g is NaN").
  static std::pair<P, P> float_quant_params(const P& x, const QuantScheme& scheme);
  /// x (float, any strides) -> values [storage_shape]: i8, or u8 holding two int4 nibbles;
  /// q = clamp(nearbyint(x * (1 / scale)) + zero_point, qmin, qmax) in f32 as ATen's
  /// quantize_val (round half to even); NaN gives qmax (as torch 2.15 on x86), +-inf
  /// the bound of its sign. Scales must be finite and positive (checked by the front end).
  static P float_quantize(const P& x, const P& scales, const OptP& zero_points,
                          const QuantScheme& scheme);
  /// values [storage_shape(shape)] -> float [shape] of `dtype`: (q - zero_point) * scale in
  /// f32 (torch's dequantize).
  static P int_dequantize(const P& values, const P& scales, const OptP& zero_points,
                          const QuantScheme& scheme, const Shape& shape, DType dtype);

  /// Int8 weight [out, in] (symmetric) -> the linear kernel's packed form: i8 of shape
  /// [packed bytes] (panels of 64 output columns, steps of 4 inputs, zero padded to 64
  /// columns and 64 inputs; layout in src/cpu/quant_linear.cpp) followed by the per-column
  /// sums of the weight as i32 (the zero-point compensation).
  static P int_quantized_linear_pack(const P& weight);
  /// y [..., out] f32 = x [..., in] f32 @ W^T + bias: each row of x is quantized to u8
  /// (affine, [0, 255], MinMax rule of ChooseQuantizationParams; or with `input`'s fixed
  /// scale and zero point when given: static quantization), multiplied with the int8
  /// weight in exact i32 sums, and scaled: y = sx * sw[o] * (sum_k qx[k] qw[o, k] - zx *
  /// colsum[o]) + bias[o]. `packed` is int_quantized_linear_pack(W) for W of shape
  /// `weight` [out, in]; `weight_scales` has `out` values (or 1, per tensor). AMX-INT8 tiles
  /// (tdpbusd) for 32 rows or more when the CPU and the OS allow them, else AVX512-VNNI (vpdpbusd),
  /// else a portable loop: the same integer sums in each.
  static P float_quantized_linear(const P& x, const P& packed, const P& weight_scales,
                                  const OptP& bias, const QuantScheme& scheme, const Shape& weight,
                                  const std::optional<ActivationQuant>& input);
  /// The statically quantized conv2d (ir::QuantizedConv2d): x [N, C_in, H, W] f32 quantized to
  /// u8 by `input` (the padding holding its zero point), the int8 weight `values`
  /// [C_out, C_in / groups * kH * kW] with `scales` ([1, 1] or [C_out, 1]), exact i32 sums,
  /// y = f32(sum (qx - zx) qw) * (sx * sw[o]) + bias[o] -> [N, C_out, H_out, W_out] f32.
  /// oneDNN's int8 convolution when Ember is built with it (EMBER_QUANT_CONV_DIRECT=1 forces
  /// the direct loop), else a direct loop: the same integer sums.
  static P float_quantized_conv2d(const P& x, const P& values, const P& scales, const OptP& bias,
                                  const QuantScheme& scheme, const Shape& weight,
                                  const ConvOptions<2>& options, const ActivationQuant& input);
};

}  // namespace ember::cpu
