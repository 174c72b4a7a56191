// Explicit instantiation of Autodiff<Cpu>'s linalg functions.
#include "ember/autodiff/cpu.hpp"
#include "ember/autodiff/impl.hpp"

namespace ember::autodiff {
template struct AdLinalgOps<Cpu>;
}  // namespace ember::autodiff
