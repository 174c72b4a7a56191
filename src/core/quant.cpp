#include "ember/core/quant.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace ember {

std::string QuantScheme::to_string() const {
  std::string s = value == QuantValue::Int8 ? "int8" : "int4";
  s += mode == QuantMode::Symmetric ? " symmetric" : " affine";
  switch (level) {
    case QuantLevel::Tensor:
      s += " per-tensor";
      break;
    case QuantLevel::Channel:
      s += " per-channel(axis=" + std::to_string(axis) + ")";
      break;
    case QuantLevel::Block:
      s += " per-block(" + std::to_string(block_size) + ")";
      break;
  }
  s += param == QuantParam::F16 ? " f16" : " f32";
  return s;
}

std::size_t QuantScheme::channel_dim(std::size_t rank) const {
  return normalize_dim("quantize", axis, rank);
}

void QuantScheme::check(std::string_view op, const Shape& shape, DType dtype) const {
  if (!is_float(dtype)) {
    detail::fail<DTypeError>(op, "only float tensors can be quantized, got a ", dtype,
                             " tensor of shape ", shape, " (scheme ", to_string(), ")");
  }
  if (shape.rank() == 0) {
    detail::fail<ShapeError>(op, "cannot quantize a rank-0 tensor (scheme ", to_string(), ")");
  }
  if (param == QuantParam::F16 && level != QuantLevel::Block) {
    detail::fail<ValueError>(op, "f16 scales are for the per-block level only (scheme ",
                             to_string(), ")");
  }
  if (level == QuantLevel::Channel) {
    const auto r = static_cast<std::int64_t>(shape.rank());
    if (axis < -r || axis >= r) {
      detail::fail<ShapeError>(op, "channel axis ", axis, " is out of range for shape ", shape,
                               " (valid: [", -r, ", ", r - 1, "])");
    }
  }
  if (level == QuantLevel::Block) {
    const std::int64_t last = shape[shape.rank() - 1];
    if (block_size <= 0) {
      detail::fail<ShapeError>(op, "block size must be positive, got ", block_size);
    }
    if (last % block_size != 0) {
      detail::fail<ShapeError>(op, "block size ", block_size,
                               " does not divide the last dim of shape ", shape, " (", last, " % ",
                               block_size, " = ", last % block_size, ")");
    }
  }
}

Shape QuantScheme::params_shape(const Shape& shape) const {
  Shape p(std::vector<std::int64_t>(shape.rank(), 1));
  switch (level) {
    case QuantLevel::Tensor:
      break;
    case QuantLevel::Channel: {
      const std::size_t d = channel_dim(shape.rank());
      p[d] = shape[d];
      break;
    }
    case QuantLevel::Block:
      p = shape;
      p[p.rank() - 1] = shape[shape.rank() - 1] / block_size;
      break;
  }
  return p;
}

Shape QuantScheme::storage_shape(const Shape& shape) const {
  Shape s = shape;
  if (value == QuantValue::Int4 && s.rank() > 0) s[s.rank() - 1] = (s[s.rank() - 1] + 1) / 2;
  return s;
}

QuantScheme parse_quant_scheme(std::string_view name) {
  const auto bad = [&]() -> QuantScheme {
    detail::fail<ValueError>(
        "quantize", "unknown scheme '", name,
        "' (known: int8, int4, with -affine, -per-channel, "
        "-per-channel<axis>, -block<size>, -f16, -f32; e.g. int8-per-channel, "
        "int4-block32, int4-affine-block64-f32; blocks default to f16 scales)");
  };
  std::vector<std::string_view> parts;
  for (std::size_t b = 0; b <= name.size();) {
    std::size_t e = name.find('-', b);
    if (e == std::string_view::npos) e = name.size();
    parts.push_back(name.substr(b, e - b));
    b = e + 1;
  }
  QuantScheme s;
  if (parts[0] == "int8") {
    s = QuantScheme::int8();
  } else if (parts[0] == "int4") {
    s = QuantScheme::int4();
  } else {
    return bad();
  }
  const auto number = [&](std::string_view t, std::size_t skip, std::int64_t& out) {
    const std::string_view digits = t.substr(skip);
    if (digits.empty()) return false;
    const auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), out);
    return ec == std::errc() && p == digits.data() + digits.size();
  };
  bool explicit_param = false;
  for (std::size_t i = 1; i < parts.size(); ++i) {
    const std::string_view t = parts[i];
    std::int64_t n = 0;
    if (t == "affine") {
      s.mode = QuantMode::Affine;
    } else if (t == "symmetric") {
      s.mode = QuantMode::Symmetric;
    } else if (t == "f16") {
      s.param = QuantParam::F16;
      explicit_param = true;
    } else if (t == "f32") {
      s.param = QuantParam::F32;
      explicit_param = true;
    } else if (t == "per" && i + 1 < parts.size() && parts[i + 1].starts_with("channel")) {
      ++i;
      const std::string_view c = parts[i];
      if (c == "channel") {
        s = s.per_channel(0);
      } else if (number(c, 7, n)) {
        s = s.per_channel(n);
      } else {
        return bad();
      }
    } else if (t == "per" && i + 1 < parts.size() && parts[i + 1] == "tensor") {
      ++i;
      s = s.per_tensor();
    } else if (t.starts_with("block") && number(t, 5, n) && n > 0) {
      s = s.per_block(n);
    } else {
      return bad();
    }
  }
  // Blocks default to f16 scales (GGML's Q4_0 and Burn's block schemes): 4.5 bits per int4
  // value instead of 5.
  if (!explicit_param && s.level == QuantLevel::Block) s.param = QuantParam::F16;
  if (s.param == QuantParam::F16 && s.level != QuantLevel::Block) {
    detail::fail<ValueError>("quantize", "scheme '", name,
                             "': f16 scales are for the per-block level only (e.g. int4-block32)");
  }
  return s;
}

ActivationQuant ActivationQuant::from_range(float lo, float hi) {
  if (std::isnan(lo) || std::isnan(hi) || lo > hi) {
    detail::fail<ValueError>("calibrate", "invalid activation range [", lo, ", ", hi, "]");
  }
  lo = std::min(lo, 0.0f);
  hi = std::max(hi, 0.0f);
  const float s = std::max((hi - lo) / 255.0f, std::numeric_limits<float>::epsilon());
  if (!std::isfinite(s)) {
    detail::fail<ValueError>("calibrate", "the activation range [", lo, ", ", hi,
                             "] overflows the f32 scale");
  }
  const float z = std::min(std::max(-std::nearbyint(lo / s), 0.0f), 255.0f);
  return {s, static_cast<std::int32_t>(z)};
}

void ActivationQuant::check(std::string_view op) const {
  // At least f32 epsilon (the smallest from_range gives; below it every input saturates and
  // 1 / scale may overflow) and at most FLT_MAX / 256 (so that (q - zero point) * scale fits).
  const float lowest = std::numeric_limits<float>::epsilon();
  const float highest = std::numeric_limits<float>::max() / 256.0f;
  if (!(scale > 0.0f) || !std::isfinite(scale) || scale < lowest || scale > highest) {
    detail::fail<ValueError>(
        op, "the input scale is ", scale, "; it must be finite and > 0, at least f32 epsilon (",
        lowest, ", the smallest calibration gives) and at most FLT_MAX / 256 (", highest, ")");
  }
  if (zero_point < 0 || zero_point > 255) {
    detail::fail<ValueError>(op, "the input zero point is ", zero_point,
                             "; it must be in [0, 255] (u8)");
  }
}

std::string ActivationQuant::to_string() const {
  std::ostringstream os;
  os.precision(9);
  os << "u8 affine per-tensor (scale=" << scale << ", zero_point=" << zero_point << ")";
  return os.str();
}

}  // namespace ember
