// Explicit instantiation of Autodiff<Cpu>'s layout functions.
#include "ember/autodiff/cpu.hpp"
#include "ember/autodiff/impl.hpp"

namespace ember::autodiff {
template struct AdLayoutOps<Cpu>;
}  // namespace ember::autodiff
