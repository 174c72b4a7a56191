#include "ember/core/dtype.hpp"

#include <cmath>
#include <string>

namespace ember {

DType dtype_from_name(std::string_view name) {
  struct Entry {
    std::string_view a, b;
    DType d;
  };
  static constexpr Entry table[] = {
      {"f64", "float64", DType::F64}, {"f32", "float32", DType::F32},
      {"f16", "float16", DType::F16}, {"bf16", "bfloat16", DType::BF16},
      {"i64", "int64", DType::I64},   {"i32", "int32", DType::I32},
      {"i16", "int16", DType::I16},   {"i8", "int8", DType::I8},
      {"u8", "uint8", DType::U8},     {"bool", "bool", DType::Bool},
  };
  for (const auto& e : table) {
    if (name == e.a || name == e.b) return e.d;
  }
  throw DTypeError("[dtype_from_name] unknown dtype name '" + std::string(name) + "'");
}

FInfo finfo(DType d) {
  switch (d) {
    case DType::F64:
      return {64,
              std::ldexp(1.0, -52),
              1.7976931348623157e308,
              -1.7976931348623157e308,
              std::ldexp(1.0, -1022),
              1e-15};
    case DType::F32:
      return {32,
              std::ldexp(1.0, -23),
              3.4028234663852886e38,
              -3.4028234663852886e38,
              std::ldexp(1.0, -126),
              1e-6};
    case DType::F16:
      return {16, std::ldexp(1.0, -10), 65504.0, -65504.0, std::ldexp(1.0, -14), 1e-3};
    case DType::BF16:
      return {16,
              std::ldexp(1.0, -7),
              3.3895313892515355e38,
              -3.3895313892515355e38,
              std::ldexp(1.0, -126),
              1e-2};
    default:
      break;
  }
  throw DTypeError("[finfo] dtype " + std::string(dtype_name(d)) + " is not a float dtype");
}

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  if (is_float(a) || is_float(b)) {
    if (!is_float(a)) return b;
    if (!is_float(b)) return a;
    if (a == DType::F64 || b == DType::F64) return DType::F64;
    if (a == DType::F32 || b == DType::F32) return DType::F32;
    return DType::F32;  // f16 + bf16
  }
  if (is_bool(a)) return b;
  if (is_bool(b)) return a;
  // both ints
  const bool ua = a == DType::U8, ub = b == DType::U8;
  auto width = [](DType d) { return dtype_size(d); };
  if (ua || ub) {
    const DType other = ua ? b : a;
    if (other == DType::I8) return DType::I16;
    return other;  // i16/i32/i64 hold all of u8
  }
  return width(a) >= width(b) ? a : b;
}

}  // namespace ember
