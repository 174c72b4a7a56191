// Transposed convolution layers ConvTranspose1d/2d/3d (Burn's burn-nn ConvTranspose modules
// with PyTorch's parameter names and layouts; torch.nn.ConvTranspose1d/2d/3d).
//
//   auto up = nn::ConvTranspose2dConfig{.channels = {16, 8}, .kernel_size = {2, 2},
//                                       .stride = {2, 2}}.init(device);
//   DTensor<4> y = up.forward(x);            // [N, 16, H, W] -> [N, 8, 2H, 2W]
//
// Parameters: weight [channels_in, channels_out / groups, *kernel] (PyTorch's transposed
// layout), bias [channels_out]. Default init is PyTorch's: U(-b, b), b = 1/sqrt(fan_in) with
// PyTorch's fan_in of this layout, channels_out / groups * prod(kernel_size) (Burn's
// KaimingUniform{gain: 1/sqrt(3)} with the same fan); fan_out = channels_in * prod(kernel).
//
// Output size per dim (PyTorch's ConvTranspose docs):
//   (L - 1) s - 2 p + d (k - 1) + padding_out + 1.
// forward takes [N, C_in, *spatial] or unbatched [C_in, *spatial] and throws ShapeError
// naming the layer for another rank or channel count.
#pragma once

#include <array>
#include <cstdint>
#include <optional>

#include "ember/nn/conv.hpp"

namespace ember::nn {

namespace detail {
constexpr const char* conv_transpose_name(std::size_t n) {
  return n == 1 ? "ConvTranspose1d" : n == 2 ? "ConvTranspose2d" : "ConvTranspose3d";
}
}  // namespace detail

/// An N-d transposed convolution layer; use ConvTranspose1d / 2d / 3d.
template <Backend B, std::size_t N>
struct ConvTranspose {
  /// [channels_in, channels_out / groups, *kernel_size]
  Param<Tensor<B, N + 2>> weight;
  /// [channels_out]
  std::optional<Param<Tensor<B, 1>>> bias;
  std::array<std::int64_t, N> stride{};
  std::array<std::int64_t, N> kernel_size{};
  std::array<std::int64_t, N> dilation{};
  std::int64_t groups = 1;
  std::array<std::int64_t, N> padding{};
  std::array<std::int64_t, N> padding_out{};

  EMBER_MODULE(weight, bias, stride, kernel_size, dilation, groups, padding, padding_out)

  std::int64_t channels_in() const { return weight->dim(0); }
  std::int64_t channels_out() const { return weight->dim(1) * groups; }

  /// [batch, channels_in, *spatial] -> [batch, channels_out, *spatial_out] (or unbatched).
  /// Throws ShapeError (rank, channels, output size < 1).
  template <std::size_t D>
  Tensor<B, D> forward(const Tensor<B, D>& x) const {
    constexpr const char* name = detail::conv_transpose_name(N);
    return detail::with_batch<N>(name, x, [&](const Tensor<B, N + 2>& xb) {
      detail::check_channels(name, xb.shape(), channels_in());
      const ConvTransposeOptions<N> o{stride, padding, padding_out, dilation, groups};
      const auto b = detail::bias_of(bias);
      if constexpr (N == 1) {
        return module::conv_transpose1d(xb, weight.val(), b, o);
      } else if constexpr (N == 2) {
        return module::conv_transpose2d(xb, weight.val(), b, o);
      } else {
        return module::conv_transpose3d(xb, weight.val(), b, o);
      }
    });
  }
};

/// torch.nn.ConvTranspose1d: [batch, channels_in, L] -> [batch, channels_out, L_out].
template <Backend B = Dispatch>
using ConvTranspose1d = ConvTranspose<B, 1>;
/// torch.nn.ConvTranspose2d: [batch, channels_in, H, W] -> [batch, channels_out, H_o, W_o].
template <Backend B = Dispatch>
using ConvTranspose2d = ConvTranspose<B, 2>;
/// torch.nn.ConvTranspose3d: [batch, channels_in, D, H, W] -> [batch, channels_out, ...].
template <Backend B = Dispatch>
using ConvTranspose3d = ConvTranspose<B, 3>;

namespace detail {

template <class B, std::size_t N>
ConvTranspose<B, N> init_conv_transpose(
    const char* config, const std::array<std::int64_t, 2>& channels,
    const std::array<std::int64_t, N>& kernel, const std::array<std::int64_t, N>& stride,
    const std::array<std::int64_t, N>& dilation, std::int64_t groups,
    const std::array<std::int64_t, N>& padding, const std::array<std::int64_t, N>& padding_out,
    bool bias, const Initializer& initializer, const typename B::Device& device) {
  check_conv_config<N>(config, channels[0], channels[1], kernel, stride, dilation, groups);
  check_at_least<N>(config, "padding", padding, 0);
  for (std::size_t i = 0; i < N; ++i) {
    if (padding_out[i] < 0 || (padding_out[i] >= stride[i] && padding_out[i] >= dilation[i])) {
      ember::detail::fail<ValueError>(config, "padding_out ", int_list(padding_out),
                                      " must be >= 0 and smaller than stride ", int_list(stride),
                                      " or dilation ", int_list(dilation));
    }
  }
  ConvTranspose<B, N> out;
  init_conv_params<B, N>(out, initializer, channels[0], channels[1] / groups, kernel, bias,
                         channels[1], device);
  out.stride = stride;
  out.kernel_size = kernel;
  out.dilation = dilation;
  out.groups = groups;
  out.padding = padding;
  out.padding_out = padding_out;
  return out;
}

}  // namespace detail

/// Config of ConvTranspose1d (Burn's ConvTranspose1dConfig; channels = {in, out}).
/// init() throws ValueError for channels, kernel, stride, dilation or groups < 1, groups not
/// dividing both channel counts, padding < 0, or padding_out not smaller than stride or
/// dilation.
struct ConvTranspose1dConfig {
  std::array<std::int64_t, 2> channels{};
  std::int64_t kernel_size = 0;
  std::int64_t stride = 1;
  std::int64_t dilation = 1;
  std::int64_t groups = 1;
  std::int64_t padding = 0;
  std::int64_t padding_out = 0;
  bool bias = true;
  Initializer initializer = detail::default_conv_initializer();

  template <Backend B = Dispatch>
  ConvTranspose1d<B> init(const typename B::Device& device = typename B::Device{}) const {
    return detail::init_conv_transpose<B, 1>("ConvTranspose1dConfig", channels, {kernel_size},
                                             {stride}, {dilation}, groups, {padding}, {padding_out},
                                             bias, initializer, device);
  }
};
EMBER_CONFIG(ConvTranspose1dConfig, channels, kernel_size, stride, dilation, groups, padding,
             padding_out, bias, initializer)

/// Config of ConvTranspose2d (Burn's ConvTranspose2dConfig). init() throws as
/// ConvTranspose1dConfig.
struct ConvTranspose2dConfig {
  std::array<std::int64_t, 2> channels{};
  std::array<std::int64_t, 2> kernel_size{};
  std::array<std::int64_t, 2> stride{1, 1};
  std::array<std::int64_t, 2> dilation{1, 1};
  std::int64_t groups = 1;
  std::array<std::int64_t, 2> padding{0, 0};
  std::array<std::int64_t, 2> padding_out{0, 0};
  bool bias = true;
  Initializer initializer = detail::default_conv_initializer();

  template <Backend B = Dispatch>
  ConvTranspose2d<B> init(const typename B::Device& device = typename B::Device{}) const {
    return detail::init_conv_transpose<B, 2>("ConvTranspose2dConfig", channels, kernel_size, stride,
                                             dilation, groups, padding, padding_out, bias,
                                             initializer, device);
  }
};
EMBER_CONFIG(ConvTranspose2dConfig, channels, kernel_size, stride, dilation, groups, padding,
             padding_out, bias, initializer)

/// Config of ConvTranspose3d (Burn's ConvTranspose3dConfig). init() throws as
/// ConvTranspose1dConfig.
struct ConvTranspose3dConfig {
  std::array<std::int64_t, 2> channels{};
  std::array<std::int64_t, 3> kernel_size{};
  std::array<std::int64_t, 3> stride{1, 1, 1};
  std::array<std::int64_t, 3> dilation{1, 1, 1};
  std::int64_t groups = 1;
  std::array<std::int64_t, 3> padding{0, 0, 0};
  std::array<std::int64_t, 3> padding_out{0, 0, 0};
  bool bias = true;
  Initializer initializer = detail::default_conv_initializer();

  template <Backend B = Dispatch>
  ConvTranspose3d<B> init(const typename B::Device& device = typename B::Device{}) const {
    return detail::init_conv_transpose<B, 3>("ConvTranspose3dConfig", channels, kernel_size, stride,
                                             dilation, groups, padding, padding_out, bias,
                                             initializer, device);
  }
};
EMBER_CONFIG(ConvTranspose3dConfig, channels, kernel_size, stride, dilation, groups, padding,
             padding_out, bias, initializer)

}  // namespace ember::nn
