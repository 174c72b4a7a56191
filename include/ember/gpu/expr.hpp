// The element-wise table's rows (ember/ir/elementwise.hpp) as kernel expressions, for the GPU
// backends' element-wise kernels (ember/gpu/gpu.hpp).
//
// `gpu::expr::Of<Op>` is defined for the rows with a kernel expression: `kinds` (the tensor
// kinds it serves; the other kinds run on the host) and `f(a[, b])`. The kernel language's
// operations follow the same scalar functions as the CPU backend (docs/gpu.md, "Numerics"):
// floor division and the divisor's sign for remainders on integers, NaN-propagating
// minimum/maximum, round half to even. A row without an entry runs on the host
// (Gpu<R>'s fallback) until it gets one.
#pragma once

#include <limits>

#include "ember/ir/elementwise.hpp"
#include "ember/kernel/builder.hpp"

namespace ember::gpu::expr {

using kernel::Val;

/// A row without a kernel expression serves no kind (it runs on the host).
template <class Op>
struct Of {
  static constexpr unsigned kinds = 0;
};

/// Whether row Op has a kernel expression for tensor kind `kind` (ir::kFloat, kInt, kBool).
template <class Op, unsigned Kind>
inline constexpr bool native = (Of<Op>::kinds & Kind) != 0;

#define EMBER_GPU_EXPR1(Row, Kinds, e)       \
  template <>                                \
  struct Of<ir::op::Row> {                   \
    static constexpr unsigned kinds = Kinds; \
    static Val f(Val a) { return e; }        \
  };
#define EMBER_GPU_EXPR2(Row, Kinds, e)       \
  template <>                                \
  struct Of<ir::op::Row> {                   \
    static constexpr unsigned kinds = Kinds; \
    static Val f(Val a, Val b) { return e; } \
  };

inline constexpr unsigned kAll = ir::kFloat | ir::kInt | ir::kBool;
inline constexpr unsigned kNum = ir::kFloat | ir::kInt;

// clang-format off
EMBER_GPU_EXPR1(Neg, kNum, -a)
EMBER_GPU_EXPR1(Abs, kNum, kernel::abs(a))
EMBER_GPU_EXPR1(Sign, kNum, kernel::select(a > kernel::lit(a, 0), kernel::lit(a, 1),
                        kernel::select(a < kernel::lit(a, 0), kernel::lit(a, -1), kernel::lit(a, 0))))
EMBER_GPU_EXPR1(Square, kNum, a * a)
EMBER_GPU_EXPR1(Recip, ir::kFloat, kernel::recip(a))
EMBER_GPU_EXPR1(Exp, ir::kFloat, kernel::exp(a))
EMBER_GPU_EXPR1(Log, ir::kFloat, kernel::log(a))
EMBER_GPU_EXPR1(Log1p, ir::kFloat, kernel::log1p(a))
EMBER_GPU_EXPR1(Sqrt, ir::kFloat, kernel::sqrt(a))
EMBER_GPU_EXPR1(Erf, ir::kFloat, kernel::erf(a))
EMBER_GPU_EXPR1(Sin, ir::kFloat, kernel::sin(a))
EMBER_GPU_EXPR1(Cos, ir::kFloat, kernel::cos(a))
EMBER_GPU_EXPR1(Tanh, ir::kFloat, kernel::tanh(a))
EMBER_GPU_EXPR1(Round, ir::kFloat, kernel::round(a))
EMBER_GPU_EXPR1(Floor, ir::kFloat, kernel::floor(a))
EMBER_GPU_EXPR1(Ceil, ir::kFloat, kernel::ceil(a))
EMBER_GPU_EXPR1(Trunc, ir::kFloat, kernel::trunc(a))
EMBER_GPU_EXPR1(BitwiseNot, ir::kInt, ~a)
EMBER_GPU_EXPR1(Not, ir::kBool, !a)
EMBER_GPU_EXPR1(IsNan, ir::kFloat, kernel::is_nan(a))
EMBER_GPU_EXPR1(IsInf, ir::kFloat, kernel::is_inf(a))
EMBER_GPU_EXPR1(IsFinite, ir::kFloat,
                kernel::abs(a) < kernel::lit(a, std::numeric_limits<double>::infinity()))

EMBER_GPU_EXPR2(Add, kNum, a + b)
EMBER_GPU_EXPR2(Sub, kNum, a - b)
EMBER_GPU_EXPR2(Mul, kNum, a * b)
EMBER_GPU_EXPR2(Div, kNum, a / b)
EMBER_GPU_EXPR2(Remainder, kNum, a % b)
EMBER_GPU_EXPR2(Pow, ir::kFloat, kernel::pow(a, b))
EMBER_GPU_EXPR2(MaxPair, kNum, kernel::max(a, b))
EMBER_GPU_EXPR2(MinPair, kNum, kernel::min(a, b))
EMBER_GPU_EXPR2(BitAnd, ir::kInt, a & b)
EMBER_GPU_EXPR2(BitOr, ir::kInt, a | b)
EMBER_GPU_EXPR2(BitXor, ir::kInt, a ^ b)
EMBER_GPU_EXPR2(ShiftLeft, ir::kInt, a << b)
EMBER_GPU_EXPR2(ShiftRight, ir::kInt, a >> b)
EMBER_GPU_EXPR2(And, ir::kBool, a & b)
EMBER_GPU_EXPR2(Or, ir::kBool, a | b)
EMBER_GPU_EXPR2(Xor, ir::kBool, a != b)
EMBER_GPU_EXPR2(Equal, kAll, a == b)
EMBER_GPU_EXPR2(NotEqual, kAll, a != b)
EMBER_GPU_EXPR2(Greater, kAll, a > b)
EMBER_GPU_EXPR2(GreaterEqual, kAll, a >= b)
EMBER_GPU_EXPR2(Lower, kAll, a < b)
EMBER_GPU_EXPR2(LowerEqual, kAll, a <= b)
// clang-format on

#undef EMBER_GPU_EXPR1
#undef EMBER_GPU_EXPR2

}  // namespace ember::gpu::expr
