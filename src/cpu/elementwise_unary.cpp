// CPU element-wise kernels: unary float/int/bool ops, scalar forms and clamps.
// Speculating FP selects (no-trapping-math) lets GCC if-convert and vectorise the
// branch-free element functions of scalar_ops.hpp; must precede every include.
#pragma GCC optimize("no-trapping-math")
#include <cstdlib>

#include "elementwise_kernel.hpp"
#include "ember/cpu/ops_elementwise.hpp"

namespace ember::cpu {

namespace ew {

int simd_level() {
  return static_cast<int>(cpu_isa());
}

}  // namespace ew

namespace {

template <class Op>
CpuTensor float_unary(CpuTensor x) {
  const DType dt = x.dtype;
  return ew::visit_float(dt,
                         [&]<class T>() { return ew::unary_typed<T, T>(std::move(x), dt, Op{}); });
}

template <class Op>
CpuTensor float_scalar(CpuTensor x, double s) {
  const DType dt = x.dtype;
  return ew::visit_float(dt, [&]<class T>() {
    using C = compute_t<T>;
    const C c = static_cast<C>(s);
    return ew::unary_typed<T, T>(std::move(x), dt, [c](C v) { return Op{}(v, c); });
  });
}

template <class Op>
CpuTensor int_unary(CpuTensor x) {
  const DType dt = x.dtype;
  return ew::visit_int(dt,
                       [&]<class T>() { return ew::unary_typed<T, T>(std::move(x), dt, Op{}); });
}

template <class Op>
CpuTensor int_scalar(CpuTensor x, std::int64_t s) {
  const DType dt = x.dtype;
  return ew::visit_int(dt, [&]<class T>() {
    const T c = static_cast<T>(s);
    return ew::unary_typed<T, T>(std::move(x), dt, [c](T v) { return Op{}(v, c); });
  });
}

}  // namespace

#define EMBER_DEF_FU(name, Op)                          \
  CpuTensor ElementwiseOps::float_##name(CpuTensor x) { \
    return float_unary<scalar::Op>(std::move(x));       \
  }
#define EMBER_DEF_FS(name, Op)                                                 \
  CpuTensor ElementwiseOps::float_##name##_scalar(CpuTensor lhs, double rhs) { \
    return float_scalar<scalar::Op>(std::move(lhs), rhs);                      \
  }
#define EMBER_DEF_IU(name, Op)                        \
  CpuTensor ElementwiseOps::int_##name(CpuTensor x) { \
    return int_unary<scalar::Op>(std::move(x));       \
  }
#define EMBER_DEF_IS(name, Op)                                                     \
  CpuTensor ElementwiseOps::int_##name##_scalar(CpuTensor lhs, std::int64_t rhs) { \
    return int_scalar<scalar::Op>(std::move(lhs), rhs);                            \
  }
EMBER_EW_FLOAT_UNARY(EMBER_DEF_FU)
EMBER_EW_FLOAT_SCALAR(EMBER_DEF_FS)
EMBER_EW_INT_UNARY(EMBER_DEF_IU)
EMBER_EW_INT_BINARY(EMBER_DEF_IS)
#undef EMBER_DEF_FU
#undef EMBER_DEF_FS
#undef EMBER_DEF_IU
#undef EMBER_DEF_IS

CpuTensor ElementwiseOps::float_clamp(CpuTensor x, double min, double max) {
  const DType dt = x.dtype;
  return ew::visit_float(dt, [&]<class T>() {
    using C = compute_t<T>;
    const C lo = static_cast<C>(min), hi = static_cast<C>(max);
    return ew::unary_typed<T, T>(std::move(x), dt, [lo, hi](C v) {
      return scalar::MinPair{}(scalar::MaxPair{}(v, lo), hi);
    });
  });
}
CpuTensor ElementwiseOps::float_clamp_min(CpuTensor x, double min) {
  return float_scalar<scalar::MaxPair>(std::move(x), min);
}
CpuTensor ElementwiseOps::float_clamp_max(CpuTensor x, double max) {
  return float_scalar<scalar::MinPair>(std::move(x), max);
}
CpuTensor ElementwiseOps::int_clamp(CpuTensor x, std::int64_t min, std::int64_t max) {
  const DType dt = x.dtype;
  return ew::visit_int(dt, [&]<class T>() {
    const T lo = static_cast<T>(min), hi = static_cast<T>(max);
    return ew::unary_typed<T, T>(std::move(x), dt, [lo, hi](T v) {
      return scalar::MinPair{}(scalar::MaxPair{}(v, lo), hi);
    });
  });
}
CpuTensor ElementwiseOps::int_clamp_min(CpuTensor x, std::int64_t min) {
  return int_scalar<scalar::MaxPair>(std::move(x), min);
}
CpuTensor ElementwiseOps::int_clamp_max(CpuTensor x, std::int64_t max) {
  return int_scalar<scalar::MinPair>(std::move(x), max);
}

CpuTensor ElementwiseOps::bool_not(CpuTensor x) {
  return ew::unary_typed<std::uint8_t, std::uint8_t>(
      std::move(x), DType::Bool, [](std::uint8_t v) { return static_cast<std::uint8_t>(v == 0); });
}

}  // namespace ember::cpu
