// Autodiff<Cpu>: the recorded reductions, scans and sorts.
#include "ember/autodiff/cpu.hpp"
#include "ember/autodiff/impl.hpp"

#define EMBER_AD_BACKEND ::ember::Cpu
EMBER_IR_REDUCE(EMBER_AD_INSTANTIATE, EMBER_AD_INSTANTIATE_N)
