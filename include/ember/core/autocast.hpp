// Automatic mixed precision (torch.autocast; Micikevicius et al. 2018, "Mixed Precision
// Training"): while an Autocast guard lives on a thread, the front end runs
//   - in the autocast dtype (f16 or bf16): matmul, module::linear, conv1d/2d/3d,
//     conv_transpose1d/2d/3d and scaled_dot_product_attention. Their f32/f16/bf16 operands are
//     cast first (f64 and integer operands are left alone, as torch); the result has the
//     autocast dtype. The backends accumulate f16/bf16 products in f32.
//   - in f32: softmax, log_softmax, softmin, quiet_softmax, layer_norm, rms_norm, group_norm,
//     cross_entropy_with_logits and the losses of nn::loss built on them or on their own
//     element terms (cross_entropy, nll, mse, l1, huber, smooth_l1, binary_cross_entropy with
//     and without logits, kl_div, ctc). f16/bf16 inputs are cast to f32 and the result is f32.
//     Linear and attention with an f64 operand stay in f64.
// Every other op runs in its inputs' dtype; binary ops of mixed float dtypes promote
// (promote_types), so a bf16 activation plus an f32 bias gives f32. Parameters stay what
// they are (f32 master weights): the casts are recorded by Autodiff, so each parameter's
// gradient comes back in its own dtype. The backward pass runs in the forward's dtypes.
//
//   {
//     ember::Autocast amp(DType::BF16);
//     auto loss = cross_entropy(model.forward(x), y);   // matmuls/convs in bf16
//   }
//   loss.backward();                                   // f32 gradients of f32 parameters
//
// The state is per thread (torch's is per thread too): a guard on one thread does not
// affect another. Guards nest; each restores the state it found. f16 training needs loss
// scaling against underflowing gradients: optim::GradScaler, or the Learner's
// mixed_precision(DType::F16), which uses one.
#pragma once

#include <optional>

#include "ember/core/dtype.hpp"

namespace ember {

/// Autocast on this thread for the guard's lifetime (torch.autocast as a context manager).
/// `Autocast(dtype, false)` turns it off inside an autocast region (torch's enabled=False).
class Autocast {
 public:
  /// Throws ValueError unless dtype is F16 or BF16.
  explicit Autocast(DType dtype, bool enabled = true);
  /// An optional dtype: nullopt turns autocast off for the guard's lifetime.
  explicit Autocast(std::optional<DType> dtype);
  ~Autocast();
  Autocast(const Autocast&) = delete;
  Autocast& operator=(const Autocast&) = delete;

 private:
  std::optional<DType> previous_;
};

/// The dtype autocast casts to on this thread; nullopt when it is off
/// (torch.get_autocast_dtype together with torch.is_autocast_enabled).
std::optional<DType> autocast_dtype() noexcept;

/// Whether autocast is on on this thread (torch.is_autocast_enabled).
inline bool is_autocast_enabled() noexcept {
  return autocast_dtype().has_value();
}

namespace detail {

/// The dtype a lower-precision op (matmul, linear, conv, attention) computes in for an
/// operand of dtype `dt`: the autocast dtype when autocast is on and dt is F32, F16 or BF16;
/// dt otherwise.
DType autocast_lower_dtype(DType dt) noexcept;

/// The dtype an f32 op (softmax family, norms, cross-entropy) computes in for an operand of
/// dtype `dt`: F32 when autocast is on and dt is F16 or BF16; dt otherwise.
DType autocast_widen_dtype(DType dt) noexcept;

/// `t` cast to autocast_lower_dtype(t.dtype()); `t` itself when that is its dtype.
/// T is a float Tensor or an optional of one.
template <class T>
T autocast_lower(const T& t) {
  if constexpr (requires { t.has_value(); }) {
    if (!t) return t;
    return T(autocast_lower(*t));
  } else {
    const DType d = autocast_lower_dtype(t.dtype());
    return d == t.dtype() ? t : t.cast(d);
  }
}

/// `t` cast to autocast_widen_dtype(t.dtype()); `t` itself when that is its dtype.
template <class T>
T autocast_widen(const T& t) {
  const DType d = autocast_widen_dtype(t.dtype());
  return d == t.dtype() ? t : t.cast(d);
}

}  // namespace detail

}  // namespace ember
