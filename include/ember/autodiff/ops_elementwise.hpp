// Autodiff<B>: element-wise functions. Float functions are recorded (rules in
// ember/autodiff/impl/elementwise.hpp); comparisons and int/bool functions pass through.
#pragma once

#include <cstdint>

#include "ember/autodiff/ops_core.hpp"

// Float functions recorded by Autodiff (name only).
// clang-format off
#define EMBER_AD_FLOAT_BINARY(X) \
  X(add) X(sub) X(mul) X(div) X(remainder) X(powf) X(atan2) X(hypot) X(fmod) X(max_pair) X(min_pair)
#define EMBER_AD_FLOAT_SCALAR(X) X(add) X(sub) X(mul) X(div) X(remainder) X(powf) X(fmod)
#define EMBER_AD_FLOAT_UNARY(X)                                                                    \
  X(neg)                                                                                           \
  X(abs)                                                                                           \
  X(sign) X(square) X(recip) X(exp) X(log) X(log1p) X(sqrt) X(erf) X(sin) X(cos) X(tan) X(sinh)    \
      X(cosh) X(tanh) X(asin) X(acos) X(atan) X(asinh) X(acosh) X(atanh) X(round) X(floor) X(ceil) \
          X(trunc)
#define EMBER_AD_COMPARE(X) \
  X(equal) X(not_equal) X(greater) X(greater_equal) X(lower) X(lower_equal)
// clang-format on

namespace ember::autodiff {

template <class B>
struct AdElementwiseOps {
  using AP = AdTensor<B>;
  using BP = typename B::BoolTensor;

#define EMBER_AD_DECL_FB(name) static AP float_##name(AP lhs, AP rhs);
#define EMBER_AD_DECL_FS(name) static AP float_##name##_scalar(AP lhs, double rhs);
#define EMBER_AD_DECL_FU(name) static AP float_##name(AP x);
#define EMBER_AD_DECL_CMP(name)                              \
  static BP float_##name(const AP& lhs, const AP& rhs) {     \
    return B::float_##name(lhs.inner, rhs.inner);            \
  }                                                          \
  static BP float_##name##_elem(const AP& lhs, double rhs) { \
    return B::float_##name##_elem(lhs.inner, rhs);           \
  }                                                          \
  EMBER_AD_FORWARD(int_##name)                               \
  EMBER_AD_FORWARD(int_##name##_elem)
  EMBER_AD_FLOAT_BINARY(EMBER_AD_DECL_FB)
  EMBER_AD_FLOAT_SCALAR(EMBER_AD_DECL_FS)
  EMBER_AD_FLOAT_UNARY(EMBER_AD_DECL_FU)
  EMBER_AD_COMPARE(EMBER_AD_DECL_CMP)
#undef EMBER_AD_DECL_FB
#undef EMBER_AD_DECL_FS
#undef EMBER_AD_DECL_FU
#undef EMBER_AD_DECL_CMP

  /// Gradient passes where min <= x <= max (torch.clamp), zero elsewhere.
  static AP float_clamp(AP x, double min, double max);
  static AP float_clamp_min(AP x, double min);
  static AP float_clamp_max(AP x, double max);
  static BP float_is_nan(const AP& x) {
    return B::float_is_nan(x.inner);
  }
  static BP float_is_inf(const AP& x) {
    return B::float_is_inf(x.inner);
  }
  static BP float_is_finite(const AP& x) {
    return B::float_is_finite(x.inner);
  }

  EMBER_AD_FORWARD(int_add)
  EMBER_AD_FORWARD(int_sub)
  EMBER_AD_FORWARD(int_mul)
  EMBER_AD_FORWARD(int_div)
  EMBER_AD_FORWARD(int_remainder)
  EMBER_AD_FORWARD(int_powi)
  EMBER_AD_FORWARD(int_max_pair)
  EMBER_AD_FORWARD(int_min_pair)
  EMBER_AD_FORWARD(int_bitwise_and)
  EMBER_AD_FORWARD(int_bitwise_or)
  EMBER_AD_FORWARD(int_bitwise_xor)
  EMBER_AD_FORWARD(int_bitwise_left_shift)
  EMBER_AD_FORWARD(int_bitwise_right_shift)
  EMBER_AD_FORWARD(int_add_scalar)
  EMBER_AD_FORWARD(int_sub_scalar)
  EMBER_AD_FORWARD(int_mul_scalar)
  EMBER_AD_FORWARD(int_div_scalar)
  EMBER_AD_FORWARD(int_remainder_scalar)
  EMBER_AD_FORWARD(int_powi_scalar)
  EMBER_AD_FORWARD(int_bitwise_and_scalar)
  EMBER_AD_FORWARD(int_bitwise_or_scalar)
  EMBER_AD_FORWARD(int_bitwise_xor_scalar)
  EMBER_AD_FORWARD(int_bitwise_left_shift_scalar)
  EMBER_AD_FORWARD(int_bitwise_right_shift_scalar)
  EMBER_AD_FORWARD(int_clamp)
  EMBER_AD_FORWARD(int_clamp_min)
  EMBER_AD_FORWARD(int_clamp_max)
  EMBER_AD_FORWARD(int_neg)
  EMBER_AD_FORWARD(int_abs)
  EMBER_AD_FORWARD(int_sign)
  EMBER_AD_FORWARD(int_square)
  EMBER_AD_FORWARD(int_bitwise_not)
  EMBER_AD_FORWARD(bool_not)
  EMBER_AD_FORWARD(bool_and)
  EMBER_AD_FORWARD(bool_or)
  EMBER_AD_FORWARD(bool_xor)
  EMBER_AD_FORWARD(bool_equal)
  EMBER_AD_FORWARD(bool_not_equal)
};

}  // namespace ember::autodiff
