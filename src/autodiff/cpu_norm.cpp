// Explicit instantiation of Autodiff<Cpu>'s fused normalisation functions.
#include "ember/autodiff/cpu.hpp"
#include "ember/autodiff/impl.hpp"

namespace ember::autodiff {
template struct AdNormOps<Cpu>;
}  // namespace ember::autodiff
