// The element-wise table: one row per element-wise op (Burn's burn-ir element-wise
// OperationIr variants, as rows of data). A row is a type `ir::op::<Name>` with
//   name          the op's name, as in the front end and in error messages ("exp")
//   family        Unary (x -> x), Binary ((a, b) -> same kind), Compare ((a, b) -> Bool) or
//                 Predicate (x -> Bool)
//   kinds         the tensor kinds it exists for (kFloat | kInt | kBool)
//   scalar_kinds  Binary/Compare: the kinds with a tensor-scalar form (`add_scalar`,
//                 `equal_elem`); the scalar is double for Float, int64 for Int
//   saves         what the gradient reads (kSaveA, kSaveB: the operands; kSaveOut: the output);
//                 `scalar_saves` likewise for the tensor-scalar form
//   operator()    the scalar function, for every compute type (float, double, int types);
//                 usable in host and device code (ember/ir/scalar.hpp)
//   grad / grad_a / grad_b  (Float rows) the gradient, written with a value type V that has
//                 the arithmetic operators and the free functions used below (autodiff's
//                 `autodiff::Val<B>`); formulas from PyTorch's tools/autograd/derivatives.yaml,
//                 with PyTorch's conventions at non-smooth points.
//
// The backend contract is generic over the rows (ember/backend/elementwise.hpp): a backend
// implements `float_unary<Op>`, `float_binary<Op>`, ... once; the CPU kernels, Autodiff's
// rules and Dispatch's tables are instantiated from `ir::ElementwiseOps` below.
//
// ADDING AN ELEMENT-WISE OP: a row here (appended to `ElementwiseOps`), a front-end method in
// ember/tensor/ops/elementwise.hpp, and a test. Nothing else.
#pragma once

#include "ember/ir/scalar.hpp"

namespace ember::ir {

/// Tensor kinds as bits.
inline constexpr unsigned kFloat = 1, kInt = 2, kBool = 4;

/// What a gradient rule reads.
inline constexpr unsigned kSaveNone = 0, kSaveA = 1, kSaveB = 2, kSaveOut = 4;

enum class Family : unsigned char { Unary, Binary, Compare, Predicate };

/// Row metadata bases.
template <unsigned Kinds, unsigned Saves = kSaveNone>
struct UnaryRow {
  static constexpr Family family = Family::Unary;
  static constexpr unsigned kinds = Kinds;
  static constexpr unsigned scalar_kinds = 0;
  static constexpr unsigned saves = Saves;
};
template <unsigned Kinds, unsigned ScalarKinds, unsigned Saves = kSaveNone,
          unsigned ScalarSaves = kSaveNone>
struct BinaryRow {
  static constexpr Family family = Family::Binary;
  static constexpr unsigned kinds = Kinds;
  static constexpr unsigned scalar_kinds = ScalarKinds;
  static constexpr unsigned saves = Saves;
  static constexpr unsigned scalar_saves = ScalarSaves;
};
template <unsigned Kinds, unsigned ScalarKinds>
struct CompareRow {
  static constexpr Family family = Family::Compare;
  static constexpr unsigned kinds = Kinds;
  static constexpr unsigned scalar_kinds = ScalarKinds;
};
struct PredicateRow {
  static constexpr Family family = Family::Predicate;
  static constexpr unsigned kinds = kFloat;
  static constexpr unsigned scalar_kinds = 0;
};

namespace op {

using scalar::is_fp;
namespace sm = scalar::m;
namespace tr = scalar::traits;

// Comparisons of the scalar operand of a tensor-scalar form (the rows' grad_a with W = double);
// tensor operands find their own overloads by argument-dependent lookup.
inline constexpr bool eq(double a, double b) {
  return a == b;
}
inline constexpr bool ge(double a, double b) {
  return a >= b;
}

// ==== unary ===================================================================================

/// -x.
struct Neg : UnaryRow<kFloat | kInt> {
  static constexpr const char* name = "neg";
  template <class T>
  EMBER_SCALAR_INLINE T operator()(T a) const {
    return static_cast<T>(-a);
  }
  template <class V>
  static V grad(const V&, const V&, const V& dy) {
    return -dy;
  }
};
/// |x|; the gradient at 0 is 0 (sign).
struct Abs : UnaryRow<kFloat | kInt, kSaveA> {
  static constexpr const char* name = "abs";
  template <class T>
  EMBER_SCALAR_INLINE T operator()(T a) const {
    if constexpr (is_fp<T>)
      return sm::fabs(a);
    else if constexpr (tr::is_signed<T>)
      return static_cast<T>(a < 0 ? -a : a);
    else
      return a;
  }
  template <class V>
  static V grad(const V& x, const V&, const V& dy) {
    return dy * sign(x);
  }
};
/// -1, 0 or 1 (NaN gives 0, as torch.sign); zero gradient.
struct Sign : UnaryRow<kFloat | kInt> {
  static constexpr const char* name = "sign";
  template <class T>
  EMBER_SCALAR_INLINE T operator()(T a) const {
    if constexpr (is_fp<T>)
      return a > 0 ? T(1) : (a < 0 ? T(-1) : T(0));
    else
      return static_cast<T>((a > 0) - (a < 0));
  }
  template <class V>
  static V grad(const V&, const V&, const V& dy) {
    return zeros_like(dy);
  }
};
/// x * x.
struct Square : UnaryRow<kFloat | kInt, kSaveA> {
  static constexpr const char* name = "square";
  template <class T>
  EMBER_SCALAR_INLINE T operator()(T a) const {
    return static_cast<T>(a * a);
  }
  template <class V>
  static V grad(const V& x, const V&, const V& dy) {
    return dy * (x * 2.0);
  }
};
/// 1 / x.
struct Recip : UnaryRow<kFloat, kSaveOut> {
  static constexpr const char* name = "recip";
  template <class T>
  EMBER_SCALAR_INLINE T operator()(T a) const {
    return T(1) / a;
  }
  template <class V>
  static V grad(const V&, const V& y, const V& dy) {
    return -(dy * square(y));
  }
};
/// e^x (f32: exp_f32, <= 2 ulp).
struct Exp : UnaryRow<kFloat, kSaveOut> {
  static constexpr const char* name = "exp";
  template <class T>
  EMBER_SCALAR_INLINE T operator()(T a) const {
    if constexpr (tr::is_same<T, float>)
      return scalar::exp_f32(a);
    else
      return sm::exp(a);
  }
  template <class V>
  static V grad(const V&, const V& y, const V& dy) {
    return dy * y;
  }
};
/// ln x (f32: log_f32, <= 2 ulp).
struct Log : UnaryRow<kFloat, kSaveA> {
  static constexpr const char* name = "log";
  template <class T>
  EMBER_SCALAR_INLINE T operator()(T a) const {
    if constexpr (tr::is_same<T, float>)
      return scalar::log_f32(a);
    else
      return sm::log(a);
  }
  template <class V>
  static V grad(const V& x, const V&, const V& dy) {
    return dy / x;
  }
};
/// ln(1 + x) (f32: log1p_f32, <= 4 ulp).
struct Log1p : UnaryRow<kFloat, kSaveA> {
  static constexpr const char* name = "log1p";
  template <class T>
  EMBER_SCALAR_INLINE T operator()(T a) const {
    if constexpr (tr::is_same<T, float>)
      return scalar::log1p_f32(a);
    else
      return sm::log1p(a);
  }
  template <class V>
  static V grad(const V& x, const V&, const V& dy) {
    return dy / (x + 1.0);
  }
};
/// sqrt x.
struct Sqrt : UnaryRow<kFloat, kSaveOut> {
  static constexpr const char* name = "sqrt";
  template <class T>
  EMBER_SCALAR_INLINE T operator()(T a) const {
    return sm::sqrt(a);
  }
  template <class V>
  static V grad(const V&, const V& y, const V& dy) {
    return dy / (y * 2.0);
  }
};
/// erf x (f32: erf_f32, <= 6 ulp); d/dx = 2 / sqrt(pi) e^(-x^2).
struct Erf : UnaryRow<kFloat, kSaveA> {
  static constexpr const char* name = "erf";
  template <class T>
  EMBER_SCALAR_INLINE T operator()(T a) const {
    if constexpr (tr::is_same<T, float>)
      return scalar::erf_f32(a);
    else
      return sm::erf(a);
  }
  template <class V>
  static V grad(const V& x, const V&, const V& dy) {
    return dy * (exp(-square(x)) * 1.1283791670955126);  // 2 / sqrt(pi)
  }
};
struct Sin : UnaryRow<kFloat, kSaveA> {
  static constexpr const char* name = "sin";
  template <class T>
  EMBER_SCALAR_INLINE T operator()(T a) const {
    return sm::sin(a);
  }
  template <class V>
  static V grad(const V& x, const V&, const V& dy) {
    return dy * cos(x);
  }
};
struct Cos : UnaryRow<kFloat, kSaveA> {
  static constexpr const char* name = "cos";
  template <class T>
  EMBER_SCALAR_INLINE T operator()(T a) const {
    return sm::cos(a);
  }
  template <class V>
  static V grad(const V& x, const V&, const V& dy) {
    return -(dy * sin(x));
  }
};
struct Tan : UnaryRow<kFloat, kSaveOut> {
  static constexpr const char* name = "tan";
  template <class T>
  EMBER_SCALAR_INLINE T operator()(T a) const {
    return sm::tan(a);
  }
  template <class V>
  static V grad(const V&, const V& y, const V& dy) {
    return dy * (square(y) + 1.0);
  }
};
struct Sinh : UnaryRow<kFloat, kSaveA> {
  static constexpr const char* name = "sinh";
  template <class T>
  EMBER_SCALAR_INLINE T operator()(T a) const {
    return sm::sinh(a);
  }
  template <class V>
  static V grad(const V& x, const V&, const V& dy) {
    return dy * cosh(x);
  }
};
struct Cosh : UnaryRow<kFloat, kSaveA> {
  static constexpr const char* name = "cosh";
  template <class T>
  EMBER_SCALAR_INLINE T operator()(T a) const {
    return sm::cosh(a);
  }
  template <class V>
  static V grad(const V& x, const V&, const V& dy) {
    return dy * sinh(x);
  }
};
/// tanh x (f32: tanh_f32, <= 4 ulp).
struct Tanh : UnaryRow<kFloat, kSaveOut> {
  static constexpr const char* name = "tanh";
  template <class T>
  EMBER_SCALAR_INLINE T operator()(T a) const {
    if constexpr (tr::is_same<T, float>)
      return scalar::tanh_f32(a);
    else
      return sm::tanh(a);
  }
  template <class V>
  static V grad(const V&, const V& y, const V& dy) {
    return dy * (-square(y) + 1.0);
  }
};
struct Asin : UnaryRow<kFloat, kSaveA> {
  static constexpr const char* name = "asin";
  template <class T>
  EMBER_SCALAR_INLINE T operator()(T a) const {
    return sm::asin(a);
  }
  template <class V>
  static V grad(const V& x, const V&, const V& dy) {
    return dy / sqrt(-square(x) + 1.0);
  }
};
struct Acos : UnaryRow<kFloat, kSaveA> {
  static constexpr const char* name = "acos";
  template <class T>
  EMBER_SCALAR_INLINE T operator()(T a) const {
    return sm::acos(a);
  }
  template <class V>
  static V grad(const V& x, const V&, const V& dy) {
    return -(dy / sqrt(-square(x) + 1.0));
  }
};
struct Atan : UnaryRow<kFloat, kSaveA> {
  static constexpr const char* name = "atan";
  template <class T>
  EMBER_SCALAR_INLINE T operator()(T a) const {
    return sm::atan(a);
  }
  template <class V>
  static V grad(const V& x, const V&, const V& dy) {
    return dy / (square(x) + 1.0);
  }
};
struct Asinh : UnaryRow<kFloat, kSaveA> {
  static constexpr const char* name = "asinh";
  template <class T>
  EMBER_SCALAR_INLINE T operator()(T a) const {
    return sm::asinh(a);
  }
  template <class V>
  static V grad(const V& x, const V&, const V& dy) {
    return dy / sqrt(square(x) + 1.0);
  }
};
struct Acosh : UnaryRow<kFloat, kSaveA> {
  static constexpr const char* name = "acosh";
  template <class T>
  EMBER_SCALAR_INLINE T operator()(T a) const {
    return sm::acosh(a);
  }
  template <class V>
  static V grad(const V& x, const V&, const V& dy) {
    return dy / sqrt(square(x) - 1.0);
  }
};
struct Atanh : UnaryRow<kFloat, kSaveA> {
  static constexpr const char* name = "atanh";
  template <class T>
  EMBER_SCALAR_INLINE T operator()(T a) const {
    return sm::atanh(a);
  }
  template <class V>
  static V grad(const V& x, const V&, const V& dy) {
    return dy / (-square(x) + 1.0);
  }
};
/// Round half to even (torch.round); zero gradient.
struct Round : UnaryRow<kFloat> {
  static constexpr const char* name = "round";
  template <class T>
  EMBER_SCALAR_INLINE T operator()(T a) const {
    return scalar::round_half_even(a);
  }
  template <class V>
  static V grad(const V&, const V&, const V& dy) {
    return zeros_like(dy);
  }
};
struct Floor : UnaryRow<kFloat> {
  static constexpr const char* name = "floor";
  template <class T>
  EMBER_SCALAR_INLINE T operator()(T a) const {
    return sm::floor(a);
  }
  template <class V>
  static V grad(const V&, const V&, const V& dy) {
    return zeros_like(dy);
  }
};
struct Ceil : UnaryRow<kFloat> {
  static constexpr const char* name = "ceil";
  template <class T>
  EMBER_SCALAR_INLINE T operator()(T a) const {
    return sm::ceil(a);
  }
  template <class V>
  static V grad(const V&, const V&, const V& dy) {
    return zeros_like(dy);
  }
};
struct Trunc : UnaryRow<kFloat> {
  static constexpr const char* name = "trunc";
  template <class T>
  EMBER_SCALAR_INLINE T operator()(T a) const {
    return sm::trunc(a);
  }
  template <class V>
  static V grad(const V&, const V&, const V& dy) {
    return zeros_like(dy);
  }
};
/// Bitwise NOT of an Int tensor.
struct BitwiseNot : UnaryRow<kInt> {
  static constexpr const char* name = "bitwise_not";
  template <class T>
  EMBER_SCALAR_INLINE T operator()(T a) const {
    return static_cast<T>(~a);
  }
};
/// Logical NOT of a Bool tensor (stored as one byte: 0 or 1).
struct Not : UnaryRow<kBool> {
  static constexpr const char* name = "bool_not";
  template <class T>
  EMBER_SCALAR_INLINE T operator()(T a) const {
    return static_cast<T>(a == 0);
  }
};

// ==== binary (broadcasting; gradients are summed back to each operand's shape) ==============

struct Add : BinaryRow<kFloat | kInt, kFloat | kInt> {
  static constexpr const char* name = "add";
  template <class T>
  EMBER_SCALAR_INLINE T operator()(T a, T b) const {
    return static_cast<T>(a + b);
  }
  template <class V, class W>
  static V grad_a(const V&, const W&, const V&, const V& dy) {
    return dy;
  }
  template <class V>
  static V grad_b(const V&, const V&, const V&, const V& dy) {
    return dy;
  }
};
struct Sub : BinaryRow<kFloat | kInt, kFloat | kInt> {
  static constexpr const char* name = "sub";
  template <class T>
  EMBER_SCALAR_INLINE T operator()(T a, T b) const {
    return static_cast<T>(a - b);
  }
  template <class V, class W>
  static V grad_a(const V&, const W&, const V&, const V& dy) {
    return dy;
  }
  template <class V>
  static V grad_b(const V&, const V&, const V&, const V& dy) {
    return -dy;
  }
};
struct Mul : BinaryRow<kFloat | kInt, kFloat | kInt, kSaveA | kSaveB> {
  static constexpr const char* name = "mul";
  template <class T>
  EMBER_SCALAR_INLINE T operator()(T a, T b) const {
    return static_cast<T>(a * b);
  }
  template <class V, class W>
  static V grad_a(const V&, const W& b, const V&, const V& dy) {
    return dy * b;
  }
  template <class V>
  static V grad_b(const V& a, const V&, const V&, const V& dy) {
    return dy * a;
  }
};
/// True division for floats, floor division for ints (0 for a zero divisor).
struct Div : BinaryRow<kFloat | kInt, kFloat | kInt, kSaveA | kSaveB> {
  static constexpr const char* name = "div";
  template <class T>
  EMBER_SCALAR_INLINE T operator()(T a, T b) const {
    if constexpr (is_fp<T>)
      return a / b;
    else
      return scalar::int_floor_div(a, b);
  }
  template <class V, class W>
  static V grad_a(const V&, const W& b, const V&, const V& dy) {
    return dy / b;
  }
  template <class V>
  static V grad_b(const V& a, const V& b, const V&, const V& dy) {
    return -((dy * a) / square(b));
  }
};
/// Remainder with the divisor's sign: a - floor(a / b) * b (torch.remainder).
struct Remainder : BinaryRow<kFloat | kInt, kFloat | kInt, kSaveA | kSaveB> {
  static constexpr const char* name = "remainder";
  template <class T>
  EMBER_SCALAR_INLINE T operator()(T a, T b) const {
    if constexpr (is_fp<T>)
      return scalar::float_remainder(a, b);
    else
      return scalar::int_remainder(a, b);
  }
  template <class V, class W>
  static V grad_a(const V&, const W&, const V&, const V& dy) {
    return dy;
  }
  template <class V>
  static V grad_b(const V& a, const V& b, const V&, const V& dy) {
    return -(dy * floor(a / b));
  }
};
/// C fmod: remainder with the dividend's sign, a - trunc(a / b) * b (torch.fmod).
struct Fmod : BinaryRow<kFloat, kFloat, kSaveA | kSaveB> {
  static constexpr const char* name = "fmod";
  template <class T>
  EMBER_SCALAR_INLINE T operator()(T a, T b) const {
    return sm::fmod(a, b);
  }
  template <class V, class W>
  static V grad_a(const V&, const W&, const V&, const V& dy) {
    return dy;
  }
  template <class V>
  static V grad_b(const V& a, const V& b, const V&, const V& dy) {
    return -(dy * trunc(a / b));
  }
};
/// a^b: pow for floats (`powf`); for ints exponentiation by squaring (`powi`; b < 0 gives 1
/// if a == 1, +-1 if a == -1, else 0, as PyTorch). d/da = b a^(b-1) (0 where b == 0);
/// d/db = a^b ln a (0 where a == 0 and b >= 0).
struct Pow : BinaryRow<kFloat | kInt, kFloat | kInt, kSaveA | kSaveB | kSaveOut, kSaveA> {
  static constexpr const char* name = "pow";
  static constexpr const char* float_name = "powf";  // Burn's float_powf / int_powi
  static constexpr const char* int_name = "powi";
  template <class T>
  EMBER_SCALAR_INLINE T operator()(T a, T b) const {
    if constexpr (is_fp<T>)
      return sm::pow(a, b);
    else
      return scalar::int_pow(a, b);
  }
  template <class V, class W>
  static V grad_a(const V& a, const W& b, const V&, const V& dy) {
    return dy * mask_fill(b * pow(a, b - 1.0), eq(b, 0.0), 0.0);
  }
  template <class V>
  static V grad_b(const V& a, const V& b, const V& y, const V& dy) {
    return dy * mask_fill(y * log(a), eq(a, 0.0) & ge(b, 0.0), 0.0);
  }
};
struct Atan2 : BinaryRow<kFloat, 0, kSaveA | kSaveB> {
  static constexpr const char* name = "atan2";
  template <class T>
  EMBER_SCALAR_INLINE T operator()(T a, T b) const {
    return sm::atan2(a, b);
  }
  template <class V, class W>
  static V grad_a(const V& a, const W& b, const V&, const V& dy) {
    return (dy * b) / (square(a) + square(b));
  }
  template <class V>
  static V grad_b(const V& a, const V& b, const V&, const V& dy) {
    return -((dy * a) / (square(a) + square(b)));
  }
};
/// sqrt(a^2 + b^2) without overflow; d/da = a / y.
struct Hypot : BinaryRow<kFloat, 0, kSaveA | kSaveB | kSaveOut> {
  static constexpr const char* name = "hypot";
  template <class T>
  EMBER_SCALAR_INLINE T operator()(T a, T b) const {
    return sm::hypot(a, b);
  }
  template <class V, class W>
  static V grad_a(const V& a, const W&, const V& y, const V& dy) {
    return (dy * a) / y;
  }
  template <class V>
  static V grad_b(const V&, const V& b, const V& y, const V& dy) {
    return (dy * b) / y;
  }
};
/// Element-wise maximum (NaN propagates, torch.maximum); ties split the gradient evenly.
struct MaxPair : BinaryRow<kFloat | kInt, 0, kSaveA | kSaveB> {
  static constexpr const char* name = "max_pair";
  template <class T>
  EMBER_SCALAR_INLINE T operator()(T a, T b) const {
    if constexpr (is_fp<T>)
      return (a != a) ? a : (b != b ? b : (a > b ? a : b));
    else
      return a > b ? a : b;
  }
  template <class V, class W>
  static V grad_a(const V& a, const W& b, const V&, const V& dy) {
    return mask_fill(where(eq(a, b), dy * 0.5, dy), lt(a, b), 0.0);
  }
  template <class V>
  static V grad_b(const V& a, const V& b, const V&, const V& dy) {
    return mask_fill(where(eq(a, b), dy * 0.5, dy), gt(a, b), 0.0);
  }
};
/// Element-wise minimum (NaN propagates, torch.minimum); ties split the gradient evenly.
struct MinPair : BinaryRow<kFloat | kInt, 0, kSaveA | kSaveB> {
  static constexpr const char* name = "min_pair";
  template <class T>
  EMBER_SCALAR_INLINE T operator()(T a, T b) const {
    if constexpr (is_fp<T>)
      return (a != a) ? a : (b != b ? b : (a < b ? a : b));
    else
      return a < b ? a : b;
  }
  template <class V, class W>
  static V grad_a(const V& a, const W& b, const V&, const V& dy) {
    return mask_fill(where(eq(a, b), dy * 0.5, dy), gt(a, b), 0.0);
  }
  template <class V>
  static V grad_b(const V& a, const V& b, const V&, const V& dy) {
    return mask_fill(where(eq(a, b), dy * 0.5, dy), lt(a, b), 0.0);
  }
};
struct BitAnd : BinaryRow<kInt, kInt> {
  static constexpr const char* name = "bitwise_and";
  template <class T>
  EMBER_SCALAR_INLINE T operator()(T a, T b) const {
    return static_cast<T>(a & b);
  }
};
struct BitOr : BinaryRow<kInt, kInt> {
  static constexpr const char* name = "bitwise_or";
  template <class T>
  EMBER_SCALAR_INLINE T operator()(T a, T b) const {
    return static_cast<T>(a | b);
  }
};
struct BitXor : BinaryRow<kInt, kInt> {
  static constexpr const char* name = "bitwise_xor";
  template <class T>
  EMBER_SCALAR_INLINE T operator()(T a, T b) const {
    return static_cast<T>(a ^ b);
  }
};
/// a << b (0 for a count < 0 or >= the bit width).
struct ShiftLeft : BinaryRow<kInt, kInt> {
  static constexpr const char* name = "bitwise_left_shift";
  template <class T>
  EMBER_SCALAR_INLINE T operator()(T a, T b) const {
    using U = tr::make_unsigned<T>;
    if (b < 0 || b >= static_cast<T>(sizeof(T) * 8)) return T{0};
    return static_cast<T>(static_cast<U>(a) << b);
  }
};
/// a >> b, arithmetic (a count < 0 or >= the bit width gives 0, or -1 for negative a).
struct ShiftRight : BinaryRow<kInt, kInt> {
  static constexpr const char* name = "bitwise_right_shift";
  template <class T>
  EMBER_SCALAR_INLINE T operator()(T a, T b) const {
    if (b < 0 || b >= static_cast<T>(sizeof(T) * 8)) return static_cast<T>(a < 0 ? -1 : 0);
    return static_cast<T>(a >> b);
  }
};
/// Logical AND / OR / XOR of Bool tensors.
struct And : BinaryRow<kBool, 0> {
  static constexpr const char* name = "bool_and";
  template <class T>
  EMBER_SCALAR_INLINE T operator()(T a, T b) const {
    return static_cast<T>(a & b);
  }
};
struct Or : BinaryRow<kBool, 0> {
  static constexpr const char* name = "bool_or";
  template <class T>
  EMBER_SCALAR_INLINE T operator()(T a, T b) const {
    return static_cast<T>(a | b);
  }
};
struct Xor : BinaryRow<kBool, 0> {
  static constexpr const char* name = "bool_xor";
  template <class T>
  EMBER_SCALAR_INLINE T operator()(T a, T b) const {
    return static_cast<T>(a ^ b);
  }
};

// ==== comparisons (-> Bool; no gradient) =======================================================

struct Equal : CompareRow<kFloat | kInt | kBool, kFloat | kInt> {
  static constexpr const char* name = "equal";
  template <class T>
  EMBER_SCALAR_INLINE bool operator()(T a, T b) const {
    return a == b;
  }
};
struct NotEqual : CompareRow<kFloat | kInt | kBool, kFloat | kInt> {
  static constexpr const char* name = "not_equal";
  template <class T>
  EMBER_SCALAR_INLINE bool operator()(T a, T b) const {
    return a != b;
  }
};
struct Greater : CompareRow<kFloat | kInt, kFloat | kInt> {
  static constexpr const char* name = "greater";
  template <class T>
  EMBER_SCALAR_INLINE bool operator()(T a, T b) const {
    return a > b;
  }
};
struct GreaterEqual : CompareRow<kFloat | kInt, kFloat | kInt> {
  static constexpr const char* name = "greater_equal";
  template <class T>
  EMBER_SCALAR_INLINE bool operator()(T a, T b) const {
    return a >= b;
  }
};
struct Lower : CompareRow<kFloat | kInt, kFloat | kInt> {
  static constexpr const char* name = "lower";
  template <class T>
  EMBER_SCALAR_INLINE bool operator()(T a, T b) const {
    return a < b;
  }
};
struct LowerEqual : CompareRow<kFloat | kInt, kFloat | kInt> {
  static constexpr const char* name = "lower_equal";
  template <class T>
  EMBER_SCALAR_INLINE bool operator()(T a, T b) const {
    return a <= b;
  }
};

// ==== predicates (Float -> Bool) ================================================================

struct IsNan : PredicateRow {
  static constexpr const char* name = "is_nan";
  template <class T>
  EMBER_SCALAR_INLINE bool operator()(T a) const {
    return a != a;
  }
};
struct IsInf : PredicateRow {
  static constexpr const char* name = "is_inf";
  template <class T>
  EMBER_SCALAR_INLINE bool operator()(T a) const {
    return sm::fabs(a) == scalar::infinity<T>();
  }
};
struct IsFinite : PredicateRow {
  static constexpr const char* name = "is_finite";
  template <class T>
  EMBER_SCALAR_INLINE bool operator()(T a) const {
    return sm::fabs(a) < scalar::infinity<T>();
  }
};

// ==== added with the op-description redesign =================================================

/// e^x - 1, accurate near 0 (torch.expm1; f32: expm1_f32, <= 4 ulp); d/dx = e^x = y + 1.
struct Expm1 : UnaryRow<kFloat, kSaveOut> {
  static constexpr const char* name = "expm1";
  template <class T>
  EMBER_SCALAR_INLINE T operator()(T a) const {
    if constexpr (tr::is_same<T, float>) {
      // With u = exp(x), (u - 1) * x / ln(u) cancels the rounding error of u (Kahan); x itself
      // where u rounds to 1, -1 where u underflows, inf where it overflows. Branch-free.
      const float u = scalar::exp_f32(a);
      const float um1 = u - 1.0f;
      float r = um1 * (a / scalar::log_f32(u));
      r = um1 == 0.0f ? a : r;
      r = um1 == -1.0f ? -1.0f : r;
      r = u == scalar::infinity<float>() ? u : r;
      return a != a ? a : r;
    } else {
      return sm::expm1(a);
    }
  }
  template <class V>
  static V grad(const V&, const V& y, const V& dy) {
    return dy * (y + 1.0);
  }
};

}  // namespace op

/// A list of types.
template <class... T>
struct TypeList {
  static constexpr unsigned size = sizeof...(T);
};

/// Every row, in a fixed order (the op's index in this list identifies it in serialised
/// descriptions and in Dispatch's tables: append new rows at the end).
using ElementwiseOps =
    TypeList<op::Neg, op::Abs, op::Sign, op::Square, op::Recip, op::Exp, op::Log, op::Log1p,
             op::Sqrt, op::Erf, op::Sin, op::Cos, op::Tan, op::Sinh, op::Cosh, op::Tanh, op::Asin,
             op::Acos, op::Atan, op::Asinh, op::Acosh, op::Atanh, op::Round, op::Floor, op::Ceil,
             op::Trunc, op::BitwiseNot, op::Not, op::Add, op::Sub, op::Mul, op::Div, op::Remainder,
             op::Fmod, op::Pow, op::Atan2, op::Hypot, op::MaxPair, op::MinPair, op::BitAnd,
             op::BitOr, op::BitXor, op::ShiftLeft, op::ShiftRight, op::And, op::Or, op::Xor,
             op::Equal, op::NotEqual, op::Greater, op::GreaterEqual, op::Lower, op::LowerEqual,
             op::IsNan, op::IsInf, op::IsFinite, op::Expm1>;

namespace detail {
template <class Op, class L>
struct IndexIn;
template <class Op, class... R>
struct IndexIn<Op, TypeList<Op, R...>> {
  static constexpr unsigned value = 0;
};
template <class Op, class H, class... R>
struct IndexIn<Op, TypeList<H, R...>> {
  static constexpr unsigned value = 1 + IndexIn<Op, TypeList<R...>>::value;
};
}  // namespace detail

/// The index of row Op in ElementwiseOps.
template <class Op>
inline constexpr unsigned op_index = detail::IndexIn<Op, ElementwiseOps>::value;

/// Whether row Op is a `F` (Unary, Binary, ...) op for kind bit `kind`.
template <class Op, Family F, unsigned kind>
inline constexpr bool is_row = Op::family == F && (Op::kinds & kind) != 0;
/// Whether row Op has a tensor-scalar form for kind bit `kind`.
template <class Op, unsigned kind>
inline constexpr bool has_scalar_form = (Op::scalar_kinds & kind) != 0;

/// The row's name for kind bit `kind` (Burn's: float_powf but int_powi).
template <class Op>
constexpr const char* name_for(unsigned kind) {
  if constexpr (requires { Op::float_name; }) {
    if (kind == kFloat) return Op::float_name;
    if (kind == kInt) return Op::int_name;
  }
  return Op::name;
}

/// Calls f.template operator()<Op>() for every row.
template <class F, class... Ops>
constexpr void for_each_row(F&& f, TypeList<Ops...>) {
  (f.template operator()<Ops>(), ...);
}
template <class F>
constexpr void for_each_row(F&& f) {
  for_each_row(f, ElementwiseOps{});
}

}  // namespace ember::ir
