// Autodiff<Cpu>: the recorded core functions (reshape, cast, to_device) and backward.
#include "ember/autodiff/cpu.hpp"
#include "ember/autodiff/impl.hpp"
#include "ember/autodiff/impl/core.hpp"

#define EMBER_AD_BACKEND ::ember::Cpu
EMBER_IR_CORE(EMBER_AD_INSTANTIATE, EMBER_AD_INSTANTIATE_N)
template auto ::ember::autodiff::AdOps<::ember::Cpu>::float_backward(const F&, bool)
    -> Gradients<::ember::Cpu>;
