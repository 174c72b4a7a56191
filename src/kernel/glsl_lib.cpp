// GLSL functions the generated shaders call: ember::scalar's f32 polynomials (exp, log,
// log1p, tanh, erf) and integer division/remainder, transcribed operation by operation from
// the shared scalar header (same constants, same order; `precise` keeps the compiler from
// contracting a * b + c), plus f16/bf16 rounding as ember's f16/bf16 conversions.
#include "glsl_lib.hpp"

namespace ember::kernel::detail {

namespace {

constexpr const char* kFloatLib = R"(
#define ember_inf uintBitsToFloat(0x7f800000u)
#define ember_nan uintBitsToFloat(0x7fc00000u)
// a / b where GLSL's division (a * (1 / b) on some drivers) loses range: |b| > 2^126 makes
// 1 / b subnormal, so both are scaled down first (exact: a power of two).
float ember_div_f32(float a, float b) {
  bool huge = abs(b) > 8.5070592e37;
  precise float q = (huge ? a * 0.25 : a) / (huge ? b * 0.25 : b);
  return q;
}
float ember_exp_f32(float x) {
  x = x > 88.8 ? 88.8 : x;
  x = x < -104.0 ? -104.0 : x;
  const float magic = 12582912.0;
  precise float t = x * 1.44269504088896341 + magic;
  int n = int(floatBitsToUint(t)) - int(floatBitsToUint(magic));
  precise float fn = t - magic;
  precise float r = x - fn * 0.693359375;
  r = r - fn * -2.12194440e-4;
  precise float z = r * r;
  precise float p = 1.9875691500e-4;
  p = p * r + 1.3981999507e-3;
  p = p * r + 8.3334519073e-3;
  p = p * r + 4.1665795894e-2;
  p = p * r + 1.6666665459e-1;
  p = p * r + 5.0000001201e-1;
  p = p * z + r + 1.0;
  int n1 = n >> 1;
  int n2 = n - n1;
  float s1 = uintBitsToFloat(uint(n1 + 127) << 23);
  float s2 = uintBitsToFloat(uint(n2 + 127) << 23);
  precise float res = p * s1 * s2;
  return res;
}
float ember_log_f32(float x) {
  bool sub = x < 1.17549435e-38;
  precise float xs = sub ? x * 8388608.0 : x;
  uint u = floatBitsToUint(xs);
  int e = int((u >> 23) & 0xffu) - 126;
  e = sub ? e - 23 : e;
  precise float m = uintBitsToFloat((u & 0x007fffffu) | 0x3f000000u);
  bool lo = m < 0.707106781186547524;
  e = lo ? e - 1 : e;
  m = lo ? m + m - 1.0 : m - 1.0;
  float fe = float(e);
  precise float z = m * m;
  precise float y = 7.0376836292e-2;
  y = y * m - 1.1514610310e-1;
  y = y * m + 1.1676998740e-1;
  y = y * m - 1.2420140846e-1;
  y = y * m + 1.4249322787e-1;
  y = y * m - 1.6668057665e-1;
  y = y * m + 2.0000714765e-1;
  y = y * m - 2.4999993993e-1;
  y = y * m + 3.3333331174e-1;
  y = y * m * z;
  y = y + fe * -2.12194440e-4;
  y = y - 0.5 * z;
  precise float r = m + y;
  r = r + fe * 0.693359375;
  r = x == ember_inf ? ember_inf : r;
  r = x == 0.0 ? -ember_inf : r;
  r = x < 0.0 ? ember_nan : r;
  r = isnan(x) ? x : r;
  return r;
}
float ember_log1p_f32(float x) {
  precise float u = 1.0 + x;
  precise float d = u - 1.0;
  float l = ember_log_f32(u);
  precise float r = d == 0.0 ? x : l * ember_div_f32(x, d);
  r = u == ember_inf ? u : r;
  return r;
}
float ember_tanh_f32(float x) {
  float ax = abs(x);
  precise float z = x * x;
  precise float p = -5.70498872745e-3;
  p = p * z + 2.06390887954e-2;
  p = p * z - 5.37397155531e-2;
  p = p * z + 1.33314422036e-1;
  p = p * z - 3.33332819422e-1;
  precise float small = p * z * x + x;
  float e = ember_exp_f32(ax + ax);
  precise float big = 1.0 - 2.0 / (e + 1.0);
  big = uintBitsToFloat((floatBitsToUint(big) & 0x7fffffffu) | (floatBitsToUint(x) & 0x80000000u));
  return ax < 0.625 ? small : big;
}
float ember_erf_f32(float x) {
  float c = x > 4.0 ? 4.0 : x;
  c = c < -4.0 ? -4.0 : c;
  precise float z = c * c;
  precise float p = -2.72614225801306e-10;
  p = p * z + 2.77068142495902e-08;
  p = p * z + -2.10102402082508e-06;
  p = p * z + -5.69250639462346e-05;
  p = p * z + -7.34990630326855e-04;
  p = p * z + -2.95459980854025e-03;
  p = p * z + -1.60960333262415e-02;
  precise float q = -1.45660718464996e-05;
  q = q * z + -2.13374055278905e-04;
  q = q * z + -1.68282697438203e-03;
  q = q * z + -7.37332916720468e-03;
  q = q * z + -1.42647390514189e-02;
  precise float r = c * (p / q);
  return r;
}
// sin and cos: x = (q + f) * pi/2 with |f| <= 1/2 by Payne-Hanek reduction (the bits of 2/pi
// as six 32-bit words, most significant last: x's 24-bit mantissa times them gives x * 2/pi
// mod 4 with 62 fraction bits whatever |x|, as for sinf/cosf in C libraries), then Cephes'
// f32 polynomials on [-pi/4, pi/4]. GLSL's own sin/cos are only specified to 2^-11 and go
// wrong for large |x| (llvmpipe: sin(-1e30) = 1).
const uint ember_2opi[6] = uint[6](0x3c439041u, 0xdb629599u, 0xf534ddc0u, 0xfc2757d1u,
                                   0x4e441529u, 0xa2f9836eu);
float ember_trig_reduce(float x, out uint quadrant) {
  float ax = abs(x);
  if (ax <= 0.785398163) { quadrant = 0u; return x; }
  uint ix = floatBitsToUint(ax);
  int e = int((ix >> 23) & 0xffu) - 150;
  uint m = (ix & 0x7fffffu) | 0x800000u;
  uint p[7];
  uint carry = 0u;
  for (int i = 0; i < 6; ++i) {
    uint hi, lo;
    umulExtended(ember_2opi[i], m, hi, lo);
    lo += carry;
    hi += lo < carry ? 1u : 0u;
    p[i] = lo;
    carry = hi;
  }
  p[6] = carry;
  // The 64 bits from bit 130 - e: 2 integer bits (the quadrant), 62 fraction bits.
  int b = 130 - e;
  int wi = b >> 5, sh = b & 31;
  uint lo = sh == 0 ? p[wi] : (p[wi] >> sh) | (p[wi + 1] << (32 - sh));
  uint hi = sh == 0 ? p[wi + 1] : (p[wi + 1] >> sh) | (p[wi + 2] << (32 - sh));
  uint q = hi >> 30;
  uint fhi = hi & 0x3fffffffu;
  float sign = 1.0;
  if (fhi >= 0x20000000u) {  // f >= 1/2: the next quadrant, f - 1
    q = (q + 1u) & 3u;
    uint nlo = 0u - lo;
    fhi = 0x40000000u - fhi - (nlo != 0u ? 1u : 0u);
    lo = nlo;
    sign = -1.0;
  }
  precise float f = sign * (float(fhi) * 9.31322574615478516e-10 + float(lo) * 2.16840434497100887e-19);
  precise float r = f * 1.57079632679489662;
  quadrant = x < 0.0 ? (0u - q) & 3u : q;
  return x < 0.0 ? -r : r;
}
float ember_sin_poly(float r) {
  precise float z = r * r;
  precise float p = -1.9515295891e-4;
  p = p * z + 8.3321608736e-3;
  p = p * z - 1.6666654611e-1;
  precise float s = r + r * z * p;
  return s;
}
float ember_cos_poly(float r) {
  precise float z = r * r;
  precise float p = 2.443315711809948e-5;
  p = p * z - 1.388731625493765e-3;
  p = p * z + 4.166664568298827e-2;
  precise float c = 1.0 - 0.5 * z + z * z * p;
  return c;
}
float ember_sin_f32(float x) {
  if (isinf(x) || isnan(x)) return ember_nan;
  uint q;
  float r = ember_trig_reduce(x, q);
  float v = (q & 1u) == 0u ? ember_sin_poly(r) : ember_cos_poly(r);
  return q >= 2u ? -v : v;
}
float ember_cos_f32(float x) {
  if (isinf(x) || isnan(x)) return ember_nan;
  uint q;
  float r = ember_trig_reduce(x, q);
  float v = (q & 1u) == 0u ? ember_cos_poly(r) : ember_sin_poly(r);
  return (q == 1u || q == 2u) ? -v : v;
}
float ember_fmod_f32(float a, float b) {
  if (isinf(b) && !isinf(a)) return a;  // fmod(a, +-inf) = a (NaN a stays NaN)
  float q = trunc(a / b);
  precise float r = fma(-b, q, a);
  if (r != 0.0 && (r < 0.0) != (a < 0.0)) r += (a < 0.0) == (b < 0.0) ? b : -b;
  return r;
}
float ember_rem_f32(float a, float b) {
  float r = ember_fmod_f32(a, b);
  precise float s = r + b;
  return (r != 0.0 && (r < 0.0) != (b < 0.0)) ? s : r;
}
float ember_min_f32(float a, float b) { return isnan(a) ? a : (isnan(b) ? b : (a < b ? a : b)); }
float ember_max_f32(float a, float b) { return isnan(a) ? a : (isnan(b) ? b : (a > b ? a : b)); }
float ember_pow_f32(float x, float y) {
  if (y == 0.0 || x == 1.0) return 1.0;
  if (isnan(x) || isnan(y)) return ember_nan;
  float ax = abs(x);
  bool yint = trunc(y) == y;
  bool yodd = yint && abs(y) < 16777216.0 && mod(y, 2.0) == 1.0;
  bool neg = (floatBitsToUint(x) >> 31) != 0u;
  if (neg && ax != 0.0 && !isinf(y) && !yint) return ember_nan;
  float r;
  if (ax == 0.0) r = y < 0.0 ? ember_inf : 0.0;
  else if (isinf(ax)) r = y < 0.0 ? 0.0 : ember_inf;
  else if (isinf(y)) r = ax == 1.0 ? 1.0 : ((ax > 1.0) == (y > 0.0) ? ember_inf : 0.0);
  else r = ember_exp_f32(y * ember_log_f32(ax));
  return neg && yodd ? -r : r;
}
int ember_f2i32(float x) { return isnan(x) ? 0 : (x <= -2147483648.0 ? int(0x80000000u) : (x >= 2147483648.0 ? 0x7fffffff : int(x))); }
uint ember_f2u32(float x) { return isnan(x) ? 0u : (x <= 0.0 ? 0u : (x >= 4294967296.0 ? 0xffffffffu : uint(x))); }
uint ember_f2u8(float x) { return isnan(x) ? 0u : (x <= 0.0 ? 0u : (x >= 255.0 ? 255u : uint(x))); }
uint ember_f16_bits(float v) {
  uint u = floatBitsToUint(v);
  uint sign = (u >> 16) & 0x8000u;
  uint absu = u & 0x7fffffffu;
  if (absu > 0x7f800000u) return sign | 0x7e00u;
  if (absu >= 0x477ff000u) return sign | 0x7c00u;
  if (absu < 0x38800000u) {
    if (absu < 0x33000000u) return sign;
    uint e = absu >> 23;
    uint mant = (absu & 0x7fffffu) | 0x800000u;
    uint shift = 126u - e;
    uint res = mant >> shift;
    uint rem = mant & ((1u << shift) - 1u);
    uint halfway = 1u << (shift - 1u);
    if (rem > halfway || (rem == halfway && (res & 1u) != 0u)) res += 1u;
    return sign | res;
  }
  uint res = (absu >> 13) - (112u << 10);
  uint rem = absu & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (res & 1u) != 0u)) res += 1u;
  return sign | res;
}
float ember_f16_to_f32(uint h) {
  uint sign = (h & 0x8000u) << 16;
  uint e = (h >> 10) & 0x1fu;
  uint mant = h & 0x3ffu;
  uint u;
  if (e == 0u) {
    // zero or subnormal: mant * 2^-24 exactly (no loop: a loop per widened value made the
    // compile time of long f16 blocks explode on LLVM-based drivers)
    u = sign | floatBitsToUint(float(mant) * 5.9604644775390625e-8);
  } else if (e == 0x1fu) {
    u = sign | 0x7f800000u | (mant << 13);
  } else {
    u = sign | ((e + 112u) << 23) | (mant << 13);
  }
  return uintBitsToFloat(u);
}
float ember_round_f16(float x) { return ember_f16_to_f32(ember_f16_bits(x)); }
float ember_round_bf16(float v) {
  uint u = floatBitsToUint(v);
  if ((u & 0x7fffffffu) > 0x7f800000u) return uintBitsToFloat(((u >> 16) | 0x40u) << 16);
  u += 0x7fffu + ((u >> 16) & 1u);
  return uintBitsToFloat((u >> 16) << 16);
}
int ember_div_i32(int a, int b) {
  if (b == 0) return 0;
  if (b == -1) return -a;
  int q = a / b;
  return (a - q * b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
int ember_rem_i32(int a, int b) {
  if (b == 0 || b == -1) return 0;
  int r = a - (a / b) * b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
uint ember_div_u32(uint a, uint b) { return b == 0u ? 0u : a / b; }
uint ember_rem_u32(uint a, uint b) { return b == 0u ? 0u : a % b; }
int ember_shl_i32(int a, int b) { return (b < 0 || b >= 32) ? 0 : int(uint(a) << uint(b)); }
int ember_shr_i32(int a, int b) { return (b < 0 || b >= 32) ? (a < 0 ? -1 : 0) : (a >> b); }
uint ember_shl_u32(uint a, uint b) { return b >= 32u ? 0u : a << b; }
uint ember_shr_u32(uint a, uint b) { return b >= 32u ? 0u : a >> b; }
uint ember_shl_u8(uint a, uint b) { return b >= 8u ? 0u : (a << b) & 0xffu; }
uint ember_shr_u8(uint a, uint b) { return b >= 8u ? 0u : a >> b; }
)";

constexpr const char* kFloat64Lib = R"(
double ember_rem_f64(double a, double b) {
  if (isinf(b) && !isinf(a) && !isnan(a))  // a - floor(a / b) * b with |b| infinite
    return (a == 0.0lf || (a < 0.0lf) == (b < 0.0lf)) ? a : b;
  double q = trunc(a / b);
  precise double r = fma(-b, q, a);
  if (r != 0.0lf && (r < 0.0lf) != (a < 0.0lf)) r += (a < 0.0lf) == (b < 0.0lf) ? b : -b;
  precise double s = r + b;
  return (r != 0.0lf && (r < 0.0lf) != (b < 0.0lf)) ? s : r;
}
double ember_min_f64(double a, double b) { return isnan(a) ? a : (isnan(b) ? b : (a < b ? a : b)); }
double ember_max_f64(double a, double b) { return isnan(a) ? a : (isnan(b) ? b : (a > b ? a : b)); }
int ember_f2i32(double x) { return isnan(x) ? 0 : (x <= -2147483648.0lf ? int(0x80000000u) : (x >= 2147483647.0lf ? 0x7fffffff : int(x))); }
uint ember_f2u32(double x) { return isnan(x) ? 0u : (x <= 0.0lf ? 0u : (x >= 4294967295.0lf ? 0xffffffffu : uint(x))); }
uint ember_f2u8(double x) { return isnan(x) ? 0u : (x <= 0.0lf ? 0u : (x >= 255.0lf ? 255u : uint(x))); }
)";

constexpr const char* kInt64Lib = R"(
int64_t ember_div_i64(int64_t a, int64_t b) {
  if (b == 0l) return 0l;
  if (b == -1l) return -a;
  int64_t q = a / b;
  return (a - q * b != 0l && ((a < 0l) != (b < 0l))) ? q - 1l : q;
}
int64_t ember_rem_i64(int64_t a, int64_t b) {
  if (b == 0l || b == -1l) return 0l;
  int64_t r = a - (a / b) * b;
  return (r != 0l && ((r < 0l) != (b < 0l))) ? r + b : r;
}
int64_t ember_shl_i64(int64_t a, int64_t b) { return (b < 0l || b >= 64l) ? 0l : int64_t(uint64_t(a) << uint64_t(b)); }
int64_t ember_shr_i64(int64_t a, int64_t b) { return (b < 0l || b >= 64l) ? (a < 0l ? -1l : 0l) : (a >> b); }
int64_t ember_f2i64(float x) { return isnan(x) ? 0l : (x <= -9223372036854775808.0 ? int64_t(0x8000000000000000ul) : (x >= 9223372036854775808.0 ? int64_t(0x7ffffffffffffffful) : int64_t(x))); }
)";

}  // namespace

std::string glsl_library(bool int64, bool float64) {
  std::string s = kFloatLib;
  if (float64) s += kFloat64Lib;
  if (int64) s += kInt64Lib;
  if (int64 && float64)
    s += "int64_t ember_f2i64(double x) { return isnan(x) ? 0l : (x <= -9223372036854775808.0lf ? "
         "int64_t(0x8000000000000000ul) : (x >= 9223372036854775808.0lf ? "
         "int64_t(0x7ffffffffffffffful) : int64_t(x))); }\n";
  return s;
}

}  // namespace ember::kernel::detail
