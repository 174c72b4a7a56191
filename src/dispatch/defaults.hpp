// The defaults of the OPT rows of the op registry for one backend stack B (not installed):
// what Dispatch runs on a stack that lacks the optional function. Each is the front end's
// composite on the stack's own tensors, viewed at a fixed rank (1 for element-wise
// activations, [before, n, after] for the softmax family, [rows, in] for linear,
// [N, C, rest] for training batch norm), which itself runs the stack's own fast kernels
// where it has them. A new OPT row with a default adds its function here.
#pragma once

#include <array>
#include <functional>
#include <numeric>
#include <optional>
#include <utility>

#include "ember/backend/attention_composite.hpp"
#include "ember/tensor/activation.hpp"
#include "ember/tensor/module/nn.hpp"
#include "ember/tensor/ops/layout_prim.hpp"
#include "ember/tensor/quant_composite.hpp"
#include "ember/tensor/tensor.hpp"

namespace ember::dispatch {

template <class B>
struct Defaults {
  EMBER_IR_TYPE_ALIASES(typename B::FloatTensor, typename B::IntTensor, typename B::BoolTensor,
                        typename B::Device);

  /// Runs `f` (Tensor<B, 1> -> Tensor<B, 1>) on p flattened to rank 1; p's shape comes back.
  template <class Fn>
  static F flat(F p, Fn f) {
    const Shape s = B::float_shape(p);
    Tensor<B, 1> t(B::float_reshape(std::move(p), Shape{s.numel()}));
    return B::float_reshape(f(std::move(t)).into_primitive(), s);
  }
  /// Runs `f` (Tensor<B, 3>, dim 1 -> Tensor<B, 3>) on p viewed as [before, n, after].
  template <class Fn>
  static F along(const F& p, usize dim, Fn f) {
    const Shape s = B::float_shape(p);
    i64 before = 1, after = 1;
    for (usize k = 0; k < dim; ++k) before *= s[k];
    for (usize k = dim + 1; k < s.rank(); ++k) after *= s[k];
    Tensor<B, 3> t(B::float_reshape(p, Shape{before, s[dim], after}));
    return B::float_reshape(f(std::move(t)).into_primitive(), s);
  }

  // ---- activations and the softmax family ----------------------------------------------------
#define EMBER_DEFAULT_ACT(fn)                                                               \
  static F float_##fn(F x) {                                                                \
    return flat(std::move(x), [](Tensor<B, 1> t) { return activation::fn(std::move(t)); }); \
  }
#define EMBER_DEFAULT_ACT1(fn)                                                                  \
  static F float_##fn(F x, double a) {                                                          \
    return flat(std::move(x), [a](Tensor<B, 1> t) { return activation::fn(std::move(t), a); }); \
  }
#define EMBER_DEFAULT_ACT2(fn)                                                          \
  static F float_##fn(F x, double a, double b) {                                        \
    return flat(std::move(x),                                                           \
                [a, b](Tensor<B, 1> t) { return activation::fn(std::move(t), a, b); }); \
  }
#define EMBER_DEFAULT_SOFTMAX(fn)                                                     \
  static F float_##fn(const F& x, usize dim) {                                        \
    return along(x, dim, [](const Tensor<B, 3>& t) { return activation::fn(t, 1); }); \
  }
  EMBER_DEFAULT_ACT(relu)
  EMBER_DEFAULT_ACT(relu6)
  EMBER_DEFAULT_ACT(gelu)
  EMBER_DEFAULT_ACT(gelu_tanh)
  EMBER_DEFAULT_ACT(silu)
  EMBER_DEFAULT_ACT(mish)
  EMBER_DEFAULT_ACT(sigmoid)
  EMBER_DEFAULT_ACT(hard_swish)
  EMBER_DEFAULT_ACT(log_sigmoid)
  EMBER_DEFAULT_ACT(softsign)
  EMBER_DEFAULT_ACT(selu)
  EMBER_DEFAULT_ACT(tanhshrink)
  EMBER_DEFAULT_ACT1(leaky_relu)
  EMBER_DEFAULT_ACT1(elu)
  EMBER_DEFAULT_ACT1(celu)
  EMBER_DEFAULT_ACT1(hard_shrink)
  EMBER_DEFAULT_ACT1(soft_shrink)
  EMBER_DEFAULT_ACT2(hard_sigmoid)
  EMBER_DEFAULT_ACT2(softplus)
  EMBER_DEFAULT_SOFTMAX(softmax)
  EMBER_DEFAULT_SOFTMAX(log_softmax)
  EMBER_DEFAULT_SOFTMAX(softmin)
  EMBER_DEFAULT_SOFTMAX(quiet_softmax)
#undef EMBER_DEFAULT_ACT
#undef EMBER_DEFAULT_ACT1
#undef EMBER_DEFAULT_ACT2
#undef EMBER_DEFAULT_SOFTMAX

  /// x [..., in] as [rows, in] through module::linear.
  static F float_linear(const F& x, const F& w, const OptF& bias) {
    Shape s = B::float_shape(x);
    const i64 in = s[s.rank() - 1];
    const i64 rows =
        std::accumulate(s.dims.begin(), s.dims.end() - 1, i64{1}, std::multiplies<i64>());
    Tensor<B, 2> x2(B::float_reshape(x, Shape{rows, in}));
    std::optional<Tensor<B, 1>> b;
    if (bias) b.emplace(*bias);
    Tensor<B, 2> y = module::linear(x2, Tensor<B, 2>(w), b);
    s[s.rank() - 1] = y.dim(1);
    return B::float_reshape(std::move(y).into_primitive(), s);
  }
  /// Training batch norm on x viewed as [N, C, rest].
  static FF float_batch_norm_train(const F& x, const OptF& weight, const OptF& bias, double eps) {
    const Shape s = B::float_shape(x);
    const i64 n = s[0], c = s[1], rest = s.numel() / (n * c);
    Tensor<B, 3> x3(B::float_reshape(x, Shape{n, c, rest}));
    std::optional<Tensor<B, 1>> w, b;
    if (weight) w.emplace(*weight);
    if (bias) b.emplace(*bias);
    auto r = module::batch_norm_train(x3, w, b, eps);
    const std::array<i64, 2> row{1, c};
    auto stats =
        Tensor<B, 2>::cat({r.mean.template reshape<2>(row), r.var.template reshape<2>(row)}, 0);
    return {B::float_reshape(std::move(r.output).into_primitive(), s),
            std::move(stats).into_primitive()};
  }

  /// Scaled dot-product attention: the composite of the stack's own functions, any rank
  /// (ember/backend/attention_composite.hpp).
  static F float_scaled_dot_product_attention(const F& q, const F& k, const F& v, const OptBo& mask,
                                              const OptF& bias, bool is_causal, double scale) {
    return composite::attention<B>(q, k, v, mask, bias, is_causal, scale);
  }

  // ---- reductions ------------------------------------------------------------------------------
  static F float_sum(const F& x) {
    return B::float_sum_dim(B::float_reshape(x, Shape{B::float_shape(x).numel()}), 0);
  }
  static I int_sum(const I& x) {
    return B::int_sum_dim(B::int_reshape(x, Shape{B::int_shape(x).numel()}), 0);
  }
  static F float_max_dim(const F& x, i64 d) {
    return B::float_max_dim_with_indices(x, d).first;
  }
  static I int_max_dim(const I& x, i64 d) {
    return B::int_max_dim_with_indices(x, d).first;
  }
  static F float_min_dim(const F& x, i64 d) {
    return B::float_min_dim_with_indices(x, d).first;
  }
  static I int_min_dim(const I& x, i64 d) {
    return B::int_min_dim_with_indices(x, d).first;
  }
  static I float_argmax(const F& x, i64 d) {
    return B::float_max_dim_with_indices(x, d).second;
  }
  static I int_argmax(const I& x, i64 d) {
    return B::int_max_dim_with_indices(x, d).second;
  }
  static I float_argmin(const F& x, i64 d) {
    return B::float_min_dim_with_indices(x, d).second;
  }
  static I int_argmin(const I& x, i64 d) {
    return B::int_min_dim_with_indices(x, d).second;
  }

  // ---- layout: the front end's composites (detail::LayoutPrim) ---------------------------------
#define EMBER_DEFAULT_LAYOUT(X, P, K)                                          \
  static P X##_unfold(P t, usize dim, i64 size, i64 step) {                    \
    return detail::LayoutPrim<B, K>::unfold(std::move(t), dim, size, step);    \
  }                                                                            \
  static P X##_squeeze_dims(P t, const Axes& dims) {                           \
    return detail::LayoutPrim<B, K>::squeeze_dims(std::move(t), dims);         \
  }                                                                            \
  static P X##_unsqueeze_dims(P t, const Axes& dims) {                         \
    return detail::LayoutPrim<B, K>::unsqueeze_dims(std::move(t), dims);       \
  }                                                                            \
  static P X##_repeat(P t, const Reps& times) {                                \
    return detail::LayoutPrim<B, K>::repeat(std::move(t), times);              \
  }                                                                            \
  static P X##_pad(const P& t, const Pads& pads, PadMode mode, double value) { \
    return detail::LayoutPrim<B, K>::pad(t, pads, mode, value);                \
  }
  EMBER_DEFAULT_LAYOUT(float, F, Float)
  EMBER_DEFAULT_LAYOUT(int, I, Int)
  EMBER_DEFAULT_LAYOUT(bool, Bo, Bool)
#undef EMBER_DEFAULT_LAYOUT

  // ---- quantization: the front end's composites (ember/tensor/quant_composite.hpp) -----------
  static FI float_quant_params(const F& x, const QuantScheme& s) {
    return detail::quant::quant_params<B>(x, s);
  }
  static I float_quantize(const F& x, const F& scales, const OptI& zp, const QuantScheme& s) {
    return detail::quant::quantize<B>(x, scales, zp, s);
  }
  static F int_dequantize(const I& q, const F& scales, const OptI& zp, const QuantScheme& s,
                          const Shape& shape, DType dtype) {
    return detail::quant::dequantize<B>(q, scales, zp, s, shape, dtype);
  }
  static I int_quantized_linear_pack(const I& w) {
    return detail::quant::quantized_linear_pack<B>(w);
  }
  static F float_quantized_linear(const F& x, const I& packed, const F& scales, const OptF& bias,
                                  const QuantScheme&, const Shape& weight,
                                  const std::optional<ActivationQuant>& input) {
    return detail::quant::quantized_linear<B>(x, packed, scales, bias, weight, input);
  }
  static F float_quantized_conv2d(const F& x, const I& values, const F& scales, const OptF& bias,
                                  const QuantScheme& scheme, const Shape& weight,
                                  const ConvOptions<2>& options, const ActivationQuant& input) {
    return detail::quant::quantized_conv2d<B>(x, values, scales, bias, scheme, weight, options,
                                              input);
  }
};

}  // namespace ember::dispatch
