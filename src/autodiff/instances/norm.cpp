// Autodiff<B> (B = EMBER_AD_BACKEND, given by CMake per library): training batch norm with Cpu's
// fused kernels.
#include EMBER_AD_HEADER
#include "ember/autodiff/impl.hpp"

namespace ember::autodiff {
template auto AdOps<EMBER_AD_BACKEND>::float_batch_norm_train(const AP&, const OptAP&, const OptAP&,
                                                              double) -> std::pair<AP, AP>;
}  // namespace ember::autodiff
