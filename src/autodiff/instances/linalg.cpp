// Autodiff<B> (B = EMBER_AD_BACKEND, given by CMake per library): the recorded matmul and the
// optional linalg functions Cpu has.
#include EMBER_AD_HEADER
#include "ember/autodiff/impl.hpp"

EMBER_IR_LINALG(EMBER_AD_INSTANTIATE, EMBER_AD_INSTANTIATE_N)
namespace ember::autodiff {
template auto AdOps<EMBER_AD_BACKEND>::float_diag(const AP&) -> AP;
template auto AdOps<EMBER_AD_BACKEND>::float_cross(const AP&, const AP&, usize) -> AP;
template auto AdOps<EMBER_AD_BACKEND>::float_vector_norm(const AP&, double, usize) -> AP;
template auto AdOps<EMBER_AD_BACKEND>::float_cosine_similarity(const AP&, const AP&, usize, double)
    -> AP;
}  // namespace ember::autodiff
