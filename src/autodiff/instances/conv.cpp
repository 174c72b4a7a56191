// Autodiff<B> (B = EMBER_AD_BACKEND, given by CMake per library): the recorded convolutions,
// deform_conv2d, unfold4d and fold4d.
#include EMBER_AD_HEADER
#include "ember/autodiff/impl.hpp"

EMBER_IR_CONV(EMBER_AD_INSTANTIATE, EMBER_AD_INSTANTIATE_N)
