// Position encodings: Burn's sinusoidal PositionalEncoding (Vaswani et al. 2017) and
// RotaryEncoding (RoPE, Su et al. 2021, "RoFormer").
//
//   auto pe = nn::PositionalEncodingConfig{.d_model = 64}.init<B>();
//   auto y = pe.forward(x);                       // x [batch, seq, 64] + sinusoids
//   auto rope = nn::RotaryEncodingConfig{.max_sequence_length = 512, .d_model = 16}.init<B>();
//   auto qr = rope.forward(q);                    // q [batch, heads, seq, 16]
//   auto kr = rope.apply(k_new, cache.position);  // positions start.. for a KV cache
//
// Neither layer has parameters; the tables are computed in double precision on the host
// for the positions a call needs (no state, nothing in the state dict).
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

#include "ember/dispatch/dispatch.hpp"
#include "ember/module/config_fwd.hpp"
#include "ember/module/module.hpp"
#include "ember/tensor/tensor.hpp"

namespace ember::nn {

/// Burn's generate_sinusoids for positions [start, start + length): row p, columns k (even)
/// and k + 1 hold sin(p * w_k) and cos(p * w_k) with w_k = exp(-k ln(max_timescale) /
/// d_model). -> [length, d_model] (f32, computed in f64). Throws ValueError when d_model is odd or
/// not positive.
template <Backend B>
Tensor<B, 2> generate_sinusoids(std::int64_t length, std::int64_t d_model,
                                std::int64_t max_timescale, const typename B::Device& device = {},
                                std::int64_t start = 0) {
  if (d_model <= 0 || d_model % 2 != 0) {
    ember::detail::fail<ValueError>("generate_sinusoids", "d_model ", d_model,
                                    " must be positive and even");
  }
  const double inc = -std::log(static_cast<double>(max_timescale)) / static_cast<double>(d_model);
  std::vector<double> v(static_cast<std::size_t>(length * d_model));
  for (std::int64_t i = 0; i < length; ++i) {
    const double p = static_cast<double>(start + i);
    for (std::int64_t k = 0; k < d_model; k += 2) {
      const double a = p * std::exp(static_cast<double>(k) * inc);
      v[static_cast<std::size_t>(i * d_model + k)] = std::sin(a);
      v[static_cast<std::size_t>(i * d_model + k + 1)] = std::cos(a);
    }
  }
  return Tensor<B, 2>::from_data(
      TensorData(std::move(v), Shape{length, d_model}).convert(DType::F32), device);
}

template <Backend B>
struct PositionalEncoding;

/// Configuration of PositionalEncoding (Burn's PositionalEncodingConfig).
struct PositionalEncodingConfig {
  /// Longest sequence accepted. Default 5000.
  std::int64_t max_sequence_size = 5000;
  /// Feature size (even).
  std::int64_t d_model = 0;
  /// Largest wavelength scale. Default 10000.
  std::int64_t max_timescale = 10000;

  /// Throws ValueError when d_model is odd or not positive, max_sequence_size is not
  /// positive, or max_timescale < max_sequence_size (Burn's condition).
  template <Backend B = Dispatch>
  PositionalEncoding<B> init(const typename B::Device& device = {}) const;
};

/// Adds sinusoidal position encodings to its input: [batch, seq, d_model] -> same.
template <Backend B = Dispatch>
struct PositionalEncoding {
  std::int64_t max_sequence_size = 5000;
  std::int64_t d_model = 0;
  std::int64_t max_timescale = 10000;

  EMBER_MODULE(max_sequence_size, d_model, max_timescale)

  /// input + sinusoids of positions [start, start + seq) (start > 0 continues a sequence fed
  /// in pieces). Throws ShapeError (naming PositionalEncoding) when the last dim is not
  /// d_model or start + seq exceeds max_sequence_size.
  Tensor<B, 3> forward(const Tensor<B, 3>& input, std::int64_t start = 0) const {
    const Shape s = input.shape();
    if (s[2] != d_model) {
      ember::detail::fail<ShapeError>("PositionalEncoding", "input of shape ", s,
                                      " does not end with d_model ", d_model);
    }
    if (start < 0 || start + s[1] > max_sequence_size) {
      ember::detail::fail<ShapeError>("PositionalEncoding", "positions [", start, ", ",
                                      start + s[1], ") of input ", s, " exceed max_sequence_size ",
                                      max_sequence_size);
    }
    auto pe = generate_sinusoids<B>(s[1], d_model, max_timescale, input.device(), start)
                  .cast(input.dtype());
    return input.add(pe.template unsqueeze_dim<3>(0));
  }
};

template <Backend B>
PositionalEncoding<B> PositionalEncodingConfig::init(const typename B::Device&) const {
  const char* op = "PositionalEncodingConfig";
  if (d_model <= 0 || d_model % 2 != 0) {
    ember::detail::fail<ValueError>(op, "d_model ", d_model, " must be positive and even");
  }
  if (max_sequence_size <= 0 || max_timescale < max_sequence_size) {
    ember::detail::fail<ValueError>(op, "max_sequence_size ", max_sequence_size,
                                    " must be positive and <= max_timescale ", max_timescale);
  }
  return PositionalEncoding<B>{max_sequence_size, d_model, max_timescale};
}

// ---- rotary ---------------------------------------------------------------------------

template <Backend B>
struct RotaryEncoding;

/// Configuration of RotaryEncoding (Burn's RotaryEncodingConfig).
struct RotaryEncodingConfig {
  /// Positions accepted: [0, max_sequence_length).
  std::int64_t max_sequence_length = 0;
  /// Feature size rotated (even).
  std::int64_t d_model = 0;
  /// Frequency base. Default 10000.
  double theta = 10000.0;

  /// Throws ValueError when d_model is odd or not positive, max_sequence_length is not
  /// positive or theta <= 0.
  template <Backend B = Dispatch>
  RotaryEncoding<B> init(const typename B::Device& device = {}) const;
};

/// Rotary position encoding on the last dim of x [..., seq, d_model]: each pair
/// (x[2i], x[2i+1]) at position p is rotated by the angle p * theta^(-2i / d_model)
/// (RoFormer's interleaved pairs, as Burn's): (x0 cos - x1 sin, x0 sin + x1 cos).
template <Backend B = Dispatch>
struct RotaryEncoding {
  std::int64_t max_sequence_length = 0;
  std::int64_t d_model = 0;
  double theta = 10000.0;

  EMBER_MODULE(max_sequence_length, d_model, theta)

  /// apply(x, 0).
  template <std::size_t D>
  Tensor<B, D> forward(const Tensor<B, D>& x) const {
    return apply(x, 0);
  }

  /// Rotates x [..., seq, d_model] (rank >= 2; [batch, heads, seq, d] for attention) as if
  /// its first row were at position `start` (for a KV cache: start = tokens already seen).
  /// Throws ShapeError (naming RotaryEncoding) when the last dim is not d_model or
  /// [start, start + seq) leaves [0, max_sequence_length).
  template <std::size_t D>
  Tensor<B, D> apply(const Tensor<B, D>& x, std::int64_t start) const {
    static_assert(D >= 2, "RotaryEncoding: input needs rank >= 2 ([..., seq, d_model])");
    const Shape s = x.shape();
    const std::int64_t seq = s[D - 2], d = s[D - 1];
    if (d != d_model) {
      ember::detail::fail<ShapeError>("RotaryEncoding", "input of shape ", s,
                                      " does not end with d_model ", d_model);
    }
    if (start < 0 || start + seq > max_sequence_length) {
      ember::detail::fail<ShapeError>("RotaryEncoding", "positions [", start, ", ", start + seq,
                                      ") of input ", s, " exceed max_sequence_length ",
                                      max_sequence_length);
    }
    const std::int64_t half = d / 2;
    std::vector<double> cv(static_cast<std::size_t>(seq * half)),
        sv(static_cast<std::size_t>(seq * half));
    for (std::int64_t p = 0; p < seq; ++p) {
      for (std::int64_t i = 0; i < half; ++i) {
        const double freq = std::pow(theta, -static_cast<double>(2 * i) / static_cast<double>(d));
        const double a = static_cast<double>(start + p) * freq;
        cv[static_cast<std::size_t>(p * half + i)] = std::cos(a);
        sv[static_cast<std::size_t>(p * half + i)] = std::sin(a);
      }
    }
    const std::int64_t rows = seq == 0 || half == 0 ? 0 : x.numel() / (seq * d);
    auto cosv =
        Tensor<B, 4>::from_data(TensorData(std::move(cv), Shape{1, seq, half, 1}), x.device())
            .cast(x.dtype());
    auto sinv =
        Tensor<B, 4>::from_data(TensorData(std::move(sv), Shape{1, seq, half, 1}), x.device())
            .cast(x.dtype());
    auto x4 = x.template reshape<4>(std::array<std::int64_t, 4>{rows, seq, half, 2});
    auto x0 = x4.narrow(3, 0, 1), x1 = x4.narrow(3, 1, 1);
    auto r0 = x0.mul(cosv).sub(x1.mul(sinv));
    auto r1 = x0.mul(sinv).add(x1.mul(cosv));
    return Tensor<B, 4>::cat({r0, r1}, 3).template reshape<D>(s);
  }
};

template <Backend B>
RotaryEncoding<B> RotaryEncodingConfig::init(const typename B::Device&) const {
  const char* op = "RotaryEncodingConfig";
  if (d_model <= 0 || d_model % 2 != 0) {
    ember::detail::fail<ValueError>(op, "d_model ", d_model, " must be positive and even");
  }
  if (max_sequence_length <= 0) {
    ember::detail::fail<ValueError>(op, "max_sequence_length ", max_sequence_length,
                                    " must be positive");
  }
  if (!(theta > 0.0)) ember::detail::fail<ValueError>(op, "theta ", theta, " must be positive");
  return RotaryEncoding<B>{max_sequence_length, d_model, theta};
}

EMBER_CONFIG(PositionalEncodingConfig, max_sequence_size, d_model, max_timescale)
EMBER_CONFIG(RotaryEncodingConfig, max_sequence_length, d_model, theta)

}  // namespace ember::nn
