// PixelShuffle / PixelUnshuffle (torch.nn.PixelShuffle / PixelUnshuffle; Shi et al. 2016,
// "Real-Time Single Image and Video Super-Resolution Using an Efficient Sub-Pixel CNN").
// Burn has no such layer; this follows PyTorch. Composed of reshape and permute.
//
//   auto ps = nn::PixelShuffleConfig{.upscale_factor = 2}.init();
//   DTensor<4> y = ps.forward(x);            // [N, 4C, H, W] -> [N, C, 2H, 2W]
//
// PixelShuffle(r):   [*, C r^2, H, W] -> [*, C, H r, W r],
//                    out[..., c, h r + i, w r + j] = in[..., c r^2 + i r + j, h, w]
// PixelUnshuffle(r): the inverse, [*, C, H r, W r] -> [*, C r^2, H, W].
// Any number of leading dims (rank >= 3). No parameters: init() takes no device.
#pragma once

#include <cstdint>

#include "ember/core/error.hpp"
#include "ember/module/config_fwd.hpp"
#include "ember/module/module.hpp"
#include "ember/tensor/tensor.hpp"

namespace ember::nn {

namespace detail {

/// Product of the dims before the last three.
inline std::int64_t lead_numel(const Shape& s) {
  std::int64_t m = 1;
  for (std::size_t i = 0; i + 3 < s.rank(); ++i) m *= s[i];
  return m;
}

template <std::size_t D>
void check_rank_at_least3(const char* layer, const Shape& s) {
  if constexpr (D < 3) {
    ember::detail::fail<ShapeError>(layer, "input of shape ", s, " has rank ", D,
                                    ", expected rank >= 3 [*, channels, height, width]");
  }
}

}  // namespace detail

/// Rearranges channels into space: [*, C r^2, H, W] -> [*, C, H r, W r].
struct PixelShuffle {
  std::int64_t upscale_factor = 1;

  EMBER_MODULE(upscale_factor)

  /// Throws ShapeError naming the layer when rank < 3 or the channels are not a multiple of
  /// upscale_factor^2.
  template <class B, std::size_t D>
  Tensor<B, D> forward(const Tensor<B, D>& x) const {
    const Shape s = x.shape();
    detail::check_rank_at_least3<D>("PixelShuffle", s);
    if constexpr (D >= 3) {
      const std::int64_t r = upscale_factor, c = s[D - 3], h = s[D - 2], w = s[D - 1];
      if (c % (r * r) != 0) {
        ember::detail::fail<ShapeError>("PixelShuffle", "input of shape ", s, " has ", c,
                                        " channels, not a multiple of upscale_factor^2 = ", r * r);
      }
      const std::int64_t m = detail::lead_numel(s), co = c / (r * r);
      Shape out = s;
      out[D - 3] = co;
      out[D - 2] = h * r;
      out[D - 1] = w * r;
      return x.template reshape<6>(Shape{m, co, r, r, h, w})
          .permute({0, 1, 4, 2, 5, 3})
          .template reshape<D>(out);
    }
  }
};

/// Config of PixelShuffle. init() throws ValueError for upscale_factor < 1.
struct PixelShuffleConfig {
  std::int64_t upscale_factor = 1;

  PixelShuffle init() const {
    if (upscale_factor < 1) {
      ember::detail::fail<ValueError>("PixelShuffleConfig", "upscale_factor ", upscale_factor,
                                      " must be >= 1");
    }
    return PixelShuffle{upscale_factor};
  }
};
EMBER_CONFIG(PixelShuffleConfig, upscale_factor)

/// Rearranges space into channels: [*, C, H r, W r] -> [*, C r^2, H, W].
struct PixelUnshuffle {
  std::int64_t downscale_factor = 1;

  EMBER_MODULE(downscale_factor)

  /// Throws ShapeError naming the layer when rank < 3 or H or W is not a multiple of
  /// downscale_factor.
  template <class B, std::size_t D>
  Tensor<B, D> forward(const Tensor<B, D>& x) const {
    const Shape s = x.shape();
    detail::check_rank_at_least3<D>("PixelUnshuffle", s);
    if constexpr (D >= 3) {
      const std::int64_t r = downscale_factor, c = s[D - 3], h = s[D - 2], w = s[D - 1];
      if (h % r != 0 || w % r != 0) {
        ember::detail::fail<ShapeError>("PixelUnshuffle", "input of shape ", s,
                                        ": height and width must be multiples of "
                                        "downscale_factor ",
                                        r);
      }
      const std::int64_t m = detail::lead_numel(s), ho = h / r, wo = w / r;
      Shape out = s;
      out[D - 3] = c * r * r;
      out[D - 2] = ho;
      out[D - 1] = wo;
      return x.template reshape<6>(Shape{m, c, ho, r, wo, r})
          .permute({0, 1, 3, 5, 2, 4})
          .template reshape<D>(out);
    }
  }
};

/// Config of PixelUnshuffle. init() throws ValueError for downscale_factor < 1.
struct PixelUnshuffleConfig {
  std::int64_t downscale_factor = 1;

  PixelUnshuffle init() const {
    if (downscale_factor < 1) {
      ember::detail::fail<ValueError>("PixelUnshuffleConfig", "downscale_factor ", downscale_factor,
                                      " must be >= 1");
    }
    return PixelUnshuffle{downscale_factor};
  }
};
EMBER_CONFIG(PixelUnshuffleConfig, downscale_factor)

}  // namespace ember::nn
