// Scaled dot-product attention written with the contract's required functions of a backend B
// (matrix products, a masked softmax from max/exp/sum), at any rank: what a backend whose fused
// kernel does not serve a case runs instead of the host (Gpu<R>), what Autodiff<B> records when
// B's fused backward cannot be used (B = AdOps<Inner>: then every step is recorded), and
// Dispatch's default on stacks without a fused kernel.
//
// Semantics as the contract's float_scaled_dot_product_attention (ember/backend/activation.hpp):
// q [..., L, E], k [..., S, E], v [..., S, Ev] with equal batch dims; mask (Bool, true = the key
// takes part) and bias (added to the scores) of q's rank, broadcastable to [..., L, S];
// is_causal: query l sees keys s <= l. A query row with no key left has zero probabilities (so
// a zero output, as torch >= 2.5's _safe_softmax, and zero gradients); NaN scores propagate.
// Gradients (FlashAttention-2, Dao 2023, section 3.1, with P the probabilities):
//   dv = P^T dout, dP = dout v^T, dS = P * (dP - rowsum(dP * P)), dq = dS k * scale,
//   dk = dS^T q * scale.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "ember/core/data.hpp"
#include "ember/core/shape.hpp"
#include "ember/ir/elementwise.hpp"

namespace ember::composite {

/// `t` with its last two dims swapped (a view on most backends).
template <class B>
typename B::FloatTensor transpose_last(typename B::FloatTensor t) {
  const std::size_t r = B::float_shape(t).rank();
  std::vector<std::size_t> axes(r);
  for (std::size_t i = 0; i < r; ++i) axes[i] = i;
  std::swap(axes[r - 1], axes[r - 2]);
  return B::float_permute(std::move(t), axes);
}

/// softmax(q k^T * scale + bias) [..., L, S] over the keys left in (see above).
template <class B>
typename B::FloatTensor attention_probs(const typename B::FloatTensor& q,
                                        const typename B::FloatTensor& k,
                                        const std::optional<typename B::BoolTensor>& mask,
                                        const std::optional<typename B::FloatTensor>& bias,
                                        bool is_causal, double scale) {
  using F = typename B::FloatTensor;
  using Bo = typename B::BoolTensor;
  constexpr double ninf = -std::numeric_limits<double>::infinity();
  const Shape qs = B::float_shape(q);
  const std::size_t r = qs.rank();
  const std::int64_t L = qs[r - 2], S = B::float_shape(k)[r - 2];
  Shape target = qs;
  target[r - 1] = S;
  F s =
      B::template float_binary_scalar<ir::op::Mul>(B::float_matmul(q, transpose_last<B>(k)), scale);
  if (bias) s = B::template float_binary<ir::op::Add>(std::move(s), *bias);
  std::optional<Bo> off;  // true: the key is left out
  if (mask) off = B::bool_expand(B::template bool_unary<ir::op::Not>(*mask), target);
  if (is_causal) {
    std::vector<std::uint8_t> future(static_cast<std::size_t>(L * S), 0);
    for (std::int64_t l = 0; l < L; ++l)
      for (std::int64_t j = l + 1; j < S; ++j) future[static_cast<std::size_t>(l * S + j)] = 1;
    Shape ls(std::vector<std::int64_t>(r, 1));
    ls[r - 2] = L;
    ls[r - 1] = S;
    off =
        B::bool_expand(B::bool_from_data(TensorData::from_bytes(std::move(future), ls, DType::Bool),
                                         B::float_device(q)),
                       target);
  }
  if (off) s = B::float_mask_fill(std::move(s), *off, ninf);
  // Shifted by the row's maximum (softmax does not depend on it: cut from a graph where B
  // records one), 0 for a row of -inf: such a row gives exp = 0 and a sum of 0, divided as 1.
  F m = B::float_max_dim_with_indices(s, static_cast<std::int64_t>(r - 1)).first;
  if constexpr (requires { B::float_detach(m); }) m = B::float_detach(std::move(m));
  Bo dead = B::template float_compare_scalar<ir::op::Equal>(m, ninf);
  m = B::float_mask_fill(std::move(m), dead, 0.0);
  F e = B::template float_unary<ir::op::Exp>(
      B::template float_binary<ir::op::Sub>(std::move(s), std::move(m)));
  F sum = B::float_sum_dim(e, static_cast<std::int64_t>(r - 1));
  Bo empty = B::template float_compare_scalar<ir::op::Equal>(sum, 0.0);
  sum = B::float_mask_fill(std::move(sum), empty, 1.0);
  return B::template float_binary<ir::op::Div>(std::move(e), std::move(sum));
}

/// The attention output [..., L, Ev].
template <class B>
typename B::FloatTensor attention(const typename B::FloatTensor& q,
                                  const typename B::FloatTensor& k,
                                  const typename B::FloatTensor& v,
                                  const std::optional<typename B::BoolTensor>& mask,
                                  const std::optional<typename B::FloatTensor>& bias,
                                  bool is_causal, double scale) {
  return B::float_matmul(attention_probs<B>(q, k, mask, bias, is_causal, scale), v);
}

/// {dq, dk, dv} from the output's gradient `dout`.
template <class B>
std::vector<typename B::FloatTensor> attention_grads(
    const typename B::FloatTensor& q, const typename B::FloatTensor& k,
    const typename B::FloatTensor& v, const typename B::FloatTensor& dout,
    const std::optional<typename B::BoolTensor>& mask,
    const std::optional<typename B::FloatTensor>& bias, bool is_causal, double scale) {
  using F = typename B::FloatTensor;
  const auto last = static_cast<std::int64_t>(B::float_shape(q).rank() - 1);
  F p = attention_probs<B>(q, k, mask, bias, is_causal, scale);
  F dv = B::float_matmul(transpose_last<B>(p), dout);
  F dp = B::float_matmul(dout, transpose_last<B>(v));
  F rowsum = B::float_sum_dim(B::template float_binary<ir::op::Mul>(dp, p), last);
  F ds = B::template float_binary<ir::op::Mul>(
      p, B::template float_binary<ir::op::Sub>(std::move(dp), std::move(rowsum)));
  F dq = B::template float_binary_scalar<ir::op::Mul>(B::float_matmul(ds, k), scale);
  F dk = B::template float_binary_scalar<ir::op::Mul>(B::float_matmul(transpose_last<B>(ds), q),
                                                      scale);
  return {std::move(dq), std::move(dk), std::move(dv)};
}

}  // namespace ember::composite
