// Explicit instantiation of Autodiff<Cpu>'s elementwise functions.
#include "ember/autodiff/cpu.hpp"
#include "ember/autodiff/impl.hpp"

namespace ember::autodiff {
template struct AdElementwiseOps<Cpu>;
}  // namespace ember::autodiff
