// Embedding: a lookup table of learnable vectors (Burn's Embedding, PyTorch's nn.Embedding
// with its optional padding_idx).
//
//   auto emb = nn::EmbeddingConfig{.n_embedding = 1000, .d_model = 64}.init<B>(device);
//   Tensor<B, 3> y = emb.forward(tokens);   // tokens [batch, seq] Int -> [batch, seq, 64]
#pragma once

#include <cstdint>
#include <optional>

#include "ember/core/error.hpp"
#include "ember/dispatch/dispatch.hpp"
#include "ember/module/config_fwd.hpp"
#include "ember/module/initializer.hpp"
#include "ember/module/module.hpp"
#include "ember/tensor/module/nn.hpp"
#include "ember/tensor/tensor.hpp"

namespace ember::nn {

template <Backend B>
struct Embedding;

/// Configuration of Embedding (Burn's EmbeddingConfig, plus PyTorch's padding_idx).
/// Defaults: initializer normal(0, 1) (Burn's and PyTorch's), no padding index.
struct EmbeddingConfig {
  std::int64_t n_embedding = 0;  ///< number of rows (vocabulary size)
  std::int64_t d_model = 0;      ///< size of each vector
  Initializer initializer = Initializer::normal(0.0, 1.0);
  /// PyTorch's padding_idx: that row starts as zeros and never gets a gradient (its output
  /// is a constant). Negative values count from the end (n_embedding + padding_idx).
  std::optional<std::int64_t> padding_idx = std::nullopt;

  /// weight [n_embedding, d_model] from `initializer`, the padding row zeroed. Throws
  /// ValueError when n_embedding or d_model <= 0 or padding_idx is outside
  /// [-n_embedding, n_embedding).
  template <Backend B = Dispatch>
  Embedding<B> init(const typename B::Device& device = {}) const;
};

EMBER_CONFIG(EmbeddingConfig, n_embedding, d_model, initializer, padding_idx)

/// Lookup of rows of weight [n_embedding, d_model] (PyTorch layout and name).
template <Backend B = Dispatch>
struct Embedding {
  Param<Tensor<B, 2>> weight;
  /// Normalised to [0, n_embedding) by the config.
  std::optional<std::int64_t> padding_idx;

  EMBER_MODULE(weight, padding_idx)

  /// Int indices [...] (rank D) -> [..., d_model] (rank D + 1). The rows picked by
  /// padding_idx get no gradient. Throws ValueError naming the first index outside
  /// [0, n_embedding) (from module::embedding).
  template <std::size_t D>
  Tensor<B, D + 1> forward(const Tensor<B, D, Int>& indices) const {
    auto out = module::embedding(weight.val(), indices);
    if constexpr (AutodiffBackend<B>) {
      if (padding_idx && out.is_require_grad()) {
        // The padded positions take their values from a detached copy: same values, no
        // gradient to the padding row (PyTorch's embedding backward skips padding_idx).
        Shape ms = indices.shape();
        ms.dims.push_back(1);
        auto pad = indices.equal_elem(*padding_idx)
                       .template reshape<D + 1>(ms)
                       .template expand<D + 1>(out.shape());
        out = out.mask_where(pad, out.detach());
      }
    }
    return out;
  }
};

template <Backend B>
Embedding<B> EmbeddingConfig::init(const typename B::Device& device) const {
  if (n_embedding <= 0 || d_model <= 0) {
    ember::detail::fail<ValueError>("EmbeddingConfig", "n_embedding and d_model must be > 0, got ",
                                    n_embedding, " and ", d_model);
  }
  std::optional<std::int64_t> pad;
  if (padding_idx) {
    if (*padding_idx < -n_embedding || *padding_idx >= n_embedding) {
      ember::detail::fail<ValueError>("EmbeddingConfig", "padding_idx ", *padding_idx,
                                      " is outside [", -n_embedding, ", ", n_embedding, ")");
    }
    pad = *padding_idx < 0 ? *padding_idx + n_embedding : *padding_idx;
  }
  auto w = initializer.template init<B, 2>(Shape{n_embedding, d_model}, device, std::nullopt,
                                           std::nullopt);
  if (pad) {
    auto rows = Tensor<B, 1, Int>::arange(0, n_embedding, device)
                    .equal_elem(*pad)
                    .template reshape<2>(std::array<std::int64_t, 2>{n_embedding, 1})
                    .template expand<2>(std::array<std::int64_t, 2>{n_embedding, d_model});
    w = w.mask_fill(rows, 0.0);
  }
  Embedding<B> m;
  m.weight = Param<Tensor<B, 2>>(std::move(w));
  m.padding_idx = pad;
  return m;
}

}  // namespace ember::nn
