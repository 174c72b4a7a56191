// Helpers used by the code that `ember onnx convert` generates (see codegen.hpp): attribute
// builders, parameter-to-value conversion and the operator call.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "ember/module/module.hpp"
#include "ember/onnx/runtime.hpp"
#include "ember/onnx/value.hpp"

namespace ember::onnx::gen {

inline Attribute i(std::string name, std::int64_t v) {
  Attribute a;
  a.name = std::move(name);
  a.kind = Attribute::Kind::Int;
  a.i = v;
  return a;
}
inline Attribute f(std::string name, double v) {
  Attribute a;
  a.name = std::move(name);
  a.kind = Attribute::Kind::Float;
  a.f = v;
  return a;
}
inline Attribute s(std::string name, std::string v) {
  Attribute a;
  a.name = std::move(name);
  a.kind = Attribute::Kind::String;
  a.s = std::move(v);
  return a;
}
inline Attribute ints(std::string name, std::vector<std::int64_t> v) {
  Attribute a;
  a.name = std::move(name);
  a.kind = Attribute::Kind::Ints;
  a.ints = std::move(v);
  return a;
}
inline Attribute floats(std::string name, std::vector<double> v) {
  Attribute a;
  a.name = std::move(name);
  a.kind = Attribute::Kind::Floats;
  a.floats = std::move(v);
  return a;
}
inline Attribute strings(std::string name, std::vector<std::string> v) {
  Attribute a;
  a.name = std::move(name);
  a.kind = Attribute::Kind::Strings;
  a.strings = std::move(v);
  return a;
}
/// A tensor attribute from values (converted to the type's storage dtype).
inline Attribute tensor(std::string name, ElemType type, std::vector<std::int64_t> shape,
                        std::vector<double> values) {
  Attribute a;
  a.name = std::move(name);
  a.kind = Attribute::Kind::Tensor;
  a.t_type = type;
  a.t_shape = shape;
  a.t = std::make_shared<const TensorData>(
      TensorData(std::move(values), Shape(std::move(shape))).convert(storage_dtype(type)));
  return a;
}

/// A Param / Buffer field as a value of ONNX type `type` and logical `shape`.
template <class P>
Value w(const P& field, ElemType type, std::vector<std::int64_t> shape) {
  Value v = Value::from_tensor(field.val(), type);
  if (v.shape() == shape) return v;
  return run_op("Reshape", {v, Value::int64s(shape, v.device())}, {}, 21)[0];
}

/// A constant int64 tensor.
inline Value c_i64(const std::vector<std::int64_t>& values, std::vector<std::int64_t> shape,
                   const Device& device) {
  const Value v = Value::int64s(values, device);
  if (shape.size() == 1) return v;
  return run_op("Reshape", {v, Value::int64s(shape, device)}, {}, 21)[0];
}

/// Runs operator `op` (all outputs).
inline std::vector<Value> op(const char* op, std::vector<Value> inputs,
                             std::vector<Attribute> attributes, std::int64_t opset,
                             std::size_t num_outputs, const char* domain = "") {
  return run_op(op, inputs, attributes, opset, num_outputs, domain);
}
/// Runs operator `op` and returns its first output.
inline Value op1(const char* op, std::vector<Value> inputs, std::vector<Attribute> attributes,
                 std::int64_t opset, const char* domain = "") {
  return run_op(op, inputs, attributes, opset, 1, domain)[0];
}

}  // namespace ember::onnx::gen
