// nn::Linear: y = x W^T + b (PyTorch's nn.Linear, Burn's Linear with PyTorch's layout).
//
//   auto fc = nn::LinearConfig{.d_input = 784, .d_output = 10}.init(device);   // Linear<>
//   DTensor<2> y = fc.forward(x);                                               // [N, 784] -> [N,
//   10]
//
// Parameters (PyTorch state_dict names): weight [d_output, d_input], bias [d_output].
// After ember::quant::quantize the weight is held quantized in `qweight` (the float Param is
// then empty): int8 symmetric weights (per tensor or per output channel) run the integer
// kernel (each input row quantized to u8 as quantize_dynamic's Linear, or the whole input
// by the calibrated `input_quant` as static quantization; exact integer sums, f32 out);
// other schemes (int4, blocks, affine) are dequantized and run in f32 (on the input
// fake-quantized by `input_quant` when it is set).
// Default init is PyTorch's: U(-1/sqrt(d_input), 1/sqrt(d_input)) for both (Burn's
// KaimingUniform{gain: 1/sqrt(3)}).
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>

#include "ember/dispatch/dispatch.hpp"
#include "ember/module/config_fwd.hpp"
#include "ember/module/initializer.hpp"
#include "ember/module/module.hpp"
#include "ember/nn/quantized_weight.hpp"
#include "ember/tensor/module/nn.hpp"

namespace ember::nn {

template <Backend B = Dispatch>
struct Linear;

/// Config of Linear. Throws ValueError from init() when d_input or d_output < 1.
struct LinearConfig {
  std::int64_t d_input = 0;
  std::int64_t d_output = 0;
  bool bias = true;
  Initializer initializer = Initializer::kaiming_uniform(1.0 / std::sqrt(3.0), false);

  template <Backend B = Dispatch>
  Linear<B> init(const typename B::Device& device = typename B::Device{}) const;
};
EMBER_CONFIG(LinearConfig, d_input, d_output, bias, initializer)

template <Backend B>
struct Linear {
  /// [d_output, d_input]
  Param<Tensor<B, 2>> weight;
  /// [d_output]
  std::optional<Param<Tensor<B, 1>>> bias;
  /// The quantized weight (ember::quant::quantize), when `weight` is empty.
  std::optional<QuantizedWeight<B>> qweight;
  /// Static quantization of the input (calibrated by ember::quant::quantize), with qweight.
  std::optional<ActivationQuant> input_quant;
  /// Calibration hook (ember::quant::prepare): sees each forward's input.
  std::shared_ptr<InputObserver> input_observer;

  EMBER_MODULE(weight, bias, qweight, input_quant, input_observer)

  /// [..., d_input] -> [..., d_output]. Throws ShapeError when the last dim is not d_input,
  /// and DTypeError when x's dtype is not the weight's (PyTorch raises too; nothing is cast
  /// behind the user's back), except under Autocast, which casts both to its dtype.
  template <std::size_t D>
  Tensor<B, D> forward(const Tensor<B, D>& x) const {
    // A quantized layer computes in f32: under Autocast a lower-precision input goes up to it.
    if (qweight) return forward_quantized(ember::detail::autocast_widen(x));
    if (input_observer) input_observer->observe(x.into_data());
    // Under Autocast both run in the autocast dtype (module::linear casts them).
    if (ember::detail::autocast_lower_dtype(x.dtype()) !=
        ember::detail::autocast_lower_dtype(weight->dtype())) {
      ember::detail::fail<DTypeError>(
          "Linear", "input of dtype ", x.dtype(), " (shape ", x.shape(),
          ") does not match the weight's dtype ", weight->dtype(), ": cast the input to ",
          weight->dtype(), " first (x.cast(...)), or load the layer's weights as ", x.dtype());
    }
    const std::int64_t d_in = weight->dim(1);
    if (x.dim(-1) != d_in) {
      ember::detail::fail<ShapeError>("Linear", "input of shape ", x.shape(), " has last dim ",
                                      x.dim(-1), ", expected d_input = ", d_in);
    }
    return module::linear(x, weight.val(),
                          bias ? std::optional<Tensor<B, 1>>(bias->val()) : std::nullopt);
  }

 private:
  template <std::size_t D>
  Tensor<B, D> forward_quantized(const Tensor<B, D>& x) const {
    const Shape& ws = qweight->shape;
    if (x.dtype() != DType::F32) {
      ember::detail::fail<DTypeError>("Linear", "input of dtype ", x.dtype(),
                                      ": a quantized Linear (", qweight->scheme.to_string(),
                                      ") takes f32 input");
    }
    if (x.dim(-1) != ws[1]) {
      ember::detail::fail<ShapeError>("Linear", "input of shape ", x.shape(), " has last dim ",
                                      x.dim(-1), ", expected d_input = ", ws[1]);
    }
    const auto b = bias ? std::optional<Tensor<B, 1>>(bias->val()) : std::nullopt;
    const QuantScheme& s = qweight->scheme;
    const bool integer = s.value == QuantValue::Int8 && s.mode == QuantMode::Symmetric &&
                         (s.level == QuantLevel::Tensor ||
                          (s.level == QuantLevel::Channel && s.channel_dim(2) == 0)) &&
                         ws[1] <= ir::kMaxQuantizedLinearIn;
    if (integer) return qweight->packed_linear()->with(b, input_quant).forward(x);
    return module::linear(observed_input(x, nullptr, input_quant),
                          qweight->template dequantize<2>(), b);
  }
};

template <Backend B>
Linear<B> LinearConfig::init(const typename B::Device& device) const {
  if (d_input < 1 || d_output < 1) {
    ember::detail::fail<ValueError>("LinearConfig", "d_input and d_output must be >= 1, got ",
                                    d_input, " and ", d_output);
  }
  Linear<B> out;
  out.weight = Param<Tensor<B, 2>>(
      initializer.init<B, 2>(Shape{d_output, d_input}, device, d_input, d_output));
  if (bias) {
    out.bias =
        Param<Tensor<B, 1>>(initializer.init<B, 1>(Shape{d_output}, device, d_input, d_output));
  }
  return out;
}

}  // namespace ember::nn
