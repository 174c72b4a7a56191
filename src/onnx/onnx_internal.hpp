// Internals of ember::onnx shared by the loader, the interpreter and the operator kernels.
// Not installed.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ember/cpu/conv_fused.hpp"
#include "ember/onnx/model.hpp"
#include "ember/onnx/runtime.hpp"
#include "ember/onnx/value.hpp"

namespace ember::onnx::detail {

using ember::detail::concat;
using ember::detail::fail;

// ---- small float formats (types.cpp) ----------------------------------------------------
bool is_small_float(ElemType t);
int small_float_bits(ElemType t);
float small_float_decode(ElemType t, std::uint32_t code);
/// Nearest code (ties to even); e8m0_round: 0 up, 1 down, 2 nearest.
std::uint32_t small_float_encode(ElemType t, float v, bool saturate, int e8m0_round = 0);
float small_float_round(ElemType t, float v, bool saturate);

// ---- errors -----------------------------------------------------------------------------
/// Throws E with "[onnx] <node label>: <args>".
template <class E, class... Args>
[[noreturn]] void node_fail(const Node& node, Args&&... args) {
  throw E(concat("[onnx] ", node.label(), ": ", std::forward<Args>(args)...));
}
/// Throws E with "[onnx] <args>".
template <class E, class... Args>
[[noreturn]] void onnx_fail(Args&&... args) {
  throw E(concat("[onnx] ", std::forward<Args>(args)...));
}
/// Runs f; an ember::Error escaping it is rethrown as the same type with the node's label
/// in front of its message (unless it already names a node).
void with_node_context(const Node& node, const std::function<void()>& f);

// ---- host tensors -----------------------------------------------------------------------
/// Host TensorData of a numeric initializer / attribute tensor as a Value on `device`.
Value value_from_initializer(const Initializer& init, const Device& device);

// ---- kernels ------------------------------------------------------------------------------
struct OpContext;
using SubgraphRunner =
    std::function<std::vector<Value>(const Graph&, const std::vector<Value>& inputs)>;

struct OpContext {
  const Node& node;
  std::int64_t opset;
  Device device;
  std::vector<const Value*> inputs;  ///< nullptr: missing optional input
  std::vector<Value> outputs;        ///< sized to node.outputs
  /// Inputs whose last use is this node, moved out of the graph's scope by the interpreter
  /// (inputs[i] then points here): take(i) hands them to an op that may write in place.
  std::vector<Value> owned;
  SubgraphRunner run_subgraph;  ///< runs a body graph with access to outer values

  std::size_t num_inputs() const { return inputs.size(); }
  /// True when input i is given and is not an empty optional.
  bool has(std::size_t i) const {
    return i < inputs.size() && inputs[i] != nullptr && !inputs[i]->is_none();
  }
  /// Input i; throws ValueError naming the node when it is missing.
  const Value& in(std::size_t i) const;
  /// Input i as a tensor; throws when missing or not a tensor.
  const Value& tensor(std::size_t i) const;
  /// Input i as a value the op may consume: moved when the interpreter owns it (its last
  /// use), else a copy (shared buffer). Use only for an input read once.
  Value take(std::size_t i) {
    if (i < owned.size() && owned[i].kind() != Value::Kind::None) return std::move(owned[i]);
    return tensor(i);
  }
  std::size_t num_outputs() const { return node.outputs.size(); }
  bool wants(std::size_t i) const { return i < node.outputs.size() && !node.outputs[i].empty(); }
  void set(std::size_t i, Value v) {
    if (i < outputs.size()) outputs[i] = std::move(v);
  }

  const Attribute* attr(std::string_view name) const { return node.attr(name); }
  std::int64_t attr_int(std::string_view name, std::int64_t def) const;
  double attr_float(std::string_view name, double def) const;
  std::string attr_string(std::string_view name, const std::string& def) const;
  std::vector<std::int64_t> attr_ints(std::string_view name,
                                      std::vector<std::int64_t> def = {}) const;
  std::vector<double> attr_floats(std::string_view name, std::vector<double> def = {}) const;
  std::vector<std::string> attr_strings(std::string_view name) const;
  /// A required attribute (ValueError when missing).
  const Attribute& attr_required(std::string_view name) const;

  template <class E = ValueError, class... Args>
  [[noreturn]] void fail(Args&&... args) const {
    node_fail<E>(node, std::forward<Args>(args)...);
  }
};

using OpFn = void (*)(OpContext&);

struct OpRegistry {
  std::map<std::string, OpFn> ops;  ///< key: "domain::Op" ("::Op" for ai.onnx)
  void add(const std::string& op, OpFn fn, const std::string& domain = "") {
    ops[domain + "::" + op] = fn;
  }
};
/// The registry with every kernel (built on first use).
const OpRegistry& registry();
OpFn find_op(const std::string& domain, const std::string& op_type);

void register_elementwise(OpRegistry& r);
void register_activation(OpRegistry& r);
void register_shape(OpRegistry& r);
void register_indexing(OpRegistry& r);
void register_reduce(OpRegistry& r);
void register_nn(OpRegistry& r);
void register_norm(OpRegistry& r);
void register_rnn(OpRegistry& r);
void register_control(OpRegistry& r);
void register_sequence(OpRegistry& r);
void register_quant(OpRegistry& r);
void register_misc(OpRegistry& r);
void register_string(OpRegistry& r);
void register_signal(OpRegistry& r);
void register_attention(OpRegistry& r);

/// Default domain aliases: "" and "ai.onnx" are the same domain.
inline std::string canonical_domain(const std::string& d) {
  return d == "ai.onnx" ? "" : d;
}

/// What a fused Conv node computes (conv_fused).
struct ConvFusion {
  const cpu::ConvActivation* x_blocked = nullptr;  ///< x, when it is blocked (input 0 unused)
  const Value* residual = nullptr;                 ///< added before the ReLU
  const cpu::ConvActivation* residual_blocked = nullptr;  ///< the same, blocked
  bool relu = false;
  cpu::ConvWeightPack* pack = nullptr;  ///< the weight must then be a session constant
  bool keep_blocked = false;            ///< may give a blocked result in *blocked_out
  bool reuse_residual = false;          ///< the residual's last use: its buffer may be reused
  std::optional<cpu::ConvActivation>* blocked_out = nullptr;
};

/// The CPU fast path of a Conv node (ops_nn.cpp): y = relu?(Conv(x, w, b) + residual) in
/// one oneDNN primitive. Sets ctx's output 0 (or *f.blocked_out) and returns true, or
/// returns false without side effects when it does not apply (not a plain cpu device, not
/// f32, asymmetric padding, shapes, ...): the caller then runs the nodes one by one.
bool conv_fused(OpContext& ctx, const ConvFusion& f);
/// Whether the Conv fast path is on: EMBER_ONNX_FUSE=0 turns it off (to compare or bisect),
/// in the interpreter's fused nodes and in the Conv operator alike (interpreter.cpp).
bool fusion_enabled();
/// A MaxPool node on a blocked x in its layout (ops_nn.cpp): sets *out (blocked) and
/// returns true, or returns false when it does not apply (Indices wanted, dilations,
/// ceil_mode, asymmetric pads, oneDNN declines).
bool max_pool_blocked(const OpContext& ctx, const cpu::ConvActivation& x,
                      std::optional<cpu::ConvActivation>* out);
/// The plain Value of a blocked activation (ops_nn.cpp).
Value plain_value(const cpu::ConvActivation& a, const Device& device);

/// Runs one node's kernel on `inputs` (interpreter.cpp); sub-graphs see no outer values.
std::vector<Value> run_op_node(const Node& node, const std::vector<Value>& inputs,
                               std::int64_t opset, const Device& device);

/// Checks, topological sorting, type/shape inference and constant folding (graph.cpp).
void prepare_graph(Model& model, Graph& graph, const LoadOptions& options,
                   const std::vector<std::string>& outer_names);

}  // namespace ember::onnx::detail
