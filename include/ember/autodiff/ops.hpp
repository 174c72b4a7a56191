// Autodiff<B>'s functions: `AdOps<B>` derives from the generated pass-through
// Forward<B, ...> (ember/backend/forward.hpp), so every int/bool function and every float
// function without a float result (comparisons, argmax, shape, ...) goes to B unchanged, and
// declares the float functions it records: one per REQ row of the registry whose result is
// a float tensor computed from float tensors (generated declarations; the rules are defined
// in ember/autodiff/impl/<family>.hpp), the element-wise templates (rules in the
// element-wise table's rows), and the optional functions Autodiff differentiates when B has
// them (linalg, training batch norm). Other optional float functions are not offered, so
// the front end runs their composites, which are differentiated through the required ones.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ember/autodiff/tensor.hpp"
#include "ember/backend/forward.hpp"

namespace ember::autodiff {

/// Whether B has the training batch norm kernel and its backward (ember/backend/activation.hpp).
template <class B>
concept HasBatchNormTrain = requires(const typename B::FloatTensor& p,
                                     const std::optional<typename B::FloatTensor>& o, double eps) {
  {B::float_batch_norm_train(p, o, o, eps)};
  {B::float_batch_norm_train_backward(p, p, p, o, eps)};
};
/// Whether B has fused attention with a training forward and a backward
/// (ember/backend/activation.hpp): the inference one runs when nothing records a graph.
template <class B>
concept HasFusedAttention = requires(const typename B::FloatTensor& p,
                                     const std::optional<typename B::FloatTensor>& o,
                                     const std::optional<typename B::BoolTensor>& m, bool c,
                                     double s) {
  {B::float_scaled_dot_product_attention(p, p, p, m, o, c, s)};
  {B::float_scaled_dot_product_attention_train(p, p, p, m, o, c, s)};
  {B::float_scaled_dot_product_attention_backward(p, p, p, p, p, p, m, o, c, s)};
};
template <class B>
concept AdInnerHasDiag = requires(const typename B::FloatTensor& p) {
  B::float_diag(p);
};
template <class B>
concept AdInnerHasCross = requires(const typename B::FloatTensor& p, std::size_t d) {
  B::float_cross(p, p, d);
};
template <class B>
concept AdInnerHasVectorNorm = requires(const typename B::FloatTensor& p, double v, std::size_t d) {
  B::float_vector_norm(p, v, d);
};
template <class B>
concept AdInnerHasCosineSimilarity = requires(const typename B::FloatTensor& p, std::size_t d,
                                              double eps) {
  B::float_cosine_similarity(p, p, d, eps);
};

/// Autodiff's primitive types for Forward: float tensors carry a graph node, so every float
/// result computed from float operands must be recorded (forward_float = false).
template <class B>
struct AdTypes {
  using FloatTensor = AdTensor<B>;
  using IntTensor = typename B::IntTensor;
  using BoolTensor = typename B::BoolTensor;
  using Device = typename B::Device;
  static constexpr bool forward_float = false;
};

// The generated declarations of the recorded REQ rows (result class F).
#define EMBER_AD_DECLARE(Req, Res, Ret, name, Desc, Params) \
  EMBER_AD_DECLARE_##Req##_##Res(Ret, name, Params)
#define EMBER_AD_DECLARE_REQ_F(Ret, name, Params) static Ret name(EMBER_PP_PARAMS Params);
#define EMBER_AD_DECLARE_REQ_C(Ret, name, Params)
#define EMBER_AD_DECLARE_REQ_N(Ret, name, Params)
#define EMBER_AD_DECLARE_OPT_F(Ret, name, Params)
#define EMBER_AD_DECLARE_OPT_N(Ret, name, Params)
#define EMBER_AD_DECLARE_EXT_F(Ret, name, Params)
#define EMBER_AD_DECLARE_EXT_N(Ret, name, Params)
#define EMBER_AD_DECLARE_N(Req, Res, Ret, name, Desc, Params, Ns) \
  EMBER_AD_DECLARE_N_##Req##_##Res(Ret, name, Params)
#define EMBER_AD_DECLARE_N_REQ_F(Ret, name, Params) \
  template <std::size_t N>                          \
  static Ret name(EMBER_PP_PARAMS Params);
#define EMBER_AD_DECLARE_N_REQ_C(Ret, name, Params)
#define EMBER_AD_DECLARE_N_REQ_N(Ret, name, Params)
#define EMBER_AD_DECLARE_N_OPT_F(Ret, name, Params)
#define EMBER_AD_DECLARE_N_OPT_N(Ret, name, Params)
#define EMBER_AD_DECLARE_N_EXT_F(Ret, name, Params)
#define EMBER_AD_DECLARE_N_EXT_N(Ret, name, Params)

template <class B>
struct AdOps : Forward<B, AdTypes<B>, AdOps<B>> {
  EMBER_IR_TYPE_ALIASES(AdTensor<B>, typename B::IntTensor, typename B::BoolTensor,
                        typename B::Device);
  using AP = F;
  using OptAP = OptF;
  using BP = Bo;
  /// B's float primitive.
  using IP = typename B::FloatTensor;
  // The primitive types under the contract's names (for code generic over backends, e.g.
  // ember/backend/attention_composite.hpp).
  using FloatTensor = AP;
  using IntTensor = I;
  using BoolTensor = Bo;

  // ---- unwrap / lift for the pass-through functions -------------------------------------------
  static IP unwrap(const AP& t) { return t.inner; }
  static IP unwrap(AP&& t) { return std::move(t.inner); }
  static std::optional<IP> unwrap(const OptAP& t) {
    if (!t) return std::nullopt;
    return t->inner;
  }
  static std::vector<IP> unwrap(const std::vector<AP>& ts) {
    std::vector<IP> out;
    out.reserve(ts.size());
    for (const AP& t : ts) out.push_back(t.inner);
    return out;
  }
  template <class T>
  static T&& unwrap(T&& x) {
    return std::forward<T>(x);
  }
  /// Float results of pass-through functions are constants (creation: Autodiff<B, S>
  /// overrides those to mark its checkpointing strategy).
  template <class R, class V>
  static R lift(V&& v) {
    if constexpr (std::is_same_v<R, AP>)
      return AP{std::forward<V>(v), nullptr, false};
    else
      return R(std::forward<V>(v));
  }

  // ---- recorded: the REQ rows with a float result from float operands (generated) ----------
  EMBER_IR_OPS(EMBER_AD_DECLARE, EMBER_AD_DECLARE_N)

  // ---- recorded: the element-wise table (rules in its rows) ------------------------------------
  template <class Op>
  static AP float_unary(AP x);
  template <class Op>
  static AP float_binary(AP lhs, AP rhs);
  template <class Op>
  static AP float_binary_scalar(AP lhs, double rhs);
  /// Gradient passes where min <= x <= max (torch.clamp), zero elsewhere.
  static AP float_clamp(AP x, double min, double max);

  // ---- recorded when B has them (optional rows) -------------------------------------------------
  static AP float_diag(const AP& t) requires AdInnerHasDiag<B>;
  static AP float_cross(const AP& lhs, const AP& rhs, usize dim) requires AdInnerHasCross<B>;
  static AP float_vector_norm(const AP& t, double p, usize dim) requires AdInnerHasVectorNorm<B>;
  static AP float_cosine_similarity(const AP& lhs, const AP& rhs, usize dim,
                                    double eps) requires AdInnerHasCosineSimilarity<B>;
  /// Training batch norm: x [N, C, ...], weight/bias [C] -> {y, stats [2, C] (mean; biased
  /// var), untracked}. Backward: B's float_batch_norm_train_backward, or (when the backward
  /// pass is recorded) the same formulas written with Autodiff's ops.
  static std::pair<AP, AP> float_batch_norm_train(const AP& x, const OptAP& weight,
                                                  const OptAP& bias,
                                                  double eps) requires HasBatchNormTrain<B>;
  /// Scaled dot-product attention by B's fused kernels (forward saving the rows' log-sum-exp,
  /// fused backward); the composite with Autodiff's ops where they cannot serve
  /// (ember/autodiff/impl/attention.hpp).
  static AP float_scaled_dot_product_attention(const AP& q, const AP& k, const AP& v,
                                               const OptBo& mask, const OptAP& bias, bool is_causal,
                                               double scale) requires HasFusedAttention<B>;

  // ---- the autodiff API (AutodiffBackend) -------------------------------------------------------
  /// Runs the graph of `t` backwards; see AutodiffBackend.
  static Gradients<B> float_backward(const AP& t, bool create_graph = false);
  static bool float_is_require_grad(const AP& t) { return t.node != nullptr; }
  static AP float_detach(AP t) { return AP{std::move(t.inner), nullptr, t.checkpointing}; }
  static std::optional<IP> float_grad(const AP& t, const Gradients<B>& g) {
    if (!t.node) return std::nullopt;
    const AP* found = g.find(t.node->id);
    if (!found) return std::nullopt;
    return found->inner;
  }
  static std::optional<AP> float_grad_graph(const AP& t, const Gradients<B>& g) {
    if (!t.node) return std::nullopt;
    const AP* found = g.find(t.node->id);
    if (!found) return std::nullopt;
    return *found;
  }
  static std::optional<IP> float_grad_remove(const AP& t, Gradients<B>& g) {
    if (!t.node) return std::nullopt;
    auto removed = g.remove(t.node->id);
    if (!removed) return std::nullopt;
    return std::move(removed->inner);
  }
  /// Sets (or replaces) the gradient of leaf `t`; throws Error if `t` is not tracked.
  static void float_grad_replace(const AP& t, Gradients<B>& g, IP grad) {
    if (!t.node) {
      ember::detail::fail<Error>("grad_replace", "the tensor does not require grad");
    }
    g.put(t.node->id, AP{std::move(grad), nullptr, t.checkpointing});
  }
  static IP float_inner(const AP& t) { return t.inner; }
  static I int_inner(const I& t) { return t; }
  static I int_from_inner(I t) { return t; }
  static Bo bool_inner(const Bo& t) { return t; }
  static Bo bool_from_inner(Bo t) { return t; }
  /// A new leaf holding `value` that requires a gradient.
  static AP make_leaf(IP value, bool checkpointing) {
    auto node = std::make_shared<Node<B>>();
    node->leaf = true;
    node->saved_output = value;
    return AP{std::move(value), std::move(node), checkpointing};
  }
};

}  // namespace ember::autodiff
