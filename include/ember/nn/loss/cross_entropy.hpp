// Classification losses over classes: cross-entropy and negative log-likelihood
// (torch.nn.functional.cross_entropy / nll_loss; Burn's CrossEntropyLoss).
//
//   auto l = nn::loss::cross_entropy(logits, targets);                       // mean
//   auto l = nn::loss::cross_entropy(logits, targets, {.weight = w, .ignore_index = 0,
//                                                      .label_smoothing = 0.1});
//   auto ce = nn::CrossEntropyLossConfig{.smoothing = 0.1}.init<B>(device);
//   auto l = ce.forward(logits, targets);
//
// Shapes: logits [N, C] or [N, C, d1, ...] (rank D >= 2, classes along dim 1); class
// targets Int [N] or [N, d1, ...] (rank D - 1) with values in [0, C); probability targets
// Float of the logits' shape. The per-sample losses have the targets' shape.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "ember/dispatch/dispatch.hpp"
#include "ember/nn/loss/reduction.hpp"
#include "ember/tensor/activation.hpp"
#include "ember/tensor/tensor.hpp"

namespace ember::nn::loss {

/// Options of cross_entropy (torch.nn.functional.cross_entropy's keyword arguments).
template <class B>
struct CrossEntropyOptions {
  /// Per-class rescaling weight [C] (PyTorch's `weight`); none = all ones.
  std::optional<Tensor<B, 1>> weight = std::nullopt;
  /// Class targets equal to this contribute no loss and no weight (PyTorch's default -100).
  /// Not used with probability targets.
  std::int64_t ignore_index = -100;
  Reduction reduction = Reduction::Mean;
  /// Label smoothing alpha in [0, 1]: the target becomes (1 - alpha) one_hot + alpha / C
  /// (Szegedy et al. 2016; PyTorch's `label_smoothing`).
  double label_smoothing = 0.0;
};

/// Options of nll_loss (torch.nn.functional.nll_loss's keyword arguments).
template <class B>
struct NllOptions {
  /// Per-class rescaling weight [C]; none = all ones.
  std::optional<Tensor<B, 1>> weight = std::nullopt;
  /// Targets equal to this contribute no loss and no weight (PyTorch's default -100).
  std::int64_t ignore_index = -100;
  Reduction reduction = Reduction::Mean;
};

namespace detail {

/// Per-sample losses and the denominator of the mean (PyTorch: the sum of the weights of
/// the targets that are not ignored; their count without weights).
template <class B, std::size_t D>
struct ClassLosses {
  Tensor<B, D - 1> losses;
  Tensor<B, 1> weight_sum;
};

/// Checks class targets against log-probabilities / logits of shape `ls`: the targets'
/// shape is `ls` without dim 1 (ShapeError) and each value is in [0, C) or ignored
/// (ValueError naming the first bad one).
template <class B, std::size_t DT>
void check_class_targets(const char* op, const Shape& ls, const Tensor<B, DT, Int>& targets,
                         const std::vector<std::int64_t>& ignored) {
  Shape expect = ls;
  expect.dims.erase(expect.dims.begin() + 1);
  if (targets.shape() != expect) {
    ember::detail::fail<ShapeError>(op, "class targets of shape ", targets.shape(),
                                    " do not match input of shape ", ls, " (expected ", expect,
                                    ": the input's shape without the class dim 1)");
  }
  const std::int64_t c = ls[1];
  ember::detail::check_values(
      op, targets,
      [&](const auto& t) {
        auto bad = ember::detail::outside(t, 0, c);
        for (std::int64_t ig : ignored) bad = bad.bool_and(t.not_equal_elem(ig));
        return bad;
      },
      [&](std::int64_t v, std::size_t i) {
        ember::detail::fail<ValueError>(
            op, "target ", v, " at ", position(static_cast<std::int64_t>(i), targets.shape()),
            " is out of range for ", c, " classes (input of shape ", ls, ")");
      });
}

/// Negative log-likelihood of class targets given log-probabilities `logp` [N, C, ...],
/// optionally with PyTorch's label smoothing (cross_entropy_loss_label_smoothing in
/// ATen's LossNLL.cpp): loss_i = (1 - a) w[t_i] (-logp[i, t_i]) + a / C sum_c w[c]
/// (-logp[i, c]); ignored targets give 0 and are left out of the weight sum.
template <class B, std::size_t D>
ClassLosses<B, D> class_nll(const char* op, const Tensor<B, D>& logp,
                            const Tensor<B, D - 1, Int>& targets_in,
                            const std::optional<Tensor<B, 1>>& weight,
                            const std::vector<std::int64_t>& ignored, double smoothing) {
  static_assert(D >= 2, "class losses need an input of rank >= 2 ([N, C, ...])");
  const Shape ls = logp.shape();
  const std::int64_t c = ls[1];
  check_class_targets(op, ls, targets_in, ignored);
  if (weight) check_vector(op, "weight", *weight, c, "one weight per class");
  if (!(smoothing >= 0.0 && smoothing <= 1.0)) {
    ember::detail::fail<ValueError>(op, "label smoothing must be in [0, 1], got ", smoothing);
  }
  const Tensor<B, D - 1, Int> targets = targets_in.cast(DType::I64);
  std::optional<Tensor<B, D - 1, Bool>> ignore;
  for (std::int64_t ig : ignored) {
    auto m = targets.equal_elem(ig);
    ignore = ignore ? ignore->bool_or(m) : m;
  }
  const Tensor<B, D - 1, Int> safe = ignore ? targets.mask_fill(*ignore, 0.0) : targets;
  const Tensor<B, 1> w = weight ? weight->cast(logp.dtype())
                                : Tensor<B, 1>::ones(Shape{c}, logp.device(), logp.dtype());

  auto picked = logp.gather(1, safe.template unsqueeze_dim<D>(1)).template squeeze_dim<D - 1>(1);
  auto w_t = w.select(0, safe.template reshape<1>(Shape{safe.numel()}))
                 .template reshape<D - 1>(safe.shape());
  Tensor<B, D - 1> losses = picked.mul(w_t).neg();
  if (smoothing > 0.0) {
    auto smooth = logp.mul(along_dim<D>(w, 1)).sum_dim(1).template squeeze_dim<D - 1>(1).neg();
    losses = std::move(losses)
                 .mul_scalar(1.0 - smoothing)
                 .add(std::move(smooth).mul_scalar(smoothing / static_cast<double>(c)));
  }
  if (ignore) {
    losses = std::move(losses).mask_fill(*ignore, 0.0);
    w_t = std::move(w_t).mask_fill(*ignore, 0.0);
  }
  return {std::move(losses), w_t.sum()};
}

template <class B, std::size_t D>
Tensor<B, 1> reduce_class(const char* op, ClassLosses<B, D> l, Reduction r) {
  if (r == Reduction::Mean) return l.losses.sum().div(l.weight_sum);
  return reduce(op, std::move(l.losses), r);
}

/// Cross-entropy with probability targets (ATen's cross_entropy_loss_prob_target):
/// loss_i = -sum_c w[c] t'[i, c] logp[i, c] with t' = (1 - a) t + a / C. Mean divides by
/// the number of samples N * d1 * ... (not by the weights).
template <class B, std::size_t D>
Tensor<B, D - 1> prob_ce(const char* op, const Tensor<B, D>& logp, const Tensor<B, D>& probs,
                         const std::optional<Tensor<B, 1>>& weight, double smoothing) {
  static_assert(D >= 2, "class losses need an input of rank >= 2 ([N, C, ...])");
  check_same_shape(op, "input", logp, "probability targets", probs);
  const std::int64_t c = logp.dim(1);
  if (weight) check_vector(op, "weight", *weight, c, "one weight per class");
  if (!(smoothing >= 0.0 && smoothing <= 1.0)) {
    ember::detail::fail<ValueError>(op, "label smoothing must be in [0, 1], got ", smoothing);
  }
  Tensor<B, D> t = probs.cast(logp.dtype());
  if (smoothing > 0.0) {
    t = std::move(t).mul_scalar(1.0 - smoothing).add_scalar(smoothing / static_cast<double>(c));
  }
  Tensor<B, D> prod = logp.mul(t);
  if (weight) prod = std::move(prod).mul(along_dim<D>(weight->cast(logp.dtype()), 1));
  return std::move(prod).sum_dim(1).template squeeze_dim<D - 1>(1).neg();
}

}  // namespace detail

/// Cross-entropy of logits and class targets (torch.nn.functional.cross_entropy):
/// log_softmax over dim 1, then the weighted negative log-likelihood of each target, with
/// optional label smoothing. logits [N, C, ...], targets Int [N, ...] -> [1] (Mean: the
/// sum divided by the sum of the targets' weights, ignored targets left out, PyTorch's
/// rule; Sum) or the flattened per-sample losses (None). Throws ShapeError for mismatched
/// shapes or a weight that is not [C], ValueError for a target outside [0, C) that is not
/// ignore_index, label smoothing outside [0, 1] or Reduction::BatchMean.
template <class B, std::size_t D>
Tensor<B, 1> cross_entropy(const Tensor<B, D>& logits, const Tensor<B, D - 1, Int>& targets,
                           const CrossEntropyOptions<B>& opts = {}) {
  detail::check_reduction("cross_entropy", opts.reduction);
  auto l = detail::class_nll("cross_entropy", activation::log_softmax(logits, 1), targets,
                             opts.weight, {opts.ignore_index}, opts.label_smoothing);
  return detail::reduce_class("cross_entropy", std::move(l), opts.reduction);
}

/// Per-sample cross-entropy losses [N, ...] (the targets' shape) of cross_entropy; ignored
/// targets give 0. opts.reduction is not used.
template <class B, std::size_t D>
Tensor<B, D - 1> cross_entropy_no_reduction(const Tensor<B, D>& logits,
                                            const Tensor<B, D - 1, Int>& targets,
                                            const CrossEntropyOptions<B>& opts = {}) {
  return detail::class_nll("cross_entropy", activation::log_softmax(logits, 1), targets,
                           opts.weight, {opts.ignore_index}, opts.label_smoothing)
      .losses;
}

/// Cross-entropy of logits and class probabilities (torch.nn.functional.cross_entropy with
/// a Float target): loss_i = -sum_c weight[c] t[i, c] log_softmax(logits)[i, c], with
/// t = (1 - a) probs + a / C under label smoothing a. logits and probs [N, C, ...] -> [1]
/// (Mean: divided by the number of samples N * d1 * ..., as PyTorch; Sum) or the flattened
/// per-sample losses (None). ignore_index is not used. Throws ShapeError for different
/// shapes or a weight that is not [C], ValueError for smoothing outside [0, 1] or
/// Reduction::BatchMean.
template <class B, std::size_t D>
Tensor<B, 1> cross_entropy(const Tensor<B, D>& logits, const Tensor<B, D>& probs,
                           const CrossEntropyOptions<B>& opts = {}) {
  detail::check_reduction("cross_entropy", opts.reduction);
  auto l = detail::prob_ce("cross_entropy", activation::log_softmax(logits, 1), probs, opts.weight,
                           opts.label_smoothing);
  return detail::reduce("cross_entropy", std::move(l), opts.reduction);
}

/// Per-sample losses [N, ...] of cross_entropy with probability targets.
template <class B, std::size_t D>
Tensor<B, D - 1> cross_entropy_no_reduction(const Tensor<B, D>& logits, const Tensor<B, D>& probs,
                                            const CrossEntropyOptions<B>& opts = {}) {
  return detail::prob_ce("cross_entropy", activation::log_softmax(logits, 1), probs, opts.weight,
                         opts.label_smoothing);
}

/// Negative log-likelihood (torch.nn.functional.nll_loss): loss_i = -weight[t_i]
/// log_probs[i, t_i]. log_probs [N, C, ...] (e.g. from log_softmax), targets Int [N, ...]
/// -> [1] (Mean: divided by the sum of the targets' weights, ignored targets left out;
/// Sum) or the flattened per-sample losses (None). Throws as cross_entropy.
template <class B, std::size_t D>
Tensor<B, 1> nll_loss(const Tensor<B, D>& log_probs, const Tensor<B, D - 1, Int>& targets,
                      const NllOptions<B>& opts = {}) {
  detail::check_reduction("nll_loss", opts.reduction);
  auto l = detail::class_nll("nll_loss", ember::detail::autocast_widen(log_probs), targets,
                             opts.weight, {opts.ignore_index}, 0.0);
  return detail::reduce_class("nll_loss", std::move(l), opts.reduction);
}

/// Per-sample losses [N, ...] of nll_loss (ignored targets give 0).
template <class B, std::size_t D>
Tensor<B, D - 1> nll_loss_no_reduction(const Tensor<B, D>& log_probs,
                                       const Tensor<B, D - 1, Int>& targets,
                                       const NllOptions<B>& opts = {}) {
  return detail::class_nll("nll_loss", log_probs, targets, opts.weight, {opts.ignore_index}, 0.0)
      .losses;
}

// ---- modules -------------------------------------------------------------------------------

/// Cross-entropy loss module (Burn's CrossEntropyLoss, PyTorch's nn.CrossEntropyLoss).
/// Made by CrossEntropyLossConfig::init. forward(logits [N, C, ...], targets) -> [1] (or
/// the flattened per-sample losses with Reduction::None).
template <Backend B = Dispatch>
struct CrossEntropyLoss {
  /// Per-class weights [C] (PyTorch's buffer "weight").
  std::optional<Buffer<Tensor<B, 1>>> weight{};
  /// Class targets that contribute nothing (Burn's pad tokens, PyTorch's ignore_index).
  std::vector<std::int64_t> pad_tokens{};
  /// Label smoothing alpha in [0, 1].
  double smoothing = 0.0;
  /// True: the inputs are logits (log_softmax over dim 1); false: probabilities (their log,
  /// after clamping to >= sqrt(smallest normal float) as Burn).
  bool logits = true;
  Reduction reduction = Reduction::Mean;

  EMBER_MODULE(weight, pad_tokens, smoothing, logits, reduction)
  EMBER_NN_LOSS_OTHER_BACKEND_(CrossEntropyLoss)

  /// Class targets Int [N, ...]. Throws as loss::cross_entropy.
  template <std::size_t D>
  Tensor<B, 1> forward(const Tensor<B, D>& input, const Tensor<B, D - 1, Int>& targets) const {
    detail::check_reduction("CrossEntropyLoss", reduction);
    return detail::reduce_class("CrossEntropyLoss", losses(input, targets), reduction);
  }
  /// Probability targets of the input's shape (pad_tokens not used).
  template <std::size_t D>
  Tensor<B, 1> forward(const Tensor<B, D>& input, const Tensor<B, D>& probs) const {
    detail::check_reduction("CrossEntropyLoss", reduction);
    return detail::reduce("CrossEntropyLoss", forward_no_reduction(input, probs), reduction);
  }
  /// Per-sample losses [N, ...].
  template <std::size_t D>
  Tensor<B, D - 1> forward_no_reduction(const Tensor<B, D>& input,
                                        const Tensor<B, D - 1, Int>& targets) const {
    return losses(input, targets).losses;
  }
  template <std::size_t D>
  Tensor<B, D - 1> forward_no_reduction(const Tensor<B, D>& input,
                                        const Tensor<B, D>& probs) const {
    return detail::prob_ce("CrossEntropyLoss", log_probs(input), probs,
                           detail::buffer_value(weight), smoothing);
  }

 private:
  template <std::size_t D>
  Tensor<B, D> log_probs(const Tensor<B, D>& input) const {
    if (logits) return activation::log_softmax(input, 1);
    // Burn's rule: probabilities clamped to >= sqrt(smallest normal) so the log is finite.
    const double eps = input.dtype() == DType::F64
                           ? std::sqrt(std::numeric_limits<double>::min())
                           : std::sqrt(static_cast<double>(std::numeric_limits<float>::min()));
    return input.clamp_min(eps).log();
  }
  template <std::size_t D>
  detail::ClassLosses<B, D> losses(const Tensor<B, D>& input,
                                   const Tensor<B, D - 1, Int>& targets) const {
    return detail::class_nll("CrossEntropyLoss", log_probs(input), targets,
                             detail::buffer_value(weight), pad_tokens, smoothing);
  }
};

/// Configuration of CrossEntropyLoss (Burn's CrossEntropyLossConfig field names and
/// defaults, plus PyTorch's reduction).
struct CrossEntropyLossConfig {
  /// Class targets to ignore (Burn's pad tokens; PyTorch's ignore_index).
  std::optional<std::vector<std::int64_t>> pad_tokens = std::nullopt;
  /// Per-class weights (length C).
  std::optional<std::vector<double>> weights = std::nullopt;
  /// Label smoothing alpha in [0, 1].
  std::optional<double> smoothing = std::nullopt;
  /// True: inputs are logits; false: probabilities.
  bool logits = true;
  Reduction reduction = Reduction::Mean;

  /// Throws ValueError for smoothing outside [0, 1], weights that are empty, negative or not
  /// finite.
  template <Backend B = Dispatch>
  CrossEntropyLoss<B> init(const typename B::Device& device = {}) const {
    if (smoothing && !(*smoothing >= 0.0 && *smoothing <= 1.0)) {
      ember::detail::fail<ValueError>("CrossEntropyLossConfig", "smoothing must be in [0, 1], got ",
                                      *smoothing);
    }
    detail::check_weight_list("CrossEntropyLossConfig", "weights", weights);
    CrossEntropyLoss<B> m;
    m.weight = detail::weight_buffer<B>(weights, device);
    m.pad_tokens = pad_tokens.value_or(std::vector<std::int64_t>{});
    m.smoothing = smoothing.value_or(0.0);
    m.logits = logits;
    m.reduction = reduction;
    return m;
  }
};
EMBER_CONFIG(CrossEntropyLossConfig, pad_tokens, weights, smoothing, logits, reduction)

/// Negative log-likelihood loss module (PyTorch's nn.NLLLoss). forward(log_probs
/// [N, C, ...], targets Int [N, ...]) -> [1] (or per-sample losses with Reduction::None).
template <Backend B = Dispatch>
struct NllLoss {
  /// Per-class weights [C] (PyTorch's buffer "weight").
  std::optional<Buffer<Tensor<B, 1>>> weight{};
  std::int64_t ignore_index = -100;
  Reduction reduction = Reduction::Mean;

  EMBER_MODULE(weight, ignore_index, reduction)
  EMBER_NN_LOSS_OTHER_BACKEND_(NllLoss)

  template <std::size_t D>
  Tensor<B, 1> forward(const Tensor<B, D>& log_probs, const Tensor<B, D - 1, Int>& targets) const {
    return nll_loss(log_probs, targets, options());
  }
  template <std::size_t D>
  Tensor<B, D - 1> forward_no_reduction(const Tensor<B, D>& log_probs,
                                        const Tensor<B, D - 1, Int>& targets) const {
    return nll_loss_no_reduction(log_probs, targets, options());
  }

 private:
  NllOptions<B> options() const {
    return {.weight = detail::buffer_value(weight),
            .ignore_index = ignore_index,
            .reduction = reduction};
  }
};

/// Configuration of NllLoss (PyTorch's nn.NLLLoss arguments).
struct NllLossConfig {
  std::optional<std::vector<double>> weights = std::nullopt;
  std::int64_t ignore_index = -100;
  Reduction reduction = Reduction::Mean;

  /// Throws ValueError for weights that are empty, negative or not finite.
  template <Backend B = Dispatch>
  NllLoss<B> init(const typename B::Device& device = {}) const {
    detail::check_weight_list("NllLossConfig", "weights", weights);
    NllLoss<B> m;
    m.weight = detail::weight_buffer<B>(weights, device);
    m.ignore_index = ignore_index;
    m.reduction = reduction;
    return m;
  }
};
EMBER_CONFIG(NllLossConfig, weights, ignore_index, reduction)

}  // namespace ember::nn::loss

namespace ember::nn {
using loss::CrossEntropyLoss;
using loss::CrossEntropyLossConfig;
using loss::NllLoss;
using loss::NllLossConfig;
using loss::Reduction;
}  // namespace ember::nn
