// Binary cross-entropy on probabilities and on logits (torch.nn.functional.binary_cross_entropy
// / binary_cross_entropy_with_logits; Burn's BinaryCrossEntropyLoss).
//
//   auto l = nn::loss::binary_cross_entropy(sigmoid(x), y);
//   auto l = nn::loss::binary_cross_entropy_with_logits(x, y, {.pos_weight = pw});
//   auto bce = nn::BinaryCrossEntropyLossConfig{.logits = true}.init<B>(device);
//
// Shapes: input and target of one shape (any rank); the per-element losses have that shape.
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

/// Options of binary_cross_entropy (PyTorch's keyword arguments).
template <class B, std::size_t D>
struct BinaryCrossEntropyOptions {
  /// Rescaling weight, broadcast to the input (each dim equal or 1); none = ones.
  std::optional<Tensor<B, D>> weight = std::nullopt;
  Reduction reduction = Reduction::Mean;
};

/// Options of binary_cross_entropy_with_logits (PyTorch's keyword arguments).
template <class B, std::size_t D>
struct BceWithLogitsOptions {
  /// Rescaling weight, broadcast to the input (each dim equal or 1); none = ones.
  std::optional<Tensor<B, D>> weight = std::nullopt;
  /// Weight of the positive term per class [C] along the last dim (or [1]); none = ones.
  std::optional<Tensor<B, 1>> pos_weight = std::nullopt;
  Reduction reduction = Reduction::Mean;
};

namespace detail {

/// Throws ValueError naming the first value of `t` outside [0, 1] (NaN included).
template <class B, std::size_t D>
void check_unit_interval(const char* op, const char* what, const Tensor<B, D>& t) {
  ember::detail::check_values(
      op, t,
      // bad: not (0 <= x <= 1), NaN included
      [](const auto& x) {
        return x.greater_equal_elem(0.0).bool_and(x.lower_equal_elem(1.0)).bool_not();
      },
      [&](double v, std::size_t i) {
        ember::detail::fail<ValueError>(op, "every ", what, " value must be in [0, 1], got ", v,
                                        " at ", position(static_cast<std::int64_t>(i), t.shape()));
      });
}

/// max(log(x), -100) with the log taken only where x > 0 (x == 0 gives -100 and a zero
/// gradient, PyTorch clamps the backward's denominator to 1e-12 instead).
template <class B, std::size_t D>
Tensor<B, D> clamped_log(const Tensor<B, D>& x) {
  auto zero = x.equal_elem(0.0);
  return x.mask_fill(zero, 1.0).log().mask_fill(zero, -100.0).clamp_min(-100.0);
}

template <class B, std::size_t D>
Tensor<B, D> bce_elements(const char* op, const Tensor<B, D>& in, const Tensor<B, D>& target,
                          const std::optional<Tensor<B, D>>& weight) {
  const Tensor<B, D> input = ember::detail::autocast_widen(in);  // f32 under Autocast
  check_same_shape(op, "input", input, "target", target);
  if (weight) check_broadcastable(op, "weight", *weight, input.shape());
  check_unit_interval(op, "input", input);
  check_unit_interval(op, "target", target);
  const Tensor<B, D> t = target.cast(input.dtype());
  // PyTorch's CPU kernel: (t - 1) max(log1p(-x), -100) - t max(log(x), -100).
  auto log_x = clamped_log(input);
  auto one = input.equal_elem(1.0);
  auto log_1mx = input.mask_fill(one, 0.0).neg().log1p().mask_fill(one, -100.0).clamp_min(-100.0);
  auto l = t.sub_scalar(1.0).mul(log_1mx).sub(t.mul(log_x));
  if (weight) l = std::move(l).mul(weight->cast(input.dtype()));
  return l;
}

template <class B, std::size_t D>
Tensor<B, D> bce_logits_elements(const char* op, const Tensor<B, D>& in, const Tensor<B, D>& target,
                                 const std::optional<Tensor<B, D>>& weight,
                                 const std::optional<Tensor<B, 1>>& pos_weight) {
  const Tensor<B, D> input = ember::detail::autocast_widen(in);  // f32 under Autocast
  check_same_shape(op, "input", input, "target", target);
  if (weight) check_broadcastable(op, "weight", *weight, input.shape());
  const std::int64_t classes = input.dim(-1);
  if (pos_weight && pos_weight->numel() != classes && pos_weight->numel() != 1) {
    ember::detail::fail<ShapeError>(op, "pos_weight of shape ", pos_weight->shape(), " must be [",
                                    classes, "] (one weight per class along the last dim of ",
                                    input.shape(), ") or [1]");
  }
  const Tensor<B, D> t = target.cast(input.dtype());
  // ATen's binary_cross_entropy_with_logits: (1 - t) x - lw log_sigmoid(x), with
  // lw = 1 + (pos_weight - 1) t.
  Tensor<B, D> ls = activation::log_sigmoid(input);
  if (pos_weight) {
    auto pw = along_dim<D>(pos_weight->cast(input.dtype()), D - 1);
    ls = std::move(ls).mul(pw.sub_scalar(1.0).mul(t).add_scalar(1.0));
  }
  auto l = t.rsub_scalar(1.0).mul(input).sub(ls);
  if (weight) l = std::move(l).mul(weight->cast(input.dtype()));
  return l;
}

}  // namespace detail

/// Binary cross-entropy of probabilities (torch.nn.functional.binary_cross_entropy):
/// l = -w (t log x + (1 - t) log(1 - x)), each log clamped to >= -100 as PyTorch.
/// input and target of one shape, values in [0, 1] -> [1] (Mean, Sum) or the flattened
/// per-element losses (None). Throws ShapeError for different shapes or a weight that does
/// not broadcast, ValueError for a value outside [0, 1] (input or target; read back to
/// check, as PyTorch's CPU kernel) or Reduction::BatchMean.
template <class B, std::size_t D>
Tensor<B, 1> binary_cross_entropy(const Tensor<B, D>& input, const Tensor<B, D>& target,
                                  const BinaryCrossEntropyOptions<B, D>& opts = {}) {
  detail::check_reduction("binary_cross_entropy", opts.reduction);
  return detail::reduce("binary_cross_entropy",
                        detail::bce_elements("binary_cross_entropy", input, target, opts.weight),
                        opts.reduction);
}

/// Per-element losses (the input's shape) of binary_cross_entropy.
template <class B, std::size_t D>
Tensor<B, D> binary_cross_entropy_no_reduction(const Tensor<B, D>& input,
                                               const Tensor<B, D>& target,
                                               const BinaryCrossEntropyOptions<B, D>& opts = {}) {
  return detail::bce_elements("binary_cross_entropy", input, target, opts.weight);
}

/// Binary cross-entropy of logits (torch.nn.functional.binary_cross_entropy_with_logits),
/// computed stably as l = w ((1 - t) x - (1 + (pos_weight - 1) t) log_sigmoid(x)).
/// input (logits) and target of one shape -> [1] (Mean, Sum) or the flattened per-element
/// losses (None). pos_weight [C] applies along the last dim. Throws ShapeError for
/// different shapes, a weight that does not broadcast or a pos_weight that is not [C] or
/// [1], ValueError for Reduction::BatchMean.
template <class B, std::size_t D>
Tensor<B, 1> binary_cross_entropy_with_logits(const Tensor<B, D>& input, const Tensor<B, D>& target,
                                              const BceWithLogitsOptions<B, D>& opts = {}) {
  detail::check_reduction("binary_cross_entropy_with_logits", opts.reduction);
  return detail::reduce("binary_cross_entropy_with_logits",
                        detail::bce_logits_elements("binary_cross_entropy_with_logits", input,
                                                    target, opts.weight, opts.pos_weight),
                        opts.reduction);
}

/// Per-element losses (the input's shape) of binary_cross_entropy_with_logits.
template <class B, std::size_t D>
Tensor<B, D> binary_cross_entropy_with_logits_no_reduction(
    const Tensor<B, D>& input, const Tensor<B, D>& target,
    const BceWithLogitsOptions<B, D>& opts = {}) {
  return detail::bce_logits_elements("binary_cross_entropy_with_logits", input, target, opts.weight,
                                     opts.pos_weight);
}

// ---- module --------------------------------------------------------------------------------

/// Binary cross-entropy module (Burn's BinaryCrossEntropyLoss; PyTorch's nn.BCELoss, or
/// nn.BCEWithLogitsLoss when `logits`). Made by BinaryCrossEntropyLossConfig::init.
/// forward(input, targets) with Float targets (PyTorch) or Int 0/1 targets (Burn) of the
/// input's shape -> [1] (or the flattened per-element losses with Reduction::None).
template <Backend B = Dispatch>
struct BinaryCrossEntropyLoss {
  /// Per-class weights [C] along the last dim (PyTorch's buffer "weight"). For a rank-1
  /// input Burn's binary case applies: [2] weights indexed by the target (0 or 1).
  std::optional<Buffer<Tensor<B, 1>>> weight{};
  /// Per-class positive weights [C] along the last dim (PyTorch's buffer "pos_weight";
  /// logits only).
  std::optional<Buffer<Tensor<B, 1>>> pos_weight{};
  /// Label smoothing alpha in [0, 1] (Burn's): t -> t (1 - alpha) + alpha / C, with C the
  /// size of the last dim (2 for a rank-1 input).
  double smoothing = 0.0;
  /// True: the inputs are logits; false: probabilities.
  bool logits = false;
  Reduction reduction = Reduction::Mean;

  EMBER_MODULE(weight, pos_weight, smoothing, logits, reduction)
  EMBER_NN_LOSS_OTHER_BACKEND_(BinaryCrossEntropyLoss)

  template <std::size_t D>
  Tensor<B, 1> forward(const Tensor<B, D>& input, const Tensor<B, D>& targets) const {
    return forward(input, targets, reduction);
  }
  template <std::size_t D>
  Tensor<B, 1> forward(const Tensor<B, D>& input, const Tensor<B, D>& targets, Reduction r) const {
    detail::check_reduction("BinaryCrossEntropyLoss", r);
    return detail::reduce("BinaryCrossEntropyLoss", forward_no_reduction(input, targets), r);
  }
  /// Int targets (Burn): each must be 0 or 1 (ValueError otherwise).
  template <std::size_t D>
  Tensor<B, 1> forward(const Tensor<B, D>& input, const Tensor<B, D, Int>& targets) const {
    return forward(input, int_targets(input, targets), reduction);
  }
  template <std::size_t D>
  Tensor<B, 1> forward(const Tensor<B, D>& input, const Tensor<B, D, Int>& targets,
                       Reduction r) const {
    return forward(input, int_targets(input, targets), r);
  }

  /// Per-element losses (the input's shape).
  template <std::size_t D>
  Tensor<B, D> forward_no_reduction(const Tensor<B, D>& input, const Tensor<B, D>& targets) const {
    const char* op = "BinaryCrossEntropyLoss";
    detail::check_same_shape(op, "input", input, "targets", targets);
    const std::int64_t classes = D > 1 ? input.dim(-1) : 2;
    Tensor<B, D> t = targets.cast(input.dtype());
    if (smoothing > 0.0) {
      t = std::move(t)
              .mul_scalar(1.0 - smoothing)
              .add_scalar(smoothing / static_cast<double>(classes));
    }
    std::optional<Tensor<B, D>> w;
    if (weight && weight->has_value()) {
      const Tensor<B, 1> wv = weight->val().cast(input.dtype());
      if constexpr (D > 1) {
        detail::check_vector(op, "weight", wv, classes, "one weight per class along the last dim");
        w = detail::along_dim<D>(wv, D - 1);
      } else {
        detail::check_vector(op, "weight", wv, 2, "the weights of targets 0 and 1");
        detail::check_unit_interval(op, "target", targets);
        // Burn's binary case: weight[0] + (weight[1] - weight[0]) t (t is the hard target).
        auto w0 = wv.narrow(0, 0, 1), w1 = wv.narrow(0, 1, 1);
        w = targets.cast(input.dtype()).mul(w1.sub(w0)).add(w0);
      }
    }
    if (logits) {
      std::optional<Tensor<B, 1>> pw;
      if (pos_weight && pos_weight->has_value()) pw = pos_weight->val();
      return detail::bce_logits_elements(op, input, t, w, pw);
    }
    return detail::bce_elements(op, input, t, w);
  }
  template <std::size_t D>
  Tensor<B, D> forward_no_reduction(const Tensor<B, D>& input,
                                    const Tensor<B, D, Int>& targets) const {
    return forward_no_reduction(input, int_targets(input, targets));
  }

 private:
  template <std::size_t D>
  static Tensor<B, D> int_targets(const Tensor<B, D>& input, const Tensor<B, D, Int>& targets) {
    ember::detail::check_values(
        "BinaryCrossEntropyLoss", targets,
        [](const auto& t) { return ember::detail::outside(t, 0, 2); },
        [&](std::int64_t v, std::size_t i) {
          ember::detail::fail<ValueError>(
              "BinaryCrossEntropyLoss", "Int targets must be 0 or 1, got ", v, " at ",
              detail::position(static_cast<std::int64_t>(i), targets.shape()));
        });
    return targets.float_(input.dtype());
  }
};

/// Configuration of BinaryCrossEntropyLoss (Burn's field names and defaults, plus
/// PyTorch's pos_weight and reduction).
struct BinaryCrossEntropyLossConfig {
  /// Per-class weights (length C, the last dim; length 2 for rank-1 binary inputs).
  std::optional<std::vector<double>> weights = std::nullopt;
  /// Label smoothing alpha in [0, 1].
  std::optional<double> smoothing = std::nullopt;
  /// True: inputs are logits (PyTorch's BCEWithLogitsLoss); false: probabilities.
  bool logits = false;
  /// Positive-class weights (length C), logits only.
  std::optional<std::vector<double>> pos_weight = std::nullopt;
  Reduction reduction = Reduction::Mean;

  /// Throws ValueError for smoothing outside [0, 1], weights that are empty, negative or not
  /// finite, or pos_weight without logits.
  template <Backend B = Dispatch>
  BinaryCrossEntropyLoss<B> init(const typename B::Device& device = {}) const {
    const char* op = "BinaryCrossEntropyLossConfig";
    if (smoothing && !(*smoothing >= 0.0 && *smoothing <= 1.0))
      ember::detail::fail<ValueError>(op, "smoothing must be in [0, 1], got ", *smoothing);
    detail::check_weight_list(op, "weights", weights);
    detail::check_weight_list(op, "pos_weight", pos_weight);
    if (pos_weight && !logits)
      ember::detail::fail<ValueError>(op, "pos_weight needs logits = true (BCEWithLogitsLoss)");
    BinaryCrossEntropyLoss<B> m;
    m.weight = detail::weight_buffer<B>(weights, device);
    m.pos_weight = detail::weight_buffer<B>(pos_weight, device);
    m.smoothing = smoothing.value_or(0.0);
    m.logits = logits;
    m.reduction = reduction;
    return m;
  }
};
EMBER_CONFIG(BinaryCrossEntropyLossConfig, weights, smoothing, logits, pos_weight, reduction)

}  // namespace ember::nn::loss

namespace ember::nn {
using loss::BinaryCrossEntropyLoss;
using loss::BinaryCrossEntropyLossConfig;
}  // namespace ember::nn
