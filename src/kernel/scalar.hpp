// The shared scalar element functions (ember::scalar: exp_f32, erf_f32, the functors), which
// the CPU target calls directly and the CUDA generator compiles from the same text. The one
// place that names the header (CMake's EMBER_SCALAR_HEADER names it for the CUDA text).
#pragma once

#include "ember/tensor/scalar_ops.hpp"
