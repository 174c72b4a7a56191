// Padding of the spatial layers (Burn's PaddingConfig1d/2d/3d) and the input checks they
// share.
//
//   nn::PaddingConfig2d::valid()              no padding (the default)
//   nn::PaddingConfig2d::same()               output size ceil(input / stride) per dim
//   nn::PaddingConfig2d::explicit_(1, 2)      1 row top and bottom, 2 columns left and right
//   nn::PaddingConfig2d::explicit_(1, 0, 2, 1)  (top, left, bottom, right), Burn's order
//
// "Same" padding of one dim (Burn's calculate_same_padding with the dilated kernel, which is
// also PyTorch's padding="same" for stride 1 and ONNX's SAME_UPPER): out = ceil(in / s),
// total = max((out - 1) s + d (k - 1) + 1 - in, 0), start = total / 2, end = total - start
// (the odd one at the end). Burn ignores the dilation there; Ember uses the dilated kernel
// so that the output size really is ceil(in / s).
// Asymmetric padding (explicit or from "same") is applied to the input with Tensor::pad
// before the unpadded op (zeros; -inf for max pooling).
//
// JSON (EMBER_CONFIG): "Valid", "Same", {"Explicit": [start..., end...]} (Burn's serde form;
// a list of N values is read as symmetric padding).
#pragma once

#include <array>
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <utility>
#include <vector>

#include "ember/core/error.hpp"
#include "ember/module/config_fwd.hpp"
#include "ember/tensor/tensor.hpp"

namespace ember::nn {

/// Padding of an N-d spatial layer: Valid, Same or Explicit (start and end per dim).
template <std::size_t N>
struct PaddingConfig {
  enum class Kind { Valid, Same, Explicit };
  Kind kind = Kind::Valid;
  /// Explicit only: padding before (top/left/front) and after each spatial dim.
  std::array<std::int64_t, N> start{};
  std::array<std::int64_t, N> end{};

  /// No padding (Burn's PaddingConfig::Valid).
  static PaddingConfig valid() { return {}; }
  /// Output size ceil(input / stride) per dim (see the file comment).
  static PaddingConfig same() { return {Kind::Same, {}, {}}; }
  /// N values: symmetric padding per dim (PyTorch's padding=(...), Burn 0.20's Explicit);
  /// 2N values: starts then ends (Burn's Explicit(top, left, bottom, right)).
  /// Throws ValueError for a negative value.
  template <class... I>
  requires(sizeof...(I) == N || sizeof...(I) == 2 * N) static PaddingConfig explicit_(I... values) {
    const std::array<std::int64_t, sizeof...(I)> v{static_cast<std::int64_t>(values)...};
    PaddingConfig p{Kind::Explicit, {}, {}};
    for (std::size_t i = 0; i < N; ++i) {
      p.start[i] = v[i];
      p.end[i] = sizeof...(I) == N ? v[i] : v[N + i];
    }
    p.check("PaddingConfig");
    return p;
  }

  /// Throws ValueError (naming `layer`) for negative explicit padding.
  void check(const char* layer) const {
    for (std::size_t i = 0; i < N; ++i) {
      if (start[i] < 0 || end[i] < 0) {
        ember::detail::fail<ValueError>(layer, "explicit padding must be >= 0, got start ",
                                        start[i], " and end ", end[i], " in spatial dim ", i);
      }
    }
  }

  /// (start, end) padding of an input of spatial size `size` for a kernel `kernel` with
  /// `stride` and `dilation` (see the file comment for Same).
  std::pair<std::array<std::int64_t, N>, std::array<std::int64_t, N>> resolve(
      const std::array<std::int64_t, N>& size, const std::array<std::int64_t, N>& kernel,
      const std::array<std::int64_t, N>& stride,
      const std::array<std::int64_t, N>& dilation) const {
    std::array<std::int64_t, N> lo{}, hi{};
    if (kind == Kind::Explicit) return {start, end};
    if (kind == Kind::Same) {
      for (std::size_t i = 0; i < N; ++i) {
        const std::int64_t out = (size[i] + stride[i] - 1) / stride[i];
        std::int64_t total = (out - 1) * stride[i] + dilation[i] * (kernel[i] - 1) + 1 - size[i];
        if (total < 0) total = 0;
        lo[i] = total / 2;
        hi[i] = total - lo[i];
      }
    }
    return {lo, hi};
  }

  bool operator==(const PaddingConfig&) const = default;
};

using PaddingConfig1d = PaddingConfig<1>;
using PaddingConfig2d = PaddingConfig<2>;
using PaddingConfig3d = PaddingConfig<3>;

template <class Json, std::size_t N>
void to_json(Json& j, const PaddingConfig<N>& p) {
  using K = typename PaddingConfig<N>::Kind;
  if (p.kind == K::Valid) {
    j = "Valid";
  } else if (p.kind == K::Same) {
    j = "Same";
  } else {
    std::vector<std::int64_t> v(p.start.begin(), p.start.end());
    v.insert(v.end(), p.end.begin(), p.end.end());
    j = Json{{"Explicit", v}};
  }
}

/// Reads "Valid", "Same" or {"Explicit": [N or 2N values]}; throws ValueError otherwise.
template <class Json, std::size_t N>
void from_json(const Json& j, PaddingConfig<N>& p) {
  if (j.is_string() && j.template get<std::string>() == "Valid") {
    p = PaddingConfig<N>::valid();
    return;
  }
  if (j.is_string() && j.template get<std::string>() == "Same") {
    p = PaddingConfig<N>::same();
    return;
  }
  std::vector<std::int64_t> v;
  if (j.is_object() && j.size() == 1 && j.contains("Explicit") &&
      detail::read_config_value(j.at("Explicit"), v).empty()) {
    if (v.size() == N || v.size() == 2 * N) {
      p.kind = PaddingConfig<N>::Kind::Explicit;
      for (std::size_t i = 0; i < N; ++i) {
        p.start[i] = v[i];
        p.end[i] = v.size() == N ? v[i] : v[N + i];
      }
      p.check("PaddingConfig");
      return;
    }
  }
  ember::detail::fail<ValueError>("PaddingConfig",
                                  "expected \"Valid\", \"Same\" or {\"Explicit\": [", N, " or ",
                                  2 * N, " values]}, got ", j.dump());
}

namespace detail {

/// "[batch, channels, length]" and the like, for error messages.
template <std::size_t N>
constexpr const char* spatial_layout() {
  if constexpr (N == 1) return "[batch, channels, length]";
  if constexpr (N == 2) return "[batch, channels, height, width]";
  if constexpr (N == 3) return "[batch, channels, depth, height, width]";
}

template <std::size_t N>
std::string int_list(const std::array<std::int64_t, N>& a) {
  std::string s = "[";
  for (std::size_t i = 0; i < N; ++i) s += (i ? ", " : "") + std::to_string(a[i]);
  return s + "]";
}

/// Calls f on the batched form of `x` (rank N + 2) and returns its result. An unbatched input
/// of rank N + 1 ([channels, *spatial], accepted by PyTorch's layers) is given a batch dim of
/// 1, which is removed from the result. Throws ShapeError naming `layer` for another rank.
template <std::size_t N, class B, std::size_t D, class F>
Tensor<B, D> with_batch(const char* layer, const Tensor<B, D>& x, F&& f) {
  if constexpr (D == N + 2) {
    return f(x);
  } else if constexpr (D == N + 1) {
    return f(x.template unsqueeze_dim<D + 1>(0)).template squeeze_dim<D>(0);
  } else {
    ember::detail::fail<ShapeError>(layer, "input of shape ", x.shape(), " has rank ", D,
                                    ", expected rank ", N + 2, " ", spatial_layout<N>(),
                                    " or rank ", N + 1, " (unbatched)");
  }
}

/// Throws ShapeError naming `layer` when dim 1 of the batched input is not `channels`.
inline void check_channels(const char* layer, const Shape& x, std::int64_t channels,
                           const char* what = "channels_in") {
  if (x[1] != channels) {
    ember::detail::fail<ShapeError>(layer, "input of shape ", x, " has ", x[1],
                                    " channels, expected ", what, " = ", channels);
  }
}

/// The spatial dims of a batched [N, C, *spatial] shape.
template <std::size_t N>
std::array<std::int64_t, N> spatial_of(const Shape& s) {
  std::array<std::int64_t, N> a{};
  for (std::size_t i = 0; i < N; ++i) a[i] = s[2 + i];
  return a;
}

/// Tensor::pad argument (last dim first) for per-dim (start, end) padding.
template <std::size_t N>
std::vector<std::int64_t> pad_arg(const std::array<std::int64_t, N>& lo,
                                  const std::array<std::int64_t, N>& hi) {
  std::vector<std::int64_t> v;
  for (std::size_t i = N; i-- > 0;) {
    v.push_back(lo[i]);
    v.push_back(hi[i]);
  }
  return v;
}

template <std::size_t N>
std::array<std::int64_t, N> filled(std::int64_t v) {
  std::array<std::int64_t, N> a{};
  a.fill(v);
  return a;
}

/// Throws ValueError naming `layer` when a value of `a` is < `min`.
template <std::size_t N>
void check_at_least(const char* layer, const char* what, const std::array<std::int64_t, N>& a,
                    std::int64_t min) {
  for (auto v : a) {
    if (v < min) {
      ember::detail::fail<ValueError>(layer, what, " ", int_list(a), " must be >= ", min);
    }
  }
}

}  // namespace detail
}  // namespace ember::nn
