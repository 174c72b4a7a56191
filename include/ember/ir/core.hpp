// Op descriptions: creation, read-back, reshape, casts, device moves (ember/backend/core.hpp).
#pragma once

#include "ember/core/data.hpp"
#include "ember/core/distribution.hpp"
#include "ember/ir/desc.hpp"

namespace ember::ir {

/// Accessors (shape, dtype, device, into_data): no op, nothing to record.
struct Meta {
  static constexpr const char* name = "meta";
  static constexpr Bound bound = Bound::Memory;
  EMBER_IR_NO_FIELDS
};

/// The device of a tensor (an accessor, like Meta; Dispatch answers it itself).
struct DeviceOf {
  static constexpr const char* name = "device";
  static constexpr Bound bound = Bound::Memory;
  EMBER_IR_NO_FIELDS
};

/// A tensor from host data (the data's shape and dtype).
struct FromData {
  static constexpr const char* name = "from_data";
  static constexpr Bound bound = Bound::Memory;
  TensorData data;
  EMBER_IR_FIELDS(data)
  TensorType infer() const;
};
/// Uninitialised values of `shape` and `dtype`.
struct Empty {
  static constexpr const char* name = "empty";
  static constexpr Bound bound = Bound::Memory;
  Shape shape;
  DType dtype = DType::F32;
  EMBER_IR_FIELDS(shape, dtype)
  TensorType infer() const;
};
/// Every element `value` (converted to dtype).
struct Full {
  static constexpr const char* name = "full";
  static constexpr Bound bound = Bound::Memory;
  Shape shape;
  double value = 0.0;
  DType dtype = DType::F32;
  EMBER_IR_FIELDS(shape, value, dtype)
  TensorType infer() const;
};
/// Random values from `distribution` (counter-based generator: the same seed gives the same
/// values on every device).
struct Random {
  static constexpr const char* name = "random";
  static constexpr Bound bound = Bound::Memory;
  Shape shape;
  Distribution distribution;
  DType dtype = DType::F32;
  EMBER_IR_FIELDS(shape, distribution, dtype)
  TensorType infer() const;
};
/// [start, end) with `step` (non-zero): ceil((end - start) / step) values, none when empty.
struct Arange {
  static constexpr const char* name = "arange";
  static constexpr Bound bound = Bound::Memory;
  std::int64_t start = 0, end = 0, step = 1;
  DType dtype = DType::I64;
  EMBER_IR_FIELDS(start, end, step, dtype)
  TensorType infer() const;
};
/// A copy on another device (the device is the stream's, not a field).
struct ToDevice {
  static constexpr const char* name = "to_device";
  static constexpr Bound bound = Bound::Memory;
  EMBER_IR_NO_FIELDS
  TensorType infer(const TensorType& x) const { return x; }
};
/// Same elements, new `shape` (equal numel).
struct Reshape {
  static constexpr const char* name = "reshape";
  static constexpr Bound bound = Bound::Memory;
  Shape shape;
  EMBER_IR_FIELDS(shape)
  TensorType infer(const TensorType& x) const;
};
/// Conversion within a kind (float_cast, int_cast) or to another kind (into_int, into_float,
/// into_bool): the shape is kept, the dtype is `dtype`.
struct Cast {
  static constexpr const char* name = "cast";
  static constexpr Bound bound = Bound::Memory;
  DType dtype = DType::F32;
  EMBER_IR_FIELDS(dtype)
  TensorType infer(const TensorType& x) const { return {x.shape, dtype}; }
};
/// value != 0, as Bool.
struct IntoBool {
  static constexpr const char* name = "into_bool";
  static constexpr Bound bound = Bound::Memory;
  EMBER_IR_NO_FIELDS
  TensorType infer(const TensorType& x) const { return {x.shape, DType::Bool}; }
};

}  // namespace ember::ir

// Registry rows (ember/ir/registry.hpp): X(kind, result class, return type, backend function,
// description, (parameter types)).
//   kind: REQ = required of every backend; OPT = optional with a default (the front end's
//         composite; wrappers such as Dispatch offer it on every stack); EXT = optional without
//         a default (a fast path or a hook that decorators' rules call when the inner backend
//         has it; wrappers offer it only when their inner backend does).
//   result class: F = a float result computed from float operands (Autodiff records it),
//         C = a float result from no float operand (Autodiff wraps it as a constant),
//         N = no float result (Autodiff passes it through).
// XN rows are function templates over N, instantiated for the listed N.
// clang-format off
#define EMBER_IR_CORE(X, XN) \
  X(REQ, C, F, float_from_data, FromData, (const TensorData&, const Dev&)) \
  X(REQ, N, I, int_from_data, FromData, (const TensorData&, const Dev&)) \
  X(REQ, N, Bo, bool_from_data, FromData, (const TensorData&, const Dev&)) \
  X(REQ, N, TensorData, float_into_data, Meta, (const F&)) \
  X(REQ, N, TensorData, int_into_data, Meta, (const I&)) \
  X(REQ, N, TensorData, bool_into_data, Meta, (const Bo&)) \
  X(REQ, N, Shape, float_shape, Meta, (const F&)) \
  X(REQ, N, Shape, int_shape, Meta, (const I&)) \
  X(REQ, N, Shape, bool_shape, Meta, (const Bo&)) \
  X(REQ, N, DType, float_dtype, Meta, (const F&)) \
  X(REQ, N, DType, int_dtype, Meta, (const I&)) \
  X(REQ, N, DType, bool_dtype, Meta, (const Bo&)) \
  X(REQ, N, Dev, float_device, DeviceOf, (const F&)) \
  X(REQ, N, Dev, int_device, DeviceOf, (const I&)) \
  X(REQ, N, Dev, bool_device, DeviceOf, (const Bo&)) \
  X(REQ, F, F, float_to_device, ToDevice, (F, const Dev&)) \
  X(REQ, N, I, int_to_device, ToDevice, (I, const Dev&)) \
  X(REQ, N, Bo, bool_to_device, ToDevice, (Bo, const Dev&)) \
  X(REQ, C, F, float_empty, Empty, (const Shape&, const Dev&, DType)) \
  X(REQ, N, I, int_empty, Empty, (const Shape&, const Dev&, DType)) \
  X(REQ, N, Bo, bool_empty, Empty, (const Shape&, const Dev&, DType)) \
  X(REQ, C, F, float_full, Full, (const Shape&, double, const Dev&, DType)) \
  X(REQ, N, I, int_full, Full, (const Shape&, double, const Dev&, DType)) \
  X(REQ, N, Bo, bool_full, Full, (const Shape&, double, const Dev&, DType)) \
  X(REQ, C, F, float_random, Random, (const Shape&, Distribution, const Dev&, DType)) \
  X(REQ, N, I, int_arange, Arange, (i64, i64, i64, const Dev&, DType)) \
  X(REQ, F, F, float_reshape, Reshape, (F, const Shape&)) \
  X(REQ, N, I, int_reshape, Reshape, (I, const Shape&)) \
  X(REQ, N, Bo, bool_reshape, Reshape, (Bo, const Shape&)) \
  X(REQ, F, F, float_cast, Cast, (F, DType)) \
  X(REQ, N, I, int_cast, Cast, (I, DType)) \
  X(REQ, N, I, float_into_int, Cast, (const F&, DType)) \
  X(REQ, C, F, int_into_float, Cast, (const I&, DType)) \
  X(REQ, N, I, bool_into_int, Cast, (const Bo&, DType)) \
  X(REQ, C, F, bool_into_float, Cast, (const Bo&, DType)) \
  X(REQ, N, Bo, float_into_bool, IntoBool, (const F&)) \
  X(REQ, N, Bo, int_into_bool, IntoBool, (const I&))
// clang-format on
