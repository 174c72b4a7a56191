// CPU backend: linalg functions of the contract (see ember/backend/linalg.hpp).
#pragma once

#include "ember/cpu/tensor.hpp"

namespace ember::cpu {

struct LinalgOps {};

}  // namespace ember::cpu
