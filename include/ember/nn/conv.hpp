// Convolution layers Conv1d, Conv2d, Conv3d (Burn's burn-nn conv modules with PyTorch's
// parameter names and layouts; torch.nn.Conv1d/2d/3d).
//
//   auto conv = nn::Conv2dConfig{.channels = {3, 16}, .kernel_size = {3, 3},
//                                .padding = nn::PaddingConfig2d::same()}.init(device);
//   DTensor<4> y = conv.forward(x);          // [N, 3, H, W] -> [N, 16, H, W]
//
// Parameters (PyTorch state_dict names): weight [channels_out, channels_in / groups, *kernel],
// bias [channels_out] (when config.bias). Default init is PyTorch's: U(-b, b) with
// b = 1/sqrt(fan_in), fan_in = channels_in / groups * prod(kernel_size), for both (Burn's
// KaimingUniform{gain: 1/sqrt(3), fan_out_only: false}). Initializers that use fan_out get
// PyTorch's: channels_out * prod(kernel_size).
//
// forward takes the batched input [N, C_in, *spatial] or an unbatched [C_in, *spatial]
// (as PyTorch) and throws ShapeError naming the layer ("[Conv2d] ...") for another rank or
// channel count; the output size per dim is floor((L + p_start + p_end - d (k - 1) - 1) / s) + 1
// (ShapeError from the op when it is < 1).
//
// After ember::quant::quantize the weight is held quantized in `qweight`: a Conv2d with int8
// symmetric weights (per tensor or per output channel) and calibrated `input_quant` runs on
// the integers (quantized_conv2d); other quantized convolutions compute in f32 on the
// dequantized weight (and the fake-quantized input when it is calibrated).
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <optional>

#include "ember/dispatch/dispatch.hpp"
#include "ember/module/config_fwd.hpp"
#include "ember/module/initializer.hpp"
#include "ember/module/module.hpp"
#include "ember/nn/padding.hpp"
#include "ember/nn/quantized_weight.hpp"
#include "ember/tensor/module/conv.hpp"

namespace ember::nn {

namespace detail {

/// PyTorch's and Burn's default conv init: U(-1/sqrt(fan_in), 1/sqrt(fan_in)).
inline Initializer default_conv_initializer() {
  return Initializer::kaiming_uniform(1.0 / std::sqrt(3.0), false);
}

template <std::size_t N>
std::int64_t prod(const std::array<std::int64_t, N>& a) {
  std::int64_t p = 1;
  for (auto v : a) p *= v;
  return p;
}

template <class B>
std::optional<Tensor<B, 1>> bias_of(const std::optional<Param<Tensor<B, 1>>>& bias) {
  if (!bias) return std::nullopt;
  return bias->val();
}

/// Checks shared by the conv configs; throws ValueError naming `config`.
template <std::size_t N>
void check_conv_config(const char* config, std::int64_t c_in, std::int64_t c_out,
                       const std::array<std::int64_t, N>& kernel,
                       const std::array<std::int64_t, N>& stride,
                       const std::array<std::int64_t, N>& dilation, std::int64_t groups) {
  using ember::detail::fail;
  if (c_in < 1 || c_out < 1) {
    fail<ValueError>(config, "channels must be >= 1, got ", c_in, " in and ", c_out, " out");
  }
  check_at_least<N>(config, "kernel_size", kernel, 1);
  check_at_least<N>(config, "stride", stride, 1);
  check_at_least<N>(config, "dilation", dilation, 1);
  if (groups < 1) fail<ValueError>(config, "groups ", groups, " must be >= 1");
  if (c_in % groups != 0 || c_out % groups != 0) {
    fail<ValueError>(config, "groups ", groups, " must divide both channels_in ", c_in,
                     " and channels_out ", c_out);
  }
}

constexpr const char* conv_name(std::size_t n) {
  return n == 1 ? "Conv1d" : n == 2 ? "Conv2d" : "Conv3d";
}

}  // namespace detail

/// An N-d convolution layer (N = 1, 2, 3); use the aliases Conv1d / Conv2d / Conv3d.
template <Backend B, std::size_t N>
struct Conv {
  /// [channels_out, channels_in / groups, *kernel_size]
  Param<Tensor<B, N + 2>> weight;
  /// [channels_out]
  std::optional<Param<Tensor<B, 1>>> bias;
  /// The quantized weight (ember::quant::quantize), when `weight` is empty: dequantized for
  /// each forward, except in a calibrated Conv2d with int8 symmetric weights.
  std::optional<QuantizedWeight<B>> qweight;
  /// Static quantization of the input (calibrated by ember::quant::quantize), with qweight:
  /// a Conv2d with int8 symmetric weights quantizes its input by it and runs on the
  /// integers; other convolutions compute on the fake-quantized input.
  std::optional<ActivationQuant> input_quant;
  /// Calibration hook (ember::quant::prepare): sees each forward's input.
  std::shared_ptr<InputObserver> input_observer;
  std::array<std::int64_t, N> stride{};
  std::array<std::int64_t, N> kernel_size{};
  std::array<std::int64_t, N> dilation{};
  std::int64_t groups = 1;
  PaddingConfig<N> padding;

  EMBER_MODULE(weight, bias, qweight, input_quant, input_observer, stride, kernel_size, dilation,
               groups, padding)

  /// Whether the quantized weight fits the integer convolution (int8 symmetric, per tensor or
  /// per output channel).
  bool integer_weights() const {
    if (!qweight) return false;
    const QuantScheme& s = qweight->scheme;
    const Shape& w = qweight->shape;
    return s.value == QuantValue::Int8 && s.mode == QuantMode::Symmetric &&
           (s.level == QuantLevel::Tensor || (s.level == QuantLevel::Channel && s.axis == 0)) &&
           w.numel() / w[0] <= ir::kMaxQuantizedLinearIn;
  }

  /// The weight's shape (also when quantized).
  Shape weight_shape() const { return qweight ? qweight->shape : weight->shape(); }
  std::int64_t channels_in() const { return weight_shape()[1] * groups; }
  std::int64_t channels_out() const { return weight_shape()[0]; }

  /// [batch, channels_in, *spatial] -> [batch, channels_out, *spatial_out] (or the same
  /// without the batch dim). Throws ShapeError (rank, channels, output size < 1).
  template <std::size_t D>
  Tensor<B, D> forward(const Tensor<B, D>& x) const {
    constexpr const char* name = detail::conv_name(N);
    return detail::with_batch<N>(name, x, [&](const Tensor<B, N + 2>& batched) {
      // A quantized layer computes in f32: under Autocast a lower-precision input goes up.
      const Tensor<B, N + 2> xb = qweight ? ember::detail::autocast_widen(batched) : batched;
      detail::check_channels(name, xb.shape(), channels_in());
      if (qweight && xb.dtype() != DType::F32) {
        ember::detail::fail<DTypeError>(name, "input of dtype ", xb.dtype(), ": a quantized ", name,
                                        " (", qweight->scheme.to_string(), ") takes f32 input");
      }
      auto [lo, hi] =
          padding.resolve(detail::spatial_of<N>(xb.shape()), kernel_size, stride, dilation);
      ConvOptions<N> o{stride, lo, dilation, groups};
      // A calibrated conv2d with int8 symmetric weights runs on the integers; other
      // quantized convolutions compute on the fake-quantized input.
      const bool integer = N == 2 && qweight && input_quant && integer_weights();
      Tensor<B, N + 2> in =
          integer ? xb : observed_input(xb, input_observer, qweight ? input_quant : std::nullopt);
      if (lo != hi) {
        in = in.pad(detail::pad_arg<N>(lo, hi));
        o.padding = detail::filled<N>(0);
      }
      const auto b = detail::bias_of(bias);
      if constexpr (N == 2) {
        if (integer) {
          return quantized_conv2d(in, *qweight->checked(), qweight->shape, b, o, *input_quant);
        }
      }
      const Tensor<B, N + 2> w = weight_value<N + 2>(weight, qweight);
      if constexpr (N == 1) {
        return module::conv1d(in, w, b, o);
      } else if constexpr (N == 2) {
        return module::conv2d(in, w, b, o);
      } else {
        return module::conv3d(in, w, b, o);
      }
    });
  }
};

/// 1-d convolution (torch.nn.Conv1d): [batch, channels_in, length] -> [batch, channels_out, L_out].
template <Backend B = Dispatch>
using Conv1d = Conv<B, 1>;
/// 2-d convolution (torch.nn.Conv2d): [batch, channels_in, H, W] -> [batch, channels_out, H_o,
/// W_o].
template <Backend B = Dispatch>
using Conv2d = Conv<B, 2>;
/// 3-d convolution (torch.nn.Conv3d): [batch, channels_in, D, H, W] -> [batch, channels_out, ...].
template <Backend B = Dispatch>
using Conv3d = Conv<B, 3>;

namespace detail {

/// Sets layer.weight [w0, w1, *kernel] and, with `bias`, layer.bias [n_bias], drawn from
/// `initializer` with PyTorch's fans of that layout: fan_in = w1 * prod(kernel), fan_out =
/// w0 * prod(kernel).
template <class B, std::size_t N, class Layer>
void init_conv_params(Layer& layer, const Initializer& initializer, std::int64_t w0,
                      std::int64_t w1, const std::array<std::int64_t, N>& kernel, bool bias,
                      std::int64_t n_bias, const typename B::Device& device) {
  const std::int64_t k = prod(kernel);
  const std::int64_t fan_in = w1 * k;
  const std::int64_t fan_out = w0 * k;
  Shape ws{w0, w1};
  for (auto v : kernel) ws.dims.push_back(v);
  layer.weight = Param<Tensor<B, N + 2>>(initializer.init<B, N + 2>(ws, device, fan_in, fan_out));
  if (bias) {
    layer.bias =
        Param<Tensor<B, 1>>(initializer.init<B, 1>(Shape{n_bias}, device, fan_in, fan_out));
  }
}

template <class B, std::size_t N>
Conv<B, N> init_conv(const char* config, std::int64_t c_in, std::int64_t c_out,
                     const std::array<std::int64_t, N>& kernel,
                     const std::array<std::int64_t, N>& stride,
                     const std::array<std::int64_t, N>& dilation, std::int64_t groups,
                     const PaddingConfig<N>& padding, bool bias, const Initializer& initializer,
                     const typename B::Device& device) {
  check_conv_config<N>(config, c_in, c_out, kernel, stride, dilation, groups);
  padding.check(config);
  Conv<B, N> out;
  init_conv_params<B, N>(out, initializer, c_out, c_in / groups, kernel, bias, c_out, device);
  out.stride = stride;
  out.kernel_size = kernel;
  out.dilation = dilation;
  out.groups = groups;
  out.padding = padding;
  return out;
}

}  // namespace detail

/// Config of Conv1d (Burn's Conv1dConfig). init() throws ValueError for channels, kernel,
/// stride, dilation or groups < 1, groups not dividing both channel counts, or negative
/// explicit padding.
struct Conv1dConfig {
  std::int64_t channels_in = 0;
  std::int64_t channels_out = 0;
  std::int64_t kernel_size = 0;
  std::int64_t stride = 1;
  std::int64_t dilation = 1;
  std::int64_t groups = 1;
  PaddingConfig1d padding = PaddingConfig1d::valid();
  bool bias = true;
  Initializer initializer = detail::default_conv_initializer();

  template <Backend B = Dispatch>
  Conv1d<B> init(const typename B::Device& device = typename B::Device{}) const {
    return detail::init_conv<B, 1>("Conv1dConfig", channels_in, channels_out, {kernel_size},
                                   {stride}, {dilation}, groups, padding, bias, initializer,
                                   device);
  }
};
EMBER_CONFIG(Conv1dConfig, channels_in, channels_out, kernel_size, stride, dilation, groups,
             padding, bias, initializer)

/// Config of Conv2d (Burn's Conv2dConfig; channels = {in, out}). init() throws as
/// Conv1dConfig.
struct Conv2dConfig {
  std::array<std::int64_t, 2> channels{};
  std::array<std::int64_t, 2> kernel_size{};
  std::array<std::int64_t, 2> stride{1, 1};
  std::array<std::int64_t, 2> dilation{1, 1};
  std::int64_t groups = 1;
  PaddingConfig2d padding = PaddingConfig2d::valid();
  bool bias = true;
  Initializer initializer = detail::default_conv_initializer();

  template <Backend B = Dispatch>
  Conv2d<B> init(const typename B::Device& device = typename B::Device{}) const {
    return detail::init_conv<B, 2>("Conv2dConfig", channels[0], channels[1], kernel_size, stride,
                                   dilation, groups, padding, bias, initializer, device);
  }
};
EMBER_CONFIG(Conv2dConfig, channels, kernel_size, stride, dilation, groups, padding, bias,
             initializer)

/// Config of Conv3d (Burn's Conv3dConfig; channels = {in, out}). init() throws as
/// Conv1dConfig.
struct Conv3dConfig {
  std::array<std::int64_t, 2> channels{};
  std::array<std::int64_t, 3> kernel_size{};
  std::array<std::int64_t, 3> stride{1, 1, 1};
  std::array<std::int64_t, 3> dilation{1, 1, 1};
  std::int64_t groups = 1;
  PaddingConfig3d padding = PaddingConfig3d::valid();
  bool bias = true;
  Initializer initializer = detail::default_conv_initializer();

  template <Backend B = Dispatch>
  Conv3d<B> init(const typename B::Device& device = typename B::Device{}) const {
    return detail::init_conv<B, 3>("Conv3dConfig", channels[0], channels[1], kernel_size, stride,
                                   dilation, groups, padding, bias, initializer, device);
  }
};
EMBER_CONFIG(Conv3dConfig, channels, kernel_size, stride, dilation, groups, padding, bias,
             initializer)

}  // namespace ember::nn
