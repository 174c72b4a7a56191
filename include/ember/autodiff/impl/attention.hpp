// Autodiff<B>: scaled dot-product attention through B's fused kernels (B's
// float_scaled_dot_product_attention_train and _backward, ember/backend/activation.hpp).
//
// Forward: with nothing to record (no grad mode, or no operand requires grad), B's inference
// kernel. Else B's training forward gives the output and each query row's log-sum-exp (lse);
// the node saves q, k, v and keeps the output and lse for the backward pass, which is B's
// fused backward (FlashAttention-2's formulas, Dao 2023, section 3.1; listed in
// ember/backend/attention_composite.hpp). When the backward pass is recorded (create_graph)
// the same formulas run with Autodiff's ops instead. The whole composite, recorded op by op,
// runs instead of the kernels when the bias requires grad (the fused backward has no bias
// gradient) and when B's kernels do not serve the case (its training forward returns
// nothing).
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "ember/autodiff/impl/common.hpp"
#include "ember/backend/attention_composite.hpp"

namespace ember::autodiff {

template <class B>
AdTensor<B> AdOps<B>::float_scaled_dot_product_attention(
    const AP& q, const AP& k, const AP& v, const OptBo& mask, const OptAP& bias, bool is_causal,
    double scale) requires HasFusedAttention<B> {
  using IP = typename B::FloatTensor;
  const std::optional<IP> bias_v = rules::inner_opt<B>(bias);
  const bool bias_tracked = bias && bias->node;
  if (!grad_enabled() || (!q.node && !k.node && !v.node && !bias_tracked)) {
    const bool ckpt = q.checkpointing || checkpointing_scope_active();
    return AP{B::float_scaled_dot_product_attention(q.inner, k.inner, v.inner, mask, bias_v,
                                                    is_causal, scale),
              nullptr, ckpt};
  }
  const auto composite = [&] {
    return ember::composite::attention<AdOps<B>>(q, k, v, mask, bias, is_causal, scale);
  };
  if (bias_tracked) return composite();
  std::optional<std::pair<IP, IP>> fwd = B::float_scaled_dot_product_attention_train(
      q.inner, k.inner, v.inner, mask, bias_v, is_causal, scale);
  if (!fwd) return composite();
  const IP out = std::move(fwd->first), lse = std::move(fwd->second);
  return Recorder<B>::record(
      "scaled_dot_product_attention", Bound::Compute, save_inputs(7u), std::vector<AP>{q, k, v},
      [out](std::vector<IP>&) { return out; },
      [out, lse, mask, bias_v, is_causal, scale](BackwardContext<B>& c) {
        const AP qv = c.input(0), kv = c.input(1), vv = c.input(2);
        const bool direct = !grad_enabled() || (!c.grad.node && !qv.node && !kv.node && !vv.node);
        std::vector<AP> g;
        if (direct) {
          std::vector<IP> r = B::float_scaled_dot_product_attention_backward(
              qv.inner, kv.inner, vv.inner, out, c.grad.inner, lse, mask, bias_v, is_causal, scale);
          for (IP& x : r) g.push_back(AP{std::move(x), nullptr, c.grad.checkpointing});
        } else {
          std::optional<AP> b;
          if (bias_v) b = AP{*bias_v, nullptr, c.grad.checkpointing};
          g = ember::composite::attention_grads<AdOps<B>>(qv, kv, vv, c.grad, mask, b, is_causal,
                                                          scale);
        }
        for (std::size_t i = 0; i < 3; ++i)
          if (c.needs(i)) c.set(i, std::move(g[i]));
      });
}

}  // namespace ember::autodiff
