// CPU backend: scales and zero points, quantize and dequantize (ember/cpu/ops_quant.hpp).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "ember/cpu/ops_core.hpp"
#include "ember/cpu/ops_quant.hpp"
#include "kernel.hpp"

namespace ember::cpu {

namespace {

/// How a tensor of `shape` splits into groups of one scale: `numel / inner` runs of `inner`
/// consecutive elements (row-major), run r belonging to group r % groups.
struct Groups {
  std::int64_t groups = 1;
  std::int64_t inner = 1;
};

Groups groups_of(const QuantScheme& s, const Shape& shape) {
  const std::int64_t n = shape.numel();
  switch (s.level) {
    case QuantLevel::Tensor:
      return {1, n == 0 ? 1 : n};
    case QuantLevel::Channel: {
      const std::size_t d = s.channel_dim(shape.rank());
      std::int64_t inner = 1;
      for (std::size_t k = d + 1; k < shape.rank(); ++k) inner *= shape[k];
      return {shape[d], inner == 0 ? 1 : inner};
    }
    case QuantLevel::Block:
      return {n / s.block_size, s.block_size};
  }
  return {};
}

/// `t` as contiguous f32 (a copy when it is not already).
CpuTensor as_f32(const CpuTensor& t) {
  return contiguous(t.dtype == DType::F32 ? t : CoreOps::cast(t, DType::F32));
}

/// Scales as f32 values (from f32 or f16 storage).
std::vector<float> scale_values(const CpuTensor& scales) {
  const CpuTensor s = as_f32(scales);
  const float* p = s.data<float>();
  return std::vector<float>(p, p + s.numel());
}

/// Zero points as int32 values (zeros when absent).
std::vector<std::int32_t> zero_point_values(const std::optional<CpuTensor>& zp, std::int64_t n) {
  std::vector<std::int32_t> out(static_cast<std::size_t>(n), 0);
  if (!zp) return out;
  const CpuTensor z = contiguous(zp->dtype == DType::I32 ? *zp : CoreOps::cast(*zp, DType::I32));
  std::memcpy(out.data(), z.data<std::int32_t>(), out.size() * sizeof(std::int32_t));
  return out;
}

/// ATen's quantize_val: clamp(nearbyint(v * inv_scale) + zp, lo, hi) in f32; NaN -> hi (as
/// torch.quantize_per_tensor on x86, measured with torch 2.15).
inline std::int32_t quantize_value(float v, float inv_scale, float zp, float lo, float hi) {
  float r = std::nearbyint(v * inv_scale) + zp;
  if (std::isnan(r)) return static_cast<std::int32_t>(hi);
  if (r < lo) r = lo;
  if (r > hi) r = hi;
  return static_cast<std::int32_t>(r);
}

}  // namespace

std::pair<CpuTensor, CpuTensor> QuantOps::float_quant_params(const CpuTensor& x,
                                                             const QuantScheme& scheme) {
  const CpuTensor xf = as_f32(x);
  const Groups g = groups_of(scheme, x.shape);
  const Shape ps = scheme.params_shape(x.shape);
  CpuTensor scales = alloc(ps, DType::F32), zps = alloc(ps, DType::I32);
  float* sc = scales.data<float>();
  std::int32_t* zp = zps.data<std::int32_t>();
  const float* v = xf.data<float>();
  const std::int64_t runs = x.shape.numel() / g.inner;
  const float qmin = static_cast<float>(scheme.qmin()), qmax = static_cast<float>(scheme.qmax());
  const float eps = std::numeric_limits<float>::epsilon();
  const bool f16_scales = scheme.param == QuantParam::F16;
  std::vector<std::int64_t> bad(static_cast<std::size_t>(g.groups), 0);
  parallel_for(
      g.groups,
      std::max<std::int64_t>(
          1, kParallelGrain /
                 std::max<std::int64_t>(1, runs / std::max<std::int64_t>(1, g.groups) * g.inner)),
      [&](std::int64_t b, std::int64_t e) {
        for (std::int64_t c = b; c < e; ++c) {
          float lo = 0.0f, hi = 0.0f;  // min(min x, 0), max(max x, 0)
          bool nan = false;
          for (std::int64_t r = c; r < runs; r += g.groups) {
            const float* p = v + r * g.inner;
            for (std::int64_t i = 0; i < g.inner; ++i) {
              nan |= std::isnan(p[i]);
              lo = std::min(lo, p[i]);
              hi = std::max(hi, p[i]);
            }
          }
          float s;
          float z = 0.0f;
          if (scheme.mode == QuantMode::Symmetric) {
            s = std::max(-lo, hi) / ((qmax - qmin) / 2.0f);
            s = std::max(s, eps);
            if (f16_scales) s = static_cast<float>(f16(s));
          } else {
            s = (hi - lo) / (qmax - qmin);
            s = std::max(s, eps);
            if (f16_scales) s = static_cast<float>(f16(s));
            z = qmin - std::nearbyint(lo / s);
            z = std::min(std::max(z, qmin), qmax);
          }
          if (nan) {
            bad[static_cast<std::size_t>(c)] = 1;
          } else if (!std::isfinite(s)) {
            bad[static_cast<std::size_t>(c)] = 2;
          }
          sc[c] = s;
          zp[c] = static_cast<std::int32_t>(z);
        }
      });
  for (std::int64_t c = 0; c < g.groups; ++c) {
    if (bad[static_cast<std::size_t>(c)] == 1) {
      detail::fail<ValueError>("quantize", "group ", c, " of ", g.groups,
                               " contains NaN, so its scale would be NaN (scheme ",
                               scheme.to_string(), ", shape ", x.shape, ")");
    }
    if (bad[static_cast<std::size_t>(c)] == 2) {
      detail::fail<ValueError>("quantize", "the scale of group ", c, " of ", g.groups,
                               " is infinite (values too large for ",
                               f16_scales ? "f16 scales" : "f32", "; scheme ", scheme.to_string(),
                               ")");
    }
  }
  if (f16_scales) scales = CoreOps::cast(std::move(scales), DType::F16);
  return {std::move(scales), std::move(zps)};
}

CpuTensor QuantOps::float_quantize(const CpuTensor& x, const CpuTensor& scales,
                                   const std::optional<CpuTensor>& zero_points,
                                   const QuantScheme& scheme) {
  const CpuTensor xf = as_f32(x);
  const Groups g = groups_of(scheme, x.shape);
  const std::vector<float> sc = scale_values(scales);
  const std::vector<std::int32_t> zp = zero_point_values(zero_points, g.groups);
  const std::int64_t n = x.shape.numel(), runs = n / g.inner;
  const float lo = static_cast<float>(scheme.qmin()), hi = static_cast<float>(scheme.qmax());
  const float* v = xf.data<float>();

  const auto quantize_runs = [&](std::int8_t* out) {
    parallel_for(runs, std::max<std::int64_t>(1, kParallelGrain / g.inner),
                 [&](std::int64_t b, std::int64_t e) {
                   for (std::int64_t r = b; r < e; ++r) {
                     const auto c = static_cast<std::size_t>(r % g.groups);
                     const float inv = 1.0f / sc[c];
                     const auto z = static_cast<float>(zp[c]);
                     const float* p = v + r * g.inner;
                     std::int8_t* o = out + r * g.inner;
                     for (std::int64_t i = 0; i < g.inner; ++i)
                       o[i] = static_cast<std::int8_t>(quantize_value(p[i], inv, z, lo, hi));
                   }
                 });
  };
  if (scheme.value == QuantValue::Int8) {
    CpuTensor out = alloc(x.shape, DType::I8);
    quantize_runs(out.data<std::int8_t>());
    return out;
  }
  // int4: quantize to bytes, then pack pairs along the last dim (low nibble first).
  std::vector<std::int8_t> tmp(static_cast<std::size_t>(n));
  quantize_runs(tmp.data());
  const Shape ss = scheme.storage_shape(x.shape);
  CpuTensor out = alloc(ss, DType::U8);
  const std::int64_t w = x.shape[x.shape.rank() - 1], w2 = ss[ss.rank() - 1];
  const std::int64_t rows = w == 0 ? 0 : n / w;
  std::uint8_t* o = out.data<std::uint8_t>();
  parallel_for(rows, std::max<std::int64_t>(1, kParallelGrain / std::max<std::int64_t>(1, w)),
               [&](std::int64_t b, std::int64_t e) {
                 for (std::int64_t r = b; r < e; ++r) {
                   const std::int8_t* p = tmp.data() + r * w;
                   for (std::int64_t j = 0; j < w2; ++j) {
                     const auto l = static_cast<std::uint8_t>(p[2 * j] & 0xF);
                     const auto h = 2 * j + 1 < w ? static_cast<std::uint8_t>(p[2 * j + 1] & 0xF)
                                                  : std::uint8_t{0};
                     o[r * w2 + j] = static_cast<std::uint8_t>(l | (h << 4));
                   }
                 }
               });
  return out;
}

CpuTensor QuantOps::int_dequantize(const CpuTensor& values, const CpuTensor& scales,
                                   const std::optional<CpuTensor>& zero_points,
                                   const QuantScheme& scheme, const Shape& shape, DType dtype) {
  const CpuTensor q = contiguous(values);
  const Groups g = groups_of(scheme, shape);
  const std::vector<float> sc = scale_values(scales);
  const std::vector<std::int32_t> zp = zero_point_values(zero_points, g.groups);
  const std::int64_t n = shape.numel(), runs = n / g.inner;
  CpuTensor out = alloc(shape, DType::F32);
  float* o = out.data<float>();
  const bool int4 = scheme.value == QuantValue::Int4;
  const std::int64_t w = shape[shape.rank() - 1], w2 = (w + 1) / 2;
  const auto* q8 = q.data<std::int8_t>();
  const auto* q4 = q.data<std::uint8_t>();
  parallel_for(runs, std::max<std::int64_t>(1, kParallelGrain / g.inner),
               [&](std::int64_t b, std::int64_t e) {
                 for (std::int64_t r = b; r < e; ++r) {
                   const auto c = static_cast<std::size_t>(r % g.groups);
                   const float s = sc[c];
                   const std::int32_t z = zp[c];
                   for (std::int64_t i = r * g.inner, end = i + g.inner; i < end; ++i) {
                     std::int32_t v;
                     if (int4) {
                       const std::int64_t row = i / w, col = i % w;
                       const std::uint8_t byte = q4[row * w2 + col / 2];
                       const int nib = (col & 1) ? (byte >> 4) : (byte & 0xF);
                       v = nib >= 8 ? nib - 16 : nib;
                     } else {
                       v = q8[i];
                     }
                     o[i] = static_cast<float>(v - z) * s;
                   }
                 }
               });
  return dtype == DType::F32 ? out : CoreOps::cast(std::move(out), dtype);
}

}  // namespace ember::cpu
