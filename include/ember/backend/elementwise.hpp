// Backend contract: element-wise functions. See core.hpp for the conventions.
//
// Binary functions take two primitives of the SAME dtype and rank whose shapes are
// broadcast-compatible (size-1 dims stretch; the front end checks this and promotes dtypes
// first); the result has the broadcast shape and that dtype. Arguments are passed by value
// so a backend may write the result into an operand's buffer when it owns it alone.
// Names follow Burn's FloatTensorOps / IntTensorOps / BoolTensorOps.
//
//   float_{add,sub,mul,div,remainder,powf,atan2,hypot,fmod,max_pair,min_pair}(F, F) -> F
//   float_{add,sub,mul,div,remainder,powf,fmod}_scalar(F, double) -> F
//   float_{neg,abs,sign,square,recip,exp,log,log1p,sqrt,erf,sin,cos,tan,sinh,cosh,tanh,
//          asin,acos,atan,asinh,acosh,atanh,round,floor,ceil,trunc}(F) -> F
//   float_clamp(F, double min, double max), float_clamp_min(F, double),
//   float_clamp_max(F, double) -> F                 (NaN stays NaN)
//   float_{equal,not_equal,greater,greater_equal,lower,lower_equal}(F, F) -> Bool
//   float_{...}_elem(F, double) -> Bool ; float_is_nan / is_inf / is_finite(F) -> Bool
//   int_{add,sub,mul,div,remainder,powi,max_pair,min_pair,bitwise_and,bitwise_or,
//        bitwise_xor,bitwise_left_shift,bitwise_right_shift}(I, I) -> I
//   int_{add,sub,mul,div,remainder,powi,bitwise_and,bitwise_or,bitwise_xor,
//        bitwise_left_shift,bitwise_right_shift}_scalar(I, int64) -> I
//   int_{neg,abs,sign,square,bitwise_not}(I) -> I ; int_clamp / clamp_min / clamp_max
//   int_{equal,...,lower_equal}(I, I) -> Bool and _elem(I, int64) -> Bool
//   bool_not(Bo) ; bool_{and,or,xor,equal,not_equal}(Bo, Bo) -> Bo
// Integer division is floor division and remainder takes the divisor's sign (PyTorch);
// a zero divisor inside a tensor gives 0 (never a trap).
#pragma once

#include "ember/backend/core.hpp"

namespace ember {

template <class B>
concept ElementwiseBackend = CoreBackend<B> &&
    requires(typename B::FloatTensor f, typename B::IntTensor i, typename B::BoolTensor b, double s,
             std::int64_t n) {
  // float binary and scalar
  { B::float_add(f, f) } -> std::same_as<typename B::FloatTensor>;
  { B::float_sub(f, f) } -> std::same_as<typename B::FloatTensor>;
  { B::float_mul(f, f) } -> std::same_as<typename B::FloatTensor>;
  { B::float_div(f, f) } -> std::same_as<typename B::FloatTensor>;
  { B::float_remainder(f, f) } -> std::same_as<typename B::FloatTensor>;
  { B::float_powf(f, f) } -> std::same_as<typename B::FloatTensor>;
  { B::float_atan2(f, f) } -> std::same_as<typename B::FloatTensor>;
  { B::float_hypot(f, f) } -> std::same_as<typename B::FloatTensor>;
  { B::float_fmod(f, f) } -> std::same_as<typename B::FloatTensor>;
  { B::float_max_pair(f, f) } -> std::same_as<typename B::FloatTensor>;
  { B::float_min_pair(f, f) } -> std::same_as<typename B::FloatTensor>;
  { B::float_add_scalar(f, s) } -> std::same_as<typename B::FloatTensor>;
  { B::float_sub_scalar(f, s) } -> std::same_as<typename B::FloatTensor>;
  { B::float_mul_scalar(f, s) } -> std::same_as<typename B::FloatTensor>;
  { B::float_div_scalar(f, s) } -> std::same_as<typename B::FloatTensor>;
  { B::float_remainder_scalar(f, s) } -> std::same_as<typename B::FloatTensor>;
  { B::float_powf_scalar(f, s) } -> std::same_as<typename B::FloatTensor>;
  { B::float_fmod_scalar(f, s) } -> std::same_as<typename B::FloatTensor>;
  { B::float_clamp(f, s, s) } -> std::same_as<typename B::FloatTensor>;
  { B::float_clamp_min(f, s) } -> std::same_as<typename B::FloatTensor>;
  { B::float_clamp_max(f, s) } -> std::same_as<typename B::FloatTensor>;
  // float unary
  { B::float_neg(f) } -> std::same_as<typename B::FloatTensor>;
  { B::float_abs(f) } -> std::same_as<typename B::FloatTensor>;
  { B::float_sign(f) } -> std::same_as<typename B::FloatTensor>;
  { B::float_square(f) } -> std::same_as<typename B::FloatTensor>;
  { B::float_recip(f) } -> std::same_as<typename B::FloatTensor>;
  { B::float_exp(f) } -> std::same_as<typename B::FloatTensor>;
  { B::float_log(f) } -> std::same_as<typename B::FloatTensor>;
  { B::float_log1p(f) } -> std::same_as<typename B::FloatTensor>;
  { B::float_sqrt(f) } -> std::same_as<typename B::FloatTensor>;
  { B::float_erf(f) } -> std::same_as<typename B::FloatTensor>;
  { B::float_sin(f) } -> std::same_as<typename B::FloatTensor>;
  { B::float_cos(f) } -> std::same_as<typename B::FloatTensor>;
  { B::float_tan(f) } -> std::same_as<typename B::FloatTensor>;
  { B::float_sinh(f) } -> std::same_as<typename B::FloatTensor>;
  { B::float_cosh(f) } -> std::same_as<typename B::FloatTensor>;
  { B::float_tanh(f) } -> std::same_as<typename B::FloatTensor>;
  { B::float_asin(f) } -> std::same_as<typename B::FloatTensor>;
  { B::float_acos(f) } -> std::same_as<typename B::FloatTensor>;
  { B::float_atan(f) } -> std::same_as<typename B::FloatTensor>;
  { B::float_asinh(f) } -> std::same_as<typename B::FloatTensor>;
  { B::float_acosh(f) } -> std::same_as<typename B::FloatTensor>;
  { B::float_atanh(f) } -> std::same_as<typename B::FloatTensor>;
  { B::float_round(f) } -> std::same_as<typename B::FloatTensor>;
  { B::float_floor(f) } -> std::same_as<typename B::FloatTensor>;
  { B::float_ceil(f) } -> std::same_as<typename B::FloatTensor>;
  { B::float_trunc(f) } -> std::same_as<typename B::FloatTensor>;
  // float compare
  { B::float_equal(f, f) } -> std::same_as<typename B::BoolTensor>;
  { B::float_not_equal(f, f) } -> std::same_as<typename B::BoolTensor>;
  { B::float_greater(f, f) } -> std::same_as<typename B::BoolTensor>;
  { B::float_greater_equal(f, f) } -> std::same_as<typename B::BoolTensor>;
  { B::float_lower(f, f) } -> std::same_as<typename B::BoolTensor>;
  { B::float_lower_equal(f, f) } -> std::same_as<typename B::BoolTensor>;
  { B::float_equal_elem(f, s) } -> std::same_as<typename B::BoolTensor>;
  { B::float_not_equal_elem(f, s) } -> std::same_as<typename B::BoolTensor>;
  { B::float_greater_elem(f, s) } -> std::same_as<typename B::BoolTensor>;
  { B::float_greater_equal_elem(f, s) } -> std::same_as<typename B::BoolTensor>;
  { B::float_lower_elem(f, s) } -> std::same_as<typename B::BoolTensor>;
  { B::float_lower_equal_elem(f, s) } -> std::same_as<typename B::BoolTensor>;
  { B::float_is_nan(f) } -> std::same_as<typename B::BoolTensor>;
  { B::float_is_inf(f) } -> std::same_as<typename B::BoolTensor>;
  { B::float_is_finite(f) } -> std::same_as<typename B::BoolTensor>;
  // int
  { B::int_add(i, i) } -> std::same_as<typename B::IntTensor>;
  { B::int_sub(i, i) } -> std::same_as<typename B::IntTensor>;
  { B::int_mul(i, i) } -> std::same_as<typename B::IntTensor>;
  { B::int_div(i, i) } -> std::same_as<typename B::IntTensor>;
  { B::int_remainder(i, i) } -> std::same_as<typename B::IntTensor>;
  { B::int_powi(i, i) } -> std::same_as<typename B::IntTensor>;
  { B::int_max_pair(i, i) } -> std::same_as<typename B::IntTensor>;
  { B::int_min_pair(i, i) } -> std::same_as<typename B::IntTensor>;
  { B::int_bitwise_and(i, i) } -> std::same_as<typename B::IntTensor>;
  { B::int_bitwise_or(i, i) } -> std::same_as<typename B::IntTensor>;
  { B::int_bitwise_xor(i, i) } -> std::same_as<typename B::IntTensor>;
  { B::int_bitwise_left_shift(i, i) } -> std::same_as<typename B::IntTensor>;
  { B::int_bitwise_right_shift(i, i) } -> std::same_as<typename B::IntTensor>;
  { B::int_add_scalar(i, n) } -> std::same_as<typename B::IntTensor>;
  { B::int_sub_scalar(i, n) } -> std::same_as<typename B::IntTensor>;
  { B::int_mul_scalar(i, n) } -> std::same_as<typename B::IntTensor>;
  { B::int_div_scalar(i, n) } -> std::same_as<typename B::IntTensor>;
  { B::int_remainder_scalar(i, n) } -> std::same_as<typename B::IntTensor>;
  { B::int_powi_scalar(i, n) } -> std::same_as<typename B::IntTensor>;
  { B::int_bitwise_and_scalar(i, n) } -> std::same_as<typename B::IntTensor>;
  { B::int_bitwise_or_scalar(i, n) } -> std::same_as<typename B::IntTensor>;
  { B::int_bitwise_xor_scalar(i, n) } -> std::same_as<typename B::IntTensor>;
  { B::int_bitwise_left_shift_scalar(i, n) } -> std::same_as<typename B::IntTensor>;
  { B::int_bitwise_right_shift_scalar(i, n) } -> std::same_as<typename B::IntTensor>;
  { B::int_clamp(i, n, n) } -> std::same_as<typename B::IntTensor>;
  { B::int_clamp_min(i, n) } -> std::same_as<typename B::IntTensor>;
  { B::int_clamp_max(i, n) } -> std::same_as<typename B::IntTensor>;
  { B::int_neg(i) } -> std::same_as<typename B::IntTensor>;
  { B::int_abs(i) } -> std::same_as<typename B::IntTensor>;
  { B::int_sign(i) } -> std::same_as<typename B::IntTensor>;
  { B::int_square(i) } -> std::same_as<typename B::IntTensor>;
  { B::int_bitwise_not(i) } -> std::same_as<typename B::IntTensor>;
  { B::int_equal(i, i) } -> std::same_as<typename B::BoolTensor>;
  { B::int_not_equal(i, i) } -> std::same_as<typename B::BoolTensor>;
  { B::int_greater(i, i) } -> std::same_as<typename B::BoolTensor>;
  { B::int_greater_equal(i, i) } -> std::same_as<typename B::BoolTensor>;
  { B::int_lower(i, i) } -> std::same_as<typename B::BoolTensor>;
  { B::int_lower_equal(i, i) } -> std::same_as<typename B::BoolTensor>;
  { B::int_equal_elem(i, n) } -> std::same_as<typename B::BoolTensor>;
  { B::int_not_equal_elem(i, n) } -> std::same_as<typename B::BoolTensor>;
  { B::int_greater_elem(i, n) } -> std::same_as<typename B::BoolTensor>;
  { B::int_greater_equal_elem(i, n) } -> std::same_as<typename B::BoolTensor>;
  { B::int_lower_elem(i, n) } -> std::same_as<typename B::BoolTensor>;
  { B::int_lower_equal_elem(i, n) } -> std::same_as<typename B::BoolTensor>;
  // bool
  { B::bool_not(b) } -> std::same_as<typename B::BoolTensor>;
  { B::bool_and(b, b) } -> std::same_as<typename B::BoolTensor>;
  { B::bool_or(b, b) } -> std::same_as<typename B::BoolTensor>;
  { B::bool_xor(b, b) } -> std::same_as<typename B::BoolTensor>;
  { B::bool_equal(b, b) } -> std::same_as<typename B::BoolTensor>;
  { B::bool_not_equal(b, b) } -> std::same_as<typename B::BoolTensor>;
};

}  // namespace ember
