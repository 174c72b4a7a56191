// NumPy .npy files (format 1.0-3.0, little-endian, C order) as ONNX values: the input and
// output files of `ember onnx run` and the real-model test fixtures.
#pragma once

#include <string>

#include "ember/onnx/value.hpp"

namespace ember::onnx {

/// Reads a .npy file (bool, int8..int64, uint8..uint64, float16, float32, float64) as a
/// tensor on `device`. Throws IoError naming the file for a missing, truncated or
/// unsupported file (Fortran order, big-endian, object arrays).
Value read_npy(const std::string& path, const Device& device = Device{});
/// Writes a tensor as a .npy file (format 1.0). Throws IoError when the file cannot be
/// written, UnsupportedError for strings and the small float types (written as float32).
void write_npy(const std::string& path, const Value& value);

}  // namespace ember::onnx
