// Autodiff<B> (B = EMBER_AD_BACKEND, given by CMake per library): the recorded reductions, scans
// and sorts.
#include EMBER_AD_HEADER
#include "ember/autodiff/impl.hpp"

EMBER_IR_REDUCE(EMBER_AD_INSTANTIATE, EMBER_AD_INSTANTIATE_N)
