// Kullback-Leibler divergence loss (torch.nn.functional.kl_div; Burn's KLDivLoss).
//
//   auto l = nn::loss::kl_div(log_softmax(x, 1), p, Reduction::BatchMean);
//   auto kl = nn::KLDivLossConfig{.log_target = true}.init<B>();
//
// Shapes: input (log-probabilities) and target of one shape (any rank, batch first).
#pragma once

#include <cstdint>

#include "ember/dispatch/dispatch.hpp"
#include "ember/nn/loss/reduction.hpp"
#include "ember/tensor/tensor.hpp"

namespace ember::nn::loss {

/// Per-element KL terms (the input's shape): target (log target - input), with
/// 0 log 0 = 0 (torch's xlogy), or exp(target) (target - input) when `log_target`.
/// Where target == 0 the gradient wrt the target is -input (PyTorch's is NaN there).
/// Throws ShapeError when the shapes differ.
template <class B, std::size_t D>
Tensor<B, D> kl_div_no_reduction(const Tensor<B, D>& in, const Tensor<B, D>& target,
                                 bool log_target = false) {
  const Tensor<B, D> input = ember::detail::autocast_widen(in);  // f32 under Autocast
  detail::check_same_shape("kl_div", "input", input, "target", target);
  const Tensor<B, D> t = target.cast(input.dtype());
  if (log_target) return t.exp().mul(t.sub(input));
  // xlogy(t, t) - t input; log is taken on t with its zeros replaced by 1 (negative targets
  // give NaN, as in PyTorch).
  return t.mul(detail::zeros_to_one(t).log().sub(input));
}

/// KL divergence loss (torch.nn.functional.kl_div): the per-element terms of
/// kl_div_no_reduction reduced by Mean (over every element, PyTorch's default), Sum,
/// BatchMean (sum / input.dim(0), the true KL divergence per sample) -> [1], or None (the
/// flattened terms). input holds log-probabilities. Throws ShapeError when the shapes
/// differ.
template <class B, std::size_t D>
Tensor<B, 1> kl_div(const Tensor<B, D>& input, const Tensor<B, D>& target,
                    Reduction reduction = Reduction::Mean, bool log_target = false) {
  auto l = kl_div_no_reduction(input, target, log_target);
  if (reduction == Reduction::BatchMean) {
    return l.sum().div_scalar(static_cast<double>(input.dim(0)));
  }
  return detail::reduce("kl_div", std::move(l), reduction);
}

/// KL divergence loss module (Burn's KLDivLoss, PyTorch's nn.KLDivLoss).
template <Backend B = Dispatch>
struct KLDivLoss {
  /// Whether the target holds log-probabilities.
  bool log_target = false;
  Reduction reduction = Reduction::Mean;

  EMBER_MODULE(log_target, reduction)
  EMBER_NN_LOSS_OTHER_BACKEND_(KLDivLoss)

  EMBER_NN_LOSS_FORWARD_(kl_div, log_target)
};

/// Configuration of KLDivLoss (Burn's `log_target`; PyTorch's reduction, default Mean;
/// BatchMean gives the mathematical KL divergence per sample).
struct KLDivLossConfig {
  bool log_target = false;
  Reduction reduction = Reduction::Mean;

  template <Backend B = Dispatch>
  KLDivLoss<B> init(const typename B::Device& = {}) const {
    return KLDivLoss<B>{.log_target = log_target, .reduction = reduction};
  }
};
EMBER_CONFIG(KLDivLossConfig, log_target, reduction)

}  // namespace ember::nn::loss

namespace ember::nn {
using loss::KLDivLoss;
using loss::KLDivLossConfig;
}  // namespace ember::nn
