// The composites of the quantization rows (ember/ir/quant.hpp): quantize, dequantize and the
// int8 linear written with the front end's float and int ops, for a backend without the
// kernels (the front end calls them directly; Dispatch runs them on such a stack,
// src/dispatch/defaults.hpp). They compute what the CPU kernels (src/cpu/quant*.cpp)
// compute, in the same f32 order: the same integers, scales and zero points.
//
// Every function takes and returns primitives of B. A tensor of `shape` is viewed as
// [before, groups, inner], one scale per index of the middle dim:
//   Tensor   [1, 1, numel]       Channel (dim d)  [prod(shape[:d]), shape[d], prod(shape[d+1:])]
//   Block    [1, numel / block_size, block_size]
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <utility>

#include "ember/core/options.hpp"
#include "ember/core/quant.hpp"
#include "ember/tensor/tensor.hpp"

namespace ember::detail::quant {

/// The [before, groups, inner] view of a tensor of `shape` under `s`.
inline Shape group_view(const QuantScheme& s, const Shape& shape) {
  const std::int64_t n = shape.numel();
  switch (s.level) {
    case QuantLevel::Tensor:
      return Shape{1, 1, n};
    case QuantLevel::Channel: {
      const std::size_t d = s.channel_dim(shape.rank());
      std::int64_t before = 1, after = 1;
      for (std::size_t k = 0; k < d; ++k) before *= shape[k];
      for (std::size_t k = d + 1; k < shape.rank(); ++k) after *= shape[k];
      return Shape{before, shape[d], after};
    }
    case QuantLevel::Block:
      return Shape{1, n / s.block_size, s.block_size};
  }
  return Shape{1, 1, n};
}

/// A float primitive as Tensor<B, 3> of `view`, in f32.
template <class B>
Tensor<B, 3> view_f32(const typename B::FloatTensor& p, const Shape& view) {
  Tensor<B, 3> t(B::float_reshape(p, view));
  return t.dtype() == DType::F32 ? t : t.cast(DType::F32);
}

/// The flat index of the first true element of `mask` (for error messages; -1 if none).
template <class B, std::size_t D>
std::int64_t first_true(const Tensor<B, D, Bool>& mask) {
  const auto v = mask.into_data().template to_vec<std::uint8_t>();
  for (std::size_t i = 0; i < v.size(); ++i)
    if (v[i]) return static_cast<std::int64_t>(i);
  return -1;
}

/// The scales [1, G, 1] as f32 (from f32 or f16 storage).
template <class B>
Tensor<B, 3> scales_f32(const typename B::FloatTensor& scales, std::int64_t groups) {
  return view_f32<B>(scales, Shape{1, groups, 1});
}

/// The scales and zero points of x under s (QuantOps::float_quant_params' MinMax rule).
/// ValueError when a group holds NaN or a scale overflows.
template <class B>
std::pair<typename B::FloatTensor, typename B::IntTensor> quant_params(
    const typename B::FloatTensor& x, const QuantScheme& s) {
  const Shape shape = B::float_shape(x);
  const Shape v = group_view(s, shape);
  const Shape ps = s.params_shape(shape);
  const auto device = B::float_device(x);
  const float eps = std::numeric_limits<float>::epsilon();
  const float qmin = static_cast<float>(s.qmin()), qmax = static_cast<float>(s.qmax());
  Tensor<B, 3> lo = Tensor<B, 3>::zeros(Shape{1, v[1], 1}, device);
  Tensor<B, 3> hi = lo;
  if (shape.numel() > 0) {
    const Tensor<B, 3> t = view_f32<B>(x, v);
    if (t.is_nan().any().into_scalar()) {
      fail<ValueError>("quantize", "group ", first_true<B>(t.is_nan().any_dim(2).any_dim(0)),
                       " of ", v[1], " contains NaN, so its scale would be NaN (scheme ",
                       s.to_string(), ", shape ", shape, ")");
    }
    lo = t.min_dim(2).min_dim(0).clamp_max(0.0);
    hi = t.max_dim(2).max_dim(0).clamp_min(0.0);
  }
  Tensor<B, 3> scale = s.mode == QuantMode::Symmetric
                           ? lo.neg().max_pair(hi).div_scalar((qmax - qmin) / 2.0f)
                           : (hi - lo).div_scalar(qmax - qmin);
  scale = scale.clamp_min(eps);
  if (s.param == QuantParam::F16) scale = scale.cast(DType::F16).cast(DType::F32);
  if (!scale.is_finite().all().into_scalar()) {
    fail<ValueError>("quantize", "the scale of group ", first_true<B>(scale.is_finite().bool_not()),
                     " of ", v[1], " is infinite (values too large for ",
                     s.param == QuantParam::F16 ? "f16 scales" : "f32", "; scheme ", s.to_string(),
                     ")");
  }
  Tensor<B, 3, Int> zp = Tensor<B, 3, Int>::zeros(Shape{1, v[1], 1}, device, DType::I32);
  if (s.mode == QuantMode::Affine) {
    zp = (lo / scale).round().neg().add_scalar(qmin).clamp(qmin, qmax).int_(DType::I32);
  }
  if (s.param == QuantParam::F16) scale = scale.cast(DType::F16);
  return {B::float_reshape(std::move(scale).into_primitive(), ps),
          B::int_reshape(std::move(zp).into_primitive(), ps)};
}

/// x -> values [s.storage_shape(shape)] (QuantOps::float_quantize: round half to even in f32,
/// NaN to qmax, int4 packed low nibble first).
template <class B>
typename B::IntTensor quantize(const typename B::FloatTensor& x,
                               const typename B::FloatTensor& scales,
                               const std::optional<typename B::IntTensor>& zero_points,
                               const QuantScheme& s) {
  const Shape shape = B::float_shape(x);
  const Shape v = group_view(s, shape);
  const auto device = B::float_device(x);
  const float qmin = static_cast<float>(s.qmin()), qmax = static_cast<float>(s.qmax());
  Tensor<B, 3> r = view_f32<B>(x, v) * scales_f32<B>(scales, v[1]).recip();
  r = r.round();
  if (zero_points) {
    r = r + Tensor<B, 3, Int>(B::int_reshape(*zero_points, Shape{1, v[1], 1})).float_();
  }
  r = r.clamp(qmin, qmax);
  r = r.mask_fill(r.is_nan(), qmax);
  Tensor<B, 3, Int> q = r.int_(DType::I32);
  if (s.value == QuantValue::Int8) {
    return B::int_reshape(q.int_(DType::I8).into_primitive(), shape);
  }
  // int4: nibbles (two's complement, 0..15) paired along the last dim, low nibble first.
  const std::int64_t w = shape[shape.rank() - 1];
  const std::int64_t rows = w == 0 ? 0 : shape.numel() / w;
  Tensor<B, 2, Int> nib(B::int_reshape(std::move(q).into_primitive(), Shape{rows, w}));
  nib = nib.remainder_scalar(16);
  if (w % 2 == 1) {
    nib = Tensor<B, 2, Int>::cat(
        {nib, Tensor<B, 2, Int>::zeros(Shape{rows, 1}, device, nib.dtype())}, 1);
  }
  const std::int64_t w2 = (w + 1) / 2;
  Tensor<B, 3, Int> pairs(B::int_reshape(std::move(nib).into_primitive(), Shape{rows, w2, 2}));
  Tensor<B, 3, Int> bytes = pairs.narrow(2, 0, 1) + pairs.narrow(2, 1, 1).mul_scalar(16);
  return B::int_reshape(bytes.int_(DType::U8).into_primitive(), s.storage_shape(shape));
}

/// values [s.storage_shape(shape)] -> float [shape] of dtype: (q - zero point) * scale in f32.
template <class B>
typename B::FloatTensor dequantize(const typename B::IntTensor& values,
                                   const typename B::FloatTensor& scales,
                                   const std::optional<typename B::IntTensor>& zero_points,
                                   const QuantScheme& s, const Shape& shape, DType dtype) {
  const Shape v = group_view(s, shape);
  Tensor<B, 3, Int> q = [&] {
    if (s.value == QuantValue::Int8) {
      return Tensor<B, 3, Int>(B::int_reshape(values, v)).int_(DType::I32);
    }
    const std::int64_t w = shape[shape.rank() - 1], w2 = (w + 1) / 2;
    const std::int64_t rows = w == 0 ? 0 : shape.numel() / w;
    const Tensor<B, 3, Int> bytes =
        Tensor<B, 3, Int>(B::int_reshape(values, Shape{rows, w2, 1})).int_(DType::I32);
    Tensor<B, 3, Int> nib =
        Tensor<B, 3, Int>::cat({bytes.remainder_scalar(16), bytes.div_scalar(16)}, 2);
    nib = nib - nib.greater_equal_elem(8).int_(DType::I32).mul_scalar(16);
    Tensor<B, 2, Int> flat(B::int_reshape(std::move(nib).into_primitive(), Shape{rows, 2 * w2}));
    return Tensor<B, 3, Int>(B::int_reshape(flat.narrow(1, 0, w).into_primitive(), v));
  }();
  if (zero_points) {
    q = q - Tensor<B, 3, Int>(B::int_reshape(*zero_points, Shape{1, v[1], 1})).int_(DType::I32);
  }
  Tensor<B, 3> y = q.float_() * scales_f32<B>(scales, v[1]);
  if (dtype != DType::F32) y = y.cast(dtype);
  return B::float_reshape(std::move(y).into_primitive(), shape);
}

/// The composite's packed form of an int8 weight: the weight itself.
template <class B>
typename B::IntTensor quantized_linear_pack(const typename B::IntTensor& weight) {
  return weight;
}

/// QuantOps::float_quantized_linear with `packed` the int8 weight [out, in]: each row of x
/// quantized to u8 (affine [0, 255], MinMax; or all rows with `input`'s scale and zero
/// point), the integer products summed exactly in f64,
/// y = f32(sum_k qx qw - zx * colsum) * (sx * sw) + bias.
template <class B>
typename B::FloatTensor quantized_linear(const typename B::FloatTensor& x,
                                         const typename B::IntTensor& packed,
                                         const typename B::FloatTensor& weight_scales,
                                         const std::optional<typename B::FloatTensor>& bias,
                                         const Shape& weight,
                                         const std::optional<ActivationQuant>& input) {
  const Shape xs = B::float_shape(x);
  const std::int64_t out = weight[0], in = weight[1];
  const std::int64_t m = in == 0 ? 0 : xs.numel() / in;
  Shape ys = xs;
  ys[ys.rank() - 1] = out;
  const auto device = B::float_device(x);
  if (m == 0 || out == 0) {
    return B::float_reshape(Tensor<B, 2>::zeros(Shape{m, out}, device).into_primitive(), ys);
  }
  const float eps = std::numeric_limits<float>::epsilon();
  Tensor<B, 2> xf(B::float_reshape(x, Shape{m, in}));
  // The input's scale and zero point: [m, 1] per row, or [1, 1] given.
  const auto [sx, zx] = [&]() -> std::pair<Tensor<B, 2>, Tensor<B, 2>> {
    if (input) {
      return {Tensor<B, 2>::full(Shape{1, 1}, input->scale, device),
              Tensor<B, 2>::full(Shape{1, 1}, static_cast<double>(input->zero_point), device)};
    }
    const Tensor<B, 2> lo = xf.min_dim(1).clamp_max(0.0), hi = xf.max_dim(1).clamp_min(0.0);
    const Tensor<B, 2> s = (hi - lo).div_scalar(255.0f).clamp_min(eps);
    return {s, (lo / s).round().neg().clamp(0.0, 255.0)};
  }();
  const Tensor<B, 2> qx = ((xf * sx.recip()).round() + zx).clamp(0.0, 255.0);
  const Tensor<B, 2> qw = Tensor<B, 2, Int>(packed).float_(DType::F64);
  const Tensor<B, 2> acc = qx.cast(DType::F64).matmul(qw.transpose());
  const Tensor<B, 2> colsum = qw.sum_dim(1).transpose();  // [1, out]
  const Tensor<B, 2> exact = (acc - zx.cast(DType::F64) * colsum).cast(DType::F32);
  Tensor<B, 2> sw(B::float_reshape(weight_scales, Shape{1, B::float_shape(weight_scales).numel()}));
  Tensor<B, 2> y = exact * (sx * sw);
  if (bias) y = y + Tensor<B, 2>(B::float_reshape(*bias, Shape{1, out}));
  return B::float_reshape(std::move(y).into_primitive(), ys);
}

/// QuantOps::float_quantized_conv2d with tensor ops: x quantized by `input` and dequantized
/// again (the u8 values as int8 with zero point - 128: the same rounding and clamping), the
/// weight matrix dequantized to `weight`'s shape, and an f32 conv2d: the same values summed
/// in float (equal to the integer sums up to f32 rounding).
template <class B>
typename B::FloatTensor quantized_conv2d(const typename B::FloatTensor& x,
                                         const typename B::IntTensor& values,
                                         const typename B::FloatTensor& scales,
                                         const std::optional<typename B::FloatTensor>& bias,
                                         const QuantScheme& scheme, const Shape& weight,
                                         const ConvOptions<2>& options,
                                         const ActivationQuant& input) {
  const auto device = B::float_device(x);
  const Shape one{1, 1, 1, 1};
  const QuantScheme u8 = QuantScheme::int8().affine();
  const auto xs = Tensor<B, 4>::full(one, input.scale, device).into_primitive();
  const auto xz =
      Tensor<B, 4, Int>::full(one, static_cast<double>(input.zero_point - 128), device, DType::I32)
          .into_primitive();
  auto xq = dequantize<B>(quantize<B>(x, xs, xz, u8), xs, xz, u8, B::float_shape(x), DType::F32);
  const Shape matrix{weight[0], weight[1] * weight[2] * weight[3]};
  QuantScheme ws = scheme;
  if (ws.level == QuantLevel::Channel) ws.axis = 0;
  auto w =
      B::float_reshape(dequantize<B>(values, scales, std::nullopt, ws, matrix, DType::F32), weight);
  return B::template conv<2>(xq, w, bias, options);
}

}  // namespace ember::detail::quant
