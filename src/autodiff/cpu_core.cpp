// Explicit instantiation of Autodiff<Cpu>'s core functions.
#include "ember/autodiff/cpu.hpp"
#include "ember/autodiff/impl.hpp"

namespace ember::autodiff {
template struct AdCoreOps<Cpu>;
}  // namespace ember::autodiff
