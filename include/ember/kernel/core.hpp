// The headers of ember::core that the kernel layer uses, included from this one place (the
// op-layer redesign moves them; only these lines change then).
#pragma once

#include "ember/tensor/dtype.hpp"  // DType, f16, bf16
#include "ember/tensor/error.hpp"  // Error, DeviceError, UnsupportedError, ..., detail::fail
