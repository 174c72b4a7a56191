// Autodiff<B>: the element-wise rules. Every float row of ember/ir/elementwise.hpp carries
// its gradient (`grad`, `grad_a`, `grad_b`, written with autodiff::Val); this file records
// the rows with them. Broadcasting is undone by summing each operand's gradient back to its
// shape (rules::sum_to).
#pragma once

#include <array>
#include <tuple>

#include "ember/autodiff/impl/common.hpp"
#include "ember/autodiff/val.hpp"

namespace ember::autodiff {

namespace ew_detail {
inline constexpr Saves saves_of(unsigned bits) {
  return Saves{(bits & ir::kSaveA ? 1u : 0u) | (bits & ir::kSaveB ? 2u : 0u),
               (bits & ir::kSaveOut) != 0};
}
/// The value of input i for a rule, or an empty value when the row does not read it.
template <class B>
Val<B> read_input(BackwardContext<B>& c, std::size_t i, bool saved) {
  return saved ? Val<B>{c.input(i)} : Val<B>{};
}
template <class B>
Val<B> read_output(BackwardContext<B>& c, bool saved) {
  return saved ? Val<B>{c.output()} : Val<B>{};
}
}  // namespace ew_detail

template <class B>
template <class Op>
AdTensor<B> AdOps<B>::float_unary(AP x) {
  static_assert(ir::is_row<Op, ir::Family::Unary, ir::kFloat>);
  return Recorder<B>::unary(
      Op::name, Bound::Memory, ew_detail::saves_of(Op::saves), std::move(x),
      [](typename B::FloatTensor v) { return B::template float_unary<Op>(std::move(v)); },
      [](BackwardContext<B>& c) {
        const Val<B> x = ew_detail::read_input(c, 0, Op::saves & ir::kSaveA);
        const Val<B> y = ew_detail::read_output(c, Op::saves & ir::kSaveOut);
        c.set(0, Op::grad(x, y, Val<B>{c.grad}).t);
      });
}

template <class B>
template <class Op>
AdTensor<B> AdOps<B>::float_binary_scalar(AP x, double s) {
  static_assert(Op::family == ir::Family::Binary && ir::has_scalar_form<Op, ir::kFloat>);
  constexpr unsigned saves = Op::scalar_saves;
  return Recorder<B>::unary(
      Op::name, Bound::Memory, ew_detail::saves_of(saves), std::move(x),
      [s](typename B::FloatTensor v) {
        return B::template float_binary_scalar<Op>(std::move(v), s);
      },
      [s](BackwardContext<B>& c) {
        const Val<B> a = ew_detail::read_input(c, 0, saves & ir::kSaveA);
        const Val<B> y = ew_detail::read_output(c, saves & ir::kSaveOut);
        c.set(0, Op::grad_a(a, s, y, Val<B>{c.grad}).t);
      });
}

template <class B>
template <class Op>
AdTensor<B> AdOps<B>::float_binary(AP lhs, AP rhs) {
  static_assert(ir::is_row<Op, ir::Family::Binary, ir::kFloat>);
  const Shape sa = B::float_shape(lhs.inner), sb = B::float_shape(rhs.inner);
  return Recorder<B>::binary(
      Op::name, Bound::Memory, ew_detail::saves_of(Op::saves), std::move(lhs), std::move(rhs),
      [](typename B::FloatTensor x, typename B::FloatTensor y) {
        return B::template float_binary<Op>(std::move(x), std::move(y));
      },
      [sa, sb](BackwardContext<B>& c) {
        const Val<B> a = ew_detail::read_input(c, 0, Op::saves & ir::kSaveA);
        const Val<B> b = ew_detail::read_input(c, 1, Op::saves & ir::kSaveB);
        const Val<B> y = ew_detail::read_output(c, Op::saves & ir::kSaveOut);
        const Val<B> g{c.grad};
        if (c.needs(0)) c.set(0, rules::sum_to<B>(Op::grad_a(a, b, y, g).t, sa));
        if (c.needs(1)) c.set(1, rules::sum_to<B>(Op::grad_b(a, b, y, g).t, sb));
      });
}

template <class B>
AdTensor<B> AdOps<B>::float_clamp(AP x, double lo, double hi) {
  return Recorder<B>::unary(
      "clamp", Bound::Memory, save_inputs(1u), std::move(x),
      [lo, hi](typename B::FloatTensor v) { return B::float_clamp(std::move(v), lo, hi); },
      [lo, hi](BackwardContext<B>& c) {
        const auto x = c.input(0);
        auto inside = B::template bool_binary<ir::op::And>(
            B::template float_compare_scalar<ir::op::GreaterEqual>(x.inner, lo),
            B::template float_compare_scalar<ir::op::LowerEqual>(x.inner, hi));
        c.set(0, rules::keep_where<B>(c.grad, inside));
      });
}

/// The recorded element-wise functions of Autodiff<B> for every float row. A translation unit
/// that instantiates Autodiff for a backend stores this table in a variable with external
/// linkage (src/autodiff/instances/elementwise.cpp), which makes the compiler emit every row.
template <class B, class... Ops>
constexpr auto elementwise_instances(ir::TypeList<Ops...>) {
  using AP = AdTensor<B>;
  using E = AdOps<B>;
  constexpr auto unary = []<class Op>() -> AP (*)(AP) {
    if constexpr (ir::is_row<Op, ir::Family::Unary, ir::kFloat>)
      return &E::template float_unary<Op>;
    else
      return nullptr;
  };
  constexpr auto binary = []<class Op>() -> AP (*)(AP, AP) {
    if constexpr (ir::is_row<Op, ir::Family::Binary, ir::kFloat>)
      return &E::template float_binary<Op>;
    else
      return nullptr;
  };
  constexpr auto scalar = []<class Op>() -> AP (*)(AP, double) {
    if constexpr (Op::family == ir::Family::Binary && ir::has_scalar_form<Op, ir::kFloat>)
      return &E::template float_binary_scalar<Op>;
    else
      return nullptr;
  };
  return std::tuple{std::array{unary.template operator()<Ops>()...},
                    std::array{binary.template operator()<Ops>()...},
                    std::array{scalar.template operator()<Ops>()...}};
}

}  // namespace ember::autodiff
