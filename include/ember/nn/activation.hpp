// Activation modules (Burn's burn-nn activations, PyTorch's torch.nn activation layers),
// each a thin module over ember/tensor/activation.hpp.
//
//   nn::Relu relu;                                           // no settings
//   auto act = nn::LeakyReluConfig{.negative_slope = 0.2}.init();
//   auto prelu = nn::PReluConfig{.num_parameters = 16}.init<B>(device);   // learnable
//   auto y = act.forward(x);                                // any shape -> same shape
//
// Modules without parameters are plain structs with a `forward` templated on the tensor;
// PRelu and SwiGlu own parameters and are templates over the backend. Settings are
// PyTorch's / Burn's (their defaults noted per class); formulas are those of the functional
// ops (torch.nn.functional's). Parameter names follow PyTorch's state_dict.
#pragma once

#include <cmath>
#include <cstdint>
#include <nlohmann/json_fwd.hpp>

#include "ember/core/distribution.hpp"
#include "ember/core/error.hpp"
#include "ember/dispatch/dispatch.hpp"
#include "ember/module/config_fwd.hpp"
#include "ember/module/initializer.hpp"
#include "ember/module/module.hpp"
#include "ember/nn/linear.hpp"
#include "ember/tensor/activation.hpp"
#include "ember/tensor/tensor.hpp"

/// Defines the activation module `Name` without settings: forward(x) = `expr` (any shape ->
/// the same shape).
#define EMBER_NN_ACTIVATION_(Name, expr)                \
  struct Name {                                         \
    EMBER_MODULE()                                      \
    template <class B, std::size_t D>                   \
    Tensor<B, D> forward(const Tensor<B, D>& x) const { \
      return expr;                                      \
    }                                                   \
  };

/// Defines the activation module `Name` over one dim (field `dim`, default -1; forward(x) =
/// fn(x, dim), which throws ShapeError for an out-of-range dim) and its configuration
/// `NameConfig` (field `dim`, default -1).
#define EMBER_NN_DIM_ACTIVATION_(Name, fn)              \
  struct Name {                                         \
    std::int64_t dim = -1;                              \
    EMBER_MODULE(dim)                                   \
    template <class B, std::size_t D>                   \
    Tensor<B, D> forward(const Tensor<B, D>& x) const { \
      return fn(x, dim);                                \
    }                                                   \
  };                                                    \
  struct Name##Config {                                 \
    std::int64_t dim = -1;                              \
    Name init() const { return Name{.dim = dim}; }      \
  };                                                    \
  EMBER_CONFIG(Name##Config, dim)

namespace ember::nn {

// ---- without settings ---------------------------------------------------------------------

/// max(0, x) (torch.nn.ReLU, Burn's Relu).
EMBER_NN_ACTIVATION_(Relu, activation::relu(x))

/// min(max(0, x), 6) (torch.nn.ReLU6, Burn's Relu6).
EMBER_NN_ACTIVATION_(Relu6, activation::relu6(x))

/// 1 / (1 + exp(-x)) (torch.nn.Sigmoid).
EMBER_NN_ACTIVATION_(Sigmoid, activation::sigmoid(x))

/// tanh(x) (torch.nn.Tanh).
EMBER_NN_ACTIVATION_(Tanh, x.tanh())

/// x * sigmoid(x) (torch.nn.SiLU, Burn's Silu / swish).
EMBER_NN_ACTIVATION_(Silu, activation::silu(x))

/// x * tanh(softplus(x)) (torch.nn.Mish).
EMBER_NN_ACTIVATION_(Mish, activation::mish(x))

/// x * relu6(x + 3) / 6 (torch.nn.Hardswish).
EMBER_NN_ACTIVATION_(HardSwish, activation::hard_swish(x))

/// log(sigmoid(x)), computed stably (torch.nn.LogSigmoid).
EMBER_NN_ACTIVATION_(LogSigmoid, activation::log_sigmoid(x))

/// x / (1 + |x|) (torch.nn.Softsign).
EMBER_NN_ACTIVATION_(Softsign, activation::softsign(x))

/// scale * elu(x, alpha) with torch's fixed alpha and scale (torch.nn.SELU).
EMBER_NN_ACTIVATION_(Selu, activation::selu(x))

/// x - tanh(x) (torch.nn.Tanhshrink).
EMBER_NN_ACTIVATION_(Tanhshrink, activation::tanhshrink(x))

// ---- with settings ------------------------------------------------------------------------

/// x if x >= 0 else negative_slope * x (torch.nn.LeakyReLU, Burn's LeakyRelu).
struct LeakyRelu {
  double negative_slope = 0.01;
  EMBER_MODULE(negative_slope)
  template <class B, std::size_t D>
  Tensor<B, D> forward(const Tensor<B, D>& x) const {
    return activation::leaky_relu(x, negative_slope);
  }
};
/// Configuration of LeakyRelu. Default negative_slope 0.01.
struct LeakyReluConfig {
  double negative_slope = 0.01;
  LeakyRelu init() const { return LeakyRelu{.negative_slope = negative_slope}; }
};
EMBER_CONFIG(LeakyReluConfig, negative_slope)

/// Which GELU formula (torch's `approximate` argument).
enum class GeluApproximate {
  None,  ///< x * Phi(x) with erf
  Tanh,  ///< 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
};
EMBER_CONFIG_ENUM(GeluApproximate, {GeluApproximate::None, "none"}, {GeluApproximate::Tanh, "tanh"})

/// Gaussian error linear unit (torch.nn.GELU; Burn's Gelu and GeluApproximate).
struct Gelu {
  GeluApproximate approximate = GeluApproximate::None;
  EMBER_MODULE(approximate)
  template <class B, std::size_t D>
  Tensor<B, D> forward(const Tensor<B, D>& x) const {
    return approximate == GeluApproximate::Tanh ? activation::gelu_tanh(x) : activation::gelu(x);
  }
};
/// Configuration of Gelu. Default approximate none (exact erf form).
struct GeluConfig {
  GeluApproximate approximate = GeluApproximate::None;
  Gelu init() const { return Gelu{.approximate = approximate}; }
};
EMBER_CONFIG(GeluConfig, approximate)

/// log(1 + exp(beta x)) / beta, x where beta x > threshold (torch.nn.Softplus, Burn's
/// Softplus).
struct Softplus {
  double beta = 1.0;
  double threshold = 20.0;
  EMBER_MODULE(beta, threshold)
  /// Throws ValueError for beta == 0.
  template <class B, std::size_t D>
  Tensor<B, D> forward(const Tensor<B, D>& x) const {
    return activation::softplus(x, beta, threshold);
  }
};
/// Configuration of Softplus. Defaults beta 1, threshold 20.
struct SoftplusConfig {
  double beta = 1.0;
  double threshold = 20.0;
  /// Throws ValueError for beta == 0.
  Softplus init() const {
    if (beta == 0.0) ember::detail::fail<ValueError>("SoftplusConfig", "beta must be non-zero");
    return Softplus{.beta = beta, .threshold = threshold};
  }
};
EMBER_CONFIG(SoftplusConfig, beta, threshold)

/// max(0, min(1, alpha x + beta)) (Burn's HardSigmoid; torch.nn.Hardsigmoid is alpha = 1/6).
struct HardSigmoid {
  double alpha = 0.2;
  double beta = 0.5;
  EMBER_MODULE(alpha, beta)
  template <class B, std::size_t D>
  Tensor<B, D> forward(const Tensor<B, D>& x) const {
    return activation::hard_sigmoid(x, alpha, beta);
  }
};
/// Configuration of HardSigmoid. Burn's defaults alpha 0.2, beta 0.5.
struct HardSigmoidConfig {
  double alpha = 0.2;
  double beta = 0.5;
  HardSigmoid init() const { return HardSigmoid{.alpha = alpha, .beta = beta}; }
};
EMBER_CONFIG(HardSigmoidConfig, alpha, beta)

/// min(max(x, min_val), max_val) (torch.nn.Hardtanh, Burn's HardTanh).
struct HardTanh {
  double min_val = -1.0;
  double max_val = 1.0;
  EMBER_MODULE(min_val, max_val)
  template <class B, std::size_t D>
  Tensor<B, D> forward(const Tensor<B, D>& x) const {
    return x.clamp(min_val, max_val);
  }
};
/// Configuration of HardTanh. Defaults min_val -1, max_val 1.
struct HardTanhConfig {
  double min_val = -1.0;
  double max_val = 1.0;
  /// Throws ValueError when max_val < min_val.
  HardTanh init() const {
    if (!(max_val >= min_val)) {
      ember::detail::fail<ValueError>("HardTanhConfig", "max_val ", max_val,
                                      " must not be below min_val ", min_val);
    }
    return HardTanh{.min_val = min_val, .max_val = max_val};
  }
};
EMBER_CONFIG(HardTanhConfig, min_val, max_val)

/// x if x > 0 else alpha (exp(x) - 1) (torch.nn.ELU, Burn's Elu).
struct Elu {
  double alpha = 1.0;
  EMBER_MODULE(alpha)
  template <class B, std::size_t D>
  Tensor<B, D> forward(const Tensor<B, D>& x) const {
    return activation::elu(x, alpha);
  }
};
/// Configuration of Elu. Default alpha 1.
struct EluConfig {
  double alpha = 1.0;
  Elu init() const { return Elu{.alpha = alpha}; }
};
EMBER_CONFIG(EluConfig, alpha)

/// max(0, x) + min(0, alpha (exp(x / alpha) - 1)) (torch.nn.CELU, Burn's Celu).
struct Celu {
  double alpha = 1.0;
  EMBER_MODULE(alpha)
  /// Throws ValueError for alpha == 0.
  template <class B, std::size_t D>
  Tensor<B, D> forward(const Tensor<B, D>& x) const {
    return activation::celu(x, alpha);
  }
};
/// Configuration of Celu. Default alpha 1.
struct CeluConfig {
  double alpha = 1.0;
  /// Throws ValueError for alpha == 0.
  Celu init() const {
    if (alpha == 0.0) ember::detail::fail<ValueError>("CeluConfig", "alpha must be non-zero");
    return Celu{.alpha = alpha};
  }
};
EMBER_CONFIG(CeluConfig, alpha)

/// x if |x| > lambda else 0 (torch.nn.Hardshrink, Burn's HardShrink).
struct HardShrink {
  double lambda = 0.5;
  EMBER_MODULE(lambda)
  /// Throws ValueError for lambda < 0.
  template <class B, std::size_t D>
  Tensor<B, D> forward(const Tensor<B, D>& x) const {
    return activation::hard_shrink(x, lambda);
  }
};
/// Configuration of HardShrink. Default lambda 0.5.
struct HardShrinkConfig {
  double lambda = 0.5;
  /// Throws ValueError for lambda < 0.
  HardShrink init() const {
    if (!(lambda >= 0.0))
      ember::detail::fail<ValueError>("HardShrinkConfig", "lambda must be >= 0, got ", lambda);
    return HardShrink{.lambda = lambda};
  }
};
EMBER_CONFIG(HardShrinkConfig, lambda)

/// x - lambda if x > lambda, x + lambda if x < -lambda, else 0 (torch.nn.Softshrink, Burn's
/// SoftShrink).
struct SoftShrink {
  double lambda = 0.5;
  EMBER_MODULE(lambda)
  /// Throws ValueError for lambda < 0.
  template <class B, std::size_t D>
  Tensor<B, D> forward(const Tensor<B, D>& x) const {
    return activation::soft_shrink(x, lambda);
  }
};
/// Configuration of SoftShrink. Default lambda 0.5.
struct SoftShrinkConfig {
  double lambda = 0.5;
  /// Throws ValueError for lambda < 0.
  SoftShrink init() const {
    if (!(lambda >= 0.0))
      ember::detail::fail<ValueError>("SoftShrinkConfig", "lambda must be >= 0, got ", lambda);
    return SoftShrink{.lambda = lambda};
  }
};
EMBER_CONFIG(SoftShrinkConfig, lambda)

/// Gated linear unit a * sigmoid(b) with a, b the halves of `dim` (torch.nn.GLU, Burn's
/// GLU). [.., 2n, ..] -> [.., n, ..].
/// Throws ShapeError when dim is out of range or its size is odd.
EMBER_NN_DIM_ACTIVATION_(Glu, activation::glu)

/// softmax over `dim` (torch.nn.Softmax; torch has no default dim, Ember uses -1).
EMBER_NN_DIM_ACTIVATION_(Softmax, activation::softmax)

/// log(softmax(x)) over `dim` (torch.nn.LogSoftmax).
EMBER_NN_DIM_ACTIVATION_(LogSoftmax, activation::log_softmax)

/// softmax(-x) over `dim` (torch.nn.Softmin).
EMBER_NN_DIM_ACTIVATION_(Softmin, activation::softmin)

/// x if x > threshold else value (torch.nn.Threshold, Burn's Threshold).
struct Threshold {
  double threshold = 0.0;
  double value = 0.0;
  EMBER_MODULE(threshold, value)
  template <class B, std::size_t D>
  Tensor<B, D> forward(const Tensor<B, D>& x) const {
    return x.mask_fill(x.lower_equal_elem(threshold), value);
  }
};
/// Configuration of Threshold (both fields required, as in Burn and torch).
struct ThresholdConfig {
  double threshold = 0.0;
  double value = 0.0;
  Threshold init() const { return Threshold{.threshold = threshold, .value = value}; }
};
EMBER_CONFIG(ThresholdConfig, threshold, value)

/// x if x > alpha else 0 (Burn's / ONNX's ThresholdedRelu).
struct ThresholdedRelu {
  double alpha = 1.0;
  EMBER_MODULE(alpha)
  template <class B, std::size_t D>
  Tensor<B, D> forward(const Tensor<B, D>& x) const {
    return x.mask_fill(x.lower_equal_elem(alpha), 0.0);
  }
};
/// Configuration of ThresholdedRelu. Default alpha 1.
struct ThresholdedReluConfig {
  double alpha = 1.0;
  ThresholdedRelu init() const { return ThresholdedRelu{.alpha = alpha}; }
};
EMBER_CONFIG(ThresholdedReluConfig, alpha)

/// Randomised leaky ReLU (Xu et al. 2015; torch.nn.RReLU, Burn's RRelu). Training mode: each
/// negative element is multiplied by its own slope drawn from U(lower, upper) (the backend's
/// generator), positives pass unchanged. Eval mode: leaky_relu with the midpoint slope
/// (lower + upper) / 2.
struct RRelu {
  double lower = 0.125;
  double upper = 1.0 / 3.0;
  bool training = true;
  EMBER_MODULE(lower, upper, training)
  /// Any shape -> the same shape. Throws ValueError when lower > upper.
  template <class B, std::size_t D>
  Tensor<B, D> forward(const Tensor<B, D>& x) const {
    if (!(lower <= upper)) {
      ember::detail::fail<ValueError>("RRelu", "lower ", lower, " must not exceed upper ", upper);
    }
    if (!training) return activation::leaky_relu(x, 0.5 * (lower + upper));
    auto slope =
        Tensor<B, D>::random(x.shape(), Distribution::uniform(lower, upper), x.device(), x.dtype());
    return x.mask_where(x.lower_elem(0.0), x.mul(slope));
  }
};
/// Configuration of RRelu. Defaults lower 1/8, upper 1/3 (torch's and Burn's).
struct RReluConfig {
  double lower = 0.125;
  double upper = 1.0 / 3.0;
  /// Throws ValueError when lower > upper.
  RRelu init() const {
    if (!(lower <= upper)) {
      ember::detail::fail<ValueError>("RReluConfig", "lower ", lower, " must not exceed upper ",
                                      upper);
    }
    return RRelu{.lower = lower, .upper = upper, .training = true};
  }
};
EMBER_CONFIG(RReluConfig, lower, upper)

// ---- with parameters ----------------------------------------------------------------------

template <Backend B>
struct PRelu;

/// Configuration of PRelu (Burn's PReluConfig, PyTorch's PReLU(num_parameters, init)).
/// Defaults: num_parameters 1 (one slope shared by all channels), alpha 0.25.
struct PReluConfig {
  std::int64_t num_parameters = 1;  ///< 1, or the channel count (dim 1 of the input)
  double alpha = 0.25;              ///< initial slope

  /// weight [num_parameters] filled with alpha. Throws ValueError when num_parameters <= 0.
  template <Backend B = Dispatch>
  PRelu<B> init(const typename B::Device& device = {}) const;
};
EMBER_CONFIG(PReluConfig, num_parameters, alpha)

/// Parametric ReLU (He et al. 2015): x if x >= 0 else weight[c] * x, c the channel (dim 1;
/// a rank-1 input has one channel). State dict: weight [num_parameters] (PyTorch's name;
/// Burn calls it alpha).
template <Backend B = Dispatch>
struct PRelu {
  Param<Tensor<B, 1>> weight;

  EMBER_MODULE(weight)

  /// Any shape -> the same shape. Throws ShapeError when weight has more than one element
  /// and it differs from the input's channel count.
  template <std::size_t D>
  Tensor<B, D> forward(const Tensor<B, D>& x) const {
    const std::int64_t n = weight.val().numel();
    const std::int64_t channels = D >= 2 ? x.dim(1) : 1;
    if (n != 1 && n != channels) {
      ember::detail::fail<ShapeError>("PRelu", "input of shape ", x.shape(), " has ", channels,
                                      " channels (dim 1) but the layer has num_parameters = ", n);
    }
    return activation::prelu(x, weight.val());
  }
};

template <Backend B>
PRelu<B> PReluConfig::init(const typename B::Device& device) const {
  if (num_parameters <= 0) {
    ember::detail::fail<ValueError>("PReluConfig", "num_parameters must be > 0, got ",
                                    num_parameters);
  }
  PRelu<B> m;
  m.weight = Param<Tensor<B, 1>>(Tensor<B, 1>::full(Shape{num_parameters}, alpha, device));
  return m;
}

template <Backend B>
struct SwiGlu;

/// Configuration of SwiGlu (Burn's SwiGluConfig). Defaults: bias false, initializer
/// kaiming_uniform(gain 1/sqrt(3), fan_out_only false) (Burn's, as its Linear).
struct SwiGluConfig {
  std::int64_t d_input = 0;
  std::int64_t d_output = 0;
  bool bias = false;
  Initializer initializer = Initializer::kaiming_uniform(1.0 / std::sqrt(3.0), false);

  /// Two Linear layers [d_input -> d_output]. Throws ValueError for sizes <= 0.
  template <Backend B = Dispatch>
  SwiGlu<B> init(const typename B::Device& device = {}) const;
};
EMBER_CONFIG(SwiGluConfig, d_input, d_output, bias, initializer)

/// Swish-gated linear unit (Shazeer 2020; Burn's SwiGlu): silu(linear_inner(x)) *
/// linear_outer(x). [..., d_input] -> [..., d_output]. State dict: linear_inner.weight
/// [d_output, d_input], linear_outer.weight, and their biases when `bias`.
template <Backend B = Dispatch>
struct SwiGlu {
  Linear<B> linear_inner;
  Linear<B> linear_outer;

  EMBER_MODULE(linear_inner, linear_outer)

  /// Throws ShapeError when the last dim is not d_input.
  template <std::size_t D>
  Tensor<B, D> forward(const Tensor<B, D>& x) const {
    const std::int64_t d_input = linear_inner.weight->dim(1);
    if (x.dim(-1) != d_input) {
      ember::detail::fail<ShapeError>("SwiGlu", "input of shape ", x.shape(), " has last dim ",
                                      x.dim(-1), ", expected d_input = ", d_input);
    }
    return activation::silu(linear_inner.forward(x)).mul(linear_outer.forward(x));
  }
};

template <Backend B>
SwiGlu<B> SwiGluConfig::init(const typename B::Device& device) const {
  if (d_input <= 0 || d_output <= 0) {
    ember::detail::fail<ValueError>("SwiGluConfig", "d_input and d_output must be > 0, got ",
                                    d_input, " and ", d_output);
  }
  const LinearConfig lc{
      .d_input = d_input, .d_output = d_output, .bias = bias, .initializer = initializer};
  SwiGlu<B> m;
  m.linear_inner = lc.template init<B>(device);
  m.linear_outer = lc.template init<B>(device);
  return m;
}

}  // namespace ember::nn

#undef EMBER_NN_ACTIVATION_
#undef EMBER_NN_DIM_ACTIVATION_
