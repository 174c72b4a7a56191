// Element types: names, storage dtypes, and the small float formats (float8, float4,
// e8m0) decoded and encoded by table.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "onnx_internal.hpp"

namespace ember::onnx {

std::string elem_type_name(ElemType t) {
  switch (t) {
    case ElemType::Undefined:
      return "undefined";
    case ElemType::Float:
      return "float";
    case ElemType::UInt8:
      return "uint8";
    case ElemType::Int8:
      return "int8";
    case ElemType::UInt16:
      return "uint16";
    case ElemType::Int16:
      return "int16";
    case ElemType::Int32:
      return "int32";
    case ElemType::Int64:
      return "int64";
    case ElemType::String:
      return "string";
    case ElemType::Bool:
      return "bool";
    case ElemType::Float16:
      return "float16";
    case ElemType::Double:
      return "double";
    case ElemType::UInt32:
      return "uint32";
    case ElemType::UInt64:
      return "uint64";
    case ElemType::Complex64:
      return "complex64";
    case ElemType::Complex128:
      return "complex128";
    case ElemType::BFloat16:
      return "bfloat16";
    case ElemType::Float8E4M3FN:
      return "float8e4m3fn";
    case ElemType::Float8E4M3FNUZ:
      return "float8e4m3fnuz";
    case ElemType::Float8E5M2:
      return "float8e5m2";
    case ElemType::Float8E5M2FNUZ:
      return "float8e5m2fnuz";
    case ElemType::UInt4:
      return "uint4";
    case ElemType::Int4:
      return "int4";
    case ElemType::Float4E2M1:
      return "float4e2m1";
    case ElemType::Float8E8M0:
      return "float8e8m0";
    case ElemType::UInt2:
      return "uint2";
    case ElemType::Int2:
      return "int2";
  }
  return "type" + std::to_string(static_cast<int>(t));
}

DType storage_dtype(ElemType t) {
  switch (t) {
    case ElemType::Float:
      return DType::F32;
    case ElemType::Double:
      return DType::F64;
    case ElemType::Float16:
      return DType::F16;
    case ElemType::BFloat16:
      return DType::BF16;
    case ElemType::UInt8:
      return DType::U8;
    case ElemType::Int8:
      return DType::I8;
    case ElemType::Int16:
      return DType::I16;
    case ElemType::UInt16:
      return DType::I32;
    case ElemType::Int32:
      return DType::I32;
    case ElemType::Int64:
      return DType::I64;
    case ElemType::UInt32:
      return DType::I64;
    case ElemType::UInt64:
      return DType::I64;
    case ElemType::Bool:
      return DType::Bool;
    case ElemType::Float8E4M3FN:
    case ElemType::Float8E4M3FNUZ:
    case ElemType::Float8E5M2:
    case ElemType::Float8E5M2FNUZ:
    case ElemType::Float8E8M0:
    case ElemType::Float4E2M1:
      return DType::F32;
    case ElemType::Int4:
    case ElemType::Int2:
      return DType::I8;
    case ElemType::UInt4:
    case ElemType::UInt2:
      return DType::U8;
    default:
      break;
  }
  detail::fail<UnsupportedError>("onnx", "element type ", elem_type_name(t),
                                 " has no numeric storage in Ember");
}

ElemType elem_type_of(DType d) {
  switch (d) {
    case DType::F64:
      return ElemType::Double;
    case DType::F32:
      return ElemType::Float;
    case DType::F16:
      return ElemType::Float16;
    case DType::BF16:
      return ElemType::BFloat16;
    case DType::I64:
      return ElemType::Int64;
    case DType::I32:
      return ElemType::Int32;
    case DType::I16:
      return ElemType::Int16;
    case DType::I8:
      return ElemType::Int8;
    case DType::U8:
      return ElemType::UInt8;
    case DType::Bool:
      return ElemType::Bool;
  }
  return ElemType::Undefined;
}

bool is_float_type(ElemType t) {
  switch (t) {
    case ElemType::Float:
    case ElemType::Double:
    case ElemType::Float16:
    case ElemType::BFloat16:
    case ElemType::Float8E4M3FN:
    case ElemType::Float8E4M3FNUZ:
    case ElemType::Float8E5M2:
    case ElemType::Float8E5M2FNUZ:
    case ElemType::Float8E8M0:
    case ElemType::Float4E2M1:
      return true;
    default:
      return false;
  }
}

bool is_int_type(ElemType t) {
  switch (t) {
    case ElemType::UInt8:
    case ElemType::Int8:
    case ElemType::UInt16:
    case ElemType::Int16:
    case ElemType::Int32:
    case ElemType::Int64:
    case ElemType::UInt32:
    case ElemType::UInt64:
    case ElemType::UInt4:
    case ElemType::Int4:
    case ElemType::UInt2:
    case ElemType::Int2:
      return true;
    default:
      return false;
  }
}

bool is_signed_int_type(ElemType t) {
  switch (t) {
    case ElemType::Int8:
    case ElemType::Int16:
    case ElemType::Int32:
    case ElemType::Int64:
    case ElemType::Int4:
    case ElemType::Int2:
      return true;
    default:
      return false;
  }
}

namespace detail {

bool is_small_float(ElemType t) {
  return t == ElemType::Float8E4M3FN || t == ElemType::Float8E4M3FNUZ ||
         t == ElemType::Float8E5M2 || t == ElemType::Float8E5M2FNUZ || t == ElemType::Float8E8M0 ||
         t == ElemType::Float4E2M1;
}

int small_float_bits(ElemType t) {
  return t == ElemType::Float4E2M1 ? 4 : 8;
}

float small_float_decode(ElemType t, std::uint32_t code) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  auto make = [](int sign, int exp_bits, int man_bits, int bias, std::uint32_t e, std::uint32_t m) {
    float v;
    if (e == 0) {
      v = std::ldexp(static_cast<float>(m), 1 - bias - man_bits);
    } else {
      v = std::ldexp(1.0f + static_cast<float>(m) / static_cast<float>(1u << man_bits),
                     static_cast<int>(e) - bias);
    }
    (void)exp_bits;
    return sign ? -v : v;
  };
  switch (t) {
    case ElemType::Float8E4M3FN: {
      const int s = (code >> 7) & 1;
      const std::uint32_t e = (code >> 3) & 15, m = code & 7;
      if (e == 15 && m == 7) return nan;
      return make(s, 4, 3, 7, e, m);
    }
    case ElemType::Float8E4M3FNUZ: {
      if (code == 0x80) return nan;
      const int s = (code >> 7) & 1;
      return make(s, 4, 3, 8, (code >> 3) & 15, code & 7);
    }
    case ElemType::Float8E5M2: {
      const int s = (code >> 7) & 1;
      const std::uint32_t e = (code >> 2) & 31, m = code & 3;
      if (e == 31) return m == 0 ? (s ? -inf : inf) : nan;
      return make(s, 5, 2, 15, e, m);
    }
    case ElemType::Float8E5M2FNUZ: {
      if (code == 0x80) return nan;
      const int s = (code >> 7) & 1;
      return make(s, 5, 2, 16, (code >> 2) & 31, code & 3);
    }
    case ElemType::Float8E8M0: {
      if ((code & 0xff) == 0xff) return nan;
      return std::ldexp(1.0f, static_cast<int>(code & 0xff) - 127);
    }
    case ElemType::Float4E2M1: {
      const int s = (code >> 3) & 1;
      return make(s, 2, 1, 1, (code >> 1) & 3, code & 1);
    }
    default:
      return nan;
  }
}

namespace {

struct SmallFloatTable {
  std::vector<std::pair<float, std::uint32_t>> pos;  // finite values >= 0, sorted
  float max = 0;
  std::uint32_t nan_code = 0;
  bool has_inf = false;
  std::uint32_t inf_code = 0;
  std::uint32_t sign_bit = 0;
};

const SmallFloatTable& table(ElemType t) {
  static std::array<SmallFloatTable, 32> tables;
  static std::array<bool, 32> built{};
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  const auto idx = static_cast<std::size_t>(t);
  SmallFloatTable& tab = tables[idx];
  if (built[idx]) return tab;
  const int bits = small_float_bits(t);
  tab.sign_bit = t == ElemType::Float8E8M0 ? 0 : (1u << (bits - 1));
  for (std::uint32_t c = 0; c < (1u << bits); ++c) {
    if (tab.sign_bit && (c & tab.sign_bit)) continue;
    const float v = small_float_decode(t, c);
    if (std::isnan(v)) {
      tab.nan_code = c;
      continue;
    }
    if (std::isinf(v)) {
      tab.has_inf = true;
      tab.inf_code = c;
      continue;
    }
    tab.pos.emplace_back(v, c);
  }
  if (t == ElemType::Float8E4M3FN) tab.nan_code = 0x7f;
  if (t == ElemType::Float8E4M3FNUZ || t == ElemType::Float8E5M2FNUZ) tab.nan_code = 0x80;
  if (t == ElemType::Float8E5M2) tab.nan_code = 0x7f;
  if (t == ElemType::Float8E8M0) tab.nan_code = 0xff;
  std::sort(tab.pos.begin(), tab.pos.end());
  tab.max = tab.pos.back().first;
  built[idx] = true;
  return tab;
}

}  // namespace

std::uint32_t small_float_encode(ElemType t, float v, bool saturate, int e8m0_round) {
  const SmallFloatTable& tab = table(t);
  if (std::isnan(v)) return tab.nan_code;
  const bool neg = std::signbit(v);
  float a = std::fabs(v);
  const bool fnuz = t == ElemType::Float8E4M3FNUZ || t == ElemType::Float8E5M2FNUZ;
  auto with_sign = [&](std::uint32_t c) {
    if (!neg || tab.sign_bit == 0) return c;
    if (fnuz && c == 0) return c;  // no negative zero
    return c | tab.sign_bit;
  };
  if (t == ElemType::Float8E8M0) {
    if (std::isinf(a)) return saturate ? 0xfeu : 0xffu;
    if (a == 0) return 0;
    int e;
    const float fr = std::frexp(a, &e);  // a = fr * 2^e, fr in [0.5, 1)
    int ex = e - 1;                      // a = (2 fr) 2^ex, 2fr in [1, 2)
    const float m = 2 * fr;
    if (e8m0_round == 0) {  // up
      if (m > 1.0f) ex += 1;
    } else if (e8m0_round == 2) {  // nearest (ties up, in the exponent's log space)
      if (m > 1.5f || (m == 1.5f)) ex += 1;
    }
    int code = ex + 127;
    if (code < 0) code = 0;
    if (code > 254) code = saturate ? 254 : 255;
    return static_cast<std::uint32_t>(code);
  }
  if (std::isinf(a)) {
    if (saturate) return with_sign(tab.pos.back().second);
    return tab.has_inf ? with_sign(tab.inf_code) : tab.nan_code;
  }
  if (a > tab.max) {
    // Values that round to max (within half an ulp above it) are max, as IEEE rounding.
    const float prev = tab.pos[tab.pos.size() - 2].first;
    const float half = (tab.max - prev) / 2;
    if (a < tab.max + half || saturate) return with_sign(tab.pos.back().second);
    if (a == tab.max + half) {
      // tie: max has an odd mantissa in every format here, round to even overflows
      if (saturate) return with_sign(tab.pos.back().second);
    }
    return tab.has_inf ? with_sign(tab.inf_code) : tab.nan_code;
  }
  auto it = std::lower_bound(tab.pos.begin(), tab.pos.end(), std::make_pair(a, 0u));
  if (it == tab.pos.end()) return with_sign(tab.pos.back().second);
  if (it->first == a || it == tab.pos.begin()) return with_sign(it->second);
  auto lo = it - 1;
  const float dl = a - lo->first, dh = it->first - a;
  if (dl < dh) return with_sign(lo->second);
  if (dh < dl) return with_sign(it->second);
  return with_sign((lo->second & 1) == 0 ? lo->second : it->second);
}

float small_float_round(ElemType t, float v, bool saturate) {
  return small_float_decode(t, small_float_encode(t, v, saturate, 0));
}

}  // namespace detail
}  // namespace ember::onnx
