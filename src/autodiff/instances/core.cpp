// Autodiff<B> (B = EMBER_AD_BACKEND, given by CMake per library): the recorded core functions
// (reshape, cast, to_device) and backward.
#include EMBER_AD_HEADER
#include "ember/autodiff/impl/core.hpp"

#include "ember/autodiff/impl.hpp"

EMBER_IR_CORE(EMBER_AD_INSTANTIATE, EMBER_AD_INSTANTIATE_N)
template auto ::ember::autodiff::AdOps<EMBER_AD_BACKEND>::float_backward(const F&, bool)
    -> Gradients<EMBER_AD_BACKEND>;
