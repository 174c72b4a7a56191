// Autodiff<Cpu>: the recorded pooling, interpolation and grid sampling.
#include "ember/autodiff/cpu.hpp"
#include "ember/autodiff/impl.hpp"

#define EMBER_AD_BACKEND ::ember::Cpu
EMBER_IR_POOL(EMBER_AD_INSTANTIATE, EMBER_AD_INSTANTIATE_N)
