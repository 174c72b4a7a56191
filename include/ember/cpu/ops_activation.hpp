// CPU backend: activation functions of the contract (see ember/backend/activation.hpp).
#pragma once

#include "ember/cpu/tensor.hpp"

namespace ember::cpu {

struct ActivationOps {};

}  // namespace ember::cpu
