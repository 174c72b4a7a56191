// Autodiff<B> (B = EMBER_AD_BACKEND, given by CMake per library): the recorded element-wise
// functions, every float row of ir::ElementwiseOps (the table below makes the compiler emit them),
// and clamp.
#include EMBER_AD_HEADER
#include "ember/autodiff/impl.hpp"

namespace ember::autodiff {
template auto AdOps<EMBER_AD_BACKEND>::float_clamp(AP, double, double) -> AP;
#define EMBER_AD_TABLE EMBER_PP_CAT(EMBER_PP_CAT(k, EMBER_AD_TAG), ElementwiseInstances)
extern const decltype(elementwise_instances<EMBER_AD_BACKEND>(ir::ElementwiseOps{})) EMBER_AD_TABLE;
const decltype(elementwise_instances<EMBER_AD_BACKEND>(ir::ElementwiseOps{})) EMBER_AD_TABLE =
    elementwise_instances<EMBER_AD_BACKEND>(ir::ElementwiseOps{});
}  // namespace ember::autodiff
