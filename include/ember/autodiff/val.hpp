// autodiff::Val<B>: an Autodiff<B> float tensor with arithmetic operators, the value type the
// element-wise table's gradient formulas are written with (ember/ir/elementwise.hpp:
// `dy * y`, `dy / sqrt(-square(x) + 1.0)`). Every operator records on Autodiff<B>, so rules
// are differentiable again under backward(create_graph = true). Masks (`eq`, `lt`, ...) are
// inner Bool tensors: comparisons have no gradient. Included by the op implementations only.
#pragma once

#include <utility>

#include "ember/autodiff/autodiff.hpp"

namespace ember::autodiff {

template <class B>
struct Val {
  AdTensor<B> t;
};

/// An inner Bool tensor (the result of comparing values).
template <class B>
struct Mask {
  typename B::BoolTensor m;
};

namespace val_detail {
template <class B>
using O = AdOps<B>;
template <class Op, class B>
Val<B> un(const Val<B>& x) {
  return {O<B>::template float_unary<Op>(x.t)};
}
template <class Op, class B>
Val<B> bin(const Val<B>& a, const Val<B>& b) {
  return {O<B>::template float_binary<Op>(a.t, b.t)};
}
template <class Op, class B>
Val<B> sc(const Val<B>& a, double s) {
  return {O<B>::template float_binary_scalar<Op>(a.t, s)};
}
}  // namespace val_detail

// clang-format off
template <class B> Val<B> operator-(const Val<B>& x) { return val_detail::un<ir::op::Neg>(x); }
template <class B> Val<B> operator+(const Val<B>& a, const Val<B>& b) { return val_detail::bin<ir::op::Add>(a, b); }
template <class B> Val<B> operator-(const Val<B>& a, const Val<B>& b) { return val_detail::bin<ir::op::Sub>(a, b); }
template <class B> Val<B> operator*(const Val<B>& a, const Val<B>& b) { return val_detail::bin<ir::op::Mul>(a, b); }
template <class B> Val<B> operator/(const Val<B>& a, const Val<B>& b) { return val_detail::bin<ir::op::Div>(a, b); }
template <class B> Val<B> operator+(const Val<B>& a, double s) { return val_detail::sc<ir::op::Add>(a, s); }
template <class B> Val<B> operator-(const Val<B>& a, double s) { return val_detail::sc<ir::op::Sub>(a, s); }
template <class B> Val<B> operator*(const Val<B>& a, double s) { return val_detail::sc<ir::op::Mul>(a, s); }
template <class B> Val<B> operator/(const Val<B>& a, double s) { return val_detail::sc<ir::op::Div>(a, s); }
template <class B> Val<B> operator*(double s, const Val<B>& a) { return val_detail::sc<ir::op::Mul>(a, s); }
template <class B> Val<B> square(const Val<B>& x) { return val_detail::un<ir::op::Square>(x); }
template <class B> Val<B> sqrt(const Val<B>& x) { return val_detail::un<ir::op::Sqrt>(x); }
template <class B> Val<B> exp(const Val<B>& x) { return val_detail::un<ir::op::Exp>(x); }
template <class B> Val<B> log(const Val<B>& x) { return val_detail::un<ir::op::Log>(x); }
template <class B> Val<B> sin(const Val<B>& x) { return val_detail::un<ir::op::Sin>(x); }
template <class B> Val<B> cos(const Val<B>& x) { return val_detail::un<ir::op::Cos>(x); }
template <class B> Val<B> sinh(const Val<B>& x) { return val_detail::un<ir::op::Sinh>(x); }
template <class B> Val<B> cosh(const Val<B>& x) { return val_detail::un<ir::op::Cosh>(x); }
template <class B> Val<B> floor(const Val<B>& x) { return val_detail::un<ir::op::Floor>(x); }
template <class B> Val<B> trunc(const Val<B>& x) { return val_detail::un<ir::op::Trunc>(x); }
template <class B> Val<B> sign(const Val<B>& x) { return val_detail::un<ir::op::Sign>(x); }
template <class B> Val<B> pow(const Val<B>& a, const Val<B>& b) { return val_detail::bin<ir::op::Pow>(a, b); }
template <class B> Val<B> pow(const Val<B>& a, double s) { return val_detail::sc<ir::op::Pow>(a, s); }
// clang-format on

/// A constant of x's shape, dtype and device filled with 0.
template <class B>
Val<B> zeros_like(const Val<B>& x) {
  return {AdTensor<B>{B::float_full(B::float_shape(x.t.inner), 0.0, B::float_device(x.t.inner),
                                    B::float_dtype(x.t.inner)),
                      nullptr, x.t.checkpointing}};
}

// Comparisons (no gradient): masks of inner Bool tensors.
// clang-format off
template <class B> Mask<B> eq(const Val<B>& a, const Val<B>& b) { return {B::template float_compare<ir::op::Equal>(a.t.inner, b.t.inner)}; }
template <class B> Mask<B> lt(const Val<B>& a, const Val<B>& b) { return {B::template float_compare<ir::op::Lower>(a.t.inner, b.t.inner)}; }
template <class B> Mask<B> gt(const Val<B>& a, const Val<B>& b) { return {B::template float_compare<ir::op::Greater>(a.t.inner, b.t.inner)}; }
template <class B> Mask<B> eq(const Val<B>& a, double s) { return {B::template float_compare_scalar<ir::op::Equal>(a.t.inner, s)}; }
template <class B> Mask<B> ge(const Val<B>& a, double s) { return {B::template float_compare_scalar<ir::op::GreaterEqual>(a.t.inner, s)}; }
template <class B> Mask<B> operator&(const Mask<B>& a, const Mask<B>& b) { return {B::template bool_binary<ir::op::And>(a.m, b.m)}; }
// clang-format on

/// x with `value` where `mask` holds (torch.masked_fill).
template <class B>
Val<B> mask_fill(const Val<B>& x, const Mask<B>& mask, double value) {
  return {AdOps<B>::float_mask_fill(x.t, mask.m, value)};
}
/// mask_fill with a scalar condition (the tensor-scalar form of a rule): all or nothing.
template <class B>
Val<B> mask_fill(const Val<B>& x, bool all, double value) {
  if (!all) return x;
  return value == 0.0 ? zeros_like(x) : zeros_like(x) + value;
}
/// `a` where `mask` holds, `b` elsewhere (torch.where).
template <class B>
Val<B> where(const Mask<B>& mask, const Val<B>& a, const Val<B>& b) {
  return {AdOps<B>::float_mask_where(b.t, mask.m, a.t)};
}

}  // namespace ember::autodiff
