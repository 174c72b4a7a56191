// Autodiff<Vulkan>: the Vulkan GPU backend with automatic differentiation. Its ops are compiled
// once into the ember_autodiff_vulkan library (src/autodiff/instances/*.cpp; link
// ember::autodiff_vulkan, built beside ember::gpu when the Vulkan runtime is).
#pragma once

#include "ember/autodiff/autodiff.hpp"
#include "ember/gpu/vulkan.hpp"

namespace ember {

static_assert(Backend<Autodiff<Vulkan>>, "Autodiff<Vulkan> must satisfy the Backend concept");
static_assert(AutodiffBackend<Autodiff<Vulkan>>, "Autodiff<Vulkan> must satisfy AutodiffBackend");

}  // namespace ember
