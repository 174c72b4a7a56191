// CPU backend: reduce functions of the contract (see ember/backend/reduce.hpp).
#pragma once

#include "ember/cpu/tensor.hpp"

namespace ember::cpu {

struct ReduceOps {};

}  // namespace ember::cpu
