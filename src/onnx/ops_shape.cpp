// Shape and layout operators: Constant, Shape, Size, Reshape, Flatten, Squeeze, Unsqueeze,
// Transpose, Concat, Split, Slice, Expand, Tile, ConstantOfShape, Range, Pad, Trilu,
// EyeLike, DepthToSpace, SpaceToDepth, CenterCropPad.
#include <numeric>

#include "kernels.hpp"

namespace ember::onnx::detail {

namespace {

/// Checks that attribute `a` has kind `k` (ValueError naming the node otherwise).
void need_kind(const OpContext& ctx, const Attribute& a, Attribute::Kind k) {
  if (a.kind != k)
    ctx.fail("attribute '", a.name, "' must be of kind ", Attribute::kind_name(k), ", got ",
             Attribute::kind_name(a.kind));
}

Value from_attribute_tensor(const OpContext& ctx, const Attribute& a, const Device& dev) {
  need_kind(ctx, a, Attribute::Kind::Tensor);
  if (a.t_type == ElemType::String) return Value::strings(a.t_shape, a.t_strings);
  if (!a.t) ctx.fail("attribute '", a.name, "' holds no tensor data");
  return Value::from_data(*a.t, dev, a.t_type);
}

void op_Constant(OpContext& ctx) {
  for (const auto& a : ctx.node.attributes) {
    using K = Attribute::Kind;
    if (a.name == "value") {
      ctx.set(0, from_attribute_tensor(ctx, a, ctx.device));
    } else if (a.name == "value_float") {
      need_kind(ctx, a, K::Float);
      ctx.set(0, value_from_doubles({a.f}, {}, ElemType::Float, ctx.device));
    } else if (a.name == "value_floats") {
      need_kind(ctx, a, K::Floats);
      ctx.set(0, value_from_doubles(a.floats, {static_cast<std::int64_t>(a.floats.size())},
                                    ElemType::Float, ctx.device));
    } else if (a.name == "value_int") {
      need_kind(ctx, a, K::Int);
      ctx.set(0, value_from_int64s({a.i}, {}, ElemType::Int64, ctx.device));
    } else if (a.name == "value_ints") {
      need_kind(ctx, a, K::Ints);
      ctx.set(0, value_from_int64s(a.ints, {static_cast<std::int64_t>(a.ints.size())},
                                   ElemType::Int64, ctx.device));
    } else if (a.name == "value_string") {
      need_kind(ctx, a, K::String);
      ctx.set(0, Value::strings({}, {a.s}));
    } else if (a.name == "value_strings") {
      need_kind(ctx, a, K::Strings);
      ctx.set(0, Value::strings({static_cast<std::int64_t>(a.strings.size())}, a.strings));
    } else {
      ctx.fail<UnsupportedError>("attribute '", a.name, "' is not supported");
    }
    return;
  }
  ctx.fail("needs one of the attributes value, value_float(s), value_int(s), value_string(s)");
}

void op_Shape(OpContext& ctx) {
  const Value& x = ctx.in(0);
  const auto r = static_cast<std::int64_t>(x.rank());
  std::int64_t s = ctx.attr_int("start", 0), e = ctx.attr_int("end", r);
  if (s < 0) s += r;
  if (e < 0) e += r;
  s = std::clamp<std::int64_t>(s, 0, r);
  e = std::clamp<std::int64_t>(e, 0, r);
  Dims d;
  for (std::int64_t i = s; i < e; ++i) d.push_back(x.shape()[static_cast<std::size_t>(i)]);
  ctx.set(0, Value::int64s(d, ctx.device));
}

void op_Size(OpContext& ctx) {
  ctx.set(0, value_from_int64s({ctx.in(0).numel()}, {}, ElemType::Int64, ctx.device));
}

void op_Reshape(OpContext& ctx) {
  const Value& x = ctx.tensor(0);
  Dims shape = ctx.opset < 5 ? ctx.attr_ints("shape") : host_ints(ctx.tensor(1));
  const bool allowzero = ctx.attr_int("allowzero", 0) != 0;
  int infer = -1;
  std::int64_t known = 1;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0 && !allowzero) {
      if (i >= x.rank())
        ctx.fail<ShapeError>("shape entry ", i, " is 0 but the input ", x.describe(), " has rank ",
                             x.rank());
      shape[i] = x.shape()[i];
    }
    if (shape[i] == -1) {
      if (infer >= 0) ctx.fail<ShapeError>("the shape ", Shape(shape), " has more than one -1");
      infer = static_cast<int>(i);
      continue;
    }
    if (shape[i] < 0) ctx.fail<ShapeError>("invalid shape entry ", shape[i]);
    known *= shape[i];
  }
  if (infer >= 0) {
    if (known == 0 || x.numel() % known != 0)
      ctx.fail<ShapeError>("cannot reshape ", x.describe(), " into ", Shape(shape));
    shape[static_cast<std::size_t>(infer)] = x.numel() / known;
  } else if (known != x.numel()) {
    ctx.fail<ShapeError>("cannot reshape ", x.describe(), " (", x.numel(), " elements) into ",
                         Shape(shape), " (", known, " elements)");
  }
  ctx.set(0, reshaped(x, shape));
}

void op_Flatten(OpContext& ctx) {
  const Value& x = ctx.tensor(0);
  const auto r = x.rank();
  std::int64_t axis = ctx.attr_int("axis", 1);
  if (axis < -static_cast<std::int64_t>(r) || axis > static_cast<std::int64_t>(r))
    ctx.fail<ShapeError>("axis ", axis, " is out of range for ", x.describe());
  if (axis < 0) axis += static_cast<std::int64_t>(r);
  std::int64_t a = 1, b = 1;
  for (std::size_t i = 0; i < r; ++i) (static_cast<std::int64_t>(i) < axis ? a : b) *= x.shape()[i];
  ctx.set(0, reshaped(x, {a, b}));
}

void op_Squeeze(OpContext& ctx) {
  const Value& x = ctx.tensor(0);
  bool given = false;
  Dims axes = axes_from(ctx, 1, x.rank(), &given);
  Dims out;
  for (std::size_t i = 0; i < x.rank(); ++i) {
    const bool listed =
        std::find(axes.begin(), axes.end(), static_cast<std::int64_t>(i)) != axes.end();
    if (listed && x.shape()[i] != 1)
      ctx.fail<ShapeError>("cannot squeeze axis ", i, " of size ", x.shape()[i], " (input ",
                           x.describe(), ")");
    if ((given && !listed) || (!given && x.shape()[i] != 1)) out.push_back(x.shape()[i]);
  }
  ctx.set(0, reshaped(x, out));
}

void op_Unsqueeze(OpContext& ctx) {
  const Value& x = ctx.tensor(0);
  Dims axes = ctx.has(1) ? host_ints(ctx.tensor(1)) : ctx.attr_ints("axes");
  const std::size_t r = x.rank() + axes.size();
  for (auto& a : axes) a = norm_axis(ctx, a, r);
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end())
    ctx.fail<ShapeError>("axes ", Shape(axes), " contain a duplicate");
  Dims out;
  std::size_t k = 0;
  for (std::size_t i = 0; i < r; ++i) {
    if (std::binary_search(axes.begin(), axes.end(), static_cast<std::int64_t>(i)))
      out.push_back(1);
    else
      out.push_back(x.shape()[k++]);
  }
  ctx.set(0, reshaped(x, out));
}

void op_Transpose(OpContext& ctx) {
  const Value& x = ctx.tensor(0);
  const std::size_t r = x.rank();
  Dims perm = ctx.attr_ints("perm");
  if (perm.empty())
    for (std::size_t i = 0; i < r; ++i) perm.push_back(static_cast<std::int64_t>(r - 1 - i));
  if (perm.size() != r)
    ctx.fail<ShapeError>("perm ", Shape(perm), " does not list the ", r, " axes of ", x.describe());
  for (auto& p : perm) p = norm_axis(ctx, p, r);
  Dims out;
  for (auto p : perm) out.push_back(x.shape()[static_cast<std::size_t>(p)]);
  const auto pp = padded_perm(perm);
  if (x.type() == ElemType::String) {
    // host permutation of strings
    const auto& s = x.string_values();
    std::vector<std::string> res(s.size());
    Dims in_strides(r, 1);
    for (std::size_t i = r; i-- > 1;) in_strides[i - 1] = in_strides[i] * x.shape()[i];
    Dims idx(r, 0);
    for (std::size_t o = 0; o < res.size(); ++o) {
      std::int64_t off = 0;
      for (std::size_t d = 0; d < r; ++d)
        off += idx[d] * in_strides[static_cast<std::size_t>(perm[d])];
      res[o] = s[static_cast<std::size_t>(off)];
      for (std::size_t d = r; d-- > 0;) {
        if (++idx[d] < out[d]) break;
        idx[d] = 0;
      }
    }
    ctx.set(0, Value::strings(out, std::move(res)));
    return;
  }
  ctx.set(0, map_any(ctx, x, out, [&](const auto& s) { return s.permute(pp); }));
}

void op_Concat(OpContext& ctx) {
  if (ctx.num_inputs() == 0) ctx.fail("needs at least one input");
  const Value& first = ctx.tensor(0);
  const std::size_t r = first.rank();
  if (r == 0) ctx.fail<ShapeError>("inputs must have rank >= 1, got ", first.describe());
  const std::int64_t axis = norm_axis(ctx, ctx.attr_int("axis", 0), r);
  Dims out = first.shape();
  for (std::size_t i = 1; i < ctx.num_inputs(); ++i) {
    const Value& v = ctx.tensor(i);
    if (v.rank() != r || v.type() != first.type())
      ctx.fail<ShapeError>("input ", i, " ", v.describe(), " does not match input 0 ",
                           first.describe());
    for (std::size_t d = 0; d < r; ++d) {
      if (static_cast<std::int64_t>(d) == axis) continue;
      if (v.shape()[d] != first.shape()[d])
        ctx.fail<ShapeError>("input ", i, " ", v.describe(), " differs from input 0 ",
                             first.describe(), " in dim ", d);
    }
    out[static_cast<std::size_t>(axis)] += v.shape()[static_cast<std::size_t>(axis)];
  }
  if (first.type() == ElemType::String) {
    std::int64_t outer = 1;
    for (std::int64_t d = 0; d < axis; ++d) outer *= first.shape()[static_cast<std::size_t>(d)];
    std::vector<std::string> res;
    for (std::int64_t o = 0; o < outer; ++o)
      for (std::size_t i = 0; i < ctx.num_inputs(); ++i) {
        const Value& v = ctx.tensor(i);
        const std::int64_t chunk = v.numel() / std::max<std::int64_t>(outer, 1);
        for (std::int64_t k = 0; k < chunk; ++k)
          res.push_back(v.string_values()[static_cast<std::size_t>(o * chunk + k)]);
      }
    ctx.set(0, Value::strings(out, std::move(res)));
    return;
  }
  const std::int64_t pa = pax(axis, r);
  std::vector<Value> parts;
  for (std::size_t i = 0; i < ctx.num_inputs(); ++i) parts.push_back(ctx.tensor(i));
  ctx.set(0, cat_values(ctx, parts, out, pa));
}

/// Narrow of any tensor along a logical axis.
Value narrow_value(const OpContext& ctx, const Value& x, std::int64_t axis, std::int64_t start,
                   std::int64_t len) {
  Dims out = x.shape();
  out[static_cast<std::size_t>(axis)] = len;
  const std::int64_t pa = pax(axis, x.rank());
  return map_any(ctx, x, out, [&](const auto& s) { return s.narrow(pa, start, len); });
}

void op_Split(OpContext& ctx) {
  const Value& x = ctx.tensor(0);
  const std::int64_t axis = norm_axis(ctx, ctx.attr_int("axis", 0), x.rank());
  const std::int64_t n = x.shape()[static_cast<std::size_t>(axis)];
  Dims sizes;
  if (ctx.has(1))
    sizes = host_ints(ctx.tensor(1));
  else if (ctx.attr("split"))
    sizes = ctx.attr_ints("split");
  const auto outs = static_cast<std::int64_t>(ctx.num_outputs());
  if (sizes.empty()) {
    const std::int64_t parts = ctx.attr("num_outputs") ? ctx.attr_int("num_outputs", outs) : outs;
    if (parts <= 0) ctx.fail("num_outputs must be positive");
    const std::int64_t chunk = ctx.opset >= 18 ? (n + parts - 1) / parts : n / parts;
    if (ctx.opset < 18 && n % parts != 0)
      ctx.fail<ShapeError>("dim ", n, " cannot be split into ", parts, " equal parts");
    for (std::int64_t i = 0; i < parts; ++i)
      sizes.push_back(std::max<std::int64_t>(0, std::min(chunk, n - i * chunk)));
  }
  std::int64_t sum = 0;
  for (auto s : sizes) {
    if (s < 0) ctx.fail<ShapeError>("negative split size ", s);
    sum += s;
  }
  if (sum != n)
    ctx.fail<ShapeError>("split sizes ", Shape(sizes), " do not sum to the dim size ", n);
  if (static_cast<std::int64_t>(sizes.size()) != outs)
    ctx.fail<ShapeError>(sizes.size(), " split sizes for ", outs, " outputs");
  std::int64_t start = 0;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    ctx.set(i, narrow_value(ctx, x, axis, start, sizes[i]));
    start += sizes[i];
  }
}

void op_Slice(OpContext& ctx) {
  const Value& x = ctx.tensor(0);
  const std::size_t r = x.rank();
  Dims starts, ends, axes, steps;
  if (ctx.opset < 10) {
    starts = ctx.attr_ints("starts");
    ends = ctx.attr_ints("ends");
    axes = ctx.attr_ints("axes");
  } else {
    starts = host_ints(ctx.tensor(1));
    ends = host_ints(ctx.tensor(2));
    if (ctx.has(3)) axes = host_ints(ctx.tensor(3));
    if (ctx.has(4)) steps = host_ints(ctx.tensor(4));
  }
  if (axes.empty())
    for (std::size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<std::int64_t>(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    ctx.fail<ShapeError>("starts, ends, axes and steps must have the same length");
  std::vector<Slice> slices(R, Slice{});
  Dims out = x.shape();
  std::vector<bool> seen(r, false);
  for (std::size_t k = 0; k < starts.size(); ++k) {
    const std::int64_t a = norm_axis(ctx, axes[k], r);
    if (seen[static_cast<std::size_t>(a)]) ctx.fail<ShapeError>("axis ", a, " is sliced twice");
    seen[static_cast<std::size_t>(a)] = true;
    const std::int64_t dim = x.shape()[static_cast<std::size_t>(a)];
    const std::int64_t step = steps[k];
    if (step == 0) ctx.fail<ShapeError>("slice step must not be 0");
    std::int64_t s = starts[k], e = ends[k];
    // ONNX's clamping (Operators.md, Slice).
    if (s < 0) s += dim;
    if (e < 0 && e > std::numeric_limits<std::int64_t>::min() / 2) e += dim;
    std::int64_t count;
    if (step > 0) {
      s = std::clamp<std::int64_t>(s, 0, dim);
      e = std::clamp<std::int64_t>(e, 0, dim);
      count = e > s ? (e - s + step - 1) / step : 0;
    } else {
      s = std::clamp<std::int64_t>(s, 0, dim - 1);
      e = std::clamp<std::int64_t>(e, -1, dim - 1);
      count = s > e ? (s - e + (-step) - 1) / (-step) : 0;
    }
    out[static_cast<std::size_t>(a)] = count;
    Slice sl;
    if (count == 0) {
      sl = Slice{0, 0, 1, false};
    } else if (step > 0) {
      sl = Slice{s, s + (count - 1) * step + 1, step, false};
    } else {
      const std::int64_t last = s + (count - 1) * step;
      sl = Slice{last, s + 1, step, false};
    }
    slices[static_cast<std::size_t>(pax(a, r))] = sl;
  }
  ctx.set(0, map_any(ctx, x, out, [&](const auto& st) { return st.slice(slices); }));
}

void op_Expand(OpContext& ctx) {
  const Value& x = ctx.tensor(0);
  const Dims shape = host_ints(ctx.tensor(1));
  const Dims out = broadcast_dims(ctx, x.shape(), shape);
  ctx.set(0, expand_to(x, out));
}

void op_Tile(OpContext& ctx) {
  const Value& x = ctx.tensor(0);
  const Dims reps = host_ints(ctx.tensor(1));
  if (reps.size() != x.rank())
    ctx.fail<ShapeError>("repeats has ", reps.size(), " entries for ", x.describe());
  Dims r8(R - reps.size(), 1);
  r8.insert(r8.end(), reps.begin(), reps.end());
  Dims out = x.shape();
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (reps[i] < 0) ctx.fail("negative repeat ", reps[i]);
    out[i] *= reps[i];
  }
  ctx.set(0, map_any(ctx, x, out, [&](const auto& s) { return s.repeat(r8); }));
}

void op_ConstantOfShape(OpContext& ctx) {
  const Dims shape = host_ints(ctx.tensor(0));
  for (auto d : shape)
    if (d < 0) ctx.fail<ShapeError>("negative dim in shape ", Shape(shape));
  ElemType type = ElemType::Float;
  double v = 0;
  if (const Attribute* a = ctx.attr("value")) {
    const Value t = from_attribute_tensor(ctx, *a, Device::cpu());
    if (t.numel() != 1 || t.type() == ElemType::String)
      ctx.fail("attribute 'value' must hold one number, got ", t.describe());
    type = t.type();
    v = t.to_doubles().at(0);
  }
  const DType sd = storage_dtype(type);
  const Shape ps = P(shape);
  if (is_float(sd))
    ctx.set(0, Value::tensor(type, shape, FloatStore::full(ps, v, ctx.device, sd)));
  else if (is_int(sd))
    ctx.set(0, Value::tensor(type, shape, IntStore::full(ps, v, ctx.device, sd)));
  else
    ctx.set(0, Value::tensor(type, shape, BoolStore::full(ps, v, ctx.device, sd)));
}

void op_Range(OpContext& ctx) {
  const Value& s = ctx.tensor(0);
  const ElemType t = s.type();
  if (is_int_type(t)) {
    const std::int64_t a = host_ints(s)[0], b = host_ints(ctx.tensor(1))[0],
                       d = host_ints(ctx.tensor(2))[0];
    if (d == 0) ctx.fail("delta must not be 0");
    std::int64_t n = 0;
    if ((d > 0 && b > a) || (d < 0 && b < a)) n = (b - a + d + (d > 0 ? -1 : 1)) / d;
    std::vector<std::int64_t> v(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = a + i * d;
    ctx.set(0, value_from_int64s(v, {n}, t, ctx.device));
    return;
  }
  const double a = host_scalar(s), b = host_scalar(ctx.tensor(1)), d = host_scalar(ctx.tensor(2));
  if (d == 0) ctx.fail("delta must not be 0");
  const double nn = std::ceil((b - a) / d);
  const std::int64_t n = nn > 0 ? static_cast<std::int64_t>(nn) : 0;
  std::vector<double> v(static_cast<std::size_t>(n));
  if (t == ElemType::Float) {
    const float fa = static_cast<float>(a), fd = static_cast<float>(d);
    for (std::int64_t i = 0; i < n; ++i)
      v[static_cast<std::size_t>(i)] = fa + static_cast<float>(i) * fd;
  } else {
    for (std::int64_t i = 0; i < n; ++i)
      v[static_cast<std::size_t>(i)] = a + static_cast<double>(i) * d;
  }
  ctx.set(0, value_from_doubles(v, {n}, t, ctx.device));
}

/// Wrap padding along one logical axis by concatenating slices.
Value wrap_pad_axis(const OpContext& ctx, const Value& x, std::int64_t axis, std::int64_t before,
                    std::int64_t after) {
  const std::int64_t n = x.shape()[static_cast<std::size_t>(axis)];
  Value cur = x;
  if (before < 0) {
    cur = narrow_value(ctx, cur, axis, -before, n + before);
    before = 0;
  }
  const std::int64_t n2 = cur.shape()[static_cast<std::size_t>(axis)];
  if (after < 0) {
    cur = narrow_value(ctx, cur, axis, 0, n2 + after);
    after = 0;
  }
  if (before == 0 && after == 0) return cur;
  const std::int64_t m = cur.shape()[static_cast<std::size_t>(axis)];
  if (m == 0) ctx.fail<ShapeError>("wrap padding of an empty axis");
  std::vector<Value> parts;
  // before: the last `before` elements, cyclically
  for (std::int64_t k = before; k > 0;) {
    const std::int64_t take = ((k - 1) % m) + 1;
    parts.push_back(narrow_value(ctx, cur, axis, m - take, take));
    k -= take;
  }
  parts.push_back(cur);
  for (std::int64_t k = after; k > 0;) {
    const std::int64_t take = std::min(k, m);
    parts.push_back(narrow_value(ctx, cur, axis, 0, take));
    k -= take;
  }
  Dims out = cur.shape();
  out[static_cast<std::size_t>(axis)] = m + before + after;
  const std::int64_t pa = pax(axis, x.rank());
  return cat_values(ctx, parts, out, pa);
}

void op_Pad(OpContext& ctx) {
  const Value& x = ctx.tensor(0);
  const std::size_t r = x.rank();
  const std::string mode = ctx.attr_string("mode", "constant");
  Dims pads;
  double value = 0;
  Dims axes;
  if (ctx.opset < 11) {
    pads = ctx.attr_ints("pads");
    value = ctx.attr_float("value", 0.0);
  } else {
    pads = host_ints(ctx.tensor(1));
    if (ctx.has(2) && ctx.tensor(2).numel() > 0) value = host_scalar(ctx.tensor(2));
    if (ctx.has(3)) axes = host_ints(ctx.tensor(3));
  }
  if (axes.empty())
    for (std::size_t i = 0; i < r; ++i) axes.push_back(static_cast<std::int64_t>(i));
  for (auto& a : axes) a = norm_axis(ctx, a, r);
  if (pads.size() != 2 * axes.size())
    ctx.fail<ShapeError>("pads has ", pads.size(), " entries for ", axes.size(), " axes");
  Dims before(r, 0), after(r, 0);
  for (std::size_t k = 0; k < axes.size(); ++k) {
    before[static_cast<std::size_t>(axes[k])] = pads[k];
    after[static_cast<std::size_t>(axes[k])] = pads[k + axes.size()];
  }
  Dims out = x.shape();
  for (std::size_t i = 0; i < r; ++i) {
    out[i] += before[i] + after[i];
    if (out[i] < 0) ctx.fail<ShapeError>("pads crop more than axis ", i, " of ", x.describe());
  }
  if (mode == "wrap") {
    Value cur = x;
    for (std::size_t i = 0; i < r; ++i)
      if (before[i] || after[i])
        cur = wrap_pad_axis(ctx, cur, static_cast<std::int64_t>(i), before[i], after[i]);
    ctx.set(0, cur);
    return;
  }
  PadMode pm;
  if (mode == "constant")
    pm = PadMode::Constant;
  else if (mode == "reflect")
    pm = PadMode::Reflect;
  else if (mode == "edge")
    pm = PadMode::Edge;
  else
    ctx.fail("unknown mode \"", mode, "\"");
  Dims ember_pads;
  for (std::size_t k = 0; k < r; ++k) {
    const std::size_t d = r - 1 - k;
    ember_pads.push_back(before[d]);
    ember_pads.push_back(after[d]);
  }
  ctx.set(0, map_any(ctx, x, out, [&](const auto& s) { return s.pad(ember_pads, pm, value); }));
}

void op_Trilu(OpContext& ctx) {
  const Value& x = ctx.tensor(0);
  if (x.rank() < 2) ctx.fail<ShapeError>("input must have rank >= 2, got ", x.describe());
  const bool upper = ctx.attr_int("upper", 1) != 0;
  const std::int64_t k = ctx.has(1) ? host_ints(ctx.tensor(1))[0] : 0;
  ctx.set(0,
          map_any(ctx, x, x.shape(), [&](const auto& s) { return upper ? s.triu(k) : s.tril(k); }));
}

void op_EyeLike(OpContext& ctx) {
  const Value& x = ctx.tensor(0);
  if (x.rank() != 2) ctx.fail<ShapeError>("input must have rank 2, got ", x.describe());
  const ElemType t = ctx.attr("dtype") ? static_cast<ElemType>(ctx.attr_int("dtype", 1)) : x.type();
  const std::int64_t k = ctx.attr_int("k", 0);
  const std::int64_t rows = x.shape()[0], cols = x.shape()[1];
  std::vector<double> v(static_cast<std::size_t>(rows * cols), 0.0);
  for (std::int64_t i = 0; i < rows; ++i)
    if (i + k >= 0 && i + k < cols) v[static_cast<std::size_t>(i * cols + i + k)] = 1;
  ctx.set(0, value_from_doubles(v, {rows, cols}, t, ctx.device));
}

void op_DepthToSpace(OpContext& ctx) {
  const Value& x = ctx.tensor(0);
  if (x.rank() != 4) ctx.fail<ShapeError>("input must be [N, C, H, W], got ", x.describe());
  const std::int64_t b = ctx.attr_int("blocksize", 0);
  const std::string mode = ctx.attr_string("mode", "DCR");
  const auto& s = x.shape();
  const std::int64_t n = s[0], c = s[1], h = s[2], w = s[3];
  if (b <= 0 || c % (b * b) != 0)
    ctx.fail<ShapeError>("channels ", c, " are not divisible by blocksize^2 (", b, ")");
  const std::int64_t oc = c / (b * b);
  Value t = mode == "DCR" ? reshaped(x, {n, b, b, oc, h, w}) : reshaped(x, {n, oc, b, b, h, w});
  const Dims perm = mode == "DCR" ? Dims{0, 3, 4, 1, 5, 2} : Dims{0, 1, 4, 2, 5, 3};
  Dims ps;
  for (auto p : perm) ps.push_back(t.shape()[static_cast<std::size_t>(p)]);
  const auto pp = padded_perm(perm);
  t = map_any(ctx, t, ps, [&](const auto& st) { return st.permute(pp); });
  ctx.set(0, reshaped(t, {n, oc, h * b, w * b}));
}

void op_SpaceToDepth(OpContext& ctx) {
  const Value& x = ctx.tensor(0);
  if (x.rank() != 4) ctx.fail<ShapeError>("input must be [N, C, H, W], got ", x.describe());
  const std::int64_t b = ctx.attr_int("blocksize", 0);
  const auto& s = x.shape();
  const std::int64_t n = s[0], c = s[1], h = s[2], w = s[3];
  if (b <= 0 || h % b != 0 || w % b != 0)
    ctx.fail<ShapeError>("spatial dims of ", x.describe(), " are not divisible by ", b);
  Value t = reshaped(x, {n, c, h / b, b, w / b, b});
  const Dims perm{0, 3, 5, 1, 2, 4};
  Dims ps;
  for (auto p : perm) ps.push_back(t.shape()[static_cast<std::size_t>(p)]);
  const auto pp = padded_perm(perm);
  t = map_any(ctx, t, ps, [&](const auto& st) { return st.permute(pp); });
  ctx.set(0, reshaped(t, {n, c * b * b, h / b, w / b}));
}

void op_CenterCropPad(OpContext& ctx) {
  Value x = ctx.tensor(0);
  const Dims shape = host_ints(ctx.tensor(1));
  Dims axes = ctx.attr_ints("axes");
  if (axes.empty())
    for (std::size_t i = 0; i < x.rank(); ++i) axes.push_back(static_cast<std::int64_t>(i));
  if (axes.size() != shape.size()) ctx.fail<ShapeError>("shape and axes differ in length");
  for (std::size_t k = 0; k < axes.size(); ++k) {
    const std::int64_t a = norm_axis(ctx, axes[k], x.rank());
    const std::int64_t n = x.shape()[static_cast<std::size_t>(a)], want = shape[k];
    if (want < n) {
      x = narrow_value(ctx, x, a, (n - want) / 2, want);
    } else if (want > n) {
      const std::int64_t before = (want - n) / 2, after = want - n - before;
      Dims pads;
      const std::size_t r = x.rank();
      for (std::size_t kk = 0; kk < r; ++kk) {
        const std::size_t d = r - 1 - kk;
        pads.push_back(static_cast<std::int64_t>(d) == a ? before : 0);
        pads.push_back(static_cast<std::int64_t>(d) == a ? after : 0);
      }
      Dims out = x.shape();
      out[static_cast<std::size_t>(a)] = want;
      x = map_any(ctx, x, out, [&](const auto& s) { return s.pad(pads, PadMode::Constant, 0.0); });
    }
  }
  ctx.set(0, x);
}

}  // namespace

Value narrow_along(const OpContext& ctx, const Value& x, std::int64_t axis, std::int64_t start,
                   std::int64_t len) {
  return narrow_value(ctx, x, axis, start, len);
}

void register_shape(OpRegistry& r) {
#define REG(Name) r.add(#Name, op_##Name)
  REG(Constant);
  REG(Shape);
  REG(Size);
  REG(Reshape);
  REG(Flatten);
  REG(Squeeze);
  REG(Unsqueeze);
  REG(Transpose);
  REG(Concat);
  REG(Split);
  REG(Slice);
  REG(Expand);
  REG(Tile);
  REG(ConstantOfShape);
  REG(Range);
  REG(Pad);
  REG(Trilu);
  REG(EyeLike);
  REG(DepthToSpace);
  REG(SpaceToDepth);
  REG(CenterCropPad);
#undef REG
}

}  // namespace ember::onnx::detail
