// Autodiff<Cuda>: the Cuda GPU backend with automatic differentiation. Its ops are compiled
// once into the ember_autodiff_cuda library (src/autodiff/instances/*.cpp; link
// ember::autodiff_cuda, built beside ember::gpu when the Cuda runtime is).
#pragma once

#include "ember/autodiff/autodiff.hpp"
#include "ember/gpu/cuda.hpp"

namespace ember {

static_assert(Backend<Autodiff<Cuda>>, "Autodiff<Cuda> must satisfy the Backend concept");
static_assert(AutodiffBackend<Autodiff<Cuda>>, "Autodiff<Cuda> must satisfy AutodiffBackend");

}  // namespace ember
