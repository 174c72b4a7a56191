// Quantization: QuantizeLinear, DequantizeLinear (per-tensor, per-axis, blocked; integer,
// 4/2-bit and float8 types), DynamicQuantizeLinear, QLinearMatMul, MatMulInteger,
// ConvInteger, QLinearConv.
#include "kernels.hpp"

namespace ember::onnx::detail {

namespace {

std::pair<double, double> int_range(ElemType t) {
  switch (t) {
    case ElemType::UInt8:
      return {0, 255};
    case ElemType::Int8:
      return {-128, 127};
    case ElemType::UInt16:
      return {0, 65535};
    case ElemType::Int16:
      return {-32768, 32767};
    case ElemType::UInt4:
      return {0, 15};
    case ElemType::Int4:
      return {-8, 7};
    case ElemType::UInt2:
      return {0, 3};
    case ElemType::Int2:
      return {-2, 1};
    case ElemType::Int32:
      return {-2147483648.0, 2147483647.0};
    default:
      return {0, 0};
  }
}

/// A scale / zero point of `param` broadcast to x's shape (per-tensor, per-axis, blocked).
FloatStore broadcast_param(const OpContext& ctx, const Value& param, const Value& x,
                           std::int64_t axis, std::int64_t block, DType dt) {
  FloatStore p = as_float_store(param, dt);
  const std::size_t r = x.rank();
  if (param.rank() == 0 || param.numel() == 1) return p;  // per tensor: broadcasts as is
  const std::int64_t a = norm_axis(ctx, axis, r);
  if (param.rank() == 1 && block <= 0) {
    if (param.numel() != x.shape()[static_cast<std::size_t>(a)])
      ctx.fail<ShapeError>("scale ", param.describe(), " does not match axis ", a, " of ",
                           x.describe());
    Dims s(r, 1);
    s[static_cast<std::size_t>(a)] = param.numel();
    return reshaped(Value::tensor(ElemType::Double, param.shape(), p), s).floats();
  }
  // blocked: repeat each entry `block` times along the axis, cut to the axis length
  if (block <= 0) ctx.fail("a scale of ", param.describe(), " needs block_size > 0");
  const std::int64_t n = x.shape()[static_cast<std::size_t>(a)];
  std::vector<std::int64_t> idx(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) idx[static_cast<std::size_t>(i)] = i / block;
  if ((n + block - 1) / block != param.shape()[static_cast<std::size_t>(a)])
    ctx.fail<ShapeError>("blocked scale ", param.describe(), " does not match ", x.describe(),
                         " with block_size ", block);
  const auto it = DTensor<1, Int>::from_data(TensorData(idx, Shape{n}), ctx.device);
  return p.select(pax(a, r), it);
}

/// round-half-even(v) + zp saturated to `to` (integer types) or cast (float8).
Value quantize(const OpContext& ctx, const FloatStore& v, const Dims& shape,
               const std::optional<FloatStore>& zp, ElemType to, bool saturate) {
  if (is_small_float(to) || to == ElemType::Float16 || to == ElemType::BFloat16 ||
      to == ElemType::Float) {
    FloatStore y = zp ? v.add(*zp) : v;
    return cast_value(ctx, Value::tensor(ElemType::Double, shape, y.cast(DType::F64)), to,
                      saturate);
  }
  FloatStore y = v.round();
  if (zp) y = y.add(*zp);
  const auto [lo, hi] = int_range(to);
  if (lo == hi)
    ctx.fail<UnsupportedError>("quantization to ", elem_type_name(to), " is not supported");
  y = y.clamp(lo, hi);
  return cast_value(ctx, Value::tensor(ElemType::Double, shape, y.cast(DType::F64)), to);
}

void op_QuantizeLinear(OpContext& ctx) {
  const Value& x = ctx.tensor(0);
  const Value& scale = ctx.tensor(1);
  const std::int64_t axis = ctx.attr_int("axis", 1), block = ctx.attr_int("block_size", 0);
  const bool saturate = ctx.attr_int("saturate", 1) != 0;
  ElemType to = ElemType::UInt8;
  if (ctx.has(2))
    to = ctx.tensor(2).type();
  else if (ctx.attr("output_dtype"))
    to = static_cast<ElemType>(ctx.attr_int("output_dtype", 2));
  // The division runs in the scale's precision (or `precision`).
  DType dt = scale.is_float_store() ? scale.floats().dtype() : DType::F32;
  if (ctx.attr("precision") && ctx.attr_int("precision", 0) != 0)
    dt = storage_dtype(static_cast<ElemType>(ctx.attr_int("precision", 1)));
  if (dt == DType::F16 || dt == DType::BF16) dt = DType::F32;
  const FloatStore s = broadcast_param(ctx, scale, x, axis, block, dt);
  const FloatStore v = as_float_store(x, dt).div(s);
  std::optional<FloatStore> zp;
  if (ctx.has(2)) zp = broadcast_param(ctx, ctx.tensor(2), x, axis, block, dt);
  ctx.set(0, quantize(ctx, v, x.shape(), zp, to, saturate));
}

void op_DequantizeLinear(OpContext& ctx) {
  const Value& x = ctx.tensor(0);
  const Value& scale = ctx.tensor(1);
  const std::int64_t axis = ctx.attr_int("axis", 1), block = ctx.attr_int("block_size", 0);
  ElemType out = scale.type();
  if (ctx.attr("output_dtype") && ctx.attr_int("output_dtype", 0) != 0)
    out = static_cast<ElemType>(ctx.attr_int("output_dtype", 1));
  const DType dt = DType::F32;
  FloatStore v = as_float_store(x, dt);
  if (ctx.has(2)) v = v.sub(broadcast_param(ctx, ctx.tensor(2), x, axis, block, dt));
  v = v.mul(broadcast_param(ctx, scale, x, axis, block, dt));
  ctx.set(0, cast_value(ctx, Value::tensor(ElemType::Float, x.shape(), v), out));
}

void op_DynamicQuantizeLinear(OpContext& ctx) {
  const Value& x = ctx.tensor(0);
  const auto vals = x.to_doubles();
  double mn = 0, mx = 0;
  for (double v : vals) mn = std::min(mn, v), mx = std::max(mx, v);
  const float scale = static_cast<float>((mx - mn) / 255.0);
  const float zp_f =
      scale == 0 ? 0.0f
                 : std::clamp(std::nearbyint(0.0f - static_cast<float>(mn) / scale), 0.0f, 255.0f);
  FloatStore v = as_float_store(x, DType::F32);
  v = scale == 0 ? v.mul_scalar(0.0) : v.div_scalar(scale);
  ctx.set(0, quantize(ctx, v, x.shape(), FloatStore::full(P({}), zp_f, ctx.device), ElemType::UInt8,
                      true));
  ctx.set(1, value_from_doubles({scale}, {}, ElemType::Float, ctx.device));
  ctx.set(2, value_from_doubles({zp_f}, {}, ElemType::UInt8, ctx.device));
}

/// (x - zp) as f64 values (zp per tensor or broadcast along `axis` for rank-1 zero points).
Value centered(const OpContext& ctx, const Value& x, std::size_t zp_input, std::int64_t zp_axis) {
  FloatStore v = as_float_store(x, DType::F64);
  if (ctx.has(zp_input)) {
    const Value& z = ctx.tensor(zp_input);
    FloatStore zs = as_float_store(z, DType::F64);
    if (z.numel() > 1) {
      Dims s(x.rank(), 1);
      s[static_cast<std::size_t>(norm_axis(ctx, zp_axis, x.rank()))] = z.numel();
      zs = reshaped(Value::tensor(ElemType::Double, z.shape(), zs), s).floats();
    }
    v = v.sub(zs);
  }
  return Value::tensor(ElemType::Double, x.shape(), v);
}

void op_MatMulInteger(OpContext& ctx) {
  const Value a = centered(ctx, ctx.tensor(0), 2, -1);  // a zero point per row (axis -2) rare
  const Value b = centered(ctx, ctx.tensor(1), 3, -1);
  ctx.set(0, cast_value(ctx, matmul_values(ctx, a, b), ElemType::Int32));
}

void op_QLinearMatMul(OpContext& ctx) {
  const Value a = centered(ctx, ctx.tensor(0), 2, -2);
  const Value b = centered(ctx, ctx.tensor(3), 5, -1);
  const Value prod = matmul_values(ctx, a, b);
  FloatStore y = prod.floats();
  const FloatStore as = as_float_store(ctx.tensor(1), DType::F64),
                   bs = as_float_store(ctx.tensor(4), DType::F64),
                   ys = as_float_store(ctx.tensor(6), DType::F64);
  y = y.mul(as).mul(bs).div(ys);
  const FloatStore zp = as_float_store(ctx.tensor(7), DType::F64);
  ctx.set(0, quantize(ctx, y, prod.shape(), zp, ctx.tensor(7).type(), true));
}

/// conv of f64 values via the Conv kernel (same attributes).
Value conv_f64(OpContext& ctx, const Value& x, const Value& w, const Value* bias) {
  std::vector<const Value*> in{&x, &w};
  if (bias) in.push_back(bias);
  Node n = ctx.node;
  n.op_type = "Conv";
  n.inputs.resize(in.size());
  OpContext c2{n, ctx.opset, ctx.device, in, {Value()}, {}, ctx.run_subgraph};
  find_op("", "Conv")(c2);
  return c2.outputs[0];
}

void op_ConvInteger(OpContext& ctx) {
  const Value x = centered(ctx, ctx.tensor(0), 2, 1);
  const Value w = centered(ctx, ctx.tensor(1), 3, 0);
  ctx.set(0, cast_value(ctx, conv_f64(ctx, x, w, nullptr), ElemType::Int32));
}

void op_QLinearConv(OpContext& ctx) {
  const Value x = centered(ctx, ctx.tensor(0), 2, 1);
  const Value w = centered(ctx, ctx.tensor(3), 5, 0);
  std::optional<Value> b;
  if (ctx.has(8)) b = cast_value(ctx, ctx.tensor(8), ElemType::Double);
  const Value acc = conv_f64(ctx, x, w, b ? &*b : nullptr);
  const Value& ws = ctx.tensor(4);
  FloatStore scale = as_float_store(ws, DType::F64).mul(as_float_store(ctx.tensor(1), DType::F64));
  if (ws.numel() > 1) {
    Dims s(acc.rank(), 1);
    s[1] = ws.numel();
    scale = reshaped(Value::tensor(ElemType::Double, ws.shape(), scale), s).floats();
  }
  const FloatStore y = acc.floats().mul(scale).div(as_float_store(ctx.tensor(6), DType::F64));
  ctx.set(0, quantize(ctx, y, acc.shape(), as_float_store(ctx.tensor(7), DType::F64),
                      ctx.tensor(7).type(), true));
}

}  // namespace

void register_quant(OpRegistry& r) {
#define REG(Name) r.add(#Name, op_##Name)
  REG(QuantizeLinear);
  REG(DequantizeLinear);
  REG(DynamicQuantizeLinear);
  REG(MatMulInteger);
  REG(QLinearMatMul);
  REG(ConvInteger);
  REG(QLinearConv);
#undef REG
}

}  // namespace ember::onnx::detail
