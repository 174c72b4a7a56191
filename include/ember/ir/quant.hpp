// Op descriptions: quantization (schemes in ember/core/quant.hpp).
//
// OPT rows of the registry (EMBER_IR_QUANT below): a backend may define the kernels (the CPU
// does, src/cpu/quant*.cpp); on a stack without them Dispatch runs the front end's composites
// (ember/tensor/quant_composite.hpp), and so does the front end on a backend without them.
#pragma once

#include <optional>

#include "ember/core/options.hpp"
#include "ember/core/quant.hpp"
#include "ember/ir/desc.hpp"

namespace ember::ir {

/// The scales and zero points of a float tensor x under `scheme` (PyTorch's MinMaxObserver
/// rule per group, see QuantScheme). x -> (scales [params_shape] f32/f16, zero points
/// [params_shape] i32, zeros when symmetric).
struct QuantParams {
  static constexpr const char* name = "quantize";
  static constexpr Bound bound = Bound::Compute;
  QuantScheme scheme;
  EMBER_IR_FIELDS(scheme)
  TensorTypes2 infer(const TensorType& x) const;
};

/// x (float) with scales (and, affine only, zero points) of the scheme's params shape ->
/// values [storage_shape]: i8 for int8, u8 holding two int4 nibbles for int4.
struct Quantize {
  static constexpr const char* name = "quantize";
  static constexpr Bound bound = Bound::Memory;
  QuantScheme scheme;
  EMBER_IR_FIELDS(scheme)
  TensorType infer(const TensorType& x, const TensorType& scales,
                   const std::optional<TensorType>& zero_points) const;
};

/// Values [storage_shape(shape)] with their scales (and zero points) -> float [shape] of
/// `dtype`.
struct Dequantize {
  static constexpr const char* name = "dequantize";
  static constexpr Bound bound = Bound::Memory;
  QuantScheme scheme;
  Shape shape;
  DType dtype = DType::F32;
  EMBER_IR_FIELDS(scheme, shape, dtype)
  TensorType infer(const TensorType& values, const TensorType& scales,
                   const std::optional<TensorType>& zero_points) const;
};

/// The most inputs of QuantizedLinear: sums of `in` products of u8 and s8 stay exact in i32.
inline constexpr std::int64_t kMaxQuantizedLinearIn = 65536;

/// The int8 weight W [out, in] of a QuantizedLinear in the backend's own packed form (the
/// layout is the backend's: no shape rule; the composite keeps W as it is).
struct QuantizedLinearPack {
  static constexpr const char* name = "quantized_linear_pack";
  static constexpr Bound bound = Bound::Memory;
  EMBER_IR_NO_FIELDS
};

/// y = x W^T + b with W int8 and x quantized to u8: on the fly per row (dynamic, as
/// torch.ao.quantization.quantize_dynamic's Linear) or, when `input` is given, with its
/// fixed calibrated scale and zero point (static, torch.ao.nn.quantized.Linear's quint8
/// input). x [..., in] f32, the weight (logical shape `weight` = [out, in]) under `scheme`
/// (int8 symmetric, per tensor or per channel along axis 0) as packed by
/// QuantizedLinearPack, its scales ([1] or [out] f32), bias [out] f32 -> [..., out] f32.
/// UnsupportedError for other schemes or in > kMaxQuantizedLinearIn; ValueError for bad
/// input parameters (ActivationQuant::check).
struct QuantizedLinear {
  static constexpr const char* name = "quantized_linear";
  static constexpr Bound bound = Bound::Compute;
  QuantScheme scheme;
  Shape weight;
  std::optional<ActivationQuant> input;
  EMBER_IR_FIELDS(scheme, weight, input)
  /// The rule without the packed operand (checked when a layer is built).
  TensorType check(const TensorType& x, const std::optional<TensorType>& bias) const;
  TensorType infer(const TensorType& x, const TensorType& packed, const TensorType& scales,
                   const std::optional<TensorType>& bias) const;
};

/// y = conv2d(x, W) + b computed on the integers, with x quantized to u8 by the fixed
/// calibrated `input` parameters (static quantization: torch.ao.nn.quantized.Conv2d with a
/// quint8 input, f32 output): x [N, C_in, H, W] f32; the weight's int8 values
/// [C_out, C_in / groups * kH * kW] (nn::QuantizedWeight's matrix) under `scheme` (int8
/// symmetric, per tensor or per channel along axis 0), its logical shape `weight` =
/// [C_out, C_in / groups, kH, kW]; scales [1, 1] or [C_out, 1] f32; bias [C_out] f32 ->
/// [N, C_out, H_out, W_out] f32 (conv2d's shape rule and errors), y = sx * sw[o] *
/// sum (qx - zx) qw + b[o] with exact integer sums. UnsupportedError for other schemes or
/// more than kMaxQuantizedLinearIn products per output; ValueError for bad input
/// parameters.
struct QuantizedConv2d {
  static constexpr const char* name = "quantized_conv2d";
  static constexpr Bound bound = Bound::Compute;
  QuantScheme scheme;
  Shape weight;
  ConvOptions<2> options;
  ActivationQuant input;
  EMBER_IR_FIELDS(scheme, weight, options, input)
  /// The rule without the weight's tensors (checked when a layer is built).
  TensorType check(const TensorType& x, const std::optional<TensorType>& bias) const;
  TensorType infer(const TensorType& x, const TensorType& values, const TensorType& scales,
                   const std::optional<TensorType>& bias) const;
};

}  // namespace ember::ir

// Registry rows (ember/ir/core.hpp gives the columns). float_quantize has no float result
// (Autodiff passes it through). The pack is class F although it returns an int tensor: it
// pairs with float_quantized_linear, and a decorator that does not offer the one (Autodiff)
// must not offer the other, or the composite linear would get the backend's packed bytes.
// clang-format off
#define EMBER_IR_QUANT(X, XN) \
  X(OPT, F, FI, float_quant_params, QuantParams, (const F&, const QuantScheme&)) \
  X(OPT, N, I, float_quantize, Quantize, (const F&, const F&, const OptI&, const QuantScheme&)) \
  X(OPT, F, F, int_dequantize, Dequantize, \
    (const I&, const F&, const OptI&, const QuantScheme&, const Shape&, DType)) \
  X(OPT, F, I, int_quantized_linear_pack, QuantizedLinearPack, (const I&)) \
  X(OPT, F, F, float_quantized_linear, QuantizedLinear, \
    (const F&, const I&, const F&, const OptF&, const QuantScheme&, const Shape&, \
     const std::optional<ActivationQuant>&)) \
  X(OPT, F, F, float_quantized_conv2d, QuantizedConv2d, \
    (const F&, const I&, const F&, const OptF&, const QuantScheme&, const Shape&, \
     const ConvOptions<2>&, const ActivationQuant&))
// clang-format on
