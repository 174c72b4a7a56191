// Multi-head attention (Vaswani et al. 2017, "Attention Is All You Need"), Burn's
// MultiHeadAttention with PyTorch's parameters (torch.nn.MultiheadAttention, batch_first):
//
//   auto mha = nn::MultiHeadAttentionConfig{.d_model = 64, .n_heads = 8}.init<B>(device);
//   auto out = mha.forward(nn::MhaInput<B>::self_attn(x).with_mask_pad(pad).with_causal());
//   out.context  // [batch, seq, d_model];  out.weights  // [batch, heads, seq, seq]
//
// Parameters (state dict keys as torch's): `in_proj_weight [3E, E]` (query, key, value
// projections stacked) when kdim == vdim == d_model, else `q_proj_weight [E, E]`,
// `k_proj_weight [E, kdim]`, `v_proj_weight [E, vdim]`; `in_proj_bias [3E]` and
// `out_proj.weight [E, E]`, `out_proj.bias [E]` when `bias`.
//
// Masks use torch's and Burn's meaning: true = masked out. `mask_pad` [batch, seq_k] marks
// padded keys (torch's key_padding_mask), `mask_attn` [batch or 1, seq_q, seq_k] (or
// [seq_q, seq_k]) forbids pairs (torch's bool attn_mask), `causal` lets query i see keys
// j <= i only. Masked scores are -inf before the softmax (torch); a query whose keys are all
// masked gets zero weights and a context equal to out_proj's bias (torch gives NaN there).
// Attention dropout is applied to the weights after the softmax, in training mode only
// (torch; Burn drops scores before the softmax). The returned weights are the ones used,
// i.e. after dropout (as both torch and Burn).
//
// KV cache: `forward_cache(input, cache)` takes only the new tokens, appends their projected
// keys and values to `cache` and attends over everything cached; with `causal` the new query
// i sits at position cache.position + i. Feeding a sequence in pieces gives the same
// context rows as one full forward with `causal`.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "ember/dispatch/dispatch.hpp"
#include "ember/module/config_fwd.hpp"
#include "ember/module/initializer.hpp"
#include "ember/module/module.hpp"
#include "ember/nn/dropout.hpp"
#include "ember/nn/linear.hpp"
#include "ember/tensor/activation.hpp"
#include "ember/tensor/module/nn.hpp"

namespace ember::nn {

namespace detail {

/// Checks a dropout probability of a config (ValueError naming the config).
inline void check_dropout(const char* op, double p) {
  if (!(p >= 0.0 && p <= 1.0)) {
    ember::detail::fail<ValueError>(op, "dropout probability ", p, " is not in [0, 1]");
  }
}

/// A weight [out, in] drawn from `init` with fan_in = in and fan_out = out (Burn's Linear).
template <Backend B>
Tensor<B, 2> init_weight(const Initializer& init, std::int64_t out, std::int64_t in,
                         const typename B::Device& device) {
  return init.template init<B, 2>(Shape{out, in}, device, in, out);
}

/// A bias [out] drawn from `init` with the fans of its layer (Burn's Linear).
template <Backend B>
Tensor<B, 1> init_bias(const Initializer& init, std::int64_t out, std::int64_t in,
                       const typename B::Device& device) {
  return init.template init<B, 1>(Shape{out}, device, in, out);
}

}  // namespace detail

template <Backend B>
struct MultiHeadAttention;

/// Configuration of MultiHeadAttention (Burn's MultiHeadAttentionConfig; `bias`, `kdim`,
/// `vdim` as torch.nn.MultiheadAttention).
struct MultiHeadAttentionConfig {
  /// Model size E (torch's embed_dim).
  std::int64_t d_model = 0;
  /// Number of heads; must divide d_model.
  std::int64_t n_heads = 0;
  /// Dropout probability on the attention weights (training only). Burn's default 0.1.
  double dropout = 0.1;
  /// in_proj_bias and out_proj.bias (torch's `bias`).
  bool bias = true;
  /// Feature size of the key input; 0 means d_model (torch's kdim=None).
  std::int64_t kdim = 0;
  /// Feature size of the value input; 0 means d_model (torch's vdim=None).
  std::int64_t vdim = 0;
  /// Burn's quiet softmax (exp(x_i) / (1 + sum_j exp(x_j))) instead of the softmax.
  bool quiet_softmax = false;
  /// Initializer of the projections, applied per projection with its fans (Burn's
  /// default: Kaiming uniform, gain 1/sqrt(3)).
  Initializer initializer = Initializer::kaiming_uniform(1.0 / std::sqrt(3.0), false);

  /// Builds the layer. Throws ValueError when n_heads does not divide d_model, a size is not
  /// positive or dropout is outside [0, 1].
  template <Backend B = Dispatch>
  MultiHeadAttention<B> init(const typename B::Device& device = {}) const;
};

/// Input of MultiHeadAttention::forward (Burn's MhaInput). query [batch, seq_q, d_model],
/// key [batch, seq_k, kdim], value [batch, seq_k, vdim]; masks: true = masked out.
template <Backend B>
struct MhaInput {
  Tensor<B, 3> query;
  Tensor<B, 3> key;
  Tensor<B, 3> value;
  /// [batch, seq_k]: true at padded keys (torch's key_padding_mask).
  std::optional<Tensor<B, 2, Bool>> mask_pad = std::nullopt;
  /// [batch or 1, seq_q, seq_k]: true where query i must not see key j.
  std::optional<Tensor<B, 3, Bool>> mask_attn = std::nullopt;
  /// Query i sees keys j <= i only (top-left aligned, as torch's is_causal).
  bool causal = false;
  /// Whether forward returns the attention weights (torch's need_weights). Without them
  /// (and without quiet_softmax, or dropout in training) the context comes from
  /// module::scaled_dot_product_attention, the backend's fused kernel where it has one: on the
  /// GPU backends it never holds the [seq_q, seq_k] weights (docs/gpu.md, "Attention").
  bool need_weights = true;

  /// Self-attention: query = key = value = x.
  static MhaInput self_attn(const Tensor<B, 3>& x) { return MhaInput{x, x, x}; }
  MhaInput with_mask_pad(Tensor<B, 2, Bool> m) const {
    MhaInput r = *this;
    r.mask_pad = std::move(m);
    return r;
  }
  MhaInput with_mask_attn(Tensor<B, 3, Bool> m) const {
    MhaInput r = *this;
    r.mask_attn = std::move(m);
    return r;
  }
  /// A [seq_q, seq_k] mask shared by the batch.
  MhaInput with_mask_attn(const Tensor<B, 2, Bool>& m) const {
    return with_mask_attn(m.template unsqueeze_dim<3>(0));
  }
  MhaInput with_causal(bool on = true) const {
    MhaInput r = *this;
    r.causal = on;
    return r;
  }
  /// need_weights = false: the output's weights are left out (see need_weights).
  MhaInput without_weights() const {
    MhaInput r = *this;
    r.need_weights = false;
    return r;
  }
};

/// Output of MultiHeadAttention::forward (Burn's MhaOutput).
template <Backend B>
struct MhaOutput {
  /// [batch, seq_q, d_model]
  Tensor<B, 3> context;
  /// [batch, n_heads, seq_q, seq_k], after dropout (torch's average_attn_weights=False);
  /// nullopt when the input asked for none (MhaInput::need_weights).
  std::optional<Tensor<B, 4>> weights;
};

/// Keys and values of earlier steps for incremental decoding (Burn's MhaCache).
/// `autoregressive()` appends the keys/values of every call (self-attention);
/// `cross_attention()` projects the key/value of the first call (the encoder memory) and
/// reuses them afterwards. `position` counts the queries seen so far.
template <Backend B>
struct MhaCache {
  /// [batch, n_heads, seq_cached, d_head]
  std::optional<Tensor<B, 4>> key;
  std::optional<Tensor<B, 4>> value;
  std::int64_t position = 0;
  bool cross = false;

  static MhaCache autoregressive() { return MhaCache{}; }
  static MhaCache cross_attention() {
    MhaCache c;
    c.cross = true;
    return c;
  }
  /// Number of cached keys.
  std::int64_t len() const { return key ? key->dim(2) : 0; }
  /// Forgets everything (same mode).
  void reset() {
    key.reset();
    value.reset();
    position = 0;
  }
};

/// The multi-head attention layer; see the file comment. Build with MultiHeadAttentionConfig.
template <Backend B = Dispatch>
struct MultiHeadAttention {
  /// [3E, E] when kdim == vdim == E.
  std::optional<Param<Tensor<B, 2>>> in_proj_weight;
  /// [E, E], [E, kdim], [E, vdim] when kdim or vdim differ from E.
  std::optional<Param<Tensor<B, 2>>> q_proj_weight;
  std::optional<Param<Tensor<B, 2>>> k_proj_weight;
  std::optional<Param<Tensor<B, 2>>> v_proj_weight;
  /// [3E] when bias.
  std::optional<Param<Tensor<B, 1>>> in_proj_bias;
  Linear<B> out_proj;
  std::int64_t d_model = 0;
  std::int64_t n_heads = 0;
  std::int64_t kdim = 0;
  std::int64_t vdim = 0;
  double dropout = 0.0;
  bool quiet_softmax = false;
  bool training = true;

  EMBER_MODULE(in_proj_weight, q_proj_weight, k_proj_weight, v_proj_weight, in_proj_bias, out_proj,
               d_model, n_heads, kdim, vdim, dropout, quiet_softmax, training)

  /// Size of one head (d_model / n_heads).
  std::int64_t d_head() const { return d_model / n_heads; }

  /// Attention of input.query over input.key/value. Throws ShapeError (naming
  /// MultiHeadAttention) for inputs or masks of the wrong shape.
  MhaOutput<B> forward(const MhaInput<B>& input) const {
    const char* op = "MultiHeadAttention";
    check_inputs(op, input, true);
    const std::int64_t sq = input.query.dim(1), sk = input.key.dim(1);
    auto q = project(input.query, 0);
    auto k = project(input.key, 1);
    auto v = project(input.value, 2);
    // Causal alone goes to the fused kernel as is_causal (it skips the keys after the tile).
    const bool causal_only = fused(input) && input.causal && !input.mask_pad && !input.mask_attn;
    auto mask = causal_only ? std::nullopt : build_mask(op, input, input.query.dim(0), sq, sk, 0);
    return attend(q, k, v, mask, input.need_weights, causal_only);
  }

  /// Incremental forward (see the file comment): input holds the new tokens only
  /// (query [batch, n, d_model]; key/value [batch, n, kdim/vdim], ignored by a cross-attention
  /// cache after its first call). mask_pad must cover every cached key ([batch, seq_cached +
  /// n] for self-attention), mask_attn [batch or 1, n, seq_k]. Throws ShapeError when the
  /// batch differs from the cached one or a shape is wrong.
  MhaOutput<B> forward_cache(const MhaInput<B>& input, MhaCache<B>& cache) const {
    const char* op = "MultiHeadAttention::forward_cache";
    const bool reuse = cache.cross && cache.key.has_value();
    check_inputs(op, input, !reuse);
    const std::int64_t b = input.query.dim(0), n = input.query.dim(1);
    if (cache.key && cache.key->dim(0) != b) {
      ember::detail::fail<ShapeError>(op, "query of shape ", input.query.shape(),
                                      " has batch size ", b, " but the cache holds batch size ",
                                      cache.key->dim(0));
    }
    auto q = project(input.query, 0);
    if (!reuse) {
      auto k = project(input.key, 1);
      auto v = project(input.value, 2);
      if (cache.key && !cache.cross) {
        k = Tensor<B, 4>::cat({*cache.key, k}, 2);
        v = Tensor<B, 4>::cat({*cache.value, v}, 2);
      }
      cache.key = k;
      cache.value = v;
    }
    auto mask = build_mask(op, input, b, n, cache.key->dim(2), cache.position);
    auto out = attend(q, *cache.key, *cache.value, mask, input.need_weights, false);
    cache.position += n;
    return out;
  }

 private:
  /// [batch, seq, in] -> [batch, heads, seq, d_head] with projection `which` (0 q, 1 k, 2 v).
  Tensor<B, 4> project(const Tensor<B, 3>& x, int which) const {
    const std::int64_t e = d_model;
    Tensor<B, 2> w = in_proj_weight ? in_proj_weight->val().narrow(0, which * e, e)
                                    : (which == 0   ? q_proj_weight
                                       : which == 1 ? k_proj_weight
                                                    : v_proj_weight)
                                          ->val();
    std::optional<Tensor<B, 1>> bias;
    if (in_proj_bias) bias = in_proj_bias->val().narrow(0, which * e, e);
    auto y = ember::module::linear(x, w, bias);
    return y.template reshape<4>(std::array<std::int64_t, 4>{x.dim(0), x.dim(1), n_heads, d_head()})
        .swap_dims(1, 2);
  }

  void check_inputs(const char* op, const MhaInput<B>& in, bool check_kv) const {
    const Shape qs = in.query.shape();
    if (qs[2] != d_model) {
      ember::detail::fail<ShapeError>(op, "query of shape ", qs, " does not end with d_model ",
                                      d_model, " ([batch, seq_q, d_model])");
    }
    if (!check_kv) return;
    const Shape ks = in.key.shape(), vs = in.value.shape();
    if (ks[2] != kdim || vs[2] != vdim) {
      ember::detail::fail<ShapeError>(op, "key of shape ", ks, " and value of shape ", vs,
                                      " must end with kdim ", kdim, " and vdim ", vdim);
    }
    if (ks[0] != qs[0] || vs[0] != qs[0] || ks[1] != vs[1]) {
      ember::detail::fail<ShapeError>(op, "query ", qs, ", key ", ks, " and value ", vs,
                                      " must share the batch size, key and value the length");
    }
  }

  /// The combined mask [batch or 1, 1, sq, sk] (true = masked), or none. `offset` is the
  /// position of the first query (causal: query i sees keys j <= offset + i).
  std::optional<Tensor<B, 4, Bool>> build_mask(const char* op, const MhaInput<B>& in,
                                               std::int64_t b, std::int64_t sq, std::int64_t sk,
                                               std::int64_t offset) const {
    std::optional<Tensor<B, 4, Bool>> m;
    std::int64_t mb = 1;
    auto add = [&](Tensor<B, 4, Bool> t) {
      if (!m) {
        m = std::move(t);
        return;
      }
      const std::array<std::int64_t, 4> s{std::max(mb, m->dim(0)), 1, sq, sk};
      m = m->template expand<4>(s).bool_or(t.template expand<4>(s));
    };
    if (in.mask_pad) {
      const Shape ps = in.mask_pad->shape();
      if (ps[0] != b || ps[1] != sk) {
        ember::detail::fail<ShapeError>(op, "mask_pad of shape ", ps, " must be [batch, seq_k] = [",
                                        b, ", ", sk, "]");
      }
      mb = b;
      add(in.mask_pad->template reshape<4>(std::array<std::int64_t, 4>{b, 1, 1, sk}));
    }
    if (in.mask_attn) {
      const Shape as = in.mask_attn->shape();
      if ((as[0] != b && as[0] != 1) || as[1] != sq || as[2] != sk) {
        ember::detail::fail<ShapeError>(op, "mask_attn of shape ", as,
                                        " must be [batch or 1, seq_q, seq_k] = [", b, ", ", sq,
                                        ", ", sk, "]");
      }
      mb = std::max(mb, as[0]);
      add(in.mask_attn->template reshape<4>(std::array<std::int64_t, 4>{as[0], 1, sq, sk}));
    }
    if (in.causal) {
      add(Tensor<B, 4, Bool>::tril_mask(Shape{1, 1, sq, sk}, offset, in.query.device()));
    }
    return m;
  }

  /// Whether the context of `in` comes from module::scaled_dot_product_attention.
  bool fused(const MhaInput<B>& in) const {
    return !in.need_weights && !quiet_softmax && !(training && dropout > 0.0);
  }

  /// `mask` true = masked out; `causal`: query i sees keys j <= i (only with no mask).
  MhaOutput<B> attend(const Tensor<B, 4>& q, const Tensor<B, 4>& k, const Tensor<B, 4>& v,
                      const std::optional<Tensor<B, 4, Bool>>& mask, bool need_weights,
                      bool causal) const {
    const std::int64_t b = q.dim(0), sq = q.dim(2);
    if (!need_weights && !quiet_softmax && !(training && dropout > 0.0)) {
      std::optional<Tensor<B, 4, Bool>> keep;
      if (mask) keep = mask->bool_not();
      auto context = ember::module::scaled_dot_product_attention<B, 4>(
                         q, k, v, keep, std::nullopt, causal, 1.0 / std::sqrt(double(d_head())))
                         .swap_dims(1, 2)
                         .template reshape<3>(std::array<std::int64_t, 3>{b, sq, d_model});
      return MhaOutput<B>{out_proj.forward(context), std::nullopt};
    }
    auto scores = q.matmul(k.swap_dims(2, 3)).mul_scalar(1.0 / std::sqrt(double(d_head())));
    std::optional<Tensor<B, 4, Bool>> dead;
    if (mask) {
      scores = scores.mask_fill(*mask, -std::numeric_limits<double>::infinity());
      // Rows with every key masked: finite scores (no NaN in backward), zero weights below.
      dead = mask->all_dim(3);
      scores = scores.mask_fill(*dead, 0.0);
    }
    auto weights = quiet_softmax ? ember::activation::quiet_softmax(scores, 3)
                                 : ember::activation::softmax(scores, 3);
    if (dead) weights = weights.mask_fill(*dead, 0.0);
    weights = nn::dropout(weights, dropout, training);
    auto context = weights.matmul(v).swap_dims(1, 2).template reshape<3>(
        std::array<std::int64_t, 3>{b, sq, d_model});
    return MhaOutput<B>{out_proj.forward(context),
                        need_weights ? std::optional<Tensor<B, 4>>(weights) : std::nullopt};
  }
};

template <Backend B>
MultiHeadAttention<B> MultiHeadAttentionConfig::init(const typename B::Device& device) const {
  const char* op = "MultiHeadAttentionConfig";
  if (d_model <= 0 || n_heads <= 0 || d_model % n_heads != 0) {
    ember::detail::fail<ValueError>(op, "n_heads ", n_heads,
                                    " must be positive and divide d_model ", d_model);
  }
  if (kdim < 0 || vdim < 0) {
    ember::detail::fail<ValueError>(op, "kdim ", kdim, " and vdim ", vdim, " must be >= 0");
  }
  detail::check_dropout(op, dropout);
  MultiHeadAttention<B> m;
  m.d_model = d_model;
  m.n_heads = n_heads;
  m.kdim = kdim == 0 ? d_model : kdim;
  m.vdim = vdim == 0 ? d_model : vdim;
  m.dropout = dropout;
  m.quiet_softmax = quiet_softmax;
  const std::int64_t e = d_model;
  auto w = [&](std::int64_t in) { return detail::init_weight<B>(initializer, e, in, device); };
  if (m.kdim == e && m.vdim == e) {
    m.in_proj_weight = Param<Tensor<B, 2>>(Tensor<B, 2>::cat({w(e), w(e), w(e)}, 0));
  } else {
    m.q_proj_weight = Param<Tensor<B, 2>>(w(e));
    m.k_proj_weight = Param<Tensor<B, 2>>(w(m.kdim));
    m.v_proj_weight = Param<Tensor<B, 2>>(w(m.vdim));
  }
  if (bias) {
    m.in_proj_bias = Param<Tensor<B, 1>>(
        Tensor<B, 1>::cat({detail::init_bias<B>(initializer, e, e, device),
                           detail::init_bias<B>(initializer, e, m.kdim, device),
                           detail::init_bias<B>(initializer, e, m.vdim, device)},
                          0));
  }
  m.out_proj = LinearConfig{.d_input = e, .d_output = e, .bias = bias, .initializer = initializer}
                   .template init<B>(device);
  return m;
}

EMBER_CONFIG(MultiHeadAttentionConfig, d_model, n_heads, dropout, bias, kdim, vdim, quiet_softmax,
             initializer)

}  // namespace ember::nn
