// CPU element-wise kernels: comparisons (-> Bool) and float classification.
// Speculating FP selects (no-trapping-math) lets GCC if-convert and vectorise the
// branch-free element functions of scalar_ops.hpp; must precede every include.
#pragma GCC optimize("no-trapping-math")
#include "elementwise_kernel.hpp"
#include "ember/cpu/ops_elementwise.hpp"

namespace ember::cpu {

namespace {

template <class Op>
CpuTensor float_cmp(const CpuTensor& a, const CpuTensor& b) {
  return ew::visit_float(a.dtype, [&]<class T>() {
    return ew::binary_typed<T, std::uint8_t>(a, b, DType::Bool, Op{});
  });
}
template <class Op>
CpuTensor float_cmp_elem(const CpuTensor& a, double s) {
  return ew::visit_float(a.dtype, [&]<class T>() {
    using C = compute_t<T>;
    const C c = static_cast<C>(s);
    return ew::unary_typed<T, std::uint8_t>(
        a, DType::Bool, [c](C v) { return Op{}(v, c); }, false);
  });
}
template <class Op>
CpuTensor int_cmp(const CpuTensor& a, const CpuTensor& b) {
  return ew::visit_int(a.dtype, [&]<class T>() {
    return ew::binary_typed<T, std::uint8_t>(a, b, DType::Bool, Op{});
  });
}
/// Compares in int64 when the scalar does not fit T exactly... kept simple: the scalar
/// is compared in the wider of T and int64 (every T here converts exactly to int64).
template <class Op>
CpuTensor int_cmp_elem(const CpuTensor& a, std::int64_t s) {
  return ew::visit_int(a.dtype, [&]<class T>() {
    return ew::unary_typed<T, std::uint8_t>(
        a, DType::Bool, [s](T v) { return Op{}(static_cast<std::int64_t>(v), s); }, false);
  });
}
template <class Op>
CpuTensor float_class(const CpuTensor& a) {
  return ew::visit_float(a.dtype, [&]<class T>() {
    return ew::unary_typed<T, std::uint8_t>(a, DType::Bool, Op{}, false);
  });
}

}  // namespace

#define EMBER_DEF_CMP(name, Op)                                                         \
  CpuTensor ElementwiseOps::float_##name(const CpuTensor& lhs, const CpuTensor& rhs) {  \
    return float_cmp<scalar::Op>(lhs, rhs);                                             \
  }                                                                                     \
  CpuTensor ElementwiseOps::float_##name##_elem(const CpuTensor& lhs, double rhs) {     \
    return float_cmp_elem<scalar::Op>(lhs, rhs);                                        \
  }                                                                                     \
  CpuTensor ElementwiseOps::int_##name(const CpuTensor& lhs, const CpuTensor& rhs) {    \
    return int_cmp<scalar::Op>(lhs, rhs);                                               \
  }                                                                                     \
  CpuTensor ElementwiseOps::int_##name##_elem(const CpuTensor& lhs, std::int64_t rhs) { \
    return int_cmp_elem<scalar::Op>(lhs, rhs);                                          \
  }
EMBER_EW_COMPARE(EMBER_DEF_CMP)
#undef EMBER_DEF_CMP

CpuTensor ElementwiseOps::float_is_nan(const CpuTensor& x) {
  return float_class<scalar::IsNan>(x);
}
CpuTensor ElementwiseOps::float_is_inf(const CpuTensor& x) {
  return float_class<scalar::IsInf>(x);
}
CpuTensor ElementwiseOps::float_is_finite(const CpuTensor& x) {
  return float_class<scalar::IsFinite>(x);
}

}  // namespace ember::cpu
