// Backend contract: activation functions and nn functional ops. See core.hpp for the
// conventions.
//
// This family requires nothing beyond the core: every op is a composite written in the front
// end (ember/tensor/activation.hpp, ember/tensor/module/nn.hpp, ember/tensor/loss.hpp) with
// element-wise, reduce, layout, indexing and linalg ops. A backend may override any of them
// with a fused kernel by defining the static function below (P = FloatTensor, dims already
// normalised, parameters already cast to x's dtype, all shapes checked):
//   float_relu(P) float_relu6(P) float_leaky_relu(P, double slope) float_gelu(P)
//   float_gelu_tanh(P) float_silu(P) float_mish(P) float_sigmoid(P)
//   float_hard_sigmoid(P, double alpha, double beta) float_hard_swish(P) float_log_sigmoid(P)
//   float_softplus(P, double beta, double threshold) float_softsign(P) float_elu(P, double)
//   float_celu(P, double) float_selu(P) float_tanhshrink(P) float_hard_shrink(P, double)
//   float_soft_shrink(P, double) float_prelu(x, weight) float_glu(x, size_t dim)
//   float_softmax / float_log_softmax / float_softmin / float_quiet_softmax(x, size_t dim)
//   float_layer_norm(x, size_t k, optional<P> w, optional<P> b, double eps)
//   float_rms_norm(x, optional<P> w, double eps)
//   float_group_norm(x, int64 groups, optional<P> w, optional<P> b, double eps)
//   float_batch_norm(x, mean, var, optional<P> w, optional<P> b, double eps)
//   float_batch_norm_train(x [N, C, ...], optional<P> w, optional<P> b, double eps)
//       -> pair<P y, P stats [2, C]> (training mode: batch mean in row 0, biased variance
//       in row 1). Autodiff<B> differentiates it only when B also defines
//       float_batch_norm_train_backward(x, dy, stats, optional<P> w, double eps)
//       -> pair<P dx, P [2, C] (dweight in row 0, dbias in row 1)>.
//   float_linear(x, weight [out, in], optional<P> bias)
//   float_embedding(weights, IntTensor indices)
//   float_scaled_dot_product_attention(q, k, v, optional<BoolTensor> mask, optional<P> bias,
//                                      bool is_causal, double scale)
//       Autodiff<B> runs it through B's fused kernels only when B also defines
//       float_scaled_dot_product_attention_train(same arguments)
//       -> optional<pair<P out, P lse [..., L]>> (each query row's log-sum-exp, f32 or f64;
//       nullopt where the kernels do not serve the case: Autodiff then differentiates the
//       composite) and float_scaled_dot_product_attention_backward(q, k, v, out, dout, lse,
//       mask, bias, is_causal, scale) -> vector<P> {dq, dk, dv}.
//   float_cross_entropy_with_logits(logits, probs), float_cross_entropy_with_indices(logits,
//   IntTensor)
// The front end detects each with a requires-expression; a deleted declaration (as in the
// tests' CpuComposite) switches the override off.
#pragma once

#include "ember/backend/core.hpp"

namespace ember {}  // namespace ember
