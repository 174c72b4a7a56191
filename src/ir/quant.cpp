#include "ember/ir/quant.hpp"

#include "ember/ir/conv.hpp"

namespace ember::ir {

namespace {

void check_params(const char* op, const QuantScheme& s, const Shape& shape,
                  const TensorType& scales, const std::optional<TensorType>& zero_points) {
  const Shape want = s.params_shape(shape);
  if (scales.shape != want) {
    detail::fail<ShapeError>(op, "scales of shape ", scales.shape, " do not fit a tensor of shape ",
                             shape, " under ", s.to_string(), " (expected ", want, ")");
  }
  if (scales.dtype != s.scale_dtype()) {
    detail::fail<DTypeError>(op, "scales must be ", s.scale_dtype(), " under ", s.to_string(),
                             ", got ", scales.dtype);
  }
  if (s.mode == QuantMode::Affine && !zero_points) {
    detail::fail<ValueError>(op, "an affine scheme needs zero points (", s.to_string(), ")");
  }
  if (s.mode == QuantMode::Symmetric && zero_points) {
    detail::fail<ValueError>(op, "a symmetric scheme has no zero points (", s.to_string(),
                             "); use an affine one");
  }
  if (zero_points) {
    if (zero_points->shape != want) {
      detail::fail<ShapeError>(op, "zero points of shape ", zero_points->shape,
                               " do not fit a tensor of shape ", shape, " under ", s.to_string(),
                               " (expected ", want, ")");
    }
    if (!is_int(zero_points->dtype)) {
      detail::fail<DTypeError>(op, "zero points must be integers, got ", zero_points->dtype);
    }
  }
}

}  // namespace

TensorTypes2 QuantParams::infer(const TensorType& x) const {
  scheme.check(name, x.shape, x.dtype);
  const Shape p = scheme.params_shape(x.shape);
  return {{p, scheme.scale_dtype()}, {p, DType::I32}};
}

TensorType Quantize::infer(const TensorType& x, const TensorType& scales,
                           const std::optional<TensorType>& zero_points) const {
  scheme.check(name, x.shape, x.dtype);
  check_params(name, scheme, x.shape, scales, zero_points);
  return {scheme.storage_shape(x.shape), scheme.value == QuantValue::Int8 ? DType::I8 : DType::U8};
}

TensorType Dequantize::infer(const TensorType& values, const TensorType& scales,
                             const std::optional<TensorType>& zero_points) const {
  scheme.check(name, shape, dtype);
  const Shape stored = scheme.storage_shape(shape);
  const DType want = scheme.value == QuantValue::Int8 ? DType::I8 : DType::U8;
  if (values.shape != stored || values.dtype != want) {
    detail::fail<ShapeError>(name, "values ", values, " do not hold a tensor of shape ", shape,
                             " under ", scheme.to_string(), " (expected ", stored, " ", want, ")");
  }
  check_params(name, scheme, shape, scales, zero_points);
  return {shape, dtype};
}

namespace {
/// UnsupportedError unless the weight matrix [out, rest] is int8 symmetric, per tensor or per
/// channel along axis 0 (`channel` names that level in the message).
void check_int8_weights(const char* op, const QuantScheme& s, const char* channel) {
  if (s.value != QuantValue::Int8 || s.mode != QuantMode::Symmetric ||
      s.level == QuantLevel::Block || (s.level == QuantLevel::Channel && s.channel_dim(2) != 0)) {
    detail::fail<UnsupportedError>(op, "weights must be int8 symmetric, per tensor or per ",
                                   channel, ", got ", s.to_string());
  }
}
}  // namespace

TensorType QuantizedLinear::check(const TensorType& x,
                                  const std::optional<TensorType>& bias) const {
  check_int8_weights(name, scheme, "channel along axis 0");
  if (weight.rank() != 2) {
    detail::fail<ShapeError>(name, "expected a rank-2 weight [out, in], got shape ", weight);
  }
  if (weight[1] > kMaxQuantizedLinearIn) {
    detail::fail<UnsupportedError>(name, "at most ", kMaxQuantizedLinearIn,
                                   " inputs (exact i32 sums), got weight of shape ", weight);
  }
  if (x.dtype != DType::F32) {
    detail::fail<DTypeError>(name, "input must be f32, got ", x.dtype);
  }
  if (input) input->check(name);
  if (x.shape.rank() == 0 || x.shape[x.shape.rank() - 1] != weight[1]) {
    detail::fail<ShapeError>(name, "input of shape ", x.shape, " does not match weight of shape ",
                             weight, " (last dim vs in)");
  }
  if (bias) {
    if (bias->shape != Shape{weight[0]} || bias->dtype != DType::F32) {
      detail::fail<ShapeError>(name, "bias ", *bias, " does not match weight of shape ", weight,
                               " (expected [", weight[0], "] f32)");
    }
  }
  TensorType y = x;
  y.shape[y.shape.rank() - 1] = weight[0];
  return y;
}

TensorType QuantizedLinear::infer(const TensorType& x, const TensorType& /*packed*/,
                                  const TensorType& scales,
                                  const std::optional<TensorType>& bias) const {
  const TensorType y = check(x, bias);
  const std::int64_t n = scales.shape.numel();
  if (scales.dtype != DType::F32 || (n != 1 && n != weight[0])) {
    detail::fail<ShapeError>(name, "weight scales ", scales, " do not fit weight of shape ", weight,
                             " (expected 1 or ", weight[0], " f32 values)");
  }
  return y;
}

TensorType QuantizedConv2d::check(const TensorType& x,
                                  const std::optional<TensorType>& bias) const {
  check_int8_weights(name, scheme, "output channel");
  if (weight.rank() != 4) {
    detail::fail<ShapeError>(name, "expected a weight [C_out, C_in / groups, kH, kW], got ",
                             weight);
  }
  if (weight[1] * weight[2] * weight[3] > kMaxQuantizedLinearIn) {
    detail::fail<UnsupportedError>(name, "at most ", kMaxQuantizedLinearIn,
                                   " products per output (exact i32 sums), got weight ", weight);
  }
  if (x.dtype != DType::F32) detail::fail<DTypeError>(name, "input must be f32, got ", x.dtype);
  if (bias && bias->dtype != DType::F32) {
    detail::fail<DTypeError>(name, "bias must be f32, got ", bias->dtype);
  }
  input.check(name);
  return Conv<2>{options}.infer(x, TensorType{weight, DType::F32}, bias);
}

TensorType QuantizedConv2d::infer(const TensorType& x, const TensorType& values,
                                  const TensorType& scales,
                                  const std::optional<TensorType>& bias) const {
  const TensorType y = check(x, bias);
  const Shape matrix{weight[0], weight[1] * weight[2] * weight[3]};
  if (values.shape != matrix || values.dtype != DType::I8) {
    detail::fail<ShapeError>(name, "weight values ", values, " do not fit weight ", weight,
                             " (expected ", matrix, " i8)");
  }
  const std::int64_t n = scales.shape.numel();
  if (scales.dtype != DType::F32 || scales.shape.rank() != 2 || (n != 1 && n != weight[0])) {
    detail::fail<ShapeError>(name, "weight scales ", scales, " do not fit weight ", weight,
                             " (expected [1, 1] or [", weight[0], ", 1] f32)");
  }
  return y;
}

}  // namespace ember::ir
