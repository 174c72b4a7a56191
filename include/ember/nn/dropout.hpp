// Dropout (Burn's Dropout, PyTorch's nn.Dropout): inverted dropout, active only in training.
//
//   auto drop = nn::DropoutConfig{.prob = 0.1}.init();
//   auto y = drop.forward(x);   // training: each element zeroed with probability 0.1,
//                               // the others scaled by 1 / 0.9; eval: y = x
#pragma once

#include "ember/core/distribution.hpp"
#include "ember/core/error.hpp"
#include "ember/module/config_fwd.hpp"
#include "ember/module/module.hpp"
#include "ember/tensor/tensor.hpp"

namespace ember::nn {

struct Dropout;

/// Inverted dropout (torch.nn.functional.dropout): when `training`, each element is zeroed
/// with probability p (Bernoulli draws from the backend's generator, seeded by B::seed) and
/// the others scaled by 1 / (1 - p); p == 1 gives zeros; the identity in eval mode or for
/// p == 0. Any shape. Throws ValueError when p is outside [0, 1].
template <class B, std::size_t D>
Tensor<B, D> dropout(const Tensor<B, D>& x, double p, bool training) {
  if (!(p >= 0.0 && p <= 1.0))
    ember::detail::fail<ValueError>("dropout", "probability must be in [0, 1], got ", p);
  if (!training || p == 0.0) return x;
  if (p == 1.0) return x.mul_scalar(0.0);
  auto keep =
      Tensor<B, D>::random(x.shape(), Distribution::bernoulli(1.0 - p), x.device(), x.dtype());
  return x.mul(keep).mul_scalar(1.0 / (1.0 - p));
}

/// Configuration of Dropout (Burn's DropoutConfig). prob defaults to 0.5 (PyTorch's).
struct DropoutConfig {
  double prob = 0.5;  ///< probability of zeroing an element

  /// Throws ValueError when prob is outside [0, 1].
  Dropout init() const;
};
EMBER_CONFIG(DropoutConfig, prob)

/// Inverted dropout (Srivastava et al. 2014): in training mode each element is kept with
/// probability 1 - prob (Bernoulli draws from the backend's generator, seeded by
/// B::seed) and scaled by 1 / (1 - prob), so the expectation is unchanged; prob == 1 gives
/// zeros. In eval mode (training == false) or with prob == 0 it returns x. No parameters.
struct Dropout {
  double prob = 0.5;
  bool training = true;

  EMBER_MODULE(prob, training)

  /// Any shape -> the same shape. Throws ValueError when prob is outside [0, 1].
  template <class B, std::size_t D>
  Tensor<B, D> forward(const Tensor<B, D>& x) const {
    if (!(prob >= 0.0 && prob <= 1.0))
      ember::detail::fail<ValueError>("Dropout", "prob must be in [0, 1], got ", prob);
    return dropout(x, prob, training);
  }
};

inline Dropout DropoutConfig::init() const {
  if (!(prob >= 0.0 && prob <= 1.0))
    ember::detail::fail<ValueError>("DropoutConfig", "prob must be in [0, 1], got ", prob);
  return Dropout{.prob = prob, .training = true};
}

}  // namespace ember::nn
