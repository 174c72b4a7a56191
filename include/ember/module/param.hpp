// Param and Buffer: the tensors a module owns (Burn's Param, PyTorch's parameters and
// buffers).
//
//   nn::Param<Tensor<B, 2>> weight{Tensor<B, 2>::zeros({4, 3}, device)};
//   weight.val()      // the tensor (a tracked leaf on an autodiff backend/device)
//   weight.set(w2)    // replaces the value; keeps the id and require_grad
//
// A Param has a ParamId that stays with it through set(), to_device(), valid() and copies
// (optimizer state is keyed by it). On an autodiff backend (Autodiff<Cpu>, Dispatch on a
// "+autodiff" device) a Param that requires grad always holds a leaf of the graph: set()
// detaches the value and tracks it again, so results of earlier steps never chain.
//
// A Buffer is persistent state that is not trained (BatchNorm's running statistics): saved
// with the model, never tracked, skipped by optimizers and by num_params.
#pragma once

#include <compare>
#include <concepts>
#include <cstdint>
#include <functional>
#include <optional>
#include <type_traits>
#include <utility>

#include "ember/backend/autodiff.hpp"
#include "ember/core/error.hpp"
#include "ember/tensor/tensor.hpp"

namespace ember::nn {

/// Stable identity of a Param: unique in the process, kept by copies and moves of the Param.
struct ParamId {
  std::uint64_t value = 0;
  /// A new id (process-wide counter, thread-safe).
  static ParamId next();
  auto operator<=>(const ParamId&) const = default;
};

namespace detail {

template <class T>
struct TensorTraits : std::false_type {};
template <class B, std::size_t D, class K>
struct TensorTraits<Tensor<B, D, K>> : std::true_type {
  using Backend = B;
  using Kind = K;
  static constexpr std::size_t rank = D;
};

/// Whether tensors like `t` can record gradients: always on an autodiff backend whose
/// device has no such property (Autodiff<Cpu>), per device for Dispatch ("+autodiff").
template <class B, std::size_t D, class K>
bool can_track(const Tensor<B, D, K>& t) {
  if constexpr (!AutodiffBackend<B> || !std::is_same_v<K, Float>) {
    return false;
  } else if constexpr (requires { t.device().is_autodiff(); }) {
    return t.device().is_autodiff();
  } else {
    return true;
  }
}

/// `t` as a fresh leaf that requires grad when `track` and the device records gradients,
/// else an untracked copy (detached) on autodiff backends; unchanged on plain backends.
template <class B, std::size_t D, class K>
Tensor<B, D, K> as_leaf(Tensor<B, D, K> t, bool track) {
  if constexpr (AutodiffBackend<B> && std::is_same_v<K, Float>) {
    if (!can_track(t)) return t;
    auto leaf = t.detach();
    return track ? leaf.require_grad() : leaf;
  } else {
    return t;
  }
}

}  // namespace detail

/// A trainable tensor of a module. T is a Tensor<B, D, K>.
template <class T>
class Param {
  static_assert(detail::TensorTraits<T>::value, "Param<T>: T must be a Tensor<B, D, K>");

 public:
  using Value = T;

  /// An empty Param (val() throws); modules are default-constructible through it.
  Param() = default;
  /// Owns `value` with a new id; on an autodiff device it becomes a leaf that requires grad
  /// when `require_grad` (Float only).
  explicit Param(T value, bool require_grad = true)
      : id_(ParamId::next()),
        value_(detail::as_leaf(std::move(value), require_grad)),
        require_grad_(require_grad) {}
  /// A Param with a given id (used when a model is rebuilt on another backend).
  Param(ParamId id, T value, bool require_grad)
      : id_(id),
        value_(detail::as_leaf(std::move(value), require_grad)),
        require_grad_(require_grad) {}

  /// The tensor. Throws ValueError if the Param is empty.
  const T& val() const {
    if (!value_) {
      ember::detail::fail<ValueError>(
          "Param",
          "empty parameter (never initialised): build the layer with its config's "
          "init(device), or set() the Param");
    }
    return *value_;
  }
  const T& operator*() const { return val(); }
  const T* operator->() const { return &val(); }
  bool has_value() const { return value_.has_value(); }

  /// Replaces the value (same id, same require_grad; a fresh leaf on autodiff devices).
  void set(T value) { value_ = detail::as_leaf(std::move(value), require_grad_); }

  ParamId id() const { return id_; }
  /// Gives the Param a new id (an independent parameter for optimizers; see nn::deep_copy).
  void renew_id() { id_ = ParamId::next(); }
  /// Whether optimizers update it and backward computes its gradient.
  bool require_grad() const { return require_grad_; }
  /// Freezes (false) or unfreezes (true) the Param; the value is re-tracked accordingly.
  void set_require_grad(bool on) {
    require_grad_ = on;
    if (value_) value_ = detail::as_leaf(std::move(*value_), on);
  }
  Shape shape() const { return val().shape(); }

 private:
  ParamId id_{};
  std::optional<T> value_;
  bool require_grad_ = true;
};

/// Persistent non-trainable state of a module (running statistics, counters). Never tracked.
/// `scalar` marks a one-element tensor that PyTorch stores with shape [] (BatchNorm's
/// num_batches_tracked): it is held as shape [1] and exported/imported as shape [].
template <class T>
class Buffer {
  static_assert(detail::TensorTraits<T>::value, "Buffer<T>: T must be a Tensor<B, D, K>");

 public:
  using Value = T;

  Buffer() = default;
  explicit Buffer(T value, bool scalar = false)
      : value_(detail::as_leaf(std::move(value), false)),
        value_id_(ParamId::next().value),
        scalar_(scalar) {}

  /// The tensor. Throws ValueError if the Buffer is empty.
  const T& val() const {
    if (!value_) ember::detail::fail<ValueError>("Buffer", "empty buffer (never initialised)");
    return *value_;
  }
  const T& operator*() const { return val(); }
  const T* operator->() const { return &val(); }
  bool has_value() const { return value_.has_value(); }
  /// Replaces the value (detached on autodiff backends).
  void set(T value) {
    value_ = detail::as_leaf(std::move(value), false);
    value_id_ = ParamId::next().value;
  }
  /// The identity of the current value: new for each value the Buffer is given (construction,
  /// set(), so also loading and to_device), kept by copies; 0 when empty. Data derived from
  /// the value (nn::DerivedCache: a weight packed for a kernel) is keyed by it.
  std::uint64_t value_id() const { return value_id_; }
  /// True when PyTorch stores this buffer with shape [].
  bool scalar() const { return scalar_; }
  Shape shape() const { return val().shape(); }

 private:
  std::optional<T> value_;
  std::uint64_t value_id_ = 0;
  bool scalar_ = false;
};

template <class P>
inline constexpr bool is_param_v = false;
template <class T>
inline constexpr bool is_param_v<Param<T>> = true;
template <class P>
inline constexpr bool is_buffer_v = false;
template <class T>
inline constexpr bool is_buffer_v<Buffer<T>> = true;

}  // namespace ember::nn

template <>
struct std::hash<ember::nn::ParamId> {
  std::size_t operator()(const ember::nn::ParamId& id) const noexcept {
    return std::hash<std::uint64_t>{}(id.value);
  }
};
