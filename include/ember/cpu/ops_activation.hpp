// CPU backend: activation functions and fused nn kernels (see ember/backend/activation.hpp).
//
// None of these is required by the contract: the front end (ember/tensor/activation.hpp,
// ember/tensor/module/nn.hpp, ember/tensor/loss.hpp) has a composite default for each and
// calls these fast kernels when the backend defines them. Inputs are validated by the front
// end; kernels accept any strides and return new contiguous tensors (or reuse the input
// buffer when it is uniquely owned). f16/bf16 are computed through f32.
#pragma once

#include <cstddef>
#include <optional>
#include <utility>

#include "ember/cpu/tensor.hpp"

namespace ember::cpu {

/// Element-wise activation codes of `ActivationOps::unary_activation`.
enum class Act {
  Relu,
  Relu6,
  LeakyRelu,
  Gelu,
  GeluTanh,
  Silu,
  Mish,
  Sigmoid,
  HardSigmoid,
  HardSwish,
  LogSigmoid,
  Softplus,
  Softsign,
  Elu,
  Celu,
  Selu,
  Tanhshrink,
  HardShrink,
  SoftShrink
};

/// Softmax-family codes of `ActivationOps::softmax_family`.
enum class SoftmaxKind { Softmax, LogSoftmax, Softmin, QuietSoftmax };

struct ActivationOps {
  using P = CpuTensor;
  using OptP = std::optional<CpuTensor>;

  /// Applies `act` element-wise with parameters a, b (meaning per activation).
  static P unary_activation(P x, Act act, double a = 0.0, double b = 0.0);

  static P float_relu(P x) { return unary_activation(std::move(x), Act::Relu); }
  static P float_relu6(P x) { return unary_activation(std::move(x), Act::Relu6); }
  static P float_leaky_relu(P x, double slope) {
    return unary_activation(std::move(x), Act::LeakyRelu, slope);
  }
  static P float_gelu(P x) { return unary_activation(std::move(x), Act::Gelu); }
  static P float_gelu_tanh(P x) { return unary_activation(std::move(x), Act::GeluTanh); }
  static P float_silu(P x) { return unary_activation(std::move(x), Act::Silu); }
  static P float_mish(P x) { return unary_activation(std::move(x), Act::Mish); }
  static P float_sigmoid(P x) { return unary_activation(std::move(x), Act::Sigmoid); }
  static P float_hard_sigmoid(P x, double alpha, double beta) {
    return unary_activation(std::move(x), Act::HardSigmoid, alpha, beta);
  }
  static P float_hard_swish(P x) { return unary_activation(std::move(x), Act::HardSwish); }
  static P float_log_sigmoid(P x) { return unary_activation(std::move(x), Act::LogSigmoid); }
  static P float_softplus(P x, double beta, double threshold) {
    return unary_activation(std::move(x), Act::Softplus, beta, threshold);
  }
  static P float_softsign(P x) { return unary_activation(std::move(x), Act::Softsign); }
  static P float_elu(P x, double alpha) { return unary_activation(std::move(x), Act::Elu, alpha); }
  static P float_celu(P x, double alpha) {
    return unary_activation(std::move(x), Act::Celu, alpha);
  }
  static P float_selu(P x) { return unary_activation(std::move(x), Act::Selu); }
  static P float_tanhshrink(P x) { return unary_activation(std::move(x), Act::Tanhshrink); }
  static P float_hard_shrink(P x, double lambda) {
    return unary_activation(std::move(x), Act::HardShrink, lambda);
  }
  static P float_soft_shrink(P x, double lambda) {
    return unary_activation(std::move(x), Act::SoftShrink, lambda);
  }

  /// x [N, C, ...] (or [C]), weight [C] or [1]: x where x >= 0, else weight[c] * x.
  static P float_prelu(const P& x, const P& weight);
  /// Halves a, b of `dim` (even size): a * sigmoid(b).
  static P float_glu(const P& x, std::size_t dim);

  /// Softmax-family reduction over `dim` (already normalised).
  static P softmax_family(const P& x, std::size_t dim, SoftmaxKind kind);
  static P float_softmax(const P& x, std::size_t dim) {
    return softmax_family(x, dim, SoftmaxKind::Softmax);
  }
  static P float_log_softmax(const P& x, std::size_t dim) {
    return softmax_family(x, dim, SoftmaxKind::LogSoftmax);
  }
  static P float_softmin(const P& x, std::size_t dim) {
    return softmax_family(x, dim, SoftmaxKind::Softmin);
  }
  static P float_quiet_softmax(const P& x, std::size_t dim) {
    return softmax_family(x, dim, SoftmaxKind::QuietSoftmax);
  }

  /// Normalises over the last `k` dims; weight/bias have those dims' shape.
  static P float_layer_norm(const P& x, std::size_t k, const OptP& weight, const OptP& bias,
                            double eps);
  /// Normalises over the last dim by the root mean square; weight [d].
  static P float_rms_norm(const P& x, const OptP& weight, double eps);
  /// x [N, C, ...]; groups of C / num_groups channels; weight/bias [C].
  static P float_group_norm(const P& x, std::int64_t num_groups, const OptP& weight,
                            const OptP& bias, double eps);
  /// Inference batch norm: x [N, C, ...], running mean/var [C], weight/bias [C].
  static P float_batch_norm(const P& x, const P& mean, const P& var, const OptP& weight,
                            const OptP& bias, double eps);
  /// Training batch norm (batch statistics over N and the spatial dims): x [N, C, ...],
  /// weight/bias [C] -> {y, stats [2, C]: mean; biased variance}. One thread per channel
  /// range; sums in f32 lanes over blocks with f64 totals (f64 inputs: f64 throughout).
  static std::pair<P, P> float_batch_norm_train(const P& x, const OptP& weight, const OptP& bias,
                                                double eps);
  /// Gradients of float_batch_norm_train (Ioffe & Szegedy 2015, eq. of section 3): with
  /// xhat = (x - mean) / sqrt(var + eps) per channel and M = N * spatial,
  ///   dbias = sum dy, dweight = sum dy * xhat,
  ///   dx = weight / sqrt(var + eps) * (dy - dbias / M - xhat * dweight / M).
  /// x, dy [N, C, ...], stats [2, C] from the forward -> {dx, [2, C]: dweight; dbias}.
  static std::pair<P, P> float_batch_norm_train_backward(const P& x, const P& dy, const P& stats,
                                                         const OptP& weight, double eps);

  /// x [..., in], weight [out, in] (PyTorch layout), bias [out] -> [..., out].
  static P float_linear(const P& x, const P& weight, const OptP& bias);
  /// weights [n, d], indices (int) [...] -> [..., d].
  static P float_embedding(const P& weights, const P& indices);

  /// q [..., L, E], k [..., S, E], v [..., S, Ev] (batch dims equal), mask (bool) and bias
  /// broadcastable to [..., L, S] and already of q's rank -> [..., L, Ev].
  static P float_scaled_dot_product_attention(const P& q, const P& k, const P& v, const OptP& mask,
                                              const OptP& bias, bool is_causal, double scale);

  /// logits [N, C], target probabilities [N, C] -> [1]: -mean_n sum_c t * log_softmax(x).
  static P float_cross_entropy_with_logits(const P& logits, const P& targets);
  /// logits [N, C], int targets [N] -> [1]: -mean_n log_softmax(x)[n, t_n].
  static P float_cross_entropy_with_indices(const P& logits, const P& targets);
};

}  // namespace ember::cpu
