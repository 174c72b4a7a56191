// Autodiff<Cpu>: the CPU backend with automatic differentiation. Its ops are compiled once
// into the ember_autodiff_cpu library (src/autodiff/instances/*.cpp; link ember::autodiff_cpu).
#pragma once

#include "ember/autodiff/autodiff.hpp"
#include "ember/cpu/cpu.hpp"

namespace ember {

static_assert(Backend<Autodiff<Cpu>>, "Autodiff<Cpu> must satisfy the Backend concept");
static_assert(AutodiffBackend<Autodiff<Cpu>>, "Autodiff<Cpu> must satisfy AutodiffBackend");

}  // namespace ember
