// Explicit instantiation of Autodiff<Cpu>'s reduce functions.
#include "ember/autodiff/cpu.hpp"
#include "ember/autodiff/impl.hpp"

namespace ember::autodiff {
template struct AdReduceOps<Cpu>;
}  // namespace ember::autodiff
