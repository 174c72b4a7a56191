// CPU element-wise kernels: comparisons (-> Bool) and float predicates.
// Speculating FP selects (no-trapping-math) lets GCC if-convert and vectorise the
// branch-free element functions of ember/ir/scalar.hpp; must precede every include.
#pragma GCC optimize("no-trapping-math")
#include "elementwise_kernel.hpp"
#include "ember/cpu/ops_elementwise.hpp"

namespace ember::cpu {

template <class Op>
CpuTensor ElementwiseOps::float_compare(const CpuTensor& a, const CpuTensor& b) {
  static_assert(ir::is_row<Op, ir::Family::Compare, ir::kFloat>);
  return ew::visit_float(a.dtype, [&]<class T>() {
    return ew::binary_typed<T, std::uint8_t>(a, b, DType::Bool, Op{});
  });
}
template <class Op>
CpuTensor ElementwiseOps::int_compare(const CpuTensor& a, const CpuTensor& b) {
  static_assert(ir::is_row<Op, ir::Family::Compare, ir::kInt>);
  return ew::visit_int(a.dtype, [&]<class T>() {
    return ew::binary_typed<T, std::uint8_t>(a, b, DType::Bool, Op{});
  });
}
template <class Op>
CpuTensor ElementwiseOps::bool_compare(const CpuTensor& a, const CpuTensor& b) {
  static_assert(ir::is_row<Op, ir::Family::Compare, ir::kBool>);
  return ew::binary_typed<std::uint8_t, std::uint8_t>(a, b, DType::Bool, Op{});
}
template <class Op>
CpuTensor ElementwiseOps::float_compare_scalar(const CpuTensor& a, double s) {
  static_assert(Op::family == ir::Family::Compare && ir::has_scalar_form<Op, ir::kFloat>);
  return ew::visit_float(a.dtype, [&]<class T>() {
    using C = compute_t<T>;
    const C c = static_cast<C>(s);
    return ew::unary_typed<T, std::uint8_t>(
        a, DType::Bool, [c](C v) { return Op{}(v, c); }, false);
  });
}
/// The scalar is compared in int64 (every int dtype converts exactly to int64).
template <class Op>
CpuTensor ElementwiseOps::int_compare_scalar(const CpuTensor& a, std::int64_t s) {
  static_assert(Op::family == ir::Family::Compare && ir::has_scalar_form<Op, ir::kInt>);
  return ew::visit_int(a.dtype, [&]<class T>() {
    return ew::unary_typed<T, std::uint8_t>(
        a, DType::Bool, [s](T v) { return Op{}(static_cast<std::int64_t>(v), s); }, false);
  });
}
template <class Op>
CpuTensor ElementwiseOps::float_predicate(const CpuTensor& a) {
  static_assert(Op::family == ir::Family::Predicate);
  return ew::visit_float(a.dtype, [&]<class T>() {
    return ew::unary_typed<T, std::uint8_t>(a, DType::Bool, Op{}, false);
  });
}

// ---- instantiations for every applicable row ------------------------------------------------
namespace {
using CmpFn = CpuTensor (*)(const CpuTensor&, const CpuTensor&);
using FCmpScalarFn = CpuTensor (*)(const CpuTensor&, double);
using ICmpScalarFn = CpuTensor (*)(const CpuTensor&, std::int64_t);
using PredFn = CpuTensor (*)(const CpuTensor&);
template <class Op>
struct FloatCmpPtr {
  static constexpr CmpFn value = []() -> CmpFn {
    if constexpr (ir::is_row<Op, ir::Family::Compare, ir::kFloat>)
      return &ElementwiseOps::float_compare<Op>;
    else
      return nullptr;
  }();
};
template <class Op>
struct IntCmpPtr {
  static constexpr CmpFn value = []() -> CmpFn {
    if constexpr (ir::is_row<Op, ir::Family::Compare, ir::kInt>)
      return &ElementwiseOps::int_compare<Op>;
    else
      return nullptr;
  }();
};
template <class Op>
struct BoolCmpPtr {
  static constexpr CmpFn value = []() -> CmpFn {
    if constexpr (ir::is_row<Op, ir::Family::Compare, ir::kBool>)
      return &ElementwiseOps::bool_compare<Op>;
    else
      return nullptr;
  }();
};
template <class Op>
struct FloatCmpScalarPtr {
  static constexpr FCmpScalarFn value = []() -> FCmpScalarFn {
    if constexpr (Op::family == ir::Family::Compare && ir::has_scalar_form<Op, ir::kFloat>)
      return &ElementwiseOps::float_compare_scalar<Op>;
    else
      return nullptr;
  }();
};
template <class Op>
struct IntCmpScalarPtr {
  static constexpr ICmpScalarFn value = []() -> ICmpScalarFn {
    if constexpr (Op::family == ir::Family::Compare && ir::has_scalar_form<Op, ir::kInt>)
      return &ElementwiseOps::int_compare_scalar<Op>;
    else
      return nullptr;
  }();
};
template <class Op>
struct PredPtr {
  static constexpr PredFn value = []() -> PredFn {
    if constexpr (Op::family == ir::Family::Predicate)
      return &ElementwiseOps::float_predicate<Op>;
    else
      return nullptr;
  }();
};
}  // namespace

extern const std::array<CmpFn, ir::ElementwiseOps::size> kFloatCmpKernels;
extern const std::array<CmpFn, ir::ElementwiseOps::size> kIntCmpKernels;
extern const std::array<CmpFn, ir::ElementwiseOps::size> kBoolCmpKernels;
extern const std::array<FCmpScalarFn, ir::ElementwiseOps::size> kFloatCmpScalarKernels;
extern const std::array<ICmpScalarFn, ir::ElementwiseOps::size> kIntCmpScalarKernels;
extern const std::array<PredFn, ir::ElementwiseOps::size> kPredicateKernels;
const std::array<CmpFn, ir::ElementwiseOps::size> kFloatCmpKernels =
    ew::instantiate_rows<CmpFn, FloatCmpPtr>(ir::ElementwiseOps{});
const std::array<CmpFn, ir::ElementwiseOps::size> kIntCmpKernels =
    ew::instantiate_rows<CmpFn, IntCmpPtr>(ir::ElementwiseOps{});
const std::array<CmpFn, ir::ElementwiseOps::size> kBoolCmpKernels =
    ew::instantiate_rows<CmpFn, BoolCmpPtr>(ir::ElementwiseOps{});
const std::array<FCmpScalarFn, ir::ElementwiseOps::size> kFloatCmpScalarKernels =
    ew::instantiate_rows<FCmpScalarFn, FloatCmpScalarPtr>(ir::ElementwiseOps{});
const std::array<ICmpScalarFn, ir::ElementwiseOps::size> kIntCmpScalarKernels =
    ew::instantiate_rows<ICmpScalarFn, IntCmpScalarPtr>(ir::ElementwiseOps{});
const std::array<PredFn, ir::ElementwiseOps::size> kPredicateKernels =
    ew::instantiate_rows<PredFn, PredPtr>(ir::ElementwiseOps{});

}  // namespace ember::cpu
