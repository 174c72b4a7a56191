// nn::QuantizedWeight: a layer's weight held quantized (ember::quant::quantize puts one in
// Linear::qweight / Conv::qweight and empties the float `weight` Param).
//
// The weight is kept as a matrix [out, rest] (a Linear's [out, in]; a convolution's
// [out, in / groups * prod(kernel)], so blocks run along everything one output channel
// reads) under its QuantScheme; `shape` is the layer's own weight shape. The integers,
// scales and zero points are Buffers, saved and loaded with the model under
// "<layer>.qweight.values", ".scales" and ".zero_points". What the forward derives from them
// (the scales checked, the int8 weight packed for the integer Linear) is computed once per
// stored value (nn::DerivedCache), not on every call.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <utility>

#include "ember/dispatch/dispatch.hpp"
#include "ember/module/derived_cache.hpp"
#include "ember/module/module.hpp"
#include "ember/tensor/tensor.hpp"

namespace ember::nn {

template <Backend B = Dispatch>
struct QuantizedWeight {
  /// [out, rest] i8, or u8 holding two int4 values ([out, ceil(rest / 2)])
  Buffer<Tensor<B, 2, Int>> values;
  /// scheme.params_shape([out, rest]), f32 (or f16 for blocks)
  Buffer<Tensor<B, 2>> scales;
  /// the scales' shape, i32 (affine schemes only)
  std::optional<Buffer<Tensor<B, 2, Int>>> zero_points;
  QuantScheme scheme;
  /// The layer's weight shape ([out, in] for Linear, [out, in / groups, *kernel] for Conv).
  Shape shape;

  EMBER_MODULE(values, scales, zero_points, scheme, shape)

  /// Quantizes `weight` (any rank >= 2, viewed as [out, rest]) under `scheme`. Throws as
  /// Tensor::quantize (a block size that does not divide rest: ShapeError).
  template <std::size_t D>
  static QuantizedWeight from_float(const Tensor<B, D>& weight, const QuantScheme& scheme) {
    static_assert(D >= 2, "QuantizedWeight: a weight has rank >= 2");
    const Shape s = weight.shape();
    const std::int64_t out = s[0], rest = s[0] == 0 ? 0 : s.numel() / s[0];
    const QTensor<B, 2> q = weight.template reshape<2>({out, rest}).quantize(scheme);
    QuantizedWeight w;
    w.values = Buffer<Tensor<B, 2, Int>>(q.values());
    w.scales = Buffer<Tensor<B, 2>>(q.scales());
    if (q.zero_points()) w.zero_points = Buffer<Tensor<B, 2, Int>>(*q.zero_points());
    w.scheme = scheme;
    if (scheme.level == QuantLevel::Channel) w.scheme.axis = scheme.channel_dim(2);  // >= 0
    w.shape = s;
    return w;
  }

  /// The matrix [out, rest] as a QTensor (its parts checked: a file that does not fit the
  /// scheme gives ShapeError / DTypeError, zero or NaN scales ValueError).
  QTensor<B, 2> qtensor() const {
    std::optional<Tensor<B, 2, Int>> zp;
    if (zero_points) zp = zero_points->val();
    const std::int64_t out = shape.rank() == 0 ? 0 : shape[0];
    const std::int64_t rest = out == 0 ? 0 : shape.numel() / out;
    return QTensor<B, 2>(scheme, Shape{out, rest}, values.val(), scales.val(), zp);
  }

  /// qtensor(), checked once per stored value (the check reads the scales on the host).
  std::shared_ptr<const QTensor<B, 2>> checked() const {
    return cache().template get<QTensor<B, 2>>(key(), [&] { return qtensor(); });
  }

  /// The weight packed for the integer Linear kernel (int8 symmetric, per tensor or channel
  /// axis 0), without bias or input parameters (QuantizedLinear::with adds them); packed
  /// once per stored value. Throws as QuantizedLinear's constructor.
  std::shared_ptr<const QuantizedLinear<B>> packed_linear() const {
    return cache().template get<QuantizedLinear<B>>(
        key(), [&] { return QuantizedLinear<B>(*checked(), std::nullopt); });
  }

  /// The float weight of `shape` (f32): (q - zero point) * scale.
  template <std::size_t D>
  Tensor<B, D> dequantize() const {
    return checked()->dequantize().template reshape<D>(shape);
  }

  /// Bytes of the stored integers, scales and zero points.
  std::int64_t bytes() const { return checked()->bytes(); }

 private:
  DerivedCache::Key key() const {
    return {values.value_id(), scales.value_id(), zero_points ? zero_points->value_id() : 0};
  }
  DerivedCache& cache() const { return *derived_; }
  /// What the forward derives from the stored tensors (checked(), packed_linear()), computed
  /// once per stored value; shared by copies, not saved.
  std::shared_ptr<DerivedCache> derived_ = std::make_shared<DerivedCache>();
};

/// A calibration hook of static quantization: ember::quant::prepare puts one in each chosen
/// Linear's and Conv's `input_observer`, and the layer shows it its float input on every
/// forward (copied to the host: calibration runs a few batches).
class InputObserver {
 public:
  virtual ~InputObserver() = default;
  virtual void observe(const TensorData& x) = 0;
};

/// The input of a layer that may quantize it: shown to the calibration observer, and
/// fake-quantized by the calibrated parameters when the layer has them (the values the
/// integer kernels compute with).
template <class B, std::size_t D>
Tensor<B, D> observed_input(const Tensor<B, D>& x, const std::shared_ptr<InputObserver>& observer,
                            const std::optional<ActivationQuant>& input_quant) {
  if (observer) observer->observe(x.into_data());
  if (input_quant) return fake_quantize(x, *input_quant);
  return x;
}

/// The weight of a layer that may be quantized: the float Param's value, or the dequantized
/// QuantizedWeight.
template <std::size_t D, class P, class Q>
auto weight_value(const P& weight, const Q& qweight) {
  return qweight ? qweight->template dequantize<D>() : weight.val();
}

}  // namespace ember::nn
