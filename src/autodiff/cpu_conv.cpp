// Explicit instantiation of Autodiff<Cpu>'s conv functions.
#include "ember/autodiff/cpu.hpp"
#include "ember/autodiff/impl.hpp"

namespace ember::autodiff {
template struct AdConvOps<Cpu>;
}  // namespace ember::autodiff
