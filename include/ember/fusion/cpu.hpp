// Fusion<Cpu>: the CPU backend with fused element-wise chains (ember/fusion/fusion.hpp; link
// ember::fusion). Blocks run through Cpu::float_fused_elementwise (src/cpu/fused.cpp).
#pragma once

#include "ember/backend/backend.hpp"
#include "ember/cpu/cpu.hpp"
#include "ember/fusion/fusion.hpp"

namespace ember {

static_assert(Backend<Fusion<Cpu>>, "Fusion<Cpu> must satisfy the Backend concept");
static_assert(fusion::FusedBackend<Cpu>, "Cpu runs fused blocks");

}  // namespace ember
