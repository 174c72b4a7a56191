#include "ember/ir/quant.hpp"

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

}  // namespace ember::ir
