// Op descriptions: activations and nn functions (ember/backend/activation.hpp). All optional:
// the front end composes them from the required ops when a backend has no fused kernel.
#pragma once

#include "ember/ir/desc.hpp"

namespace ember::ir {

/// Element-wise activations: the output has x's type (no base class, so that the
/// descriptions are plain aggregates of their fields).
#define EMBER_IR_ACTIVATION                     \
  static constexpr Bound bound = Bound::Memory; \
  TensorType infer(const TensorType& x) const { \
    return x;                                   \
  }
// clang-format off
struct Relu { static constexpr const char* name = "relu"; EMBER_IR_ACTIVATION EMBER_IR_NO_FIELDS };
struct Relu6 { static constexpr const char* name = "relu6"; EMBER_IR_ACTIVATION EMBER_IR_NO_FIELDS };
struct Gelu { static constexpr const char* name = "gelu"; EMBER_IR_ACTIVATION EMBER_IR_NO_FIELDS };
struct GeluTanh { static constexpr const char* name = "gelu_tanh"; EMBER_IR_ACTIVATION EMBER_IR_NO_FIELDS };
struct Silu { static constexpr const char* name = "silu"; EMBER_IR_ACTIVATION EMBER_IR_NO_FIELDS };
struct Mish { static constexpr const char* name = "mish"; EMBER_IR_ACTIVATION EMBER_IR_NO_FIELDS };
struct Sigmoid { static constexpr const char* name = "sigmoid"; EMBER_IR_ACTIVATION EMBER_IR_NO_FIELDS };
struct HardSwish { static constexpr const char* name = "hard_swish"; EMBER_IR_ACTIVATION EMBER_IR_NO_FIELDS };
struct LogSigmoid { static constexpr const char* name = "log_sigmoid"; EMBER_IR_ACTIVATION EMBER_IR_NO_FIELDS };
struct Softsign { static constexpr const char* name = "softsign"; EMBER_IR_ACTIVATION EMBER_IR_NO_FIELDS };
struct Selu { static constexpr const char* name = "selu"; EMBER_IR_ACTIVATION EMBER_IR_NO_FIELDS };
struct Tanhshrink { static constexpr const char* name = "tanhshrink"; EMBER_IR_ACTIVATION EMBER_IR_NO_FIELDS };
struct LeakyRelu { static constexpr const char* name = "leaky_relu"; double negative_slope = 0.01; EMBER_IR_ACTIVATION EMBER_IR_FIELDS(negative_slope) };
struct Elu { static constexpr const char* name = "elu"; double alpha = 1.0; EMBER_IR_ACTIVATION EMBER_IR_FIELDS(alpha) };
struct Celu { static constexpr const char* name = "celu"; double alpha = 1.0; EMBER_IR_ACTIVATION EMBER_IR_FIELDS(alpha) };
struct HardShrink { static constexpr const char* name = "hard_shrink"; double lambda = 0.5; EMBER_IR_ACTIVATION EMBER_IR_FIELDS(lambda) };
struct SoftShrink { static constexpr const char* name = "soft_shrink"; double lambda = 0.5; EMBER_IR_ACTIVATION EMBER_IR_FIELDS(lambda) };
struct HardSigmoid { static constexpr const char* name = "hard_sigmoid"; double alpha = 0.2, beta = 0.5; EMBER_IR_ACTIVATION EMBER_IR_FIELDS(alpha, beta) };
struct Softplus { static constexpr const char* name = "softplus"; double beta = 1.0, threshold = 20.0; EMBER_IR_ACTIVATION EMBER_IR_FIELDS(beta, threshold) };
// clang-format on
#undef EMBER_IR_ACTIVATION

/// x [N, C, ...] (or [C]), weight [C] or [1]: x where x >= 0, else weight[c] x.
struct Prelu {
  static constexpr const char* name = "prelu";
  static constexpr Bound bound = Bound::Memory;
  EMBER_IR_NO_FIELDS
  TensorType infer(const TensorType& x, const TensorType& weight) const;
};
/// Halves a, b of `dim` (even size): a * sigmoid(b).
struct Glu {
  static constexpr const char* name = "glu";
  static constexpr Bound bound = Bound::Memory;
  std::size_t dim = 0;
  EMBER_IR_FIELDS(dim)
  TensorType infer(const TensorType& x) const;
};
/// The softmax family over `dim` (same shape).
struct SoftmaxFamily {
  static constexpr Bound bound = Bound::Compute;
  std::size_t dim = 0;
  EMBER_IR_FIELDS(dim)
  TensorType along(const char* op, const TensorType& x) const;
};
struct Softmax : SoftmaxFamily {
  static constexpr const char* name = "softmax";
  TensorType infer(const TensorType& x) const { return along(name, x); }
};
struct LogSoftmax : SoftmaxFamily {
  static constexpr const char* name = "log_softmax";
  TensorType infer(const TensorType& x) const { return along(name, x); }
};
struct Softmin : SoftmaxFamily {
  static constexpr const char* name = "softmin";
  TensorType infer(const TensorType& x) const { return along(name, x); }
};
struct QuietSoftmax : SoftmaxFamily {
  static constexpr const char* name = "quiet_softmax";
  TensorType infer(const TensorType& x) const { return along(name, x); }
};
/// Normalises over the last `k` dims; weight / bias have those dims' shape.
struct LayerNorm {
  static constexpr const char* name = "layer_norm";
  static constexpr Bound bound = Bound::Compute;
  std::size_t k = 1;
  double eps = 1e-5;
  EMBER_IR_FIELDS(k, eps)
  TensorType infer(const TensorType& x, const std::optional<TensorType>& weight,
                   const std::optional<TensorType>& bias) const;
};
/// Normalises over the last dim by the root mean square; weight [d].
struct RmsNorm {
  static constexpr const char* name = "rms_norm";
  static constexpr Bound bound = Bound::Compute;
  double eps = 1e-5;
  EMBER_IR_FIELDS(eps)
  TensorType infer(const TensorType& x, const std::optional<TensorType>& weight) const;
};
/// x [N, C, ...]; groups of C / num_groups channels; weight / bias [C].
struct GroupNorm {
  static constexpr const char* name = "group_norm";
  static constexpr Bound bound = Bound::Compute;
  std::int64_t num_groups = 1;
  double eps = 1e-5;
  EMBER_IR_FIELDS(num_groups, eps)
  TensorType infer(const TensorType& x, const std::optional<TensorType>& weight,
                   const std::optional<TensorType>& bias) const;
};
/// Inference batch norm: x [N, C, ...], running mean / var [C], weight / bias [C].
struct BatchNorm {
  static constexpr const char* name = "batch_norm";
  static constexpr Bound bound = Bound::Compute;
  double eps = 1e-5;
  EMBER_IR_FIELDS(eps)
  TensorType infer(const TensorType& x, const TensorType& mean, const TensorType& var,
                   const std::optional<TensorType>& weight,
                   const std::optional<TensorType>& bias) const;
};
/// Training batch norm: x [N, C, ...] -> (y, stats [2, C]: batch mean; biased variance).
struct BatchNormTrain {
  static constexpr const char* name = "batch_norm_train";
  static constexpr Bound bound = Bound::Compute;
  double eps = 1e-5;
  EMBER_IR_FIELDS(eps)
  TensorTypes2 infer(const TensorType& x, const std::optional<TensorType>& weight,
                     const std::optional<TensorType>& bias) const;
};
/// Its gradients: x, dy [N, C, ...], stats [2, C] -> (dx, [2, C]: dweight; dbias).
struct BatchNormTrainBackward {
  static constexpr const char* name = "batch_norm_train_backward";
  static constexpr Bound bound = Bound::Compute;
  double eps = 1e-5;
  EMBER_IR_FIELDS(eps)
  TensorTypes2 infer(const TensorType& x, const TensorType& dy, const TensorType& stats,
                     const std::optional<TensorType>& weight) const;
};
/// x [..., in], weight [out, in], bias [out] -> [..., out].
struct Linear {
  static constexpr const char* name = "linear";
  static constexpr Bound bound = Bound::Compute;
  EMBER_IR_NO_FIELDS
  TensorType infer(const TensorType& x, const TensorType& weight,
                   const std::optional<TensorType>& bias) const;
  /// The rule of infer on shapes and dtypes held elsewhere (no copies: the front end calls
  /// it on every forward pass). `bias` may be null.
  static void check(const Shape& x, DType x_dtype, const Shape& weight, DType weight_dtype,
                    const Shape* bias, DType bias_dtype);
};
/// weights [n, d], int indices [...] -> [..., d].
struct Embedding {
  static constexpr const char* name = "embedding";
  static constexpr Bound bound = Bound::Memory;
  EMBER_IR_NO_FIELDS
  TensorType infer(const TensorType& weights, const TensorType& indices) const;
};
/// q [..., L, E], k [..., S, E], v [..., S, Ev] -> [..., L, Ev]; mask (Bool) and bias
/// broadcastable to [..., L, S].
struct ScaledDotProductAttention {
  static constexpr const char* name = "scaled_dot_product_attention";
  static constexpr Bound bound = Bound::Compute;
  bool is_causal = false;
  double scale = 1.0;
  EMBER_IR_FIELDS(is_causal, scale)
  TensorType infer(const TensorType& q, const TensorType& k, const TensorType& v,
                   const std::optional<TensorType>& mask,
                   const std::optional<TensorType>& bias) const;
};
/// Its training forward: the same operands -> (out [..., L, Ev], lse [..., L]: each query
/// row's log-sum-exp of its scaled, masked scores, f32 for f32/f16/bf16 and f64 for f64), or
/// nothing where the backend's fused kernels do not serve the case.
struct ScaledDotProductAttentionTrain {
  static constexpr const char* name = "scaled_dot_product_attention_train";
  static constexpr Bound bound = Bound::Compute;
  bool is_causal = false;
  double scale = 1.0;
  EMBER_IR_FIELDS(is_causal, scale)
  TensorTypes2 infer(const TensorType& q, const TensorType& k, const TensorType& v,
                     const std::optional<TensorType>& mask,
                     const std::optional<TensorType>& bias) const;
};
/// Its gradients: q, k, v, out, dout, lse (the training forward's) -> {dq, dk, dv} (the
/// shapes and dtype of q, k, v).
struct ScaledDotProductAttentionBackward {
  static constexpr const char* name = "scaled_dot_product_attention_backward";
  static constexpr Bound bound = Bound::Compute;
  bool is_causal = false;
  double scale = 1.0;
  EMBER_IR_FIELDS(is_causal, scale)
  std::vector<TensorType> infer(const TensorType& q, const TensorType& k, const TensorType& v,
                                const TensorType& out, const TensorType& dout,
                                const TensorType& lse, const std::optional<TensorType>& mask,
                                const std::optional<TensorType>& bias) const;
};
/// logits [N, C] with target probabilities [N, C] or int targets [N] -> [1] (mean loss).
struct CrossEntropy {
  static constexpr const char* name = "cross_entropy_with_logits";
  static constexpr Bound bound = Bound::Compute;
  EMBER_IR_NO_FIELDS
  TensorType infer(const TensorType& logits, const TensorType& targets) const;
};

}  // namespace ember::ir

// Registry rows (see ember/ir/core.hpp for the columns).
// clang-format off
#define EMBER_IR_NN(X, XN) \
  X(OPT, F, F, float_relu, Relu, (F)) \
  X(OPT, F, F, float_relu6, Relu6, (F)) \
  X(OPT, F, F, float_gelu, Gelu, (F)) \
  X(OPT, F, F, float_gelu_tanh, GeluTanh, (F)) \
  X(OPT, F, F, float_silu, Silu, (F)) \
  X(OPT, F, F, float_mish, Mish, (F)) \
  X(OPT, F, F, float_sigmoid, Sigmoid, (F)) \
  X(OPT, F, F, float_hard_swish, HardSwish, (F)) \
  X(OPT, F, F, float_log_sigmoid, LogSigmoid, (F)) \
  X(OPT, F, F, float_softsign, Softsign, (F)) \
  X(OPT, F, F, float_selu, Selu, (F)) \
  X(OPT, F, F, float_tanhshrink, Tanhshrink, (F)) \
  X(OPT, F, F, float_leaky_relu, LeakyRelu, (F, double)) \
  X(OPT, F, F, float_elu, Elu, (F, double)) \
  X(OPT, F, F, float_celu, Celu, (F, double)) \
  X(OPT, F, F, float_hard_shrink, HardShrink, (F, double)) \
  X(OPT, F, F, float_soft_shrink, SoftShrink, (F, double)) \
  X(OPT, F, F, float_hard_sigmoid, HardSigmoid, (F, double, double)) \
  X(OPT, F, F, float_softplus, Softplus, (F, double, double)) \
  X(EXT, F, F, float_prelu, Prelu, (const F&, const F&)) \
  X(EXT, F, F, float_glu, Glu, (const F&, usize)) \
  X(OPT, F, F, float_softmax, Softmax, (const F&, usize)) \
  X(OPT, F, F, float_log_softmax, LogSoftmax, (const F&, usize)) \
  X(OPT, F, F, float_softmin, Softmin, (const F&, usize)) \
  X(OPT, F, F, float_quiet_softmax, QuietSoftmax, (const F&, usize)) \
  X(EXT, F, F, float_layer_norm, LayerNorm, (const F&, usize, const OptF&, const OptF&, double)) \
  X(EXT, F, F, float_rms_norm, RmsNorm, (const F&, const OptF&, double)) \
  X(EXT, F, F, float_group_norm, GroupNorm, (const F&, i64, const OptF&, const OptF&, double)) \
  X(EXT, F, F, float_batch_norm, BatchNorm, (const F&, const F&, const F&, const OptF&, const OptF&, double)) \
  X(OPT, F, FF, float_batch_norm_train, BatchNormTrain, (const F&, const OptF&, const OptF&, double)) \
  X(EXT, F, FF, float_batch_norm_train_backward, BatchNormTrainBackward, (const F&, const F&, const F&, const OptF&, double)) \
  X(OPT, F, F, float_linear, Linear, (const F&, const F&, const OptF&)) \
  X(EXT, F, F, float_embedding, Embedding, (const F&, const I&)) \
  X(OPT, F, F, float_scaled_dot_product_attention, ScaledDotProductAttention, (const F&, const F&, const F&, const OptBo&, const OptF&, bool, double)) \
  X(EXT, F, OptFF, float_scaled_dot_product_attention_train, ScaledDotProductAttentionTrain, (const F&, const F&, const F&, const OptBo&, const OptF&, bool, double)) \
  X(EXT, F, VecF, float_scaled_dot_product_attention_backward, ScaledDotProductAttentionBackward, (const F&, const F&, const F&, const F&, const F&, const F&, const OptBo&, const OptF&, bool, double)) \
  X(EXT, F, F, float_cross_entropy_with_logits, CrossEntropy, (const F&, const F&)) \
  X(EXT, F, F, float_cross_entropy_with_indices, CrossEntropy, (const F&, const I&))
// clang-format on
