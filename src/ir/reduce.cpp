// infer of the reduction and linalg descriptions (ember/ir/reduce.hpp, linalg.hpp).
#include "ember/ir/reduce.hpp"

#include <algorithm>

#include "ember/ir/linalg.hpp"

namespace ember::ir {

using ember::detail::fail;

TensorType ReduceDim::reduce(const char* op, const TensorType& x, bool nonempty) const {
  check::dim(op, dim, x.shape.rank());
  const auto d = static_cast<std::size_t>(dim);
  if (nonempty && x.shape[d] == 0)
    fail<ShapeError>(op, "cannot reduce over dim ", dim, " of size 0 of tensor of shape ", x.shape);
  TensorType out = x;
  out.shape[d] = 1;
  return out;
}
TensorType Argmax::infer(const TensorType& x) const {
  return {reduce(name, x, true).shape, DType::I64};
}
TensorType Argmin::infer(const TensorType& x) const {
  return {reduce(name, x, true).shape, DType::I64};
}
TensorTypes2 MaxDimWithIndices::infer(const TensorType& x) const {
  const TensorType v = reduce(name, x, true);
  return {v, {v.shape, DType::I64}};
}
TensorTypes2 MinDimWithIndices::infer(const TensorType& x) const {
  const TensorType v = reduce(name, x, true);
  return {v, {v.shape, DType::I64}};
}
TensorTypes2 MedianDimWithIndices::infer(const TensorType& x) const {
  const TensorType v = reduce(name, x, true);
  return {v, {v.shape, DType::I64}};
}
TensorType AnyDim::infer(const TensorType& x) const {
  return {reduce(name, x, false).shape, DType::Bool};
}
TensorType AllDim::infer(const TensorType& x) const {
  return {reduce(name, x, false).shape, DType::Bool};
}
TensorType Scan::scan(const char* op, const TensorType& x) const {
  check::dim(op, dim, x.shape.rank());
  return x;
}
TensorTypes2 SortWithIndices::infer(const TensorType& x) const {
  check::dim(name, dim, x.shape.rank());
  return {x, {x.shape, DType::I64}};
}
TensorTypes2 TopkWithIndices::check(const char* op, const TensorType& x) const {
  check::dim(op, dim, x.shape.rank());
  const auto d = static_cast<std::size_t>(dim);
  if (k < 0 || k > x.shape[d])
    fail<ValueError>(op, "k = ", k, " is out of range for dim ", dim, " of size ", x.shape[d],
                     " of tensor of shape ", x.shape);
  TensorType v = x;
  v.shape[d] = k;
  return {v, {v.shape, DType::I64}};
}
TensorTypes2 VarMean::infer(const TensorType& x) const {
  check::dim(name, dim, x.shape.rank());
  check::float_dtype(name, x, "the input");
  TensorType v = x;
  v.shape[static_cast<std::size_t>(dim)] = 1;
  return {v, v};
}

// ---- linalg
// ---------------------------------------------------------------------------------------

TensorType Matmul::infer(const TensorType& lhs, const TensorType& rhs) const {
  const Shape &ls = lhs.shape, &rs = rhs.shape;
  const std::size_t r = ls.rank();
  if (r < 2 || rs.rank() != r)
    fail<ShapeError>(name, "operands of shapes ", ls, " and ", rs, " must have one rank >= 2");
  if (ls[r - 1] != rs[r - 2])
    fail<ShapeError>(name, "inner dims do not match: lhs ", ls, " and rhs ", rs, " (", ls[r - 1],
                     " vs ", rs[r - 2], ")");
  Shape out = check::batch_broadcast(name, ls, rs, r - 2);
  check::same_dtype(name, lhs, rhs);
  out.dims.push_back(ls[r - 2]);
  out.dims.push_back(rs[r - 1]);
  return {out, lhs.dtype};
}
TensorType Diag::infer(const TensorType& x) const {
  const std::size_t r = x.shape.rank();
  if (r < 2) fail<ShapeError>(name, "needs rank >= 2, got ", x.shape);
  Shape out = x.shape;
  const std::int64_t n = std::min(out[r - 2], out[r - 1]);
  out.dims.pop_back();
  out[r - 2] = n;
  return {out, x.dtype};
}
TensorType Cross::infer(const TensorType& lhs, const TensorType& rhs) const {
  check::dim(name, static_cast<std::int64_t>(dim), lhs.shape.rank());
  if (rhs.shape.rank() != lhs.shape.rank() || lhs.shape[dim] != 3 || rhs.shape[dim] != 3)
    fail<ShapeError>(name, "dim ", dim, " must have size 3 in both operands, got ", lhs.shape,
                     " and ", rhs.shape);
  const Shape out = check::broadcast(name, lhs.shape, rhs.shape);
  check::same_dtype(name, lhs, rhs);
  return {out, lhs.dtype};
}
TensorType VectorNorm::infer(const TensorType& x) const {
  check::dim(name, static_cast<std::int64_t>(dim), x.shape.rank());
  TensorType out = x;
  out.shape[dim] = 1;
  return out;
}
TensorType CosineSimilarity::infer(const TensorType& lhs, const TensorType& rhs) const {
  check::same_dtype(name, lhs, rhs);
  Shape out = check::broadcast(name, lhs.shape, rhs.shape);
  check::dim(name, static_cast<std::int64_t>(dim), out.rank());
  out[dim] = 1;
  return {out, lhs.dtype};
}

}  // namespace ember::ir
