// Backend contract: element-wise functions, generic over the rows of the element-wise table
// (ember/ir/elementwise.hpp). A backend implements each family once, as a template over the
// row; Burn's per-op names are the front end's and the documentation's spelling:
//
//   float_unary<Op>(F) -> F                 Burn's float_exp, float_neg, ... (Op: Unary, kFloat)
//   int_unary<Op>(I) -> I                   int_neg, int_abs, int_bitwise_not, ...
//   bool_unary<Op>(Bo) -> Bo                bool_not
//   float_binary<Op>(F, F) -> F             float_add, float_powf, float_max_pair, ...
//   int_binary<Op>(I, I) -> I               int_add, int_powi, int_bitwise_and, ...
//   bool_binary<Op>(Bo, Bo) -> Bo           bool_and, bool_or, bool_xor
//   float_binary_scalar<Op>(F, double) -> F float_add_scalar, ...   (Op::scalar_kinds)
//   int_binary_scalar<Op>(I, int64) -> I    int_add_scalar, ...
//   float_compare<Op>(const F&, const F&) -> Bo      float_equal, float_greater, ...
//   int_compare<Op>(const I&, const I&) -> Bo        int_equal, ...
//   bool_compare<Op>(const Bo&, const Bo&) -> Bo     bool_equal, bool_not_equal
//   float_compare_scalar<Op>(const F&, double) -> Bo float_equal_elem, ...
//   int_compare_scalar<Op>(const I&, int64) -> Bo    int_equal_elem, ...
//   float_predicate<Op>(const F&) -> Bo              float_is_nan, is_inf, is_finite
//   float_clamp(F, double min, double max) -> F, int_clamp(I, int64, int64) -> I
//       min(max(x, min), max); NaN stays NaN (torch.clamp). clamp_min / clamp_max are
//       clamp with the other bound at +-inf (or the int64 limit).
//
// Binary functions take two primitives of the SAME dtype and rank whose shapes are
// broadcast-compatible (the front end checks this with ir::infer_broadcast and promotes
// dtypes first); the result has the broadcast shape (ir::infer_* in ember/ir/infer.hpp).
// Arguments are passed by value so a backend may write the result into an operand's buffer
// when it owns it alone. Integer division is floor division and remainder takes the
// divisor's sign (PyTorch); a zero divisor inside a tensor gives 0 (never a trap).
#pragma once

#include <concepts>
#include <cstdint>

#include "ember/backend/core.hpp"
#include "ember/ir/elementwise.hpp"

namespace ember {

namespace backend_detail {

template <class B, class Op>
constexpr bool has_elementwise_row() {
  using F = typename B::FloatTensor;
  using I = typename B::IntTensor;
  using Bo = typename B::BoolTensor;
  bool ok = true;
  constexpr unsigned kF = ir::kFloat, kI = ir::kInt, kB = ir::kBool;
  if constexpr (ir::is_row<Op, ir::Family::Unary, kF>) ok = ok && requires(F f) {
      { B::template float_unary<Op>(f) } -> std::same_as<F>;
    };
  if constexpr (ir::is_row<Op, ir::Family::Unary, kI>) ok = ok && requires(I i) {
      { B::template int_unary<Op>(i) } -> std::same_as<I>;
    };
  if constexpr (ir::is_row<Op, ir::Family::Unary, kB>) ok = ok && requires(Bo b) {
      { B::template bool_unary<Op>(b) } -> std::same_as<Bo>;
    };
  if constexpr (ir::is_row<Op, ir::Family::Binary, kF>) ok = ok && requires(F f) {
      { B::template float_binary<Op>(f, f) } -> std::same_as<F>;
    };
  if constexpr (ir::is_row<Op, ir::Family::Binary, kI>) ok = ok && requires(I i) {
      { B::template int_binary<Op>(i, i) } -> std::same_as<I>;
    };
  if constexpr (ir::is_row<Op, ir::Family::Binary, kB>) ok = ok && requires(Bo b) {
      { B::template bool_binary<Op>(b, b) } -> std::same_as<Bo>;
    };
  if constexpr (Op::family == ir::Family::Binary && ir::has_scalar_form<Op, kF>)
    ok = ok && requires(F f) {
      { B::template float_binary_scalar<Op>(f, 1.0) } -> std::same_as<F>;
    };
  if constexpr (Op::family == ir::Family::Binary && ir::has_scalar_form<Op, kI>)
    ok = ok && requires(I i) {
      { B::template int_binary_scalar<Op>(i, std::int64_t{1}) } -> std::same_as<I>;
    };
  if constexpr (ir::is_row<Op, ir::Family::Compare, kF>) ok = ok && requires(F f) {
      { B::template float_compare<Op>(f, f) } -> std::same_as<Bo>;
    };
  if constexpr (ir::is_row<Op, ir::Family::Compare, kI>) ok = ok && requires(I i) {
      { B::template int_compare<Op>(i, i) } -> std::same_as<Bo>;
    };
  if constexpr (ir::is_row<Op, ir::Family::Compare, kB>) ok = ok && requires(Bo b) {
      { B::template bool_compare<Op>(b, b) } -> std::same_as<Bo>;
    };
  if constexpr (Op::family == ir::Family::Compare && ir::has_scalar_form<Op, kF>)
    ok = ok && requires(F f) {
      { B::template float_compare_scalar<Op>(f, 1.0) } -> std::same_as<Bo>;
    };
  if constexpr (Op::family == ir::Family::Compare && ir::has_scalar_form<Op, kI>)
    ok = ok && requires(I i) {
      { B::template int_compare_scalar<Op>(i, std::int64_t{1}) } -> std::same_as<Bo>;
    };
  if constexpr (Op::family == ir::Family::Predicate) ok = ok && requires(F f) {
      { B::template float_predicate<Op>(f) } -> std::same_as<Bo>;
    };
  return ok;
}

template <class B, class... Ops>
constexpr bool has_elementwise_rows(ir::TypeList<Ops...>) {
  return (has_elementwise_row<B, Ops>() && ...);
}

}  // namespace backend_detail

/// Every row of ir::ElementwiseOps for every kind it exists for, plus clamp.
template <class B>
concept ElementwiseBackend = CoreBackend<B> &&
    backend_detail::has_elementwise_rows<B>(ir::ElementwiseOps{}) &&
    requires(typename B::FloatTensor f, typename B::IntTensor i, double s, std::int64_t n) {
  { B::float_clamp(f, s, s) } -> std::same_as<typename B::FloatTensor>;
  { B::int_clamp(i, n, n) } -> std::same_as<typename B::IntTensor>;
};

}  // namespace ember
