// CPU backend: layout functions of the contract (see ember/backend/layout.hpp).
#pragma once

#include "ember/cpu/tensor.hpp"

namespace ember::cpu {

struct LayoutOps {};

}  // namespace ember::cpu
