// CPU element-wise kernels: unary float/int/bool rows, tensor-scalar forms and clamps.
// Speculating FP selects (no-trapping-math) lets GCC if-convert and vectorise the
// branch-free element functions of ember/ir/scalar.hpp; must precede every include.
#pragma GCC optimize("no-trapping-math")
#include <cstdlib>
#include <limits>

#include "elementwise_kernel.hpp"
#include "ember/cpu/ops_elementwise.hpp"

namespace ember::cpu {

namespace ew {

int simd_level() {
  return static_cast<int>(cpu_isa());
}

}  // namespace ew

template <class Op>
CpuTensor ElementwiseOps::float_unary(CpuTensor x) {
  static_assert(ir::is_row<Op, ir::Family::Unary, ir::kFloat>);
  const DType dt = x.dtype;
  return ew::visit_float(dt,
                         [&]<class T>() { return ew::unary_typed<T, T>(std::move(x), dt, Op{}); });
}

template <class Op>
CpuTensor ElementwiseOps::int_unary(CpuTensor x) {
  static_assert(ir::is_row<Op, ir::Family::Unary, ir::kInt>);
  const DType dt = x.dtype;
  return ew::visit_int(dt,
                       [&]<class T>() { return ew::unary_typed<T, T>(std::move(x), dt, Op{}); });
}

template <class Op>
CpuTensor ElementwiseOps::bool_unary(CpuTensor x) {
  static_assert(ir::is_row<Op, ir::Family::Unary, ir::kBool>);
  return ew::unary_typed<std::uint8_t, std::uint8_t>(std::move(x), DType::Bool, Op{});
}

template <class Op>
CpuTensor ElementwiseOps::float_binary_scalar(CpuTensor x, double s) {
  static_assert(ir::has_scalar_form<Op, ir::kFloat>);
  const DType dt = x.dtype;
  return ew::visit_float(dt, [&]<class T>() {
    using C = compute_t<T>;
    const C c = static_cast<C>(s);
    return ew::unary_typed<T, T>(std::move(x), dt, [c](C v) { return Op{}(v, c); });
  });
}

template <class Op>
CpuTensor ElementwiseOps::int_binary_scalar(CpuTensor x, std::int64_t s) {
  static_assert(ir::has_scalar_form<Op, ir::kInt>);
  const DType dt = x.dtype;
  return ew::visit_int(dt, [&]<class T>() {
    const T c = static_cast<T>(s);
    return ew::unary_typed<T, T>(std::move(x), dt, [c](T v) { return Op{}(v, c); });
  });
}

CpuTensor ElementwiseOps::float_clamp(CpuTensor x, double min, double max) {
  const DType dt = x.dtype;
  return ew::visit_float(dt, [&]<class T>() {
    using C = compute_t<T>;
    const C lo = static_cast<C>(min), hi = static_cast<C>(max);
    return ew::unary_typed<T, T>(std::move(x), dt, [lo, hi](C v) {
      return ir::op::MinPair{}(ir::op::MaxPair{}(v, lo), hi);
    });
  });
}
CpuTensor ElementwiseOps::int_clamp(CpuTensor x, std::int64_t min, std::int64_t max) {
  const DType dt = x.dtype;
  return ew::visit_int(dt, [&]<class T>() {
    // Bounds outside T's range saturate (clamp_min/clamp_max pass the int64 limits).
    const auto sat = [](std::int64_t v) {
      constexpr auto tlo = static_cast<std::int64_t>(std::numeric_limits<T>::lowest());
      constexpr auto thi = static_cast<std::int64_t>(std::numeric_limits<T>::max());
      return static_cast<T>(v < tlo ? tlo : (v > thi ? thi : v));
    };
    const T lo = sat(min), hi = sat(max);
    return ew::unary_typed<T, T>(std::move(x), dt, [lo, hi](T v) {
      return ir::op::MinPair{}(ir::op::MaxPair{}(v, lo), hi);
    });
  });
}

// ---- instantiations for every applicable row ------------------------------------------------
namespace {
using UnaryFn = CpuTensor (*)(CpuTensor);
using FScalarFn = CpuTensor (*)(CpuTensor, double);
using IScalarFn = CpuTensor (*)(CpuTensor, std::int64_t);
template <class Op>
struct FloatUnaryPtr {
  static constexpr UnaryFn value = []() -> UnaryFn {
    if constexpr (ir::is_row<Op, ir::Family::Unary, ir::kFloat>)
      return &ElementwiseOps::float_unary<Op>;
    else
      return nullptr;
  }();
};
template <class Op>
struct IntUnaryPtr {
  static constexpr UnaryFn value = []() -> UnaryFn {
    if constexpr (ir::is_row<Op, ir::Family::Unary, ir::kInt>)
      return &ElementwiseOps::int_unary<Op>;
    else
      return nullptr;
  }();
};
template <class Op>
struct BoolUnaryPtr {
  static constexpr UnaryFn value = []() -> UnaryFn {
    if constexpr (ir::is_row<Op, ir::Family::Unary, ir::kBool>)
      return &ElementwiseOps::bool_unary<Op>;
    else
      return nullptr;
  }();
};
template <class Op>
struct FloatScalarPtr {
  static constexpr FScalarFn value = []() -> FScalarFn {
    if constexpr (Op::family == ir::Family::Binary && ir::has_scalar_form<Op, ir::kFloat>)
      return &ElementwiseOps::float_binary_scalar<Op>;
    else
      return nullptr;
  }();
};
template <class Op>
struct IntScalarPtr {
  static constexpr IScalarFn value = []() -> IScalarFn {
    if constexpr (Op::family == ir::Family::Binary && ir::has_scalar_form<Op, ir::kInt>)
      return &ElementwiseOps::int_binary_scalar<Op>;
    else
      return nullptr;
  }();
};
}  // namespace

extern const std::array<UnaryFn, ir::ElementwiseOps::size> kFloatUnaryKernels;
extern const std::array<UnaryFn, ir::ElementwiseOps::size> kIntUnaryKernels;
extern const std::array<UnaryFn, ir::ElementwiseOps::size> kBoolUnaryKernels;
extern const std::array<FScalarFn, ir::ElementwiseOps::size> kFloatScalarKernels;
extern const std::array<IScalarFn, ir::ElementwiseOps::size> kIntScalarKernels;
const std::array<UnaryFn, ir::ElementwiseOps::size> kFloatUnaryKernels =
    ew::instantiate_rows<UnaryFn, FloatUnaryPtr>(ir::ElementwiseOps{});
const std::array<UnaryFn, ir::ElementwiseOps::size> kIntUnaryKernels =
    ew::instantiate_rows<UnaryFn, IntUnaryPtr>(ir::ElementwiseOps{});
const std::array<UnaryFn, ir::ElementwiseOps::size> kBoolUnaryKernels =
    ew::instantiate_rows<UnaryFn, BoolUnaryPtr>(ir::ElementwiseOps{});
const std::array<FScalarFn, ir::ElementwiseOps::size> kFloatScalarKernels =
    ew::instantiate_rows<FScalarFn, FloatScalarPtr>(ir::ElementwiseOps{});
const std::array<IScalarFn, ir::ElementwiseOps::size> kIntScalarKernels =
    ew::instantiate_rows<IScalarFn, IntScalarPtr>(ir::ElementwiseOps{});

}  // namespace ember::cpu
