// Autodiff<Fusion<Cuda>>: automatic differentiation over the Cuda GPU backend with fusion, so
// forward and backward element-wise chains both fuse. Its ops are compiled once into the
// ember_autodiff_fusion_cuda library (src/autodiff/instances/*.cpp; link
// ember::autodiff_fusion_cuda).
#pragma once

#include "ember/autodiff/autodiff.hpp"
#include "ember/fusion/cuda.hpp"

namespace ember {

static_assert(Backend<Autodiff<Fusion<Cuda>>>, "Autodiff<Fusion<Cuda>> must satisfy Backend");
static_assert(AutodiffBackend<Autodiff<Fusion<Cuda>>>,
              "Autodiff<Fusion<Cuda>> must satisfy AutodiffBackend");

}  // namespace ember
