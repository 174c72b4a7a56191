// infer of the activation and nn descriptions (ember/ir/nn.hpp).
#include "ember/ir/nn.hpp"

namespace ember::ir {

using ember::detail::fail;

TensorType Prelu::infer(const TensorType& x, const TensorType& weight) const {
  const std::int64_t channels = x.shape.rank() >= 2 ? x.shape[1] : 1;
  const std::int64_t n = weight.shape.numel();
  if (weight.shape.rank() != 1 || (n != 1 && n != channels))
    fail<ShapeError>(name, "weight of shape ", weight.shape, " does not match ", channels,
                     " channels of input ", x.shape, " (expected [1] or [", channels, "])");
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
  const Shape& xs = x.shape;
  if (k == 0 || k > xs.rank())
    fail<ShapeError>(name, "cannot normalise the last ", k, " dims of input of shape ", xs);
  if (weight) {
    const Shape& ns = weight->shape;
    bool ends = ns.rank() == k;
    for (std::size_t i = 0; ends && i < k; ++i) ends = xs[xs.rank() - k + i] == ns[i];
    if (!ends)
      fail<ShapeError>(name, "input of shape ", xs, " does not end with the normalized shape ", ns,
                       " of weight");
    if (bias && bias->shape != ns)
      fail<ShapeError>(name, "bias of shape ", bias->shape, " differs from weight of shape ", ns);
  } else if (bias) {
    const Shape tail(
        std::vector<std::int64_t>(xs.dims.end() - static_cast<std::ptrdiff_t>(k), xs.dims.end()));
    if (bias->shape != tail)
      fail<ShapeError>(name, "bias of shape ", bias->shape, " does not match the last ", k,
                       " dims of input of shape ", xs);
  }
  if (weight) check::same_dtype(name, x, *weight);
  if (bias) check::same_dtype(name, x, *bias);
  return x;
}
TensorType RmsNorm::infer(const TensorType& x, const std::optional<TensorType>& weight) const {
  if (x.shape.rank() == 0)
    fail<ShapeError>(name, "input of shape ", x.shape, " must have rank >= 1");
  const std::int64_t d = x.shape[x.shape.rank() - 1];
  if (weight && weight->shape != Shape{d})
    fail<ShapeError>(name, "weight of shape ", weight->shape, " does not match the last dim ", d,
                     " of input ", x.shape);
  if (weight) check::same_dtype(name, x, *weight);
  return x;
}

namespace {
/// x is [N, C, ...]; ShapeError otherwise.
void check_nc(const char* op, const TensorType& x) {
  if (x.shape.rank() < 2)
    fail<ShapeError>(op, "input of shape ", x.shape, " must have rank >= 2 ([N, C, ...])");
}
/// A per-channel parameter of x [N, C, ...]: shape [C] and x's dtype.
void check_channels(const char* op, const char* what, const std::optional<TensorType>& p,
                    const TensorType& x) {
  if (!p) return;
  const std::int64_t c = x.shape[1];
  if (p->shape != Shape{c})
    fail<ShapeError>(op, what, " of shape ", p->shape, " does not match ", c, " channels of input ",
                     x.shape, " (expected [", c, "])");
  check::same_dtype(op, x, *p);
}
}  // namespace

TensorType GroupNorm::infer(const TensorType& x, const std::optional<TensorType>& weight,
                            const std::optional<TensorType>& bias) const {
  check_nc(name, x);
  const std::int64_t c = x.shape[1];
  if (num_groups <= 0 || c % num_groups != 0)
    fail<ValueError>(name, "num_groups ", num_groups, " does not divide the ", c,
                     " channels of input ", x.shape);
  check_channels(name, "weight", weight, x);
  check_channels(name, "bias", bias, x);
  return x;
}
TensorType BatchNorm::infer(const TensorType& x, const TensorType& mean, const TensorType& var,
                            const std::optional<TensorType>& weight,
                            const std::optional<TensorType>& bias) const {
  check_nc(name, x);
  check_channels(name, "running_mean", mean, x);
  check_channels(name, "running_var", var, x);
  check_channels(name, "weight", weight, x);
  check_channels(name, "bias", bias, x);
  return x;
}
TensorTypes2 BatchNormTrain::infer(const TensorType& x, const std::optional<TensorType>& weight,
                                   const std::optional<TensorType>& bias) const {
  check_nc(name, x);
  const Shape& xs = x.shape;
  check_channels(name, "weight", weight, x);
  check_channels(name, "bias", bias, x);
  const std::int64_t n = xs[0], c = xs[1];
  const std::int64_t rest = n * c == 0 ? 0 : xs.numel() / (n * c);
  if (n * rest <= 1)
    fail<ValueError>(
        name, "expected more than 1 value per channel when training, got input of shape ", xs);
  return {x, {Shape{2, c}, x.dtype}};
}
TensorTypes2 BatchNormTrainBackward::infer(const TensorType& x, const TensorType& dy,
                                           const TensorType& stats,
                                           const std::optional<TensorType>& weight) const {
  check_nc(name, x);
  if (dy.shape != x.shape) fail<ShapeError>(name, "gradient ", dy.shape, " for input ", x.shape);
  check::same_dtype(name, x, dy);
  if (stats.shape != Shape{2, x.shape[1]})
    fail<ShapeError>(name, "stats of shape ", stats.shape, ", expected [2, ", x.shape[1], "]");
  check_channels(name, "weight", weight, x);
  return {x, {Shape{2, x.shape[1]}, x.dtype}};
}
void Linear::check(const Shape& x, DType x_dtype, const Shape& weight, DType weight_dtype,
                   const Shape* bias, DType bias_dtype) {
  if (weight.rank() != 2)
    fail<ShapeError>(name, "expected a rank-2 weight [out, in], got shape ", weight);
  if (x.rank() == 0) fail<ShapeError>(name, "input of shape ", x, " must have rank >= 1");
  const std::int64_t in = weight[1], out = weight[0];
  const std::int64_t last = x[x.rank() - 1];
  if (last != in)
    fail<ShapeError>(name, "input of shape ", x, " has last dim ", last, " but weight of shape ",
                     weight, " expects ", in, " input features (weight is [out, in])");
  if (bias && (bias->rank() != 1 || (*bias)[0] != out))
    fail<ShapeError>(name, "bias of shape ", *bias, " does not match ", out,
                     " output features of weight ", weight);
  // check::same_dtype's message, without building TensorTypes.
  if (weight_dtype != x_dtype)
    fail<DTypeError>(name, "operands have different dtypes: ", x_dtype, " and ", weight_dtype);
  if (bias && bias_dtype != x_dtype)
    fail<DTypeError>(name, "operands have different dtypes: ", x_dtype, " and ", bias_dtype);
}
TensorType Linear::infer(const TensorType& x, const TensorType& weight,
                         const std::optional<TensorType>& bias) const {
  check(x.shape, x.dtype, weight.shape, weight.dtype, bias ? &bias->shape : nullptr,
        bias ? bias->dtype : x.dtype);
  TensorType y = x;
  y.shape[y.shape.rank() - 1] = weight.shape[0];
  return y;
}
TensorType Embedding::infer(const TensorType& weights, const TensorType& indices) const {
  check::rank(name, weights, 2, "weight [n, d]");
  check::int_dtype(name, indices, "indices");
  Shape out = indices.shape;
  out.dims.push_back(weights.shape[1]);
  return {out, weights.dtype};
}

namespace {
/// A mask or bias of rank <= the scores' rank broadcasts to the scores [..., L, S]
/// (trailing dims aligned).
void check_attn_operand(const char* op, const char* what, const Shape& s, const Shape& scores) {
  const std::size_t r = scores.rank(), m = s.rank();
  bool ok = m <= r;
  for (std::size_t i = 0; ok && i < m; ++i) {
    const std::int64_t d = s[i], t = scores[r - m + i];
    ok = d == 1 || d == t;
  }
  if (!ok)
    fail<ShapeError>(op, what, " of shape ", s, " does not broadcast to the attention scores ",
                     scores);
}
}  // namespace

TensorType ScaledDotProductAttention::infer(const TensorType& q, const TensorType& k,
                                            const TensorType& v,
                                            const std::optional<TensorType>& mask,
                                            const std::optional<TensorType>& bias) const {
  const char* op = name;
  const Shape &qs = q.shape, &ks = k.shape, &vs = v.shape;
  const std::size_t r = qs.rank();
  if (r < 2 || ks.rank() != r || vs.rank() != r)
    fail<ShapeError>(op, "q, k and v of shapes ", qs, ", ", ks, ", ", vs,
                     " must have one rank >= 2 ([..., L, E])");
  for (std::size_t i = 0; i + 2 < r; ++i)
    if (qs[i] != ks[i] || qs[i] != vs[i])
      fail<ShapeError>(op, "batch dims of q ", qs, ", k ", ks, " and v ", vs, " differ");
  if (qs[r - 1] != ks[r - 1])
    fail<ShapeError>(op, "q of shape ", qs, " and k of shape ", ks,
                     " have different embedding dims");
  if (ks[r - 2] != vs[r - 2])
    fail<ShapeError>(op, "k of shape ", ks, " and v of shape ", vs,
                     " have different sequence lengths");
  if (is_causal && mask)
    fail<ValueError>(op, "is_causal cannot be combined with an explicit mask (as torch)");
  Shape scores = qs;
  scores[r - 1] = ks[r - 2];
  if (mask) check_attn_operand(op, "mask", mask->shape, scores);
  if (bias) check_attn_operand(op, "bias", bias->shape, scores);
  check::same_dtype(op, q, k);
  check::same_dtype(op, q, v);
  if (mask) check::bool_dtype(op, *mask, "mask");
  if (bias) check::same_dtype(op, q, *bias);
  TensorType out = q;
  out.shape[r - 1] = vs[r - 1];
  return out;
}
TensorTypes2 ScaledDotProductAttentionTrain::infer(const TensorType& q, const TensorType& k,
                                                   const TensorType& v,
                                                   const std::optional<TensorType>& mask,
                                                   const std::optional<TensorType>& bias) const {
  TensorType out = ScaledDotProductAttention{is_causal, scale}.infer(q, k, v, mask, bias);
  TensorType lse{q.shape, q.dtype == DType::F64 ? DType::F64 : DType::F32};
  lse.shape.dims.pop_back();
  return {std::move(out), std::move(lse)};
}
std::vector<TensorType> ScaledDotProductAttentionBackward::infer(
    const TensorType& q, const TensorType& k, const TensorType& v, const TensorType& out,
    const TensorType& dout, const TensorType& lse, const std::optional<TensorType>& mask,
    const std::optional<TensorType>& bias) const {
  const TensorTypes2 fwd =
      ScaledDotProductAttentionTrain{is_causal, scale}.infer(q, k, v, mask, bias);
  const char* op = name;
  if (out.shape != fwd.first.shape || dout.shape != fwd.first.shape)
    fail<ShapeError>(op, "out of shape ", out.shape, " and dout of shape ", dout.shape,
                     " must both have the forward output's shape ", fwd.first.shape);
  if (lse.shape != fwd.second.shape)
    fail<ShapeError>(op, "lse of shape ", lse.shape, " must have shape ", fwd.second.shape);
  check::same_dtype(op, q, out);
  check::same_dtype(op, q, dout);
  return {q, k, v};
}
TensorType CrossEntropy::infer(const TensorType& logits, const TensorType& targets) const {
  check::rank(name, logits, 2, "logits [N, C]");
  check::float_dtype(name, logits, "logits");
  if (is_int(targets.dtype)) {
    if (targets.shape.rank() != 1 || targets.shape[0] != logits.shape[0])
      fail<ShapeError>(name, "logits of shape ", logits.shape, " and class targets of shape ",
                       targets.shape, " have different batch sizes");
  } else {
    if (targets.shape != logits.shape)
      fail<ShapeError>(name, "logits of shape ", logits.shape,
                       " and target probabilities of shape ", targets.shape, " differ");
    check::same_dtype(name, logits, targets);
  }
  return {Shape{1}, logits.dtype};
}

}  // namespace ember::ir
