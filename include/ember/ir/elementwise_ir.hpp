// Descriptions of the element-wise functions (ember/backend/elementwise.hpp): one template per
// family over the table's row, with the broadcasting shape rule in one place.
#pragma once

#include <string>

#include "ember/ir/desc.hpp"
#include "ember/ir/elementwise.hpp"

namespace ember::ir {

/// Broadcast of two operands of one rank and dtype; `dtype` of the result (Bool for
/// comparisons). Throws ShapeError "[op] shapes A and B are not broadcast-compatible ..." and
/// DTypeError for different dtypes.
TensorType infer_broadcast(const char* op, const TensorType& a, const TensorType& b,
                           std::optional<DType> result_dtype = std::nullopt);

/// x -> x (float_unary, int_unary, bool_unary).
template <class Op>
struct UnaryOp {
  static constexpr const char* name = Op::name;
  static constexpr Bound bound = Bound::Memory;
  EMBER_IR_NO_FIELDS
  TensorType infer(const TensorType& x) const { return x; }
};
/// (a, b) -> broadcast (float_binary, int_binary, bool_binary).
template <class Op>
struct BinaryOp {
  static constexpr const char* name = Op::name;
  static constexpr Bound bound = Bound::Memory;
  EMBER_IR_NO_FIELDS
  TensorType infer(const TensorType& a, const TensorType& b) const {
    return infer_broadcast(name, a, b);
  }
};
/// (x, scalar) -> x (float_binary_scalar with S = double, int_binary_scalar with S = int64).
template <class Op, class S>
struct ScalarOp {
  static constexpr const char* name = Op::name;
  static constexpr Bound bound = Bound::Memory;
  S scalar{};
  EMBER_IR_FIELDS(scalar)
  TensorType infer(const TensorType& x) const { return x; }
};
/// (a, b) -> broadcast, Bool (float_compare, int_compare, bool_compare).
template <class Op>
struct CompareOp {
  static constexpr const char* name = Op::name;
  static constexpr Bound bound = Bound::Memory;
  EMBER_IR_NO_FIELDS
  TensorType infer(const TensorType& a, const TensorType& b) const {
    return infer_broadcast(name, a, b, DType::Bool);
  }
};
/// (x, scalar) -> Bool (float_compare_scalar, int_compare_scalar).
template <class Op, class S>
struct CompareScalarOp {
  static constexpr const char* name = Op::name;
  static constexpr Bound bound = Bound::Memory;
  S scalar{};
  EMBER_IR_FIELDS(scalar)
  TensorType infer(const TensorType& x) const { return {x.shape, DType::Bool}; }
};
/// x -> Bool (float_predicate).
template <class Op>
struct PredicateOp {
  static constexpr const char* name = Op::name;
  static constexpr Bound bound = Bound::Memory;
  EMBER_IR_NO_FIELDS
  TensorType infer(const TensorType& x) const { return {x.shape, DType::Bool}; }
};
/// min(max(x, min), max) (float_clamp with S = double, int_clamp with S = int64).
template <class S>
struct Clamp {
  static constexpr const char* name = "clamp";
  static constexpr Bound bound = Bound::Memory;
  S min{}, max{};
  EMBER_IR_FIELDS(min, max)
  TensorType infer(const TensorType& x) const { return x; }
};

}  // namespace ember::ir
