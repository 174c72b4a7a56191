// Deformable 2-d convolution layer DeformConv2d (Burn's burn-nn DeformConv2d;
// torchvision.ops.DeformConv2d's parameters; Dai et al. 2017, modulated v2 Zhu et al. 2019).
//
//   auto dc = nn::DeformConv2dConfig{.channels = {8, 16}, .kernel_size = {3, 3},
//                                    .padding = nn::PaddingConfig2d::explicit_(1, 1)}.init(device);
//   DTensor<4> y = dc.forward(x, offset, mask);   // [N, 8, H, W] -> [N, 16, H, W]
//
// Parameters: weight [channels_out, channels_in / weight_groups, kh, kw], bias [channels_out].
// Default init as Conv2d: U(-b, b), b = 1/sqrt(channels_in / weight_groups * kh * kw).
//
// forward(x [N, C_in, H, W], offset [N, 2 * offset_groups * kh * kw, H_out, W_out],
// mask [N, offset_groups * kh * kw, H_out, W_out] or none) -> [N, C_out, H_out, W_out];
// offsets are (dy, dx) pairs per kernel position, sampled bilinearly, zero outside the
// (padded) input. Throws ShapeError naming the layer for a channel mismatch, and the op's
// ShapeError for offset / mask shapes.
#pragma once

#include <array>
#include <cstdint>
#include <optional>

#include "ember/nn/conv.hpp"

namespace ember::nn {

template <Backend B = Dispatch>
struct DeformConv2d {
  /// [channels_out, channels_in / weight_groups, kh, kw]
  Param<Tensor<B, 4>> weight;
  /// [channels_out]
  std::optional<Param<Tensor<B, 1>>> bias;
  std::array<std::int64_t, 2> stride{1, 1};
  std::array<std::int64_t, 2> kernel_size{};
  std::array<std::int64_t, 2> dilation{1, 1};
  std::int64_t weight_groups = 1;
  std::int64_t offset_groups = 1;
  PaddingConfig2d padding;

  EMBER_MODULE(weight, bias, stride, kernel_size, dilation, weight_groups, offset_groups, padding)

  std::int64_t channels_in() const { return weight->dim(1) * weight_groups; }
  std::int64_t channels_out() const { return weight->dim(0); }

  /// See the file comment. Throws ShapeError (channels, offset or mask shape, output size).
  Tensor<B, 4> forward(const Tensor<B, 4>& x, const Tensor<B, 4>& offset,
                       const std::optional<Tensor<B, 4>>& mask = std::nullopt) const {
    detail::check_channels("DeformConv2d", x.shape(), channels_in());
    auto [lo, hi] =
        padding.resolve(detail::spatial_of<2>(x.shape()), kernel_size, stride, dilation);
    DeformConvOptions o{stride, lo, dilation, weight_groups, offset_groups};
    Tensor<B, 4> in = x;
    if (lo != hi) {
      in = x.pad(detail::pad_arg<2>(lo, hi));
      o.padding = {0, 0};
    }
    return module::deform_conv2d(in, offset, weight.val(), mask, detail::bias_of(bias), o);
  }
};

/// Config of DeformConv2d (Burn's DeformConv2dConfig; channels = {in, out}). init() throws
/// ValueError for channels, kernel, stride, dilation or groups < 1, weight_groups not
/// dividing both channel counts, offset_groups not dividing channels_in, or negative explicit
/// padding.
struct DeformConv2dConfig {
  std::array<std::int64_t, 2> channels{};
  std::array<std::int64_t, 2> kernel_size{};
  std::array<std::int64_t, 2> stride{1, 1};
  std::array<std::int64_t, 2> dilation{1, 1};
  std::int64_t weight_groups = 1;
  std::int64_t offset_groups = 1;
  PaddingConfig2d padding = PaddingConfig2d::valid();
  bool bias = true;
  Initializer initializer = detail::default_conv_initializer();

  template <Backend B = Dispatch>
  DeformConv2d<B> init(const typename B::Device& device = typename B::Device{}) const {
    constexpr const char* cfg = "DeformConv2dConfig";
    detail::check_conv_config<2>(cfg, channels[0], channels[1], kernel_size, stride, dilation,
                                 weight_groups);
    if (offset_groups < 1 || channels[0] % offset_groups != 0) {
      ember::detail::fail<ValueError>(cfg, "offset_groups ", offset_groups,
                                      " must be >= 1 and divide channels_in ", channels[0]);
    }
    padding.check(cfg);
    DeformConv2d<B> out;
    detail::init_conv_params<B, 2>(out, initializer, channels[1], channels[0] / weight_groups,
                                   kernel_size, bias, channels[1], device);
    out.stride = stride;
    out.kernel_size = kernel_size;
    out.dilation = dilation;
    out.weight_groups = weight_groups;
    out.offset_groups = offset_groups;
    out.padding = padding;
    return out;
  }
};
EMBER_CONFIG(DeformConv2dConfig, channels, kernel_size, stride, dilation, weight_groups,
             offset_groups, padding, bias, initializer)

}  // namespace ember::nn
