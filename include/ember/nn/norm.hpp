// Normalisation layers (Burn's burn-nn norm modules, PyTorch's parameter names):
// BatchNorm, LayerNorm, GroupNorm, InstanceNorm, RmsNorm.
//
//   auto bn = nn::BatchNormConfig{.num_features = 16}.init<B>(device);
//   auto y = bn.forward(x);   // x [N, 16, H, W]; training mode: batch statistics
//   bn.eval();                 // running statistics from now on
//
// Every layer checks its input and throws ShapeError naming the layer ("[BatchNorm] ...")
// for a wrong rank or channel count. Parameters are cast to the input's dtype. The formulas
// are the functional ops of ember/tensor/module/nn.hpp (torch.nn.functional's).
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>

#include "ember/core/error.hpp"
#include "ember/dispatch/dispatch.hpp"
#include "ember/module/config_fwd.hpp"
#include "ember/module/module.hpp"
#include "ember/tensor/module/nn.hpp"
#include "ember/tensor/tensor.hpp"

namespace ember::nn {

namespace detail {

/// The optional Param's value as an optional tensor (for the functional ops).
template <class T>
std::optional<T> opt_val(const std::optional<Param<T>>& p) {
  if (!p) return std::nullopt;
  return p->val();
}

/// Throws ShapeError "[layer] ..." unless x is [N, C, ...] with C == channels.
template <std::size_t D>
void check_nc(const char* layer, const char* what, const Shape& xs, std::int64_t channels) {
  if (D < 2) {
    ember::detail::fail<ShapeError>(layer, "input of shape ", xs,
                                    " must have rank >= 2 ([batch, channels, ...])");
  }
  if (xs[1] != channels) {
    ember::detail::fail<ShapeError>(layer, "input of shape ", xs, " has ", xs[1],
                                    " channels (dim 1) but the layer has ", what, " = ", channels);
  }
}

/// Throws ShapeError "[layer] ..." unless x's last dim is d_model.
inline void check_last(const char* layer, const Shape& xs, std::int64_t d_model) {
  if (xs.rank() == 0 || xs[xs.rank() - 1] != d_model) {
    ember::detail::fail<ShapeError>(layer, "input of shape ", xs,
                                    " must end with d_model = ", d_model);
  }
}

/// A [n] Float Param of constant value.
template <class B>
Param<Tensor<B, 1>> filled(std::int64_t n, double value, const typename B::Device& device) {
  return Param<Tensor<B, 1>>(Tensor<B, 1>::full(Shape{n}, value, device));
}

inline void check_positive(const char* config, const char* field, std::int64_t v) {
  if (v <= 0) ember::detail::fail<ValueError>(config, field, " must be > 0, got ", v);
}

/// epsilon finite and >= 0 (> 0 when `positive`); NaN, infinities and negative values would
/// give NaN or infinite outputs.
inline void check_epsilon(const char* config, double epsilon, bool positive = false) {
  if (!std::isfinite(epsilon) || epsilon < 0.0 || (positive && epsilon == 0.0)) {
    ember::detail::fail<ValueError>(config, "epsilon must be finite and ",
                                    positive ? ">" : ">=", " 0, got ", epsilon);
  }
}

}  // namespace detail

// ---- BatchNorm ----------------------------------------------------------------------------

template <Backend B>
struct BatchNorm;

/// Configuration of BatchNorm (Burn's BatchNormConfig; PyTorch's BatchNorm1d/2d/3d with
/// track_running_stats = true). Defaults: epsilon 1e-5, momentum 0.1, affine true.
struct BatchNormConfig {
  std::int64_t num_features = 0;  ///< C, the channel dim (dim 1) of the input
  double epsilon = 1e-5;          ///< added to the variance
  double momentum = 0.1;          ///< running = (1 - momentum) * running + momentum * batch
  bool affine = true;             ///< learnable per-channel weight (ones) and bias (zeros)

  /// weight = 1, bias = 0, running_mean = 0, running_var = 1, num_batches_tracked = 0.
  /// Throws ValueError when num_features <= 0, epsilon is negative or not finite, or
  /// momentum is outside [0, 1].
  template <Backend B = Dispatch>
  BatchNorm<B> init(const typename B::Device& device = {}) const;
};
EMBER_CONFIG(BatchNormConfig, num_features, epsilon, momentum, affine)

/// Batch normalisation (Ioffe & Szegedy 2015) over x [N, C, ...] (rank >= 2: one module
/// for 1d, 2d and 3d inputs, as Burn's BatchNorm).
///
/// Training mode (`training`, the default): y = (x - mean) / sqrt(var + eps) * weight + bias
/// with the batch mean and biased variance per channel over N and the spatial dims; the
/// gradient flows through the batch statistics. Each call also updates the buffers (PyTorch's
/// convention): running_mean = (1 - m) running_mean + m mean, running_var = (1 - m)
/// running_var + m var_unbiased, num_batches_tracked += 1. Training needs more than one value
/// per channel (ValueError otherwise, as torch). The normalisation is
/// module::batch_norm_train (one fused kernel and backward where the backend has them).
/// Eval mode: the same formula with running_mean / running_var (no update).
/// State dict (PyTorch's): weight [C], bias [C] (when affine), running_mean [C],
/// running_var [C], num_batches_tracked [] (i64).
template <Backend B = Dispatch>
struct BatchNorm {
  std::optional<Param<Tensor<B, 1>>> weight;
  std::optional<Param<Tensor<B, 1>>> bias;
  mutable Buffer<Tensor<B, 1>> running_mean;
  mutable Buffer<Tensor<B, 1>> running_var;
  mutable Buffer<Tensor<B, 1, Int>> num_batches_tracked;
  std::int64_t num_features = 0;
  double epsilon = 1e-5;
  double momentum = 0.1;
  bool training = true;

  EMBER_MODULE(weight, bias, running_mean, running_var, num_batches_tracked, num_features, epsilon,
               momentum, training)

  /// [N, C, ...] -> [N, C, ...]. Throws ShapeError for rank < 2 or C != num_features.
  template <std::size_t D>
  Tensor<B, D> forward(const Tensor<B, D>& x) const {
    const Shape xs = x.shape();
    if constexpr (D < 2) {
      ember::detail::fail<ShapeError>("BatchNorm", "input of shape ", xs,
                                      " must have rank >= 2 ([batch, channels, ...])");
    } else {
      detail::check_nc<D>("BatchNorm", "num_features", xs, num_features);
      if (!training) {
        return module::batch_norm(x, running_mean.val(), running_var.val(), detail::opt_val(weight),
                                  detail::opt_val(bias), epsilon);
      }
      const std::int64_t n = xs[0], c = xs[1];
      const std::int64_t rest = n * c == 0 ? 0 : x.numel() / (n * c);
      const std::int64_t count = n * rest;
      if (count <= 1) {
        ember::detail::fail<ValueError>("BatchNorm",
                                        "expected more than 1 value per channel when training, "
                                        "got input of shape ",
                                        xs);
      }
      auto r = module::batch_norm_train(x, detail::opt_val(weight), detail::opt_val(bias), epsilon);
      const DType sdt = running_mean.val().dtype();
      auto batch_mean = r.mean.cast(sdt);
      auto batch_var =
          r.var.mul_scalar(static_cast<double>(count) / static_cast<double>(count - 1)).cast(sdt);
      running_mean.set(
          running_mean.val().mul_scalar(1.0 - momentum).add(batch_mean.mul_scalar(momentum)));
      running_var.set(
          running_var.val().mul_scalar(1.0 - momentum).add(batch_var.mul_scalar(momentum)));
      num_batches_tracked.set(num_batches_tracked.val().add_scalar(1));
      return std::move(r.output);
    }
  }
};

template <Backend B>
BatchNorm<B> BatchNormConfig::init(const typename B::Device& device) const {
  detail::check_positive("BatchNormConfig", "num_features", num_features);
  detail::check_epsilon("BatchNormConfig", epsilon);
  if (!(momentum >= 0.0 && momentum <= 1.0)) {
    ember::detail::fail<ValueError>("BatchNormConfig", "momentum must be in [0, 1], got ",
                                    momentum);
  }
  BatchNorm<B> m;
  if (affine) {
    m.weight = detail::filled<B>(num_features, 1.0, device);
    m.bias = detail::filled<B>(num_features, 0.0, device);
  }
  m.running_mean = Buffer<Tensor<B, 1>>(Tensor<B, 1>::zeros(Shape{num_features}, device));
  m.running_var = Buffer<Tensor<B, 1>>(Tensor<B, 1>::ones(Shape{num_features}, device));
  m.num_batches_tracked =
      Buffer<Tensor<B, 1, Int>>(Tensor<B, 1, Int>::zeros(Shape{1}, device), /*scalar=*/true);
  m.num_features = num_features;
  m.epsilon = epsilon;
  m.momentum = momentum;
  return m;
}

// ---- LayerNorm ----------------------------------------------------------------------------

template <Backend B>
struct LayerNorm;

/// Configuration of LayerNorm (Burn's LayerNormConfig; PyTorch's LayerNorm(d_model, eps,
/// bias)). Defaults: epsilon 1e-5, bias true.
struct LayerNormConfig {
  std::int64_t d_model = 0;  ///< size of the normalised last dim
  double epsilon = 1e-5;
  bool bias = true;  ///< learnable bias (zeros); the weight (ones) is always there

  /// Throws ValueError when d_model <= 0 or epsilon is negative or not finite.
  template <Backend B = Dispatch>
  LayerNorm<B> init(const typename B::Device& device = {}) const;
};
EMBER_CONFIG(LayerNormConfig, d_model, epsilon, bias)

/// Layer normalisation (Ba et al. 2016) over the last dim: y = (x - mean) / sqrt(var + eps)
/// * weight + bias, biased variance. [..., d_model] -> [..., d_model]. State dict: weight
/// [d_model], bias [d_model] (optional).
template <Backend B = Dispatch>
struct LayerNorm {
  Param<Tensor<B, 1>> weight;
  std::optional<Param<Tensor<B, 1>>> bias;
  std::int64_t d_model = 0;
  double epsilon = 1e-5;

  EMBER_MODULE(weight, bias, d_model, epsilon)

  /// Throws ShapeError when the last dim is not d_model.
  template <std::size_t D>
  Tensor<B, D> forward(const Tensor<B, D>& x) const {
    detail::check_last("LayerNorm", x.shape(), d_model);
    return module::layer_norm(x, weight.val(), detail::opt_val(bias), epsilon);
  }
};

template <Backend B>
LayerNorm<B> LayerNormConfig::init(const typename B::Device& device) const {
  detail::check_positive("LayerNormConfig", "d_model", d_model);
  detail::check_epsilon("LayerNormConfig", epsilon);
  LayerNorm<B> m;
  m.weight = detail::filled<B>(d_model, 1.0, device);
  if (bias) m.bias = detail::filled<B>(d_model, 0.0, device);
  m.d_model = d_model;
  m.epsilon = epsilon;
  return m;
}

// ---- GroupNorm ----------------------------------------------------------------------------

template <Backend B>
struct GroupNorm;

/// Configuration of GroupNorm (Burn's GroupNormConfig; PyTorch's GroupNorm(num_groups,
/// num_channels, eps, affine)). Defaults: epsilon 1e-5, affine true.
struct GroupNormConfig {
  std::int64_t num_groups = 0;
  std::int64_t num_channels = 0;
  double epsilon = 1e-5;
  bool affine = true;  ///< learnable per-channel weight (ones) and bias (zeros)

  /// Throws ValueError when num_groups or num_channels <= 0, num_groups does not divide
  /// num_channels, or epsilon is negative or not finite.
  template <Backend B = Dispatch>
  GroupNorm<B> init(const typename B::Device& device = {}) const;
};
EMBER_CONFIG(GroupNormConfig, num_groups, num_channels, epsilon, affine)

/// Group normalisation (Wu & He 2018): the channels of x [N, C, ...] split into num_groups
/// groups, each normalised over its channels and positions (biased variance), then
/// weight[c], bias[c]. Same in training and eval. State dict: weight [C], bias [C]
/// (when affine).
template <Backend B = Dispatch>
struct GroupNorm {
  std::optional<Param<Tensor<B, 1>>> weight;
  std::optional<Param<Tensor<B, 1>>> bias;
  std::int64_t num_groups = 0;
  std::int64_t num_channels = 0;
  double epsilon = 1e-5;
  bool affine = true;

  EMBER_MODULE(weight, bias, num_groups, num_channels, epsilon, affine)

  /// [N, C, ...] -> [N, C, ...]. Throws ShapeError for rank < 2 or C != num_channels.
  template <std::size_t D>
  Tensor<B, D> forward(const Tensor<B, D>& x) const {
    detail::check_nc<D>("GroupNorm", "num_channels", x.shape(), num_channels);
    return module::group_norm(x, num_groups, detail::opt_val(weight), detail::opt_val(bias),
                              epsilon);
  }
};

template <Backend B>
GroupNorm<B> GroupNormConfig::init(const typename B::Device& device) const {
  detail::check_positive("GroupNormConfig", "num_groups", num_groups);
  detail::check_positive("GroupNormConfig", "num_channels", num_channels);
  detail::check_epsilon("GroupNormConfig", epsilon);
  if (num_channels % num_groups != 0) {
    ember::detail::fail<ValueError>("GroupNormConfig", "num_groups ", num_groups,
                                    " does not divide num_channels ", num_channels);
  }
  GroupNorm<B> m;
  if (affine) {
    m.weight = detail::filled<B>(num_channels, 1.0, device);
    m.bias = detail::filled<B>(num_channels, 0.0, device);
  }
  m.num_groups = num_groups;
  m.num_channels = num_channels;
  m.epsilon = epsilon;
  m.affine = affine;
  return m;
}

// ---- InstanceNorm -------------------------------------------------------------------------

template <Backend B>
struct InstanceNorm;

/// Configuration of InstanceNorm (Burn's InstanceNormConfig: affine defaults to true, where
/// PyTorch's InstanceNorm1d/2d/3d default to false; no running statistics, as PyTorch's
/// track_running_stats = false). Defaults: epsilon 1e-5, affine true.
struct InstanceNormConfig {
  std::int64_t num_channels = 0;
  double epsilon = 1e-5;
  bool affine = true;  ///< learnable per-channel weight (ones) and bias (zeros)

  /// Throws ValueError when num_channels <= 0 or epsilon is negative or not finite.
  template <Backend B = Dispatch>
  InstanceNorm<B> init(const typename B::Device& device = {}) const;
};
EMBER_CONFIG(InstanceNormConfig, num_channels, epsilon, affine)

/// Instance normalisation (Ulyanov et al. 2016): each (sample, channel) of x [N, C, ...]
/// normalised over its positions (biased variance), then weight[c], bias[c]; group norm with
/// one group per channel. Same in training and eval. State dict: weight [C], bias [C]
/// (when affine).
template <Backend B = Dispatch>
struct InstanceNorm {
  std::optional<Param<Tensor<B, 1>>> weight;
  std::optional<Param<Tensor<B, 1>>> bias;
  std::int64_t num_channels = 0;
  double epsilon = 1e-5;
  bool affine = true;

  EMBER_MODULE(weight, bias, num_channels, epsilon, affine)

  /// [N, C, ...] -> [N, C, ...]. Throws ShapeError for rank < 2 or C != num_channels.
  template <std::size_t D>
  Tensor<B, D> forward(const Tensor<B, D>& x) const {
    detail::check_nc<D>("InstanceNorm", "num_channels", x.shape(), num_channels);
    return module::group_norm(x, num_channels, detail::opt_val(weight), detail::opt_val(bias),
                              epsilon);
  }
};

template <Backend B>
InstanceNorm<B> InstanceNormConfig::init(const typename B::Device& device) const {
  detail::check_positive("InstanceNormConfig", "num_channels", num_channels);
  detail::check_epsilon("InstanceNormConfig", epsilon);
  InstanceNorm<B> m;
  if (affine) {
    m.weight = detail::filled<B>(num_channels, 1.0, device);
    m.bias = detail::filled<B>(num_channels, 0.0, device);
  }
  m.num_channels = num_channels;
  m.epsilon = epsilon;
  m.affine = affine;
  return m;
}

// ---- RmsNorm ------------------------------------------------------------------------------

template <Backend B>
struct RmsNorm;

/// Configuration of RmsNorm (Burn's RmsNormConfig; PyTorch's RMSNorm(d_model, eps)).
/// Default epsilon 1e-5 (Burn's; torch's default is the dtype's machine epsilon).
struct RmsNormConfig {
  std::int64_t d_model = 0;
  double epsilon = 1e-5;

  /// Throws ValueError when d_model <= 0 or epsilon is not finite and > 0.
  template <Backend B = Dispatch>
  RmsNorm<B> init(const typename B::Device& device = {}) const;
};
EMBER_CONFIG(RmsNormConfig, d_model, epsilon)

/// RMS normalisation (Zhang & Sennrich 2019) over the last dim: y = x / sqrt(mean(x^2) +
/// eps) * weight. [..., d_model] -> [..., d_model]. State dict: weight [d_model].
template <Backend B = Dispatch>
struct RmsNorm {
  Param<Tensor<B, 1>> weight;
  std::int64_t d_model = 0;
  double epsilon = 1e-5;

  EMBER_MODULE(weight, d_model, epsilon)

  /// Throws ShapeError when the last dim is not d_model.
  template <std::size_t D>
  Tensor<B, D> forward(const Tensor<B, D>& x) const {
    detail::check_last("RmsNorm", x.shape(), d_model);
    return module::rms_norm(x, weight.val(), epsilon);
  }
};

template <Backend B>
RmsNorm<B> RmsNormConfig::init(const typename B::Device& device) const {
  detail::check_positive("RmsNormConfig", "d_model", d_model);
  detail::check_epsilon("RmsNormConfig", epsilon, true);
  RmsNorm<B> m;
  m.weight = detail::filled<B>(d_model, 1.0, device);
  m.d_model = d_model;
  m.epsilon = epsilon;
  return m;
}

}  // namespace ember::nn
