// Element types: DType, the storage types for f16/bf16, and finfo.
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>
#include <ostream>
#include <string_view>
#include <type_traits>

#include "ember/core/error.hpp"

namespace ember {

/// Run-time element type of a tensor.
enum class DType : std::uint8_t { F64, F32, F16, BF16, I64, I32, I16, I8, U8, Bool };

/// IEEE 754 binary16, stored as its 16 bits. Arithmetic goes through float.
struct f16 {
  std::uint16_t bits = 0;
  f16() = default;
  explicit f16(float v) : bits(from_float(v)) {}
  operator float() const { return to_float(bits); }
  static std::uint16_t from_float(float v);  // round to nearest even
  static float to_float(std::uint16_t h);
};

/// bfloat16 (the upper 16 bits of an IEEE binary32), stored as its bits.
struct bf16 {
  std::uint16_t bits = 0;
  bf16() = default;
  explicit bf16(float v) : bits(from_float(v)) {}
  operator float() const { return to_float(bits); }
  static std::uint16_t from_float(float v) {  // round to nearest even, NaN kept quiet
    std::uint32_t u;
    std::memcpy(&u, &v, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((u >> 16) | 0x40u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return static_cast<std::uint16_t>(u >> 16);
  }
  static float to_float(std::uint16_t b) {
    std::uint32_t u = static_cast<std::uint32_t>(b) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
};

inline float f16::to_float(std::uint16_t h) {
  const std::uint32_t sign = (h & 0x8000u) << 16;
  std::uint32_t exp = (h >> 10) & 0x1fu;
  std::uint32_t mant = h & 0x3ffu;
  std::uint32_t u;
  if (exp == 0) {
    if (mant == 0) {
      u = sign;
    } else {  // subnormal: renormalise
      int e = -1;
      do {
        ++e;
        mant <<= 1;
      } while ((mant & 0x400u) == 0);
      u = sign | ((127 - 15 - e) << 23) | ((mant & 0x3ffu) << 13);
    }
  } else if (exp == 0x1f) {
    u = sign | 0x7f800000u | (mant << 13);
  } else {
    u = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

inline std::uint16_t f16::from_float(float v) {
  std::uint32_t u;
  std::memcpy(&u, &v, 4);
  const std::uint32_t sign = (u >> 16) & 0x8000u;
  const std::uint32_t absu = u & 0x7fffffffu;
  if (absu > 0x7f800000u) return static_cast<std::uint16_t>(sign | 0x7e00u);   // NaN
  if (absu >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // overflow -> inf
  if (absu < 0x38800000u) {  // subnormal or zero in f16
    if (absu < 0x33000000u) return static_cast<std::uint16_t>(sign);
    const std::uint32_t exp = absu >> 23;
    const std::uint32_t mant = (absu & 0x7fffffu) | 0x800000u;
    const std::uint32_t shift = 126 - exp;  // value * 2^24 = mant >> shift, shift in [14, 24]
    std::uint32_t res = mant >> shift;
    const std::uint32_t rem = mant & ((1u << shift) - 1);
    const std::uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (res & 1u))) ++res;
    return static_cast<std::uint16_t>(sign | res);
  }
  std::uint32_t res = ((absu >> 13) - (112u << 10));
  const std::uint32_t rem = absu & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (res & 1u))) ++res;
  return static_cast<std::uint16_t>(sign | res);
}

/// Size of one element in bytes (bool is one byte).
constexpr std::size_t dtype_size(DType d) {
  switch (d) {
    case DType::F64:
    case DType::I64:
      return 8;
    case DType::F32:
    case DType::I32:
      return 4;
    case DType::F16:
    case DType::BF16:
    case DType::I16:
      return 2;
    case DType::I8:
    case DType::U8:
    case DType::Bool:
      return 1;
  }
  return 0;
}

constexpr bool is_float(DType d) {
  return d == DType::F64 || d == DType::F32 || d == DType::F16 || d == DType::BF16;
}
constexpr bool is_int(DType d) {
  return d == DType::I64 || d == DType::I32 || d == DType::I16 || d == DType::I8 || d == DType::U8;
}
constexpr bool is_bool(DType d) {
  return d == DType::Bool;
}
constexpr bool is_signed(DType d) {
  return d != DType::U8 && d != DType::Bool;
}

/// Lower-case name as PyTorch's short names: "f32", "i64", "bool", ...
constexpr std::string_view dtype_name(DType d) {
  switch (d) {
    case DType::F64:
      return "f64";
    case DType::F32:
      return "f32";
    case DType::F16:
      return "f16";
    case DType::BF16:
      return "bf16";
    case DType::I64:
      return "i64";
    case DType::I32:
      return "i32";
    case DType::I16:
      return "i16";
    case DType::I8:
      return "i8";
    case DType::U8:
      return "u8";
    case DType::Bool:
      return "bool";
  }
  return "?";
}

/// Parses a name produced by dtype_name (also accepts "float32", "int64", ...).
/// Throws DTypeError for an unknown name.
DType dtype_from_name(std::string_view name);

inline std::ostream& operator<<(std::ostream& os, DType d) {
  return os << dtype_name(d);
}

/// Numerical properties of a float dtype, as torch.finfo.
struct FInfo {
  int bits;
  double eps;              ///< difference between 1.0 and the next representable value
  double max;              ///< largest finite value
  double min;              ///< most negative finite value (= -max)
  double smallest_normal;  ///< smallest positive normal value (torch's `tiny`)
  double resolution;       ///< approximate decimal resolution, 10^-digits10
};

/// finfo for a float dtype; throws DTypeError for a non-float dtype.
FInfo finfo(DType d);

/// Maps a C++ element type to its DType.
template <class T>
constexpr DType dtype_of() {
  if constexpr (std::is_same_v<T, double>)
    return DType::F64;
  else if constexpr (std::is_same_v<T, float>)
    return DType::F32;
  else if constexpr (std::is_same_v<T, f16>)
    return DType::F16;
  else if constexpr (std::is_same_v<T, bf16>)
    return DType::BF16;
  else if constexpr (std::is_same_v<T, std::int64_t>)
    return DType::I64;
  else if constexpr (std::is_same_v<T, std::int32_t>)
    return DType::I32;
  else if constexpr (std::is_same_v<T, std::int16_t>)
    return DType::I16;
  else if constexpr (std::is_same_v<T, std::int8_t>)
    return DType::I8;
  else if constexpr (std::is_same_v<T, std::uint8_t>)
    return DType::U8;
  else if constexpr (std::is_same_v<T, bool>)
    return DType::Bool;
  else
    static_assert(sizeof(T) == 0, "type has no Ember dtype");
}

/// Calls f.template operator()<T>() with T the C++ type of `d`.
/// Usage: visit_dtype(d, [&]<class T>() { ... });
template <class F>
decltype(auto) visit_dtype(DType d, F&& f) {
  switch (d) {
    case DType::F64:
      return f.template operator()<double>();
    case DType::F32:
      return f.template operator()<float>();
    case DType::F16:
      return f.template operator()<f16>();
    case DType::BF16:
      return f.template operator()<bf16>();
    case DType::I64:
      return f.template operator()<std::int64_t>();
    case DType::I32:
      return f.template operator()<std::int32_t>();
    case DType::I16:
      return f.template operator()<std::int16_t>();
    case DType::I8:
      return f.template operator()<std::int8_t>();
    case DType::U8:
      return f.template operator()<std::uint8_t>();
    case DType::Bool:
      return f.template operator()<bool>();
  }
  throw DTypeError("[visit_dtype] invalid dtype value");
}

/// Result dtype of a binary op between two dtypes of the same kind, following
/// PyTorch's type promotion (f16+f32 -> f32, bf16+f16 -> f32, i32+i64 -> i64,
/// u8+i8 -> i16).
DType promote_types(DType a, DType b);

}  // namespace ember
