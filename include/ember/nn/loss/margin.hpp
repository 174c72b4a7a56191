// Margin losses on pairs and triplets: cosine embedding, margin ranking, triplet margin
// (torch.nn.functional.cosine_embedding_loss / margin_ranking_loss / triplet_margin_loss;
// Burn's CosineEmbeddingLoss, MarginRankingLoss, TripletMarginLoss).
//
//   auto l = nn::loss::cosine_embedding_loss(x1, x2, y, {.margin = 0.2});
//   auto l = nn::loss::triplet_margin_loss(a, p, n, {.p = 1, .swap = true});
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

#include "ember/dispatch/dispatch.hpp"
#include "ember/nn/loss/reduction.hpp"
#include "ember/tensor/tensor.hpp"

namespace ember::nn::loss {

/// Options of cosine_embedding_loss.
struct CosineEmbeddingOptions {
  /// Margin for dissimilar pairs, in [-1, 1] (PyTorch's default 0).
  double margin = 0.0;
  Reduction reduction = Reduction::Mean;
};

/// Options of margin_ranking_loss.
struct MarginRankingOptions {
  double margin = 0.0;
  Reduction reduction = Reduction::Mean;
};

/// Options of triplet_margin_loss (PyTorch's keyword arguments and defaults).
struct TripletMarginOptions {
  double margin = 1.0;
  /// Degree of the pairwise distance's norm (> 0; infinity for the max norm).
  double p = 2.0;
  /// Added to the differences before the norm (PyTorch's pairwise_distance).
  double eps = 1e-6;
  /// Use min(d(a, n), d(p, n)) as the negative distance (Balntas et al. 2016).
  bool swap = false;
  Reduction reduction = Reduction::Mean;
};

namespace detail {

template <class B>
Tensor<B, 1> rows_sum(const Tensor<B, 2>& x) {
  return x.sum_dim(1).template squeeze_dim<1>(1);
}

/// ||x1 - x2 + eps||_p along the last dim (torch.pairwise_distance): [N, D] -> [N]. A zero
/// norm has gradient 0 (as torch's norm backward).
template <class B>
Tensor<B, 1> pairwise_distance(const Tensor<B, 2>& x1, const Tensor<B, 2>& x2, double p,
                               double eps) {
  auto d = x1.sub(x2).add_scalar(eps).abs();
  if (std::isinf(p)) return d.max_dim(1).template squeeze_dim<1>(1);
  if (p == 1.0) return rows_sum(d);
  auto s = rows_sum(p == 2.0 ? d.mul(d) : d.powf_scalar(p));
  auto zero = s.equal_elem(0.0);
  auto root =
      p == 2.0 ? s.mask_fill(zero, 1.0).sqrt() : s.mask_fill(zero, 1.0).powf_scalar(1.0 / p);
  return std::move(root).mask_fill(zero, 0.0);
}

}  // namespace detail

/// Per-pair cosine embedding losses [N] (torch.nn.functional.cosine_embedding_loss, no
/// reduction): with cos = x1.x2 / sqrt((|x1|^2 + 1e-12)(|x2|^2 + 1e-12)) per row,
/// 1 - cos where y = 1 and max(0, cos - margin) where y = -1. x1, x2 [N, D], Int y [N].
/// Throws ShapeError for mismatched shapes, ValueError for a y that is not 1 or -1.
template <class B>
Tensor<B, 1> cosine_embedding_loss_no_reduction(const Tensor<B, 2>& x1, const Tensor<B, 2>& x2,
                                                const Tensor<B, 1, Int>& y,
                                                const CosineEmbeddingOptions& opts = {}) {
  const char* op = "cosine_embedding_loss";
  detail::check_same_shape(op, "input1", x1, "input2", x2);
  if (y.shape() != Shape{x1.dim(0)}) {
    ember::detail::fail<ShapeError>(op, "target of shape ", y.shape(), " must be [", x1.dim(0),
                                    "] (one label per row of the inputs ", x1.shape(), ")");
  }
  ember::detail::check_values(
      op, y, [](const auto& t) { return t.not_equal_elem(1).bool_and(t.not_equal_elem(-1)); },
      [&](std::int64_t v, std::size_t i) {
        ember::detail::fail<ValueError>(op, "target ", v, " at [", i, "] must be 1 or -1");
      });
  const Tensor<B, 2> b = x2.cast(x1.dtype());
  constexpr double kEps = 1e-12;  // ATen's EPSILON in cosine_embedding_loss
  auto prod = detail::rows_sum(x1.mul(b));
  auto m1 = detail::rows_sum(x1.mul(x1)).add_scalar(kEps);
  auto m2 = detail::rows_sum(b.mul(b)).add_scalar(kEps);
  auto cos = prod.div(m1.mul(m2).sqrt());
  auto pos = cos.rsub_scalar(1.0);
  auto neg = cos.sub_scalar(opts.margin).clamp_min(0.0);
  return std::move(neg).mask_where(y.equal_elem(1), pos);
}

/// Cosine embedding loss: the per-pair losses reduced -> [1] (Mean, Sum) or [N] (None).
/// Throws as cosine_embedding_loss_no_reduction, ValueError for Reduction::BatchMean.
template <class B>
Tensor<B, 1> cosine_embedding_loss(const Tensor<B, 2>& x1, const Tensor<B, 2>& x2,
                                   const Tensor<B, 1, Int>& y,
                                   const CosineEmbeddingOptions& opts = {}) {
  detail::check_reduction("cosine_embedding_loss", opts.reduction);
  return detail::reduce("cosine_embedding_loss",
                        cosine_embedding_loss_no_reduction(x1, x2, y, opts), opts.reduction);
}

/// Per-element margin ranking losses max(0, -y (x1 - x2) + margin)
/// (torch.nn.functional.margin_ranking_loss, no reduction). x1, x2, y of one shape (y
/// normally holds 1 or -1 and may be differentiated). Throws ShapeError for mismatched
/// shapes.
template <class B, std::size_t D>
Tensor<B, D> margin_ranking_loss_no_reduction(const Tensor<B, D>& x1, const Tensor<B, D>& x2,
                                              const Tensor<B, D>& y,
                                              const MarginRankingOptions& opts = {}) {
  const char* op = "margin_ranking_loss";
  detail::check_same_shape(op, "input1", x1, "input2", x2);
  detail::check_same_shape(op, "input1", x1, "target", y);
  return y.cast(x1.dtype()).neg().mul(x1.sub(x2)).add_scalar(opts.margin).clamp_min(0.0);
}

/// Margin ranking loss reduced -> [1] (Mean, Sum) or the flattened losses (None). Throws as
/// margin_ranking_loss_no_reduction, ValueError for Reduction::BatchMean.
template <class B, std::size_t D>
Tensor<B, 1> margin_ranking_loss(const Tensor<B, D>& x1, const Tensor<B, D>& x2,
                                 const Tensor<B, D>& y, const MarginRankingOptions& opts = {}) {
  detail::check_reduction("margin_ranking_loss", opts.reduction);
  return detail::reduce("margin_ranking_loss", margin_ranking_loss_no_reduction(x1, x2, y, opts),
                        opts.reduction);
}

/// Per-triplet losses [N] (torch.nn.functional.triplet_margin_loss, no reduction):
/// max(0, margin + d(a, p) - d(a, n)) with d(x, y) = ||x - y + eps||_p along dim 1, and
/// d(a, n) replaced by min(d(a, n), d(p, n)) with `swap`. anchor, positive, negative
/// [N, D]. Throws ShapeError for mismatched shapes, ValueError for p <= 0 or NaN.
template <class B>
Tensor<B, 1> triplet_margin_loss_no_reduction(const Tensor<B, 2>& anchor,
                                              const Tensor<B, 2>& positive,
                                              const Tensor<B, 2>& negative,
                                              const TripletMarginOptions& opts = {}) {
  const char* op = "triplet_margin_loss";
  detail::check_same_shape(op, "anchor", anchor, "positive", positive);
  detail::check_same_shape(op, "anchor", anchor, "negative", negative);
  if (!(opts.p > 0.0)) ember::detail::fail<ValueError>(op, "p must be > 0, got ", opts.p);
  const Tensor<B, 2> pos = positive.cast(anchor.dtype()), neg = negative.cast(anchor.dtype());
  auto d_pos = detail::pairwise_distance(anchor, pos, opts.p, opts.eps);
  auto d_neg = detail::pairwise_distance(anchor, neg, opts.p, opts.eps);
  if (opts.swap) d_neg = d_neg.min_pair(detail::pairwise_distance(pos, neg, opts.p, opts.eps));
  return d_pos.sub(d_neg).add_scalar(opts.margin).clamp_min(0.0);
}

/// Triplet margin loss reduced -> [1] (Mean, Sum) or [N] (None). Throws as
/// triplet_margin_loss_no_reduction, ValueError for Reduction::BatchMean.
template <class B>
Tensor<B, 1> triplet_margin_loss(const Tensor<B, 2>& anchor, const Tensor<B, 2>& positive,
                                 const Tensor<B, 2>& negative,
                                 const TripletMarginOptions& opts = {}) {
  detail::check_reduction("triplet_margin_loss", opts.reduction);
  return detail::reduce("triplet_margin_loss",
                        triplet_margin_loss_no_reduction(anchor, positive, negative, opts),
                        opts.reduction);
}

// ---- modules -------------------------------------------------------------------------------

/// Cosine embedding loss module (Burn's CosineEmbeddingLoss, PyTorch's
/// nn.CosineEmbeddingLoss). forward(x1 [N, D], x2 [N, D], Int y [N]) -> [1] (or [N] with
/// Reduction::None).
template <Backend B = Dispatch>
struct CosineEmbeddingLoss {
  double margin = 0.0;
  Reduction reduction = Reduction::Mean;

  EMBER_MODULE(margin, reduction)
  EMBER_NN_LOSS_OTHER_BACKEND_(CosineEmbeddingLoss)

  Tensor<B, 1> forward(const Tensor<B, 2>& x1, const Tensor<B, 2>& x2,
                       const Tensor<B, 1, Int>& y) const {
    return cosine_embedding_loss(x1, x2, y, {.margin = margin, .reduction = reduction});
  }
  Tensor<B, 1> forward_no_reduction(const Tensor<B, 2>& x1, const Tensor<B, 2>& x2,
                                    const Tensor<B, 1, Int>& y) const {
    return cosine_embedding_loss_no_reduction(x1, x2, y, {.margin = margin});
  }
};

/// Configuration of CosineEmbeddingLoss (margin in [-1, 1], default 0).
struct CosineEmbeddingLossConfig {
  double margin = 0.0;
  Reduction reduction = Reduction::Mean;

  /// Throws ValueError for a margin outside [-1, 1].
  template <Backend B = Dispatch>
  CosineEmbeddingLoss<B> init(const typename B::Device& = {}) const {
    if (!(margin >= -1.0 && margin <= 1.0)) {
      ember::detail::fail<ValueError>("CosineEmbeddingLossConfig",
                                      "margin must be in [-1, 1], got ", margin);
    }
    return CosineEmbeddingLoss<B>{.margin = margin, .reduction = reduction};
  }
};
EMBER_CONFIG(CosineEmbeddingLossConfig, margin, reduction)

/// Margin ranking loss module (Burn's MarginRankingLoss, PyTorch's nn.MarginRankingLoss).
template <Backend B = Dispatch>
struct MarginRankingLoss {
  double margin = 0.0;
  Reduction reduction = Reduction::Mean;

  EMBER_MODULE(margin, reduction)
  EMBER_NN_LOSS_OTHER_BACKEND_(MarginRankingLoss)

  template <std::size_t D>
  Tensor<B, 1> forward(const Tensor<B, D>& x1, const Tensor<B, D>& x2,
                       const Tensor<B, D>& y) const {
    return margin_ranking_loss(x1, x2, y, {.margin = margin, .reduction = reduction});
  }
  template <std::size_t D>
  Tensor<B, D> forward_no_reduction(const Tensor<B, D>& x1, const Tensor<B, D>& x2,
                                    const Tensor<B, D>& y) const {
    return margin_ranking_loss_no_reduction(x1, x2, y, {.margin = margin});
  }
};

/// Configuration of MarginRankingLoss (margin, default 0).
struct MarginRankingLossConfig {
  double margin = 0.0;
  Reduction reduction = Reduction::Mean;

  template <Backend B = Dispatch>
  MarginRankingLoss<B> init(const typename B::Device& = {}) const {
    return MarginRankingLoss<B>{.margin = margin, .reduction = reduction};
  }
};
EMBER_CONFIG(MarginRankingLossConfig, margin, reduction)

/// Triplet margin loss module (Burn's TripletMarginLoss, PyTorch's nn.TripletMarginLoss).
/// forward(anchor, positive, negative [N, D]) -> [1] (or [N] with Reduction::None).
template <Backend B = Dispatch>
struct TripletMarginLoss {
  double margin = 1.0;
  double p = 2.0;
  double eps = 1e-6;
  bool swap = false;
  Reduction reduction = Reduction::Mean;

  EMBER_MODULE(margin, p, eps, swap, reduction)
  EMBER_NN_LOSS_OTHER_BACKEND_(TripletMarginLoss)

  Tensor<B, 1> forward(const Tensor<B, 2>& anchor, const Tensor<B, 2>& positive,
                       const Tensor<B, 2>& negative) const {
    return triplet_margin_loss(anchor, positive, negative, options());
  }
  Tensor<B, 1> forward_no_reduction(const Tensor<B, 2>& anchor, const Tensor<B, 2>& positive,
                                    const Tensor<B, 2>& negative) const {
    return triplet_margin_loss_no_reduction(anchor, positive, negative, options());
  }

 private:
  TripletMarginOptions options() const {
    return {.margin = margin, .p = p, .eps = eps, .swap = swap, .reduction = reduction};
  }
};

/// Configuration of TripletMarginLoss (Burn's margin 1 and p 2; PyTorch's eps 1e-6, swap).
struct TripletMarginLossConfig {
  double margin = 1.0;
  double p = 2.0;
  double eps = 1e-6;
  bool swap = false;
  Reduction reduction = Reduction::Mean;

  /// Throws ValueError for p <= 0.
  template <Backend B = Dispatch>
  TripletMarginLoss<B> init(const typename B::Device& = {}) const {
    if (!(p > 0.0))
      ember::detail::fail<ValueError>("TripletMarginLossConfig", "p must be > 0, got ", p);
    return TripletMarginLoss<B>{
        .margin = margin, .p = p, .eps = eps, .swap = swap, .reduction = reduction};
  }
};
EMBER_CONFIG(TripletMarginLossConfig, margin, p, eps, swap, reduction)

}  // namespace ember::nn::loss

namespace ember::nn {
using loss::CosineEmbeddingLoss;
using loss::CosineEmbeddingLossConfig;
using loss::MarginRankingLoss;
using loss::MarginRankingLossConfig;
using loss::TripletMarginLoss;
using loss::TripletMarginLossConfig;
}  // namespace ember::nn
