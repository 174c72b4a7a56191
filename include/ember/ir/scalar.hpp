// Scalar building blocks of the element-wise table (ember/ir/elementwise.hpp), shared by every
// target: the CPU kernels compile them into their vector loops, and the same source compiles
// as CUDA device code (nvcc, NVRTC) for the kernel language's generators, so eager, fused and
// device results agree bit for bit. No host-only construct is used here: math goes through
// `scalar::m::` (std:: on the host, CUDA's device math functions on a device), bit casts
// through `bits_to_float`/`float_to_bits`, type traits through `scalar::traits`. The header
// also compiles without any standard header under NVRTC (`__CUDACC_RTC__`).
//
// The f32 transcendental functions are branch-free (selects only) so that they vectorise.
// Accuracy, measured against the f64 std:: function rounded to f32 over a sweep of inputs
// including extremes, subnormals, NaN and +-Inf (tests/backend/test_elementwise_accuracy.cpp):
//   exp_f32   Cephes expf polynomial, Cody-Waite range reduction, two-step 2^n scaling
//             (correct subnormal results): <= 2 ulp.
//   log_f32   Cephes logf polynomial on the mantissa in [sqrt(1/2), sqrt(2)): <= 2 ulp.
//   log1p_f32 log(u) * x / (u - 1) with u = 1 + x (Goldberg's trick): <= 4 ulp.
//   tanh_f32  Cephes tanhf: odd polynomial for |x| < 0.625, else 1 - 2 / (exp(2|x|) + 1):
//             <= 4 ulp.
//   erf_f32   rational approximation x P(x^2) / Q(x^2) on [-4, 4] (the coefficients of
//             Eigen's generic_fast_erf_float; +-1 outside): <= 6 ulp (near erf = +-1).
// f64 (and the other f32 functions: trigonometric, hyperbolic other than tanh, inverse)
// use the target's library functions.
//
// Integer semantics follow PyTorch: division is floor division and remainder takes the
// divisor's sign, so a == div(a, b) * b + rem(a, b). Integer division or remainder by zero
// does not trap: the result is defined as 0 (PyTorch raises "ZeroDivisionError" for a
// scalar zero; the front end throws ValueError in that case). Shifts by a negative count or
// by >= the bit width give 0 (right shift of a negative value: -1), as PyTorch.
#pragma once

#if defined(__CUDACC_RTC__)
// NVRTC: no standard headers.
namespace ember::scalar::traits {
using int8_t = signed char;
using uint8_t = unsigned char;
using int16_t = short;
using int32_t = int;
using uint32_t = unsigned int;
using int64_t = long long;
using uint64_t = unsigned long long;
}  // namespace ember::scalar::traits
#else
#include <cmath>
#include <cstdint>
namespace ember::scalar::traits {
using std::int16_t;
using std::int32_t;
using std::int64_t;
using std::int8_t;
using std::uint32_t;
using std::uint64_t;
using std::uint8_t;
}  // namespace ember::scalar::traits
#endif

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define EMBER_HOST_DEVICE __host__ __device__
#define EMBER_SCALAR_INLINE __host__ __device__ __forceinline__
#define EMBER_ON_DEVICE 1
#elif defined(__GNUC__)
#define EMBER_HOST_DEVICE
#define EMBER_SCALAR_INLINE inline __attribute__((always_inline))
#define EMBER_ON_DEVICE 0
#else
#define EMBER_HOST_DEVICE
#define EMBER_SCALAR_INLINE inline
#define EMBER_ON_DEVICE 0
#endif

namespace ember::scalar {

// ---- type traits (the few this header needs; <type_traits> is host-only under NVRTC) ------
namespace traits {
template <class A, class B>
inline constexpr bool is_same = false;
template <class A>
inline constexpr bool is_same<A, A> = true;
template <class T>
inline constexpr bool is_fp = is_same<T, float> || is_same<T, double>;
template <class T>
inline constexpr bool is_signed = T(-1) < T(0);
template <class T>
struct unsigned_of;
template <>
struct unsigned_of<signed char> {
  using type = unsigned char;
};
template <>
struct unsigned_of<unsigned char> {
  using type = unsigned char;
};
template <>
struct unsigned_of<short> {
  using type = unsigned short;
};
template <>
struct unsigned_of<int> {
  using type = unsigned int;
};
template <>
struct unsigned_of<long> {
  using type = unsigned long;
};
template <>
struct unsigned_of<long long> {
  using type = unsigned long long;
};
template <class T>
using make_unsigned = typename unsigned_of<T>::type;
}  // namespace traits

template <class T>
inline constexpr bool is_fp = traits::is_fp<T>;

// ---- math of the target -----------------------------------------------------------------
// One name per function, overloaded for float and double: std:: on the host, CUDA's device
// functions (which NVRTC and nvcc provide without headers) on a device.
namespace m {
#if EMBER_ON_DEVICE
#define EMBER_SCALAR_MATH1(name, fname)       \
  EMBER_SCALAR_INLINE float name(float a) {   \
    return ::fname(a);                        \
  }                                           \
  EMBER_SCALAR_INLINE double name(double a) { \
    return ::name(a);                         \
  }
#define EMBER_SCALAR_MATH2(name, fname)                 \
  EMBER_SCALAR_INLINE float name(float a, float b) {    \
    return ::fname(a, b);                               \
  }                                                     \
  EMBER_SCALAR_INLINE double name(double a, double b) { \
    return ::name(a, b);                                \
  }
#else
#define EMBER_SCALAR_MATH1(name, fname) using std::name;
#define EMBER_SCALAR_MATH2(name, fname) using std::name;
#endif
EMBER_SCALAR_MATH1(fabs, fabsf)
EMBER_SCALAR_MATH1(sqrt, sqrtf)
EMBER_SCALAR_MATH1(exp, expf)
EMBER_SCALAR_MATH1(expm1, expm1f)
EMBER_SCALAR_MATH1(log, logf)
EMBER_SCALAR_MATH1(log1p, log1pf)
EMBER_SCALAR_MATH1(erf, erff)
EMBER_SCALAR_MATH1(sin, sinf)
EMBER_SCALAR_MATH1(cos, cosf)
EMBER_SCALAR_MATH1(tan, tanf)
EMBER_SCALAR_MATH1(sinh, sinhf)
EMBER_SCALAR_MATH1(cosh, coshf)
EMBER_SCALAR_MATH1(tanh, tanhf)
EMBER_SCALAR_MATH1(asin, asinf)
EMBER_SCALAR_MATH1(acos, acosf)
EMBER_SCALAR_MATH1(atan, atanf)
EMBER_SCALAR_MATH1(asinh, asinhf)
EMBER_SCALAR_MATH1(acosh, acoshf)
EMBER_SCALAR_MATH1(atanh, atanhf)
EMBER_SCALAR_MATH1(floor, floorf)
EMBER_SCALAR_MATH1(ceil, ceilf)
EMBER_SCALAR_MATH1(trunc, truncf)
EMBER_SCALAR_MATH1(round, roundf)
EMBER_SCALAR_MATH2(copysign, copysignf)
EMBER_SCALAR_MATH2(fmod, fmodf)
EMBER_SCALAR_MATH2(pow, powf)
EMBER_SCALAR_MATH2(atan2, atan2f)
EMBER_SCALAR_MATH2(hypot, hypotf)
#undef EMBER_SCALAR_MATH1
#undef EMBER_SCALAR_MATH2
}  // namespace m

// ---- f32 transcendental building blocks -------------------------------------------------

EMBER_SCALAR_INLINE float bits_to_float(traits::uint32_t u) {
#if EMBER_ON_DEVICE
  return __uint_as_float(u);
#else
  return __builtin_bit_cast(float, u);
#endif
}
EMBER_SCALAR_INLINE traits::uint32_t float_to_bits(float f) {
#if EMBER_ON_DEVICE
  return __float_as_uint(f);
#else
  return __builtin_bit_cast(traits::uint32_t, f);
#endif
}

/// +infinity of T (float or double).
template <class T>
EMBER_SCALAR_INLINE T infinity() {
  if constexpr (traits::is_same<T, float>)
    return bits_to_float(0x7f800000u);
  else
    return static_cast<T>(bits_to_float(0x7f800000u));
}
/// A quiet NaN of T (float or double).
template <class T>
EMBER_SCALAR_INLINE T quiet_nan() {
  return static_cast<T>(bits_to_float(0x7fc00000u));
}

/// e^x in f32 (<= 2 ulp; exp(NaN) = NaN, exp(-inf) = 0, exp(inf) = inf, subnormal results).
EMBER_SCALAR_INLINE float exp_f32(float x) {
  x = x > 88.8f ? 88.8f : x;  // NaN passes both clamps unchanged
  x = x < -104.0f ? -104.0f : x;
  // n = round(x / ln2) by the 1.5 * 2^23 magic-number trick (no float->int conversion).
  constexpr float kMagic = 12582912.0f;
  const float t = x * 1.44269504088896341f + kMagic;
  const traits::int32_t n = static_cast<traits::int32_t>(float_to_bits(t)) -
                            static_cast<traits::int32_t>(float_to_bits(kMagic));
  const float fn = t - kMagic;
  float r = x - fn * 0.693359375f;  // Cody-Waite: ln2 = C1 + C2
  r = r - fn * -2.12194440e-4f;
  const float z = r * r;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * z + r + 1.0f;
  // 2^n as 2^n1 * 2^n2 with both halves normal, so results down to 2^-149 come out right.
  const traits::int32_t n1 = n >> 1, n2 = n - n1;
  const float s1 = bits_to_float(static_cast<traits::uint32_t>(n1 + 127) << 23);
  const float s2 = bits_to_float(static_cast<traits::uint32_t>(n2 + 127) << 23);
  return p * s1 * s2;
}

/// ln(x) in f32 (<= 2 ulp; log(0) = -inf, log(x < 0) = NaN, log(inf) = inf, subnormals).
EMBER_SCALAR_INLINE float log_f32(float x) {
  const bool sub = x < 1.17549435e-38f;
  const float xs = sub ? x * 8388608.0f : x;  // scale subnormals by 2^23
  const traits::uint32_t u = float_to_bits(xs);
  traits::int32_t e = static_cast<traits::int32_t>((u >> 23) & 0xff) - 126;
  e = sub ? e - 23 : e;
  float mt = bits_to_float((u & 0x007fffffu) | 0x3f000000u);  // in [0.5, 1)
  const bool lo = mt < 0.707106781186547524f;
  e = lo ? e - 1 : e;
  mt = lo ? mt + mt - 1.0f : mt - 1.0f;
  const float fe = static_cast<float>(e);
  const float z = mt * mt;
  float y = 7.0376836292e-2f;
  y = y * mt - 1.1514610310e-1f;
  y = y * mt + 1.1676998740e-1f;
  y = y * mt - 1.2420140846e-1f;
  y = y * mt + 1.4249322787e-1f;
  y = y * mt - 1.6668057665e-1f;
  y = y * mt + 2.0000714765e-1f;
  y = y * mt - 2.4999993993e-1f;
  y = y * mt + 3.3333331174e-1f;
  y = y * mt * z;
  y = y + fe * -2.12194440e-4f;
  y = y - 0.5f * z;
  float r = mt + y;
  r = r + fe * 0.693359375f;
  const float kInf = infinity<float>();
  r = x == kInf ? kInf : r;
  r = x == 0.0f ? -kInf : r;
  r = x < 0.0f ? quiet_nan<float>() : r;
  r = x != x ? x : r;
  return r;
}

/// ln(1 + x) in f32 (<= 4 ulp).
EMBER_SCALAR_INLINE float log1p_f32(float x) {
  const float u = 1.0f + x;
  const float d = u - 1.0f;
  const float l = log_f32(u);
  float r = d == 0.0f ? x : l * (x / d);
  r = u == infinity<float>() ? u : r;
  return r;
}

/// tanh(x) in f32 (<= 4 ulp).
EMBER_SCALAR_INLINE float tanh_f32(float x) {
  const float ax = m::fabs(x);
  const float z = x * x;
  float p = -5.70498872745e-3f;
  p = p * z + 2.06390887954e-2f;
  p = p * z - 5.37397155531e-2f;
  p = p * z + 1.33314422036e-1f;
  p = p * z - 3.33332819422e-1f;
  const float small = p * z * x + x;
  const float e = exp_f32(ax + ax);
  float big = 1.0f - 2.0f / (e + 1.0f);
  big = m::copysign(big, x);
  return ax < 0.625f ? small : big;
}

/// erf(x) in f32 (relative error < 1.5e-7): x P(x^2) / Q(x^2) on [-4, 4] (Eigen).
EMBER_SCALAR_INLINE float erf_f32(float x) {
  float c = x > 4.0f ? 4.0f : x;
  c = c < -4.0f ? -4.0f : c;
  const float z = c * c;
  float p = -2.72614225801306e-10f;
  p = p * z + 2.77068142495902e-08f;
  p = p * z + -2.10102402082508e-06f;
  p = p * z + -5.69250639462346e-05f;
  p = p * z + -7.34990630326855e-04f;
  p = p * z + -2.95459980854025e-03f;
  p = p * z + -1.60960333262415e-02f;
  float q = -1.45660718464996e-05f;
  q = q * z + -2.13374055278905e-04f;
  q = q * z + -1.68282697438203e-03f;
  q = q * z + -7.37332916720468e-03f;
  q = q * z + -1.42647390514189e-02f;
  return c * (p / q);  // c * (P / Q), not (c * P) / Q: keeps tiny |x| accurate
}

// ---- integer helpers ----------------------------------------------------------------------

/// Floor division (PyTorch's `//` / torch.div(rounding_mode="floor")); 0 when b == 0.
template <class T>
EMBER_SCALAR_INLINE T int_floor_div(T a, T b) {
  if (b == 0) return T{0};
  if constexpr (traits::is_signed<T>) {
    if (b == T{-1}) {  // -a, wrapping for INT_MIN (two's complement) without UB or a trap
      using U = traits::make_unsigned<T>;
      return static_cast<T>(static_cast<U>(U{0} - static_cast<U>(a)));
    }
    const T q = static_cast<T>(a / b);
    return (a % b != 0 && ((a < 0) != (b < 0))) ? static_cast<T>(q - 1) : q;
  } else {
    return static_cast<T>(a / b);
  }
}

/// Remainder with the divisor's sign (PyTorch's `%`); 0 when b == 0.
template <class T>
EMBER_SCALAR_INLINE T int_remainder(T a, T b) {
  if (b == 0) return T{0};
  if constexpr (traits::is_signed<T>) {
    if (b == T{-1}) return T{0};
    const T r = static_cast<T>(a % b);
    return (r != 0 && ((r < 0) != (b < 0))) ? static_cast<T>(r + b) : r;
  } else {
    return static_cast<T>(a % b);
  }
}

/// Float remainder with the divisor's sign: a - floor(a / b) * b (PyTorch).
template <class T>
EMBER_SCALAR_INLINE T float_remainder(T a, T b) {
  T r = m::fmod(a, b);
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

/// Integer a^b by squaring (b < 0: 1 if a == 1, +-1 if a == -1, else 0, as PyTorch).
template <class T>
EMBER_SCALAR_INLINE T int_pow(T a, T b) {
  if (b < 0) {
    if (a == 1) return T{1};
    if constexpr (traits::is_signed<T>) {
      if (a == -1) return (b % 2 == 0) ? T{1} : T{-1};
    }
    return T{0};
  }
  using U = traits::make_unsigned<T>;
  U base = static_cast<U>(a), res = 1;
  auto e = static_cast<traits::uint64_t>(b);
  while (e) {
    if (e & 1) res = static_cast<U>(res * base);
    base = static_cast<U>(base * base);
    e >>= 1;
  }
  return static_cast<T>(res);
}

/// Round half to even (torch.round), independent of the rounding mode.
template <class T>
EMBER_SCALAR_INLINE T round_half_even(T a) {
  const T r = m::round(a);  // half away from zero
  return (m::fabs(a - m::trunc(a)) == T(0.5)) ? T(2) * m::round(a / T(2)) : r;
}

}  // namespace ember::scalar
