// Autodiff<B>: core functions of the contract, int/bool pass-through, and the autodiff
// API (require_grad, backward, grad, ...). Definitions of the float functions are in
// ember/autodiff/impl/core.hpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ember/autodiff/tensor.hpp"
#include "ember/backend/backend.hpp"

/// Declares a static function `fn` that forwards to B::fn (int and bool ops, which
/// Autodiff does not record). SFINAE keeps optional functions optional.
#define EMBER_AD_FORWARD(fn)                                          \
  template <class BB = B, class... A>                                 \
  static auto fn(A&&... a)->decltype(BB::fn(std::forward<A>(a)...)) { \
    return BB::fn(std::forward<A>(a)...);                             \
  }

namespace ember::autodiff {

template <class B>
struct AdCoreOps {
  using AP = AdTensor<B>;
  using IP = typename B::FloatTensor;
  using Dev = typename B::Device;

  static std::string device_name(const Dev& d) { return B::device_name(d); }
  static void seed(std::uint64_t s) { B::seed(s); }
  static void sync(const Dev& d) { B::sync(d); }

  // ---- float core ----------------------------------------------------------------------
  static TensorData float_into_data(const AP& t) { return B::float_into_data(t.inner); }
  static Shape float_shape(const AP& t) { return B::float_shape(t.inner); }
  static DType float_dtype(const AP& t) { return B::float_dtype(t.inner); }
  static Dev float_device(const AP& t) { return B::float_device(t.inner); }
  /// Tracked: the gradient moves back to the input's device.
  static AP float_to_device(AP t, const Dev& dev);
  /// Tracked: the gradient is reshaped back.
  static AP float_reshape(AP t, const Shape& shape);
  /// Tracked: the gradient is cast back to the input's dtype.
  static AP float_cast(AP t, DType dtype);
  /// Not differentiable (int result).
  static typename B::IntTensor float_into_int(const AP& t, DType dt) {
    return B::float_into_int(t.inner, dt);
  }
  static typename B::BoolTensor float_into_bool(const AP& t) { return B::float_into_bool(t.inner); }

  // ---- int and bool: not recorded -------------------------------------------------------
  EMBER_AD_FORWARD(int_from_data)
  EMBER_AD_FORWARD(bool_from_data)
  EMBER_AD_FORWARD(int_into_data)
  EMBER_AD_FORWARD(bool_into_data)
  EMBER_AD_FORWARD(int_shape)
  EMBER_AD_FORWARD(bool_shape)
  EMBER_AD_FORWARD(int_dtype)
  EMBER_AD_FORWARD(bool_dtype)
  EMBER_AD_FORWARD(int_device)
  EMBER_AD_FORWARD(bool_device)
  EMBER_AD_FORWARD(int_to_device)
  EMBER_AD_FORWARD(bool_to_device)
  EMBER_AD_FORWARD(int_empty)
  EMBER_AD_FORWARD(bool_empty)
  EMBER_AD_FORWARD(int_full)
  EMBER_AD_FORWARD(bool_full)
  EMBER_AD_FORWARD(int_reshape)
  EMBER_AD_FORWARD(bool_reshape)
  EMBER_AD_FORWARD(int_cast)
  EMBER_AD_FORWARD(bool_into_int)
  EMBER_AD_FORWARD(int_into_bool)
  EMBER_AD_FORWARD(int_arange)

  // ---- the autodiff API (AutodiffBackend) -----------------------------------------------
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
  static typename B::IntTensor int_inner(const typename B::IntTensor& t) { return t; }
  static typename B::IntTensor int_from_inner(typename B::IntTensor t) { return t; }
  static typename B::BoolTensor bool_inner(const typename B::BoolTensor& t) { return t; }
  static typename B::BoolTensor bool_from_inner(typename B::BoolTensor t) { return t; }
  /// A new leaf holding `t`'s values that requires a gradient.
  static AP make_leaf(IP value, bool checkpointing) {
    auto node = std::make_shared<Node<B>>();
    node->leaf = true;
    node->saved_output = value;
    return AP{std::move(value), std::move(node), checkpointing};
  }
};

}  // namespace ember::autodiff
