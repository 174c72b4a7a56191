// Dispatch: element-wise functions (ember/backend/elementwise.hpp). For each registered stack
// and each family, a table of the stack's instantiations indexed by the row's position in
// ir::ElementwiseOps, built from that list: a new row needs no edit here.
#include <array>
#include <string>

#include "stacks.hpp"

namespace ember {

namespace {

using dispatch::ew::Form;
constexpr unsigned kRows = ir::ElementwiseOps::size;

constexpr unsigned kind_of(Form f) {
  switch (f) {
    case Form::IntUnary:
    case Form::IntBinary:
    case Form::IntScalar:
    case Form::IntCompare:
    case Form::IntCompareScalar:
      return ir::kInt;
    case Form::BoolUnary:
    case Form::BoolBinary:
    case Form::BoolCompare:
      return ir::kBool;
    default:
      return ir::kFloat;
  }
}

/// Whether row Op exists in form f.
template <class Op>
constexpr bool has_form(Form f) {
  const unsigned k = kind_of(f);
  switch (f) {
    case Form::FloatUnary:
    case Form::IntUnary:
    case Form::BoolUnary:
      return Op::family == ir::Family::Unary && (Op::kinds & k);
    case Form::FloatBinary:
    case Form::IntBinary:
    case Form::BoolBinary:
      return Op::family == ir::Family::Binary && (Op::kinds & k);
    case Form::FloatScalar:
    case Form::IntScalar:
      return Op::family == ir::Family::Binary && (Op::scalar_kinds & k);
    case Form::FloatCompare:
    case Form::IntCompare:
    case Form::BoolCompare:
      return Op::family == ir::Family::Compare && (Op::kinds & k);
    case Form::FloatCompareScalar:
    case Form::IntCompareScalar:
      return Op::family == ir::Family::Compare && (Op::scalar_kinds & k);
    case Form::FloatPredicate:
      return Op::family == ir::Family::Predicate;
  }
  return false;
}

/// The backend function's name for error messages ("float_add", "int_powi", "float_equal_elem").
template <class Op>
std::string name_of(Form f) {
  const unsigned k = kind_of(f);
  std::string base = ir::name_for<Op>(k);
  if (base.rfind("bool_", 0) == 0) return base;  // bool_not, bool_and, ...
  const char* prefix = k == ir::kFloat ? "float_" : k == ir::kInt ? "int_" : "bool_";
  std::string out = prefix + base;
  if (f == Form::FloatScalar || f == Form::IntScalar) out += "_scalar";
  if (f == Form::FloatCompareScalar || f == Form::IntCompareScalar) out += "_elem";
  return out;
}
template <class... Ops>
std::array<std::string, kRows> names_of(Form f, ir::TypeList<Ops...>) {
  return {name_of<Ops>(f)...};
}
const char* op_name(Form f, unsigned row) {
  static const std::array<std::array<std::string, kRows>, 14> names = [] {
    std::array<std::array<std::string, kRows>, 14> n;
    for (unsigned i = 0; i < 14; ++i) n[i] = names_of(static_cast<Form>(i), ir::ElementwiseOps{});
    return n;
  }();
  return names[static_cast<unsigned>(f)][row].c_str();
}

// ---- per-stack tables ---------------------------------------------------------------------

template <class B, Form F, class Op>
auto unary_entry() {
  constexpr unsigned k = kind_of(F);
  using K =
      std::conditional_t<k == ir::kFloat, Float, std::conditional_t<k == ir::kInt, Int, Bool>>;
  using P = PrimitiveOf<B, K>;
  using Fn = P (*)(P);
  if constexpr (has_form<Op>(F)) {
    if constexpr (k == ir::kFloat)
      return Fn{[](P p) { return B::template float_unary<Op>(std::move(p)); }};
    else if constexpr (k == ir::kInt)
      return Fn{[](P p) { return B::template int_unary<Op>(std::move(p)); }};
    else
      return Fn{[](P p) { return B::template bool_unary<Op>(std::move(p)); }};
  } else {
    return Fn{nullptr};
  }
}
template <class B, Form F, class... Ops>
const auto& unary_table(ir::TypeList<Ops...>) {
  static const std::array table{unary_entry<B, F, Ops>()...};
  return table;
}

template <class B, Form F, class Op>
auto binary_entry() {
  constexpr unsigned k = kind_of(F);
  using K =
      std::conditional_t<k == ir::kFloat, Float, std::conditional_t<k == ir::kInt, Int, Bool>>;
  using P = PrimitiveOf<B, K>;
  using Fn = P (*)(P, P);
  if constexpr (has_form<Op>(F)) {
    if constexpr (k == ir::kFloat)
      return Fn{[](P a, P b) { return B::template float_binary<Op>(std::move(a), std::move(b)); }};
    else if constexpr (k == ir::kInt)
      return Fn{[](P a, P b) { return B::template int_binary<Op>(std::move(a), std::move(b)); }};
    else
      return Fn{[](P a, P b) { return B::template bool_binary<Op>(std::move(a), std::move(b)); }};
  } else {
    return Fn{nullptr};
  }
}
template <class B, Form F, class... Ops>
const auto& binary_table(ir::TypeList<Ops...>) {
  static const std::array table{binary_entry<B, F, Ops>()...};
  return table;
}

template <class B, Form F, class Op>
auto scalar_entry() {
  if constexpr (F == Form::FloatScalar) {
    using P = typename B::FloatTensor;
    using Fn = P (*)(P, double);
    if constexpr (has_form<Op>(F))
      return Fn{[](P a, double s) { return B::template float_binary_scalar<Op>(std::move(a), s); }};
    else
      return Fn{nullptr};
  } else {
    using P = typename B::IntTensor;
    using Fn = P (*)(P, std::int64_t);
    if constexpr (has_form<Op>(F))
      return Fn{
          [](P a, std::int64_t s) { return B::template int_binary_scalar<Op>(std::move(a), s); }};
    else
      return Fn{nullptr};
  }
}
template <class B, Form F, class... Ops>
const auto& scalar_table(ir::TypeList<Ops...>) {
  static const std::array table{scalar_entry<B, F, Ops>()...};
  return table;
}

template <class B, Form F, class Op>
auto compare_entry() {
  constexpr unsigned k = kind_of(F);
  using K =
      std::conditional_t<k == ir::kFloat, Float, std::conditional_t<k == ir::kInt, Int, Bool>>;
  using P = PrimitiveOf<B, K>;
  using Bo = typename B::BoolTensor;
  using Fn = Bo (*)(const P&, const P&);
  if constexpr (has_form<Op>(F)) {
    if constexpr (k == ir::kFloat)
      return Fn{[](const P& a, const P& b) { return B::template float_compare<Op>(a, b); }};
    else if constexpr (k == ir::kInt)
      return Fn{[](const P& a, const P& b) { return B::template int_compare<Op>(a, b); }};
    else
      return Fn{[](const P& a, const P& b) { return B::template bool_compare<Op>(a, b); }};
  } else {
    return Fn{nullptr};
  }
}
template <class B, Form F, class... Ops>
const auto& compare_table(ir::TypeList<Ops...>) {
  static const std::array table{compare_entry<B, F, Ops>()...};
  return table;
}

template <class B, Form F, class Op>
auto compare_scalar_entry() {
  using Bo = typename B::BoolTensor;
  if constexpr (F == Form::FloatCompareScalar) {
    using P = typename B::FloatTensor;
    using Fn = Bo (*)(const P&, double);
    if constexpr (has_form<Op>(F))
      return Fn{[](const P& a, double s) { return B::template float_compare_scalar<Op>(a, s); }};
    else
      return Fn{nullptr};
  } else {
    using P = typename B::IntTensor;
    using Fn = Bo (*)(const P&, std::int64_t);
    if constexpr (has_form<Op>(F))
      return Fn{
          [](const P& a, std::int64_t s) { return B::template int_compare_scalar<Op>(a, s); }};
    else
      return Fn{nullptr};
  }
}
template <class B, Form F, class... Ops>
const auto& compare_scalar_table(ir::TypeList<Ops...>) {
  static const std::array table{compare_scalar_entry<B, F, Ops>()...};
  return table;
}

template <class B, class Op>
auto predicate_entry() {
  using P = typename B::FloatTensor;
  using Fn = typename B::BoolTensor (*)(const P&);
  if constexpr (has_form<Op>(Form::FloatPredicate))
    return Fn{[](const P& a) { return B::template float_predicate<Op>(a); }};
  else
    return Fn{nullptr};
}
template <class B, class... Ops>
const auto& predicate_table(ir::TypeList<Ops...>) {
  static const std::array table{predicate_entry<B, Ops>()...};
  return table;
}

template <class K>
constexpr Form unary_form() {
  return std::is_same_v<K, Float> ? Form::FloatUnary
         : std::is_same_v<K, Int> ? Form::IntUnary
                                  : Form::BoolUnary;
}
template <class K>
constexpr Form binary_form() {
  return std::is_same_v<K, Float> ? Form::FloatBinary
         : std::is_same_v<K, Int> ? Form::IntBinary
                                  : Form::BoolBinary;
}
template <class K>
constexpr Form compare_form() {
  return std::is_same_v<K, Float> ? Form::FloatCompare
         : std::is_same_v<K, Int> ? Form::IntCompare
                                  : Form::BoolCompare;
}

}  // namespace

template <class K>
DispatchTensor<K> Dispatch::ew_unary(Form, unsigned row, DispatchTensor<K> x) {
  constexpr Form f = unary_form<K>();
  return dispatch::forward<DispatchTensor<K>>(
      op_name(f, row),
      [row]<class B>(PrimitiveOf<B, K> p) {
        return unary_table<B, f>(ir::ElementwiseOps{})[row](std::move(p));
      },
      std::move(x));
}
template <class K>
DispatchTensor<K> Dispatch::ew_binary(Form, unsigned row, DispatchTensor<K> a,
                                      DispatchTensor<K> b) {
  constexpr Form f = binary_form<K>();
  return dispatch::forward<DispatchTensor<K>>(
      op_name(f, row),
      [row]<class B>(PrimitiveOf<B, K> x, PrimitiveOf<B, K> y) {
        return binary_table<B, f>(ir::ElementwiseOps{})[row](std::move(x), std::move(y));
      },
      std::move(a), std::move(b));
}
template <class K>
Dispatch::Bo Dispatch::ew_compare(unsigned row, const DispatchTensor<K>& a,
                                  const DispatchTensor<K>& b) {
  constexpr Form f = compare_form<K>();
  return dispatch::forward<Bo>(
      op_name(f, row),
      [row]<class B>(const PrimitiveOf<B, K>& x, const PrimitiveOf<B, K>& y) {
        return compare_table<B, f>(ir::ElementwiseOps{})[row](x, y);
      },
      a, b);
}
template Dispatch::F Dispatch::ew_unary<Float>(Form, unsigned, F);
template Dispatch::I Dispatch::ew_unary<Int>(Form, unsigned, I);
template Dispatch::Bo Dispatch::ew_unary<Bool>(Form, unsigned, Bo);
template Dispatch::F Dispatch::ew_binary<Float>(Form, unsigned, F, F);
template Dispatch::I Dispatch::ew_binary<Int>(Form, unsigned, I, I);
template Dispatch::Bo Dispatch::ew_binary<Bool>(Form, unsigned, Bo, Bo);
template Dispatch::Bo Dispatch::ew_compare<Float>(unsigned, const F&, const F&);
template Dispatch::Bo Dispatch::ew_compare<Int>(unsigned, const I&, const I&);
template Dispatch::Bo Dispatch::ew_compare<Bool>(unsigned, const Bo&, const Bo&);

Dispatch::F Dispatch::ew_scalar(unsigned row, F x, double s) {
  return dispatch::forward<F>(
      op_name(Form::FloatScalar, row),
      [row]<class B>(typename B::FloatTensor p, double v) {
        return scalar_table<B, Form::FloatScalar>(ir::ElementwiseOps{})[row](std::move(p), v);
      },
      std::move(x), s);
}
Dispatch::I Dispatch::ew_scalar(unsigned row, I x, i64 s) {
  return dispatch::forward<I>(
      op_name(Form::IntScalar, row),
      [row]<class B>(typename B::IntTensor p, i64 v) {
        return scalar_table<B, Form::IntScalar>(ir::ElementwiseOps{})[row](std::move(p), v);
      },
      std::move(x), s);
}
Dispatch::Bo Dispatch::ew_compare_scalar(unsigned row, const F& x, double s) {
  return dispatch::forward<Bo>(
      op_name(Form::FloatCompareScalar, row),
      [row]<class B>(const typename B::FloatTensor& p, double v) {
        return compare_scalar_table<B, Form::FloatCompareScalar>(ir::ElementwiseOps{})[row](p, v);
      },
      x, s);
}
Dispatch::Bo Dispatch::ew_compare_scalar(unsigned row, const I& x, i64 s) {
  return dispatch::forward<Bo>(
      op_name(Form::IntCompareScalar, row),
      [row]<class B>(const typename B::IntTensor& p, i64 v) {
        return compare_scalar_table<B, Form::IntCompareScalar>(ir::ElementwiseOps{})[row](p, v);
      },
      x, s);
}
Dispatch::Bo Dispatch::ew_predicate(unsigned row, const F& x) {
  return dispatch::forward<Bo>(
      op_name(Form::FloatPredicate, row),
      [row]<class B>(const typename B::FloatTensor& p) {
        return predicate_table<B>(ir::ElementwiseOps{})[row](p);
      },
      x);
}

Dispatch::F Dispatch::float_clamp(F x, double min, double max) {
  return dispatch::forward<F>("float_clamp", EMBER_OP(float_clamp), std::move(x), min, max);
}
Dispatch::I Dispatch::int_clamp(I x, i64 min, i64 max) {
  return dispatch::forward<I>("int_clamp", EMBER_OP(int_clamp), std::move(x), min, max);
}

}  // namespace ember
