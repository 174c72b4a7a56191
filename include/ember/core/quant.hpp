// Quantization schemes (Burn's QuantScheme): how a float tensor maps to small integers.
//
//   q = clamp(round_half_even(x * (1 / scale)) + zero_point, qmin, qmax)   (quantize)
//   x' = (q - zero_point) * scale                                          (dequantize)
//
// as torch.quantize_per_tensor / quantize_per_channel (ATen's quantize_val multiplies by
// the f32 reciprocal of the scale, then rounds half to even with nearbyint). One scale (and
// zero point) per group of elements; the level says what a group is:
//   Tensor   one group                             scale shape [1, ..., 1]
//   Channel  one group per index along `axis`      scale shape [1, .., C, .., 1]
//   Block    `block_size` consecutive elements of  scale shape [..., n / block_size]
//            the last dim
// Values: int8 ([-128, 127], one byte each) or int4 ([-8, 7], two's complement nibbles,
// packed two to a byte along the last dim: element 2j in the low nibble of byte j, 2j + 1
// in the high nibble, as ONNX int4 and PyTorch's quint4x2).
// Modes: symmetric (zero point 0) or affine (an integer zero point per group).
// Scales are f32, or f16 for the Block level (the f16-rounded scale is the one used).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>

#include "ember/core/dtype.hpp"
#include "ember/core/shape.hpp"

namespace ember {

/// The integer type of quantized values.
enum class QuantValue : std::uint8_t {
  Int8,  ///< [-128, 127], one byte each
  Int4,  ///< [-8, 7], packed two to a byte
};
/// Whether a group has a zero point.
enum class QuantMode : std::uint8_t {
  Symmetric,  ///< zero point 0
  Affine,     ///< an integer zero point in [qmin, qmax]
};
/// What one scale covers.
enum class QuantLevel : std::uint8_t { Tensor, Channel, Block };
/// The storage type of the scales.
enum class QuantParam : std::uint8_t { F32, F16 };

/// A quantization scheme: value type, mode, level (with its axis or block size) and scale
/// type. Build with the helpers: `QuantScheme::int8().per_channel(0)`,
/// `QuantScheme::int4().affine().per_block(32).with_f16_scales()`.
struct QuantScheme {
  QuantValue value = QuantValue::Int8;
  QuantMode mode = QuantMode::Symmetric;
  QuantLevel level = QuantLevel::Tensor;
  std::int64_t axis = 0;        ///< Channel: the channel dim (negative counts from the end)
  std::int64_t block_size = 0;  ///< Block: elements per block along the last dim
  QuantParam param = QuantParam::F32;

  bool operator==(const QuantScheme&) const = default;

  /// int8, symmetric, per tensor, f32 scales.
  static QuantScheme int8() { return {}; }
  /// int4 (packed), symmetric, per tensor, f32 scales.
  static QuantScheme int4() {
    QuantScheme s;
    s.value = QuantValue::Int4;
    return s;
  }
  QuantScheme symmetric() const {
    QuantScheme s = *this;
    s.mode = QuantMode::Symmetric;
    return s;
  }
  QuantScheme affine() const {
    QuantScheme s = *this;
    s.mode = QuantMode::Affine;
    return s;
  }
  QuantScheme per_tensor() const {
    QuantScheme s = *this;
    s.level = QuantLevel::Tensor;
    return s;
  }
  /// One scale per index along `dim` (negative counts from the end).
  QuantScheme per_channel(std::int64_t dim) const {
    QuantScheme s = *this;
    s.level = QuantLevel::Channel;
    s.axis = dim;
    return s;
  }
  /// One scale per `size` consecutive elements of the last dim.
  QuantScheme per_block(std::int64_t size) const {
    QuantScheme s = *this;
    s.level = QuantLevel::Block;
    s.block_size = size;
    return s;
  }
  /// Scales stored as f16 (Block level only).
  QuantScheme with_f16_scales() const {
    QuantScheme s = *this;
    s.param = QuantParam::F16;
    return s;
  }

  /// Smallest and largest quantized value: -128 / 127 (int8), -8 / 7 (int4).
  std::int64_t qmin() const { return value == QuantValue::Int8 ? -128 : -8; }
  std::int64_t qmax() const { return value == QuantValue::Int8 ? 127 : 7; }
  /// Bits per value (8 or 4).
  int bits() const { return value == QuantValue::Int8 ? 8 : 4; }
  /// The dtype of the scales: F32 or F16.
  DType scale_dtype() const { return param == QuantParam::F16 ? DType::F16 : DType::F32; }

  /// "int8 symmetric per-tensor f32", "int4 affine per-block(32) f16",
  /// "int8 symmetric per-channel(axis=0) f32".
  std::string to_string() const;

  /// Checks the scheme against the float tensor it quantizes (`dtype`, `shape`), throwing
  /// "[op] ..." errors: DTypeError when dtype is not a float type (an int or bool tensor);
  /// ShapeError for a rank-0 tensor, an axis out of range, a block size that is not positive
  /// or does not divide the last dim; ValueError for f16 scales outside the Block level.
  void check(std::string_view op, const Shape& shape, DType dtype) const;

  /// The shape of the scales (and zero points) for a tensor of `shape` (rank kept:
  /// ones except the channel dim, or the last dim divided by the block size).
  Shape params_shape(const Shape& shape) const;
  /// The shape of the stored values: `shape` for int8, the last dim halved (rounded up)
  /// for packed int4.
  Shape storage_shape(const Shape& shape) const;
  /// The channel dim for a tensor of `rank` (axis normalised).
  std::size_t channel_dim(std::size_t rank) const;
};

inline std::ostream& operator<<(std::ostream& os, const QuantScheme& s) {
  return os << s.to_string();
}

/// The fixed quantization of a layer's input under static quantization (PyTorch's quint8
/// activations, parameters from a calibration observer): u8, affine, per tensor,
///   q = clamp(round_half_even(x * (1 / scale)) + zero_point, 0, 255),
/// so inputs outside [(0 - zero_point) * scale, (255 - zero_point) * scale] clamp.
struct ActivationQuant {
  float scale = 1.0f;           ///< input units per u8 step; in [f32 eps, FLT_MAX / 256]
  std::int32_t zero_point = 0;  ///< the u8 value of 0.0, in [0, 255]

  bool operator==(const ActivationQuant&) const = default;

  /// The parameters for the range [lo, hi] by the MinMax rule (the range widened to
  /// contain 0; torch's MinMaxObserver for quint8): scale = max((hi - lo) / 255, eps_f32),
  /// zero_point = clamp(-round_half_even(lo / scale), 0, 255). ValueError for NaN, lo > hi
  /// or a range whose scale overflows.
  static ActivationQuant from_range(float lo, float hi);
  /// ValueError "[op] ..." unless the scale is in [f32 epsilon, FLT_MAX / 256] (the kernels
  /// multiply by 1 / scale; calibration gives at least epsilon) and the zero point in [0, 255].
  void check(std::string_view op) const;
  /// "u8 affine per-tensor (scale=0.0123, zero_point=17)".
  std::string to_string() const;
};

inline std::ostream& operator<<(std::ostream& os, const ActivationQuant& a) {
  return os << a.to_string();
}

/// Parses the short names of the CLI and configs: "int8" (symmetric per tensor),
/// "int8-affine", "int8-per-channel" (axis 0), "int4-block32" (symmetric blocks of 32 with
/// f16 scales: blocks default to f16), "int4-block32-f32" (f32 scales). ValueError
/// "[quantize] unknown scheme 'x' (known: ...)" otherwise.
QuantScheme parse_quant_scheme(std::string_view name);

}  // namespace ember
