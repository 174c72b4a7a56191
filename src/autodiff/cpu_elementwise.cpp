// Autodiff<Cpu>: the recorded element-wise functions, every float row of ir::ElementwiseOps
// (the table below makes the compiler emit them), and clamp.
#include "ember/autodiff/cpu.hpp"
#include "ember/autodiff/impl.hpp"

namespace ember::autodiff {
template auto AdOps<Cpu>::float_clamp(AP, double, double) -> AP;
extern const decltype(elementwise_instances<Cpu>(ir::ElementwiseOps{})) kCpuElementwiseInstances;
const decltype(elementwise_instances<Cpu>(ir::ElementwiseOps{})) kCpuElementwiseInstances =
    elementwise_instances<Cpu>(ir::ElementwiseOps{});
}  // namespace ember::autodiff
