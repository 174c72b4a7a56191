// The headers of ember::core that the kernel layer uses, included from this one place.
#pragma once

#include "ember/core/dtype.hpp"  // DType, f16, bf16
#include "ember/core/error.hpp"  // Error, DeviceError, UnsupportedError, ..., detail::fail
