// Resize / Upsample (every coordinate mode, nearest/linear/cubic, antialias,
// tf_crop_and_resize, keep_aspect_ratio_policy) and GridSample.
//
// Resize is separable: each resized axis is a weighted sum of `taps` selections along it,
// out = sum_t w_t * x.select(axis, idx_t), with the indices and weights of every output
// position computed on the host by ONNX's formulas (Operators.md, Resize).
#include "ember/tensor/module/interpolate.hpp"
#include "kernels.hpp"

namespace ember::onnx::detail {

namespace {

struct AxisPlan {
  std::int64_t out = 0;
  std::vector<std::vector<std::int64_t>> idx;  // [tap][out]
  std::vector<std::vector<double>> w;          // [tap][out]
  std::vector<bool> outside;                   // tf_crop_and_resize extrapolation
};

double cubic_w(double d, double a) {
  d = std::fabs(d);
  if (d <= 1) return ((a + 2) * d - (a + 3)) * d * d + 1;
  if (d < 2) return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a;
  return 0;
}

AxisPlan plan_axis(const OpContext& ctx, std::int64_t in, std::int64_t out, double scale,
                   double roi_start, double roi_end) {
  const std::string mode = ctx.attr_string("mode", "nearest");
  const std::string ct = ctx.attr_string("coordinate_transformation_mode", "half_pixel");
  const std::string nm = ctx.attr_string("nearest_mode", "round_prefer_floor");
  const double a = ctx.attr_float("cubic_coeff_a", -0.75);
  const bool exclude = ctx.attr_int("exclude_outside", 0) != 0;
  const bool antialias = ctx.attr_int("antialias", 0) != 0 && scale < 1 && mode != "nearest";
  AxisPlan p;
  p.out = out;
  p.outside.assign(static_cast<std::size_t>(out), false);
  auto orig = [&](std::int64_t x) -> double {
    const double xr = static_cast<double>(x);
    if (ct == "half_pixel") return (xr + 0.5) / scale - 0.5;
    if (ct == "half_pixel_symmetric") {
      const double adj = static_cast<double>(out) / (scale * static_cast<double>(in));
      const double center = static_cast<double>(in) / 2;
      return center * (1 - adj) + (xr + 0.5) / scale - 0.5;
    }
    if (ct == "pytorch_half_pixel") return out > 1 ? (xr + 0.5) / scale - 0.5 : 0.0;
    if (ct == "align_corners") {
      // the output length as the scale gives it (fractional), as ONNX's reference
      const double len = scale * static_cast<double>(in);
      return out == 1 ? 0.0 : xr * static_cast<double>(in - 1) / (len - 1);
    }
    if (ct == "asymmetric") return xr / scale;
    if (ct == "tf_crop_and_resize")
      return out > 1 ? roi_start * static_cast<double>(in - 1) + xr * (roi_end - roi_start) *
                                                                     static_cast<double>(in - 1) /
                                                                     static_cast<double>(out - 1)
                     : 0.5 * (roi_start + roi_end) * static_cast<double>(in - 1);
    ctx.fail("unknown coordinate_transformation_mode \"", ct, "\"");
  };
  auto clampi = [&](std::int64_t i) { return std::clamp<std::int64_t>(i, 0, in - 1); };
  std::vector<std::vector<std::pair<std::int64_t, double>>> taps(static_cast<std::size_t>(out));
  for (std::int64_t o = 0; o < out; ++o) {
    const double x = orig(o);
    auto& t = taps[static_cast<std::size_t>(o)];
    if (ct == "tf_crop_and_resize" && (x < 0 || x > static_cast<double>(in - 1))) {
      p.outside[static_cast<std::size_t>(o)] = true;
      t.push_back({0, 0.0});
      continue;
    }
    if (mode == "nearest") {
      double r;
      if (nm == "round_prefer_floor")
        r = (x - std::floor(x) == 0.5) ? std::floor(x) : std::round(x);
      else if (nm == "round_prefer_ceil")
        r = std::round(x);
      else if (nm == "floor")
        r = std::floor(x);
      else if (nm == "ceil")
        r = std::ceil(x);
      else
        ctx.fail("unknown nearest_mode \"", nm, "\"");
      t.push_back({clampi(static_cast<std::int64_t>(r)), 1.0});
      continue;
    }
    if (mode != "linear" && mode != "cubic") ctx.fail("unknown mode \"", mode, "\"");
    const bool cubic = mode == "cubic";
    const double support = (cubic ? 2.0 : 1.0) / (antialias ? scale : 1.0);
    const double f = antialias ? scale : 1.0;
    const std::int64_t lo = static_cast<std::int64_t>(std::floor(x - support)) + 1;
    const std::int64_t hi = static_cast<std::int64_t>(std::floor(x + support));
    double sum = 0;
    std::vector<std::pair<std::int64_t, double>> raw;
    for (std::int64_t j = lo - (antialias ? 0 : 0); j <= hi; ++j) {
      const double d = (x - static_cast<double>(j)) * f;
      double wt = cubic ? cubic_w(d, a) : std::max(0.0, 1 - std::fabs(d));
      if (cubic && !antialias && std::fabs(x - static_cast<double>(j)) >= 2) wt = 0;
      if ((exclude || antialias) && (j < 0 || j >= in)) wt = 0;
      raw.push_back({j, wt});
      sum += wt;
    }
    if (!cubic && !antialias) {
      // plain linear: the two neighbours of the clamped coordinate
      raw.clear();
      const double xc = std::clamp(x, 0.0, static_cast<double>(in - 1));
      const auto x0 = static_cast<std::int64_t>(std::floor(xc));
      const double w1 = xc - static_cast<double>(x0);
      raw.push_back({x0, 1 - w1});
      raw.push_back({x0 + 1, w1});
      sum = 1;
    }
    for (auto& [j, wt] : raw) {
      if ((exclude || antialias) && sum != 0) wt /= sum;
      t.push_back({clampi(j), wt});
    }
  }
  std::size_t nt = 0;
  for (const auto& t : taps) nt = std::max(nt, t.size());
  p.idx.assign(nt, std::vector<std::int64_t>(static_cast<std::size_t>(out), 0));
  p.w.assign(nt, std::vector<double>(static_cast<std::size_t>(out), 0.0));
  for (std::size_t o = 0; o < taps.size(); ++o)
    for (std::size_t k = 0; k < taps[o].size(); ++k) {
      p.idx[k][o] = taps[o][k].first;
      p.w[k][o] = taps[o][k].second;
    }
  return p;
}

/// Applies a plan along logical axis `axis` of a float store of logical shape `shape`.
FloatStore apply_plan(const OpContext& ctx, const FloatStore& x, const Dims& shape,
                      std::size_t axis, const AxisPlan& p, double extrapolation) {
  const std::size_t r = shape.size();
  const std::int64_t pa = pax(static_cast<std::int64_t>(axis), r);
  Dims wshape(R, 1);
  wshape[static_cast<std::size_t>(pa)] = p.out;
  std::optional<FloatStore> acc;
  for (std::size_t k = 0; k < p.idx.size(); ++k) {
    const auto idx = DTensor<1, Int>::from_data(TensorData(p.idx[k], Shape{p.out}), ctx.device);
    FloatStore part = x.select(pa, idx);
    bool ones = true;
    for (double wv : p.w[k]) ones = ones && wv == 1.0;
    if (!ones) {
      const auto w =
          FloatStore::from_data(TensorData(p.w[k], Shape(wshape)), ctx.device, x.dtype());
      part = part.mul(w);
    }
    acc = acc ? acc->add(part) : part;
  }
  bool any_out = false;
  for (bool b : p.outside) any_out = any_out || b;
  if (any_out) {
    std::vector<bool> m(p.outside.begin(), p.outside.end());
    const auto mask = BoolStore::from_data(TensorData(m, Shape(wshape)), ctx.device);
    acc = acc->mask_fill(mask, extrapolation);
  }
  return *acc;
}

void resize_impl(OpContext& ctx, bool upsample) {
  const Value& x = ctx.tensor(0);
  const std::size_t r = x.rank();
  Dims axes = ctx.attr_ints("axes");
  if (axes.empty())
    for (std::size_t i = 0; i < r; ++i) axes.push_back(static_cast<std::int64_t>(i));
  for (auto& a : axes) a = norm_axis(ctx, a, r);
  std::vector<double> scales(r, 1.0), roi_s(r, 0.0), roi_e(r, 1.0);
  Dims out = x.shape();
  std::vector<double> sc;
  Dims sizes;
  if (upsample || ctx.opset < 11) {
    sc = upsample && ctx.opset < 9 ? ctx.attr_floats("scales") : ctx.tensor(1).to_doubles();
  } else {
    if (ctx.has(3) && ctx.tensor(3).numel() > 0) sizes = host_ints(ctx.tensor(3));
    if (ctx.has(2) && ctx.tensor(2).numel() > 0) sc = ctx.tensor(2).to_doubles();
    if (ctx.has(1) && ctx.tensor(1).numel() > 0) {
      const auto roi = ctx.tensor(1).to_doubles();
      if (roi.size() != 2 * axes.size())
        ctx.fail<ShapeError>("roi must hold ", 2 * axes.size(), " values");
      for (std::size_t k = 0; k < axes.size(); ++k) {
        roi_s[static_cast<std::size_t>(axes[k])] = roi[k];
        roi_e[static_cast<std::size_t>(axes[k])] = roi[k + axes.size()];
      }
    }
  }
  const bool crop = ctx.attr_string("coordinate_transformation_mode", "") == "tf_crop_and_resize";
  if (!sizes.empty()) {
    if (sizes.size() != axes.size())
      ctx.fail<ShapeError>("sizes must hold ", axes.size(), " values");
    const std::string policy = ctx.attr_string("keep_aspect_ratio_policy", "stretch");
    if (policy == "stretch") {
      for (std::size_t k = 0; k < axes.size(); ++k) {
        const auto a = static_cast<std::size_t>(axes[k]);
        out[a] = sizes[k];
        scales[a] = static_cast<double>(sizes[k]) / static_cast<double>(x.shape()[a]);
      }
    } else {
      double s = policy == "not_larger" ? std::numeric_limits<double>::infinity() : 0.0;
      for (std::size_t k = 0; k < axes.size(); ++k) {
        const double v = static_cast<double>(sizes[k]) /
                         static_cast<double>(x.shape()[static_cast<std::size_t>(axes[k])]);
        s = policy == "not_larger" ? std::min(s, v) : std::max(s, v);
      }
      for (auto a : axes) {
        out[static_cast<std::size_t>(a)] = static_cast<std::int64_t>(
            std::floor(s * static_cast<double>(x.shape()[static_cast<std::size_t>(a)]) + 0.5));
        scales[static_cast<std::size_t>(a)] = s;
      }
    }
  } else {
    if (sc.size() != axes.size())
      ctx.fail<ShapeError>("scales must hold ", axes.size(), " values, got ", sc.size());
    for (std::size_t k = 0; k < axes.size(); ++k) {
      const auto a = static_cast<std::size_t>(axes[k]);
      if (!(sc[k] > 0)) ctx.fail("scales must be positive, got ", sc[k]);
      scales[a] = sc[k];
      const double len = crop ? (roi_e[a] - roi_s[a]) : 1.0;
      out[a] =
          static_cast<std::int64_t>(std::floor(static_cast<double>(x.shape()[a]) * len * sc[k]));
    }
  }
  for (std::size_t a = 0; a < r; ++a)
    if (out[a] < 0 || out[a] > (std::int64_t{1} << 31))
      ctx.fail<ShapeError>("output size ", out[a], " of axis ", a, " is out of range");
  const double extrapolation = ctx.attr_float("extrapolation_value", 0.0);
  FloatStore f = as_float_store(x, x.is_float_store() ? x.floats().dtype() : DType::F64);
  Dims cur = x.shape();
  for (std::size_t a = 0; a < r; ++a) {
    if (out[a] == cur[a] && scales[a] == 1.0 && !crop) continue;
    const AxisPlan p = plan_axis(ctx, cur[a], out[a], scales[a], roi_s[a], roi_e[a]);
    f = apply_plan(ctx, f, cur, a, p, extrapolation);
    cur[a] = out[a];
  }
  if (x.is_float_store()) {
    ctx.set(0, Value::tensor(x.type(), out, f));
  } else {
    ctx.set(0, cast_value(ctx, Value::tensor(ElemType::Double, out, f.round()), x.type()));
  }
}

void op_Resize(OpContext& ctx) {
  resize_impl(ctx, false);
}

void op_Upsample(OpContext& ctx) {
  Node n = ctx.node;
  // Upsample = Resize with asymmetric coordinates (nearest: floor).
  for (const char* k : {"coordinate_transformation_mode", "nearest_mode"}) {
    Attribute a;
    a.name = k;
    a.kind = Attribute::Kind::String;
    a.s = std::string(k) == "nearest_mode" ? "floor" : "asymmetric";
    n.attributes.push_back(a);
  }
  OpContext c2{n, ctx.opset, ctx.device, ctx.inputs, {Value()}, {}, ctx.run_subgraph};
  resize_impl(c2, true);
  ctx.set(0, c2.outputs[0]);
}

void op_GridSample(OpContext& ctx) {
  const Value& x = ctx.tensor(0);
  const Value& grid = ctx.tensor(1);
  if (x.rank() != 4)
    ctx.fail<UnsupportedError>("only 2-d GridSample ([N, C, H, W]) is supported, got ",
                               x.describe());
  std::string mode = ctx.attr_string("mode", ctx.opset >= 20 ? "linear" : "bilinear");
  const std::string pad = ctx.attr_string("padding_mode", "zeros");
  GridSampleOptions o;
  if (mode == "bilinear" || mode == "linear")
    o.mode = InterpolateMode::Bilinear;
  else if (mode == "nearest")
    o.mode = InterpolateMode::Nearest;
  else
    ctx.fail<UnsupportedError>("mode \"", mode, "\" is not supported");
  if (pad == "zeros")
    o.padding_mode = GridSamplePaddingMode::Zeros;
  else if (pad == "border")
    o.padding_mode = GridSamplePaddingMode::Border;
  else if (pad == "reflection")
    o.padding_mode = GridSamplePaddingMode::Reflection;
  else
    ctx.fail("unknown padding_mode \"", pad, "\"");
  o.align_corners = ctx.attr_int("align_corners", 0) != 0;
  const DTensor<4> y =
      module::grid_sample_2d(x.to_tensor<4>(), grid.to_tensor<4>().cast(x.floats().dtype()), o);
  ctx.set(0, Value::from_tensor(y, x.type()));
}

}  // namespace

void register_signal(OpRegistry& r) {
  r.add("Resize", op_Resize);
  r.add("Upsample", op_Upsample);
  r.add("GridSample", op_GridSample);
}

}  // namespace ember::onnx::detail
