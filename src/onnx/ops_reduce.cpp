// Reductions and scans: Reduce*, ArgMax/ArgMin, Softmax/LogSoftmax/Hardmax, CumSum/CumProd,
// TopK, LpNormalization.
#include "kernels.hpp"

namespace ember::onnx::detail {

namespace {

enum class Red { Sum, Mean, Max, Min, Prod, L1, L2, LogSum, LogSumExp, SumSquare };

/// The reduction's value over an empty set (ONNX's identity elements).
double empty_value(Red k) {
  const double inf = std::numeric_limits<double>::infinity();
  switch (k) {
    case Red::Max:
      return -inf;
    case Red::Min:
      return inf;
    case Red::Prod:
      return 1;
    case Red::LogSum:
    case Red::LogSumExp:
      return -inf;
    case Red::Mean:
      return std::numeric_limits<double>::quiet_NaN();
    default:
      return 0;
  }
}

template <class S>
S reduce_dim(const S& s, Red k, std::int64_t d) {
  switch (k) {
    case Red::Sum:
      return s.sum_dim(d);
    case Red::Max:
      return s.max_dim(d);
    case Red::Min:
      return s.min_dim(d);
    case Red::Prod:
      return s.prod_dim(d);
    default:
      return s.sum_dim(d);
  }
}

template <Red K>
void op_reduce(OpContext& ctx) {
  const Value& x = ctx.tensor(0);
  const std::size_t r = x.rank();
  const bool keep = ctx.attr_int("keepdims", 1) != 0;
  const bool noop = ctx.attr_int("noop_with_empty_axes", 0) != 0;
  bool given = false;
  Dims axes = axes_from(ctx, 1, r, &given);
  if (axes.empty()) {
    if (noop) {
      ctx.set(0, x);
      return;
    }
    for (std::size_t i = 0; i < r; ++i) axes.push_back(static_cast<std::int64_t>(i));
  }
  std::sort(axes.begin(), axes.end());
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  Dims kept = x.shape(), out;
  std::int64_t count = 1;
  bool empty = false;
  for (auto a : axes) {
    count *= x.shape()[static_cast<std::size_t>(a)];
    if (x.shape()[static_cast<std::size_t>(a)] == 0) empty = true;
    kept[static_cast<std::size_t>(a)] = 1;
  }
  for (std::size_t i = 0; i < r; ++i)
    if (keep || !std::binary_search(axes.begin(), axes.end(), static_cast<std::int64_t>(i)))
      out.push_back(kept[i]);
  if (empty) {
    const DType sd = storage_dtype(x.type());
    double v = empty_value(K);
    if (is_int(sd) && std::isinf(v))
      v = v > 0 ? static_cast<double>(std::numeric_limits<std::int64_t>::max())
                : static_cast<double>(std::numeric_limits<std::int64_t>::min());
    if (x.is_bool_store()) v = K == Red::Min ? 1 : 0;
    ctx.set(0, value_from_doubles(std::vector<double>(static_cast<std::size_t>(numel_of(out)), v),
                                  out, x.type(), ctx.device));
    return;
  }
  if (x.is_bool_store()) {
    // Max/Min over bools (any / all).
    BoolStore b = x.bools();
    for (auto a : axes) b = K == Red::Min ? b.all_dim(pax(a, r)) : b.any_dim(pax(a, r));
    ctx.set(0, Value::tensor(x.type(), out, b));
    return;
  }
  auto run = [&](const auto& s0) {
    using S = std::decay_t<decltype(s0)>;
    S s = s0;
    if constexpr (std::is_same_v<S, FloatStore>) {
      if (K == Red::L1) s = s.abs();
      if (K == Red::L2 || K == Red::SumSquare) s = s.square();
      if (K == Red::LogSumExp) {
        // max-shifted: log(sum(exp(x - m))) + m, m the max over the axes (0 where infinite)
        S m = s;
        for (auto a : axes) m = m.max_dim(pax(a, r));
        m = m.mask_fill(m.is_inf(), 0.0);
        S e = s.sub(m).exp();
        for (auto a : axes) e = e.sum_dim(pax(a, r));
        return e.log().add(m);
      }
    } else {
      if (K == Red::L1) s = s.abs();
      if (K == Red::L2 || K == Red::SumSquare) s = s.square();
    }
    const Red base = (K == Red::Max || K == Red::Min || K == Red::Prod) ? K : Red::Sum;
    for (auto a : axes) s = reduce_dim(s, base, pax(a, r));
    if constexpr (std::is_same_v<S, FloatStore>) {
      if (K == Red::Mean) s = s.div_scalar(static_cast<double>(count));
      if (K == Red::L2) s = s.sqrt();
      if (K == Red::LogSum) s = s.log();
    } else {
      if (K == Red::Mean) s = s.div_scalar(count);
      if (K == Red::L2) s = s.float_(DType::F64).sqrt().int_(s.dtype());
    }
    return s;
  };
  if (x.is_float_store())
    ctx.set(0, Value::tensor(x.type(), out, run(x.floats())));
  else if (x.is_int_store())
    ctx.set(0, Value::tensor(x.type(), out, run(x.ints())));
}

template <bool Max>
void op_arg(OpContext& ctx) {
  const Value& x = ctx.tensor(0);
  const std::size_t r = x.rank();
  const std::int64_t axis = norm_axis(ctx, ctx.attr_int("axis", 0), r);
  const bool keep = ctx.attr_int("keepdims", 1) != 0;
  const bool last = ctx.attr_int("select_last_index", 0) != 0;
  const std::int64_t n = x.shape()[static_cast<std::size_t>(axis)];
  if (n == 0) ctx.fail<ShapeError>("cannot take the arg", Max ? "max" : "min", " of an empty axis");
  const std::int64_t pa = pax(axis, r);
  Dims out = x.shape();
  out[static_cast<std::size_t>(axis)] = 1;
  if (!keep) out.erase(out.begin() + axis);
  auto run = [&](const auto& s) {
    auto src = last ? s.flip({pa}) : s;
    IntStore i = Max ? src.argmax(pa) : src.argmin(pa);
    if (last) i = i.rsub_scalar(n - 1);
    return i;
  };
  IntStore idx = x.is_float_store() ? run(x.floats()) : run(x.ints());
  ctx.set(0, Value::tensor(ElemType::Int64, out, idx));
}

/// Softmax family: opset < 13 flattens to [before axis, from axis] and normalises dim 1.
template <int Kind>
void op_softmax(OpContext& ctx) {
  const Value& x = ctx.tensor(0);
  const std::size_t r = x.rank();
  const std::int64_t def = ctx.opset < 13 ? 1 : -1;
  const std::int64_t axis = norm_axis(ctx, ctx.attr_int("axis", def), std::max<std::size_t>(r, 1));
  Value v = x;
  std::int64_t dim;
  if (ctx.opset < 13) {
    std::int64_t a = 1, b = 1;
    for (std::size_t i = 0; i < r; ++i)
      (static_cast<std::int64_t>(i) < axis ? a : b) *= x.shape()[i];
    v = reshaped(x, {a, b});
    dim = R - 1;
  } else {
    dim = pax(axis, r);
  }
  const FloatStore& f = v.floats();
  FloatStore out = [&]() -> FloatStore {
    if (Kind == 0) return activation::softmax(f, dim);
    if (Kind == 1) return activation::log_softmax(f, dim);
    // Hardmax: 1 at the first maximum along dim.
    const IntStore am = f.argmax(dim);
    const std::int64_t n = f.shape()[static_cast<std::size_t>(dim)];
    Dims ar(R, 1);
    ar[static_cast<std::size_t>(dim)] = n;
    const IntStore pos = DTensor<1, Int>::arange(0, n, ctx.device).template reshape<R>(Shape(ar));
    return pos.equal(am).float_(f.dtype());
  }();
  ctx.set(0, reshaped(Value::tensor(x.type(), v.shape(), out), x.shape()));
}

template <bool Prod>
void op_cum(OpContext& ctx) {
  const Value& x = ctx.tensor(0);
  const std::size_t r = x.rank();
  const std::int64_t axis = norm_axis(ctx, host_ints(ctx.tensor(1)).at(0), r);
  const bool exclusive = ctx.attr_int("exclusive", 0) != 0;
  const bool reverse = ctx.attr_int("reverse", 0) != 0;
  const std::int64_t pa = pax(axis, r);
  const std::int64_t n = x.shape()[static_cast<std::size_t>(axis)];
  ctx.set(0, map_numeric(ctx, x, [&](const auto& s0) {
            auto s = reverse ? s0.flip({pa}) : s0;
            if (exclusive && n > 0) {
              // shift by one along the axis: identity first, last element dropped
              Dims pads(2 * R, 0);
              const std::size_t k = static_cast<std::size_t>(R - 1 - pa);
              pads[2 * k] = 1;
              pads[2 * k + 1] = -1;
              s = s.pad(pads, PadMode::Constant, Prod ? 1.0 : 0.0);
            }
            auto c = Prod ? s.cumprod(pa) : s.cumsum(pa);
            return reverse ? c.flip({pa}) : c;
          }));
}

void op_TopK(OpContext& ctx) {
  const Value& x = ctx.tensor(0);
  const std::size_t r = x.rank();
  const std::int64_t k = ctx.opset < 10 ? ctx.attr_int("k", 0) : host_ints(ctx.tensor(1)).at(0);
  const std::int64_t axis = norm_axis(ctx, ctx.attr_int("axis", -1), r);
  const bool largest = ctx.attr_int("largest", 1) != 0;
  const std::int64_t n = x.shape()[static_cast<std::size_t>(axis)];
  if (k < 0 || k > n) ctx.fail<ShapeError>("k = ", k, " is outside [0, ", n, "]");
  const std::int64_t pa = pax(axis, r);
  Dims out = x.shape();
  out[static_cast<std::size_t>(axis)] = k;
  auto run = [&](const auto& s) {
    // Stable sort: equal values keep the lower index first, as ONNX requires.
    auto [v, i] = s.sort_with_indices(pa, largest);
    return std::make_pair(v.narrow(pa, 0, k), i.narrow(pa, 0, k));
  };
  if (x.is_float_store()) {
    auto [v, i] = run(x.floats());
    ctx.set(0, Value::tensor(x.type(), out, v));
    ctx.set(1, Value::tensor(ElemType::Int64, out, i));
  } else {
    auto [v, i] = run(x.ints());
    ctx.set(0, Value::tensor(x.type(), out, v));
    ctx.set(1, Value::tensor(ElemType::Int64, out, i));
  }
}

void op_LpNormalization(OpContext& ctx) {
  const Value& x = ctx.tensor(0);
  const std::int64_t axis = norm_axis(ctx, ctx.attr_int("axis", -1), x.rank());
  const std::int64_t p = ctx.attr_int("p", 2);
  const std::int64_t pa = pax(axis, x.rank());
  ctx.set(0, map_float(ctx, x, [&](const FloatStore& f) {
            const FloatStore norm = p == 1 ? f.abs().sum_dim(pa) : f.square().sum_dim(pa).sqrt();
            return f.div(norm).mask_fill(norm.equal_elem(0.0), 0.0);
          }));
}

}  // namespace

void register_reduce(OpRegistry& r) {
  r.add("ReduceSum", op_reduce<Red::Sum>);
  r.add("ReduceMean", op_reduce<Red::Mean>);
  r.add("ReduceMax", op_reduce<Red::Max>);
  r.add("ReduceMin", op_reduce<Red::Min>);
  r.add("ReduceProd", op_reduce<Red::Prod>);
  r.add("ReduceL1", op_reduce<Red::L1>);
  r.add("ReduceL2", op_reduce<Red::L2>);
  r.add("ReduceLogSum", op_reduce<Red::LogSum>);
  r.add("ReduceLogSumExp", op_reduce<Red::LogSumExp>);
  r.add("ReduceSumSquare", op_reduce<Red::SumSquare>);
  r.add("ArgMax", op_arg<true>);
  r.add("ArgMin", op_arg<false>);
  r.add("Softmax", op_softmax<0>);
  r.add("LogSoftmax", op_softmax<1>);
  r.add("Hardmax", op_softmax<2>);
  r.add("CumSum", op_cum<false>);
  r.add("CumProd", op_cum<true>);
  r.add("TopK", op_TopK);
  r.add("LpNormalization", op_LpNormalization);
}

}  // namespace ember::onnx::detail
