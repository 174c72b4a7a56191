// Autodiff<B> (B = EMBER_AD_BACKEND, given by CMake per library): the recorded pooling,
// interpolation and grid sampling.
#include EMBER_AD_HEADER
#include "ember/autodiff/impl.hpp"

EMBER_IR_POOL(EMBER_AD_INSTANTIATE, EMBER_AD_INSTANTIATE_N)
