// Transformer encoder and decoder (Vaswani et al. 2017) with PyTorch's structure and
// parameter names (torch.nn.TransformerEncoderLayer / TransformerEncoder /
// TransformerDecoderLayer / TransformerDecoder, batch_first=True), configured as Burn's
// TransformerEncoderConfig / TransformerDecoderConfig, and Burn's PositionWiseFeedForward.
//
//   auto enc = nn::TransformerEncoderConfig{.d_model = 64, .d_ff = 256, .n_heads = 8,
//                                           .n_layers = 2}.init<B>(device);
//   auto y = enc.forward(nn::TransformerEncoderInput<B>{x}.with_mask_pad(pad));  // [b, s, 64]
//
// Layer structure (state dict keys): `self_attn` (MultiHeadAttention), decoder
// `multihead_attn` (cross-attention over the memory), `linear1 [d_ff, d_model]`, `linear2
// [d_model, d_ff]`, `norm1`, `norm2` (decoder `norm3`) LayerNorms, dropouts `dropout`
// (inside the feed-forward block), `dropout1`, `dropout2` (decoder `dropout3`) on the
// residual branches. Stacks: `layers.N` and an optional final `norm` (torch's `norm=`).
// The norms are nn::LayerNorm (`weight`, `bias`), the dropouts nn::Dropout (training mode
// only).
//
// Post-norm (norm_first = false, torch's default):
//   x = norm1(x + sa(x));  [decoder: x = norm2(x + ca(x, memory));]  x = normK(x + ff(x))
// Pre-norm (norm_first = true):
//   x = x + sa(norm1(x));  [decoder: x = x + ca(norm2(x), memory);]  x = x + ff(normK(x))
// with ff(x) = linear2(dropout(activation(linear1(x)))) and each branch followed by its
// dropout. Masks as MultiHeadAttention (true = masked out).
//
// KV cache: `forward_cache(input, cache)` on the stacks takes the new target positions
// only and returns their outputs; with `causal` it matches the rows of the full causal
// forward (every other sub-layer is position-wise).
#pragma once

#include <cmath>
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <vector>

#include "ember/dispatch/dispatch.hpp"
#include "ember/module/config_fwd.hpp"
#include "ember/module/initializer.hpp"
#include "ember/module/module.hpp"
#include "ember/nn/attention.hpp"
#include "ember/nn/dropout.hpp"
#include "ember/nn/linear.hpp"
#include "ember/nn/norm.hpp"
#include "ember/tensor/activation.hpp"

namespace ember::nn {

/// Activation of the feed-forward block (torch's "relu" / "gelu"; Burn's default Gelu).
enum class TransformerActivation { Relu, Gelu };

EMBER_CONFIG_ENUM(TransformerActivation, {TransformerActivation::Relu, "relu"},
                  {TransformerActivation::Gelu, "gelu"})

namespace detail {
template <class B, std::size_t D>
Tensor<B, D> ffn_activation(const Tensor<B, D>& x, TransformerActivation a) {
  return a == TransformerActivation::Gelu ? ember::activation::gelu(x) : ember::activation::relu(x);
}

inline void check_model_dim(const char* op, const char* what, const Shape& s,
                            std::int64_t d_model) {
  if (s[2] != d_model) {
    ember::detail::fail<ShapeError>(op, what, " of shape ", s, " does not end with d_model ",
                                    d_model, " ([batch, seq, d_model])");
  }
}
}  // namespace detail

// ---- PositionWiseFeedForward ------------------------------------------------------------

template <Backend B>
struct PositionWiseFeedForward;

/// Configuration of PositionWiseFeedForward (Burn's PositionWiseFeedForwardConfig).
struct PositionWiseFeedForwardConfig {
  std::int64_t d_model = 0;
  /// Hidden size of the block.
  std::int64_t d_ff = 0;
  /// Dropout after the activation (training only). Default 0.1.
  double dropout = 0.1;
  /// Burn's default: Kaiming uniform, gain 1/sqrt(3).
  Initializer initializer = Initializer::kaiming_uniform(1.0 / std::sqrt(3.0), false);
  /// Burn's default Gelu.
  TransformerActivation activation = TransformerActivation::Gelu;

  /// Throws ValueError for non-positive sizes or dropout outside [0, 1].
  template <Backend B = Dispatch>
  PositionWiseFeedForward<B> init(const typename B::Device& device = {}) const;
};

/// Burn's position-wise feed-forward block: linear_outer(dropout(activation(linear_inner(x)))).
/// [..., d_model] -> [..., d_model]. State dict: linear_inner.{weight [d_ff, d_model], bias},
/// linear_outer.{weight [d_model, d_ff], bias}.
template <Backend B = Dispatch>
struct PositionWiseFeedForward {
  Linear<B> linear_inner;
  Linear<B> linear_outer;
  Dropout dropout;
  TransformerActivation activation = TransformerActivation::Gelu;

  EMBER_MODULE(linear_inner, linear_outer, dropout, activation)

  /// Throws ShapeError (naming PositionWiseFeedForward) when the last dim is not d_model.
  template <std::size_t D>
  Tensor<B, D> forward(const Tensor<B, D>& x) const {
    const std::int64_t d = linear_inner.weight.val().dim(1);
    if (x.dim(-1) != d) {
      ember::detail::fail<ShapeError>("PositionWiseFeedForward", "input of shape ", x.shape(),
                                      " does not end with d_model ", d);
    }
    auto h = detail::ffn_activation(linear_inner.forward(x), activation);
    return linear_outer.forward(dropout.forward(h));
  }
};

template <Backend B>
PositionWiseFeedForward<B> PositionWiseFeedForwardConfig::init(
    const typename B::Device& device) const {
  const char* op = "PositionWiseFeedForwardConfig";
  if (d_model <= 0 || d_ff <= 0) {
    ember::detail::fail<ValueError>(op, "d_model ", d_model, " and d_ff ", d_ff,
                                    " must be positive");
  }
  detail::check_dropout(op, dropout);
  PositionWiseFeedForward<B> m;
  m.linear_inner = LinearConfig{.d_input = d_model, .d_output = d_ff, .initializer = initializer}
                       .template init<B>(device);
  m.linear_outer = LinearConfig{.d_input = d_ff, .d_output = d_model, .initializer = initializer}
                       .template init<B>(device);
  m.dropout = Dropout{.prob = dropout};
  m.activation = activation;
  return m;
}

// ---- configs ----------------------------------------------------------------------------

template <Backend B>
struct TransformerEncoderLayer;
template <Backend B>
struct TransformerEncoder;
template <Backend B>
struct TransformerDecoderLayer;
template <Backend B>
struct TransformerDecoder;

/// Configuration of TransformerEncoder and TransformerEncoderLayer (Burn's
/// TransformerEncoderConfig; `bias` and `final_norm` as torch's).
struct TransformerEncoderConfig {
  std::int64_t d_model = 0;
  /// Feed-forward size (torch's dim_feedforward).
  std::int64_t d_ff = 0;
  std::int64_t n_heads = 0;
  std::int64_t n_layers = 0;
  /// Dropout of the attention weights, the feed-forward block and the residual branches.
  double dropout = 0.1;
  /// Pre-norm (true) or post-norm (false, default).
  bool norm_first = false;
  bool quiet_softmax = false;
  /// Burn's default: Kaiming uniform, gain 1/sqrt(3) (projections and linears).
  Initializer initializer = Initializer::kaiming_uniform(1.0 / std::sqrt(3.0), false);
  /// Burn's default Gelu (torch's default is relu).
  TransformerActivation activation = TransformerActivation::Gelu;
  double layer_norm_eps = 1e-5;
  /// Biases of the linears, projections and layer norms (torch's `bias`).
  bool bias = true;
  /// A LayerNorm `norm` after the last layer (torch's TransformerEncoder norm=).
  bool final_norm = false;

  /// The stack. Throws ValueError for invalid sizes (n_layers may be 0).
  template <Backend B = Dispatch>
  TransformerEncoder<B> init(const typename B::Device& device = {}) const;
  /// One layer (n_layers and final_norm are ignored).
  template <Backend B = Dispatch>
  TransformerEncoderLayer<B> init_layer(const typename B::Device& device = {}) const;
};

/// Configuration of TransformerDecoder and TransformerDecoderLayer (Burn's
/// TransformerDecoderConfig; `bias` and `final_norm` as torch's). Fields as
/// TransformerEncoderConfig.
struct TransformerDecoderConfig {
  std::int64_t d_model = 0;
  std::int64_t d_ff = 0;
  std::int64_t n_heads = 0;
  std::int64_t n_layers = 0;
  double dropout = 0.1;
  bool norm_first = false;
  bool quiet_softmax = false;
  Initializer initializer = Initializer::kaiming_uniform(1.0 / std::sqrt(3.0), false);
  TransformerActivation activation = TransformerActivation::Gelu;
  double layer_norm_eps = 1e-5;
  bool bias = true;
  bool final_norm = false;

  template <Backend B = Dispatch>
  TransformerDecoder<B> init(const typename B::Device& device = {}) const;
  template <Backend B = Dispatch>
  TransformerDecoderLayer<B> init_layer(const typename B::Device& device = {}) const;
};

namespace detail {
template <Backend B, class Cfg>
MultiHeadAttention<B> transformer_mha(const Cfg& c, const typename B::Device& device) {
  return MultiHeadAttentionConfig{.d_model = c.d_model,
                                  .n_heads = c.n_heads,
                                  .dropout = c.dropout,
                                  .bias = c.bias,
                                  .quiet_softmax = c.quiet_softmax,
                                  .initializer = c.initializer}
      .template init<B>(device);
}
template <Backend B, class Cfg>
LayerNorm<B> transformer_norm(const Cfg& c, const typename B::Device& device) {
  return LayerNormConfig{.d_model = c.d_model, .epsilon = c.layer_norm_eps, .bias = c.bias}
      .template init<B>(device);
}
template <Backend B, class Cfg>
Linear<B> transformer_linear(const Cfg& c, std::int64_t in, std::int64_t out,
                             const typename B::Device& device) {
  return LinearConfig{.d_input = in, .d_output = out, .bias = c.bias, .initializer = c.initializer}
      .template init<B>(device);
}
template <class Cfg>
void check_transformer_config(const char* op, const Cfg& c) {
  if (c.d_model <= 0 || c.d_ff <= 0 || c.n_heads <= 0 || c.n_layers < 0 ||
      c.d_model % c.n_heads != 0) {
    ember::detail::fail<ValueError>(op, "d_model ", c.d_model, ", d_ff ", c.d_ff, ", n_heads ",
                                    c.n_heads,
                                    " must be positive with n_heads dividing d_model, "
                                    "n_layers ",
                                    c.n_layers, " >= 0");
  }
  check_dropout(op, c.dropout);
}
}  // namespace detail

// ---- encoder ----------------------------------------------------------------------------

/// Input of the encoder (Burn's TransformerEncoderInput): tensor [batch, seq, d_model],
/// mask_pad [batch, seq] (true = padding), mask_attn [batch or 1, seq, seq] (true = masked),
/// causal (position i sees j <= i).
template <Backend B>
struct TransformerEncoderInput {
  Tensor<B, 3> tensor;
  std::optional<Tensor<B, 2, Bool>> mask_pad = std::nullopt;
  std::optional<Tensor<B, 3, Bool>> mask_attn = std::nullopt;
  bool causal = false;

  TransformerEncoderInput with_mask_pad(Tensor<B, 2, Bool> m) const {
    auto r = *this;
    r.mask_pad = std::move(m);
    return r;
  }
  TransformerEncoderInput with_mask_attn(Tensor<B, 3, Bool> m) const {
    auto r = *this;
    r.mask_attn = std::move(m);
    return r;
  }
  /// A [seq, seq] mask shared by the batch.
  TransformerEncoderInput with_mask_attn(const Tensor<B, 2, Bool>& m) const {
    return with_mask_attn(m.template unsqueeze_dim<3>(0));
  }
  TransformerEncoderInput with_causal(bool on = true) const {
    auto r = *this;
    r.causal = on;
    return r;
  }
  /// The self-attention input of a layer for x.
  MhaInput<B> attention_input(const Tensor<B, 3>& x) const {
    return MhaInput<B>{x, x, x, mask_pad, mask_attn, causal};
  }
};

/// One encoder layer (torch.nn.TransformerEncoderLayer); see the file comment.
template <Backend B = Dispatch>
struct TransformerEncoderLayer {
  MultiHeadAttention<B> self_attn;
  Linear<B> linear1;
  Dropout dropout;
  Linear<B> linear2;
  bool norm_first = false;
  LayerNorm<B> norm1;
  LayerNorm<B> norm2;
  Dropout dropout1;
  Dropout dropout2;
  TransformerActivation activation = TransformerActivation::Gelu;

  EMBER_MODULE(self_attn, linear1, dropout, linear2, norm_first, norm1, norm2, dropout1, dropout2,
               activation)

  /// [batch, seq, d_model] -> same. Throws ShapeError (naming TransformerEncoderLayer) for a
  /// wrong input shape, as MultiHeadAttention for wrong masks.
  Tensor<B, 3> forward(const TransformerEncoderInput<B>& input) const {
    return run(input, nullptr);
  }
  /// Incremental forward over the new positions in input.tensor, with the self-attention
  /// keys/values of earlier positions in `cache`.
  Tensor<B, 3> forward_cache(const TransformerEncoderInput<B>& input, MhaCache<B>& cache) const {
    return run(input, &cache);
  }

 private:
  Tensor<B, 3> run(const TransformerEncoderInput<B>& in, MhaCache<B>* cache) const {
    detail::check_model_dim("TransformerEncoderLayer", "input", in.tensor.shape(),
                            self_attn.d_model);
    auto sa = [&](const Tensor<B, 3>& x) {
      auto mi = in.attention_input(x).without_weights();
      auto o = cache ? self_attn.forward_cache(mi, *cache) : self_attn.forward(mi);
      return dropout1.forward(o.context);
    };
    auto ff = [&](const Tensor<B, 3>& x) {
      auto h = dropout.forward(detail::ffn_activation(linear1.forward(x), activation));
      return dropout2.forward(linear2.forward(h));
    };
    Tensor<B, 3> x = in.tensor;
    if (norm_first) {
      x = x.add(sa(norm1.forward(x)));
      return x.add(ff(norm2.forward(x)));
    }
    x = norm1.forward(x.add(sa(x)));
    return norm2.forward(x.add(ff(x)));
  }
};

/// Keys and values of earlier positions for TransformerEncoder::forward_cache: one
/// self-attention cache per layer.
template <Backend B>
struct TransformerEncoderCache {
  std::vector<MhaCache<B>> layers;
};

/// A stack of encoder layers (torch.nn.TransformerEncoder): `layers.N`, optional `norm`.
template <Backend B = Dispatch>
struct TransformerEncoder {
  std::vector<TransformerEncoderLayer<B>> layers;
  std::optional<LayerNorm<B>> norm;
  std::int64_t d_model = 0;

  EMBER_MODULE(layers, norm, d_model)

  /// [batch, seq, d_model] -> same. Throws ShapeError (naming TransformerEncoder) for a
  /// wrong input shape.
  Tensor<B, 3> forward(const TransformerEncoderInput<B>& input) const {
    detail::check_model_dim("TransformerEncoder", "input", input.tensor.shape(), d_model);
    auto in = input;
    for (const auto& l : layers) in.tensor = l.forward(in);
    return norm ? norm->forward(in.tensor) : in.tensor;
  }

  /// An empty cache for forward_cache.
  TransformerEncoderCache<B> new_cache() const {
    return TransformerEncoderCache<B>{
        std::vector<MhaCache<B>>(layers.size(), MhaCache<B>::autoregressive())};
  }

  /// Incremental forward: input.tensor [batch, n, d_model] holds the next n positions;
  /// mask_pad must cover every position so far ([batch, cached + n]). With input.causal the
  /// result equals the last n rows of the full causal forward.
  Tensor<B, 3> forward_cache(const TransformerEncoderInput<B>& input,
                             TransformerEncoderCache<B>& cache) const {
    detail::check_model_dim("TransformerEncoder", "input", input.tensor.shape(), d_model);
    if (cache.layers.size() != layers.size()) {
      ember::detail::fail<ValueError>("TransformerEncoder", "cache has ", cache.layers.size(),
                                      " layers, the encoder ", layers.size(),
                                      " (make it with new_cache())");
    }
    auto in = input;
    for (std::size_t i = 0; i < layers.size(); ++i) {
      in.tensor = layers[i].forward_cache(in, cache.layers[i]);
    }
    return norm ? norm->forward(in.tensor) : in.tensor;
  }
};

template <Backend B>
TransformerEncoderLayer<B> TransformerEncoderConfig::init_layer(
    const typename B::Device& device) const {
  detail::check_transformer_config("TransformerEncoderConfig", *this);
  TransformerEncoderLayer<B> m;
  m.self_attn = detail::transformer_mha<B>(*this, device);
  m.linear1 = detail::transformer_linear<B>(*this, d_model, d_ff, device);
  m.linear2 = detail::transformer_linear<B>(*this, d_ff, d_model, device);
  m.norm1 = detail::transformer_norm<B>(*this, device);
  m.norm2 = detail::transformer_norm<B>(*this, device);
  m.dropout = m.dropout1 = m.dropout2 = Dropout{.prob = dropout};
  m.norm_first = norm_first;
  m.activation = activation;
  return m;
}

template <Backend B>
TransformerEncoder<B> TransformerEncoderConfig::init(const typename B::Device& device) const {
  detail::check_transformer_config("TransformerEncoderConfig", *this);
  TransformerEncoder<B> m;
  for (std::int64_t i = 0; i < n_layers; ++i) m.layers.push_back(init_layer<B>(device));
  if (final_norm) m.norm = detail::transformer_norm<B>(*this, device);
  m.d_model = d_model;
  return m;
}

// ---- decoder ----------------------------------------------------------------------------

/// Input of the decoder (Burn's TransformerDecoderInput): target [batch, seq_t, d_model],
/// memory [batch, seq_m, d_model] (the encoder output), their masks (true = masked out;
/// target_mask_pad [batch, seq_t], target_mask_attn [batch or 1, seq_t, seq_t],
/// memory_mask_pad [batch, seq_m], memory_mask_attn [batch or 1, seq_t, seq_m]) and
/// `causal` for the target's self-attention.
template <Backend B>
struct TransformerDecoderInput {
  Tensor<B, 3> target;
  Tensor<B, 3> memory;
  std::optional<Tensor<B, 2, Bool>> target_mask_pad = std::nullopt;
  std::optional<Tensor<B, 3, Bool>> target_mask_attn = std::nullopt;
  std::optional<Tensor<B, 2, Bool>> memory_mask_pad = std::nullopt;
  std::optional<Tensor<B, 3, Bool>> memory_mask_attn = std::nullopt;
  bool causal = false;

  TransformerDecoderInput with_target_mask_pad(Tensor<B, 2, Bool> m) const {
    auto r = *this;
    r.target_mask_pad = std::move(m);
    return r;
  }
  TransformerDecoderInput with_target_mask_attn(Tensor<B, 3, Bool> m) const {
    auto r = *this;
    r.target_mask_attn = std::move(m);
    return r;
  }
  TransformerDecoderInput with_target_mask_attn(const Tensor<B, 2, Bool>& m) const {
    return with_target_mask_attn(m.template unsqueeze_dim<3>(0));
  }
  TransformerDecoderInput with_memory_mask_pad(Tensor<B, 2, Bool> m) const {
    auto r = *this;
    r.memory_mask_pad = std::move(m);
    return r;
  }
  TransformerDecoderInput with_memory_mask_attn(Tensor<B, 3, Bool> m) const {
    auto r = *this;
    r.memory_mask_attn = std::move(m);
    return r;
  }
  TransformerDecoderInput with_memory_mask_attn(const Tensor<B, 2, Bool>& m) const {
    return with_memory_mask_attn(m.template unsqueeze_dim<3>(0));
  }
  TransformerDecoderInput with_causal(bool on = true) const {
    auto r = *this;
    r.causal = on;
    return r;
  }
};

/// Caches of one decoder layer: target self-attention (appending) and cross-attention
/// (memory projected once).
template <Backend B>
struct TransformerDecoderLayerCache {
  MhaCache<B> self_attn = MhaCache<B>::autoregressive();
  MhaCache<B> cross_attn = MhaCache<B>::cross_attention();
};

/// One decoder layer (torch.nn.TransformerDecoderLayer); see the file comment.
template <Backend B = Dispatch>
struct TransformerDecoderLayer {
  MultiHeadAttention<B> self_attn;
  MultiHeadAttention<B> multihead_attn;
  Linear<B> linear1;
  Dropout dropout;
  Linear<B> linear2;
  bool norm_first = false;
  LayerNorm<B> norm1;
  LayerNorm<B> norm2;
  LayerNorm<B> norm3;
  Dropout dropout1;
  Dropout dropout2;
  Dropout dropout3;
  TransformerActivation activation = TransformerActivation::Gelu;

  EMBER_MODULE(self_attn, multihead_attn, linear1, dropout, linear2, norm_first, norm1, norm2,
               norm3, dropout1, dropout2, dropout3, activation)

  /// target [batch, seq_t, d_model], memory [batch, seq_m, d_model] -> [batch, seq_t,
  /// d_model]. Throws ShapeError (naming TransformerDecoderLayer) for wrong shapes.
  Tensor<B, 3> forward(const TransformerDecoderInput<B>& input) const {
    return run(input, nullptr);
  }
  /// Incremental forward over the new target positions (see TransformerDecoder).
  Tensor<B, 3> forward_cache(const TransformerDecoderInput<B>& input,
                             TransformerDecoderLayerCache<B>& cache) const {
    return run(input, &cache);
  }

 private:
  Tensor<B, 3> run(const TransformerDecoderInput<B>& in,
                   TransformerDecoderLayerCache<B>* cache) const {
    const char* op = "TransformerDecoderLayer";
    detail::check_model_dim(op, "target", in.target.shape(), self_attn.d_model);
    detail::check_model_dim(op, "memory", in.memory.shape(), self_attn.d_model);
    auto sa = [&](const Tensor<B, 3>& x) {
      const auto mi = MhaInput<B>{x, x, x, in.target_mask_pad, in.target_mask_attn, in.causal}
                          .without_weights();
      auto o = cache ? self_attn.forward_cache(mi, cache->self_attn) : self_attn.forward(mi);
      return dropout1.forward(o.context);
    };
    auto ca = [&](const Tensor<B, 3>& x) {
      const auto mi = MhaInput<B>{x, in.memory, in.memory, in.memory_mask_pad, in.memory_mask_attn}
                          .without_weights();
      auto o =
          cache ? multihead_attn.forward_cache(mi, cache->cross_attn) : multihead_attn.forward(mi);
      return dropout2.forward(o.context);
    };
    auto ff = [&](const Tensor<B, 3>& x) {
      auto h = dropout.forward(detail::ffn_activation(linear1.forward(x), activation));
      return dropout3.forward(linear2.forward(h));
    };
    Tensor<B, 3> x = in.target;
    if (norm_first) {
      x = x.add(sa(norm1.forward(x)));
      x = x.add(ca(norm2.forward(x)));
      return x.add(ff(norm3.forward(x)));
    }
    x = norm1.forward(x.add(sa(x)));
    x = norm2.forward(x.add(ca(x)));
    return norm3.forward(x.add(ff(x)));
  }
};

/// Caches of TransformerDecoder::forward_cache, one per layer.
template <Backend B>
struct TransformerDecoderCache {
  std::vector<TransformerDecoderLayerCache<B>> layers;
};

/// A stack of decoder layers (torch.nn.TransformerDecoder): `layers.N`, optional `norm`.
template <Backend B = Dispatch>
struct TransformerDecoder {
  std::vector<TransformerDecoderLayer<B>> layers;
  std::optional<LayerNorm<B>> norm;
  std::int64_t d_model = 0;

  EMBER_MODULE(layers, norm, d_model)

  /// target [batch, seq_t, d_model], memory [batch, seq_m, d_model] -> [batch, seq_t,
  /// d_model]. Throws ShapeError (naming TransformerDecoder) for wrong shapes.
  Tensor<B, 3> forward(const TransformerDecoderInput<B>& input) const {
    detail::check_model_dim("TransformerDecoder", "target", input.target.shape(), d_model);
    auto in = input;
    for (const auto& l : layers) in.target = l.forward(in);
    return norm ? norm->forward(in.target) : in.target;
  }

  /// An empty cache for forward_cache.
  TransformerDecoderCache<B> new_cache() const {
    return TransformerDecoderCache<B>{std::vector<TransformerDecoderLayerCache<B>>(layers.size())};
  }

  /// Incremental decoding: input.target [batch, n, d_model] holds the next n target
  /// positions, input.memory the (unchanged) memory; target_mask_pad must cover every
  /// target position so far. With input.causal the result equals the last n rows of the
  /// full causal forward.
  Tensor<B, 3> forward_cache(const TransformerDecoderInput<B>& input,
                             TransformerDecoderCache<B>& cache) const {
    detail::check_model_dim("TransformerDecoder", "target", input.target.shape(), d_model);
    if (cache.layers.size() != layers.size()) {
      ember::detail::fail<ValueError>("TransformerDecoder", "cache has ", cache.layers.size(),
                                      " layers, the decoder ", layers.size(),
                                      " (make it with new_cache())");
    }
    auto in = input;
    for (std::size_t i = 0; i < layers.size(); ++i) {
      in.target = layers[i].forward_cache(in, cache.layers[i]);
    }
    return norm ? norm->forward(in.target) : in.target;
  }
};

template <Backend B>
TransformerDecoderLayer<B> TransformerDecoderConfig::init_layer(
    const typename B::Device& device) const {
  detail::check_transformer_config("TransformerDecoderConfig", *this);
  TransformerDecoderLayer<B> m;
  m.self_attn = detail::transformer_mha<B>(*this, device);
  m.multihead_attn = detail::transformer_mha<B>(*this, device);
  m.linear1 = detail::transformer_linear<B>(*this, d_model, d_ff, device);
  m.linear2 = detail::transformer_linear<B>(*this, d_ff, d_model, device);
  m.norm1 = detail::transformer_norm<B>(*this, device);
  m.norm2 = detail::transformer_norm<B>(*this, device);
  m.norm3 = detail::transformer_norm<B>(*this, device);
  m.dropout = m.dropout1 = m.dropout2 = m.dropout3 = Dropout{.prob = dropout};
  m.norm_first = norm_first;
  m.activation = activation;
  return m;
}

template <Backend B>
TransformerDecoder<B> TransformerDecoderConfig::init(const typename B::Device& device) const {
  detail::check_transformer_config("TransformerDecoderConfig", *this);
  TransformerDecoder<B> m;
  for (std::int64_t i = 0; i < n_layers; ++i) m.layers.push_back(init_layer<B>(device));
  if (final_norm) m.norm = detail::transformer_norm<B>(*this, device);
  m.d_model = d_model;
  return m;
}

EMBER_CONFIG(PositionWiseFeedForwardConfig, d_model, d_ff, dropout, initializer, activation)
EMBER_CONFIG(TransformerEncoderConfig, d_model, d_ff, n_heads, n_layers, dropout, norm_first,
             quiet_softmax, initializer, activation, layer_norm_eps, bias, final_norm)
EMBER_CONFIG(TransformerDecoderConfig, d_model, d_ff, n_heads, n_layers, dropout, norm_first,
             quiet_softmax, initializer, activation, layer_norm_eps, bias, final_norm)

}  // namespace ember::nn
