// Regression losses: MSE, L1, Huber, SmoothL1 (torch.nn.functional.mse_loss / l1_loss /
// huber_loss / smooth_l1_loss; Burn's MseLoss, HuberLoss, SmoothL1Loss).
//
//   auto l = nn::loss::mse_loss(pred, target);                      // mean
//   auto l = nn::loss::huber_loss(pred, target, Reduction::Sum, 0.5);
//   auto huber = nn::HuberLossConfig{.delta = 0.5}.init<B>();
//
// Shapes: input and target of one shape (any rank); the per-element losses have that shape.
// Each function returns [1] (Mean, Sum) or the flattened per-element losses (None), and
// throws ShapeError when the shapes differ (PyTorch broadcasts with a warning; Ember
// requires equal shapes) and ValueError for Reduction::BatchMean.
#pragma once

#include <cstdint>

#include "ember/dispatch/dispatch.hpp"
#include "ember/nn/loss/reduction.hpp"
#include "ember/tensor/tensor.hpp"

namespace ember::nn::loss {

namespace detail {

template <class B, std::size_t D>
Tensor<B, D> diff(const char* op, const Tensor<B, D>& in, const Tensor<B, D>& target) {
  check_same_shape(op, "input", in, "target", target);
  const Tensor<B, D> input = ember::detail::autocast_widen(in);  // f32 under Autocast
  return input.sub(target.cast(input.dtype()));
}

/// 0.5 z^2 / beta where |z| < beta, |z| - 0.5 beta elsewhere (SmoothL1); Huber is beta
/// times it with beta = delta.
template <class B, std::size_t D>
Tensor<B, D> smooth_l1_elements(const Tensor<B, D>& z, double beta) {
  auto a = z.abs();
  if (beta == 0.0) return a;  // PyTorch: smooth_l1 with beta 0 is l1_loss
  auto quad = z.mul(z).mul_scalar(0.5 / beta);
  auto lin = a.sub_scalar(0.5 * beta);
  return std::move(lin).mask_where(a.lower_elem(beta), quad);
}

}  // namespace detail

/// Mean squared error (torch.nn.functional.mse_loss): (input - target)^2.
template <class B, std::size_t D>
Tensor<B, 1> mse_loss(const Tensor<B, D>& input, const Tensor<B, D>& target,
                      Reduction reduction = Reduction::Mean) {
  detail::check_reduction("mse_loss", reduction);
  auto z = detail::diff("mse_loss", input, target);
  return detail::reduce("mse_loss", z.mul(z), reduction);
}
/// Per-element squared errors (the input's shape).
template <class B, std::size_t D>
Tensor<B, D> mse_loss_no_reduction(const Tensor<B, D>& input, const Tensor<B, D>& target) {
  auto z = detail::diff("mse_loss", input, target);
  return z.mul(z);
}

/// Mean absolute error (torch.nn.functional.l1_loss): |input - target| (gradient 0 where
/// they are equal, as torch's sign).
template <class B, std::size_t D>
Tensor<B, 1> l1_loss(const Tensor<B, D>& input, const Tensor<B, D>& target,
                     Reduction reduction = Reduction::Mean) {
  detail::check_reduction("l1_loss", reduction);
  return detail::reduce("l1_loss", detail::diff("l1_loss", input, target).abs(), reduction);
}
/// Per-element absolute errors (the input's shape).
template <class B, std::size_t D>
Tensor<B, D> l1_loss_no_reduction(const Tensor<B, D>& input, const Tensor<B, D>& target) {
  return detail::diff("l1_loss", input, target).abs();
}

/// Per-element Huber losses (the input's shape).
template <class B, std::size_t D>
Tensor<B, D> huber_loss_no_reduction(const Tensor<B, D>& input, const Tensor<B, D>& target,
                                     double delta = 1.0) {
  if (!(delta > 0.0))
    ember::detail::fail<ValueError>("huber_loss", "delta must be > 0, got ", delta);
  auto z = detail::diff("huber_loss", input, target);
  auto a = z.abs();
  auto quad = z.mul(z).mul_scalar(0.5);
  auto lin = a.sub_scalar(0.5 * delta).mul_scalar(delta);
  return std::move(lin).mask_where(a.lower_elem(delta), quad);
}

/// Huber loss (torch.nn.functional.huber_loss; Huber 1964): with z = input - target,
/// 0.5 z^2 where |z| < delta, delta (|z| - 0.5 delta) elsewhere. delta defaults to 1.
/// Throws ValueError for delta <= 0 (as PyTorch).
template <class B, std::size_t D>
Tensor<B, 1> huber_loss(const Tensor<B, D>& input, const Tensor<B, D>& target,
                        Reduction reduction = Reduction::Mean, double delta = 1.0) {
  detail::check_reduction("huber_loss", reduction);
  return detail::reduce("huber_loss", huber_loss_no_reduction(input, target, delta), reduction);
}
/// Per-element smooth L1 losses (the input's shape).
template <class B, std::size_t D>
Tensor<B, D> smooth_l1_loss_no_reduction(const Tensor<B, D>& input, const Tensor<B, D>& target,
                                         double beta = 1.0) {
  if (!(beta >= 0.0))
    ember::detail::fail<ValueError>("smooth_l1_loss", "beta must be >= 0, got ", beta);
  return detail::smooth_l1_elements(detail::diff("smooth_l1_loss", input, target), beta);
}

/// Smooth L1 loss (torch.nn.functional.smooth_l1_loss; Girshick 2015): with
/// z = input - target, 0.5 z^2 / beta where |z| < beta, |z| - 0.5 beta elsewhere; beta = 0
/// is the L1 loss. beta defaults to 1. Throws ValueError for beta < 0 (as PyTorch).
template <class B, std::size_t D>
Tensor<B, 1> smooth_l1_loss(const Tensor<B, D>& input, const Tensor<B, D>& target,
                            Reduction reduction = Reduction::Mean, double beta = 1.0) {
  detail::check_reduction("smooth_l1_loss", reduction);
  return detail::reduce("smooth_l1_loss", smooth_l1_loss_no_reduction(input, target, beta),
                        reduction);
}
// ---- modules -------------------------------------------------------------------------------
// forward(input, target) reduces with the module's `reduction`; forward(input, target, r)
// with `r` (Burn's signature); forward_no_reduction keeps the per-element shape.

/// Mean squared error module (Burn's MseLoss, PyTorch's nn.MSELoss).
template <Backend B = Dispatch>
struct MseLoss {
  Reduction reduction = Reduction::Mean;

  EMBER_MODULE(reduction)
  EMBER_NN_LOSS_OTHER_BACKEND_(MseLoss)

  EMBER_NN_LOSS_FORWARD_(mse_loss)
};

/// Configuration of MseLoss.
struct MseLossConfig {
  Reduction reduction = Reduction::Mean;

  template <Backend B = Dispatch>
  MseLoss<B> init(const typename B::Device& = {}) const {
    return MseLoss<B>{.reduction = reduction};
  }
};
EMBER_CONFIG(MseLossConfig, reduction)

/// Mean absolute error module (PyTorch's nn.L1Loss).
template <Backend B = Dispatch>
struct L1Loss {
  Reduction reduction = Reduction::Mean;

  EMBER_MODULE(reduction)
  EMBER_NN_LOSS_OTHER_BACKEND_(L1Loss)

  EMBER_NN_LOSS_FORWARD_(l1_loss)
};

/// Configuration of L1Loss.
struct L1LossConfig {
  Reduction reduction = Reduction::Mean;

  template <Backend B = Dispatch>
  L1Loss<B> init(const typename B::Device& = {}) const {
    return L1Loss<B>{.reduction = reduction};
  }
};
EMBER_CONFIG(L1LossConfig, reduction)

/// Huber loss module (Burn's HuberLoss, PyTorch's nn.HuberLoss).
template <Backend B = Dispatch>
struct HuberLoss {
  double delta = 1.0;
  Reduction reduction = Reduction::Mean;

  EMBER_MODULE(delta, reduction)
  EMBER_NN_LOSS_OTHER_BACKEND_(HuberLoss)

  EMBER_NN_LOSS_FORWARD_(huber_loss, delta)
};

/// Configuration of HuberLoss (Burn's `delta`, default 1).
struct HuberLossConfig {
  double delta = 1.0;
  Reduction reduction = Reduction::Mean;

  /// Throws ValueError for delta <= 0.
  template <Backend B = Dispatch>
  HuberLoss<B> init(const typename B::Device& = {}) const {
    if (!(delta > 0.0))
      ember::detail::fail<ValueError>("HuberLossConfig", "delta must be > 0, got ", delta);
    return HuberLoss<B>{.delta = delta, .reduction = reduction};
  }
};
EMBER_CONFIG(HuberLossConfig, delta, reduction)

/// Smooth L1 loss module (Burn's SmoothL1Loss, PyTorch's nn.SmoothL1Loss).
template <Backend B = Dispatch>
struct SmoothL1Loss {
  double beta = 1.0;
  Reduction reduction = Reduction::Mean;

  EMBER_MODULE(beta, reduction)
  EMBER_NN_LOSS_OTHER_BACKEND_(SmoothL1Loss)

  EMBER_NN_LOSS_FORWARD_(smooth_l1_loss, beta)
};

/// Configuration of SmoothL1Loss (`beta`, default 1; 0 is the L1 loss as in PyTorch).
struct SmoothL1LossConfig {
  double beta = 1.0;
  Reduction reduction = Reduction::Mean;

  /// Throws ValueError for beta < 0.
  template <Backend B = Dispatch>
  SmoothL1Loss<B> init(const typename B::Device& = {}) const {
    if (!(beta >= 0.0))
      ember::detail::fail<ValueError>("SmoothL1LossConfig", "beta must be >= 0, got ", beta);
    return SmoothL1Loss<B>{.beta = beta, .reduction = reduction};
  }
};
EMBER_CONFIG(SmoothL1LossConfig, beta, reduction)

}  // namespace ember::nn::loss

namespace ember::nn {
using loss::HuberLoss;
using loss::HuberLossConfig;
using loss::L1Loss;
using loss::L1LossConfig;
using loss::MseLoss;
using loss::MseLossConfig;
using loss::SmoothL1Loss;
using loss::SmoothL1LossConfig;
}  // namespace ember::nn
