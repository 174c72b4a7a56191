// Neural-network operators: Conv, ConvTranspose, MaxPool, AveragePool, LpPool, global
// pools, Gemm, MatMul, Dropout.
#include "ember/cpu/conv_fused.hpp"
#include "ember/dispatch/cpu.hpp"
#include "ember/tensor/module/conv.hpp"
#include "ember/tensor/module/nn.hpp"
#include "ember/tensor/module/pool.hpp"
#include "kernels.hpp"
#include "pool_nd.hpp"

namespace ember::onnx::detail {

namespace {

struct Spatial {
  Dims kernel, strides, dilations, begin, end;
};

/// Kernel, strides, dilations and explicit pads of a conv/pool node over `sp` spatial dims
/// of input x (auto_pad resolved for stride/kernel).
/// `xshape`: x's logical shape, `describe` names x in errors.
template <class Describe>
Spatial spatial_attrs_of(const OpContext& ctx, const Dims& xshape, const Describe& describe,
                         const Dims& kernel, bool transpose) {
  const std::size_t sp = xshape.size() - 2;
  Spatial s;
  s.kernel = kernel;
  s.strides = ctx.attr_ints("strides", Dims(sp, 1));
  s.dilations = ctx.attr_ints("dilations", Dims(sp, 1));
  Dims pads = ctx.attr_ints("pads", Dims(2 * sp, 0));
  if (s.kernel.size() != sp || s.strides.size() != sp || s.dilations.size() != sp ||
      pads.size() != 2 * sp)
    ctx.fail<ShapeError>("kernel_shape, strides, dilations and pads must match the ", sp,
                         " spatial dims of ", describe());
  for (std::size_t i = 0; i < sp; ++i) {
    if (s.kernel[i] <= 0 || s.strides[i] <= 0 || s.dilations[i] <= 0)
      ctx.fail("kernel, strides and dilations must be positive");
    if (pads[i] < 0 || pads[i + sp] < 0) ctx.fail("pads must be >= 0");
  }
  s.begin.assign(pads.begin(), pads.begin() + static_cast<std::ptrdiff_t>(sp));
  s.end.assign(pads.begin() + static_cast<std::ptrdiff_t>(sp), pads.end());
  const std::string ap = ctx.attr_string("auto_pad", "NOTSET");
  if (ap != "NOTSET" && ap != "SAME_UPPER" && ap != "SAME_LOWER" && ap != "VALID")
    ctx.fail("auto_pad must be NOTSET, SAME_UPPER, SAME_LOWER or VALID, got \"", ap, "\"");
  if (ap != "NOTSET" && ctx.attr("pads"))
    ctx.fail("auto_pad ", ap, " and explicit pads cannot both be given");
  if (!transpose && (ap == "SAME_UPPER" || ap == "SAME_LOWER")) {
    for (std::size_t i = 0; i < sp; ++i) {
      const std::int64_t in = xshape[2 + i];
      const std::int64_t out = (in + s.strides[i] - 1) / s.strides[i];
      const std::int64_t total = std::max<std::int64_t>(
          0, (out - 1) * s.strides[i] + (s.kernel[i] - 1) * s.dilations[i] + 1 - in);
      s.begin[i] = ap == "SAME_UPPER" ? total / 2 : total - total / 2;
      s.end[i] = total - s.begin[i];
    }
  } else if (ap == "VALID") {
    std::fill(s.begin.begin(), s.begin.end(), 0);
    std::fill(s.end.begin(), s.end.end(), 0);
  }
  return s;
}

Spatial spatial_attrs(const OpContext& ctx, const Value& x, const Dims& kernel, bool transpose) {
  return spatial_attrs_of(
      ctx, x.shape(), [&] { return x.describe(); }, kernel, transpose);
}

/// Pads the spatial dims of x (logical [N, C, ...]) with `value` (explicit padding).
Value pad_spatial(const OpContext& ctx, const Value& x, const Dims& begin, const Dims& end,
                  double value) {
  const std::size_t r = x.rank(), sp = r - 2;
  Dims pads;
  Dims out = x.shape();
  for (std::size_t k = 0; k < sp; ++k) {
    const std::size_t i = sp - 1 - k;
    pads.push_back(begin[i]);
    pads.push_back(end[i]);
  }
  for (std::size_t i = 0; i < sp; ++i) out[2 + i] += begin[i] + end[i];
  return Value::tensor(x.type(), out, x.floats().pad(pads, PadMode::Constant, value));
}

template <std::size_t N>
std::array<std::int64_t, N> arr(const Dims& d) {
  std::array<std::int64_t, N> a{};
  for (std::size_t i = 0; i < N; ++i) a[i] = d[i];
  return a;
}

template <std::size_t N>
FloatStore conv_n(const Value& x, const Value& w, const std::optional<DTensor<1>>& bias,
                  const Dims& strides, const Dims& pads, const Dims& dil, std::int64_t groups) {
  ConvOptions<N> o;
  o.stride = arr<N>(strides);
  o.padding = arr<N>(pads);
  o.dilation = arr<N>(dil);
  o.groups = groups;
  auto xt = x.to_tensor<N + 2>();
  auto wt = w.to_tensor<N + 2>();
  DTensor<N + 2> y = [&] {
    if constexpr (N == 1)
      return module::conv1d(xt, wt, bias, o);
    else if constexpr (N == 2)
      return module::conv2d(xt, wt, bias, o);
    else
      return module::conv3d(xt, wt, bias, o);
  }();
  return y.template reshape<R>(P(y.shape().dims));
}

std::optional<DTensor<1>> bias_of(const OpContext& ctx, std::size_t i) {
  if (!ctx.has(i)) return std::nullopt;
  const Value& b = ctx.tensor(i);
  return b.floats().template reshape<1>(Shape{b.numel()});
}

/// The logical-rank view of a store padded with leading 1s.
CpuTensor logical_view(CpuTensor t, std::size_t r) {
  const std::size_t k = t.shape.rank() - r;
  t.shape = Shape(std::vector<std::int64_t>(t.shape.dims.begin() + static_cast<std::ptrdiff_t>(k),
                                            t.shape.dims.end()));
  t.strides.erase(t.strides.begin(), t.strides.begin() + static_cast<std::ptrdiff_t>(k));
  return t;
}

/// `t` padded with leading 1s to the store's rank.
CpuTensor padded_view(CpuTensor t) {
  std::vector<std::int64_t> dims(kMaxRank - t.shape.rank(), 1);
  dims.insert(dims.end(), t.shape.dims.begin(), t.shape.dims.end());
  const std::int64_t outer = t.shape.numel();
  std::vector<std::int64_t> strides(kMaxRank - t.shape.rank(), outer);
  strides.insert(strides.end(), t.strides.begin(), t.strides.end());
  t.shape = Shape(std::move(dims));
  t.strides = std::move(strides);
  return t;
}

}  // namespace

namespace {

/// The checks of a Conv node that do not depend on the path it takes (ONNX's Conv schema).
void check_conv_node(OpContext& ctx) {
  if (ctx.num_inputs() > 3) ctx.fail("Conv takes 2 or 3 inputs (X, W, B), got ", ctx.num_inputs());
  const Value& w = ctx.tensor(1);
  const Dims wk(w.shape().begin() + std::min<std::size_t>(2, w.rank()), w.shape().end());
  if (ctx.attr("kernel_shape") && ctx.attr_ints("kernel_shape") != wk)
    ctx.fail<ShapeError>("kernel_shape ", Shape(ctx.attr_ints("kernel_shape")),
                         " differs from the weight's spatial dims ", Shape(wk), " (weight ",
                         w.describe(), ")");
  if (ctx.attr_int("group", 1) <= 0)
    ctx.fail("group must be positive, got ", ctx.attr_int("group", 1));
  if (ctx.has(2)) {
    const Value& b = ctx.tensor(2);
    if (b.rank() != 1 || (w.rank() > 0 && b.shape()[0] != w.shape()[0]))
      ctx.fail<ShapeError>("bias ", b.describe(), " must have shape [", w.rank() ? w.shape()[0] : 0,
                           "] (one value per output channel of weight ", w.describe(), ")");
  }
}

}  // namespace

bool conv_fused(OpContext& ctx, const ConvFusion& f) {
  check_conv_node(ctx);
  if (ctx.device.kind() != DeviceKind::Cpu || ctx.device.is_autodiff()) return false;
  if (ctx.num_inputs() < 2 || !ctx.has(1) || (!f.x_blocked && !ctx.has(0))) return false;
  const Value* x = f.x_blocked ? nullptr : ctx.inputs[0];
  const Value& w = *ctx.inputs[1];
  if (x && (!x->is_tensor() || x->type() != ElemType::Float)) return false;
  const Dims xshape = x ? x->shape() : f.x_blocked->shape.dims;
  if (!w.is_tensor() || w.type() != ElemType::Float || xshape.size() < 3 || xshape.size() > 5 ||
      w.rank() != xshape.size())
    return false;
  const Value* b = ctx.has(2) ? ctx.inputs[2] : nullptr;
  if (b && (!b->is_tensor() || b->type() != ElemType::Float || b->rank() != 1)) return false;
  const Value* res = f.residual_blocked ? nullptr : f.residual;
  if (res && (!res->is_tensor() || res->type() != ElemType::Float || res->rank() != xshape.size()))
    return false;
  const Dims kernel = ctx.attr_ints("kernel_shape", Dims(w.shape().begin() + 2, w.shape().end()));
  if (kernel != Dims(w.shape().begin() + 2, w.shape().end())) return false;
  const Spatial s = spatial_attrs_of(
      ctx, xshape, [&] { return x ? x->describe() : std::string("a blocked activation"); }, kernel,
      false);
  if (s.begin != s.end) return false;
  cpu::ConvFusedOptions o;
  o.stride = s.strides;
  o.padding = s.begin;
  o.dilation = s.dilations;
  o.groups = ctx.attr_int("group", 1);
  o.relu = f.relu;
  o.keep_blocked = f.keep_blocked;
  o.reuse_residual = f.reuse_residual;
  const auto prim = [](const Value& v) {
    return logical_view(dispatch::cpu_primitive(v.floats().primitive()), v.rank());
  };
  std::optional<CpuTensor> bias;
  if (b) bias = prim(*b);
  const cpu::ConvOperand xo = x ? cpu::ConvOperand(prim(*x)) : cpu::ConvOperand(*f.x_blocked);
  std::optional<cpu::ConvOperand> ro;
  if (f.residual_blocked)
    ro.emplace(*f.residual_blocked);
  else if (res)
    ro.emplace(prim(*res));
  auto y = cpu::conv_fused(xo, prim(w), bias, ro ? &*ro : nullptr, o, f.pack);
  if (!y) return false;
  if (y->index() == 1) {
    if (f.blocked_out)
      *f.blocked_out = std::get<1>(std::move(*y));
    else
      return false;  // not asked for
    return true;
  }
  CpuTensor yt = std::get<0>(std::move(*y));
  const Dims dims = yt.shape.dims;
  ctx.set(0, Value::tensor(ElemType::Float, dims,
                           FloatStore(dispatch::from_cpu_primitive<Float>(
                               padded_view(std::move(yt)), ctx.device))));
  return true;
}

bool max_pool_blocked(const OpContext& ctx, const cpu::ConvActivation& x,
                      std::optional<cpu::ConvActivation>* out) {
  if (ctx.device.kind() != DeviceKind::Cpu || ctx.device.is_autodiff()) return false;
  if (ctx.wants(1) || ctx.attr_int("ceil_mode", 0) != 0) return false;
  const Dims xshape = x.shape.dims;
  if (xshape.size() < 4 || xshape.size() > 5 || !ctx.attr("kernel_shape")) return false;
  const Dims kernel = ctx.attr_ints("kernel_shape");
  const Spatial s = spatial_attrs_of(
      ctx, xshape, [] { return std::string("a blocked activation"); }, kernel, false);
  if (s.begin != s.end) return false;
  for (auto d : s.dilations)
    if (d != 1) return false;
  auto y = cpu::max_pool_blocked(x, s.kernel, s.strides, s.begin);
  if (!y) return false;
  *out = std::move(*y);
  return true;
}

Value plain_value(const cpu::ConvActivation& a, const Device& device) {
  CpuTensor t = cpu::to_plain(a);
  const Dims dims = t.shape.dims;
  return Value::tensor(
      ElemType::Float, dims,
      FloatStore(dispatch::from_cpu_primitive<Float>(padded_view(std::move(t)), device)));
}

namespace {

void op_Conv(OpContext& ctx) {
  // The CPU fast path when it applies, so that a Conv run alone (run_op, generated code)
  // computes exactly what the interpreter's fused nodes do (the same oneDNN kernels).
  // conv_fused checks the node first, whether it applies or not.
  if (!fusion_enabled())
    check_conv_node(ctx);
  else if (conv_fused(ctx, ConvFusion{}))
    return;
  const Value& x = ctx.tensor(0);
  const Value& w = ctx.tensor(1);
  if (x.rank() < 3 || x.rank() > 5 || w.rank() != x.rank())
    ctx.fail<ShapeError>("input ", x.describe(), " and weight ", w.describe(),
                         " must have the same rank 3, 4 or 5");
  const std::size_t sp = x.rank() - 2;
  const Dims kernel = ctx.attr_ints("kernel_shape", Dims(w.shape().begin() + 2, w.shape().end()));
  const Spatial s = spatial_attrs(ctx, x, kernel, false);
  const std::int64_t group = ctx.attr_int("group", 1);
  if (x.shape()[1] != w.shape()[1] * group)
    ctx.fail<ShapeError>("input ", x.describe(), " has ", x.shape()[1], " channels but weight ",
                         w.describe(), " with group ", group, " expects ", w.shape()[1] * group);
  // An empty batch or no output channels: the empty result of the right shape (as
  // onnxruntime gives), not the kernels' reshape errors.
  if ((x.shape()[0] == 0 || w.shape()[0] == 0) && x.type() == ElemType::Float) {
    Dims out{x.shape()[0], w.shape()[0]};
    for (std::size_t i = 0; i < sp; ++i) {
      const std::int64_t span =
          x.shape()[2 + i] + s.begin[i] + s.end[i] - ((kernel[i] - 1) * s.dilations[i] + 1);
      if (span < 0)
        ctx.fail<ShapeError>("the kernel ", Shape(kernel), " is larger than the padded input ",
                             x.describe());
      out.push_back(span / s.strides[i] + 1);
    }
    ctx.set(0,
            Value::from_data(TensorData::full(Shape(out), 0.0, DType::F32), ctx.device, x.type()));
    return;
  }
  Value in = x;
  Dims pads = s.begin;
  if (s.begin != s.end) {
    in = pad_spatial(ctx, x, s.begin, s.end, 0.0);
    pads.assign(sp, 0);
  }
  const auto bias = bias_of(ctx, 2);
  FloatStore y = sp == 1   ? conv_n<1>(in, w, bias, s.strides, pads, s.dilations, group)
                 : sp == 2 ? conv_n<2>(in, w, bias, s.strides, pads, s.dilations, group)
                           : conv_n<3>(in, w, bias, s.strides, pads, s.dilations, group);
  ctx.set(0, Value::tensor(x.type(), logical_dims(y, x.rank()), y));
}

template <std::size_t N>
FloatStore conv_t_n(const Value& x, const Value& w, const Dims& strides, const Dims& dil,
                    std::int64_t groups) {
  ConvTransposeOptions<N> o;
  o.stride = arr<N>(strides);
  o.dilation = arr<N>(dil);
  o.groups = groups;
  auto xt = x.to_tensor<N + 2>();
  auto wt = w.to_tensor<N + 2>();
  DTensor<N + 2> y = [&] {
    if constexpr (N == 1)
      return module::conv_transpose1d(xt, wt, std::nullopt, o);
    else if constexpr (N == 2)
      return module::conv_transpose2d(xt, wt, std::nullopt, o);
    else
      return module::conv_transpose3d(xt, wt, std::nullopt, o);
  }();
  return y.template reshape<R>(P(y.shape().dims));
}

void op_ConvTranspose(OpContext& ctx) {
  const Value& x = ctx.tensor(0);
  const Value& w = ctx.tensor(1);
  if (x.rank() < 3 || x.rank() > 5 || w.rank() != x.rank())
    ctx.fail<ShapeError>("input ", x.describe(), " and weight ", w.describe(),
                         " must have the same rank 3, 4 or 5");
  const std::size_t sp = x.rank() - 2;
  const Dims kernel = ctx.attr_ints("kernel_shape", Dims(w.shape().begin() + 2, w.shape().end()));
  Spatial s = spatial_attrs(ctx, x, kernel, true);
  const std::int64_t group = ctx.attr_int("group", 1);
  if (group <= 0 || x.shape()[1] != w.shape()[0])
    ctx.fail<ShapeError>("input ", x.describe(), " has ", x.shape()[1], " channels but weight ",
                         w.describe(), " expects ", w.shape()[0]);
  const Dims out_pad = ctx.attr_ints("output_padding", Dims(sp, 0));
  const Dims out_shape = ctx.attr_ints("output_shape");
  if (out_pad.size() != sp || (!out_shape.empty() && out_shape.size() < sp))
    ctx.fail<ShapeError>("output_padding and output_shape must give ", sp, " spatial sizes");
  const std::string ap = ctx.attr_string("auto_pad", "NOTSET");
  Dims full(sp);
  for (std::size_t i = 0; i < sp; ++i)
    full[i] = s.strides[i] * (x.shape()[2 + i] - 1) + (kernel[i] - 1) * s.dilations[i] + 1;
  if (!out_shape.empty() || ap == "SAME_UPPER" || ap == "SAME_LOWER") {
    for (std::size_t i = 0; i < sp; ++i) {
      const std::int64_t target = !out_shape.empty() ? out_shape[out_shape.size() - sp + i]
                                                     : x.shape()[2 + i] * s.strides[i];
      const std::int64_t total = full[i] + out_pad[i] - target;
      const std::int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);  // floor
      if (ap == "SAME_UPPER") {
        s.begin[i] = half;
        s.end[i] = total - half;
      } else {
        s.begin[i] = total - half;
        s.end[i] = half;
      }
    }
  }
  FloatStore y = sp == 1   ? conv_t_n<1>(x, w, s.strides, s.dilations, group)
                 : sp == 2 ? conv_t_n<2>(x, w, s.strides, s.dilations, group)
                           : conv_t_n<3>(x, w, s.strides, s.dilations, group);
  Value v = Value::tensor(x.type(), logical_dims(y, x.rank()), y);
  // output_padding adds zeros (before the bias) at the end; pads crop.
  bool extra = false;
  for (auto p : out_pad) extra |= p > 0;
  if (extra) v = pad_spatial(ctx, v, Dims(sp, 0), out_pad, 0.0);
  for (std::size_t i = 0; i < sp; ++i) {
    // Negative pads (an output_shape larger than the full result) add zeros.
    if (s.begin[i] < 0 || s.end[i] < 0) {
      Dims b(sp, 0), e(sp, 0);
      b[i] = std::max<std::int64_t>(0, -s.begin[i]);
      e[i] = std::max<std::int64_t>(0, -s.end[i]);
      v = pad_spatial(ctx, v, b, e, 0.0);
      s.begin[i] = std::max<std::int64_t>(0, s.begin[i]);
      s.end[i] = std::max<std::int64_t>(0, s.end[i]);
    }
    const std::int64_t len = v.shape()[2 + i] - s.begin[i] - s.end[i];
    if (len <= 0) ctx.fail<ShapeError>("pads remove the whole output of axis ", 2 + i);
    if (s.begin[i] || s.end[i])
      v = narrow_along(ctx, v, static_cast<std::int64_t>(2 + i), s.begin[i], len);
  }
  if (ctx.has(2)) {
    Dims bshape(x.rank(), 1);
    bshape[1] = ctx.tensor(2).numel();
    const Value b = reshaped(ctx.tensor(2), bshape);
    v = Value::tensor(x.type(), v.shape(), v.floats().add(b.floats()));
  }
  ctx.set(0, v);
}

/// Max or average pooling over 1, 2 or 3 spatial dims.
template <bool Max>
void pool(OpContext& ctx) {
  const Value& x0 = ctx.tensor(0);
  if (x0.rank() < 3) ctx.fail<ShapeError>("input must be [N, C, ...], got ", x0.describe());
  const std::size_t sp = x0.rank() - 2;
  if (sp > 3)
    ctx.fail<UnsupportedError>(sp, "-d pooling is not supported (input ", x0.describe(), ")");
  const Dims kernel = ctx.attr_ints("kernel_shape");
  Spatial s = spatial_attrs(ctx, x0, kernel, false);
  const bool ceil = ctx.attr_int("ceil_mode", 0) != 0;
  const bool include_pad = ctx.attr_int("count_include_pad", 0) != 0;
  bool dilated = false;
  for (auto d : s.dilations) dilated = dilated || d != 1;
  // Max pooling (unless Indices are wanted), 3-d, dilated average pooling and pads the
  // backend's 2-d kernels do not take (asymmetric, more than half the kernel) pool by slices.
  bool backend_ok = sp <= 2 && x0.is_float_store() && (Max || !dilated);
  for (std::size_t i = 0; i < sp; ++i)
    backend_ok = backend_ok && s.begin[i] == s.end[i] && s.begin[i] <= s.kernel[i] / 2;
  if (Max) backend_ok = false;  // slices measured 2x faster than the 2-d kernel (ResNet stem)
  if (!backend_ok && !(Max && ctx.wants(1))) {
    const Dims in(x0.shape().begin() + 2, x0.shape().end());
    const PoolGeometry g =
        pool_geometry(ctx, in, s.kernel, s.strides, s.dilations, s.begin, s.end, ceil);
    ctx.set(0, pool_nd(ctx, x0, g,
                       Max           ? PoolMode::Max
                       : include_pad ? PoolMode::AvgIncludePad
                                     : PoolMode::AvgExcludePad));
    return;
  }
  // 1-d pools run as 2-d over [N, C, 1, L].
  Value x = x0;
  if (sp == 1) {
    x = reshaped(x0, {x0.shape()[0], x0.shape()[1], 1, x0.shape()[2]});
    s.kernel.insert(s.kernel.begin(), 1);
    s.strides.insert(s.strides.begin(), 1);
    s.dilations.insert(s.dilations.begin(), 1);
    s.begin.insert(s.begin.begin(), 0);
    s.end.insert(s.end.begin(), 0);
  }
  PoolArg2 k{s.kernel[0], s.kernel[1]}, st{s.strides[0], s.strides[1]},
      dl{s.dilations[0], s.dilations[1]}, pd{s.begin[0], s.begin[1]};
  bool explicit_pad = s.begin != s.end;
  for (int i = 0; i < 2; ++i)
    if (s.begin[static_cast<std::size_t>(i)] > s.kernel[static_cast<std::size_t>(i)] / 2)
      explicit_pad = true;
  if (ceil && explicit_pad) {
    // Ceil mode with padding done by hand: extend the end so the last window fits.
    for (std::size_t i = 0; i < 2; ++i) {
      const std::int64_t in = x.shape()[2 + i] + s.begin[i] + s.end[i];
      const std::int64_t eff = (s.kernel[i] - 1) * s.dilations[i] + 1;
      std::int64_t out = (in - eff + s.strides[i] - 1) / s.strides[i] + 1;
      if ((out - 1) * s.strides[i] >= x.shape()[2 + i] + s.begin[i]) --out;
      const std::int64_t need = (out - 1) * s.strides[i] + eff - in;
      if (need > 0) s.end[i] += need;
    }
  }
  const auto x4 = [&](const Value& v) { return v.to_tensor<4>(); };
  DTensor<4> y = [&]() -> DTensor<4> {
    if (!explicit_pad) {
      if (Max) return module::max_pool2d(x4(x), k, st, pd, dl, ceil);
      if (!include_pad) return module::avg_pool2d(x4(x), k, st, pd, false, ceil);
      return module::avg_pool2d(x4(x), k, st, pd, true, ceil);
    }
    const PoolArg2 zero{0, 0};
    if (Max) {
      const Value xp =
          pad_spatial(ctx, x, s.begin, s.end, -std::numeric_limits<double>::infinity());
      return module::max_pool2d(x4(xp), k, st, zero, dl, false);
    }
    const Value xp = pad_spatial(ctx, x, s.begin, s.end, 0.0);
    DTensor<4> sum = module::avg_pool2d(x4(xp), k, st, zero, true, false);
    if (include_pad) return sum;
    // Divide by the count of real elements: the same pool over a padded map of ones.
    Value ones = Value::tensor(x.type(), x.shape(),
                               FloatStore::ones(P(x.shape()), ctx.device, x.floats().dtype()));
    const Value op = pad_spatial(ctx, ones, s.begin, s.end, 0.0);
    const DTensor<4> cnt = module::avg_pool2d(x4(op), k, st, zero, true, false);
    return sum.div(cnt);
  }();
  Dims out = y.shape().dims;
  if (sp == 1) out.erase(out.begin() + 2);
  ctx.set(0, Value::tensor(x0.type(), out, y.template reshape<R>(P(y.shape().dims))));
  if (Max && ctx.wants(1)) {
    if (explicit_pad || sp != 2)
      ctx.fail<UnsupportedError>("the Indices output needs symmetric padding and 2 spatial dims");
    auto [v, idx] = module::max_pool2d_with_indices(x4(x), k, st, pd, dl, ceil);
    const std::int64_t h = x.shape()[2], w = x.shape()[3];
    if (ctx.attr_int("storage_order", 0) != 0) {
      // column-major within the plane: h * W + w -> w * H + h
      const IntStore hh = idx.template reshape<R>(P(idx.shape().dims)).div_scalar(w);
      const IntStore ww = idx.template reshape<R>(P(idx.shape().dims)).remainder_scalar(w);
      const IntStore cm = ww.mul_scalar(h).add(hh);
      idx = cm.template reshape<4>(idx.shape());
    }
    const std::int64_t nc = y.shape()[0] * y.shape()[1];
    Dims plane(R, 1);
    plane[R - 4] = y.shape()[0];
    plane[R - 3] = y.shape()[1];
    const IntStore base = DTensor<1, Int>::arange(0, nc, ctx.device)
                              .mul_scalar(h * w)
                              .template reshape<R>(Shape(plane));
    const IntStore flat = idx.template reshape<R>(P(idx.shape().dims)).add(base);
    ctx.set(1, Value::tensor(ElemType::Int64, out, flat));
  }
}

void op_LpPool(OpContext& ctx) {
  const Value& x = ctx.tensor(0);
  if (x.rank() < 3) ctx.fail<ShapeError>("input must be [N, C, ...], got ", x.describe());
  const double p = static_cast<double>(ctx.attr_int("p", 2));
  const Spatial s = spatial_attrs(ctx, x, ctx.attr_ints("kernel_shape"), false);
  const Dims in(x.shape().begin() + 2, x.shape().end());
  const PoolGeometry g = pool_geometry(ctx, in, s.kernel, s.strides, s.dilations, s.begin, s.end,
                                       ctx.attr_int("ceil_mode", 0) != 0);
  const Value xp = map_float(ctx, x, [&](const FloatStore& f) { return f.abs().powf_scalar(p); });
  ctx.set(0, map_float(ctx, pool_nd(ctx, xp, g, PoolMode::Sum),
                       [&](const FloatStore& f) { return f.powf_scalar(1.0 / p); }));
}

template <bool Max>
void global_pool(OpContext& ctx) {
  const Value& x = ctx.tensor(0);
  if (x.rank() < 3) ctx.fail<ShapeError>("input must be [N, C, ...], got ", x.describe());
  Dims out = x.shape();
  FloatStore f = x.floats();
  double count = 1;
  for (std::size_t i = 2; i < x.rank(); ++i) {
    const std::int64_t pa = pax(static_cast<std::int64_t>(i), x.rank());
    f = Max ? f.max_dim(pa) : f.sum_dim(pa);
    count *= static_cast<double>(x.shape()[i]);
    out[i] = 1;
  }
  if (!Max) f = f.div_scalar(count);
  ctx.set(0, Value::tensor(x.type(), out, f));
}

void op_Gemm(OpContext& ctx) {
  const Value& a = ctx.tensor(0);
  const Value& b = ctx.tensor(1);
  if (a.rank() != 2 || b.rank() != 2)
    ctx.fail<ShapeError>("A ", a.describe(), " and B ", b.describe(), " must have rank 2");
  const bool ta = ctx.attr_int("transA", 0) != 0, tb = ctx.attr_int("transB", 0) != 0;
  const double alpha = ctx.attr_float("alpha", 1.0), beta = ctx.attr_float("beta", 1.0);
  const std::int64_t m = a.shape()[ta ? 1 : 0], k1 = a.shape()[ta ? 0 : 1];
  const std::int64_t k2 = b.shape()[tb ? 1 : 0], n = b.shape()[tb ? 0 : 1];
  if (k1 != k2)
    ctx.fail<ShapeError>("inner dims differ: A ", a.describe(), " (transA ", ta, ") and B ",
                         b.describe(), " (transB ", tb, ")");
  const Dims out{m, n};
  if (a.is_float_store()) {
    DTensor<2> A = a.to_tensor<2>(), Bm = b.to_tensor<2>();
    if (ta) A = A.transpose();
    DTensor<2> y = [&] {
      if (tb && alpha == 1.0 && beta == 1.0 && ctx.has(2) && ctx.tensor(2).rank() <= 1 &&
          ctx.tensor(2).numel() == n)
        return module::linear(
            A, Bm, std::optional<DTensor<1>>(ctx.tensor(2).floats().template reshape<1>(Shape{n})));
      DTensor<2> p = A.matmul(tb ? Bm.transpose() : Bm);
      if (alpha != 1.0) p = p.mul_scalar(alpha);
      if (ctx.has(2) && beta != 0.0) {
        const Value c = expand_to(ctx.tensor(2), broadcast_dims(ctx, ctx.tensor(2).shape(), out));
        DTensor<2> cv = c.floats().template reshape<2>(Shape(out));
        p = p.add(beta == 1.0 ? cv : cv.mul_scalar(beta));
      }
      return p;
    }();
    ctx.set(0, Value::tensor(a.type(), out, y.template reshape<R>(P(out))));
    return;
  }
  auto A = a.ints().template reshape<2>(Shape(a.shape()));
  auto Bm = b.ints().template reshape<2>(Shape(b.shape()));
  if (ta) A = A.transpose();
  if (tb) Bm = Bm.transpose();
  auto p = A.matmul(Bm);
  if (alpha != 1.0) p = p.mul_scalar(static_cast<std::int64_t>(alpha));
  IntStore y = p.template reshape<R>(P(out));
  if (ctx.has(2) && beta != 0.0)
    y = y.add(ctx.tensor(2).ints().mul_scalar(static_cast<std::int64_t>(beta)));
  ctx.set(0, Value::tensor(a.type(), out, y));
}

}  // namespace

/// numpy.matmul of two numeric values (1-d operands promoted and the added dim removed).
Value matmul_values(const OpContext& ctx, const Value& a, const Value& b) {
  if (a.rank() == 0 || b.rank() == 0)
    ctx.fail<ShapeError>("MatMul operands must not be scalars: ", a.describe(), ", ", b.describe());
  Dims as = a.shape(), bs = b.shape();
  const bool av = as.size() == 1, bv = bs.size() == 1;
  if (av) as.insert(as.begin(), 1);
  if (bv) bs.push_back(1);
  if (as.back() != bs[bs.size() - 2])
    ctx.fail<ShapeError>("inner dims differ: ", a.describe(), " x ", b.describe());
  Dims ab(as.begin(), as.end() - 2), bb(bs.begin(), bs.end() - 2);
  Dims out = broadcast_dims(ctx, ab, bb);
  out.push_back(as[as.size() - 2]);
  out.push_back(bs.back());
  Dims logical = out;
  if (av) logical.erase(logical.end() - 2);
  if (bv) logical.pop_back();
  // [.., m, k] x [k, n] with no batch in b: one GEMM over the flattened rows.
  if (bs.size() == 2 && as.size() > 2 && as.back() > 0) {
    const std::int64_t rows = numel_of(as) / as.back();
    const Value a2 = reshaped(a, {rows, as.back()});
    const Value b2 = reshaped(b, bs);
    if (a.is_float_store() && b.is_float_store()) {
      DTensor<2> y = a2.to_tensor<2>().matmul(b2.to_tensor<2>());
      return Value::tensor(a.type(), logical, y.template reshape<R>(P({numel_of(logical)})));
    }
  }
  const Value a8 = reshaped(a, as), b8 = reshaped(b, bs);
  if (a.is_float_store() && b.is_float_store())
    return Value::tensor(a.type(), logical, a8.floats().matmul(b8.floats()));
  if (a.is_int_store() && b.is_int_store()) {
    IntStore y = a8.ints().cast(DType::I64).matmul(b8.ints().cast(DType::I64));
    return Value::tensor(a.type(), logical, y.cast(storage_dtype(a.type())));
  }
  ctx.fail<DTypeError>("MatMul operands must have one numeric type: ", a.describe(), ", ",
                       b.describe());
}

namespace {

void op_MatMul(OpContext& ctx) {
  ctx.set(0, matmul_values(ctx, ctx.tensor(0), ctx.tensor(1)));
}

void op_Dropout(OpContext& ctx) {
  const Value& x = ctx.tensor(0);
  const bool training = ctx.has(2) && host_scalar(ctx.tensor(2)) != 0;
  const double ratio = ctx.has(1) ? host_scalar(ctx.tensor(1)) : ctx.attr_float("ratio", 0.5);
  if (training && ratio > 0)
    ctx.fail<UnsupportedError>("training-mode Dropout (random masks) is not supported");
  ctx.set(0, x);
  if (ctx.wants(1))
    ctx.set(1, Value::tensor(ElemType::Bool, x.shape(),
                             BoolStore::full(P(x.shape()), 1.0, ctx.device)));
}

}  // namespace

void register_nn(OpRegistry& r) {
  r.add("Conv", op_Conv);
  r.add("ConvTranspose", op_ConvTranspose);
  r.add("MaxPool", pool<true>);
  r.add("AveragePool", pool<false>);
  r.add("LpPool", op_LpPool);
  r.add("GlobalAveragePool", global_pool<false>);
  r.add("GlobalMaxPool", global_pool<true>);
  r.add("Gemm", op_Gemm);
  r.add("MatMul", op_MatMul);
  r.add("Dropout", op_Dropout);
}

}  // namespace ember::onnx::detail
