// Shared checks of the op descriptions' infer functions.
#include "ember/core/error.hpp"
#include "ember/ir/desc.hpp"

namespace ember::ir::check {

void dim(const char* op, std::int64_t dim, std::size_t rank) {
  if (dim < 0 || static_cast<std::size_t>(dim) >= rank)
    ember::detail::fail<ShapeError>(op, "dim ", dim, " is out of range for rank ", rank);
}

void rank(const char* op, const TensorType& t, std::size_t want, const char* what) {
  if (t.shape.rank() != want)
    ember::detail::fail<ShapeError>(op, "expected a rank-", want, " ", what, ", got shape ",
                                    t.shape);
}

void same_dtype(const char* op, const TensorType& a, const TensorType& b) {
  if (a.dtype != b.dtype)
    ember::detail::fail<DTypeError>(op, "operands have different dtypes: ", a.dtype, " and ",
                                    b.dtype);
}

void float_dtype(const char* op, const TensorType& t, const char* what) {
  if (!is_float(t.dtype))
    ember::detail::fail<DTypeError>(op, what, " must have a float dtype, got ", t.dtype);
}
void int_dtype(const char* op, const TensorType& t, const char* what) {
  if (!is_int(t.dtype))
    ember::detail::fail<DTypeError>(op, what, " must have an int dtype, got ", t.dtype);
}
void bool_dtype(const char* op, const TensorType& t, const char* what) {
  if (!is_bool(t.dtype))
    ember::detail::fail<DTypeError>(op, what, " must be a bool tensor, got ", t.dtype);
}

Shape batch_broadcast(const char* op, const Shape& a, const Shape& b, std::size_t n) {
  Shape out;
  for (std::size_t i = 0; i < n; ++i) {
    if (a[i] != b[i] && a[i] != 1 && b[i] != 1)
      ember::detail::fail<ShapeError>(op, "batch dims of ", a, " and ", b,
                                      " are not broadcast-compatible (dim ", i, ": ", a[i], " vs ",
                                      b[i], ")");
    out.dims.push_back(a[i] == 1 ? b[i] : a[i]);
  }
  return out;
}

void broadcast_to(const char* op, const char* what, const Shape& s, const Shape& target) {
  if (s.rank() != target.rank())
    ember::detail::fail<ShapeError>(op, what, " of shape ", s, " for a tensor of shape ", target,
                                    ": ranks differ");
  for (std::size_t d = 0; d < s.rank(); ++d)
    if (s[d] != target[d] && s[d] != 1)
      ember::detail::fail<ShapeError>(op, what, " of shape ", s,
                                      " cannot be broadcast to the tensor's shape ", target,
                                      " (dim ", d, ": ", s[d], " vs ", target[d], ")");
}

Shape broadcast(const char* op, const Shape& a, const Shape& b) {
  return broadcast_shapes(op, a, b);
}

}  // namespace ember::ir::check

#include "ember/ir/elementwise_ir.hpp"

namespace ember::ir {

TensorType infer_broadcast(const char* op, const TensorType& a, const TensorType& b,
                           std::optional<DType> result_dtype) {
  if (a.shape.rank() != b.shape.rank())
    ember::detail::fail<ShapeError>(op, "operands of ranks ", a.shape.rank(), " and ",
                                    b.shape.rank());
  check::same_dtype(op, a, b);
  return {broadcast_shapes(op, a.shape, b.shape), result_dtype.value_or(a.dtype)};
}

}  // namespace ember::ir
