// CPU backend: elementwise functions of the contract (see ember/backend/elementwise.hpp).
#pragma once

#include "ember/cpu/tensor.hpp"

namespace ember::cpu {

struct ElementwiseOps {};

}  // namespace ember::cpu
