// Quantized tensors in the front end (Burn's quantized float kind): QTensor<B, D> holds the
// integer values of a float tensor with its scheme (ember/core/quant.hpp), scales and zero
// points; `x.quantize(scheme)` / `q.dequantize()` convert, and QuantizedLinear is the int8
// Linear computed on the integers.
//
// The checks are the descriptions' (ember/ir/quant.hpp); the kernels are the backend's
// optional functions (OPT rows) float_quant_params, float_quantize, int_dequantize,
// int_quantized_linear_pack and float_quantized_linear, or, on a backend without them, the
// composites of ember/tensor/quant_composite.hpp.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <ostream>
#include <type_traits>
#include <utility>

#include "ember/core/quant.hpp"
#include "ember/ir/quant.hpp"
#include "ember/tensor/quant_composite.hpp"
#include "ember/tensor/tensor.hpp"

namespace ember {

namespace detail {
/// ValueError unless every scale is finite, > 0 and at most FLT_MAX / 256, so that no
/// dequantized value (|q - zero point| <= 255) overflows f32 (read on the host: the scales
/// are few).
template <class B, std::size_t D>
void check_scales(const char* op, const Tensor<B, D, Float>& scales) {
  const auto v = scales.into_data().template to_vec<double>();
  const double largest = static_cast<double>(std::numeric_limits<float>::max()) / 256.0;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!(v[i] > 0.0) || !std::isfinite(v[i]) || v[i] > largest) {
      fail<ValueError>(op, "scale ", i, " of ", v.size(), " is ", v[i],
                       "; scales must be finite, > 0 and at most ", largest,
                       " (FLT_MAX / 256: the dequantized values must fit f32)");
    }
  }
}
}  // namespace detail

/// A quantized tensor of logical shape `shape()`: values [scheme.storage_shape(shape)] (i8,
/// or u8 with two int4 nibbles), scales and zero points [scheme.params_shape(shape)] (same
/// rank, broadcastable to the shape for the tensor and channel levels). A handle: copies
/// share data.
template <class B, std::size_t D>
class QTensor {
 public:
  /// From parts; checks them with ir::Dequantize's rule (ShapeError/DTypeError naming the
  /// part) and the scales' values (ValueError for zero, negative or NaN scales).
  QTensor(const QuantScheme& scheme, const Shape& shape, Tensor<B, D, Int> values,
          Tensor<B, D, Float> scales, std::optional<Tensor<B, D, Int>> zero_points)
      : scheme_(scheme),
        shape_(shape),
        values_(std::move(values)),
        scales_(std::move(scales)),
        zero_points_(std::move(zero_points)) {
    std::optional<ir::TensorType> zt;
    if (zero_points_) zt = ir::TensorType{zero_points_->shape(), zero_points_->dtype()};
    ir::Dequantize{scheme_, shape_, DType::F32}.infer({values_.shape(), values_.dtype()},
                                                      {scales_.shape(), scales_.dtype()}, zt);
    detail::check_scales("quantize", scales_);
  }

  const QuantScheme& scheme() const { return scheme_; }
  /// The logical (float) shape.
  const Shape& shape() const { return shape_; }
  std::int64_t numel() const { return shape_.numel(); }
  const Tensor<B, D, Int>& values() const { return values_; }
  const Tensor<B, D, Float>& scales() const { return scales_; }
  const std::optional<Tensor<B, D, Int>>& zero_points() const { return zero_points_; }
  typename B::Device device() const { return values_.device(); }
  /// Bytes of values, scales and zero points (zero points counted as i32).
  std::int64_t bytes() const {
    std::int64_t n =
        values_.numel() + scales_.numel() * static_cast<std::int64_t>(dtype_size(scales_.dtype()));
    if (zero_points_) n += zero_points_->numel() * 4;
    return n;
  }

  /// -> float [shape] of `dtype`: (q - zero_point) * scale (torch's dequantize).
  Tensor<B, D, Float> dequantize(DType dtype = DType::F32) const {
    if (!is_float(dtype)) {
      detail::fail<DTypeError>("dequantize", "the result must be a float dtype, got ", dtype);
    }
    std::optional<typename B::IntTensor> zp;
    if (zero_points_) zp = zero_points_->primitive();
    if constexpr (requires {
                    B::int_dequantize(values_.primitive(), scales_.primitive(), zp, scheme_, shape_,
                                      dtype);
                  }) {
      return Tensor<B, D, Float>(
          B::int_dequantize(values_.primitive(), scales_.primitive(), zp, scheme_, shape_, dtype));
    } else {
      return Tensor<B, D, Float>(detail::quant::dequantize<B>(
          values_.primitive(), scales_.primitive(), zp, scheme_, shape_, dtype));
    }
  }

 private:
  QuantScheme scheme_;
  Shape shape_;
  Tensor<B, D, Int> values_;
  Tensor<B, D, Float> scales_;
  std::optional<Tensor<B, D, Int>> zero_points_;
};

/// Quantizes x under `scheme` with the given scales (and zero points, affine schemes only) of
/// shape scheme.params_shape(x.shape()): torch.quantize_per_tensor /
/// quantize_per_channel's q = clamp(round_half_even(x * (1 / scale)) + zero_point, qmin,
/// qmax). Throws DTypeError for a tensor that is not float (an Int or Bool tensor),
/// ShapeError for a block size that does not divide the last dim or parameters of the wrong
/// shape, ValueError for a scale that is zero, negative, infinite or NaN, for an affine
/// scheme without zero points and a symmetric one with them.
template <class B, std::size_t D, class K>
QTensor<B, D> quantize(
    const Tensor<B, D, K>& x, const QuantScheme& scheme, const Tensor<B, D, Float>& scales,
    const std::optional<std::type_identity_t<Tensor<B, D, Int>>>& zero_points = std::nullopt) {
  std::optional<ir::TensorType> zt;
  if (zero_points) zt = ir::TensorType{zero_points->shape(), zero_points->dtype()};
  ir::Quantize{scheme}.infer({x.shape(), x.dtype()}, {scales.shape(), scales.dtype()}, zt);
  if constexpr (std::is_same_v<K, Float>) {
    detail::check_scales("quantize", scales);
    std::optional<typename B::IntTensor> zp;
    if (zero_points) zp = zero_points->primitive();
    auto values = [&] {
      if constexpr (requires { B::float_quantize(x.primitive(), scales.primitive(), zp, scheme); })
        return Tensor<B, D, Int>(B::float_quantize(x.primitive(), scales.primitive(), zp, scheme));
      else
        return Tensor<B, D, Int>(
            detail::quant::quantize<B>(x.primitive(), scales.primitive(), zp, scheme));
    }();
    return QTensor<B, D>(scheme, x.shape(), std::move(values), scales, zero_points);
  } else {
    detail::fail<DTypeError>("quantize", "only float tensors can be quantized");  // unreachable
  }
}

/// Quantizes x under `scheme` with scales and zero points from x's minimum and maximum per
/// group (PyTorch's MinMaxObserver rule, see cpu::QuantOps::float_quant_params). Throws as
/// quantize(x, scheme, scales), and ValueError when a group holds NaN (its scale would be
/// NaN) or its scale overflows.
template <class B, std::size_t D, class K>
QTensor<B, D> quantize(const Tensor<B, D, K>& x, const QuantScheme& scheme) {
  ir::QuantParams{scheme}.infer({x.shape(), x.dtype()});
  if constexpr (std::is_same_v<K, Float>) {
    auto [s, z] = [&] {
      if constexpr (requires { B::float_quant_params(x.primitive(), scheme); })
        return B::float_quant_params(x.primitive(), scheme);
      else
        return detail::quant::quant_params<B>(x.primitive(), scheme);
    }();
    std::optional<Tensor<B, D, Int>> zp;
    if (scheme.mode == QuantMode::Affine) zp = Tensor<B, D, Int>(std::move(z));
    return quantize(x, scheme, Tensor<B, D, Float>(std::move(s)), zp);
  } else {
    detail::fail<DTypeError>("quantize", "only float tensors can be quantized");  // unreachable
  }
}

template <class B, std::size_t D, class K>
QTensor<B, D> Tensor<B, D, K>::quantize(const QuantScheme& scheme) const {
  return ember::quantize(*this, scheme);
}

/// "QTensor { shape: [2, 3], scheme: int8 symmetric per-tensor f32, device: cpu, values:
/// [[...]], scales: [...], zero_points: [...] }" (values are the stored integers; int4
/// shows the packed bytes).
template <class B, std::size_t D>
std::ostream& operator<<(std::ostream& os, const QTensor<B, D>& q) {
  os << "QTensor { shape: " << q.shape() << ", scheme: " << q.scheme()
     << ", device: " << B::device_name(q.device())
     << ", values: " << format_tensor_values(q.values().into_data())
     << ", scales: " << format_tensor_values(q.scales().into_data());
  if (q.zero_points())
    os << ", zero_points: " << format_tensor_values(q.zero_points()->into_data());
  return os << " }";
}

/// x quantized to u8 with the fixed parameters `a` and dequantized again (PyTorch's
/// fake_quantize_per_tensor_affine with quant range [0, 255]): the values a statically
/// quantized layer computes with. x float (any dtype, result f32); ValueError as
/// ActivationQuant::check.
template <class B, std::size_t D>
Tensor<B, D> fake_quantize(const Tensor<B, D>& x, const ActivationQuant& a) {
  a.check("fake_quantize");
  // u8 [0, 255] with zero point z is int8 [-128, 127] with zero point z - 128: the same
  // rounding and clamping, the same dequantized values.
  Shape ones;
  for (std::size_t i = 0; i < D; ++i) ones.dims.push_back(1);
  const auto dev = x.device();
  const Tensor<B, D> scales = Tensor<B, D>::full(ones, a.scale, dev);
  const Tensor<B, D, Int> zp =
      Tensor<B, D, Int>::full(ones, static_cast<double>(a.zero_point - 128), dev, DType::I32);
  const Tensor<B, D> xf = x.dtype() == DType::F32 ? x : x.cast(DType::F32);
  return quantize(xf, QuantScheme::int8().affine(), scales, zp).dequantize();
}

/// The statically quantized conv2d computed on the integers (torch.ao.nn.quantized.Conv2d
/// with a quint8 input and f32 output; ir::QuantizedConv2d): x [N, C_in, H, W] f32 quantized
/// to u8 by `input`, the weight as its int8 matrix [C_out, C_in / groups * kH * kW] (int8
/// symmetric, per tensor or per output channel: nn::QuantizedWeight::qtensor()) of the conv
/// weight shape `weight_shape` [C_out, C_in / groups, kH, kW], bias [C_out] f32 ->
/// [N, C_out, H_out, W_out] f32. Throws as conv2d (ShapeError, ValueError for options),
/// UnsupportedError for another scheme, ValueError for bad input parameters.
template <class B>
Tensor<B, 4> quantized_conv2d(const Tensor<B, 4>& x, const QTensor<B, 2>& weight,
                              const Shape& weight_shape,
                              const std::type_identity_t<std::optional<Tensor<B, 1>>>& bias,
                              const ConvOptions<2>& options, const ActivationQuant& input) {
  std::optional<ir::TensorType> bt;
  if (bias) bt = ir::TensorType{bias->shape(), bias->dtype()};
  ir::QuantizedConv2d{weight.scheme(), weight_shape, options, input}.infer(
      {x.shape(), x.dtype()}, {weight.values().shape(), weight.values().dtype()},
      {weight.scales().shape(), weight.scales().dtype()}, bt);
  std::optional<typename B::FloatTensor> b;
  if (bias) b = bias->primitive();
  const auto& v = weight.values().primitive();
  const auto& s = weight.scales().primitive();
  if constexpr (requires {
                  B::float_quantized_conv2d(x.primitive(), v, s, b, weight.scheme(), weight_shape,
                                            options, input);
                }) {
    return Tensor<B, 4>(B::float_quantized_conv2d(x.primitive(), v, s, b, weight.scheme(),
                                                  weight_shape, options, input));
  } else {
    return Tensor<B, 4>(detail::quant::quantized_conv2d<B>(x.primitive(), v, s, b, weight.scheme(),
                                                           weight_shape, options, input));
  }
}

/// The int8 Linear computed on the integers: the weight [out, in] quantized int8
/// symmetric (per channel along axis 0 by default, or per tensor) and packed once for the
/// backend's kernel; each forward quantizes the input to u8, per row
/// (torch.ao.nn.quantized.dynamic.Linear) or, with `input` parameters from calibration, by
/// them (static: torch.ao.nn.quantized.Linear with a quint8 input), and returns f32.
template <class B>
class QuantizedLinear {
 public:
  /// weight [out, in] f32, bias [out] f32 (optional). Throws UnsupportedError for another
  /// scheme than int8 symmetric per tensor / per channel along axis 0, ValueError for bad
  /// input parameters, and quantize's errors.
  static QuantizedLinear from_float(const Tensor<B, 2>& weight,
                                    std::optional<Tensor<B, 1>> bias = std::nullopt,
                                    const QuantScheme& scheme = QuantScheme::int8().per_channel(0),
                                    std::optional<ActivationQuant> input = std::nullopt) {
    ir::QuantizedLinear{scheme, weight.shape(), input}.check(
        {Shape{1, weight.shape()[1]}, DType::F32},
        bias ? std::optional<ir::TensorType>(ir::TensorType{bias->shape(), bias->dtype()})
             : std::nullopt);
    return QuantizedLinear(weight.quantize(scheme), std::move(bias), input);
  }
  /// From a weight already quantized (int8 symmetric, per tensor or channel axis 0).
  QuantizedLinear(QTensor<B, 2> weight, std::optional<Tensor<B, 1>> bias,
                  std::optional<ActivationQuant> input = std::nullopt)
      : weight_(std::move(weight)), bias_(std::move(bias)), input_(input) {
    std::optional<ir::TensorType> bt;
    if (bias_) bt = ir::TensorType{bias_->shape(), bias_->dtype()};
    ir::QuantizedLinear{weight_.scheme(), weight_.shape(), input_}.check(
        {Shape{1, weight_.shape()[1]}, DType::F32}, bt);
    if constexpr (kHasKernel)
      packed_ = B::int_quantized_linear_pack(weight_.values().primitive());
    else
      packed_ = detail::quant::quantized_linear_pack<B>(weight_.values().primitive());
    scales_ = B::float_reshape(weight_.scales().primitive(), Shape{weight_.scales().numel()});
  }

  /// x [..., in] f32 -> [..., out] f32. ShapeError/DTypeError as ir::QuantizedLinear.
  template <std::size_t D>
  Tensor<B, D> forward(const Tensor<B, D>& x) const {
    std::optional<ir::TensorType> bt;
    if (bias_) bt = ir::TensorType{bias_->shape(), bias_->dtype()};
    ir::QuantizedLinear{weight_.scheme(), weight_.shape(), input_}.check({x.shape(), x.dtype()},
                                                                         bt);
    std::optional<typename B::FloatTensor> b;
    if (bias_) b = bias_->primitive();
    if constexpr (kHasKernel) {
      return Tensor<B, D>(B::float_quantized_linear(x.primitive(), *packed_, *scales_, b,
                                                    weight_.scheme(), weight_.shape(), input_));
    } else {
      return Tensor<B, D>(detail::quant::quantized_linear<B>(x.primitive(), *packed_, *scales_, b,
                                                             weight_.shape(), input_));
    }
  }

  /// The same packed weight with another bias ([out] f32) and input parameters: no
  /// repacking (nn::Linear keeps one packed weight per stored value and calls this each
  /// forward). Throws as the constructor.
  QuantizedLinear with(std::optional<Tensor<B, 1>> bias,
                       std::optional<ActivationQuant> input) const {
    std::optional<ir::TensorType> bt;
    if (bias) bt = ir::TensorType{bias->shape(), bias->dtype()};
    ir::QuantizedLinear{weight_.scheme(), weight_.shape(), input}.check(
        {Shape{1, weight_.shape()[1]}, DType::F32}, bt);
    QuantizedLinear out = *this;
    out.bias_ = std::move(bias);
    out.input_ = input;
    return out;
  }

  const QTensor<B, 2>& weight() const { return weight_; }
  const std::optional<Tensor<B, 1>>& bias() const { return bias_; }
  /// The input's static parameters (none: quantized per row on each forward).
  const std::optional<ActivationQuant>& input() const { return input_; }

 private:
  // The backend's kernel and its packing come together (ir::QuantizedLinearPack).
  static constexpr bool kHasKernel =
      requires(const typename B::IntTensor& w, const typename B::FloatTensor& f,
               const std::optional<typename B::FloatTensor>& ob, const QuantScheme& sc,
               const Shape& sh, const std::optional<ActivationQuant>& in) {
    B::int_quantized_linear_pack(w);
    B::float_quantized_linear(f, w, f, ob, sc, sh, in);
  };
  QTensor<B, 2> weight_;
  std::optional<Tensor<B, 1>> bias_;
  std::optional<ActivationQuant> input_;
  std::optional<typename B::IntTensor> packed_;
  std::optional<typename B::FloatTensor> scales_;
};

}  // namespace ember
