// Element and value types of the kernel language.
//
// A value has an element type and a vector width ("lanes", Burn's line size: 1, 2, 4 or 8).
// Arithmetic on f16 and bf16 values runs in f32 and rounds to the type (round to nearest
// even) after every operation, on every target, so all targets agree bit for bit on them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "ember/kernel/core.hpp"

namespace ember::kernel {

/// Element types. Bool is one byte in memory (0 or 1), as ember's Bool tensors.
enum class Elem : std::uint8_t { F32, F16, BF16, F64, I32, I64, U32, U8, Bool };

inline constexpr Elem kAllElems[] = {Elem::F32, Elem::F16, Elem::BF16, Elem::F64, Elem::I32,
                                     Elem::I64, Elem::U32, Elem::U8,   Elem::Bool};

/// Bytes of one element in memory.
constexpr int elem_bytes(Elem e) {
  switch (e) {
    case Elem::F64:
    case Elem::I64:
      return 8;
    case Elem::F32:
    case Elem::I32:
    case Elem::U32:
      return 4;
    case Elem::F16:
    case Elem::BF16:
      return 2;
    case Elem::U8:
    case Elem::Bool:
      return 1;
  }
  return 0;
}
constexpr bool is_float(Elem e) {
  return e == Elem::F32 || e == Elem::F16 || e == Elem::BF16 || e == Elem::F64;
}
/// f16 and bf16: held as f32 in registers.
constexpr bool is_half(Elem e) {
  return e == Elem::F16 || e == Elem::BF16;
}
constexpr bool is_int(Elem e) {
  return e == Elem::I32 || e == Elem::I64 || e == Elem::U32 || e == Elem::U8;
}
constexpr bool is_signed_int(Elem e) {
  return e == Elem::I32 || e == Elem::I64;
}
constexpr bool is_unsigned_int(Elem e) {
  return e == Elem::U32 || e == Elem::U8;
}

/// "f32", "f16", ..., "bool".
std::string_view elem_name(Elem e);
/// The kernel element type of a tensor dtype; UnsupportedError for i16/i8.
Elem elem_of(DType d);

/// A value type: element type and vector width.
struct Type {
  Elem elem = Elem::F32;
  std::uint8_t lanes = 1;
  friend bool operator==(const Type&, const Type&) = default;
};
constexpr Type scalar_type(Elem e) {
  return Type{e, 1};
}
/// "f32", "f32x4", ...
std::string type_name(Type t);

}  // namespace ember::kernel
