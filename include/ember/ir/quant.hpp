// Op descriptions: quantization (schemes in ember/core/quant.hpp).
//
// Not yet rows of the registry (ember/ir/registry.hpp): the CPU backend defines these
// functions and the front end (ember/tensor/quant.hpp) finds them with `requires`, as for
// other fast paths that only the CPU has today. Rows (and Dispatch's forwarding) come with a
// quantized primitive in the contract; the descriptions are already the one place of the
// shape and dtype rules.
#pragma once

#include <optional>

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

/// y = x W^T + b with W int8 and x quantized on the fly (per row, as
/// torch.ao.quantization.quantize_dynamic's Linear): x [..., in] f32, weight (logical)
/// [out, in] under `scheme` (int8 symmetric, per tensor or per channel along axis 0),
/// bias [out] f32 -> [..., out] f32. UnsupportedError for other schemes or in >
/// kMaxQuantizedLinearIn.
struct QuantizedLinear {
  static constexpr const char* name = "quantized_linear";
  static constexpr Bound bound = Bound::Compute;
  QuantScheme scheme;
  EMBER_IR_FIELDS(scheme)
  TensorType infer(const TensorType& x, const Shape& weight,
                   const std::optional<TensorType>& bias) const;
};

}  // namespace ember::ir
