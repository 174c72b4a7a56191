// Autodiff<Cpu>: the recorded matmul and the optional linalg functions Cpu has.
#include "ember/autodiff/cpu.hpp"
#include "ember/autodiff/impl.hpp"

#define EMBER_AD_BACKEND ::ember::Cpu
EMBER_IR_LINALG(EMBER_AD_INSTANTIATE, EMBER_AD_INSTANTIATE_N)
namespace ember::autodiff {
template auto AdOps<Cpu>::float_diag(const AP&) -> AP;
template auto AdOps<Cpu>::float_cross(const AP&, const AP&, usize) -> AP;
template auto AdOps<Cpu>::float_vector_norm(const AP&, double, usize) -> AP;
template auto AdOps<Cpu>::float_cosine_similarity(const AP&, const AP&, usize, double) -> AP;
}  // namespace ember::autodiff
