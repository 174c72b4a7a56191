// Resizing layers Interpolate1d / Interpolate2d (Burn's burn-nn interpolate modules;
// torch.nn.Upsample / torch.nn.functional.interpolate).
//
//   auto up = nn::Interpolate2dConfig{.scale_factor = {{2.0, 2.0}},
//                                     .mode = nn::InterpolateMode::Linear,
//                                     .align_corners = false}.init();
//   DTensor<4> y = up.forward(x);            // [N, C, H, W] -> [N, C, 2H, 2W]
//
// Exactly one of output_size and scale_factor must be set (Burn's rule; ValueError at
// init). With scale_factor the output size is floor(input_size * scale_factor) per dim, and
// the sampling positions are those of that output size (torch's recompute_scale_factor=True;
// torch's default uses the scale factor itself, which differs when in * scale is not an
// integer). Modes (the numerics of module::interpolate, PyTorch's):
//   Nearest  src = min(floor(dst * in / out), in - 1) ("nearest"; align_corners ignored)
//   Linear   (bi)linear, "linear" / "bilinear"
//   Cubic    Keys' cubic convolution with A = -0.75, border-clamped ("bicubic")
// align_corners defaults to true as Burn's (PyTorch's default is false: set it when porting).
// Inputs must be batched ([N, C, L] / [N, C, H, W]); another rank throws ShapeError naming the
// layer. The layers have no parameters: init() takes no device.
// JSON: mode is "Nearest", "Linear" or "Cubic"; output_size / scale_factor may be null.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>

#include "ember/module/module.hpp"
#include "ember/nn/pool.hpp"
#include "ember/tensor/module/interpolate.hpp"

namespace ember::nn {

/// Interpolation of the Interpolate layers (Burn's burn-nn InterpolateMode).
enum class InterpolateMode { Nearest, Linear, Cubic };

/// "Nearest", "Linear", "Cubic".
inline const char* interpolate_mode_name(InterpolateMode m) {
  return m == InterpolateMode::Nearest  ? "Nearest"
         : m == InterpolateMode::Linear ? "Linear"
                                        : "Cubic";
}
/// JSON by name (nlohmann's ADL hooks, templates so that this header needs only json_fwd).
template <class Json>
void to_json(Json& j, const InterpolateMode& m) {
  j = interpolate_mode_name(m);
}
/// Throws ValueError for an unknown name.
template <class Json>
void from_json(const Json& j, InterpolateMode& m) {
  const std::string s = j.is_string() ? j.template get<std::string>() : j.dump();
  for (auto v : {InterpolateMode::Nearest, InterpolateMode::Linear, InterpolateMode::Cubic}) {
    if (s == interpolate_mode_name(v)) {
      m = v;
      return;
    }
  }
  ember::detail::fail<ValueError>("InterpolateMode", "unknown mode ", s,
                                  " (expected Nearest, Linear or Cubic)");
}

namespace detail {

inline ember::InterpolateOptions interpolate_options(InterpolateMode m, bool align_corners) {
  ember::InterpolateOptions o;
  o.mode = m == InterpolateMode::Nearest  ? ember::InterpolateMode::Nearest
           : m == InterpolateMode::Linear ? ember::InterpolateMode::Bilinear
                                          : ember::InterpolateMode::Bicubic;
  o.align_corners = align_corners;
  return o;
}

/// floor(in * scale); throws ValueError naming `layer` when it is < 1.
inline std::int64_t scaled_size(const char* layer, const Shape& x, std::int64_t in, double scale) {
  const auto out = static_cast<std::int64_t>(std::floor(static_cast<double>(in) * scale));
  if (out < 1) {
    ember::detail::fail<ValueError>(layer, "scale_factor ", scale, " gives output size ", out,
                                    " for input of shape ", x);
  }
  return out;
}

template <class Opt>
void check_one_of(const char* config, const Opt& size, bool has_scale) {
  if (size.has_value() == has_scale) {
    ember::detail::fail<ValueError>(config, "exactly one of output_size and scale_factor must be ",
                                    "set (", size.has_value() ? "both are" : "neither is", ")");
  }
}

}  // namespace detail

/// Resizes [batch, channels, length] -> [batch, channels, length_out].
struct Interpolate1d {
  std::optional<std::int64_t> output_size = std::nullopt;
  std::optional<double> scale_factor = std::nullopt;
  InterpolateMode mode = InterpolateMode::Nearest;
  bool align_corners = true;

  EMBER_MODULE(output_size, scale_factor, mode, align_corners)

  /// Throws ShapeError (rank != 3, empty length), ValueError (output length < 1).
  template <class B, std::size_t D>
  Tensor<B, D> forward(const Tensor<B, D>& x) const {
    const Shape s = x.shape();
    if constexpr (D != 3) {
      ember::detail::fail<ShapeError>("Interpolate1d", "input of shape ", s, " has rank ", D,
                                      ", expected rank 3 [batch, channels, length]");
    } else {
      const std::int64_t out =
          output_size ? *output_size
                      : detail::scaled_size("Interpolate1d", s, s[2], scale_factor.value_or(1.0));
      const auto y =
          module::interpolate(x.template reshape<4>(Shape{s[0], s[1], 1, s[2]}), {1, out},
                              detail::interpolate_options(mode, align_corners));
      return y.template reshape<3>(Shape{s[0], s[1], out});
    }
  }
};

/// Config of Interpolate1d (Burn's Interpolate1dConfig). init() throws ValueError unless
/// exactly one of output_size / scale_factor is set, or for output_size < 1 or scale <= 0.
struct Interpolate1dConfig {
  std::optional<std::int64_t> output_size = std::nullopt;
  std::optional<double> scale_factor = std::nullopt;
  InterpolateMode mode = InterpolateMode::Nearest;
  bool align_corners = true;

  Interpolate1d init() const {
    detail::check_one_of("Interpolate1dConfig", output_size, scale_factor.has_value());
    if (output_size && *output_size < 1) {
      ember::detail::fail<ValueError>("Interpolate1dConfig", "output_size ", *output_size,
                                      " must be >= 1");
    }
    if (scale_factor && !(*scale_factor > 0)) {
      ember::detail::fail<ValueError>("Interpolate1dConfig", "scale_factor ", *scale_factor,
                                      " must be > 0");
    }
    return Interpolate1d{output_size, scale_factor, mode, align_corners};
  }
};

/// Resizes [batch, channels, H, W] -> [batch, channels, H_out, W_out].
struct Interpolate2d {
  std::optional<std::array<std::int64_t, 2>> output_size = std::nullopt;
  std::optional<std::array<double, 2>> scale_factor = std::nullopt;
  InterpolateMode mode = InterpolateMode::Nearest;
  bool align_corners = true;

  EMBER_MODULE(output_size, scale_factor, mode, align_corners)

  /// Throws ShapeError (rank != 4, empty H or W), ValueError (an output size < 1).
  template <class B, std::size_t D>
  Tensor<B, D> forward(const Tensor<B, D>& x) const {
    const Shape s = x.shape();
    if constexpr (D != 4) {
      ember::detail::fail<ShapeError>("Interpolate2d", "input of shape ", s, " has rank ", D,
                                      ", expected rank 4 [batch, channels, height, width]");
    } else {
      std::array<std::int64_t, 2> out{};
      if (output_size) {
        out = *output_size;
      } else {
        const auto sc = scale_factor.value_or(std::array<double, 2>{1.0, 1.0});
        out = {detail::scaled_size("Interpolate2d", s, s[2], sc[0]),
               detail::scaled_size("Interpolate2d", s, s[3], sc[1])};
      }
      return module::interpolate(x, out, detail::interpolate_options(mode, align_corners));
    }
  }
};

/// Config of Interpolate2d (Burn's Interpolate2dConfig). init() throws ValueError unless
/// exactly one of output_size / scale_factor is set, or for a size < 1 or a scale <= 0.
struct Interpolate2dConfig {
  std::optional<std::array<std::int64_t, 2>> output_size = std::nullopt;
  std::optional<std::array<double, 2>> scale_factor = std::nullopt;
  InterpolateMode mode = InterpolateMode::Nearest;
  bool align_corners = true;

  Interpolate2d init() const {
    constexpr const char* cfg = "Interpolate2dConfig";
    detail::check_one_of(cfg, output_size, scale_factor.has_value());
    if (output_size) detail::check_at_least<2>(cfg, "output_size", *output_size, 1);
    if (scale_factor && !((*scale_factor)[0] > 0 && (*scale_factor)[1] > 0)) {
      ember::detail::fail<ValueError>(cfg, "scale_factor [", (*scale_factor)[0], ", ",
                                      (*scale_factor)[1], "] must be > 0");
    }
    return Interpolate2d{output_size, scale_factor, mode, align_corners};
  }
};

EMBER_CONFIG(Interpolate1dConfig, output_size, scale_factor, mode, align_corners)
EMBER_CONFIG(Interpolate2dConfig, output_size, scale_factor, mode, align_corners)

}  // namespace ember::nn
