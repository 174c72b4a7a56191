// Explicit instantiation of Autodiff<Cpu>'s indexing functions.
#include "ember/autodiff/cpu.hpp"
#include "ember/autodiff/impl.hpp"

namespace ember::autodiff {
template struct AdIndexingOps<Cpu>;
}  // namespace ember::autodiff
