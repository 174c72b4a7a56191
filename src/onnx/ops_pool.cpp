// N-d pooling composed of strided slices: any number of spatial dims, dilations, asymmetric
// pads, ceil mode, integer inputs. Each spatial dim is reduced in turn over its kernel
// offsets (max and sum are separable), so a k x k window costs 2(k - 1) element-wise ops.
#include "kernels.hpp"
#include "pool_nd.hpp"

namespace ember::onnx::detail {

namespace {

double lowest_for(DType d) {
  switch (d) {
    case DType::U8:
      return 0;
    case DType::I8:
      return -128;
    case DType::I16:
      return -32768;
    case DType::I32:
      return -2147483648.0;
    case DType::I64:
      return -9223372036854775808.0;
    default:
      return -std::numeric_limits<double>::infinity();
  }
}

/// Pads the spatial dims of a store (logical rank r) by (before, after) with `value`.
template <class S>
S pad_store(const S& s, std::size_t r, const Dims& before, const Dims& after, double value) {
  const std::size_t sp = r - 2;
  Dims pads;
  bool any = false;
  for (std::size_t k = 0; k < sp; ++k) {
    const std::size_t i = sp - 1 - k;
    pads.push_back(before[i]);
    pads.push_back(after[i]);
    any = any || before[i] != 0 || after[i] != 0;
  }
  return any ? s.pad(pads, PadMode::Constant, value) : s;
}

/// Reduces each spatial dim of a padded store over its kernel offsets (sum or max).
template <class S>
S window_reduce(S s, std::size_t r, const PoolGeometry& g, bool max) {
  const std::size_t sp = r - 2;
  for (std::size_t i = 0; i < sp; ++i) {
    const auto axis = static_cast<std::size_t>(pax(static_cast<std::int64_t>(2 + i), r));
    std::optional<S> acc;
    for (std::int64_t j = 0; j < g.kernel[i]; ++j) {
      std::vector<Slice> sl(R, Slice{});
      const std::int64_t start = j * g.dilations[i];
      sl[axis] = Slice{start, start + (g.out[i] - 1) * g.strides[i] + 1, g.strides[i], false};
      S part = s.slice(sl);
      if (!acc)
        acc = part;
      else
        acc = max ? acc->max_pair(part) : acc->add(part);
    }
    s = *acc;
  }
  return s;
}

}  // namespace

PoolGeometry pool_geometry(const OpContext& ctx, const Dims& in, const Dims& kernel,
                           const Dims& strides, const Dims& dilations, const Dims& begin,
                           const Dims& end, bool ceil) {
  PoolGeometry g{kernel, strides, dilations, begin, end, {}, {}};
  for (std::size_t i = 0; i < in.size(); ++i) {
    const std::int64_t span = (kernel[i] - 1) * dilations[i] + 1;
    const std::int64_t padded = in[i] + begin[i] + end[i];
    if (padded < span)
      ctx.fail<ShapeError>("the window (", span, ") is larger than the padded input (", padded,
                           ") in spatial dim ", i);
    std::int64_t o =
        ceil ? (padded - span + strides[i] - 1) / strides[i] + 1 : (padded - span) / strides[i] + 1;
    if (ceil && (o - 1) * strides[i] >= in[i] + begin[i]) --o;
    g.out.push_back(o);
    g.extra.push_back(std::max<std::int64_t>(0, (o - 1) * strides[i] + span - padded));
  }
  return g;
}

Value pool_nd(const OpContext& ctx, const Value& x, const PoolGeometry& g, PoolMode mode) {
  const std::size_t r = x.rank(), sp = r - 2;
  Dims out = x.shape();
  for (std::size_t i = 0; i < sp; ++i) out[2 + i] = g.out[i];
  Dims after(sp);
  for (std::size_t i = 0; i < sp; ++i) after[i] = g.end[i] + g.extra[i];
  if (mode == PoolMode::Max) {
    if (x.is_float_store()) {
      const FloatStore p = pad_store(x.floats(), r, g.begin, after, lowest_for(x.floats().dtype()));
      return Value::tensor(x.type(), out, window_reduce(p, r, g, true));
    }
    if (x.is_int_store()) {
      const IntStore p = pad_store(x.ints(), r, g.begin, after, lowest_for(x.ints().dtype()));
      return Value::tensor(x.type(), out, window_reduce(p, r, g, true));
    }
    ctx.fail<DTypeError>("pooling needs a numeric tensor, got ", x.describe());
  }
  const FloatStore& f = x.floats();
  const FloatStore sum = window_reduce(pad_store(f, r, g.begin, after, 0.0), r, g, false);
  if (mode == PoolMode::Sum) return Value::tensor(x.type(), out, sum);
  // Divisor: the window's count of input elements (and pads with count_include_pad), never
  // the part of a ceil-mode window beyond the padded input.
  Dims ones_shape(r, 1);
  for (std::size_t i = 0; i < sp; ++i) ones_shape[2 + i] = x.shape()[2 + i];
  const FloatStore ones = FloatStore::ones(P(ones_shape), x.device(), f.dtype());
  const FloatStore valid =
      mode == PoolMode::AvgIncludePad
          ? pad_store(pad_store(ones, r, g.begin, g.end, 1.0), r, Dims(sp, 0), g.extra, 0.0)
          : pad_store(ones, r, g.begin, after, 0.0);
  const FloatStore count = window_reduce(valid, r, g, false);
  return Value::tensor(x.type(), out, sum.div(count));
}

}  // namespace ember::onnx::detail
