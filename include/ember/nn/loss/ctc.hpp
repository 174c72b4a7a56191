// Connectionist Temporal Classification loss (Graves et al. 2006; torch.nn.functional.ctc_loss,
// Burn's CTCLoss).
//
//   auto lp = activation::log_softmax(logits, 2);                  // [T, N, C]
//   auto l = nn::loss::ctc_loss(lp, targets, input_lengths, target_lengths);
//   auto ctc = nn::CTCLossConfig{.blank = 0, .zero_infinity = true}.init<B>();
//
// Shapes: log_probs [T, N, C] (time, batch, classes incl. blank); targets Int [N, S] padded
// (row n holds target_lengths[n] labels, the rest is ignored) or Int [sum(target_lengths)]
// concatenated; input_lengths and target_lengths Int [N].
//
// The forward is the alpha recursion of the paper in log space and the gradient comes from
// the beta recursion (d nll / d lp_t(s) = -exp(alpha_t(s) + beta_t(s) - lp_t(s) + nll)), both
// in f64 on the host over the gathered log-probabilities of the extended label sequence
// (blank, l1, blank, l2, ..., blank), as PyTorch's CPU kernel; the log-probabilities are read
// back for it. The gradient reaches log_probs through a zero-valued linear term, so any
// autodiff backend carries it. The gradient wrt log_probs is PyTorch's: PyTorch's CTC kernels
// return exp(log_probs) - posterior (the gradient wrt logits when log_probs =
// log_softmax(logits)), not the plain derivative -posterior; Ember adds the zero-valued term
// sum(exp(lp)) - detach(sum(exp(lp))) over the valid time steps to give the same values. The
// two agree on gradients through log_softmax, the documented use.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "ember/dispatch/dispatch.hpp"
#include "ember/nn/loss/reduction.hpp"
#include "ember/tensor/tensor.hpp"

namespace ember::nn::loss {

/// Options of ctc_loss (PyTorch's keyword arguments and defaults).
struct CtcOptions {
  /// The blank label, in [0, C).
  std::int64_t blank = 0;
  /// Mean: each sample's loss divided by its target length (at least 1), then the batch
  /// mean (PyTorch's rule); Sum; None: [N].
  Reduction reduction = Reduction::Mean;
  /// Infinite losses (an input too short for its target) and their gradients become 0.
  bool zero_infinity = false;
};

namespace detail {

/// The extended label sequences and transitions, built on the host from the checked
/// targets: ext[n, s] is blank for even s and the ((s - 1) / 2)-th label for odd s;
/// skip[n, s] allows the jump s - 2 -> s (a label different from the one two back).
struct CtcPlan {
  std::int64_t batch = 0, width = 1, steps = 0;
  std::vector<std::int64_t> ext, in_len, tgt_len;
  std::vector<std::uint8_t> skip;
};

inline CtcPlan ctc_plan(const Shape& lp, const std::vector<std::int64_t>& targets,
                        const Shape& target_shape, bool padded,
                        const std::vector<std::int64_t>& in_len,
                        const std::vector<std::int64_t>& tgt_len, std::int64_t blank) {
  const char* op = "ctc_loss";
  const std::int64_t t_max = lp[0], n = lp[1], c = lp[2];
  if (!(blank >= 0 && blank < c)) {
    ember::detail::fail<ValueError>(op, "blank ", blank, " is out of range for ", c,
                                    " classes (log_probs of shape ", lp, ")");
  }
  CtcPlan plan;
  plan.batch = n;
  plan.in_len = in_len;
  plan.tgt_len = tgt_len;
  std::int64_t s_max = 0, total = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const auto k = static_cast<std::size_t>(i);
    if (in_len[k] < 0 || in_len[k] > t_max) {
      ember::detail::fail<ValueError>(op, "input length ", in_len[k], " of sample ", i,
                                      " is out of range [0, ", t_max, "] (log_probs of shape ", lp,
                                      ")");
    }
    if (tgt_len[k] < 0) {
      ember::detail::fail<ValueError>(op, "target length ", tgt_len[k], " of sample ", i,
                                      " is negative");
    }
    if (padded && tgt_len[k] > target_shape[1]) {
      ember::detail::fail<ValueError>(op, "target length ", tgt_len[k], " of sample ", i,
                                      " exceeds the padded targets' length ", target_shape[1],
                                      " (targets of shape ", target_shape, ")");
    }
    s_max = std::max(s_max, tgt_len[k]);
    plan.steps = std::max(plan.steps, in_len[k]);
    total += tgt_len[k];
  }
  if (!padded && total != target_shape[0]) {
    ember::detail::fail<ShapeError>(op, "concatenated targets of shape ", target_shape,
                                    " do not hold the sum of the target lengths, ", total);
  }
  const std::int64_t w = 2 * s_max + 1;
  plan.width = w;
  plan.ext.assign(static_cast<std::size_t>(n * w), blank);
  plan.skip.assign(static_cast<std::size_t>(n * w), 0);
  std::int64_t offset = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t len = tgt_len[static_cast<std::size_t>(i)];
    const std::int64_t base = padded ? i * target_shape[1] : offset;
    for (std::int64_t j = 0; j < len; ++j) {
      const std::int64_t v = targets[static_cast<std::size_t>(base + j)];
      if (v < 0 || v >= c || v == blank) {
        ember::detail::fail<ValueError>(op, "target label ", v, " (sample ", i, ", position ", j,
                                        ") must be in [0, ", c, ") and differ from the blank ",
                                        blank);
      }
      plan.ext[static_cast<std::size_t>(i * w + 2 * j + 1)] = v;
    }
    for (std::int64_t s = 2; s < w; ++s) {
      const auto at = static_cast<std::size_t>(i * w + s);
      plan.skip[at] = plan.ext[at] != blank && plan.ext[at] != plan.ext[at - 2];
    }
    offset += len;
  }
  return plan;
}

template <class B, std::size_t D>
Tensor<B, D> stop_gradient(const Tensor<B, D>& t) {
  if constexpr (AutodiffBackend<B>)
    return t.detach();
  else
    return t;
}

inline double log_add_exp(double a, double b) {
  if (a == -std::numeric_limits<double>::infinity()) return b;
  if (b == -std::numeric_limits<double>::infinity()) return a;
  const double m = std::max(a, b);
  return m + std::log(std::exp(a - m) + std::exp(b - m));
}

/// Per-sample negative log-likelihoods and their gradients wrt the extended log-probabilities.
struct CtcResult {
  std::vector<double> nll;   ///< [N]; +inf when no alignment exists
  std::vector<double> grad;  ///< [steps, N, W]: d nll_n / d lp_ext[t, n, s]
};

/// The alpha (forward) and beta (backward) recursions of Graves et al. 2006 in log space, in
/// f64 on the host, over lp_ext[t, n, s] = log_probs[t, n, ext[n, s]] ([steps, N, W],
/// row-major). alpha_t(s) = lp_t(s) + logsumexp(alpha_{t-1}(s), alpha_{t-1}(s - 1),
/// alpha_{t-1}(s - 2) if skip(s)), nll = -logsumexp(alpha_{T-1}(2L), alpha_{T-1}(2L - 1));
/// beta runs the same recursion backwards, and d nll / d lp_t(s) =
/// -exp(alpha_t(s) + beta_t(s) - lp_t(s) + nll) (both include lp_t(s)), 0 where no path
/// passes and for an infinite nll. An input of length 0 gives nll 0 for an empty target and
/// +inf otherwise (as PyTorch).
inline CtcResult ctc_alpha_beta(const std::vector<double>& lp, const CtcPlan& plan) {
  constexpr double kNegInf = -std::numeric_limits<double>::infinity();
  const std::int64_t n = plan.batch, w = plan.width, steps = plan.steps;
  CtcResult r;
  r.nll.assign(static_cast<std::size_t>(n), 0.0);
  r.grad.assign(static_cast<std::size_t>(steps * n * w), 0.0);
  auto at = [&](std::int64_t t, std::int64_t b, std::int64_t s) {
    return static_cast<std::size_t>((t * n + b) * w + s);
  };
  std::vector<double> alpha, beta;
  for (std::int64_t b = 0; b < n; ++b) {
    const std::int64_t len = plan.in_len[static_cast<std::size_t>(b)];
    const std::int64_t wn = 2 * plan.tgt_len[static_cast<std::size_t>(b)] + 1;
    auto skip = [&](std::int64_t s) { return plan.skip[static_cast<std::size_t>(b * w + s)] != 0; };
    if (len == 0) {
      r.nll[static_cast<std::size_t>(b)] = wn == 1 ? 0.0 : std::numeric_limits<double>::infinity();
      continue;
    }
    alpha.assign(static_cast<std::size_t>(len * wn), kNegInf);
    beta.assign(static_cast<std::size_t>(len * wn), kNegInf);
    auto A = [&](std::int64_t t, std::int64_t s) -> double& {
      return alpha[static_cast<std::size_t>(t * wn + s)];
    };
    auto Bt = [&](std::int64_t t, std::int64_t s) -> double& {
      return beta[static_cast<std::size_t>(t * wn + s)];
    };
    A(0, 0) = lp[at(0, b, 0)];
    if (wn > 1) A(0, 1) = lp[at(0, b, 1)];
    for (std::int64_t t = 1; t < len; ++t) {
      for (std::int64_t s = 0; s < wn; ++s) {
        double v = A(t - 1, s);
        if (s >= 1) v = log_add_exp(v, A(t - 1, s - 1));
        if (s >= 2 && skip(s)) v = log_add_exp(v, A(t - 1, s - 2));
        A(t, s) = v == kNegInf ? kNegInf : v + lp[at(t, b, s)];
      }
    }
    const double ll = log_add_exp(A(len - 1, wn - 1), wn > 1 ? A(len - 1, wn - 2) : kNegInf);
    r.nll[static_cast<std::size_t>(b)] = -ll;
    if (ll == kNegInf) continue;
    Bt(len - 1, wn - 1) = lp[at(len - 1, b, wn - 1)];
    if (wn > 1) Bt(len - 1, wn - 2) = lp[at(len - 1, b, wn - 2)];
    for (std::int64_t t = len - 2; t >= 0; --t) {
      for (std::int64_t s = 0; s < wn; ++s) {
        double v = Bt(t + 1, s);
        if (s + 1 < wn) v = log_add_exp(v, Bt(t + 1, s + 1));
        if (s + 2 < wn && skip(s + 2)) v = log_add_exp(v, Bt(t + 1, s + 2));
        Bt(t, s) = v == kNegInf ? kNegInf : v + lp[at(t, b, s)];
      }
    }
    for (std::int64_t t = 0; t < len; ++t) {
      for (std::int64_t s = 0; s < wn; ++s) {
        const double ab = A(t, s) + Bt(t, s);
        if (ab == kNegInf || std::isnan(ab)) continue;
        r.grad[at(t, b, s)] = -std::exp(ab - lp[at(t, b, s)] - ll);
      }
    }
  }
  return r;
}

/// Per-sample losses with PyTorch's gradient. The value is the host-computed nll; the
/// gradient enters through the zero-valued linear term sum(G * (lp_ext - detach(lp_ext)))
/// with G = d nll / d lp_ext (gather's backward scatters it onto log_probs), plus PyTorch's
/// convention term (see the file comment). Second derivatives are not available (PyTorch's
/// CTC has no double backward either).
template <class B>
Tensor<B, 1> ctc_forward(const Tensor<B, 3>& log_probs, const CtcPlan& plan,
                         const CtcOptions& opts) {
  const auto device = log_probs.device();
  const DType dt = log_probs.dtype();
  const std::int64_t n = plan.batch, w = plan.width, steps = plan.steps;
  if (steps == 0) {
    // Every input is empty: constant losses, still connected to log_probs (zero gradient).
    const auto r = ctc_alpha_beta({}, plan);
    auto zero =
        log_probs.mask_fill(Tensor<B, 3, Bool>::full(log_probs.shape(), 1.0, device), 0.0).sum();
    auto nll = Tensor<B, 1>::from_data(TensorData(r.nll, Shape{n}), device, dt).add(zero);
    if (opts.zero_infinity) nll = nll.mask_fill(nll.is_inf(), 0.0);
    return nll;
  }
  auto ext = Tensor<B, 2, Int>::from_data(TensorData(plan.ext, Shape{n, w}), device);
  auto idx = ext.template reshape<3>(Shape{1, n, w}).repeat_dim(0, steps);
  auto used = log_probs.narrow(0, 0, steps);
  auto lp_ext = used.gather(2, idx);  // [steps, N, W]
  const auto r = ctc_alpha_beta(lp_ext.template to_vec<double>(), plan);

  auto nll = Tensor<B, 1>::from_data(TensorData(r.nll, Shape{n}), device, dt);
  auto g = Tensor<B, 3>::from_data(TensorData(r.grad, Shape{steps, n, w}), device, dt);
  auto fixed = stop_gradient(lp_ext);
  auto delta = lp_ext.sub(fixed).mask_fill(fixed.is_inf(), 0.0);  // zero; -inf - -inf would be NaN
  auto linear = delta.mul(g).sum_dim(2).sum_dim(0).template reshape<1>(Shape{n});

  // PyTorch's convention: + sum over the valid steps of exp(lp) - itself.
  auto t_idx = Tensor<B, 1, Int>::arange(0, steps, device).template reshape<2>(Shape{steps, 1});
  auto in_len = Tensor<B, 1, Int>::from_data(TensorData(plan.in_len, Shape{n}), device);
  auto invalid = t_idx.greater_equal(in_len.template reshape<2>(Shape{1, n}));  // [steps, N]
  auto mass = used.exp()
                  .sum_dim(2)
                  .template reshape<2>(Shape{steps, n})
                  .mask_fill(invalid, 0.0)
                  .sum_dim(0)
                  .template reshape<1>(Shape{n});
  auto out = std::move(nll).add(linear).add(mass.sub(stop_gradient(mass)));
  if (opts.zero_infinity) {
    std::vector<std::uint8_t> inf(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < inf.size(); ++i) inf[i] = std::isinf(r.nll[i]) ? 1 : 0;
    out = std::move(out).mask_fill(
        Tensor<B, 1, Bool>::from_data(TensorData::from_bytes(std::move(inf), Shape{n}, DType::Bool),
                                      device),
        0.0);
  }
  return out;
}

template <class B>
Tensor<B, 1> ctc_reduce(Tensor<B, 1> nll, const std::vector<std::int64_t>& tgt_len, Reduction r) {
  if (r == Reduction::Mean) {
    std::vector<double> div(tgt_len.size());
    for (std::size_t i = 0; i < div.size(); ++i)
      div[i] = static_cast<double>(std::max<std::int64_t>(tgt_len[i], 1));
    const auto n = static_cast<std::int64_t>(div.size());
    auto d = Tensor<B, 1>::from_data(TensorData(div, Shape{n}), nll.device(), nll.dtype());
    return std::move(nll).div(d).mean();
  }
  return reduce("ctc_loss", std::move(nll), r);
}

template <class B, std::size_t DT>
CtcPlan ctc_checked_plan(const Tensor<B, 3>& log_probs, const Tensor<B, DT, Int>& targets,
                         const Tensor<B, 1, Int>& input_lengths,
                         const Tensor<B, 1, Int>& target_lengths, const CtcOptions& opts) {
  const char* op = "ctc_loss";
  check_reduction(op, opts.reduction);
  const Shape lp = log_probs.shape();
  const std::int64_t n = lp[1];
  if (input_lengths.shape() != Shape{n} || target_lengths.shape() != Shape{n}) {
    ember::detail::fail<ShapeError>(op, "input_lengths of shape ", input_lengths.shape(),
                                    " and target_lengths of shape ", target_lengths.shape(),
                                    " must both be [", n, "] (the batch of log_probs ", lp, ")");
  }
  if (DT == 2 && targets.dim(0) != n) {
    ember::detail::fail<ShapeError>(op, "padded targets of shape ", targets.shape(), " must have ",
                                    n, " rows (the batch of log_probs ", lp, ")");
  }
  return ctc_plan(lp, host_ints(targets), targets.shape(), DT == 2, host_ints(input_lengths),
                  host_ints(target_lengths), opts.blank);
}

}  // namespace detail

/// Per-sample CTC losses [N]: -log p(target | input) summed over every alignment, 0 for a
/// sample with zero_infinity and an infinite loss. targets Int [N, S] (padded) or
/// [sum(target_lengths)] (concatenated). Throws ShapeError for mismatched shapes,
/// ValueError for a blank outside [0, C), an input length outside [0, T], a negative target
/// length or one above S, a label outside [0, C) or equal to the blank.
template <class B, std::size_t DT>
Tensor<B, 1> ctc_loss_no_reduction(const Tensor<B, 3>& lp, const Tensor<B, DT, Int>& targets,
                                   const Tensor<B, 1, Int>& input_lengths,
                                   const Tensor<B, 1, Int>& target_lengths,
                                   const CtcOptions& opts = {}) {
  static_assert(DT == 1 || DT == 2, "ctc_loss: targets are [N, S] (padded) or [sum(lengths)]");
  const Tensor<B, 3> log_probs = ember::detail::autocast_widen(lp);  // f32 under Autocast
  const auto plan = detail::ctc_checked_plan(log_probs, targets, input_lengths, target_lengths,
                                             {opts.blank, Reduction::None, opts.zero_infinity});
  return detail::ctc_forward(log_probs, plan, opts);
}

/// CTC loss (torch.nn.functional.ctc_loss) -> [1] (Mean: each loss divided by its target
/// length clamped to >= 1, then averaged over the batch; Sum) or [N] (None). Throws as
/// ctc_loss_no_reduction, ValueError for Reduction::BatchMean.
template <class B, std::size_t DT>
Tensor<B, 1> ctc_loss(const Tensor<B, 3>& lp, const Tensor<B, DT, Int>& targets,
                      const Tensor<B, 1, Int>& input_lengths,
                      const Tensor<B, 1, Int>& target_lengths, const CtcOptions& opts = {}) {
  static_assert(DT == 1 || DT == 2, "ctc_loss: targets are [N, S] (padded) or [sum(lengths)]");
  const Tensor<B, 3> log_probs = ember::detail::autocast_widen(lp);  // f32 under Autocast
  const auto plan =
      detail::ctc_checked_plan(log_probs, targets, input_lengths, target_lengths, opts);
  return detail::ctc_reduce(detail::ctc_forward(log_probs, plan, opts), plan.tgt_len,
                            opts.reduction);
}

/// CTC loss module (Burn's CTCLoss, PyTorch's nn.CTCLoss). forward(log_probs [T, N, C],
/// targets, input_lengths [N], target_lengths [N]) -> [1] (or [N] with Reduction::None).
template <Backend B = Dispatch>
struct CTCLoss {
  std::int64_t blank = 0;
  bool zero_infinity = false;
  Reduction reduction = Reduction::Mean;

  EMBER_MODULE(blank, zero_infinity, reduction)
  EMBER_NN_LOSS_OTHER_BACKEND_(CTCLoss)

  template <std::size_t DT>
  Tensor<B, 1> forward(const Tensor<B, 3>& log_probs, const Tensor<B, DT, Int>& targets,
                       const Tensor<B, 1, Int>& input_lengths,
                       const Tensor<B, 1, Int>& target_lengths) const {
    return ctc_loss(log_probs, targets, input_lengths, target_lengths, options());
  }
  template <std::size_t DT>
  Tensor<B, 1> forward_no_reduction(const Tensor<B, 3>& log_probs,
                                    const Tensor<B, DT, Int>& targets,
                                    const Tensor<B, 1, Int>& input_lengths,
                                    const Tensor<B, 1, Int>& target_lengths) const {
    return ctc_loss_no_reduction(log_probs, targets, input_lengths, target_lengths, options());
  }

 private:
  CtcOptions options() const {
    return {.blank = blank, .reduction = reduction, .zero_infinity = zero_infinity};
  }
};

/// Configuration of CTCLoss (Burn's blank 0 and zero_infinity false; PyTorch's reduction).
struct CTCLossConfig {
  std::int64_t blank = 0;
  bool zero_infinity = false;
  Reduction reduction = Reduction::Mean;

  /// Throws ValueError for a negative blank (the upper bound is checked in forward).
  template <Backend B = Dispatch>
  CTCLoss<B> init(const typename B::Device& = {}) const {
    if (blank < 0)
      ember::detail::fail<ValueError>("CTCLossConfig", "blank must be >= 0, got ", blank);
    return CTCLoss<B>{.blank = blank, .zero_infinity = zero_infinity, .reduction = reduction};
  }
};
EMBER_CONFIG(CTCLossConfig, blank, zero_infinity, reduction)

}  // namespace ember::nn::loss

namespace ember::nn {
using loss::CTCLoss;
using loss::CTCLossConfig;
}  // namespace ember::nn
