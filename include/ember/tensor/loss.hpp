// Loss functions (Burn's `burn::nn::loss` functional forms, torch.nn.functional losses).
#pragma once

#include <cstdint>

#include "ember/ir/nn.hpp"
#include "ember/tensor/activation.hpp"
#include "ember/tensor/infer.hpp"
#include "ember/tensor/tensor.hpp"

namespace ember::loss {

/// Cross-entropy with class probabilities (Burn's cross_entropy_with_logits; torch's
/// F.cross_entropy with probability targets, mean reduction):
/// -mean_n sum_c targets[n, c] * log_softmax(logits)[n, c]. logits [N, C], targets [N, C]
/// -> [1]. Throws ShapeError when the shapes differ. Backend:
/// float_cross_entropy_with_logits(logits, targets).
template <class B>
Tensor<B, 1> cross_entropy_with_logits(const Tensor<B, 2>& input, const Tensor<B, 2>& targets) {
  const Tensor<B, 2> logits = ember::detail::autocast_widen(input);  // f32 under Autocast
  ember::detail::ir_infer(ir::CrossEntropy{}, logits,
                          ember::detail::ir_type_as(targets, logits.dtype()));
  const Tensor<B, 2> t = targets.cast(logits.dtype());
  if constexpr (requires(typename B::FloatTensor p) { B::float_cross_entropy_with_logits(p, p); }) {
    return Tensor<B, 1>(B::float_cross_entropy_with_logits(logits.primitive(), t.primitive()));
  } else {
    return activation::log_softmax(logits, 1).mul(t).sum_dim(1).mean().neg();
  }
}

/// Cross-entropy with class indices (torch's F.cross_entropy, mean reduction, no
/// ignore_index): -mean_n log_softmax(logits)[n, targets[n]]. logits [N, C], Int targets
/// [N] -> [1]. Throws ShapeError when targets is not [N], ValueError naming the first target
/// outside [0, C) (targets are read back to check). Backend:
/// float_cross_entropy_with_indices(logits, targets).
template <class B>
Tensor<B, 1> cross_entropy_with_logits(const Tensor<B, 2>& input,
                                       const Tensor<B, 1, Int>& targets) {
  const Tensor<B, 2> logits = ember::detail::autocast_widen(input);  // f32 under Autocast
  ember::detail::ir_infer(ir::CrossEntropy{}, logits, targets);
  const std::int64_t n = logits.dim(0), c = logits.dim(1);
  ember::detail::check_values(
      "cross_entropy_with_logits", targets,
      [&](const auto& t) { return ember::detail::outside(t, 0, c); },
      [&](std::int64_t v, std::size_t i) {
        ember::detail::fail<ValueError>("cross_entropy_with_logits", "target ", v, " at position ",
                                        i, " is out of range for ", c, " classes of logits ",
                                        logits.shape());
      });
  if constexpr (requires(typename B::FloatTensor p, typename B::IntTensor ip) {
                  B::float_cross_entropy_with_indices(p, ip);
                }) {
    return Tensor<B, 1>(
        B::float_cross_entropy_with_indices(logits.primitive(), targets.primitive()));
  } else {
    auto idx = targets.template reshape<2>(std::array<std::int64_t, 2>{n, 1});
    return activation::log_softmax(logits, 1).gather(1, idx).mean().neg();
  }
}

}  // namespace ember::loss
