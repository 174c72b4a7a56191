// Tensor front end: the autodiff methods (Burn's AutodiffBackend tensor API), mixed into
// Tensor<B, D, K>. They exist when B satisfies AutodiffBackend (Autodiff<Cpu>, Dispatch).
//
//   auto w = Tensor<Autodiff<Cpu>, 2>::random({3, 3}).require_grad();
//   auto grads = some_loss(w).backward();
//   std::optional<Tensor<Cpu, 2>> dw = w.grad(grads);
#pragma once

#include <concepts>
#include <optional>

#include "ember/backend/autodiff.hpp"
#include "ember/tensor/fwd.hpp"

namespace ember::detail {

// The backend-dependent types of the constraints below, named through concepts so that they
// are looked up only when the method is used: clang 14 (emscripten) substitutes B into a
// member's requires-clause when the class is instantiated, and Cpu has no Gradients.
template <class G, class B>
concept GradientsOf = std::same_as<G, typename B::Gradients>;
template <class T, class B, std::size_t D, class K>
concept InnerTensorOf = std::same_as<T, Tensor<typename B::InnerBackend, D, K>>;

template <class B, std::size_t D, class K>
class AutodiffApi {
  const Tensor<B, D, K>& self() const { return static_cast<const Tensor<B, D, K>&>(*this); }

 public:
  /// The same values as a leaf that requires a gradient (torch's requires_grad_()); a tensor
  /// that is already tracked is returned unchanged.
  auto require_grad() const requires(AutodiffBackend<B>&& std::same_as<K, Float>) {
    return Tensor<B, D, K>(B::float_require_grad(self().primitive()));
  }
  /// require_grad() when `value`, detach() otherwise.
  auto set_require_grad(bool value) const requires(AutodiffBackend<B>&& std::same_as<K, Float>) {
    return value ? require_grad() : detach();
  }
  /// Whether the tensor is tracked (a leaf that requires grad or a result computed from one).
  bool is_require_grad() const requires(AutodiffBackend<B>&& std::same_as<K, Float>) {
    return B::float_is_require_grad(self().primitive());
  }
  /// The same values, cut from the graph (torch's detach()).
  auto detach() const requires(AutodiffBackend<B>&& std::same_as<K, Float>) {
    return Tensor<B, D, K>(B::float_detach(self().primitive()));
  }
  /// Backpropagates from this tensor, seeding its gradient with ones (Burn's semantics: for
  /// a non-scalar tensor the gradients are those of its sum). With `create_graph` the
  /// gradients are themselves differentiable (read them with grad_graph) and the graph is
  /// kept; otherwise the graph is freed. Throws Error if the tensor is not tracked or its
  /// graph was already freed.
  auto backward(bool create_graph = false) const
      requires(AutodiffBackend<B>&& std::same_as<K, Float>) {
    return B::float_backward(self().primitive(), create_graph);
  }
  /// The gradient of this leaf in `grads`, on the inner backend; nullopt when the tensor
  /// is not a leaf that requires grad or got no gradient.
  template <class G>
  auto grad(const G& grads) const
      requires(AutodiffBackend<B>&& std::same_as<K, Float>&& GradientsOf<G, B>) {
    using T = Tensor<typename B::InnerBackend, D, K>;
    auto g = B::float_grad(self().primitive(), grads);
    return g ? std::optional<T>(T(std::move(*g))) : std::nullopt;
  }
  /// The gradient as a tensor of this backend (tracked after backward(true): grad of grad).
  template <class G>
  auto grad_graph(const G& grads) const
      requires(AutodiffBackend<B>&& std::same_as<K, Float>&& GradientsOf<G, B>) {
    using T = Tensor<B, D, K>;
    auto g = B::float_grad_graph(self().primitive(), grads);
    return g ? std::optional<T>(T(std::move(*g))) : std::nullopt;
  }
  /// Removes and returns this leaf's gradient.
  template <class G>
  auto grad_remove(G& grads) const
      requires(AutodiffBackend<B>&& std::same_as<K, Float>&& GradientsOf<G, B>) {
    using T = Tensor<typename B::InnerBackend, D, K>;
    auto g = B::float_grad_remove(self().primitive(), grads);
    return g ? std::optional<T>(T(std::move(*g))) : std::nullopt;
  }
  /// Sets this leaf's gradient. Throws ShapeError / DTypeError if `grad`'s shape / dtype
  /// differs from the tensor's, Error if the tensor does not require grad.
  template <class G, class T>
  void grad_replace(G& grads, const T& grad) const requires(
      AutodiffBackend<B>&& std::same_as<K, Float>&& GradientsOf<G, B>&& InnerTensorOf<T, B, D, K>) {
    if (!(grad.shape() == self().shape())) {
      fail<ShapeError>("grad_replace", "gradient of shape ", grad.shape(),
                       " for a tensor of shape ", self().shape());
    }
    if (grad.dtype() != self().dtype()) {
      fail<DTypeError>("grad_replace", "gradient of dtype ", grad.dtype(),
                       " for a tensor of dtype ", self().dtype());
    }
    B::float_grad_replace(self().primitive(), grads, grad.primitive());
  }
  /// The same tensor on the inner backend (untracked).
  auto inner() const requires AutodiffBackend<B> {
    using T = Tensor<typename B::InnerBackend, D, K>;
    if constexpr (std::same_as<K, Float>)
      return T(B::float_inner(self().primitive()));
    else if constexpr (std::same_as<K, Int>)
      return T(B::int_inner(self().primitive()));
    else
      return T(B::bool_inner(self().primitive()));
  }
  /// A constant (untracked) tensor of this backend from one of the inner backend.
  template <class T>
  static Tensor<B, D, K> from_inner(const T& t) requires(
      AutodiffBackend<B>&& InnerTensorOf<T, B, D, K>) {
    if constexpr (std::same_as<K, Float>)
      return Tensor<B, D, K>(B::float_from_inner(t.primitive()));
    else if constexpr (std::same_as<K, Int>)
      return Tensor<B, D, K>(B::int_from_inner(t.primitive()));
    else
      return Tensor<B, D, K>(B::bool_from_inner(t.primitive()));
  }
};

}  // namespace ember::detail
