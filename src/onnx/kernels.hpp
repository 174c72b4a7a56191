// Helpers for the operator kernels: rank-8 padded storage, axes, broadcasting, host reads.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "ember/tensor/activation.hpp"
#include "onnx_internal.hpp"

namespace ember::onnx::detail {

inline constexpr std::size_t R = kMaxRank;
using Dims = std::vector<std::int64_t>;

/// Padded (storage) axis of the normalised logical axis `a` of a rank-r tensor.
inline std::int64_t pax(std::int64_t a, std::size_t r) {
  return a + static_cast<std::int64_t>(R - r);
}

/// Normalises `axis` for rank r (valid range [-r, r - 1], or [-r - 1, r] with `extra`).
inline std::int64_t norm_axis(const OpContext& ctx, std::int64_t axis, std::size_t r,
                              bool extra = false) {
  const auto rr = static_cast<std::int64_t>(r) + (extra ? 1 : 0);
  if (axis < -rr || axis >= rr)
    ctx.fail<ShapeError>("axis ", axis, " is out of range for a tensor of rank ", r);
  return axis < 0 ? axis + rr : axis;
}

/// Numpy broadcasting of two logical shapes; ShapeError naming the node otherwise.
inline Dims broadcast_dims(const OpContext& ctx, const Dims& a, const Dims& b) {
  const std::size_t r = std::max(a.size(), b.size());
  Dims out(r);
  for (std::size_t i = 0; i < r; ++i) {
    const std::int64_t x = i + a.size() >= r ? a[i + a.size() - r] : 1;
    const std::int64_t y = i + b.size() >= r ? b[i + b.size() - r] : 1;
    if (x != y && x != 1 && y != 1)
      ctx.fail<ShapeError>("shapes ", Shape(a), " and ", Shape(b), " cannot be broadcast (dim ", i,
                           ": ", x, " vs ", y, ")");
    out[i] = x == 1 ? y : x;
  }
  return out;
}

inline std::int64_t numel_of(const Dims& d) {
  std::int64_t n = 1;
  for (auto v : d) n *= v;
  return n;
}

/// `v` with a new logical shape of the same numel (storage reshaped).
inline Value reshaped(const Value& v, Dims shape) {
  if (v.type() == ElemType::String) return Value::strings(std::move(shape), v.string_values());
  if (v.is_float_store()) return Value::tensor(v.type(), std::move(shape), v.floats());
  if (v.is_int_store()) return Value::tensor(v.type(), std::move(shape), v.ints());
  return Value::tensor(v.type(), std::move(shape), v.bools());
}

/// Logical shape -> padded rank-8 Shape.
inline Shape P(const Dims& d) {
  return padded_shape(d);
}

/// Host int64 values of an integer (or any numeric) tensor input.
inline Dims host_ints(const Value& v) {
  return v.to_int64s();
}
inline double host_scalar(const Value& v) {
  const auto d = v.to_doubles();
  return d.empty() ? 0.0 : d[0];
}

/// Calls f(store) with the Float or Int store of a numeric tensor and wraps the returned
/// store (same kind) with `type` (default v's) and `shape` (default: the store's, logical
/// rank `rank`).
template <class F>
Value map_numeric(const OpContext& ctx, const Value& v, F&& f) {
  if (v.is_float_store()) return Value::tensor(v.type(), v.shape(), f(v.floats()));
  if (v.is_int_store()) return Value::tensor(v.type(), v.shape(), f(v.ints()));
  ctx.fail<DTypeError>("expects a numeric tensor, got ", v.describe());
}
template <class F>
Value map_float(const OpContext& ctx, const Value& v, F&& f) {
  if (v.is_float_store()) return Value::tensor(v.type(), v.shape(), f(v.floats()));
  ctx.fail<DTypeError>("expects a float tensor, got ", v.describe());
}

/// map_float on a value the op owns (OpContext::take): f gets the store as an rvalue.
template <class F>
Value map_float_take(const OpContext& ctx, Value v, F&& f) {
  if (!v.is_float_store()) ctx.fail<DTypeError>("expects a float tensor, got ", v.describe());
  const ElemType t = v.type();
  Dims shape = v.shape();
  return Value::tensor(t, std::move(shape), f(std::move(v).into_floats()));
}

/// Logical shape of a rank-8 store, given the logical rank r.
template <class S>
Dims logical_dims(const S& s, std::size_t r) {
  const Shape sh = s.shape();
  return Dims(sh.dims.end() - static_cast<std::ptrdiff_t>(r), sh.dims.end());
}

/// Binary op over two tensors of one kind with numpy broadcasting; the result has the
/// broadcast shape and the type `out_type` (default a's).
template <class F>
Value binary_numeric(const OpContext& ctx, const Value& a, const Value& b, F&& f,
                     ElemType out_type = ElemType::Undefined) {
  const Dims shape = broadcast_dims(ctx, a.shape(), b.shape());
  if (out_type == ElemType::Undefined) out_type = a.type();
  if (a.is_float_store() && b.is_float_store())
    return Value::tensor(out_type, shape, f(a.floats(), b.floats()));
  if (a.is_int_store() && b.is_int_store())
    return Value::tensor(out_type, shape, f(a.ints(), b.ints()));
  ctx.fail<DTypeError>("operands must be numeric tensors of one type, got ", a.describe(), " and ",
                       b.describe());
}

/// A float store of logical `shape` filled with `v`.
inline FloatStore full_float(const Dims& shape, double v, DType dt, const Device& dev) {
  return FloatStore::full(P(shape), v, dev, dt);
}

/// `v` converted to element type `to` (Cast's rules; saturate for the float8 types).
Value cast_value(const OpContext& ctx, const Value& v, ElemType to, bool saturate = true,
                 int round_mode = 0);

/// Values as a float store of dtype `dt` (ints/bools converted).
inline FloatStore as_float_store(const Value& v, DType dt = DType::F32) {
  if (v.is_float_store()) return v.floats().cast(dt);
  if (v.is_int_store()) return v.ints().float_(dt);
  return v.bools().float_(dt);
}

/// The rank-r tensor view of a store (logical shape of v).
template <std::size_t D>
DTensor<D, Float> view_f(const Value& v) {
  return v.to_tensor<D, Float>();
}

/// Host values of v as doubles / a new Value from host doubles with v's type.
Value value_from_doubles(const std::vector<double>& vals, const Dims& shape, ElemType type,
                         const Device& dev);
Value value_from_int64s(const std::vector<std::int64_t>& vals, const Dims& shape, ElemType type,
                        const Device& dev);

/// Expands v (numeric) to the logical `shape` (broadcasting view).
inline Value expand_to(const Value& v, const Dims& shape) {
  if (v.shape() == shape) return v;
  if (v.is_float_store())
    return Value::tensor(v.type(), shape, v.floats().template expand<R>(P(shape)));
  if (v.is_int_store())
    return Value::tensor(v.type(), shape, v.ints().template expand<R>(P(shape)));
  return Value::tensor(v.type(), shape, v.bools().template expand<R>(P(shape)));
}

/// Axes input (opset >= 13 style) or attribute, normalised; empty when neither is given.
Dims axes_from(const OpContext& ctx, std::size_t input_index, std::size_t rank,
               bool* given = nullptr);

}  // namespace ember::onnx::detail

namespace ember::onnx::detail {

/// Applies f to the store of any numeric/bool tensor; the result (same kind) gets logical
/// `shape` and v's type.
template <class F>
Value map_any(const OpContext& ctx, const Value& v, const Dims& shape, F&& f) {
  if (v.type() == ElemType::String)
    ctx.fail<UnsupportedError>("string tensors are not supported here");
  if (v.is_float_store()) return Value::tensor(v.type(), shape, f(v.floats()));
  if (v.is_int_store()) return Value::tensor(v.type(), shape, f(v.ints()));
  return Value::tensor(v.type(), shape, f(v.bools()));
}

/// The padded axes of a logical permutation.
inline std::vector<std::int64_t> padded_perm(const Dims& perm) {
  const std::size_t r = perm.size();
  std::vector<std::int64_t> p;
  for (std::size_t i = 0; i < R - r; ++i) p.push_back(static_cast<std::int64_t>(i));
  for (auto a : perm) p.push_back(pax(a, r));
  return p;
}

}  // namespace ember::onnx::detail

namespace ember::onnx::detail {
/// x narrowed to [start, start + len) along logical `axis` (ops_shape.cpp).
Value narrow_along(const OpContext& ctx, const Value& x, std::int64_t axis, std::int64_t start,
                   std::int64_t len);
}  // namespace ember::onnx::detail

namespace ember::onnx::detail {
/// numpy.matmul of two numeric tensors (ops_nn.cpp).
Value matmul_values(const OpContext& ctx, const Value& a, const Value& b);
}  // namespace ember::onnx::detail

namespace ember::onnx::detail {
/// Joins tensors of one kind along padded axis `pax_` into a value of logical shape `out`
/// and the type of parts[0] (kernels.cpp).
Value cat_values(const OpContext& ctx, const std::vector<Value>& parts, const Dims& out,
                 std::int64_t pax_);
}  // namespace ember::onnx::detail
