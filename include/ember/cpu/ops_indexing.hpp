// CPU backend: indexing functions of the contract (see ember/backend/indexing.hpp).
#pragma once

#include "ember/cpu/tensor.hpp"

namespace ember::cpu {

struct IndexingOps {};

}  // namespace ember::cpu
