// GLSL helper functions of the generated shaders (see glsl_lib.cpp).
#pragma once

#include <string>

namespace ember::kernel::detail {

/// The helper functions; `int64` / `float64`: also those on i64 / f64 (which need the
/// device's 64-bit types).
std::string glsl_library(bool int64, bool float64);

}  // namespace ember::kernel::detail
