// Explicit instantiation of Autodiff<Cpu>'s pool functions.
#include "ember/autodiff/cpu.hpp"
#include "ember/autodiff/impl.hpp"

namespace ember::autodiff {
template struct AdPoolOps<Cpu>;
}  // namespace ember::autodiff
