// Activation functions (Burn's `burn::tensor::activation`, PyTorch's torch.nn.functional).
//
// Every function takes a Float tensor of any rank and dtype and returns one of the same
// shape and dtype (glu halves one dim). Each is a composite written with front-end ops; a
// backend opts into a fast kernel by defining the static function named in the comment
// (e.g. `B::float_softmax(p, dim)`), detected with a requires-expression. Arguments are
// taken by value so `relu(std::move(x))` lets the backend reuse x's buffer.
//
// Formulas follow PyTorch's documentation (torch.nn.functional.*) unless noted.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>

#include "ember/core/autocast.hpp"
#include "ember/ir/nn.hpp"
#include "ember/tensor/infer.hpp"
#include "ember/tensor/tensor.hpp"

namespace ember::activation {

namespace detail {
template <class B>
using FP = typename B::FloatTensor;

/// The row maximum subtracted by the softmax family, cut from the autodiff graph: the result
/// does not depend on the shift, so its gradient is zero analytically; detaching it makes the
/// backward exact and independent of max's rule (ties). No-op for other backends.
template <class B, std::size_t D>
Tensor<B, D> softmax_shift(Tensor<B, D> m) {
  if constexpr (AutodiffBackend<B>)
    return m.detach();
  else
    return m;
}
}  // namespace detail

// Dispatch helper: calls B::float_<name>(prim, args...) when the backend defines it,
// otherwise evaluates the composite expression.
#define EMBER_ACT_DISPATCH(fname, x, ...)                                                         \
  if constexpr (requires(detail::FP<B> p) { B::fname(std::move(p) __VA_OPT__(, ) __VA_ARGS__); }) \
  return Tensor<B, D>(B::fname(std::move(x).into_primitive() __VA_OPT__(, ) __VA_ARGS__))

/// max(0, x). NaN propagates. Backend: float_relu(p).
template <class B, std::size_t D>
Tensor<B, D> relu(Tensor<B, D> x) {
  EMBER_ACT_DISPATCH(float_relu, x);
  else {
    // mask_fill, not clamp_min: the gradient at x = 0 is 0 as in torch (clamp passes it).
    auto nonpos = x.lower_equal_elem(0.0);
    return std::move(x).mask_fill(nonpos, 0.0);
  }
}

/// min(max(0, x), 6). Backend: float_relu6(p).
template <class B, std::size_t D>
Tensor<B, D> relu6(Tensor<B, D> x) {
  EMBER_ACT_DISPATCH(float_relu6, x);
  else {
    // Gradient 0 at x = 0 and x = 6 as in torch (hardtanh's open interval).
    auto low = x.lower_equal_elem(0.0);
    auto high = x.greater_equal_elem(6.0);
    return std::move(x).mask_fill(low, 0.0).mask_fill(high, 6.0);
  }
}

/// x if x >= 0 else slope * x (torch default slope 0.01). Backend: float_leaky_relu(p, slope).
template <class B, std::size_t D>
Tensor<B, D> leaky_relu(Tensor<B, D> x, double slope = 0.01) {
  EMBER_ACT_DISPATCH(float_leaky_relu, x, slope);
  else {
    auto neg = x.lower_equal_elem(0.0);  // gradient `slope` at x = 0 as in torch
    auto scaled = x.mul_scalar(slope);
    return std::move(x).mask_where(neg, scaled);
  }
}

/// Parametric ReLU: x if x >= 0 else weight[c] * x, with c the channel dim 1 (torch's
/// F.prelu). weight: [C] with C = x.dim(1), or [1] (shared); a rank-1 x has one channel.
/// Throws ShapeError when weight has another size. Backend: float_prelu(p, weight).
template <class B, std::size_t D>
Tensor<B, D> prelu(const Tensor<B, D>& x, const Tensor<B, 1>& weight) {
  ember::detail::ir_infer(ir::Prelu{}, x, ember::detail::ir_type_as(weight, x.dtype()));
  const Tensor<B, 1> w = weight.cast(x.dtype());
  if constexpr (requires(detail::FP<B> p) { B::float_prelu(p, p); }) {
    return Tensor<B, D>(B::float_prelu(x.primitive(), w.primitive()));
  } else {
    std::array<std::int64_t, D> ws{};
    ws.fill(1);
    if constexpr (D >= 2) ws[1] = w.numel();
    auto wb = w.template reshape<D>(ws);
    return x.mask_where(x.lower_elem(0.0), x.mul(wb));
  }
}

/// Sigmoid 1 / (1 + exp(-x)). Backend: float_sigmoid(p).
template <class B, std::size_t D>
Tensor<B, D> sigmoid(Tensor<B, D> x) {
  EMBER_ACT_DISPATCH(float_sigmoid, x);
  else {
    bool tracked = false;
    if constexpr (AutodiffBackend<B>) tracked = x.is_require_grad();
    // Untracked: rvalue chain, so each step may reuse the buffer.
    if (!tracked) return std::move(x).neg().exp().add_scalar(1.0).recip();
    auto z = std::move(x).neg();
    auto e = z.exp();
    // exp(-x) overflows for very negative x: sigmoid is 0 there, but exp's backward would
    // give 0 * inf = NaN. Recompute exp with those entries zeroed, then put inf back
    // (same values).
    auto over = e.is_inf();
    e = z.mask_fill(over, 0.0).exp().mask_fill(over, std::numeric_limits<double>::infinity());
    return std::move(e).add_scalar(1.0).recip();
  }
}

/// Exact GELU: x * Phi(x) = 0.5 x (1 + erf(x / sqrt 2)) (Hendrycks & Gimpel 2016; torch's
/// F.gelu(approximate='none')). Backend: float_gelu(p).
template <class B, std::size_t D>
Tensor<B, D> gelu(Tensor<B, D> x) {
  EMBER_ACT_DISPATCH(float_gelu, x);
  else return x.mul(x.mul_scalar(0.70710678118654752440).erf().add_scalar(1.0)).mul_scalar(0.5);
}

/// Tanh-approximated GELU: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) (torch's
/// F.gelu(approximate='tanh')). Backend: float_gelu_tanh(p).
template <class B, std::size_t D>
Tensor<B, D> gelu_tanh(Tensor<B, D> x) {
  EMBER_ACT_DISPATCH(float_gelu_tanh, x);
  else {
    auto inner = x.add(x.mul(x).mul(x).mul_scalar(0.044715)).mul_scalar(0.79788456080286535588);
    return x.mul(inner.tanh().add_scalar(1.0)).mul_scalar(0.5);
  }
}

/// SiLU / swish: x * sigmoid(x). Backend: float_silu(p).
template <class B, std::size_t D>
Tensor<B, D> silu(Tensor<B, D> x) {
  EMBER_ACT_DISPATCH(float_silu, x);
  else return x.mul(sigmoid(x));
}

/// Softplus: log(1 + exp(beta x)) / beta, and x where beta x > threshold (torch's defaults
/// beta = 1, threshold = 20). Throws ValueError for beta == 0. Backend:
/// float_softplus(p, beta, threshold).
template <class B, std::size_t D>
Tensor<B, D> softplus(Tensor<B, D> x, double beta = 1.0, double threshold = 20.0) {
  if (beta == 0.0) ember::detail::fail<ValueError>("softplus", "beta must be non-zero");
  EMBER_ACT_DISPATCH(float_softplus, x, beta, threshold);
  else {
    auto bx = x.mul_scalar(beta);
    auto big = bx.greater_elem(threshold);
    // clamp_max: exp of the unused branch must not overflow (its backward would be 0 * inf).
    return bx.clamp_max(threshold).exp().log1p().div_scalar(beta).mask_where(big, x);
  }
}

/// Mish: x * tanh(softplus(x)) (Misra 2019). Backend: float_mish(p).
template <class B, std::size_t D>
Tensor<B, D> mish(Tensor<B, D> x) {
  EMBER_ACT_DISPATCH(float_mish, x);
  else return x.mul(softplus(x).tanh());
}

/// Hard sigmoid: max(0, min(1, alpha x + beta)) (Burn's / ONNX's defaults alpha = 0.2,
/// beta = 0.5; torch's F.hardsigmoid is alpha = 1/6). Backend: float_hard_sigmoid(p, a, b).
template <class B, std::size_t D>
Tensor<B, D> hard_sigmoid(Tensor<B, D> x, double alpha = 0.2, double beta = 0.5) {
  EMBER_ACT_DISPATCH(float_hard_sigmoid, x, alpha, beta);
  else return std::move(x).mul_scalar(alpha).add_scalar(beta).clamp(0.0, 1.0);
}

/// Hard swish: x * relu6(x + 3) / 6 (torch's F.hardswish). Backend: float_hard_swish(p).
template <class B, std::size_t D>
Tensor<B, D> hard_swish(Tensor<B, D> x) {
  EMBER_ACT_DISPATCH(float_hard_swish, x);
  else return x.mul(x.add_scalar(3.0).clamp(0.0, 6.0)).div_scalar(6.0);
}

/// log(sigmoid(x)) in the stable form min(x, 0) - log1p(exp(-|x|)). Backend:
/// float_log_sigmoid(p).
template <class B, std::size_t D>
Tensor<B, D> log_sigmoid(Tensor<B, D> x) {
  EMBER_ACT_DISPATCH(float_log_sigmoid, x);
  else {
    // Two branches (x < 0: x - log1p(exp(x)); else -log1p(exp(-x))), each on its clamped
    // half so no unused exp overflows, give the same values as min(x, 0) -
    // log1p(exp(-|x|)) and the smooth derivative sigmoid(-x) at 0 (the single expression's
    // clamp/abs conventions gave 1 there).
    auto neg = x.lower_elem(0.0);
    auto xn = x.clamp_max(0.0);
    auto pos = x.clamp_min(0.0).neg().exp().log1p().neg().add_scalar(0.0);  // +0 as 0 - t
    return pos.mask_where(neg, xn.sub(xn.exp().log1p()));
  }
}

/// Softsign: x / (1 + |x|). Backend: float_softsign(p).
template <class B, std::size_t D>
Tensor<B, D> softsign(Tensor<B, D> x) {
  EMBER_ACT_DISPATCH(float_softsign, x);
  else return x.div(x.abs().add_scalar(1.0));
}

/// ELU: x if x > 0 else alpha (exp(x) - 1) (torch default alpha = 1). Backend:
/// float_elu(p, alpha).
template <class B, std::size_t D>
Tensor<B, D> elu(Tensor<B, D> x, double alpha = 1.0) {
  EMBER_ACT_DISPATCH(float_elu, x, alpha);
  else {
    auto neg = x.lower_equal_elem(0.0);
    // clamp_max: exp of the unused branch must not overflow (its backward would be 0 * inf).
    return x.mask_where(neg, x.clamp_max(0.0).exp().sub_scalar(1.0).mul_scalar(alpha));
  }
}

/// CELU: max(0, x) + min(0, alpha (exp(x / alpha) - 1)). Throws ValueError for alpha == 0.
/// Backend: float_celu(p, alpha).
template <class B, std::size_t D>
Tensor<B, D> celu(Tensor<B, D> x, double alpha = 1.0) {
  if (alpha == 0.0) ember::detail::fail<ValueError>("celu", "alpha must be non-zero");
  EMBER_ACT_DISPATCH(float_celu, x, alpha);
  else {
    auto neg = x.lower_equal_elem(0.0);
    return x.mask_where(neg,
                        x.clamp_max(0.0).div_scalar(alpha).exp().sub_scalar(1.0).mul_scalar(alpha));
  }
}

/// SELU: scale * elu(x, alpha) with alpha = 1.6732632423543772, scale = 1.0507009873554805
/// (Klambauer et al. 2017). Backend: float_selu(p).
template <class B, std::size_t D>
Tensor<B, D> selu(Tensor<B, D> x) {
  EMBER_ACT_DISPATCH(float_selu, x);
  else return elu(std::move(x), 1.6732632423543772848170429916717)
      .mul_scalar(1.0507009873554804934193349852946);
}

/// Tanhshrink: x - tanh(x). Backend: float_tanhshrink(p).
template <class B, std::size_t D>
Tensor<B, D> tanhshrink(Tensor<B, D> x) {
  EMBER_ACT_DISPATCH(float_tanhshrink, x);
  else return x.sub(x.tanh());
}

/// Hard shrink: x if |x| > lambda else 0 (torch default 0.5). Throws ValueError for
/// lambda < 0. Backend: float_hard_shrink(p, lambda).
template <class B, std::size_t D>
Tensor<B, D> hard_shrink(Tensor<B, D> x, double lambda = 0.5) {
  if (!(lambda >= 0.0))
    ember::detail::fail<ValueError>("hard_shrink", "lambda must be >= 0, got ", lambda);
  EMBER_ACT_DISPATCH(float_hard_shrink, x, lambda);
  else {
    auto small = x.abs().lower_equal_elem(lambda);
    return std::move(x).mask_fill(small, 0.0);
  }
}

/// Soft shrink: x - lambda if x > lambda, x + lambda if x < -lambda, else 0 (torch default
/// 0.5). Throws ValueError for lambda < 0. Backend: float_soft_shrink(p, lambda).
template <class B, std::size_t D>
Tensor<B, D> soft_shrink(Tensor<B, D> x, double lambda = 0.5) {
  if (!(lambda >= 0.0))
    ember::detail::fail<ValueError>("soft_shrink", "lambda must be >= 0, got ", lambda);
  EMBER_ACT_DISPATCH(float_soft_shrink, x, lambda);
  else return x.sub(x.clamp(-lambda, lambda));
}

/// Gated linear unit: splits `dim` into halves a, b and returns a * sigmoid(b)
/// (torch's F.glu, default dim -1). [.., 2n, ..] -> [.., n, ..]. Throws ShapeError when the
/// dim is out of range or its size is odd. Backend: float_glu(p, dim).
template <class B, std::size_t D>
Tensor<B, D> glu(const Tensor<B, D>& x, std::int64_t dim = -1) {
  const std::size_t d = normalize_dim("glu", dim, D);
  if (x.dim(static_cast<std::int64_t>(d)) % 2 != 0) {
    ember::detail::fail<ShapeError>("glu", "dim ", dim, " of input ", x.shape(), " has odd size ",
                                    x.dim(static_cast<std::int64_t>(d)),
                                    "; it must split into two halves");
  }
  if constexpr (requires(detail::FP<B> p) { B::float_glu(p, d); }) {
    return Tensor<B, D>(B::float_glu(x.primitive(), d));
  } else {
    const std::int64_t h = x.dim(static_cast<std::int64_t>(d)) / 2;
    return x.narrow(d, 0, h).mul(sigmoid(x.narrow(d, h, h)));
  }
}

// ---- softmax family -------------------------------------------------------------------

/// Softmax over `dim`: exp(x - max) / sum(exp(x - max)). A row of all -inf gives NaN
/// (as torch). Throws ShapeError for an out-of-range dim. Backend: float_softmax(p, dim).
template <class B, std::size_t D>
Tensor<B, D> softmax(const Tensor<B, D>& input, std::int64_t dim) {
  const std::size_t d = normalize_dim("softmax", dim, D);
  const Tensor<B, D> x = ember::detail::autocast_widen(input);  // f32 under Autocast
  if constexpr (requires(detail::FP<B> p) { B::float_softmax(p, d); }) {
    return Tensor<B, D>(B::float_softmax(x.primitive(), d));
  } else {
    if (x.numel() == 0) return x;
    auto e = x.sub(detail::softmax_shift(x.max_dim(d))).exp();
    return e.div(e.sum_dim(d));
  }
}

/// log(softmax(x)) as x - max - log(sum(exp(x - max))). Backend: float_log_softmax(p, dim).
template <class B, std::size_t D>
Tensor<B, D> log_softmax(const Tensor<B, D>& input, std::int64_t dim) {
  const std::size_t d = normalize_dim("log_softmax", dim, D);
  const Tensor<B, D> x = ember::detail::autocast_widen(input);  // f32 under Autocast
  if constexpr (requires(detail::FP<B> p) { B::float_log_softmax(p, d); }) {
    return Tensor<B, D>(B::float_log_softmax(x.primitive(), d));
  } else {
    if (x.numel() == 0) return x;
    auto shifted = x.sub(detail::softmax_shift(x.max_dim(d)));
    return shifted.sub(shifted.exp().sum_dim(d).log());
  }
}

/// softmax(-x) over `dim`. Backend: float_softmin(p, dim).
template <class B, std::size_t D>
Tensor<B, D> softmin(const Tensor<B, D>& input, std::int64_t dim) {
  const std::size_t d = normalize_dim("softmin", dim, D);
  const Tensor<B, D> x = ember::detail::autocast_widen(input);  // f32 under Autocast
  if constexpr (requires(detail::FP<B> p) { B::float_softmin(p, d); }) {
    return Tensor<B, D>(B::float_softmin(x.primitive(), d));
  } else {
    if (x.numel() == 0) return x;
    return softmax(x.neg(), static_cast<std::int64_t>(d));
  }
}

/// Burn's quiet softmax ("softmax_1", Miller 2023): exp(x_i) / (1 + sum_j exp(x_j)),
/// computed as exp(x - max) / (sum(exp(x - max)) + exp(-max)); a row may sum to < 1.
/// Backend: float_quiet_softmax(p, dim).
template <class B, std::size_t D>
Tensor<B, D> quiet_softmax(const Tensor<B, D>& input, std::int64_t dim) {
  const std::size_t d = normalize_dim("quiet_softmax", dim, D);
  const Tensor<B, D> x = ember::detail::autocast_widen(input);  // f32 under Autocast
  if constexpr (requires(detail::FP<B> p) { B::float_quiet_softmax(p, d); }) {
    return Tensor<B, D>(B::float_quiet_softmax(x.primitive(), d));
  } else {
    if (x.numel() == 0) return x;
    auto m = detail::softmax_shift(x.max_dim(d));
    auto e = x.sub(m).exp();
    return e.div(e.sum_dim(d).add(m.neg().exp()));
  }
}

#undef EMBER_ACT_DISPATCH

}  // namespace ember::activation
