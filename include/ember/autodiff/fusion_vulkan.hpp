// Autodiff<Fusion<Vulkan>>: automatic differentiation over the Vulkan GPU backend with fusion, so
// forward and backward element-wise chains both fuse. Its ops are compiled once into the
// ember_autodiff_fusion_vulkan library (src/autodiff/instances/*.cpp; link
// ember::autodiff_fusion_vulkan).
#pragma once

#include "ember/autodiff/autodiff.hpp"
#include "ember/fusion/vulkan.hpp"

namespace ember {

static_assert(Backend<Autodiff<Fusion<Vulkan>>>, "Autodiff<Fusion<Vulkan>> must satisfy Backend");
static_assert(AutodiffBackend<Autodiff<Fusion<Vulkan>>>,
              "Autodiff<Fusion<Vulkan>> must satisfy AutodiffBackend");

}  // namespace ember
