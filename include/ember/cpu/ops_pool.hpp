// CPU backend: pool functions of the contract (see ember/backend/pool.hpp).
#pragma once

#include "ember/cpu/tensor.hpp"

namespace ember::cpu {

struct PoolOps {};

}  // namespace ember::cpu
