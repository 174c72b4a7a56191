// infer of the activation and nn descriptions (ember/ir/nn.hpp).
#include "ember/ir/nn.hpp"

namespace ember::ir {

using ember::detail::fail;

namespace {
void check_param(const char* op, const std::optional<TensorType>& p, const Shape& want,
                 const TensorType& x, const char* what) {
  if (!p) return;
  if (p->shape != want) fail<ShapeError>(op, what, " of shape ", p->shape, ", expected ", want);
  check::same_dtype(op, x, *p);
}
}  // namespace

TensorType Prelu::infer(const TensorType& x, const TensorType& weight) const {
  check::same_dtype(name, x, weight);
  return x;
}
TensorType Glu::infer(const TensorType& x) const {
  check::dim(name, static_cast<std::int64_t>(dim), x.shape.rank());
  if (x.shape[dim] % 2 != 0) fail<ShapeError>(name, "dim ", dim, " of ", x.shape, " is odd");
  TensorType out = x;
  out.shape[dim] /= 2;
  return out;
}
TensorType SoftmaxFamily::along(const char* op, const TensorType& x) const {
  check::dim(op, static_cast<std::int64_t>(dim), x.shape.rank());
  return x;
}
TensorType LayerNorm::infer(const TensorType& x, const std::optional<TensorType>& weight,
                            const std::optional<TensorType>& bias) const {
  if (k == 0 || k > x.shape.rank()) fail<ShapeError>(name, "cannot normalise ", k, " dims of ", x.shape);
  Shape tail(std::vector<std::int64_t>(x.shape.dims.end() - static_cast<std::ptrdiff_t>(k),
                                       x.shape.dims.end()));
  check_param(name, weight, tail, x, "weight");
  check_param(name, bias, tail, x, "bias");
  return x;
}
TensorType RmsNorm::infer(const TensorType& x, const std::optional<TensorType>& weight) const {
  if (x.shape.rank() == 0) fail<ShapeError>(name, "needs rank >= 1");
  check_param(name, weight, Shape{x.shape[x.shape.rank() - 1]}, x, "weight");
  return x;
}
TensorType GroupNorm::infer(const TensorType& x, const std::optional<TensorType>& weight,
                            const std::optional<TensorType>& bias) const {
  if (x.shape.rank() < 2) fail<ShapeError>(name, "needs [N, C, ...], got ", x.shape);
  if (num_groups <= 0 || x.shape[1] % num_groups != 0)
    fail<ShapeError>(name, x.shape[1], " channels do not split into ", num_groups, " groups");
  check_param(name, weight, Shape{x.shape[1]}, x, "weight");
  check_param(name, bias, Shape{x.shape[1]}, x, "bias");
  return x;
}
TensorType BatchNorm::infer(const TensorType& x, const TensorType& mean, const TensorType& var,
                            const std::optional<TensorType>& weight,
                            const std::optional<TensorType>& bias) const {
  if (x.shape.rank() < 2) fail<ShapeError>(name, "needs [N, C, ...], got ", x.shape);
  const Shape c{x.shape[1]};
  check_param(name, mean, c, x, "running mean");
  check_param(name, var, c, x, "running var");
  check_param(name, weight, c, x, "weight");
  check_param(name, bias, c, x, "bias");
  return x;
}
TensorTypes2 BatchNormTrain::infer(const TensorType& x, const std::optional<TensorType>& weight,
                                   const std::optional<TensorType>& bias) const {
  if (x.shape.rank() < 2) fail<ShapeError>(name, "needs [N, C, ...], got ", x.shape);
  check_param(name, weight, Shape{x.shape[1]}, x, "weight");
  check_param(name, bias, Shape{x.shape[1]}, x, "bias");
  return {x, {Shape{2, x.shape[1]}, x.dtype}};
}
TensorTypes2 BatchNormTrainBackward::infer(const TensorType& x, const TensorType& dy,
                                           const TensorType& stats,
                                           const std::optional<TensorType>& weight) const {
  if (dy.shape != x.shape) fail<ShapeError>(name, "gradient ", dy.shape, " for input ", x.shape);
  check_param(name, stats, Shape{2, x.shape[1]}, x, "stats");
  check_param(name, weight, Shape{x.shape[1]}, x, "weight");
  return {x, {Shape{2, x.shape[1]}, x.dtype}};
}
TensorType Linear::infer(const TensorType& x, const TensorType& weight,
                         const std::optional<TensorType>& bias) const {
  check::rank(name, weight, 2, "weight [out, in]");
  if (x.shape.rank() == 0 || x.shape[x.shape.rank() - 1] != weight.shape[1])
    fail<ShapeError>(name, "input ", x.shape, " and weight ", weight.shape, " do not match");
  check::same_dtype(name, x, weight);
  check_param(name, bias, Shape{weight.shape[0]}, x, "bias");
  TensorType out = x;
  out.shape[out.shape.rank() - 1] = weight.shape[0];
  return out;
}
TensorType Embedding::infer(const TensorType& weights, const TensorType& indices) const {
  check::rank(name, weights, 2, "weight [n, d]");
  check::int_dtype(name, indices, "indices");
  Shape out = indices.shape;
  out.dims.push_back(weights.shape[1]);
  return {out, weights.dtype};
}
TensorType ScaledDotProductAttention::infer(const TensorType& q, const TensorType& k,
                                            const TensorType& v,
                                            const std::optional<TensorType>& mask,
                                            const std::optional<TensorType>& bias) const {
  const std::size_t r = q.shape.rank();
  if (r < 2 || k.shape.rank() != r || v.shape.rank() != r)
    fail<ShapeError>(name, "q, k, v of shapes ", q.shape, ", ", k.shape, ", ", v.shape);
  if (q.shape[r - 1] != k.shape[r - 1] || k.shape[r - 2] != v.shape[r - 2])
    fail<ShapeError>(name, "q ", q.shape, ", k ", k.shape, " and v ", v.shape, " do not match");
  if (mask) check::bool_dtype(name, *mask, "mask");
  if (bias) check::same_dtype(name, q, *bias);
  TensorType out = q;
  out.shape[r - 1] = v.shape[r - 1];
  return out;
}
TensorType CrossEntropy::infer(const TensorType& logits, const TensorType& targets) const {
  check::rank(name, logits, 2, "logits [N, C]");
  check::float_dtype(name, logits, "logits");
  if (targets.shape[0] != logits.shape[0])
    fail<ShapeError>(name, "targets of shape ", targets.shape, " for logits of shape ", logits.shape);
  return {Shape{1}, logits.dtype};
}

}  // namespace ember::ir
