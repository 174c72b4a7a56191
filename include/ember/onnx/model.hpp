// The graph representation of an ONNX model, independent of protobuf.
//
//   auto model = ember::onnx::load_model("resnet18.onnx");   // parse + check + infer + fold
//   for (const auto& n : model.graph.nodes) std::cout << n.op_type << "\n";
//
// load_model reads the file (and external-data files next to it), converts the protobuf
// messages into these plain structs, then checks the graph (names defined once, every
// input defined before use, no cycles: nodes are put in topological order, opset present
// and within 1..kMaxOpset, every operator known), infers element types and shapes where
// the rules allow (symbolic dims stay unknown), and folds nodes whose inputs are all
// constant (Shape of a static shape, Gather/Concat/Range/... on constants) into
// initializers. Every problem throws an ember::Error subclass whose message starts with
// "[onnx]" and names the node and its operator: IoError for unreadable/truncated files,
// ValueError for malformed graphs, ShapeError for inconsistent shapes, UnsupportedError for
// unknown operators or opsets.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ember/onnx/value.hpp"

namespace ember::onnx {

/// Newest default-domain opset this importer knows.
inline constexpr std::int64_t kMaxOpset = 28;

struct Graph;

/// A dim of a declared or inferred shape: a size (>= 0), or unknown (value -1) with an
/// optional symbolic name ("batch").
struct Dim {
  std::int64_t value = -1;
  std::string param;
  bool known() const { return value >= 0; }
};

/// Type of a graph value: a tensor (element type + optional shape), a sequence of one, or
/// an optional of one.
struct TypeInfo {
  enum class Kind { Unknown, Tensor, Sequence, Optional };
  Kind kind = Kind::Unknown;
  ElemType elem = ElemType::Undefined;
  bool has_shape = false;  ///< false: rank unknown
  std::vector<Dim> shape;
  std::shared_ptr<TypeInfo> inner;  ///< Sequence / Optional element
  /// "tensor(float)[N, 3, 224, 224]", "seq(tensor(int64))", "optional(tensor(float))".
  std::string to_string() const;
};

struct ValueInfo {
  std::string name;
  TypeInfo type;
};

/// An attribute value (AttributeProto): exactly one of the fields is meaningful.
struct Attribute {
  enum class Kind {
    Undefined,
    Float,
    Int,
    String,
    Tensor,
    Graph,
    Floats,
    Ints,
    Strings,
    Tensors,
    Graphs,
    TypeProto,
    TypeProtos
  };
  std::string name;
  Kind kind = Kind::Undefined;
  double f = 0;
  std::int64_t i = 0;
  std::string s;
  std::shared_ptr<const TensorData> t;  ///< numeric tensors (host)
  ElemType t_type = ElemType::Undefined;
  std::vector<std::int64_t> t_shape;   ///< logical shape (rank 0 allowed)
  std::vector<std::string> t_strings;  ///< string tensors
  std::shared_ptr<const Graph> g;
  std::vector<double> floats;
  std::vector<std::int64_t> ints;
  std::vector<std::string> strings;
  std::vector<std::shared_ptr<const Graph>> graphs;
  TypeInfo tp;
  /// "ints", "graph", ... (for messages).
  static const char* kind_name(Kind k);
};

struct Node {
  std::string name;     ///< may be empty in the file; load_model fills "<op_type>_<index>"
  std::string op_type;  ///< "Conv"
  std::string domain;   ///< "" for ai.onnx
  std::vector<std::string> inputs;   ///< "" marks a missing optional input
  std::vector<std::string> outputs;  ///< "" marks an unused optional output
  std::vector<Attribute> attributes;
  const Attribute* attr(std::string_view name) const;
  /// "node 'conv1' (Conv)" for messages.
  std::string label() const;
};

/// A constant tensor of the graph (an initializer, or a folded Constant node).
struct Initializer {
  std::string name;
  ElemType type = ElemType::Undefined;
  std::vector<std::int64_t> shape;
  std::shared_ptr<const TensorData> data;  ///< numeric (storage dtype, logical shape)
  std::vector<std::string> strings;        ///< string tensors
};

struct Graph {
  std::string name;
  std::vector<ValueInfo> inputs;  ///< graph inputs that are not initializers, in order
  std::vector<ValueInfo> outputs;
  std::vector<Initializer> initializers;
  std::vector<Node> nodes;  ///< topological order after load_model
  /// Declared and inferred types of intermediate values (value_info + inference).
  std::map<std::string, TypeInfo> value_types;
  const Initializer* initializer(std::string_view name) const;
};

struct OpsetImport {
  std::string domain;
  std::int64_t version = 0;
};

struct Model {
  std::int64_t ir_version = 0;
  std::string producer;
  std::vector<OpsetImport> opsets;
  Graph graph;
  std::string path;  ///< file it was read from ("" for bytes)
  /// Version of the default domain (ai.onnx); 0 when not imported.
  std::int64_t opset(std::string_view domain = "") const;
  /// Sum of the numels of the float initializers.
  std::int64_t num_params() const;
};

struct LoadOptions {
  bool fold_constants = true;  ///< evaluate constant sub-graphs at load time
  bool infer_shapes = true;    ///< infer element types and shapes of intermediate values
};

/// Reads, checks, infers and folds a model (see the file comment). External data is read
/// relative to the model's folder. Throws IoError / ValueError / ShapeError /
/// UnsupportedError with "[onnx] ..." messages.
Model load_model(const std::string& path, const LoadOptions& options = {});
/// The same from the bytes of a ModelProto; `base_dir` locates external data ("" = none).
Model parse_model(const std::string& bytes, const std::string& base_dir = "",
                  const LoadOptions& options = {});

/// Reads a serialized TensorProto (the node tests' input_N.pb) as a value on `device`.
Value read_tensor_proto(const std::string& path, const Device& device = Device{});
/// Reads a serialized TensorProto, SequenceProto or OptionalProto, chosen by `type`.
Value read_value_proto(const std::string& path, const TypeInfo& type,
                       const Device& device = Device{});

/// Element type names for messages, e.g. in TypeInfo::to_string.
std::string type_string(const TypeInfo& t);

}  // namespace ember::onnx
