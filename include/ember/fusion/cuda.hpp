// Fusion<Cuda>: the Cuda GPU backend with fused element-wise chains (ember/fusion/fusion.hpp;
// link ember::fusion and ember::gpu). Each block runs as one generated kernel, compiled once
// per block pattern (gpu::fused_elementwise, src/gpu/fused.cpp; docs/fusion.md).
#pragma once

#include "ember/backend/backend.hpp"
#include "ember/fusion/fusion.hpp"
#include "ember/gpu/cuda.hpp"

namespace ember {

static_assert(Backend<Fusion<Cuda>>, "Fusion<Cuda> must satisfy the Backend concept");
static_assert(fusion::FusedBackend<Cuda>, "Cuda runs fused blocks");

}  // namespace ember
