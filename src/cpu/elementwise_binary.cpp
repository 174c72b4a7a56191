// CPU element-wise kernels: binary float/int/bool rows with broadcasting.
// Speculating FP selects (no-trapping-math) lets GCC if-convert and vectorise the
// branch-free element functions of ember/ir/scalar.hpp; must precede every include.
#pragma GCC optimize("no-trapping-math")
#include "elementwise_kernel.hpp"
#include "ember/cpu/ops_elementwise.hpp"

namespace ember::cpu {

template <class Op>
CpuTensor ElementwiseOps::float_binary(CpuTensor a, CpuTensor b) {
  static_assert(ir::is_row<Op, ir::Family::Binary, ir::kFloat>);
  const DType dt = a.dtype;
  return ew::visit_float(
      dt, [&]<class T>() { return ew::binary_typed<T, T>(std::move(a), std::move(b), dt, Op{}); });
}

template <class Op>
CpuTensor ElementwiseOps::int_binary(CpuTensor a, CpuTensor b) {
  static_assert(ir::is_row<Op, ir::Family::Binary, ir::kInt>);
  const DType dt = a.dtype;
  return ew::visit_int(
      dt, [&]<class T>() { return ew::binary_typed<T, T>(std::move(a), std::move(b), dt, Op{}); });
}

template <class Op>
CpuTensor ElementwiseOps::bool_binary(CpuTensor a, CpuTensor b) {
  static_assert(ir::is_row<Op, ir::Family::Binary, ir::kBool>);
  return ew::binary_typed<std::uint8_t, std::uint8_t>(std::move(a), std::move(b), DType::Bool,
                                                      Op{});
}

// ---- instantiations for every applicable row ------------------------------------------------
namespace {
using BinaryFn = CpuTensor (*)(CpuTensor, CpuTensor);
template <class Op>
struct FloatBinaryPtr {
  static constexpr BinaryFn value = []() -> BinaryFn {
    if constexpr (ir::is_row<Op, ir::Family::Binary, ir::kFloat>)
      return &ElementwiseOps::float_binary<Op>;
    else
      return nullptr;
  }();
};
template <class Op>
struct IntBinaryPtr {
  static constexpr BinaryFn value = []() -> BinaryFn {
    if constexpr (ir::is_row<Op, ir::Family::Binary, ir::kInt>)
      return &ElementwiseOps::int_binary<Op>;
    else
      return nullptr;
  }();
};
template <class Op>
struct BoolBinaryPtr {
  static constexpr BinaryFn value = []() -> BinaryFn {
    if constexpr (ir::is_row<Op, ir::Family::Binary, ir::kBool>)
      return &ElementwiseOps::bool_binary<Op>;
    else
      return nullptr;
  }();
};
}  // namespace

extern const std::array<BinaryFn, ir::ElementwiseOps::size> kFloatBinaryKernels;
extern const std::array<BinaryFn, ir::ElementwiseOps::size> kIntBinaryKernels;
extern const std::array<BinaryFn, ir::ElementwiseOps::size> kBoolBinaryKernels;
const std::array<BinaryFn, ir::ElementwiseOps::size> kFloatBinaryKernels =
    ew::instantiate_rows<BinaryFn, FloatBinaryPtr>(ir::ElementwiseOps{});
const std::array<BinaryFn, ir::ElementwiseOps::size> kIntBinaryKernels =
    ew::instantiate_rows<BinaryFn, IntBinaryPtr>(ir::ElementwiseOps{});
const std::array<BinaryFn, ir::ElementwiseOps::size> kBoolBinaryKernels =
    ew::instantiate_rows<BinaryFn, BoolBinaryPtr>(ir::ElementwiseOps{});

}  // namespace ember::cpu
