// CPU backend: element-wise functions of the contract (see ember/backend/elementwise.hpp).
// Implemented in src/cpu/elementwise_{unary,binary,compare}.cpp over the strided/broadcast
// iterator of src/cpu/elementwise_kernel.hpp, with the element functions of
// ember/tensor/scalar_ops.hpp.
#pragma once

#include <cstdint>

#include "ember/cpu/tensor.hpp"

// X(name) lists, shared by the declarations here and the definitions in src/cpu.
// clang-format off
#define EMBER_EW_FLOAT_BINARY(X)                                                           \
  X(add, Add)                                                                              \
  X(sub, Sub) X(mul, Mul) X(div, Div) X(remainder, Remainder) X(powf, Pow) X(atan2, Atan2) \
      X(hypot, Hypot) X(fmod, Fmod) X(max_pair, MaxPair) X(min_pair, MinPair)
#define EMBER_EW_FLOAT_SCALAR(X) \
  X(add, Add) X(sub, Sub) X(mul, Mul) X(div, Div) X(remainder, Remainder) X(powf, Pow) X(fmod, Fmod)
#define EMBER_EW_FLOAT_UNARY(X)                                                                   \
  X(neg, Neg)                                                                                     \
  X(abs, Abs) X(sign, Sign) X(square, Square) X(recip, Recip) X(exp, Exp) X(log, Log)             \
      X(log1p, Log1p) X(sqrt, Sqrt) X(erf, Erf) X(sin, Sin) X(cos, Cos) X(tan, Tan) X(sinh, Sinh) \
          X(cosh, Cosh) X(tanh, Tanh) X(asin, Asin) X(acos, Acos) X(atan, Atan) X(asinh, Asinh)   \
              X(acosh, Acosh) X(atanh, Atanh) X(round, Round) X(floor, Floor) X(ceil, Ceil)       \
                  X(trunc, Trunc)
#define EMBER_EW_INT_BINARY(X)                                                                    \
  X(add, Add)                                                                                     \
  X(sub, Sub) X(mul, Mul) X(div, Div) X(remainder, Remainder) X(powi, Pow) X(bitwise_and, BitAnd) \
      X(bitwise_or, BitOr) X(bitwise_xor, BitXor) X(bitwise_left_shift, ShiftLeft)                \
          X(bitwise_right_shift, ShiftRight)
#define EMBER_EW_INT_UNARY(X) \
  X(neg, Neg) X(abs, Abs) X(sign, Sign) X(square, Square) X(bitwise_not, BitwiseNot)
#define EMBER_EW_COMPARE(X)                                                                 \
  X(equal, Equal)                                                                           \
  X(not_equal, NotEqual) X(greater, Greater) X(greater_equal, GreaterEqual) X(lower, Lower) \
      X(lower_equal, LowerEqual)
// clang-format on

namespace ember::cpu {

struct ElementwiseOps {
#define EMBER_DECL_FB(name, Op) static CpuTensor float_##name(CpuTensor lhs, CpuTensor rhs);
#define EMBER_DECL_FS(name, Op) static CpuTensor float_##name##_scalar(CpuTensor lhs, double rhs);
#define EMBER_DECL_FU(name, Op) static CpuTensor float_##name(CpuTensor x);
#define EMBER_DECL_IB(name, Op)                              \
  static CpuTensor int_##name(CpuTensor lhs, CpuTensor rhs); \
  static CpuTensor int_##name##_scalar(CpuTensor lhs, std::int64_t rhs);
#define EMBER_DECL_IU(name, Op) static CpuTensor int_##name(CpuTensor x);
#define EMBER_DECL_CMP(name, Op)                                             \
  static CpuTensor float_##name(const CpuTensor& lhs, const CpuTensor& rhs); \
  static CpuTensor float_##name##_elem(const CpuTensor& lhs, double rhs);    \
  static CpuTensor int_##name(const CpuTensor& lhs, const CpuTensor& rhs);   \
  static CpuTensor int_##name##_elem(const CpuTensor& lhs, std::int64_t rhs);
  EMBER_EW_FLOAT_BINARY(EMBER_DECL_FB)
  EMBER_EW_FLOAT_SCALAR(EMBER_DECL_FS)
  EMBER_EW_FLOAT_UNARY(EMBER_DECL_FU)
  EMBER_EW_INT_BINARY(EMBER_DECL_IB)
  EMBER_EW_INT_UNARY(EMBER_DECL_IU)
  EMBER_EW_COMPARE(EMBER_DECL_CMP)
#undef EMBER_DECL_FB
#undef EMBER_DECL_FS
#undef EMBER_DECL_FU
#undef EMBER_DECL_IB
#undef EMBER_DECL_IU
#undef EMBER_DECL_CMP

  static CpuTensor int_max_pair(CpuTensor lhs, CpuTensor rhs);
  static CpuTensor int_min_pair(CpuTensor lhs, CpuTensor rhs);
  static CpuTensor float_clamp(CpuTensor x, double min, double max);
  static CpuTensor float_clamp_min(CpuTensor x, double min);
  static CpuTensor float_clamp_max(CpuTensor x, double max);
  static CpuTensor int_clamp(CpuTensor x, std::int64_t min, std::int64_t max);
  static CpuTensor int_clamp_min(CpuTensor x, std::int64_t min);
  static CpuTensor int_clamp_max(CpuTensor x, std::int64_t max);
  static CpuTensor float_is_nan(const CpuTensor& x);
  static CpuTensor float_is_inf(const CpuTensor& x);
  static CpuTensor float_is_finite(const CpuTensor& x);
  static CpuTensor bool_not(CpuTensor x);
  static CpuTensor bool_and(CpuTensor lhs, CpuTensor rhs);
  static CpuTensor bool_or(CpuTensor lhs, CpuTensor rhs);
  static CpuTensor bool_xor(CpuTensor lhs, CpuTensor rhs);
  static CpuTensor bool_equal(CpuTensor lhs, CpuTensor rhs);
  static CpuTensor bool_not_equal(CpuTensor lhs, CpuTensor rhs);
};

}  // namespace ember::cpu
