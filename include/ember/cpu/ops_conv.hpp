// CPU backend: conv functions of the contract (see ember/backend/conv.hpp).
#pragma once

#include "ember/cpu/tensor.hpp"

namespace ember::cpu {

struct ConvOps {};

}  // namespace ember::cpu
