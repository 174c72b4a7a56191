// Autodiff<B>: fused normalisation ops that B provides together with their backward kernels
// (rules in ember/autodiff/impl/norm.hpp). Each is declared only when B has both, so the
// front end's requires-expression finds it exactly then and runs its composite otherwise.
#pragma once

#include <optional>
#include <utility>

#include "ember/autodiff/ops_core.hpp"

namespace ember::autodiff {

/// Whether B has the training batch norm kernel and its backward (ember/backend/activation.hpp).
template <class B>
concept HasBatchNormTrain = requires(const typename B::FloatTensor& p,
                                     const std::optional<typename B::FloatTensor>& o, double eps) {
  {B::float_batch_norm_train(p, o, o, eps)};
  {B::float_batch_norm_train_backward(p, p, p, o, eps)};
};

template <class B>
struct AdNormOps {
  using AP = AdTensor<B>;
  using OptAP = std::optional<AP>;

  /// Training batch norm: x [N, C, ...], weight/bias [C] -> {y, stats [2, C] (mean; biased
  /// var), untracked}. Backward: B's float_batch_norm_train_backward, or (when the backward
  /// pass is recorded) the same formulas written with Autodiff's ops.
  static std::pair<AP, AP> float_batch_norm_train(const AP& x, const OptAP& weight,
                                                  const OptAP& bias,
                                                  double eps) requires HasBatchNormTrain<B>;
};

}  // namespace ember::autodiff
