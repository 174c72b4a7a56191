// Scalar element functions of the element-wise ops: one functor per op, defined once.
//
// The CPU backend compiles these same functors into its inner loops (scalar, AVX2+FMA and
// AVX-512 builds of one loop; the loops are vectorised by the compiler with `omp simd`), and
// a future fusion code generator is meant to emit calls to them too, so fused and unfused
// kernels agree bit for bit.
//
// The f32 transcendental functions below are branch-free (selects only) so that they
// vectorise. Accuracy, measured against the f64 std:: function rounded to f32 over a sweep
// of inputs including extremes, subnormals, NaN and +-Inf (see tests/backend/
// test_elementwise_accuracy.cpp):
//   exp_f32   Cephes expf polynomial, Cody-Waite range reduction, two-step 2^n scaling
//             (correct subnormal results): <= 2 ulp.
//   log_f32   Cephes logf polynomial on the mantissa in [sqrt(1/2), sqrt(2)): <= 2 ulp.
//   log1p_f32 log(u) * x / (u - 1) with u = 1 + x (Goldberg's trick): <= 4 ulp.
//   tanh_f32  Cephes tanhf: odd polynomial for |x| < 0.625, else 1 - 2 / (exp(2|x|) + 1):
//             <= 4 ulp.
//   erf_f32   rational approximation x P(x^2) / Q(x^2) on [-4, 4] (the coefficients of
//             Eigen's generic_fast_erf_float; +-1 outside): <= 6 ulp (near erf = +-1).
// f64 (and the other f32 functions: trigonometric, hyperbolic other than tanh, inverse)
// use the std:: functions.
//
// Integer semantics follow PyTorch: division is floor division and remainder takes the
// divisor's sign, so a == div(a, b) * b + rem(a, b). Integer division or remainder by zero
// does not trap: the result is defined as 0 (PyTorch raises "ZeroDivisionError" for a
// scalar zero; the front end throws ValueError in that case). Shifts by a negative count or
// by >= the bit width give 0 (right shift of a negative value: -1), as PyTorch.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#if defined(__GNUC__)
#define EMBER_SCALAR_INLINE inline __attribute__((always_inline))
#else
#define EMBER_SCALAR_INLINE inline
#endif

namespace ember::scalar {

// ---- f32 transcendental building blocks -------------------------------------------------

EMBER_SCALAR_INLINE float bits_to_float(std::uint32_t u) {
  return std::bit_cast<float>(u);
}
EMBER_SCALAR_INLINE std::uint32_t float_to_bits(float f) {
  return std::bit_cast<std::uint32_t>(f);
}

/// e^x in f32 (<= 2 ulp; exp(NaN) = NaN, exp(-inf) = 0, exp(inf) = inf, subnormal results).
EMBER_SCALAR_INLINE float exp_f32(float x) {
  x = x > 88.8f ? 88.8f : x;  // NaN passes both clamps unchanged
  x = x < -104.0f ? -104.0f : x;
  // n = round(x / ln2) by the 1.5 * 2^23 magic-number trick (no float->int conversion).
  constexpr float kMagic = 12582912.0f;
  const float t = x * 1.44269504088896341f + kMagic;
  const std::int32_t n = static_cast<std::int32_t>(float_to_bits(t)) -
                         static_cast<std::int32_t>(float_to_bits(kMagic));
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
  const std::int32_t n1 = n >> 1, n2 = n - n1;
  const float s1 = bits_to_float(static_cast<std::uint32_t>(n1 + 127) << 23);
  const float s2 = bits_to_float(static_cast<std::uint32_t>(n2 + 127) << 23);
  return p * s1 * s2;
}

/// ln(x) in f32 (<= 2 ulp; log(0) = -inf, log(x < 0) = NaN, log(inf) = inf, subnormals).
EMBER_SCALAR_INLINE float log_f32(float x) {
  const bool sub = x < 1.17549435e-38f;
  const float xs = sub ? x * 8388608.0f : x;  // scale subnormals by 2^23
  const std::uint32_t u = float_to_bits(xs);
  std::int32_t e = static_cast<std::int32_t>((u >> 23) & 0xff) - 126;
  e = sub ? e - 23 : e;
  float m = bits_to_float((u & 0x007fffffu) | 0x3f000000u);  // in [0.5, 1)
  const bool lo = m < 0.707106781186547524f;
  e = lo ? e - 1 : e;
  m = lo ? m + m - 1.0f : m - 1.0f;
  const float fe = static_cast<float>(e);
  const float z = m * m;
  float y = 7.0376836292e-2f;
  y = y * m - 1.1514610310e-1f;
  y = y * m + 1.1676998740e-1f;
  y = y * m - 1.2420140846e-1f;
  y = y * m + 1.4249322787e-1f;
  y = y * m - 1.6668057665e-1f;
  y = y * m + 2.0000714765e-1f;
  y = y * m - 2.4999993993e-1f;
  y = y * m + 3.3333331174e-1f;
  y = y * m * z;
  y = y + fe * -2.12194440e-4f;
  y = y - 0.5f * z;
  float r = m + y;
  r = r + fe * 0.693359375f;
  constexpr float kInf = std::numeric_limits<float>::infinity();
  constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
  r = x == kInf ? kInf : r;
  r = x == 0.0f ? -kInf : r;
  r = x < 0.0f ? kNaN : r;
  r = x != x ? x : r;
  return r;
}

/// ln(1 + x) in f32 (<= 4 ulp).
EMBER_SCALAR_INLINE float log1p_f32(float x) {
  const float u = 1.0f + x;
  const float d = u - 1.0f;
  const float l = log_f32(u);
  float r = d == 0.0f ? x : l * (x / d);
  r = u == std::numeric_limits<float>::infinity() ? u : r;
  return r;
}

/// tanh(x) in f32 (<= 4 ulp).
EMBER_SCALAR_INLINE float tanh_f32(float x) {
  const float ax = std::fabs(x);
  const float z = x * x;
  float p = -5.70498872745e-3f;
  p = p * z + 2.06390887954e-2f;
  p = p * z - 5.37397155531e-2f;
  p = p * z + 1.33314422036e-1f;
  p = p * z - 3.33332819422e-1f;
  const float small = p * z * x + x;
  const float e = exp_f32(ax + ax);
  float big = 1.0f - 2.0f / (e + 1.0f);
  big = std::copysign(big, x);
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

// ---- helpers ------------------------------------------------------------------------------

template <class T>
inline constexpr bool is_fp = std::is_floating_point_v<T>;

/// Floor division (PyTorch's `//` / torch.div(rounding_mode="floor")); 0 when b == 0.
template <class T>
inline T int_floor_div(T a, T b) {
  if (b == 0) return T{0};
  if constexpr (std::is_signed_v<T>) {
    if (b == T{-1}) {  // -a, wrapping for INT_MIN (two's complement) without UB or a trap
      using U = std::make_unsigned_t<T>;
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
inline T int_remainder(T a, T b) {
  if (b == 0) return T{0};
  if constexpr (std::is_signed_v<T>) {
    if (b == T{-1}) return T{0};
    const T r = static_cast<T>(a % b);
    return (r != 0 && ((r < 0) != (b < 0))) ? static_cast<T>(r + b) : r;
  } else {
    return static_cast<T>(a % b);
  }
}

/// Float remainder with the divisor's sign: a - floor(a / b) * b (PyTorch).
template <class T>
inline T float_remainder(T a, T b) {
  T r = std::fmod(a, b);
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

// ---- unary functors -----------------------------------------------------------------------
// Each has `template <class T> T operator()(T) const` for the compute type (float, double or
// an integer type).

struct Neg {
  template <class T>
  T operator()(T a) const {
    return static_cast<T>(-a);
  }
};
struct Abs {
  template <class T>
  T operator()(T a) const {
    if constexpr (is_fp<T>)
      return std::fabs(a);
    else if constexpr (std::is_signed_v<T>)
      return static_cast<T>(a < 0 ? -a : a);
    else
      return a;
  }
};
/// sign: -1, 0 or 1 (NaN gives 0, as torch.sign).
struct Sign {
  template <class T>
  T operator()(T a) const {
    if constexpr (is_fp<T>)
      return a > 0 ? T(1) : (a < 0 ? T(-1) : T(0));
    else
      return static_cast<T>((a > 0) - (a < 0));
  }
};
struct Square {
  template <class T>
  T operator()(T a) const {
    return static_cast<T>(a * a);
  }
};
struct Recip {
  template <class T>
  T operator()(T a) const {
    return T(1) / a;
  }
};
struct Exp {
  template <class T>
  T operator()(T a) const {
    if constexpr (std::is_same_v<T, float>)
      return exp_f32(a);
    else
      return std::exp(a);
  }
};
struct Log {
  template <class T>
  T operator()(T a) const {
    if constexpr (std::is_same_v<T, float>)
      return log_f32(a);
    else
      return std::log(a);
  }
};
struct Log1p {
  template <class T>
  T operator()(T a) const {
    if constexpr (std::is_same_v<T, float>)
      return log1p_f32(a);
    else
      return std::log1p(a);
  }
};
struct Sqrt {
  template <class T>
  T operator()(T a) const {
    return std::sqrt(a);
  }
};
struct Erf {
  template <class T>
  T operator()(T a) const {
    if constexpr (std::is_same_v<T, float>)
      return erf_f32(a);
    else
      return std::erf(a);
  }
};
struct Tanh {
  template <class T>
  T operator()(T a) const {
    if constexpr (std::is_same_v<T, float>)
      return tanh_f32(a);
    else
      return std::tanh(a);
  }
};
#define EMBER_STD_UNARY(Name, fn) \
  struct Name {                   \
    template <class T>            \
    T operator()(T a) const {     \
      return std::fn(a);          \
    }                             \
  };
EMBER_STD_UNARY(Sin, sin)
EMBER_STD_UNARY(Cos, cos)
EMBER_STD_UNARY(Tan, tan)
EMBER_STD_UNARY(Sinh, sinh)
EMBER_STD_UNARY(Cosh, cosh)
EMBER_STD_UNARY(Asin, asin)
EMBER_STD_UNARY(Acos, acos)
EMBER_STD_UNARY(Atan, atan)
EMBER_STD_UNARY(Asinh, asinh)
EMBER_STD_UNARY(Acosh, acosh)
EMBER_STD_UNARY(Atanh, atanh)
EMBER_STD_UNARY(Floor, floor)
EMBER_STD_UNARY(Ceil, ceil)
EMBER_STD_UNARY(Trunc, trunc)
#undef EMBER_STD_UNARY
/// Round half to even (torch.round), independent of the rounding mode.
struct Round {
  template <class T>
  T operator()(T a) const {
    const T r = std::round(a);  // half away from zero
    return (std::fabs(a - std::trunc(a)) == T(0.5)) ? T(2) * std::round(a / T(2)) : r;
  }
};
struct BitwiseNot {
  template <class T>
  T operator()(T a) const {
    return static_cast<T>(~a);
  }
};

// ---- binary functors ----------------------------------------------------------------------

struct Add {
  template <class T>
  T operator()(T a, T b) const {
    return static_cast<T>(a + b);
  }
};
struct Sub {
  template <class T>
  T operator()(T a, T b) const {
    return static_cast<T>(a - b);
  }
};
struct Mul {
  template <class T>
  T operator()(T a, T b) const {
    return static_cast<T>(a * b);
  }
};
/// True division for floats, floor division for ints (0 for a zero divisor).
struct Div {
  template <class T>
  T operator()(T a, T b) const {
    if constexpr (is_fp<T>)
      return a / b;
    else
      return int_floor_div(a, b);
  }
};
struct Remainder {
  template <class T>
  T operator()(T a, T b) const {
    if constexpr (is_fp<T>)
      return float_remainder(a, b);
    else
      return int_remainder(a, b);
  }
};
/// C fmod: remainder with the dividend's sign (torch.fmod).
struct Fmod {
  template <class T>
  T operator()(T a, T b) const {
    return std::fmod(a, b);
  }
};
/// a^b: std::pow for floats; for ints exponentiation by squaring (b < 0: 1 if a == 1,
/// +-1 if a == -1, else 0, as PyTorch's integer pow).
struct Pow {
  template <class T>
  T operator()(T a, T b) const {
    if constexpr (is_fp<T>) {
      return std::pow(a, b);
    } else {
      if (b < 0) {
        if (a == 1) return T{1};
        if constexpr (std::is_signed_v<T>) {
          if (a == -1) return (b % 2 == 0) ? T{1} : T{-1};
        }
        return T{0};
      }
      using U = std::make_unsigned_t<T>;
      U base = static_cast<U>(a), res = 1;
      auto e = static_cast<std::uint64_t>(b);
      while (e) {
        if (e & 1) res = static_cast<U>(res * base);
        base = static_cast<U>(base * base);
        e >>= 1;
      }
      return static_cast<T>(res);
    }
  }
};
struct Atan2 {
  template <class T>
  T operator()(T a, T b) const {
    return std::atan2(a, b);
  }
};
struct Hypot {
  template <class T>
  T operator()(T a, T b) const {
    return std::hypot(a, b);
  }
};
/// maximum/minimum: NaN propagates (torch.maximum).
struct MaxPair {
  template <class T>
  T operator()(T a, T b) const {
    if constexpr (is_fp<T>)
      return (a != a) ? a : (b != b ? b : (a > b ? a : b));
    else
      return a > b ? a : b;
  }
};
struct MinPair {
  template <class T>
  T operator()(T a, T b) const {
    if constexpr (is_fp<T>)
      return (a != a) ? a : (b != b ? b : (a < b ? a : b));
    else
      return a < b ? a : b;
  }
};
struct BitAnd {
  template <class T>
  T operator()(T a, T b) const {
    return static_cast<T>(a & b);
  }
};
struct BitOr {
  template <class T>
  T operator()(T a, T b) const {
    return static_cast<T>(a | b);
  }
};
struct BitXor {
  template <class T>
  T operator()(T a, T b) const {
    return static_cast<T>(a ^ b);
  }
};
struct ShiftLeft {
  template <class T>
  T operator()(T a, T b) const {
    using U = std::make_unsigned_t<T>;
    if (b < 0 || b >= static_cast<T>(sizeof(T) * 8)) return T{0};
    return static_cast<T>(static_cast<U>(a) << b);
  }
};
struct ShiftRight {
  template <class T>
  T operator()(T a, T b) const {
    if (b < 0 || b >= static_cast<T>(sizeof(T) * 8)) return static_cast<T>(a < 0 ? -1 : 0);
    return static_cast<T>(a >> b);
  }
};

// ---- comparisons (return bool) ------------------------------------------------------------

struct Equal {
  template <class T>
  bool operator()(T a, T b) const {
    return a == b;
  }
};
struct NotEqual {
  template <class T>
  bool operator()(T a, T b) const {
    return a != b;
  }
};
struct Greater {
  template <class T>
  bool operator()(T a, T b) const {
    return a > b;
  }
};
struct GreaterEqual {
  template <class T>
  bool operator()(T a, T b) const {
    return a >= b;
  }
};
struct Lower {
  template <class T>
  bool operator()(T a, T b) const {
    return a < b;
  }
};
struct LowerEqual {
  template <class T>
  bool operator()(T a, T b) const {
    return a <= b;
  }
};
struct IsNan {
  template <class T>
  bool operator()(T a) const {
    return a != a;
  }
};
struct IsInf {
  template <class T>
  bool operator()(T a) const {
    return std::fabs(a) == std::numeric_limits<T>::infinity();
  }
};
struct IsFinite {
  template <class T>
  bool operator()(T a) const {
    return std::fabs(a) < std::numeric_limits<T>::infinity();
  }
};

}  // namespace ember::scalar
