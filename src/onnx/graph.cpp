// Graph checks: opsets, names, known operators, topological order (cycles), then type and
// shape inference (infer.cpp) and constant folding.
#include <algorithm>
#include <cmath>
#include <deque>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "infer.hpp"
#include "onnx_internal.hpp"

namespace ember::onnx::detail {

namespace {

/// Ops folded at load time when all their inputs are constant: shape arithmetic and cheap
/// layout/element-wise ops (whose outputs are no larger than their inputs, or checked).
bool foldable(const Node& n) {
  static const std::set<std::string> yes = {"Constant",
                                            "Shape",
                                            "Size",
                                            "Gather",
                                            "Concat",
                                            "Slice",
                                            "Unsqueeze",
                                            "Squeeze",
                                            "Reshape",
                                            "Flatten",
                                            "Cast",
                                            "CastLike",
                                            "Add",
                                            "Sub",
                                            "Mul",
                                            "Div",
                                            "Mod",
                                            "Neg",
                                            "Abs",
                                            "Floor",
                                            "Ceil",
                                            "Sqrt",
                                            "Equal",
                                            "Less",
                                            "Greater",
                                            "Not",
                                            "And",
                                            "Or",
                                            "Where",
                                            "Identity",
                                            "Transpose",
                                            "ReduceProd",
                                            "ReduceSum",
                                            "Min",
                                            "Max",
                                            "Range",
                                            "ConstantOfShape",
                                            "Expand",
                                            "Split",
                                            "Reciprocal",
                                            "Pow",
                                            "Sign"};
  return n.domain.empty() && yes.count(n.op_type) > 0;
}

/// Output size bound for folding ops whose result can be larger than their inputs.
bool small_result(const Node& n, const std::vector<Value>& in) {
  auto prod = [](const std::vector<std::int64_t>& v) {
    double p = 1;
    for (auto d : v) p *= static_cast<double>(std::max<std::int64_t>(d, 0));
    return p;
  };
  constexpr double kMax = 1 << 20;
  if (n.op_type == "ConstantOfShape" && !in.empty() && in[0].is_tensor())
    return in[0].numel() <= 8 && prod(in[0].to_int64s()) <= kMax;
  if (n.op_type == "Expand" && in.size() > 1 && in[1].is_tensor()) {
    if (in[1].numel() > 8) return false;
    std::vector<std::int64_t> s = in[1].to_int64s();
    return prod(s) * std::max<double>(1.0, static_cast<double>(in[0].numel())) <= kMax;
  }
  if (n.op_type == "Range" && in.size() == 3) {
    for (const auto& v : in)
      if (!v.is_tensor() || v.numel() != 1) return false;
    const double a = in[0].to_doubles()[0], b = in[1].to_doubles()[0], d = in[2].to_doubles()[0];
    return d != 0 && std::isfinite((b - a) / d) && (b - a) / d <= kMax;
  }
  return true;
}

void check_opsets(const Model& model, const Graph& graph) {
  const std::int64_t v = model.opset("");
  bool uses_default = false;
  std::function<void(const Graph&)> scan = [&](const Graph& g) {
    for (const auto& n : g.nodes) {
      if (n.domain.empty()) uses_default = true;
      for (const auto& a : n.attributes) {
        if (a.g) scan(*a.g);
        for (const auto& sg : a.graphs) scan(*sg);
      }
    }
  };
  scan(graph);
  if (uses_default && v == 0)
    onnx_fail<UnsupportedError>(
        "the model does not import an opset for the default domain (ai.onnx): add an "
        "opset_import entry");
  if (v < 0 || (uses_default && v < 1))
    onnx_fail<ValueError>("invalid opset version ", v, " for the default domain");
  if (v > kMaxOpset)
    onnx_fail<UnsupportedError>("opset ", v,
                                " of the default domain is newer than the newest "
                                "this importer knows (",
                                kMaxOpset, ")");
}

void check_ops(const Graph& g) {
  for (const auto& n : g.nodes) {
    if (n.op_type.empty()) node_fail<ValueError>(n, "the node has no op_type");
    if (!find_op(n.domain, n.op_type)) {
      node_fail<UnsupportedError>(n, "unknown operator '", n.op_type, "' in domain '",
                                  n.domain.empty() ? "ai.onnx" : n.domain,
                                  "' (not supported by ember::onnx)");
    }
  }
}

/// Puts nodes in topological order; throws for undefined inputs, duplicate outputs, cycles.
void sort_nodes(Graph& g, const std::vector<std::string>& outer_names) {
  std::unordered_set<std::string> defined(outer_names.begin(), outer_names.end());
  std::unordered_set<std::string> own;
  for (const auto& i : g.inputs) {
    if (i.name.empty()) onnx_fail<ValueError>("graph '", g.name, "' has an input without a name");
    if (!own.insert(i.name).second)
      onnx_fail<ValueError>("graph input '", i.name, "' is declared twice");
    defined.insert(i.name);
  }
  for (const auto& i : g.initializers) {
    own.insert(i.name);
    defined.insert(i.name);
  }
  std::unordered_map<std::string, std::size_t> producer;
  for (std::size_t k = 0; k < g.nodes.size(); ++k) {
    for (const auto& o : g.nodes[k].outputs) {
      if (o.empty()) continue;
      if (own.count(o) || producer.count(o))
        node_fail<ValueError>(g.nodes[k], "output '", o,
                              "' is already defined (by a graph input, an initializer or "
                              "another node)");
      producer[o] = k;
    }
  }
  // Names a node needs: its inputs plus the outer names its sub-graphs use.
  std::vector<std::vector<std::string>> needs(g.nodes.size());
  std::function<void(const Graph&, std::set<std::string>&, std::vector<std::string>&)> free_names =
      [&](const Graph& sg, std::set<std::string>& local, std::vector<std::string>& out) {
        std::set<std::string> loc = local;
        for (const auto& i : sg.inputs) loc.insert(i.name);
        for (const auto& i : sg.initializers) loc.insert(i.name);
        for (const auto& n : sg.nodes)
          for (const auto& o : n.outputs) loc.insert(o);
        for (const auto& n : sg.nodes) {
          for (const auto& i : n.inputs)
            if (!i.empty() && !loc.count(i)) out.push_back(i);
          for (const auto& a : n.attributes) {
            if (a.g) free_names(*a.g, loc, out);
            for (const auto& gg : a.graphs) free_names(*gg, loc, out);
          }
        }
        for (const auto& o : sg.outputs)
          if (!loc.count(o.name)) out.push_back(o.name);
      };
  for (std::size_t k = 0; k < g.nodes.size(); ++k) {
    for (const auto& i : g.nodes[k].inputs)
      if (!i.empty()) needs[k].push_back(i);
    for (const auto& a : g.nodes[k].attributes) {
      std::set<std::string> none;
      if (a.g) free_names(*a.g, none, needs[k]);
      for (const auto& gg : a.graphs) free_names(*gg, none, needs[k]);
    }
  }
  std::vector<int> missing(g.nodes.size(), 0);
  std::unordered_map<std::string, std::vector<std::size_t>> users;
  for (std::size_t k = 0; k < g.nodes.size(); ++k) {
    std::set<std::string> uniq(needs[k].begin(), needs[k].end());
    for (const auto& name : uniq) {
      if (defined.count(name)) continue;
      auto it = producer.find(name);
      if (it == producer.end())
        node_fail<ValueError>(g.nodes[k], "input '", name,
                              "' is not defined by any graph input, initializer or node");
      if (it->second == k)
        node_fail<ValueError>(g.nodes[k], "the node uses its own output '", name, "' (a cycle)");
      ++missing[k];
      users[name].push_back(k);
    }
  }
  std::deque<std::size_t> ready;
  for (std::size_t k = 0; k < g.nodes.size(); ++k)
    if (missing[k] == 0) ready.push_back(k);
  std::vector<std::size_t> order;
  order.reserve(g.nodes.size());
  while (!ready.empty()) {
    const std::size_t k = ready.front();
    ready.pop_front();
    order.push_back(k);
    for (const auto& o : g.nodes[k].outputs) {
      auto it = users.find(o);
      if (it == users.end()) continue;
      for (auto u : it->second)
        if (--missing[u] == 0) ready.push_back(u);
    }
  }
  if (order.size() != g.nodes.size()) {
    for (std::size_t k = 0; k < g.nodes.size(); ++k) {
      if (missing[k] > 0) {
        std::string via;
        for (const auto& name : needs[k])
          if (producer.count(name) && missing[producer[name]] > 0) via = name;
        node_fail<ValueError>(g.nodes[k],
                              "the graph has a cycle: the node depends on its own "
                              "output through input '",
                              via, "'");
      }
    }
  }
  std::vector<Node> sorted;
  sorted.reserve(g.nodes.size());
  for (auto k : order) sorted.push_back(std::move(g.nodes[k]));
  g.nodes = std::move(sorted);
  for (const auto& o : g.outputs) {
    if (o.name.empty()) onnx_fail<ValueError>("graph '", g.name, "' has an unnamed output");
    if (!defined.count(o.name) && !producer.count(o.name))
      onnx_fail<ValueError>("graph output '", o.name, "' is not produced by any node");
  }
}

void prepare_subgraphs(Model& model, Graph& g, const LoadOptions& options,
                       const std::vector<std::string>& outer) {
  std::vector<std::string> visible = outer;
  for (const auto& i : g.inputs) visible.push_back(i.name);
  for (const auto& i : g.initializers) visible.push_back(i.name);
  for (auto& n : g.nodes) {
    for (auto& a : n.attributes) {
      auto prep = [&](std::shared_ptr<const Graph>& sg) {
        auto copy = std::make_shared<Graph>(*sg);
        LoadOptions sub = options;
        sub.fold_constants = false;  // body values may change per iteration
        with_node_context(n, [&] { prepare_graph(model, *copy, sub, visible); });
        sg = copy;
      };
      if (a.g) prep(a.g);
      for (auto& gg : a.graphs) prep(gg);
    }
    for (const auto& o : n.outputs) visible.push_back(o);
  }
}

/// Evaluates nodes whose inputs are all constant; their outputs become initializers.
void fold_constants(Model& model, Graph& g) {
  std::unordered_map<std::string, std::size_t> init_index;
  for (std::size_t i = 0; i < g.initializers.size(); ++i) init_index[g.initializers[i].name] = i;
  std::set<std::string> outputs;
  for (const auto& o : g.outputs) outputs.insert(o.name);
  const std::int64_t opset = model.opset("");
  std::vector<Node> kept;
  kept.reserve(g.nodes.size());
  const Device cpu = Device::cpu();
  for (auto& n : g.nodes) {
    bool all_const = foldable(n);
    for (const auto& i : n.inputs)
      if (!i.empty() && !init_index.count(i)) all_const = false;
    for (const auto& a : n.attributes)
      if (a.g || !a.graphs.empty()) all_const = false;
    if (!all_const) {
      kept.push_back(std::move(n));
      continue;
    }
    std::vector<Value> in;
    std::int64_t total = 0;
    for (const auto& i : n.inputs) {
      if (i.empty()) {
        in.push_back(Value::none());
        continue;
      }
      const Initializer& init = g.initializers[init_index[i]];
      std::int64_t k = 1;
      for (auto d : init.shape) k *= d;
      total += k;
      in.push_back(value_from_initializer(init, cpu));
    }
    if (total > (std::int64_t{1} << 24) || !small_result(n, in)) {
      kept.push_back(std::move(n));
      continue;
    }
    std::vector<Value> out;
    with_node_context(n, [&] { out = run_op_node(n, in, opset, cpu); });
    bool tensors = true;
    for (std::size_t k = 0; k < out.size(); ++k)
      if (!n.outputs[k].empty() && !out[k].is_tensor()) tensors = false;
    if (!tensors) {
      kept.push_back(std::move(n));
      continue;
    }
    for (std::size_t k = 0; k < out.size() && k < n.outputs.size(); ++k) {
      if (n.outputs[k].empty()) continue;
      Initializer init;
      init.name = n.outputs[k];
      init.type = out[k].type();
      init.shape = out[k].shape();
      if (init.type == ElemType::String)
        init.strings = out[k].string_values();
      else
        init.data = std::make_shared<const TensorData>(out[k].to_data());
      init_index[init.name] = g.initializers.size();
      g.initializers.push_back(std::move(init));
    }
  }
  g.nodes = std::move(kept);
}

}  // namespace

void prepare_graph(Model& model, Graph& graph, const LoadOptions& options,
                   const std::vector<std::string>& outer_names) {
  if (outer_names.empty() && &graph == &model.graph) check_opsets(model, graph);
  check_ops(graph);
  sort_nodes(graph, outer_names);
  prepare_subgraphs(model, graph, options, outer_names);
  if (options.fold_constants) fold_constants(model, graph);
  if (options.infer_shapes) infer_graph(model, graph);
}

}  // namespace ember::onnx::detail
