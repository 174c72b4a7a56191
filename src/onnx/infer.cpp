// Type and shape inference: rules for the common operators. A dim is a known size, a named
// symbol ("batch") or unknown; a rule that cannot decide leaves the output unknown, and
// the interpreter checks at run time. Contradictions between known dims are errors that
// name the node.
#include "infer.hpp"

#include <set>

namespace ember::onnx::detail {

namespace {

using Dims = std::vector<Dim>;

TypeInfo tensor_type(ElemType e, Dims shape, bool has_shape = true) {
  TypeInfo t;
  t.kind = TypeInfo::Kind::Tensor;
  t.elem = e;
  t.has_shape = has_shape;
  t.shape = std::move(shape);
  return t;
}

Dim known(std::int64_t v) {
  return Dim{v, ""};
}

std::string dims_str(const TypeInfo& t) {
  return type_string(t);
}

/// "[2, batch, ?]"
std::string shape_str(const std::vector<Dim>& d) {
  std::string s = "[";
  for (std::size_t i = 0; i < d.size(); ++i)
    s += (i ? ", " : "") + (d[i].known()         ? std::to_string(d[i].value)
                            : d[i].param.empty() ? "?"
                                                 : d[i].param);
  return s + "]";
}

struct Inferer {
  const Model& model;
  Graph& g;
  std::map<std::string, TypeInfo>& types;
  std::map<std::string, const Initializer*> consts;

  const TypeInfo* type_of(const std::string& name) const {
    auto it = types.find(name);
    return it == types.end() ? nullptr : &it->second;
  }
  /// Input i's type when it is a tensor with a known rank.
  const TypeInfo* shaped(const Node& n, std::size_t i) const {
    if (i >= n.inputs.size() || n.inputs[i].empty()) return nullptr;
    const TypeInfo* t = type_of(n.inputs[i]);
    if (!t || t->kind != TypeInfo::Kind::Tensor || !t->has_shape) return nullptr;
    return t;
  }
  ElemType elem(const Node& n, std::size_t i) const {
    if (i >= n.inputs.size() || n.inputs[i].empty()) return ElemType::Undefined;
    const TypeInfo* t = type_of(n.inputs[i]);
    return t && t->kind == TypeInfo::Kind::Tensor ? t->elem : ElemType::Undefined;
  }
  /// Constant int64 values of input i (an initializer), if any.
  bool const_ints(const Node& n, std::size_t i, std::vector<std::int64_t>& out) const {
    if (i >= n.inputs.size() || n.inputs[i].empty()) return false;
    auto it = consts.find(n.inputs[i]);
    if (it == consts.end() || !it->second->data) return false;
    if (!is_int(it->second->data->dtype())) return false;
    out = it->second->data->to_vec<std::int64_t>();
    return true;
  }

  Dims broadcast(const Node& n, const Dims& a, const Dims& b) const {
    const std::size_t r = std::max(a.size(), b.size());
    Dims out(r);
    for (std::size_t i = 0; i < r; ++i) {
      const Dim* da = i + a.size() >= r ? &a[i + a.size() - r] : nullptr;
      const Dim* db = i + b.size() >= r ? &b[i + b.size() - r] : nullptr;
      if (!da) {
        out[i] = *db;
      } else if (!db) {
        out[i] = *da;
      } else if (da->known() && db->known()) {
        if (da->value != db->value && da->value != 1 && db->value != 1)
          node_fail<ShapeError>(n, "inputs of shapes ", shape_str(a), " and ", shape_str(b),
                                " cannot be broadcast (", da->value, " vs ", db->value, ")");
        out[i] = known(da->value == 1 ? db->value : da->value);
      } else if (da->known() && da->value == 1) {
        out[i] = *db;
      } else if (db->known() && db->value == 1) {
        out[i] = *da;
      } else if (!da->known() && !db->known() && da->param == db->param) {
        out[i] = *da;
      } else if (da->known()) {
        out[i] = *da;
      } else if (db->known()) {
        out[i] = *db;
      }
    }
    return out;
  }

  void set(const Node& n, std::size_t i, TypeInfo t) {
    if (i >= n.outputs.size() || n.outputs[i].empty()) return;
    auto it = types.find(n.outputs[i]);
    if (it != types.end() && it->second.kind == TypeInfo::Kind::Tensor && it->second.has_shape &&
        t.has_shape) {
      const TypeInfo& d = it->second;
      bool clash = d.shape.size() != t.shape.size();
      for (std::size_t k = 0; !clash && k < d.shape.size(); ++k)
        if (d.shape[k].known() && t.shape[k].known() && d.shape[k].value != t.shape[k].value)
          clash = true;
      if (clash)
        node_fail<ShapeError>(n, "output '", n.outputs[i], "' is declared ", dims_str(d),
                              " but the inputs give ", dims_str(t));
      if (d.elem != ElemType::Undefined && t.elem != ElemType::Undefined && d.elem != t.elem)
        node_fail<ShapeError>(n, "output '", n.outputs[i], "' is declared ", dims_str(d),
                              " but the inputs give ", dims_str(t));
      // keep the declared symbols where inference has none
      for (std::size_t k = 0; k < d.shape.size(); ++k)
        if (!t.shape[k].known() && t.shape[k].param.empty()) t.shape[k] = d.shape[k];
    }
    types[n.outputs[i]] = std::move(t);
  }

  static std::int64_t norm_axis(const Node& n, std::int64_t a, std::size_t r) {
    const auto rr = static_cast<std::int64_t>(r);
    if (a < -rr || a >= rr) node_fail<ShapeError>(n, "axis ", a, " is out of range for rank ", r);
    return a < 0 ? a + rr : a;
  }

  std::int64_t attr_i(const Node& n, const char* name, std::int64_t def) const {
    const Attribute* a = n.attr(name);
    return a && a->kind == Attribute::Kind::Int ? a->i : def;
  }
  std::vector<std::int64_t> attr_is(const Node& n, const char* name) const {
    const Attribute* a = n.attr(name);
    return a && a->kind == Attribute::Kind::Ints ? a->ints : std::vector<std::int64_t>{};
  }

  void node(const Node& n) {
    if (!n.domain.empty()) return;
    const std::string& op = n.op_type;
    static const std::set<std::string> same = {"Relu",
                                               "Sigmoid",
                                               "Tanh",
                                               "Exp",
                                               "Log",
                                               "Neg",
                                               "Abs",
                                               "Sqrt",
                                               "Identity",
                                               "Erf",
                                               "Softmax",
                                               "LogSoftmax",
                                               "LeakyRelu",
                                               "Elu",
                                               "Selu",
                                               "HardSigmoid",
                                               "HardSwish",
                                               "Clip",
                                               "Floor",
                                               "Ceil",
                                               "Round",
                                               "Softplus",
                                               "Softsign",
                                               "Gelu",
                                               "Mish",
                                               "Sin",
                                               "Cos",
                                               "Reciprocal",
                                               "BatchNormalization",
                                               "LayerNormalization",
                                               "InstanceNormalization",
                                               "LRN",
                                               "Dropout",
                                               "Celu",
                                               "ThresholdedRelu",
                                               "Shrink",
                                               "Sign",
                                               "Hardmax",
                                               "CumSum"};
    static const std::set<std::string> bin = {"Add",        "Sub",       "Mul",       "Div",
                                              "Pow",        "Mod",       "PRelu",     "BitShift",
                                              "BitwiseAnd", "BitwiseOr", "BitwiseXor"};
    static const std::set<std::string> cmp = {"Equal",          "Less", "Greater", "LessOrEqual",
                                              "GreaterOrEqual", "And",  "Or",      "Xor"};
    static const std::set<std::string> variadic = {"Max", "Min", "Sum", "Mean"};
    const TypeInfo* a = shaped(n, 0);
    if (same.count(op)) {
      const TypeInfo* t = n.inputs.empty() ? nullptr : type_of(n.inputs[0]);
      if (t && t->kind == TypeInfo::Kind::Tensor) set(n, 0, *t);
      return;
    }
    if (bin.count(op) || cmp.count(op) || variadic.count(op)) {
      const ElemType e = cmp.count(op) ? ElemType::Bool : elem(n, 0);
      Dims out;
      bool all = true;
      for (std::size_t i = 0; i < n.inputs.size(); ++i) {
        const TypeInfo* t = shaped(n, i);
        if (!t) {
          all = false;
          continue;
        }
        out = broadcast(n, out, t->shape);
      }
      if (op == "PRelu") all = all && a;
      set(n, 0, tensor_type(e, out, all));
      return;
    }
    if (op == "Where") {
      Dims out;
      bool all = true;
      for (std::size_t i = 0; i < 3; ++i) {
        const TypeInfo* t = shaped(n, i);
        if (!t) {
          all = false;
          continue;
        }
        out = broadcast(n, out, t->shape);
      }
      set(n, 0, tensor_type(elem(n, 1), out, all));
      return;
    }
    if (op == "Not" || op == "IsNaN" || op == "IsInf") {
      if (a) set(n, 0, tensor_type(ElemType::Bool, a->shape));
      return;
    }
    if (op == "Cast") {
      const auto to = static_cast<ElemType>(attr_i(n, "to", 0));
      set(n, 0, a ? tensor_type(to, a->shape) : tensor_type(to, {}, false));
      return;
    }
    if (op == "CastLike") {
      const ElemType to = elem(n, 1);
      set(n, 0, a ? tensor_type(to, a->shape) : tensor_type(to, {}, false));
      return;
    }
    if (op == "Shape") {
      if (!a) {
        set(n, 0, tensor_type(ElemType::Int64, {Dim{}}));
        return;
      }
      const auto r = static_cast<std::int64_t>(a->shape.size());
      std::int64_t s = attr_i(n, "start", 0), e = attr_i(n, "end", r);
      s = std::clamp<std::int64_t>(s < 0 ? s + r : s, 0, r);
      e = std::clamp<std::int64_t>(e < 0 ? e + r : e, 0, r);
      set(n, 0, tensor_type(ElemType::Int64, {known(std::max<std::int64_t>(e - s, 0))}));
      return;
    }
    if (op == "Size") {
      set(n, 0, tensor_type(ElemType::Int64, {}));
      return;
    }
    if (op == "MatMul") {
      const TypeInfo* b = shaped(n, 1);
      if (!a || !b) {
        set(n, 0, tensor_type(elem(n, 0), {}, false));
        return;
      }
      Dims x = a->shape, y = b->shape;
      if (x.empty() || y.empty()) node_fail<ShapeError>(n, "MatMul inputs must not be scalars");
      const bool xv = x.size() == 1, yv = y.size() == 1;
      if (xv) x.insert(x.begin(), known(1));
      if (yv) y.push_back(known(1));
      const Dim& k1 = x[x.size() - 1];
      const Dim& k2 = y[y.size() - 2];
      if (k1.known() && k2.known() && k1.value != k2.value)
        node_fail<ShapeError>(n, "inner dims differ: ", dims_str(*a), " x ", dims_str(*b));
      Dims bx(x.begin(), x.end() - 2), by(y.begin(), y.end() - 2);
      Dims out = broadcast(n, bx, by);
      if (!xv) out.push_back(x[x.size() - 2]);
      if (!yv) out.push_back(y[y.size() - 1]);
      set(n, 0, tensor_type(elem(n, 0), out));
      return;
    }
    if (op == "Gemm") {
      const TypeInfo* b = shaped(n, 1);
      if (!a || !b || a->shape.size() != 2 || b->shape.size() != 2) {
        if (a && a->shape.size() != 2)
          node_fail<ShapeError>(n, "input A must have rank 2, got ", dims_str(*a));
        set(n, 0, tensor_type(elem(n, 0), {known(-1), known(-1)}, false));
        return;
      }
      const bool ta = attr_i(n, "transA", 0) != 0, tb = attr_i(n, "transB", 0) != 0;
      const Dim m = a->shape[ta ? 1 : 0], k1 = a->shape[ta ? 0 : 1];
      const Dim k2 = b->shape[tb ? 1 : 0], nn = b->shape[tb ? 0 : 1];
      if (k1.known() && k2.known() && k1.value != k2.value)
        node_fail<ShapeError>(n, "inner dims differ: A ", dims_str(*a), " (transA ", ta, ") and B ",
                              dims_str(*b), " (transB ", tb, ")");
      set(n, 0, tensor_type(elem(n, 0), {m, nn}));
      return;
    }
    if (op == "Conv") {
      const TypeInfo* w = shaped(n, 1);
      if (!a || !w) {
        set(n, 0, tensor_type(elem(n, 0), {}, false));
        return;
      }
      if (a->shape.size() < 3 || a->shape.size() != w->shape.size())
        node_fail<ShapeError>(n, "input ", dims_str(*a), " and weight ", dims_str(*w),
                              " must have the same rank >= 3");
      const std::int64_t group = attr_i(n, "group", 1);
      if (group <= 0) node_fail<ValueError>(n, "group must be positive, got ", group);
      const Dim& c = a->shape[1];
      const Dim& wc = w->shape[1];
      if (c.known() && wc.known() && c.value != wc.value * group)
        node_fail<ShapeError>(n, "input has ", c.value, " channels but the weight ", dims_str(*w),
                              " with group ", group, " expects ", wc.value * group);
      const std::size_t sp = a->shape.size() - 2;
      auto pads = attr_is(n, "pads"), strides = attr_is(n, "strides"),
           dil = attr_is(n, "dilations"), ks = attr_is(n, "kernel_shape");
      const Attribute* ap = n.attr("auto_pad");
      const std::string auto_pad = ap ? ap->s : "NOTSET";
      Dims out{a->shape[0], w->shape[0]};
      for (std::size_t i = 0; i < sp; ++i) {
        const Dim& in = a->shape[2 + i];
        const std::int64_t k = i < ks.size() ? ks[i] : w->shape[2 + i].value;
        const std::int64_t s = i < strides.size() ? strides[i] : 1;
        const std::int64_t d = i < dil.size() ? dil[i] : 1;
        if (s <= 0 || d <= 0)
          node_fail<ValueError>(n, "strides and dilations must be positive, got ", s, " and ", d);
        if (!in.known() || k < 0) {
          out.push_back(Dim{});
          continue;
        }
        if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
          out.push_back(known((in.value + s - 1) / s));
          continue;
        }
        const std::int64_t p =
            auto_pad == "VALID" || pads.size() != 2 * sp ? 0 : pads[i] + pads[i + sp];
        const std::int64_t o = (in.value + p - d * (k - 1) - 1) / s + 1;
        if (o <= 0)
          node_fail<ShapeError>(n, "the kernel (", k, ", dilation ", d,
                                ") is larger than the padded input (", in.value + p, ")");
        out.push_back(known(o));
      }
      set(n, 0, tensor_type(elem(n, 0), out));
      return;
    }
    if (op == "Flatten") {
      if (!a) return;
      const auto r = a->shape.size();
      std::int64_t ax = attr_i(n, "axis", 1);
      if (ax < 0) ax += static_cast<std::int64_t>(r);
      if (ax < 0 || ax > static_cast<std::int64_t>(r))
        node_fail<ShapeError>(n, "axis ", attr_i(n, "axis", 1), " is out of range for ",
                              dims_str(*a));
      auto prod = [&](std::size_t b, std::size_t e) {
        std::int64_t p = 1;
        for (std::size_t i = b; i < e; ++i) {
          if (!a->shape[i].known()) return Dim{};
          p *= a->shape[i].value;
        }
        return known(p);
      };
      set(n, 0, tensor_type(elem(n, 0), {prod(0, ax), prod(ax, r)}));
      return;
    }
    if (op == "Transpose") {
      if (!a) return;
      auto perm = attr_is(n, "perm");
      const auto r = a->shape.size();
      if (perm.empty())
        for (std::size_t i = 0; i < r; ++i) perm.push_back(static_cast<std::int64_t>(r - 1 - i));
      if (perm.size() != r)
        node_fail<ShapeError>(n, "perm has ", perm.size(), " entries for ", dims_str(*a));
      Dims out;
      for (auto p : perm) out.push_back(a->shape[norm_axis(n, p, r)]);
      set(n, 0, tensor_type(elem(n, 0), out));
      return;
    }
    if (op == "Reshape") {
      std::vector<std::int64_t> shape;
      if (!const_ints(n, 1, shape)) {
        set(n, 0, tensor_type(elem(n, 0), {}, false));
        return;
      }
      const bool allowzero = attr_i(n, "allowzero", 0) != 0;
      Dims out;
      std::int64_t known_prod = 1;
      int infer = -1;
      bool all_known = a != nullptr;
      for (std::size_t i = 0; i < shape.size(); ++i) {
        if (shape[i] == -1) {
          if (infer >= 0) node_fail<ShapeError>(n, "the shape has more than one -1");
          infer = static_cast<int>(i);
          out.push_back(Dim{});
        } else if (shape[i] == 0 && !allowzero) {
          if (!a || i >= a->shape.size()) {
            if (a)
              node_fail<ShapeError>(n, "shape entry ", i, " is 0 but the input has rank ",
                                    a->shape.size());
            out.push_back(Dim{});
            all_known = false;
          } else {
            out.push_back(a->shape[i]);
            if (a->shape[i].known())
              known_prod *= a->shape[i].value;
            else
              all_known = false;
          }
        } else if (shape[i] < -1) {
          node_fail<ShapeError>(n, "invalid shape entry ", shape[i]);
        } else {
          out.push_back(known(shape[i]));
          known_prod *= shape[i];
        }
      }
      if (a && all_known) {
        std::int64_t in = 1;
        bool in_known = true;
        for (const auto& d : a->shape) {
          if (!d.known()) in_known = false;
          in *= d.value;
        }
        if (in_known) {
          if (infer >= 0) {
            if (known_prod == 0 || in % known_prod != 0)
              node_fail<ShapeError>(n, "cannot reshape ", dims_str(*a), " into ",
                                    Shape(shape).to_string());
            out[static_cast<std::size_t>(infer)] = known(in / known_prod);
          } else if (in != known_prod) {
            node_fail<ShapeError>(n, "cannot reshape ", dims_str(*a), " (", in, " elements) into ",
                                  Shape(shape).to_string(), " (", known_prod, " elements)");
          }
        }
      }
      set(n, 0, tensor_type(elem(n, 0), out));
      return;
    }
    if (op == "Concat") {
      std::vector<const TypeInfo*> ts;
      for (std::size_t i = 0; i < n.inputs.size(); ++i) {
        const TypeInfo* t = shaped(n, i);
        if (!t) {
          set(n, 0, tensor_type(elem(n, 0), {}, false));
          return;
        }
        ts.push_back(t);
      }
      if (ts.empty()) return;
      const auto r = ts[0]->shape.size();
      const std::int64_t ax = norm_axis(n, attr_i(n, "axis", 0), std::max<std::size_t>(r, 1));
      Dims out = ts[0]->shape;
      for (std::size_t i = 1; i < ts.size(); ++i) {
        if (ts[i]->shape.size() != r)
          node_fail<ShapeError>(n, "input ", i, " ", dims_str(*ts[i]), " has another rank than ",
                                dims_str(*ts[0]));
        for (std::size_t k = 0; k < r; ++k) {
          const Dim& d = ts[i]->shape[k];
          if (static_cast<std::int64_t>(k) == ax) {
            out[k] = out[k].known() && d.known() ? known(out[k].value + d.value) : Dim{};
          } else if (out[k].known() && d.known() && out[k].value != d.value) {
            node_fail<ShapeError>(n, "input ", i, " ", dims_str(*ts[i]), " differs from input 0 ",
                                  dims_str(*ts[0]), " in dim ", k);
          }
        }
      }
      set(n, 0, tensor_type(elem(n, 0), out));
      return;
    }
    if (op == "MaxPool" || op == "AveragePool") {
      if (!a || a->shape.size() < 3) return;
      const auto ks = attr_is(n, "kernel_shape");
      const std::size_t sp = a->shape.size() - 2;
      if (ks.size() != sp) return;
      auto pads = attr_is(n, "pads"), strides = attr_is(n, "strides"),
           dil = attr_is(n, "dilations");
      const bool ceil = attr_i(n, "ceil_mode", 0) != 0;
      const Attribute* ap = n.attr("auto_pad");
      const std::string auto_pad = ap ? ap->s : "NOTSET";
      Dims out{a->shape[0], a->shape[1]};
      for (std::size_t i = 0; i < sp; ++i) {
        const Dim& in = a->shape[2 + i];
        const std::int64_t s = i < strides.size() ? strides[i] : 1;
        const std::int64_t d = i < dil.size() ? dil[i] : 1;
        if (s <= 0 || d <= 0)
          node_fail<ValueError>(n, "strides and dilations must be positive, got ", s, " and ", d);
        if (!in.known() || auto_pad != "NOTSET") {
          out.push_back(Dim{});
          continue;
        }
        const std::int64_t p = pads.size() == 2 * sp ? pads[i] + pads[i + sp] : 0;
        const std::int64_t num = in.value + p - d * (ks[i] - 1) - 1;
        std::int64_t o = (ceil ? (num + s - 1) / s : num / s) + 1;
        if (ceil && (o - 1) * s >= in.value + (pads.size() == 2 * sp ? pads[i] : 0)) --o;
        out.push_back(o > 0 ? known(o) : Dim{});
      }
      set(n, 0, tensor_type(elem(n, 0), out));
      return;
    }
    if (op == "GlobalAveragePool" || op == "GlobalMaxPool") {
      if (!a || a->shape.size() < 2) return;
      Dims out{a->shape[0], a->shape[1]};
      for (std::size_t i = 2; i < a->shape.size(); ++i) out.push_back(known(1));
      set(n, 0, tensor_type(elem(n, 0), out));
      return;
    }
  }
};

}  // namespace

void infer_graph(const Model& model, Graph& graph) {
  std::map<std::string, TypeInfo> types = graph.value_types;
  for (const auto& o : graph.outputs)
    if (o.type.kind != TypeInfo::Kind::Unknown) types[o.name] = o.type;
  for (const auto& i : graph.inputs) types[i.name] = i.type;
  Inferer inf{model, graph, types, {}};
  for (const auto& init : graph.initializers) {
    Dims d;
    for (auto v : init.shape) d.push_back(known(v));
    types[init.name] = tensor_type(init.type, d);
    inf.consts[init.name] = &init;
  }
  for (const auto& n : graph.nodes) inf.node(n);
  graph.value_types = std::move(types);
}

}  // namespace ember::onnx::detail
