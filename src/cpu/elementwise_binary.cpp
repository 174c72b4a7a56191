// CPU element-wise kernels: binary float/int/bool ops with broadcasting.
// Speculating FP selects (no-trapping-math) lets GCC if-convert and vectorise the
// branch-free element functions of scalar_ops.hpp; must precede every include.
#pragma GCC optimize("no-trapping-math")
#include "elementwise_kernel.hpp"
#include "ember/cpu/ops_elementwise.hpp"

namespace ember::cpu {

namespace {

template <class Op>
CpuTensor float_binary(CpuTensor a, CpuTensor b) {
  const DType dt = a.dtype;
  return ew::visit_float(
      dt, [&]<class T>() { return ew::binary_typed<T, T>(std::move(a), std::move(b), dt, Op{}); });
}

template <class Op>
CpuTensor int_binary(CpuTensor a, CpuTensor b) {
  const DType dt = a.dtype;
  return ew::visit_int(
      dt, [&]<class T>() { return ew::binary_typed<T, T>(std::move(a), std::move(b), dt, Op{}); });
}

template <class F>
CpuTensor bool_binary(CpuTensor a, CpuTensor b, F f) {
  return ew::binary_typed<std::uint8_t, std::uint8_t>(std::move(a), std::move(b), DType::Bool, f);
}

}  // namespace

#define EMBER_DEF_FB(name, Op)                                           \
  CpuTensor ElementwiseOps::float_##name(CpuTensor lhs, CpuTensor rhs) { \
    return float_binary<scalar::Op>(std::move(lhs), std::move(rhs));     \
  }
#define EMBER_DEF_IB(name, Op)                                         \
  CpuTensor ElementwiseOps::int_##name(CpuTensor lhs, CpuTensor rhs) { \
    return int_binary<scalar::Op>(std::move(lhs), std::move(rhs));     \
  }
EMBER_EW_FLOAT_BINARY(EMBER_DEF_FB)
EMBER_EW_INT_BINARY(EMBER_DEF_IB)
EMBER_DEF_IB(max_pair, MaxPair)
EMBER_DEF_IB(min_pair, MinPair)
#undef EMBER_DEF_FB
#undef EMBER_DEF_IB

CpuTensor ElementwiseOps::bool_and(CpuTensor lhs, CpuTensor rhs) {
  return bool_binary(std::move(lhs), std::move(rhs), [](std::uint8_t x, std::uint8_t y) {
    return static_cast<std::uint8_t>(x & y);
  });
}
CpuTensor ElementwiseOps::bool_or(CpuTensor lhs, CpuTensor rhs) {
  return bool_binary(std::move(lhs), std::move(rhs), [](std::uint8_t x, std::uint8_t y) {
    return static_cast<std::uint8_t>(x | y);
  });
}
CpuTensor ElementwiseOps::bool_xor(CpuTensor lhs, CpuTensor rhs) {
  return bool_binary(std::move(lhs), std::move(rhs), [](std::uint8_t x, std::uint8_t y) {
    return static_cast<std::uint8_t>(x ^ y);
  });
}
CpuTensor ElementwiseOps::bool_equal(CpuTensor lhs, CpuTensor rhs) {
  return bool_binary(std::move(lhs), std::move(rhs), [](std::uint8_t x, std::uint8_t y) {
    return static_cast<std::uint8_t>(x == y);
  });
}
CpuTensor ElementwiseOps::bool_not_equal(CpuTensor lhs, CpuTensor rhs) {
  return bool_binary(std::move(lhs), std::move(rhs), [](std::uint8_t x, std::uint8_t y) {
    return static_cast<std::uint8_t>(x != y);
  });
}

}  // namespace ember::cpu
