// Tensor front end: element-wise methods, mixed into Tensor<B, D, K>, and the C++ operators.
//
// Binary ops take a second tensor of the same rank and kind: size-1 dims broadcast
// (checked with broadcast_shapes; ShapeError "[op] shapes A and B are not
// broadcast-compatible ..."), and two dtypes of one kind promote as PyTorch
// (promote_types; the narrower operand is cast first). The result has the broadcast shape.
// Every unary/binary op has a `const&` and a `&&` overload: `std::move(x).exp()` and
// `x * y + z` (the temporary `x * y`) let the backend write into the operand's buffer.
//
// Semantics follow PyTorch: Int `div` is floor division and `remainder` takes the divisor's
// sign (a == div(a, b) * b + remainder(a, b)); a zero Int divisor inside a tensor gives 0,
// a scalar zero divisor throws ValueError. Float `remainder` is a - floor(a / b) * b,
// `fmod` keeps the dividend's sign. `round` is half to even. NaN propagates through
// max_pair/min_pair/clamp.
#pragma once

#include <concepts>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include "ember/core/data.hpp"
#include "ember/core/shape.hpp"
#include "ember/ir/elementwise.hpp"
#include "ember/tensor/fwd.hpp"

namespace ember::detail {

template <class K>
concept FloatKind = std::same_as<K, Float>;
template <class K>
concept IntKind = std::same_as<K, Int>;
template <class K>
concept BoolKind = std::same_as<K, Bool>;

template <class K>
using ScalarOf = std::conditional_t<std::is_same_v<K, Float>, double,
                                    std::conditional_t<std::is_same_v<K, Int>, std::int64_t, bool>>;

// One method pair (const& / &&) per op, calling the backend's generic element-wise function
// with the op's row of the element-wise table (ember/ir/elementwise.hpp).
// Unary: Float only (FLOAT) or Float and Int (NUM).
#define EMBER_EW_UNARY_FLOAT(name, Op)                                                    \
  Tensor<B, D, K> name() const& requires std::same_as<K, Float> {                         \
    return Tensor<B, D, K>(B::template float_unary<ir::op::Op>(self().into_primitive())); \
  }                                                                                       \
  Tensor<B, D, K> name() && requires std::same_as<K, Float> {                             \
    return Tensor<B, D, K>(                                                               \
        B::template float_unary<ir::op::Op>(std::move(self()).into_primitive()));         \
  }
#define EMBER_EW_UNARY_NUM(name, Op)                                                    \
  Tensor<B, D, K> name() const& requires NumericKind<K> {                               \
    return Tensor<B, D, K>(unary_prim<ir::op::Op>(self().into_primitive()));            \
  }                                                                                     \
  Tensor<B, D, K> name() && requires NumericKind<K> {                                   \
    return Tensor<B, D, K>(unary_prim<ir::op::Op>(std::move(self()).into_primitive())); \
  }
// Binary: REQ restricts the kind; Op is the row; the operands are checked and promoted first.
#define EMBER_EW_BINARY(name, REQ, Op)                                                             \
  Tensor<B, D, K> name(Tensor<B, D, K> rhs) const& requires REQ {                                  \
    auto pr = prepare(#name, self().into_primitive(), std::move(rhs).into_primitive());            \
    return Tensor<B, D, K>(binary_prim<ir::op::Op>(std::move(pr.first), std::move(pr.second)));    \
  }                                                                                                \
  Tensor<B, D, K> name(Tensor<B, D, K> rhs) && requires REQ {                                      \
    auto pr = prepare(#name, std::move(self()).into_primitive(), std::move(rhs).into_primitive()); \
    return Tensor<B, D, K>(binary_prim<ir::op::Op>(std::move(pr.first), std::move(pr.second)));    \
  }
// Scalar form: name(s) with s double for Float, int64 for Int.
#define EMBER_EW_SCALAR(name, REQ, CHECK, Op)                                               \
  Tensor<B, D, K> name(ScalarOf<K> s) const& requires REQ {                                 \
    CHECK;                                                                                  \
    return Tensor<B, D, K>(scalar_prim<ir::op::Op>(self().into_primitive(), s));            \
  }                                                                                         \
  Tensor<B, D, K> name(ScalarOf<K> s) && requires REQ {                                     \
    CHECK;                                                                                  \
    return Tensor<B, D, K>(scalar_prim<ir::op::Op>(std::move(self()).into_primitive(), s)); \
  }
#define EMBER_EW_CMP_METHOD(name, Op)                                           \
  /** Element-wise comparison -> Bool (broadcasts, promotes). */                \
  Tensor<B, D, Bool> name(const Tensor<B, D, K>& rhs) const {                   \
    auto pr = prepare(#name, self().into_primitive(), rhs.into_primitive());    \
    if constexpr (std::is_same_v<K, Bool> && !(ir::op::Op::kinds & ir::kBool))  \
      return bool_compare_##name(std::move(pr.first), std::move(pr.second));    \
    else                                                                        \
      return Tensor<B, D, Bool>(compare_prim<ir::op::Op>(pr.first, pr.second)); \
  }                                                                             \
  /** Comparison with a scalar -> Bool. */                                      \
  Tensor<B, D, Bool> name##_elem(ScalarOf<K> s) const requires NumericKind<K> { \
    if constexpr (std::is_same_v<K, Float>)                                     \
      return Tensor<B, D, Bool>(                                                \
          B::template float_compare_scalar<ir::op::Op>(self().primitive(), s)); \
    else                                                                        \
      return Tensor<B, D, Bool>(                                                \
          B::template int_compare_scalar<ir::op::Op>(self().primitive(), s));   \
  }

template <class B, std::size_t D, class K>
class ElementwiseApi {
  using Primitive = PrimitiveOf<B, K>;

 public:
  // ---- unary ------------------------------------------------------------------------------
  // Shapes: [..] -> [..]; dtype kept. Float-only ops are unavailable on Int (compile error).
  // Formulas as torch.<name>; f32 exp/log/log1p/tanh/erf are polynomial approximations
  // (<= 4 ulp, see ember/ir/scalar.hpp).
  EMBER_EW_UNARY_NUM(neg, Neg)
  EMBER_EW_UNARY_NUM(abs, Abs)
  /// -1, 0 or 1 (NaN gives 0, as torch.sign).
  EMBER_EW_UNARY_NUM(sign, Sign)
  EMBER_EW_UNARY_NUM(square, Square)
  /// 1 / x.
  EMBER_EW_UNARY_FLOAT(recip, Recip)
  EMBER_EW_UNARY_FLOAT(exp, Exp)
  EMBER_EW_UNARY_FLOAT(log, Log)
  EMBER_EW_UNARY_FLOAT(log1p, Log1p)
  EMBER_EW_UNARY_FLOAT(sqrt, Sqrt)
  EMBER_EW_UNARY_FLOAT(erf, Erf)
  EMBER_EW_UNARY_FLOAT(sin, Sin)
  EMBER_EW_UNARY_FLOAT(cos, Cos)
  EMBER_EW_UNARY_FLOAT(tan, Tan)
  EMBER_EW_UNARY_FLOAT(sinh, Sinh)
  EMBER_EW_UNARY_FLOAT(cosh, Cosh)
  EMBER_EW_UNARY_FLOAT(tanh, Tanh)
  EMBER_EW_UNARY_FLOAT(asin, Asin)
  EMBER_EW_UNARY_FLOAT(acos, Acos)
  EMBER_EW_UNARY_FLOAT(atan, Atan)
  EMBER_EW_UNARY_FLOAT(asinh, Asinh)
  EMBER_EW_UNARY_FLOAT(acosh, Acosh)
  EMBER_EW_UNARY_FLOAT(atanh, Atanh)
  /// Round half to even (torch.round).
  EMBER_EW_UNARY_FLOAT(round, Round)
  EMBER_EW_UNARY_FLOAT(floor, Floor)
  EMBER_EW_UNARY_FLOAT(ceil, Ceil)
  EMBER_EW_UNARY_FLOAT(trunc, Trunc)
  /// e^x - 1, accurate for small |x| (torch.expm1).
  EMBER_EW_UNARY_FLOAT(expm1, Expm1)

  /// Bitwise NOT of an Int tensor.
  Tensor<B, D, K> bitwise_not() const& requires std::same_as<K, Int> {
    return Tensor<B, D, K>(B::template int_unary<ir::op::BitwiseNot>(self().into_primitive()));
  }
  Tensor<B, D, K> bitwise_not() && requires std::same_as<K, Int> {
    return Tensor<B, D, K>(
        B::template int_unary<ir::op::BitwiseNot>(std::move(self()).into_primitive()));
  }
  /// Logical NOT of a Bool tensor.
  Tensor<B, D, K> bool_not() const& requires std::same_as<K, Bool> {
    return Tensor<B, D, K>(B::template bool_unary<ir::op::Not>(self().into_primitive()));
  }
  Tensor<B, D, K> bool_not() && requires std::same_as<K, Bool> {
    return Tensor<B, D, K>(B::template bool_unary<ir::op::Not>(std::move(self()).into_primitive()));
  }

  // ---- binary (broadcasting, promoting) ----------------------------------------------------
  // [a..] op [b..] -> broadcast shape; throws ShapeError when not broadcast-compatible.
  EMBER_EW_BINARY(add, NumericKind<K>, Add)
  EMBER_EW_BINARY(sub, NumericKind<K>, Sub)
  EMBER_EW_BINARY(mul, NumericKind<K>, Mul)
  /// Float: true division. Int: floor division (a zero divisor element gives 0).
  EMBER_EW_BINARY(div, NumericKind<K>, Div)
  /// Remainder with the divisor's sign (torch.remainder).
  EMBER_EW_BINARY(remainder, NumericKind<K>, Remainder)
  /// Element-wise maximum / minimum (NaN propagates, torch.maximum/minimum).
  EMBER_EW_BINARY(max_pair, NumericKind<K>, MaxPair)
  EMBER_EW_BINARY(min_pair, NumericKind<K>, MinPair)
  /// a^b (Float, torch.pow).
  EMBER_EW_BINARY(powf, FloatKind<K>, Pow)
  EMBER_EW_BINARY(atan2, FloatKind<K>, Atan2)
  EMBER_EW_BINARY(hypot, FloatKind<K>, Hypot)
  /// C fmod: remainder with the dividend's sign (torch.fmod).
  EMBER_EW_BINARY(fmod, FloatKind<K>, Fmod)
  EMBER_EW_BINARY(bitwise_and, IntKind<K>, BitAnd)
  EMBER_EW_BINARY(bitwise_or, IntKind<K>, BitOr)
  EMBER_EW_BINARY(bitwise_xor, IntKind<K>, BitXor)
  /// Shifts (a count < 0 or >= the bit width gives 0, or -1 for >> of a negative value).
  EMBER_EW_BINARY(bitwise_left_shift, IntKind<K>, ShiftLeft)
  EMBER_EW_BINARY(bitwise_right_shift, IntKind<K>, ShiftRight)
  EMBER_EW_BINARY(bool_and, BoolKind<K>, And)
  EMBER_EW_BINARY(bool_or, BoolKind<K>, Or)
  EMBER_EW_BINARY(bool_xor, BoolKind<K>, Xor)

  /// Float ^ Int tensor (exponent converted to this dtype) or Int ^ Int (integer power;
  /// a negative exponent element gives 1 / a truncated: 1, +-1 or 0).
  Tensor<B, D, K> powi(const Tensor<B, D, Int>& exponent) const& requires NumericKind<K> {
    return Tensor<B, D, K>(self()).powi_impl(exponent);
  }
  Tensor<B, D, K> powi(const Tensor<B, D, Int>& exponent) && requires NumericKind<K> {
    return std::move(self()).powi_impl(exponent);
  }

  // ---- scalar forms ----------------------------------------------------------------------
  // The scalar is double for Float, int64 for Int; computed in the tensor's compute type.
  EMBER_EW_SCALAR(add_scalar, NumericKind<K>, check_int_scalar("add_scalar", s), Add)
  EMBER_EW_SCALAR(sub_scalar, NumericKind<K>, check_int_scalar("sub_scalar", s), Sub)
  EMBER_EW_SCALAR(mul_scalar, NumericKind<K>, check_int_scalar("mul_scalar", s), Mul)
  /// Throws ValueError for an Int tensor and a zero divisor.
  EMBER_EW_SCALAR(div_scalar, NumericKind<K>, check_int_divisor("div_scalar", s), Div)
  /// Throws ValueError for an Int tensor and a zero divisor.
  EMBER_EW_SCALAR(remainder_scalar, NumericKind<K>, check_int_divisor("remainder_scalar", s),
                  Remainder)
  EMBER_EW_SCALAR(powf_scalar, FloatKind<K>, (void)0, Pow)
  EMBER_EW_SCALAR(fmod_scalar, FloatKind<K>, (void)0, Fmod)
  /// max(x, min) (torch.clamp_min): clamp with no upper bound.
  Tensor<B, D, K> clamp_min(ScalarOf<K> s) const& requires NumericKind<K> {
    check_int_scalar("clamp_min", s);
    return Tensor<B, D, K>(clamp_prim(self().into_primitive(), s, highest()));
  }
  Tensor<B, D, K> clamp_min(ScalarOf<K> s) && requires NumericKind<K> {
    check_int_scalar("clamp_min", s);
    return Tensor<B, D, K>(clamp_prim(std::move(self()).into_primitive(), s, highest()));
  }
  /// min(x, max) (torch.clamp_max): clamp with no lower bound.
  Tensor<B, D, K> clamp_max(ScalarOf<K> s) const& requires NumericKind<K> {
    check_int_scalar("clamp_max", s);
    return Tensor<B, D, K>(clamp_prim(self().into_primitive(), lowest(), s));
  }
  Tensor<B, D, K> clamp_max(ScalarOf<K> s) && requires NumericKind<K> {
    check_int_scalar("clamp_max", s);
    return Tensor<B, D, K>(clamp_prim(std::move(self()).into_primitive(), lowest(), s));
  }
  EMBER_EW_SCALAR(bitwise_and_scalar, IntKind<K>, check_int_scalar("bitwise_and_scalar", s), BitAnd)
  EMBER_EW_SCALAR(bitwise_or_scalar, IntKind<K>, check_int_scalar("bitwise_or_scalar", s), BitOr)
  EMBER_EW_SCALAR(bitwise_xor_scalar, IntKind<K>, check_int_scalar("bitwise_xor_scalar", s), BitXor)
  EMBER_EW_SCALAR(bitwise_left_shift_scalar, IntKind<K>, (void)0, ShiftLeft)
  EMBER_EW_SCALAR(bitwise_right_shift_scalar, IntKind<K>, (void)0, ShiftRight)

  /// x^n with an integer exponent. Int tensors: throws ValueError for n < 0 (as PyTorch).
  Tensor<B, D, K> powi_scalar(std::int64_t n) const& requires NumericKind<K> {
    return Tensor<B, D, K>(self()).powi_scalar_impl(n);
  }
  Tensor<B, D, K> powi_scalar(std::int64_t n) && requires NumericKind<K> {
    return std::move(self()).powi_scalar_impl(n);
  }

  /// min(max(x, min), max) (torch.clamp; when min > max every element is max).
  Tensor<B, D, K> clamp(ScalarOf<K> min, ScalarOf<K> max) const& requires NumericKind<K> {
    check_int_scalar("clamp", min);
    check_int_scalar("clamp", max);
    return Tensor<B, D, K>(clamp_prim(self().into_primitive(), min, max));
  }
  Tensor<B, D, K> clamp(ScalarOf<K> min, ScalarOf<K> max) && requires NumericKind<K> {
    check_int_scalar("clamp", min);
    check_int_scalar("clamp", max);
    return Tensor<B, D, K>(clamp_prim(std::move(self()).into_primitive(), min, max));
  }

  /// `s - x`, `s / x`, `s % x` with the scalar on the left (broadcast from a [1, .., 1]
  /// tensor of this dtype; `x` may be reused).
#define EMBER_EW_RSCALAR(name, op)                                     \
  Tensor<B, D, K> name(ScalarOf<K> s) const& requires NumericKind<K> { \
    return scalar_like(s).op(self());                                  \
  }                                                                    \
  Tensor<B, D, K> name(ScalarOf<K> s) && requires NumericKind<K> {     \
    auto lhs = scalar_like(s);                                         \
    return std::move(lhs).op(std::move(self()));                       \
  }
  EMBER_EW_RSCALAR(rsub_scalar, sub)
  EMBER_EW_RSCALAR(rdiv_scalar, div)
  EMBER_EW_RSCALAR(rremainder_scalar, remainder)
#undef EMBER_EW_RSCALAR

  // ---- comparisons -> Bool ------------------------------------------------------------------
  EMBER_EW_CMP_METHOD(equal, Equal)
  EMBER_EW_CMP_METHOD(not_equal, NotEqual)
  EMBER_EW_CMP_METHOD(greater, Greater)
  EMBER_EW_CMP_METHOD(greater_equal, GreaterEqual)
  EMBER_EW_CMP_METHOD(lower, Lower)
  EMBER_EW_CMP_METHOD(lower_equal, LowerEqual)

  Tensor<B, D, Bool> is_nan() const requires std::same_as<K, Float> {
    return Tensor<B, D, Bool>(B::template float_predicate<ir::op::IsNan>(self().primitive()));
  }
  Tensor<B, D, Bool> is_inf() const requires std::same_as<K, Float> {
    return Tensor<B, D, Bool>(B::template float_predicate<ir::op::IsInf>(self().primitive()));
  }
  Tensor<B, D, Bool> is_finite() const requires std::same_as<K, Float> {
    return Tensor<B, D, Bool>(B::template float_predicate<ir::op::IsFinite>(self().primitive()));
  }

  /// |a - b| <= atol + rtol * |b| (finite difference), or a == b; NaNs equal when
  /// `equal_nan` (torch.isclose). Broadcasts. Throws ShapeError when not broadcast-compatible
  /// and ValueError for negative or NaN rtol/atol.
  Tensor<B, D, Bool> is_close(const Tensor<B, D, K>& other, double rtol = 1e-5, double atol = 1e-8,
                              bool equal_nan = false) const requires NumericKind<K> {
    broadcast_shapes("is_close", self().shape(), other.shape());
    if (!(rtol >= 0) || !(atol >= 0))
      fail<ValueError>("is_close", "rtol and atol must be non-negative, got rtol=", rtol,
                       " atol=", atol, " for shapes ", self().shape(), " and ", other.shape());
    const auto& a = self();
    if constexpr (std::is_same_v<K, Int>) {
      return a.float_(DType::F64).is_close(other.float_(DType::F64), rtol, atol, equal_nan);
    } else {
      Tensor<B, D, Bool> res = a.equal(other);
      auto diff = a.sub(other).abs();
      auto allowed = other.abs().mul_scalar(rtol).add_scalar(atol);
      res = std::move(res).bool_or(diff.is_finite().bool_and(diff.lower_equal(allowed)));
      if (equal_nan) res = std::move(res).bool_or(a.is_nan().bool_and(other.is_nan()));
      return res;
    }
  }
  /// True when every element is_close (torch.allclose).
  bool all_close(const Tensor<B, D, K>& other, double rtol = 1e-5, double atol = 1e-8,
                 bool equal_nan = false) const requires NumericKind<K> {
    if (!(rtol >= 0) || !(atol >= 0))
      fail<ValueError>("all_close", "rtol and atol must be non-negative, got rtol=", rtol,
                       " atol=", atol, " for shapes ", self().shape(), " and ", other.shape());
    broadcast_shapes("all_close", self().shape(), other.shape());
    const TensorData d = is_close(other, rtol, atol, equal_nan).into_data();
    for (auto byte : d.bytes())
      if (byte == 0) return false;
    return true;
  }

 protected:
  const Tensor<B, D, K>& self() const {
    return static_cast<const Tensor<B, D, K>&>(*this);
  }
  Tensor<B, D, K>& self() {
    return static_cast<Tensor<B, D, K>&>(*this);
  }

 private:
  static Shape prim_shape(const Primitive& p) {
    if constexpr (std::is_same_v<K, Float>)
      return B::float_shape(p);
    else if constexpr (std::is_same_v<K, Int>)
      return B::int_shape(p);
    else
      return B::bool_shape(p);
  }
  static DType prim_dtype(const Primitive& p) {
    if constexpr (std::is_same_v<K, Float>)
      return B::float_dtype(p);
    else if constexpr (std::is_same_v<K, Int>)
      return B::int_dtype(p);
    else
      return B::bool_dtype(p);
  }
  /// Checks broadcast compatibility and casts the narrower operand to the promoted dtype.
  static std::pair<Primitive, Primitive> prepare(const char* op, Primitive a, Primitive b) {
    broadcast_shapes(op, prim_shape(a), prim_shape(b));
    const DType da = prim_dtype(a), db = prim_dtype(b);
    if constexpr (!std::is_same_v<K, Bool>) {
      if (da != db) {
        const DType d = promote_types(da, db);
        if constexpr (std::is_same_v<K, Float>) {
          if (da != d) a = B::float_cast(std::move(a), d);
          if (db != d) b = B::float_cast(std::move(b), d);
        } else {
          if (da != d) a = B::int_cast(std::move(a), d);
          if (db != d) b = B::int_cast(std::move(b), d);
        }
      }
    }
    return {std::move(a), std::move(b)};
  }
  void check_int_divisor(const char* op, ScalarOf<K> s) const {
    check_int_scalar(op, s);
    if constexpr (std::is_same_v<K, Int>) {
      if (s == 0)
        fail<ValueError>(op, "integer division by zero (tensor of shape ", self().shape(), ")");
    }
  }
  /// Int tensors: the scalar must be representable in the tensor's dtype (as PyTorch's
  /// "value cannot be converted to type int8_t without overflow"); throws ValueError.
  void check_int_scalar(const char* op, ScalarOf<K> s) const {
    if constexpr (std::is_same_v<K, Int>) {
      const DType dt = self().dtype();
      std::int64_t lo = std::numeric_limits<std::int64_t>::min();
      std::int64_t hi = std::numeric_limits<std::int64_t>::max();
      switch (dt) {
        case DType::I32:
          lo = std::numeric_limits<std::int32_t>::min();
          hi = std::numeric_limits<std::int32_t>::max();
          break;
        case DType::I16:
          lo = std::numeric_limits<std::int16_t>::min();
          hi = std::numeric_limits<std::int16_t>::max();
          break;
        case DType::I8:
          lo = -128;
          hi = 127;
          break;
        case DType::U8:
          lo = 0;
          hi = 255;
          break;
        default:
          break;
      }
      if (s < lo || s > hi)
        fail<ValueError>(op, "scalar ", s, " is out of range for dtype ", dt, " [", lo, ", ", hi,
                         "] (tensor of shape ", self().shape(), ")");
    }
  }
  Tensor<B, D, K> scalar_like(ScalarOf<K> s) const {
    Shape ones(std::vector<std::int64_t>(D, 1));
    return Tensor<B, D, K>::full(ones, static_cast<double>(s), self().device(), self().dtype());
  }
  Tensor<B, D, K> powi_impl(const Tensor<B, D, Int>& e) && requires NumericKind<K> {
    if constexpr (std::is_same_v<K, Float>) {
      return std::move(self()).powf(e.float_(self().dtype()));
    } else {
      auto pr = prepare("powi", std::move(self()).into_primitive(), e.into_primitive());
      return Tensor<B, D, K>(
          B::template int_binary<ir::op::Pow>(std::move(pr.first), std::move(pr.second)));
    }
  }
  Tensor<B, D, K> powi_scalar_impl(std::int64_t n) && requires NumericKind<K> {
    if constexpr (std::is_same_v<K, Float>) {
      return Tensor<B, D, K>(B::template float_binary_scalar<ir::op::Pow>(
          std::move(self()).into_primitive(), static_cast<double>(n)));
    } else {
      if (n < 0)
        fail<ValueError>("powi_scalar", "integers to negative integer powers are not allowed (", n,
                         ", tensor of shape ", self().shape(), ")");
      return Tensor<B, D, K>(
          B::template int_binary_scalar<ir::op::Pow>(std::move(self()).into_primitive(), n));
    }
  }
  static Primitive clamp_prim(Primitive p, ScalarOf<K> min,
                              ScalarOf<K> max) requires NumericKind<K> {
    if constexpr (std::is_same_v<K, Float>)
      return B::float_clamp(std::move(p), min, max);
    else
      return B::int_clamp(std::move(p), min, max);
  }
  /// The unbounded ends of clamp_min / clamp_max.
  static ScalarOf<K> highest() requires NumericKind<K> {
    if constexpr (std::is_same_v<K, Float>)
      return std::numeric_limits<double>::infinity();
    else
      return std::numeric_limits<std::int64_t>::max();
  }
  static ScalarOf<K> lowest() requires NumericKind<K> {
    if constexpr (std::is_same_v<K, Float>)
      return -std::numeric_limits<double>::infinity();
    else
      return std::numeric_limits<std::int64_t>::min();
  }
  // Generic calls of the backend's element-wise functions for kind K.
  template <class Op>
  static Primitive unary_prim(Primitive p) {
    if constexpr (std::is_same_v<K, Float>)
      return B::template float_unary<Op>(std::move(p));
    else if constexpr (std::is_same_v<K, Int>)
      return B::template int_unary<Op>(std::move(p));
    else
      return B::template bool_unary<Op>(std::move(p));
  }
  template <class Op>
  static Primitive binary_prim(Primitive a, Primitive b) {
    if constexpr (std::is_same_v<K, Float>)
      return B::template float_binary<Op>(std::move(a), std::move(b));
    else if constexpr (std::is_same_v<K, Int>)
      return B::template int_binary<Op>(std::move(a), std::move(b));
    else
      return B::template bool_binary<Op>(std::move(a), std::move(b));
  }
  template <class Op>
  static Primitive scalar_prim(Primitive a, ScalarOf<K> s) requires NumericKind<K> {
    if constexpr (std::is_same_v<K, Float>)
      return B::template float_binary_scalar<Op>(std::move(a), s);
    else
      return B::template int_binary_scalar<Op>(std::move(a), s);
  }
  template <class Op>
  static PrimitiveOf<B, Bool> compare_prim(const Primitive& a, const Primitive& b) {
    if constexpr (std::is_same_v<K, Float>)
      return B::template float_compare<Op>(a, b);
    else if constexpr (std::is_same_v<K, Int>)
      return B::template int_compare<Op>(a, b);
    else
      return B::template bool_compare<Op>(a, b);
  }
#define EMBER_EW_BOOL_CMP(name, fn)                                                              \
  static Tensor<B, D, Bool> bool_compare_##name(Primitive a, Primitive b) requires BoolKind<K> { \
    return Tensor<B, D, Bool>(fn);                                                               \
  }
  // Bool ordering as integers 0 < 1.
  EMBER_EW_BOOL_CMP(greater, B::template bool_binary<ir::op::And>(std::move(a), not_(std::move(b))))
  EMBER_EW_BOOL_CMP(greater_equal,
                    B::template bool_binary<ir::op::Or>(std::move(a), not_(std::move(b))))
  EMBER_EW_BOOL_CMP(lower, B::template bool_binary<ir::op::And>(not_(std::move(a)), std::move(b)))
  EMBER_EW_BOOL_CMP(lower_equal,
                    B::template bool_binary<ir::op::Or>(not_(std::move(a)), std::move(b)))
  static Primitive not_(Primitive p) requires BoolKind<K> {
    return B::template bool_unary<ir::op::Not>(std::move(p));
  }
#undef EMBER_EW_BOOL_CMP
};

#undef EMBER_EW_UNARY_FLOAT
#undef EMBER_EW_UNARY_NUM
#undef EMBER_EW_BINARY
#undef EMBER_EW_SCALAR
#undef EMBER_EW_CMP_METHOD

}  // namespace ember::detail

#include "ember/tensor/ops/operators.hpp"
