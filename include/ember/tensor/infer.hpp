// The front end's shape checks: every op's operands are checked by its description's
// `infer` (ember/ir), the one copy of the op's shape and dtype rule, before the backend runs.
#pragma once

#include <optional>

#include "ember/core/dtype.hpp"
#include "ember/ir/type.hpp"

namespace ember::detail {

/// A type given directly (an operand the front end has already transformed).
inline const ir::TensorType& ir_type(const ir::TensorType& t) {
  return t;
}
inline const std::optional<ir::TensorType>& ir_type(const std::optional<ir::TensorType>& t) {
  return t;
}

/// The type `infer` sees of a tensor (front-end Tensor or anything with shape() and dtype()).
template <class T>
requires requires(const T& t) {
  t.shape();
  t.dtype();
}
ir::TensorType ir_type(const T& t) {
  return {t.shape(), t.dtype()};
}
template <class T>
std::optional<ir::TensorType> ir_type(const std::optional<T>& t) {
  if (!t) return std::nullopt;
  return ir_type(*t);
}

/// The type of `t` once cast to `dtype` (for ops whose front end casts an operand first).
template <class T>
ir::TensorType ir_type_as(const T& t, DType dtype) {
  return {t.shape(), dtype};
}
template <class T>
std::optional<ir::TensorType> ir_type_as(const std::optional<T>& t, DType dtype) {
  if (!t) return std::nullopt;
  return ir_type_as(*t, dtype);
}

/// Checks the operands against `desc`'s rule and returns the output type(s); throws the
/// rule's "[op] ..." ShapeError / DTypeError / ValueError.
template <class Desc, class... Ts>
auto ir_infer(const Desc& desc, const Ts&... operands) {
  return desc.infer(ir_type(operands)...);
}

}  // namespace ember::detail
