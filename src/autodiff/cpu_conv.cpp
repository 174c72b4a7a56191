// Autodiff<Cpu>: the recorded convolutions, deform_conv2d, unfold4d and fold4d.
#include "ember/autodiff/cpu.hpp"
#include "ember/autodiff/impl.hpp"

#define EMBER_AD_BACKEND ::ember::Cpu
EMBER_IR_CONV(EMBER_AD_INSTANTIATE, EMBER_AD_INSTANTIATE_N)
