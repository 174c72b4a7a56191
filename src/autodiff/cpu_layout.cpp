// Autodiff<Cpu>: the recorded layout and indexing functions.
#include "ember/autodiff/cpu.hpp"
#include "ember/autodiff/impl.hpp"

#define EMBER_AD_BACKEND ::ember::Cpu
EMBER_IR_LAYOUT(EMBER_AD_INSTANTIATE, EMBER_AD_INSTANTIATE_N)
