// nn functional ops (Burn's `burn::tensor::module` / torch.nn.functional): linear,
// embedding, normalisations and scaled dot-product attention.
//
// Parameter layouts are PyTorch's (DESIGN.md: state dicts load with no adapter), e.g. the
// linear weight is [out, in] as torch.nn.functional.linear (Burn's `linear` takes [in, out]).
// Each op is a composite written with front-end ops; a backend opts into a fused kernel by
// defining the static function named in the comment (detected with a requires-expression).
// Parameter tensors are cast to the input's dtype. Optional parameters are std::optional;
// the optional's tensor type is not deduced, so a plain Tensor converts implicitly.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <type_traits>
#include <utility>

#include "ember/backend/attention_composite.hpp"
#include "ember/core/autocast.hpp"
#include "ember/ir/nn.hpp"
#include "ember/tensor/activation.hpp"
#include "ember/tensor/infer.hpp"
#include "ember/tensor/tensor.hpp"

namespace ember::module {

namespace detail {
template <class B>
using FP = typename B::FloatTensor;
template <class B>
using OptFP = std::optional<typename B::FloatTensor>;

template <class B, std::size_t K>
OptFP<B> opt_prim(const std::optional<Tensor<B, K>>& t, DType dtype) {
  if (!t) return std::nullopt;
  return t->cast(dtype).into_primitive();
}

/// [1, C, 1, ...] of rank D (for per-channel parameters).
template <class B, std::size_t D>
Tensor<B, D> channel_view(const Tensor<B, 1>& p) {
  std::array<std::int64_t, D> s{};
  s.fill(1);
  s[D >= 2 ? 1 : 0] = p.numel();
  return p.template reshape<D>(s);
}

}  // namespace detail

/// Applies y = x W^T + b (torch.nn.functional.linear). x [..., in], weight [out, in]
/// (PyTorch layout), bias [out] -> [..., out]. Throws ShapeError when x's last dim is not
/// `in` or bias is not [out]. Backend: float_linear(x, weight, optional bias).
template <class B, std::size_t D>
Tensor<B, D> linear(const Tensor<B, D>& input, const Tensor<B, 2>& weight,
                    const std::optional<std::type_identity_t<Tensor<B, 1>>>& bias = std::nullopt) {
  // Under Autocast the operands run in the autocast dtype, unless one is f64 (then f64, as
  // matmul's promotion gives).
  const Tensor<B, D> x = is_autocast_enabled() ? input.cast(ember::detail::autocast_lower_dtype(
                                                     promote_types(input.dtype(), weight.dtype())))
                                               : input;
  // The weight and bias are cast to x's dtype below, so the rule sees them in it.
  const DType dt = x.dtype();
  const Shape xs = x.shape(), ws = weight.shape();
  const std::optional<Shape> b_shape = bias ? std::optional<Shape>(bias->shape()) : std::nullopt;
  ir::Linear::check(xs, dt, ws, dt, b_shape ? &*b_shape : nullptr, dt);
  const std::int64_t in = ws[1], out = ws[0];
  const Tensor<B, 2> w = weight.cast(x.dtype());
  if constexpr (requires(detail::FP<B> p, detail::OptFP<B> o) { B::float_linear(p, p, o); }) {
    return Tensor<B, D>(
        B::float_linear(x.primitive(), w.primitive(), detail::opt_prim(bias, x.dtype())));
  } else {
    Shape os = xs;
    os[D - 1] = out;
    // Reshape's 0 means "keep the input dim": an empty input must not reach it.
    if (x.numel() == 0) {
      auto y = Tensor<B, D>::zeros(os, x.device(), x.dtype());
      if (!bias || os.numel() == 0) return y;
      std::array<std::int64_t, D> bs;
      bs.fill(1);
      bs[D - 1] = out;
      return y.add(bias->cast(x.dtype()).template reshape<D>(bs));
    }
    const std::int64_t rows = x.numel() / in;
    auto y = x.template reshape<2>(std::array<std::int64_t, 2>{rows, in}).matmul(w.transpose());
    if (bias)
      y = y.add(bias->cast(x.dtype()).template reshape<2>(std::array<std::int64_t, 2>{1, out}));
    return y.template reshape<D>(os);
  }
}

/// Looks up rows of `weights` (torch.nn.functional.embedding). weights [n, d], Int indices
/// [...] (rank D) -> [..., d] (rank D + 1). Throws ValueError naming the first index outside
/// [0, n) (ember/tensor/ops/value_check.hpp). Backend: float_embedding(weights, indices).
template <class B, std::size_t D>
Tensor<B, D + 1> embedding(const Tensor<B, 2>& weights, const Tensor<B, D, Int>& indices) {
  ember::detail::ir_infer(ir::Embedding{}, weights, indices);
  const std::int64_t n = weights.dim(0), d = weights.dim(1);
  ember::detail::check_values(
      "embedding", indices, [&](const auto& t) { return ember::detail::outside(t, 0, n); },
      [&](std::int64_t v, std::size_t i) {
        ember::detail::fail<ValueError>("embedding", "index ", v, " (at flat position ", i,
                                        " of indices ", indices.shape(), ") is out of range for ",
                                        n, " embeddings of weights ", weights.shape());
      });
  if constexpr (requires(detail::FP<B> p, typename B::IntTensor ip) {
                  B::float_embedding(p, ip);
                }) {
    return Tensor<B, D + 1>(B::float_embedding(weights.primitive(), indices.primitive()));
  } else {
    Shape os = indices.shape();
    os.dims.push_back(d);
    auto flat = indices.template reshape<1>(std::array<std::int64_t, 1>{indices.numel()});
    return weights.select(0, flat).template reshape<D + 1>(os);
  }
}

/// Inference batch norm (torch.nn.functional.batch_norm, training=False):
/// (x - running_mean[c]) / sqrt(running_var[c] + eps) * weight[c] + bias[c]. x [N, C, ...]
/// (rank >= 2), statistics and parameters [C]. Throws ShapeError for rank < 2 or a parameter
/// not of shape [C]. Backend: float_batch_norm(x, mean, var, weight, bias, eps).
template <class B, std::size_t D>
Tensor<B, D> batch_norm(
    const Tensor<B, D>& x, const Tensor<B, 1>& running_mean, const Tensor<B, 1>& running_var,
    const std::optional<std::type_identity_t<Tensor<B, 1>>>& weight = std::nullopt,
    const std::optional<std::type_identity_t<Tensor<B, 1>>>& bias = std::nullopt,
    double eps = 1e-5) {
  using ember::detail::ir_type_as;
  const DType dt = x.dtype();
  ember::detail::ir_infer(ir::BatchNorm{eps}, x, ir_type_as(running_mean, dt),
                          ir_type_as(running_var, dt), ir_type_as(weight, dt),
                          ir_type_as(bias, dt));
  if constexpr (D < 2) {
    return x;  // unreachable: the rule above needs rank >= 2
  } else {
    const Tensor<B, 1> m = running_mean.cast(dt), v = running_var.cast(dt);
    if constexpr (requires(detail::FP<B> p, detail::OptFP<B> o) {
                    B::float_batch_norm(p, p, p, o, o, eps);
                  }) {
      return Tensor<B, D>(B::float_batch_norm(x.primitive(), m.primitive(), v.primitive(),
                                              detail::opt_prim(weight, dt),
                                              detail::opt_prim(bias, dt), eps));
    } else {
      auto y = x.sub(detail::channel_view<B, D>(m))
                   .div(detail::channel_view<B, D>(v.add_scalar(eps).sqrt()));
      if (weight) y = y.mul(detail::channel_view<B, D>(weight->cast(dt)));
      if (bias) y = y.add(detail::channel_view<B, D>(bias->cast(dt)));
      return y;
    }
  }
}

/// Output of batch_norm_train: the normalised tensor and the batch statistics per channel
/// (cut from any autodiff graph: they are for the running averages, not differentiated).
template <class B, std::size_t D>
struct BatchNormTrainOutput {
  Tensor<B, D> output;  ///< x's shape
  Tensor<B, 1> mean;    ///< [C]
  Tensor<B, 1> var;     ///< [C], biased (divided by N * spatial)
};

/// Training-mode batch norm (torch.nn.functional.batch_norm with training=True, without the
/// running-statistics update; Ioffe & Szegedy 2015): per channel c, with the batch mean and
/// biased variance of x[:, c] over N and the spatial dims,
/// y = (x - mean[c]) / sqrt(var[c] + eps) * weight[c] + bias[c]. The gradient flows through
/// the statistics. x [N, C, ...] (rank >= 2), weight and bias [C] -> {y, mean [C], var [C]}.
/// Throws ShapeError for rank < 2 or a parameter not of shape [C], ValueError when a channel
/// has a single value (N * spatial == 1) or none. Backend: float_batch_norm_train(x, weight,
/// bias, eps) -> {y, [2, C] (mean; var)}.
template <class B, std::size_t D>
BatchNormTrainOutput<B, D> batch_norm_train(
    const Tensor<B, D>& x,
    const std::optional<std::type_identity_t<Tensor<B, 1>>>& weight = std::nullopt,
    const std::optional<std::type_identity_t<Tensor<B, 1>>>& bias = std::nullopt,
    double eps = 1e-5) {
  using ember::detail::ir_type_as;
  const DType dt = x.dtype();
  ember::detail::ir_infer(ir::BatchNormTrain{eps}, x, ir_type_as(weight, dt), ir_type_as(bias, dt));
  if constexpr (D < 2) {
    return {x, Tensor<B, 1>::zeros(Shape{0}), Tensor<B, 1>::zeros(Shape{0})};  // unreachable
  } else {
    const Shape xs = x.shape();
    const std::int64_t n = xs[0], c = xs[1];
    const std::int64_t rest = n * c == 0 ? 0 : x.numel() / (n * c);
    const std::array<std::int64_t, 1> flat{c};
    if constexpr (requires(detail::FP<B> p, detail::OptFP<B> o) {
                    B::float_batch_norm_train(p, o, o, eps);
                  }) {
      auto [y, stats] = B::float_batch_norm_train(x.primitive(), detail::opt_prim(weight, dt),
                                                  detail::opt_prim(bias, dt), eps);
      Tensor<B, 2> st(std::move(stats));
      return {Tensor<B, D>(std::move(y)), st.narrow(0, 0, 1).template reshape<1>(flat),
              st.narrow(0, 1, 1).template reshape<1>(flat)};
    } else {
      auto x3 = x.template reshape<3>(std::array<std::int64_t, 3>{n, c, rest});
      auto mean = x3.mean_dim(2).mean_dim(0);  // [1, C, 1]
      auto centered = x3.sub(mean);
      auto var = centered.mul(centered).mean_dim(2).mean_dim(0);  // biased, [1, C, 1]
      auto y = centered.div(var.add_scalar(eps).sqrt());
      const std::array<std::int64_t, 3> cv{1, c, 1};
      if (weight) y = y.mul(weight->cast(dt).template reshape<3>(cv));
      if (bias) y = y.add(bias->cast(dt).template reshape<3>(cv));
      const auto stat = [&](const Tensor<B, 3>& t) {
        if constexpr (AutodiffBackend<B>)
          return t.detach().template reshape<1>(flat);
        else
          return t.template reshape<1>(flat);
      };
      return {y.template reshape<D>(xs), stat(mean), stat(var)};
    }
  }
}

namespace detail {
template <class B, std::size_t D>
Tensor<B, D> layer_norm_impl(const Tensor<B, D>& x, std::size_t k, const OptFP<B>& w,
                             const OptFP<B>& b, const Shape& ns, double eps) {
  if constexpr (requires(FP<B> p, OptFP<B> o) { B::float_layer_norm(p, k, o, o, eps); }) {
    return Tensor<B, D>(B::float_layer_norm(x.primitive(), k, w, b, eps));
  } else {
    if (x.numel() == 0) return x;
    const std::int64_t n = ns.numel();
    const std::int64_t rows = n == 0 ? 0 : x.numel() / n;
    auto x2 = x.template reshape<2>(std::array<std::int64_t, 2>{rows, n});
    auto [var, mean] = x2.var_mean_bias(1);
    auto y = x2.sub(mean).div(var.add_scalar(eps).sqrt()).template reshape<D>(x.shape());
    auto param = [&](const FP<B>& p) {
      std::array<std::int64_t, D> s{};
      s.fill(1);
      for (std::size_t i = 0; i < k; ++i) s[D - k + i] = ns[i];
      return Tensor<B, 1>(B::float_reshape(p, Shape{n})).template reshape<D>(s);
    };
    if (w) y = y.mul(param(*w));
    if (b) y = y.add(param(*b));
    return y;
  }
}
}  // namespace detail

/// Layer norm over the last K dims (torch.nn.functional.layer_norm with normalized_shape =
/// weight's shape): (x - mean) / sqrt(var_biased + eps) * weight + bias. x [..., *ns],
/// weight and bias ns (rank K <= D). Throws ShapeError when x's trailing dims are not ns or
/// bias's shape differs from weight's. Backend: float_layer_norm(x, K, weight, bias, eps).
template <class B, std::size_t D, std::size_t K>
Tensor<B, D> layer_norm(
    const Tensor<B, D>& input, const Tensor<B, K>& weight,
    const std::optional<std::type_identity_t<Tensor<B, K>>>& bias = std::nullopt,
    double eps = 1e-5) {
  static_assert(K <= D, "layer_norm: weight rank must not exceed the input rank");
  const Tensor<B, D> x = ember::detail::autocast_widen(input);
  const DType dt = x.dtype();
  ember::detail::ir_infer(ir::LayerNorm{K, eps}, x, ember::detail::ir_type_as(weight, dt),
                          ember::detail::ir_type_as(bias, dt));
  const Shape ns = weight.shape();
  return detail::layer_norm_impl<B, D>(x, K, weight.cast(dt).into_primitive(),
                                       detail::opt_prim(bias, dt), ns, eps);
}

/// Layer norm over the last K dims without affine parameters: layer_norm<2>(x) normalises
/// each [..., a, b] block.
template <std::size_t K, class B, std::size_t D>
Tensor<B, D> layer_norm(const Tensor<B, D>& input, double eps = 1e-5) {
  static_assert(K >= 1 && K <= D, "layer_norm: K must be in [1, D]");
  const Tensor<B, D> x = ember::detail::autocast_widen(input);
  const Shape xs = x.shape();
  Shape ns(std::vector<std::int64_t>(xs.dims.end() - K, xs.dims.end()));
  return detail::layer_norm_impl<B, D>(x, K, std::nullopt, std::nullopt, ns, eps);
}

/// RMS norm over the last dim (torch.nn.functional.rms_norm with normalized_shape [d];
/// Zhang & Sennrich 2019): x / sqrt(mean(x^2) + eps) * weight. x [..., d], weight [d].
/// eps defaults to 1e-5 (Burn's RmsNormConfig). Throws ShapeError when weight is not [d].
/// Backend: float_rms_norm(x, weight, eps).
template <class B, std::size_t D>
Tensor<B, D> rms_norm(
    const Tensor<B, D>& input,
    const std::optional<std::type_identity_t<Tensor<B, 1>>>& weight = std::nullopt,
    double eps = 1e-5) {
  const Tensor<B, D> x = ember::detail::autocast_widen(input);
  const DType dt = x.dtype();
  ember::detail::ir_infer(ir::RmsNorm{eps}, x, ember::detail::ir_type_as(weight, dt));
  const std::int64_t d = x.dim(-1);
  if constexpr (requires(detail::FP<B> p, detail::OptFP<B> o) { B::float_rms_norm(p, o, eps); }) {
    return Tensor<B, D>(B::float_rms_norm(x.primitive(), detail::opt_prim(weight, dt), eps));
  } else {
    auto y = x.div(x.mul(x).mean_dim(D - 1).add_scalar(eps).sqrt());
    if (weight) {
      std::array<std::int64_t, D> s{};
      s.fill(1);
      s[D - 1] = d;
      y = y.mul(weight->cast(dt).template reshape<D>(s));
    }
    return y;
  }
}

/// Group norm (torch.nn.functional.group_norm; Wu & He 2018): the C channels of
/// x [N, C, ...] split into num_groups groups, each normalised over its channels and
/// spatial positions (biased variance), then weight[c], bias[c]. Throws ShapeError for
/// rank < 2, ValueError when num_groups <= 0 or does not divide C, ShapeError for
/// parameters not of shape [C]. Backend: float_group_norm(x, groups, weight, bias, eps).
template <class B, std::size_t D>
Tensor<B, D> group_norm(
    const Tensor<B, D>& input, std::int64_t num_groups,
    const std::optional<std::type_identity_t<Tensor<B, 1>>>& weight = std::nullopt,
    const std::optional<std::type_identity_t<Tensor<B, 1>>>& bias = std::nullopt,
    double eps = 1e-5) {
  using ember::detail::ir_type_as;
  const Tensor<B, D> x = ember::detail::autocast_widen(input);
  const DType dt = x.dtype();
  ember::detail::ir_infer(ir::GroupNorm{num_groups, eps}, x, ir_type_as(weight, dt),
                          ir_type_as(bias, dt));
  if constexpr (D < 2) {
    return x;  // unreachable: the rule above needs rank >= 2
  } else {
    if constexpr (requires(detail::FP<B> p, detail::OptFP<B> o) {
                    B::float_group_norm(p, num_groups, o, o, eps);
                  }) {
      return Tensor<B, D>(B::float_group_norm(x.primitive(), num_groups,
                                              detail::opt_prim(weight, dt),
                                              detail::opt_prim(bias, dt), eps));
    } else {
      const std::int64_t n = x.dim(0);
      const std::int64_t per = (n * num_groups) == 0 ? 0 : x.numel() / (n * num_groups);
      auto x3 = x.template reshape<3>(std::array<std::int64_t, 3>{n, num_groups, per});
      auto [var, mean] = x3.var_mean_bias(2);
      auto y = x3.sub(mean).div(var.add_scalar(eps).sqrt()).template reshape<D>(x.shape());
      if (weight) y = y.mul(detail::channel_view<B, D>(weight->cast(dt)));
      if (bias) y = y.add(detail::channel_view<B, D>(bias->cast(dt)));
      return y;
    }
  }
}

// ---- attention -----------------------------------------------------------------------

namespace detail {
/// A mask/bias of rank M <= D as rank D (leading 1s); its broadcast is checked by infer.
template <std::size_t D, class B, std::size_t M, class K>
Tensor<B, D, K> attn_operand(const Tensor<B, M, K>& t) {
  static_assert(M <= D, "scaled_dot_product_attention: mask/bias rank must not exceed q's rank");
  const Shape s = t.shape();
  std::array<std::int64_t, D> dims{};
  dims.fill(1);
  for (std::size_t i = 0; i < M; ++i) dims[D - M + i] = s[i];
  return t.template reshape<D>(dims);
}
}  // namespace detail

/// Scaled dot-product attention (torch.nn.functional.scaled_dot_product_attention):
/// softmax(q k^T * scale + bias, masked) v. q [..., L, E], k [..., S, E], v [..., S, Ev]
/// (equal batch dims, rank >= 2) -> [..., L, Ev]. `mask` (Bool, broadcastable to
/// [..., L, S]): true = the key takes part (torch's bool attn_mask); `bias` (Float,
/// broadcastable): added to the scores (torch's float attn_mask); `is_causal`: query l sees
/// keys s <= l (top-left aligned, as torch); `scale` defaults to 1 / sqrt(E). A query row
/// whose keys are all masked gives zeros, as torch >= 2.5's math reference (_safe_softmax;
/// older torch gave NaN); NaN scores still propagate. Throws ShapeError for
/// mismatched shapes and ValueError for is_causal together with a mask.
/// The optional mask/bias ranks DM/DB default to D and are not deduced: for a lower-rank
/// mask pass them explicitly (`scaled_dot_product_attention<B, 3, 2>(q, k, v, mask)`) or use
/// the overloads below that take the mask or bias tensor directly.
/// Backend: float_scaled_dot_product_attention(q, k, v, mask, bias, is_causal, scale).
template <class B, std::size_t D, std::size_t DM = D, std::size_t DB = D>
Tensor<B, D> scaled_dot_product_attention(
    const Tensor<B, D>& query, const Tensor<B, D>& k, const Tensor<B, D>& v,
    const std::optional<std::type_identity_t<Tensor<B, DM, Bool>>>& mask = std::nullopt,
    const std::optional<std::type_identity_t<Tensor<B, DB>>>& bias = std::nullopt,
    bool is_causal = false, std::optional<double> scale = std::nullopt) {
  static_assert(D >= 2, "scaled_dot_product_attention needs rank >= 2 ([..., L, E])");
  using ember::detail::ir_type_as;
  // Under Autocast q (and with it k, v and the bias, cast to q's dtype below) runs in the
  // autocast dtype, unless an operand is f64 (then f64).
  const Tensor<B, D> q = is_autocast_enabled()
                             ? query.cast(ember::detail::autocast_lower_dtype(promote_types(
                                   promote_types(query.dtype(), k.dtype()), v.dtype())))
                             : query;
  const Shape qs = q.shape();
  const DType dt = q.dtype();
  const double sc = scale ? *scale : 1.0 / std::sqrt(static_cast<double>(qs[D - 1]));
  ember::detail::ir_infer(ir::ScaledDotProductAttention{is_causal, sc}, q, ir_type_as(k, dt),
                          ir_type_as(v, dt), ember::detail::ir_type(mask), ir_type_as(bias, dt));
  std::optional<Tensor<B, D, Bool>> m;
  std::optional<Tensor<B, D>> bb;
  if (mask) m = detail::attn_operand<D>(*mask);
  if (bias) bb = detail::attn_operand<D>(bias->cast(dt));
  const Tensor<B, D> kk = k.cast(dt), vv = v.cast(dt);
  using BP = typename B::BoolTensor;
  std::optional<BP> mp;
  if (m) mp = m->primitive();
  std::optional<detail::FP<B>> bp;
  if (bb) bp = bb->primitive();
  if constexpr (requires(detail::FP<B> p, detail::OptFP<B> o, std::optional<BP> mo) {
                  B::float_scaled_dot_product_attention(p, p, p, mo, o, is_causal, sc);
                }) {
    return Tensor<B, D>(B::float_scaled_dot_product_attention(
        q.primitive(), kk.primitive(), vv.primitive(), mp, bp, is_causal, sc));
  } else {
    // The composite every backend shares (matrix products and a masked softmax; a row with
    // no key left has zero probabilities and zero gradients).
    return Tensor<B, D>(composite::attention<B>(q.primitive(), kk.primitive(), vv.primitive(), mp,
                                                bp, is_causal, sc));
  }
}

/// scaled_dot_product_attention with a Bool mask of any rank <= D (true = take part).
template <class B, std::size_t D, std::size_t DM>
Tensor<B, D> scaled_dot_product_attention(const Tensor<B, D>& q, const Tensor<B, D>& k,
                                          const Tensor<B, D>& v, const Tensor<B, DM, Bool>& mask,
                                          std::optional<double> scale = std::nullopt) {
  return scaled_dot_product_attention<B, D, DM, D>(q, k, v, mask, std::nullopt, false, scale);
}

/// scaled_dot_product_attention with an additive float bias of any rank <= D.
template <class B, std::size_t D, std::size_t DB>
Tensor<B, D> scaled_dot_product_attention(const Tensor<B, D>& q, const Tensor<B, D>& k,
                                          const Tensor<B, D>& v, const Tensor<B, DB>& bias,
                                          std::optional<double> scale = std::nullopt) {
  return scaled_dot_product_attention<B, D, D, DB>(q, k, v, std::nullopt, bias, false, scale);
}

}  // namespace ember::module
