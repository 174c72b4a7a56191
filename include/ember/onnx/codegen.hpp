// Code generation (Burn's burn-onnx model): an ONNX model becomes a C++ header with an
// EMBER_MODULE struct (one Param or Buffer per initializer, named after it) whose
// forward() calls the ONNX operators in graph order, plus a safetensors file of the
// weights that `model.load(path)` reads.
//
//   ember onnx convert resnet18.onnx --out gen/        # gen/resnet18.hpp, gen/resnet18.safetensors
//
//   #include "resnet18.hpp"
//   auto m = model::Resnet18<>::init(ember::Device::cpu());
//   m.load("gen/resnet18.safetensors");
//   ember::onnx::Value y = m.forward(ember::onnx::Value::from_tensor(x));
//
// The generated forward() runs the same operator kernels as the interpreter
// (ember::onnx::gen::op), so both give the same results.
#pragma once

#include <string>

#include "ember/onnx/model.hpp"

namespace ember::onnx {

struct ConvertOptions {
  std::string name;                  ///< struct name (default: from the file name, CamelCase)
  std::string name_space = "model";  ///< C++ namespace of the generated code
};

struct ConvertResult {
  std::string header;   ///< path of the generated .hpp
  std::string weights;  ///< path of the .safetensors
  std::string struct_name;
};

/// Writes `<out_dir>/<file stem>.hpp` and `<file stem>.safetensors`. Throws
/// UnsupportedError naming the node for operators with sub-graphs (If, Loop, Scan), IoError
/// when the files cannot be written.
ConvertResult convert(const Model& model, const std::string& out_dir,
                      const ConvertOptions& options = {});

/// The header text alone (for tests and `convert`).
std::string generate_header(const Model& model, const std::string& struct_name,
                            const std::string& name_space, const std::string& weights_file);

}  // namespace ember::onnx
