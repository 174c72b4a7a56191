// The interpreter: runs a prepared graph node by node over Values on a Dispatch device.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <unordered_map>

#include "ember/cpu/conv_fused.hpp"
#include "onnx_internal.hpp"

namespace ember::onnx {

namespace detail {

const OpRegistry& registry() {
  static const OpRegistry r = [] {
    OpRegistry reg;
    register_elementwise(reg);
    register_activation(reg);
    register_shape(reg);
    register_indexing(reg);
    register_reduce(reg);
    register_nn(reg);
    register_norm(reg);
    register_rnn(reg);
    register_control(reg);
    register_sequence(reg);
    register_quant(reg);
    register_misc(reg);
    register_string(reg);
    register_signal(reg);
    register_attention(reg);
    return reg;
  }();
  return r;
}

OpFn find_op(const std::string& domain, const std::string& op_type) {
  const auto& ops = registry().ops;
  auto it = ops.find(canonical_domain(domain) + "::" + op_type);
  return it == ops.end() ? nullptr : it->second;
}

namespace {

/// Values visible while running a graph: its own, then the enclosing graphs'.
struct Scope {
  const Scope* parent = nullptr;
  std::unordered_map<std::string, Value> values;
  const Value* find(const std::string& name) const {
    for (const Scope* s = this; s; s = s->parent) {
      auto it = s->values.find(name);
      if (it != s->values.end()) return &it->second;
    }
    return nullptr;
  }
};

}  // namespace

/// EMBER_ONNX_PROFILE=1: time per operator type, printed to stderr after each run.
struct Profile {
  std::map<std::string, std::pair<double, int>> ops;
  static bool enabled() {
    static const bool on = [] {
      const char* e = std::getenv("EMBER_ONNX_PROFILE");
      return e && *e && std::string(e) != "0";
    }();
    return on;
  }
  void print() const {
    double total = 0;
    for (const auto& [k, v] : ops) total += v.first;
    std::cerr << "[onnx profile] " << total << " ms\n";
    for (const auto& [k, v] : ops)
      std::cerr << "  " << k << " " << v.first << " ms (" << v.second << " calls)\n";
  }
};

/// Weight packs of a session's Conv nodes, by initializer name (see cpu::ConvWeightPack).
using ConvPacks = std::unordered_map<std::string, std::unique_ptr<cpu::ConvWeightPack>>;

bool fusion_enabled() {
  static const bool on = [] {
    const char* e = std::getenv("EMBER_ONNX_FUSE");
    return !(e && std::string(e) == "0");
  }();
  return on;
}

/// A Conv node run by the fast path, fused with the nodes after it: Conv -> Relu,
/// Conv -> Add (-> Relu), or alone.
struct Fusion {
  bool active = false;
  bool relu = false;
  bool keep_blocked = false;      ///< every consumer of `out` reads it through the fast path
  bool pool = false;              ///< a MaxPool run in the blocked layout of its input
  std::string residual;           ///< the Add's other input ("" when there is no Add)
  std::vector<std::size_t> rest;  ///< the fused nodes after the Conv
  std::string out;                ///< the name the fused result is stored under
  std::string label;              ///< profile key
};

/// The fusions of graph g: an intermediate is fused away only when its single consumer is
/// the next node of the pattern (no other use, in sub-graphs neither, and not a graph
/// output), and an Add only when its other input is computed before the Conv. A result
/// stays in oneDNN's blocked layout when all its consumers are fast-path Convs (as x) or
/// fused Adds (as the residual). Whether a fusion runs is decided when the Conv runs
/// (conv_fused's checks); a blocked value is made plain for any other reader.
std::vector<Fusion> plan_fusions(const Graph& g) {
  std::vector<Fusion> plan(g.nodes.size());
  std::unordered_map<std::string, int> uses;
  std::unordered_map<std::string, std::vector<std::size_t>> consumers;
  std::unordered_map<std::string, std::size_t> producer;
  std::function<void(const Graph&)> mark_sub = [&](const Graph& sg) {
    for (const auto& n : sg.nodes) {
      for (const auto& i : n.inputs) uses[i] += 2;
      for (const auto& a : n.attributes) {
        if (a.g) mark_sub(*a.g);
        for (const auto& gg : a.graphs) mark_sub(*gg);
      }
    }
    for (const auto& o : sg.outputs) uses[o.name] += 2;
  };
  for (std::size_t k = 0; k < g.nodes.size(); ++k) {
    for (const auto& i : g.nodes[k].inputs) {
      ++uses[i];
      consumers[i].push_back(k);
    }
    for (const auto& o : g.nodes[k].outputs) producer[o] = k;
    for (const auto& a : g.nodes[k].attributes) {
      if (a.g) mark_sub(*a.g);
      for (const auto& gg : a.graphs) mark_sub(*gg);
    }
  }
  for (const auto& o : g.outputs) uses[o.name] += 2;
  const auto is = [](const Node& n, const char* op) {
    return n.op_type == op && canonical_domain(n.domain).empty();
  };
  // The single consumer of `name`, or none.
  const auto only_consumer = [&](const std::string& name) -> std::optional<std::size_t> {
    auto u = uses.find(name);
    if (name.empty() || u == uses.end() || u->second != 1) return std::nullopt;
    return consumers.at(name).front();
  };
  for (std::size_t k = 0; k < g.nodes.size(); ++k) {
    const Node& c = g.nodes[k];
    if (!is(c, "Conv") || c.outputs.size() != 1 || c.outputs[0].empty() || c.inputs.size() < 2)
      continue;
    Fusion f;
    f.active = true;
    f.out = c.outputs[0];
    f.label = "Conv";
    auto j = only_consumer(c.outputs[0]);
    const Node* n = j && *j > k ? &g.nodes[*j] : nullptr;
    if (n && is(*n, "Relu") && n->inputs.size() == 1 && n->outputs.size() == 1 &&
        !n->outputs[0].empty()) {
      f.relu = true;
      f.rest = {*j};
      f.out = n->outputs[0];
      f.label = "Conv+Relu";
    } else if (n && is(*n, "Add") && n->inputs.size() == 2 && n->outputs.size() == 1 &&
               !n->outputs[0].empty() && n->inputs[0] != n->inputs[1] && !n->inputs[0].empty() &&
               !n->inputs[1].empty()) {
      const std::string r = n->inputs[0] == c.outputs[0] ? n->inputs[1] : n->inputs[0];
      auto p = producer.find(r);
      if (p == producer.end() || p->second < k) {
        f.residual = r;
        f.rest = {*j};
        f.out = n->outputs[0];
        f.label = "Conv+Add";
        auto rl = only_consumer(n->outputs[0]);
        if (rl && *rl > *j && is(g.nodes[*rl], "Relu") && g.nodes[*rl].outputs.size() == 1 &&
            !g.nodes[*rl].outputs[0].empty()) {
          f.relu = true;
          f.rest.push_back(*rl);
          f.out = g.nodes[*rl].outputs[0];
          f.label = "Conv+Add+Relu";
        }
      }
    }
    plan[k] = std::move(f);
  }
  // MaxPool (without Indices) reads a blocked input in its layout.
  for (std::size_t k = 0; k < g.nodes.size(); ++k) {
    const Node& c = g.nodes[k];
    if (!is(c, "MaxPool") || c.inputs.size() != 1 || c.outputs.empty() || c.outputs[0].empty() ||
        (c.outputs.size() > 1 && !c.outputs[1].empty()))
      continue;
    plan[k].active = true;
    plan[k].pool = true;
    plan[k].out = c.outputs[0];
    plan[k].label = "MaxPool(blocked)";
  }
  // Fused Adds, by node: the Conv that takes them.
  std::unordered_map<std::size_t, std::size_t> add_owner;
  for (std::size_t k = 0; k < plan.size(); ++k)
    if (plan[k].active && !plan[k].residual.empty()) add_owner[plan[k].rest.front()] = k;
  for (auto& f : plan) {
    if (!f.active) continue;
    auto cs = consumers.find(f.out);
    if (cs == consumers.end() || uses[f.out] != static_cast<int>(cs->second.size())) continue;
    bool ok = true;
    for (std::size_t c : cs->second) {
      const Node& n = g.nodes[c];
      const auto count = std::count(n.inputs.begin(), n.inputs.end(), f.out);
      const bool as_x = plan[c].active && n.inputs[0] == f.out && count == 1;
      auto a = add_owner.find(c);
      const bool as_res = a != add_owner.end() && plan[a->second].residual == f.out && count == 1;
      ok = ok && (as_x || as_res);
    }
    f.keep_blocked = ok;
  }
  return plan;
}

struct GraphRunner {
  std::int64_t opset;
  Device device;
  Profile* profile = nullptr;
  const ConvPacks* packs = nullptr;  ///< set for a session's main graph: enables fusion

  std::vector<Value> run(const Graph& g, const std::vector<Value>& inputs, const Scope* parent,
                         const std::unordered_map<std::string, Value>* uploaded) const {
    Scope scope;
    scope.parent = parent;
    if (inputs.size() != g.inputs.size())
      onnx_fail<ValueError>("graph '", g.name, "' takes ", g.inputs.size(), " inputs, got ",
                            inputs.size());
    for (std::size_t i = 0; i < inputs.size(); ++i) scope.values[g.inputs[i].name] = inputs[i];
    if (uploaded) {
      for (const auto& [k, v] : *uploaded) scope.values[k] = v;
    } else {
      for (const auto& init : g.initializers)
        scope.values[init.name] = value_from_initializer(init, device);
    }
    // Last use of each value in this graph, so dead intermediates are freed early.
    std::unordered_map<std::string, std::size_t> last_use;
    std::function<void(const Graph&, std::size_t)> mark_sub = [&](const Graph& sg, std::size_t k) {
      for (const auto& n : sg.nodes) {
        for (const auto& i : n.inputs) last_use[i] = k;
        for (const auto& a : n.attributes) {
          if (a.g) mark_sub(*a.g, k);
          for (const auto& gg : a.graphs) mark_sub(*gg, k);
        }
      }
      for (const auto& o : sg.outputs) last_use[o.name] = k;
    };
    for (std::size_t k = 0; k < g.nodes.size(); ++k) {
      for (const auto& i : g.nodes[k].inputs) last_use[i] = k;
      for (const auto& a : g.nodes[k].attributes) {
        if (a.g) mark_sub(*a.g, k);
        for (const auto& gg : a.graphs) mark_sub(*gg, k);
      }
    }
    for (const auto& o : g.outputs) last_use[o.name] = g.nodes.size();
    static const Value missing;
    std::vector<Fusion> fusions;
    std::vector<char> skip;
    if (packs && uploaded && fusion_enabled()) {
      fusions = plan_fusions(g);
      skip.assign(g.nodes.size(), 0);
    }
    // Fast-path results kept in oneDNN's blocked layout (not in scope until made plain).
    std::unordered_map<std::string, cpu::ConvActivation> blocked;
    const auto materialize = [&](const std::string& name) {
      auto it = blocked.find(name);
      if (it == blocked.end()) return;
      scope.values[name] = plain_value(it->second, device);
      blocked.erase(it);
    };
    const auto erase_last_uses = [&](const Node& node, std::size_t k) {
      for (const auto& name : node.inputs) {
        auto it = last_use.find(name);
        if (it != last_use.end() && it->second == k && !uploaded_has(uploaded, name)) {
          scope.values.erase(name);
          blocked.erase(name);
        }
      }
    };
    for (std::size_t k = 0; k < g.nodes.size(); ++k) {
      const Node& node = g.nodes[k];
      if (!skip.empty() && skip[k]) {  // fused into an earlier Conv
        erase_last_uses(node, k);
        continue;
      }
      const auto t0 = std::chrono::steady_clock::now();
      const auto record = [&](const std::string& label) {
        if (!profile) return;
        auto& e = profile->ops[std::getenv("EMBER_ONNX_PROFILE")[0] == '2' ? node.name : label];
        e.first += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                       .count();
        ++e.second;
      };
      if (!fusions.empty() && fusions[k].active && fusions[k].pool) {
        const Fusion& f = fusions[k];
        auto xb = blocked.find(node.inputs[0]);
        if (xb != blocked.end()) {
          OpContext pctx{node, opset, device, {nullptr}, {}, {}, {}};
          pctx.outputs.resize(node.outputs.size());
          std::optional<cpu::ConvActivation> yb;
          bool ok = false;
          with_node_context(node, [&] { ok = max_pool_blocked(pctx, xb->second, &yb); });
          if (ok) {
            if (f.keep_blocked)
              blocked[f.out] = std::move(*yb);
            else
              scope.values[f.out] = plain_value(*yb, device);
            record(f.label);
            erase_last_uses(node, k);
            continue;
          }
        }
      } else if (!fusions.empty() && fusions[k].active) {
        const Fusion& f = fusions[k];
        auto xb = node.inputs[0].empty() ? blocked.end() : blocked.find(node.inputs[0]);
        auto rb = f.residual.empty() ? blocked.end() : blocked.find(f.residual);
        const Value* res = f.residual.empty() ? nullptr : scope.find(f.residual);
        // Two Convs into one Add: the first to fuse takes it.
        bool unclaimed = true;
        for (auto r : f.rest) unclaimed = unclaimed && !skip[r];
        bool fused = false;
        OpContext fctx{node, opset, device, {}, {}, {}, {}};
        std::optional<cpu::ConvActivation> yb;
        if (unclaimed && (f.residual.empty() || res || rb != blocked.end())) {
          for (const auto& name : node.inputs)
            fctx.inputs.push_back(name.empty() ? nullptr : scope.find(name));
          fctx.outputs.resize(node.outputs.size());
          ConvFusion cf;
          cf.x_blocked = xb == blocked.end() ? nullptr : &xb->second;
          cf.residual = res;
          cf.residual_blocked = rb == blocked.end() ? nullptr : &rb->second;
          cf.relu = f.relu;
          if (uploaded_has(uploaded, node.inputs[1])) {
            auto it = packs->find(node.inputs[1]);
            if (it != packs->end()) cf.pack = it->second.get();
          }
          cf.keep_blocked = f.keep_blocked;
          // The residual's last use is the fused Add (and the Conv does not read it): the
          // result may take its buffer.
          if (cf.residual_blocked) {
            auto lu = last_use.find(f.residual);
            const Node& add = g.nodes[f.rest.front()];
            cf.reuse_residual = lu != last_use.end() && lu->second == f.rest.front() &&
                                std::count(add.inputs.begin(), add.inputs.end(), f.residual) == 1 &&
                                std::count(node.inputs.begin(), node.inputs.end(), f.residual) == 0;
          }
          cf.blocked_out = &yb;
          with_node_context(node, [&] { fused = conv_fused(fctx, cf); });
        }
        if (fused) {
          for (auto r : f.rest) skip[r] = 1;
          if (yb)
            blocked[f.out] = std::move(*yb);
          else
            scope.values[f.out] = std::move(fctx.outputs[0]);
          record(f.label);
          erase_last_uses(node, k);
          continue;
        }
      }
      // Any other reader gets plain values.
      for (const auto& name : node.inputs) materialize(name);
      OpFn fn = find_op(node.domain, node.op_type);
      if (!fn) node_fail<UnsupportedError>(node, "unknown operator");
      OpContext ctx{node, opset, device, {}, {}, {}, {}};
      ctx.inputs.reserve(node.inputs.size());
      for (const auto& name : node.inputs) {
        if (name.empty()) {
          ctx.inputs.push_back(nullptr);
          continue;
        }
        const Value* v = scope.find(name);
        if (!v) node_fail<ValueError>(node, "input '", name, "' has no value");
        ctx.inputs.push_back(v);
      }
      ctx.outputs.resize(node.outputs.size());
      // Inputs used for the last time here (once, by this node, in this scope) are moved
      // into the context, so element-wise ops can reuse their buffers.
      for (std::size_t i = 0; i < node.inputs.size(); ++i) {
        const std::string& name = node.inputs[i];
        if (name.empty() || uploaded_has(uploaded, name)) continue;
        auto lu = last_use.find(name);
        if (lu == last_use.end() || lu->second != k) continue;
        if (std::count(node.inputs.begin(), node.inputs.end(), name) != 1) continue;
        auto it = scope.values.find(name);
        if (it == scope.values.end() || !it->second.is_tensor()) continue;
        if (ctx.owned.empty()) ctx.owned.resize(node.inputs.size());
        ctx.owned[i] = std::move(it->second);
        scope.values.erase(it);
        ctx.inputs[i] = &ctx.owned[i];
      }
      ctx.run_subgraph = [&](const Graph& sg, const std::vector<Value>& in) {
        return run(sg, in, &scope, nullptr);
      };
      if (profile) {
        const auto t0 = std::chrono::steady_clock::now();
        with_node_context(node, [&] { fn(ctx); });
        auto& e =
            profile->ops[std::getenv("EMBER_ONNX_PROFILE")[0] == '2' ? node.name : node.op_type];
        e.first += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                       .count();
        ++e.second;
      } else {
        with_node_context(node, [&] { fn(ctx); });
      }
      for (std::size_t o = 0; o < node.outputs.size(); ++o)
        if (!node.outputs[o].empty()) scope.values[node.outputs[o]] = std::move(ctx.outputs[o]);
      erase_last_uses(node, k);
    }
    std::vector<Value> out;
    out.reserve(g.outputs.size());
    for (const auto& o : g.outputs) materialize(o.name);
    for (const auto& o : g.outputs) {
      const Value* v = scope.find(o.name);
      if (!v) onnx_fail<ValueError>("graph output '", o.name, "' was not computed");
      out.push_back(*v);
    }
    (void)missing;
    return out;
  }

  static bool uploaded_has(const std::unordered_map<std::string, Value>* up,
                           const std::string& name) {
    return up && up->count(name);
  }
};

std::vector<Value> run_op_node(const Node& node, const std::vector<Value>& inputs,
                               std::int64_t opset, const Device& device) {
  OpFn fn = find_op(node.domain, node.op_type);
  if (!fn) node_fail<UnsupportedError>(node, "unknown operator");
  OpContext ctx{node, opset, device, {}, {}, {}, {}};
  for (const auto& v : inputs) ctx.inputs.push_back(&v);
  ctx.outputs.resize(node.outputs.size());
  GraphRunner runner{opset, device};
  ctx.run_subgraph = [&](const Graph& sg, const std::vector<Value>& in) {
    return runner.run(sg, in, nullptr, nullptr);
  };
  fn(ctx);
  return std::move(ctx.outputs);
}

}  // namespace detail

// ---- Session ----------------------------------------------------------------------------------

struct Session::Impl {
  std::unordered_map<std::string, Value> initializers;
  detail::ConvPacks conv_packs;  ///< the Conv weights among the initializers, packed once
};

Session::Session(const Model& model, SessionOptions options)
    : model_(&model), options_(options), impl_(std::make_unique<Impl>()) {
  for (const auto& init : model.graph.initializers)
    impl_->initializers[init.name] = detail::value_from_initializer(init, options_.device);
  for (const auto& n : model.graph.nodes)
    if (n.op_type == "Conv" && n.inputs.size() > 1 && impl_->initializers.count(n.inputs[1]) &&
        !impl_->conv_packs.count(n.inputs[1]))
      impl_->conv_packs[n.inputs[1]] = std::make_unique<cpu::ConvWeightPack>();
}
Session::~Session() = default;
Session::Session(Session&&) noexcept = default;
Session& Session::operator=(Session&&) noexcept = default;

namespace {

void check_input(const ValueInfo& info, const Value& v) {
  const TypeInfo& t = info.type;
  if (t.kind == TypeInfo::Kind::Tensor) {
    if (!v.is_tensor())
      detail::onnx_fail<ValueError>("input '", info.name, "' must be a tensor, got ", v.describe());
    if (t.elem != ElemType::Undefined && v.type() != t.elem)
      detail::onnx_fail<DTypeError>("input '", info.name, "' must be ", type_string(t), ", got ",
                                    v.describe());
    if (t.has_shape) {
      bool ok = t.shape.size() == v.rank();
      for (std::size_t i = 0; ok && i < t.shape.size(); ++i)
        if (t.shape[i].known() && t.shape[i].value != v.shape()[i]) ok = false;
      if (!ok)
        detail::onnx_fail<ShapeError>("input '", info.name, "' must be ", type_string(t), ", got ",
                                      v.describe());
    }
  } else if (t.kind == TypeInfo::Kind::Sequence && !v.is_sequence()) {
    detail::onnx_fail<ValueError>("input '", info.name, "' must be a sequence, got ", v.describe());
  }
}

}  // namespace

std::vector<Value> Session::run(const std::vector<Value>& inputs) const {
  const Graph& g = model_->graph;
  if (inputs.size() != g.inputs.size())
    detail::onnx_fail<ValueError>("the model takes ", g.inputs.size(), " inputs, got ",
                                  inputs.size());
  std::vector<Value> moved;
  moved.reserve(inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (options_.check_inputs) check_input(g.inputs[i], inputs[i]);
    moved.push_back(inputs[i].device() == options_.device || !inputs[i].is_tensor()
                        ? inputs[i]
                        : inputs[i].to_device(options_.device));
  }
  detail::GraphRunner runner{model_->opset(""), options_.device};
  runner.packs = &impl_->conv_packs;
  if (detail::Profile::enabled()) {
    detail::Profile prof;
    runner.profile = &prof;
    auto out = runner.run(g, moved, nullptr, &impl_->initializers);
    prof.print();
    return out;
  }
  return runner.run(g, moved, nullptr, &impl_->initializers);
}

std::map<std::string, Value> Session::run(const std::map<std::string, Value>& inputs) const {
  const Graph& g = model_->graph;
  std::vector<Value> in;
  for (const auto& i : g.inputs) {
    auto it = inputs.find(i.name);
    if (it == inputs.end()) detail::onnx_fail<ValueError>("input '", i.name, "' is missing");
    in.push_back(it->second);
  }
  for (const auto& [name, v] : inputs) {
    bool known = false;
    for (const auto& i : g.inputs) known |= i.name == name;
    if (!known) detail::onnx_fail<ValueError>("the model has no input named '", name, "'");
  }
  auto out = run(in);
  std::map<std::string, Value> res;
  for (std::size_t i = 0; i < out.size(); ++i) res[g.outputs[i].name] = out[i];
  return res;
}

std::vector<Value> run_op(const std::string& op_type, const std::vector<Value>& inputs,
                          const std::vector<Attribute>& attributes, std::int64_t opset,
                          std::size_t num_outputs, const std::string& domain) {
  Node node;
  node.name = op_type;
  node.op_type = op_type;
  node.domain = detail::canonical_domain(domain);
  for (std::size_t i = 0; i < inputs.size(); ++i)
    node.inputs.push_back(inputs[i].is_none() ? "" : "in" + std::to_string(i));
  for (std::size_t i = 0; i < num_outputs; ++i) node.outputs.push_back("out" + std::to_string(i));
  node.attributes = attributes;
  const Device dev = inputs.empty() ? Device{} : inputs[0].device();
  std::vector<Value> out;
  detail::with_node_context(node, [&] { out = detail::run_op_node(node, inputs, opset, dev); });
  return out;
}

bool has_op(const std::string& domain, const std::string& op_type) {
  return detail::find_op(domain, op_type) != nullptr;
}

std::vector<std::string> supported_ops() {
  std::vector<std::string> out;
  for (const auto& [k, v] : detail::registry().ops) {
    (void)v;
    out.push_back(k.rfind("::", 0) == 0 ? k.substr(2) : k);
  }
  return out;
}

}  // namespace ember::onnx
