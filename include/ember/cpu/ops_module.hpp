// CPU backend: module functions of the contract (see ember/backend/module.hpp).
#pragma once

#include "ember/cpu/tensor.hpp"

namespace ember::cpu {

struct ModuleOps {};

}  // namespace ember::cpu
