// The ONNX interpreter: runs a loaded model on any Dispatch device.
//
//   auto model = ember::onnx::load_model("resnet18.onnx");
//   ember::onnx::Session session(model, {.device = ember::Device::parse("cpu")});
//   auto x = ember::DTensor<4>::random({1, 3, 224, 224});
//   auto outputs = session.run({ember::onnx::Value::from_tensor(x)});
//   ember::DTensor<2> logits = outputs[0].to_tensor<2>();
//
// Inputs are given in graph-input order (or by name); any batch size or dim the model
// declares symbolic is accepted. Initializers are uploaded to the device once, when the
// session is created; intermediate values are freed after their last use. Errors name the
// node and operator: "[onnx] node 'conv1' (Conv): ...".
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ember/onnx/model.hpp"
#include "ember/onnx/value.hpp"

namespace ember::onnx {

struct SessionOptions {
  Device device = Device{};  ///< where tensors live and ops run
  /// Check each input against the declared element type and rank / fixed dims.
  bool check_inputs = true;
};

class Session {
 public:
  /// Prepares `model` (kept by reference: it must outlive the session) on the device.
  explicit Session(const Model& model, SessionOptions options = {});
  /// A temporary model would dangle: keep the Model in a variable that outlives the session.
  Session(Model&&, SessionOptions = {}) = delete;
  ~Session();
  Session(Session&&) noexcept;
  Session& operator=(Session&&) noexcept;

  /// Runs the graph: inputs in graph-input order, outputs in graph-output order. Throws
  /// ValueError for a wrong number of inputs, DTypeError / ShapeError for an input that
  /// does not match its declaration, and the errors of the operators (naming the node).
  std::vector<Value> run(const std::vector<Value>& inputs) const;
  /// Runs with inputs by name; missing inputs throw ValueError.
  std::map<std::string, Value> run(const std::map<std::string, Value>& inputs) const;

  const Model& model() const { return *model_; }
  const Device& device() const { return options_.device; }

 private:
  struct Impl;
  const Model* model_;
  SessionOptions options_;
  std::unique_ptr<Impl> impl_;
};

/// Runs one ONNX operator on values (default domain unless `domain` is given) with the
/// given attributes and opset: the building block of the interpreter and of the code that
/// `ember onnx convert` generates. Missing optional inputs are passed as Value::none().
/// Throws UnsupportedError for an unknown operator, and the operator's own errors.
std::vector<Value> run_op(const std::string& op_type, const std::vector<Value>& inputs,
                          const std::vector<Attribute>& attributes, std::int64_t opset,
                          std::size_t num_outputs = 1, const std::string& domain = "");

/// True when the interpreter has a kernel for (domain, op_type).
bool has_op(const std::string& domain, const std::string& op_type);
/// Every (domain, op_type) with a kernel, "Conv" or "ai.onnx.ml::LabelEncoder".
std::vector<std::string> supported_ops();

}  // namespace ember::onnx
