// Control flow (If, Loop, Scan), sequences (SequenceEmpty/Construct/Insert/At/Erase/Length,
// SplitToSequence, ConcatFromSequence, SequenceMap) and optionals (Optional,
// OptionalHasElement, OptionalGetElement).
#include "kernels.hpp"

namespace ember::onnx::detail {

namespace {

const Graph& graph_attr(const OpContext& ctx, const char* name) {
  const Attribute& a = ctx.attr_required(name);
  if (a.kind != Attribute::Kind::Graph || !a.g) ctx.fail("attribute '", name, "' must be a graph");
  return *a.g;
}

bool truth(const OpContext& ctx, const Value& v) {
  if (!v.is_tensor() || v.numel() != 1)
    ctx.fail("condition must be a one-element tensor, got ", v.describe());
  return v.to_doubles()[0] != 0;
}

/// Stacks tensors of equal shape along a new axis 0 (an empty list gives [0]).
Value stack0(const OpContext& ctx, const std::vector<Value>& items, ElemType type) {
  if (items.empty())
    return value_from_doubles({}, {0}, type == ElemType::Undefined ? ElemType::Float : type,
                              ctx.device);
  Dims shape = items[0].shape();
  std::vector<Value> parts;
  for (const auto& it : items) {
    if (it.shape() != shape)
      ctx.fail<ShapeError>("scan outputs differ in shape: ", it.describe(), " vs ",
                           items[0].describe());
    Dims s = shape;
    s.insert(s.begin(), 1);
    parts.push_back(reshaped(it, s));
  }
  Dims out = shape;
  out.insert(out.begin(), static_cast<std::int64_t>(items.size()));
  return cat_values(ctx, parts, out, pax(0, out.size()));
}

void op_If(OpContext& ctx) {
  const bool c = truth(ctx, ctx.tensor(0));
  const Graph& g = graph_attr(ctx, c ? "then_branch" : "else_branch");
  auto out = ctx.run_subgraph(g, {});
  if (out.size() != ctx.num_outputs())
    ctx.fail("the branch gives ", out.size(), " outputs, the node has ", ctx.num_outputs());
  for (std::size_t i = 0; i < out.size(); ++i) ctx.set(i, out[i]);
}

void op_Loop(OpContext& ctx) {
  const Graph& body = graph_attr(ctx, "body");
  const bool has_m = ctx.has(0);
  const std::int64_t m =
      has_m ? host_ints(ctx.tensor(0)).at(0) : std::numeric_limits<std::int64_t>::max();
  bool cond = ctx.has(1) ? truth(ctx, ctx.tensor(1)) : true;
  const std::size_t n_carried = ctx.num_inputs() > 2 ? ctx.num_inputs() - 2 : 0;
  std::vector<Value> carried;
  for (std::size_t i = 0; i < n_carried; ++i) carried.push_back(ctx.in(2 + i));
  if (body.outputs.size() < 1 + n_carried || body.inputs.size() != 2 + n_carried)
    ctx.fail("the body must take 2 + ", n_carried, " inputs and give at least 1 + ", n_carried,
             " outputs");
  const std::size_t n_scan = body.outputs.size() - 1 - n_carried;
  std::vector<std::vector<Value>> scans(n_scan);
  if (!has_m && !ctx.has(1)) ctx.fail("Loop needs a trip count or a condition");
  for (std::int64_t it = 0; it < m && cond; ++it) {
    std::vector<Value> in{
        value_from_int64s({it}, {}, ElemType::Int64, ctx.device),
        Value::from_data(TensorData(std::vector<bool>{cond}, Shape{}), ctx.device, ElemType::Bool)};
    in.insert(in.end(), carried.begin(), carried.end());
    auto out = ctx.run_subgraph(body, in);
    cond = truth(ctx, out[0]);
    for (std::size_t i = 0; i < n_carried; ++i) carried[i] = out[1 + i];
    for (std::size_t i = 0; i < n_scan; ++i) scans[i].push_back(out[1 + n_carried + i]);
    if (it > (1 << 24)) ctx.fail("more than 2^24 iterations");
  }
  for (std::size_t i = 0; i < n_carried; ++i) ctx.set(i, carried[i]);
  for (std::size_t i = 0; i < n_scan; ++i) {
    const ElemType t = body.outputs[1 + n_carried + i].type.elem;
    ctx.set(n_carried + i, stack0(ctx, scans[i], t));
  }
}

void op_Scan(OpContext& ctx) {
  const Graph& body = graph_attr(ctx, "body");
  const auto n_in = static_cast<std::size_t>(ctx.attr_int("num_scan_inputs", 0));
  if (ctx.opset < 9)
    ctx.fail<UnsupportedError>("Scan before opset 9 (sequence_lens form) is not supported");
  if (n_in > ctx.num_inputs()) ctx.fail("num_scan_inputs exceeds the inputs");
  const std::size_t n_state = ctx.num_inputs() - n_in;
  if (body.outputs.size() < n_state || body.inputs.size() != n_state + n_in)
    ctx.fail("the body must take ", n_state + n_in, " inputs and give at least ", n_state,
             " outputs");
  const std::size_t n_out = body.outputs.size() - n_state;
  const Dims in_axes = ctx.attr_ints("scan_input_axes", Dims(n_in, 0));
  const Dims in_dirs = ctx.attr_ints("scan_input_directions", Dims(n_in, 0));
  const Dims out_axes = ctx.attr_ints("scan_output_axes", Dims(n_out, 0));
  const Dims out_dirs = ctx.attr_ints("scan_output_directions", Dims(n_out, 0));
  std::vector<Value> state;
  for (std::size_t i = 0; i < n_state; ++i) state.push_back(ctx.in(i));
  std::int64_t len = -1;
  std::vector<std::int64_t> axes(n_in);
  for (std::size_t i = 0; i < n_in; ++i) {
    const Value& x = ctx.tensor(n_state + i);
    axes[i] = norm_axis(ctx, i < in_axes.size() ? in_axes[i] : 0, x.rank());
    const std::int64_t l = x.shape()[static_cast<std::size_t>(axes[i])];
    if (len >= 0 && l != len)
      ctx.fail<ShapeError>("scan inputs differ in length (", l, " vs ", len, ")");
    len = l;
  }
  if (len < 0) len = 0;
  std::vector<std::vector<Value>> outs(n_out);
  for (std::int64_t t = 0; t < len; ++t) {
    std::vector<Value> in = state;
    for (std::size_t i = 0; i < n_in; ++i) {
      const Value& x = ctx.tensor(n_state + i);
      const std::int64_t pos = (i < in_dirs.size() && in_dirs[i]) ? len - 1 - t : t;
      Value sl = narrow_along(ctx, x, axes[i], pos, 1);
      Dims s = sl.shape();
      s.erase(s.begin() + axes[i]);
      in.push_back(reshaped(sl, s));
    }
    auto out = ctx.run_subgraph(body, in);
    for (std::size_t i = 0; i < n_state; ++i) state[i] = out[i];
    for (std::size_t i = 0; i < n_out; ++i) outs[i].push_back(out[n_state + i]);
  }
  for (std::size_t i = 0; i < n_state; ++i) ctx.set(i, state[i]);
  for (std::size_t i = 0; i < n_out; ++i) {
    auto items = outs[i];
    if (i < out_dirs.size() && out_dirs[i]) std::reverse(items.begin(), items.end());
    Value v = stack0(ctx, items, body.outputs[n_state + i].type.elem);
    const std::int64_t ax = norm_axis(ctx, i < out_axes.size() ? out_axes[i] : 0, v.rank());
    if (ax != 0) {
      Dims perm;
      for (std::int64_t k = 1; k <= ax; ++k) perm.push_back(k);
      perm.push_back(0);
      for (std::int64_t k = ax + 1; k < static_cast<std::int64_t>(v.rank()); ++k) perm.push_back(k);
      Dims ps;
      for (auto p : perm) ps.push_back(v.shape()[static_cast<std::size_t>(p)]);
      const auto pp = padded_perm(perm);
      v = map_any(ctx, v, ps, [&](const auto& s) { return s.permute(pp); });
    }
    ctx.set(n_state + i, v);
  }
}

// ---- sequences -------------------------------------------------------------------------------

const Value& seq(const OpContext& ctx, std::size_t i) {
  const Value& v = ctx.in(i);
  if (!v.is_sequence()) ctx.fail("input ", i, " must be a sequence, got ", v.describe());
  return v;
}

std::int64_t seq_pos(const OpContext& ctx, const Value& s, std::size_t input, bool insert) {
  const auto n = static_cast<std::int64_t>(s.items().size());
  std::int64_t p = host_ints(ctx.tensor(input)).at(0);
  if (p < -n || p > (insert ? n : n - 1))
    ctx.fail<ShapeError>("position ", p, " is out of range for a sequence of ", n);
  return p < 0 ? p + n : p;
}

void op_SequenceEmpty(OpContext& ctx) {
  ctx.set(0, Value::sequence(static_cast<ElemType>(ctx.attr_int("dtype", 1)), {}));
}
void op_SequenceConstruct(OpContext& ctx) {
  std::vector<Value> items;
  for (std::size_t i = 0; i < ctx.num_inputs(); ++i) items.push_back(ctx.tensor(i));
  ctx.set(0, Value::sequence(items.empty() ? ElemType::Undefined : items[0].type(), items));
}
void op_SequenceInsert(OpContext& ctx) {
  const Value& s = seq(ctx, 0);
  auto items = s.items();
  const std::int64_t p =
      ctx.has(2) ? seq_pos(ctx, s, 2, true) : static_cast<std::int64_t>(items.size());
  items.insert(items.begin() + p, ctx.tensor(1));
  ctx.set(
      0, Value::sequence(s.type() == ElemType::Undefined ? ctx.tensor(1).type() : s.type(), items));
}
void op_SequenceAt(OpContext& ctx) {
  const Value& s = seq(ctx, 0);
  ctx.set(0, s.items().at(static_cast<std::size_t>(seq_pos(ctx, s, 1, false))));
}
void op_SequenceErase(OpContext& ctx) {
  const Value& s = seq(ctx, 0);
  auto items = s.items();
  if (items.empty()) ctx.fail<ShapeError>("cannot erase from an empty sequence");
  const std::int64_t p =
      ctx.has(1) ? seq_pos(ctx, s, 1, false) : static_cast<std::int64_t>(items.size()) - 1;
  items.erase(items.begin() + p);
  ctx.set(0, Value::sequence(s.type(), items));
}
void op_SequenceLength(OpContext& ctx) {
  ctx.set(0, value_from_int64s({static_cast<std::int64_t>(seq(ctx, 0).items().size())}, {},
                               ElemType::Int64, ctx.device));
}
void op_SplitToSequence(OpContext& ctx) {
  const Value& x = ctx.tensor(0);
  const std::int64_t axis = norm_axis(ctx, ctx.attr_int("axis", 0), x.rank());
  const bool keep = ctx.attr_int("keepdims", 1) != 0;
  const std::int64_t n = x.shape()[static_cast<std::size_t>(axis)];
  Dims sizes;
  bool squeeze = false;
  if (ctx.has(1)) {
    const Value& sp = ctx.tensor(1);
    if (sp.rank() == 0) {
      const std::int64_t c = host_ints(sp)[0];
      if (c <= 0) ctx.fail("split must be positive");
      for (std::int64_t s = 0; s < n; s += c) sizes.push_back(std::min(c, n - s));
    } else {
      sizes = host_ints(sp);
    }
  } else {
    sizes.assign(static_cast<std::size_t>(n), 1);
    squeeze = !keep;
  }
  std::vector<Value> items;
  std::int64_t start = 0;
  for (auto s : sizes) {
    Value part = narrow_along(ctx, x, axis, start, s);
    if (squeeze) {
      Dims d = part.shape();
      d.erase(d.begin() + axis);
      part = reshaped(part, d);
    }
    items.push_back(part);
    start += s;
  }
  if (start != n) ctx.fail<ShapeError>("split sizes do not sum to ", n);
  ctx.set(0, Value::sequence(x.type(), items));
}
void op_ConcatFromSequence(OpContext& ctx) {
  const Value& s = seq(ctx, 0);
  if (s.items().empty()) ctx.fail<ShapeError>("cannot concatenate an empty sequence");
  const bool new_axis = ctx.attr_int("new_axis", 0) != 0;
  const std::size_t r = s.items()[0].rank() + (new_axis ? 1 : 0);
  const std::int64_t axis = norm_axis(ctx, ctx.attr_int("axis", 0), r);
  std::vector<Value> parts;
  Dims out;
  for (const auto& it : s.items()) {
    Value v = it;
    if (new_axis) {
      Dims d = v.shape();
      d.insert(d.begin() + axis, 1);
      v = reshaped(v, d);
    }
    if (out.empty())
      out = v.shape();
    else
      out[static_cast<std::size_t>(axis)] += v.shape()[static_cast<std::size_t>(axis)];
    parts.push_back(v);
  }
  ctx.set(0, cat_values(ctx, parts, out, pax(axis, r)));
}
void op_SequenceMap(OpContext& ctx) {
  const Graph& body = graph_attr(ctx, "body");
  const Value& s = seq(ctx, 0);
  const std::size_t n = s.items().size();
  std::vector<std::vector<Value>> outs(ctx.num_outputs());
  for (std::size_t k = 0; k < n; ++k) {
    std::vector<Value> in{s.items()[k]};
    for (std::size_t i = 1; i < ctx.num_inputs(); ++i) {
      const Value& v = ctx.in(i);
      in.push_back(v.is_sequence() ? v.items().at(k) : v);
    }
    auto out = ctx.run_subgraph(body, in);
    for (std::size_t o = 0; o < out.size() && o < outs.size(); ++o) outs[o].push_back(out[o]);
  }
  for (std::size_t o = 0; o < outs.size(); ++o)
    ctx.set(o, Value::sequence(outs[o].empty() ? body.outputs[o].type.elem : outs[o][0].type(),
                               outs[o]));
}

// ---- optionals --------------------------------------------------------------------------------

void op_Optional(OpContext& ctx) {
  if (ctx.has(0)) {
    ctx.set(0, ctx.in(0));
    return;
  }
  const Attribute* t = ctx.attr("type");
  ctx.set(0, Value::none(t ? t->tp.elem : ElemType::Undefined));
}
void op_OptionalHasElement(OpContext& ctx) {
  const bool has = ctx.has(0);
  ctx.set(
      0, Value::from_data(TensorData(std::vector<bool>{has}, Shape{}), ctx.device, ElemType::Bool));
}
void op_OptionalGetElement(OpContext& ctx) {
  if (!ctx.has(0)) ctx.fail("the optional input is empty");
  ctx.set(0, ctx.in(0));
}

}  // namespace

void register_control(OpRegistry& r) {
  r.add("If", op_If);
  r.add("Loop", op_Loop);
  r.add("Scan", op_Scan);
}

void register_sequence(OpRegistry& r) {
#define REG(Name) r.add(#Name, op_##Name)
  REG(SequenceEmpty);
  REG(SequenceConstruct);
  REG(SequenceInsert);
  REG(SequenceAt);
  REG(SequenceErase);
  REG(SequenceLength);
  REG(SplitToSequence);
  REG(ConcatFromSequence);
  REG(SequenceMap);
  REG(Optional);
  REG(OptionalHasElement);
  REG(OptionalGetElement);
#undef REG
}

}  // namespace ember::onnx::detail
