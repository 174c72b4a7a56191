// Autodiff<Fusion<Cpu>>: automatic differentiation over the CPU backend with fusion, so
// forward and backward element-wise chains both fuse. Its ops are compiled once into the
// ember_autodiff_fusion_cpu library (src/autodiff/instances/*.cpp; link
// ember::autodiff_fusion_cpu).
#pragma once

#include "ember/autodiff/autodiff.hpp"
#include "ember/fusion/cpu.hpp"

namespace ember {

static_assert(Backend<Autodiff<Fusion<Cpu>>>, "Autodiff<Fusion<Cpu>> must satisfy Backend");
static_assert(AutodiffBackend<Autodiff<Fusion<Cpu>>>,
              "Autodiff<Fusion<Cpu>> must satisfy AutodiffBackend");

}  // namespace ember
