// Normalisations and activations: BatchNormalization, InstanceNormalization,
// LayerNormalization, GroupNormalization, RMSNormalization, LRN,
// MeanVarianceNormalization; Relu, Sigmoid, ... (the activation functions of ONNX).
#include "ember/tensor/module/nn.hpp"
#include "kernels.hpp"

namespace ember::onnx::detail {

namespace {

/// A per-channel [C] parameter as a store broadcastable over [N, C, ...] of rank r.
FloatStore channel(const Value& p, std::size_t r, DType dt) {
  Dims s(r, 1);
  s[1] = p.numel();
  return reshaped(p, s).floats().cast(dt);
}

void op_BatchNormalization(OpContext& ctx) {
  const Value& x = ctx.tensor(0);
  const std::size_t r = x.rank();
  if (r < 2) ctx.fail<ShapeError>("input must be [N, C, ...], got ", x.describe());
  const std::int64_t c = x.shape()[1];
  for (std::size_t i = 1; i <= 4; ++i)
    if (ctx.tensor(i).numel() != c)
      ctx.fail<ShapeError>("input ", i, " ", ctx.tensor(i).describe(), " must have ", c,
                           " elements (the channels of ", x.describe(), ")");
  const double eps = ctx.attr_float("epsilon", 1e-5);
  const bool training = ctx.attr_int("training_mode", 0) != 0 && ctx.opset >= 14;
  const DType dt = x.floats().dtype();
  const FloatStore& f = x.floats();
  const FloatStore scale = channel(ctx.tensor(1), r, dt), bias = channel(ctx.tensor(2), r, dt);
  if (!training) {
    const FloatStore mean = channel(ctx.tensor(3), r, dt), var = channel(ctx.tensor(4), r, dt);
    const FloatStore inv = var.add_scalar(eps).sqrt().recip().mul(scale);
    ctx.set(0, Value::tensor(x.type(), x.shape(), f.sub(mean).mul(inv).add(bias)));
    return;
  }
  // Training mode: batch statistics over N and the spatial dims; running stats updated.
  const double momentum = ctx.attr_float("momentum", 0.9);
  FloatStore mean = f;
  double count = 1;
  for (std::size_t i = 0; i < r; ++i) {
    if (i == 1) continue;
    mean = mean.sum_dim(pax(static_cast<std::int64_t>(i), r));
    count *= static_cast<double>(x.shape()[i]);
  }
  mean = mean.div_scalar(count);
  FloatStore var = f.sub(mean).square();
  for (std::size_t i = 0; i < r; ++i)
    if (i != 1) var = var.sum_dim(pax(static_cast<std::int64_t>(i), r));
  var = var.div_scalar(count);
  const FloatStore y = f.sub(mean).div(var.add_scalar(eps).sqrt()).mul(scale).add(bias);
  ctx.set(0, Value::tensor(x.type(), x.shape(), y));
  const Dims cs{c};
  const FloatStore rm = channel(ctx.tensor(3), r, dt), rv = channel(ctx.tensor(4), r, dt);
  if (ctx.wants(1))
    ctx.set(1, Value::tensor(ctx.tensor(3).type(), cs,
                             rm.mul_scalar(momentum).add(mean.mul_scalar(1 - momentum))));
  if (ctx.wants(2))
    ctx.set(2, Value::tensor(ctx.tensor(4).type(), cs,
                             rv.mul_scalar(momentum).add(var.mul_scalar(1 - momentum))));
}

/// Mean and biased variance of f over the logical axes [from, r).
std::pair<FloatStore, FloatStore> moments(const FloatStore& f, std::size_t from, std::size_t r,
                                          const Dims& shape) {
  FloatStore m = f;
  double n = 1;
  for (std::size_t i = from; i < r; ++i) {
    m = m.sum_dim(pax(static_cast<std::int64_t>(i), r));
    n *= static_cast<double>(shape[i]);
  }
  m = m.div_scalar(n);
  FloatStore v = f.sub(m).square();
  for (std::size_t i = from; i < r; ++i) v = v.sum_dim(pax(static_cast<std::int64_t>(i), r));
  return {m, v.div_scalar(n)};
}

void op_InstanceNormalization(OpContext& ctx) {
  const Value& x = ctx.tensor(0);
  const std::size_t r = x.rank();
  if (r < 3) ctx.fail<ShapeError>("input must be [N, C, D1, ...], got ", x.describe());
  const double eps = ctx.attr_float("epsilon", 1e-5);
  const FloatStore& f = x.floats();
  auto [m, v] = moments(f, 2, r, x.shape());
  const DType dt = f.dtype();
  const FloatStore y = f.sub(m)
                           .div(v.add_scalar(eps).sqrt())
                           .mul(channel(ctx.tensor(1), r, dt))
                           .add(channel(ctx.tensor(2), r, dt));
  ctx.set(0, Value::tensor(x.type(), x.shape(), y));
}

void op_LayerNormalization(OpContext& ctx) {
  const Value& x = ctx.tensor(0);
  const std::size_t r = x.rank();
  const std::int64_t axis = norm_axis(ctx, ctx.attr_int("axis", -1), r);
  const double eps = ctx.attr_float("epsilon", 1e-5);
  const bool f32 = ctx.attr_int("stash_type", 1) == 1;
  const DType dt = x.floats().dtype();
  const FloatStore f = f32 ? x.floats().cast(DType::F32) : x.floats();
  auto [m, v] = moments(f, static_cast<std::size_t>(axis), r, x.shape());
  const FloatStore inv = v.add_scalar(eps).sqrt().recip();
  FloatStore y = f.sub(m).mul(inv).cast(dt);
  broadcast_dims(ctx, ctx.tensor(1).shape(), x.shape());
  y = y.mul(ctx.tensor(1).floats().cast(dt));
  if (ctx.has(2)) y = y.add(ctx.tensor(2).floats().cast(dt));
  ctx.set(0, Value::tensor(x.type(), x.shape(), y));
  Dims ms = x.shape();
  for (std::size_t i = static_cast<std::size_t>(axis); i < r; ++i) ms[i] = 1;
  const ElemType st = f32 ? ElemType::Float : x.type();
  if (ctx.wants(1)) ctx.set(1, Value::tensor(st, ms, m));
  if (ctx.wants(2)) ctx.set(2, Value::tensor(st, ms, inv));
}

void op_GroupNormalization(OpContext& ctx) {
  const Value& x = ctx.tensor(0);
  const std::size_t r = x.rank();
  if (r < 2) ctx.fail<ShapeError>("input must be [N, C, ...], got ", x.describe());
  const std::int64_t g = ctx.attr_int("num_groups", 0);
  const double eps = ctx.attr_float("epsilon", 1e-5);
  const std::int64_t n = x.shape()[0], c = x.shape()[1];
  if (g <= 0 || c % g != 0)
    ctx.fail<ShapeError>("num_groups ", g, " does not divide the ", c, " channels");
  const DType dt = x.floats().dtype();
  const bool f32 = ctx.attr_int("stash_type", 1) == 1;
  const Value grouped = reshaped(x, {n, g, numel_of(x.shape()) / std::max<std::int64_t>(n * g, 1)});
  const FloatStore f = f32 ? grouped.floats().cast(DType::F32) : grouped.floats();
  auto [m, v] = moments(f, 2, 3, grouped.shape());
  const FloatStore norm = f.sub(m).div(v.add_scalar(eps).sqrt()).cast(dt);
  FloatStore y = reshaped(Value::tensor(x.type(), grouped.shape(), norm), x.shape()).floats();
  const Value& scale = ctx.tensor(1);
  const Value& bias = ctx.tensor(2);
  if (scale.numel() == c) {
    y = y.mul(channel(scale, r, dt)).add(channel(bias, r, dt));
  } else if (scale.numel() == g) {
    // opset 18: one scale/bias per group
    const Value yg =
        reshaped(Value::tensor(x.type(), x.shape(), y),
                 {n, g, c / g * (numel_of(x.shape()) / std::max<std::int64_t>(n * c, 1))});
    const FloatStore s3 = reshaped(scale, {1, g, 1}).floats().cast(dt);
    const FloatStore b3 = reshaped(bias, {1, g, 1}).floats().cast(dt);
    y = reshaped(Value::tensor(x.type(), yg.shape(), yg.floats().mul(s3).add(b3)), x.shape())
            .floats();
  } else {
    ctx.fail<ShapeError>("scale ", scale.describe(), " must have ", c, " (or ", g, ") elements");
  }
  ctx.set(0, Value::tensor(x.type(), x.shape(), y));
}

void op_RMSNormalization(OpContext& ctx) {
  const Value& x = ctx.tensor(0);
  const std::size_t r = x.rank();
  const std::int64_t axis = norm_axis(ctx, ctx.attr_int("axis", -1), r);
  const double eps = ctx.attr_float("epsilon", 1e-5);
  const bool f32 = ctx.attr_int("stash_type", 1) == 1;
  const DType dt = x.floats().dtype();
  const FloatStore f = f32 ? x.floats().cast(DType::F32) : x.floats();
  FloatStore ms = f.square();
  double cnt = 1;
  for (std::size_t i = static_cast<std::size_t>(axis); i < r; ++i) {
    ms = ms.sum_dim(pax(static_cast<std::int64_t>(i), r));
    cnt *= static_cast<double>(x.shape()[i]);
  }
  FloatStore y = f.div(ms.div_scalar(cnt).add_scalar(eps).sqrt()).cast(dt);
  y = y.mul(ctx.tensor(1).floats().cast(dt));
  ctx.set(0, Value::tensor(x.type(), x.shape(), y));
}

void op_LRN(OpContext& ctx) {
  const Value& x = ctx.tensor(0);
  const std::size_t r = x.rank();
  const double alpha = ctx.attr_float("alpha", 1e-4), beta = ctx.attr_float("beta", 0.75),
               bias = ctx.attr_float("bias", 1.0);
  const std::int64_t size = ctx.attr_int("size", 1);
  if (r < 2 || size < 1)
    ctx.fail<ShapeError>("LRN needs [N, C, ...] and size >= 1, got ", x.describe());
  const FloatStore sq = x.floats().square();
  const std::int64_t c = x.shape()[1];
  const std::int64_t lo = (size - 1) / 2, hi = size - 1 - lo;
  // sum over channels [c - lo, c + hi] via a padded channel axis
  Dims pads(2 * R, 0);
  const std::size_t k = static_cast<std::size_t>(R - 1 - pax(1, r));
  pads[2 * k] = lo;
  pads[2 * k + 1] = hi;
  const FloatStore padded = sq.pad(pads, PadMode::Constant, 0.0);
  FloatStore sum = padded.narrow(pax(1, r), 0, c);
  for (std::int64_t i = 1; i < size; ++i) sum = sum.add(padded.narrow(pax(1, r), i, c));
  const FloatStore y = x.floats().div(
      sum.mul_scalar(alpha / static_cast<double>(size)).add_scalar(bias).powf_scalar(beta));
  ctx.set(0, Value::tensor(x.type(), x.shape(), y));
}

void op_MeanVarianceNormalization(OpContext& ctx) {
  const Value& x = ctx.tensor(0);
  const std::size_t r = x.rank();
  Dims axes = ctx.attr_ints("axes", {0, 2, 3});
  for (auto& a : axes) a = norm_axis(ctx, a, r);
  FloatStore m = x.floats();
  double n = 1;
  for (auto a : axes) {
    m = m.sum_dim(pax(a, r));
    n *= static_cast<double>(x.shape()[static_cast<std::size_t>(a)]);
  }
  m = m.div_scalar(n);
  FloatStore v = x.floats().sub(m).square();
  for (auto a : axes) v = v.sum_dim(pax(a, r));
  v = v.div_scalar(n);
  ctx.set(0, Value::tensor(x.type(), x.shape(), x.floats().sub(m).div(v.sqrt().add_scalar(1e-9))));
}

// ---- activations ------------------------------------------------------------------------------

#define EMBER_ONNX_ACT(Name, expr)                                                  \
  void op_##Name(OpContext& ctx) {                                                  \
    ctx.set(0, map_float(ctx, ctx.tensor(0),                                        \
                         [&](const FloatStore& x) -> FloatStore { return expr; })); \
  }
/// Activations that may write into their input's buffer on its last use.
#define EMBER_ONNX_ACT_TAKE(Name, fn)                                                            \
  void op_##Name(OpContext& ctx) {                                                               \
    ctx.set(0, map_float_take(ctx, ctx.take(0), [](FloatStore x) { return fn(std::move(x)); })); \
  }
EMBER_ONNX_ACT_TAKE(Relu, activation::relu)
EMBER_ONNX_ACT_TAKE(Sigmoid, activation::sigmoid)
#undef EMBER_ONNX_ACT_TAKE
EMBER_ONNX_ACT(LeakyRelu, activation::leaky_relu(x, ctx.attr_float("alpha", 0.01)))
EMBER_ONNX_ACT(HardSigmoid, activation::hard_sigmoid(x, ctx.attr_float("alpha", 0.2),
                                                     ctx.attr_float("beta", 0.5)))
EMBER_ONNX_ACT(HardSwish, activation::hard_swish(x))
EMBER_ONNX_ACT(Elu, activation::elu(x, ctx.attr_float("alpha", 1.0)))
EMBER_ONNX_ACT(Celu, activation::celu(x, ctx.attr_float("alpha", 1.0)))
EMBER_ONNX_ACT(Softsign, activation::softsign(x))
EMBER_ONNX_ACT(Mish, activation::mish(x))
EMBER_ONNX_ACT(Swish, x.mul(activation::sigmoid(x.mul_scalar(ctx.attr_float("alpha", 1.0)))))
#undef EMBER_ONNX_ACT

void op_Selu(OpContext& ctx) {
  const double alpha = ctx.attr_float("alpha", 1.67326319217681884765625);
  const double gamma = ctx.attr_float("gamma", 1.05070102214813232421875);
  ctx.set(0, map_float(ctx, ctx.tensor(0), [&](const FloatStore& x) {
            return activation::elu(x, alpha).mul_scalar(gamma);
          }));
}

void op_Softplus(OpContext& ctx) {
  ctx.set(0, map_float(ctx, ctx.tensor(0), [&](const FloatStore& x) {
            // log(1 + exp(x)) without overflow: max(x, 0) + log1p(exp(-|x|))
            return x.clamp_min(0.0).add(x.abs().neg().exp().log1p());
          }));
}

void op_Gelu(OpContext& ctx) {
  const std::string approx = ctx.attr_string("approximate", "none");
  ctx.set(0, map_float(ctx, ctx.tensor(0), [&](const FloatStore& x) {
            return approx == "tanh" ? activation::gelu_tanh(x) : activation::gelu(x);
          }));
}

void op_ThresholdedRelu(OpContext& ctx) {
  const double alpha = ctx.attr_float("alpha", 1.0);
  ctx.set(0, map_float(ctx, ctx.tensor(0), [&](const FloatStore& x) {
            return x.mask_fill(x.lower_equal_elem(alpha), 0.0);
          }));
}

void op_Shrink(OpContext& ctx) {
  const double lambd = ctx.attr_float("lambd", 0.5), bias = ctx.attr_float("bias", 0.0);
  const Value& v = ctx.tensor(0);
  const FloatStore x = as_float_store(v, DType::F64);
  FloatStore y = x.sub_scalar(bias).mask_where(x.lower_elem(-lambd), x.add_scalar(bias));
  y = y.mask_fill(x.greater_equal_elem(-lambd).bool_and(x.lower_equal_elem(lambd)), 0.0);
  ctx.set(0, cast_value(ctx, Value::tensor(ElemType::Double, v.shape(), y), v.type()));
}

void op_PRelu(OpContext& ctx) {
  const Value& x = ctx.tensor(0);
  const Value& s = ctx.tensor(1);
  const Dims shape = broadcast_dims(ctx, x.shape(), s.shape());
  if (shape != x.shape())
    ctx.fail<ShapeError>("slope ", s.describe(), " must broadcast to the input ", x.describe());
  const FloatStore& f = x.floats();
  ctx.set(0, Value::tensor(x.type(), x.shape(), f.mask_where(f.lower_elem(0), f.mul(s.floats()))));
}

}  // namespace

void register_norm(OpRegistry& r) {
#define REG(Name) r.add(#Name, op_##Name)
  REG(BatchNormalization);
  REG(InstanceNormalization);
  REG(LayerNormalization);
  REG(GroupNormalization);
  REG(RMSNormalization);
  REG(LRN);
  REG(MeanVarianceNormalization);
}

void register_activation(OpRegistry& r) {
  REG(Relu);
  REG(Sigmoid);
  REG(LeakyRelu);
  REG(HardSigmoid);
  REG(HardSwish);
  REG(Elu);
  REG(Celu);
  REG(Softsign);
  REG(Mish);
  REG(Swish);
  REG(Selu);
  REG(Softplus);
  REG(Gelu);
  REG(ThresholdedRelu);
  REG(Shrink);
  REG(PRelu);
#undef REG
}

}  // namespace ember::onnx::detail
