// Backend contract for backends that differentiate (Burn's AutodiffBackend).
//
// A backend B that satisfies AutodiffBackend records the float operations on tensors that
// require gradients and can run them backwards. It names:
//   B::InnerBackend   the backend without autodiff (Autodiff<Cpu>::InnerBackend is Cpu;
//                     for Dispatch it is Dispatch itself, on the device without autodiff)
//   B::Gradients      the gradients of one backward pass (a map from tensors to gradients)
// and, with F = B::FloatTensor and IF = B::InnerBackend::FloatTensor:
//   float_require_grad(F) -> F           the same values as a leaf that requires grad
//   float_is_require_grad(const F&) -> bool
//   float_detach(F) -> F                 the same values, cut from the graph
//   float_backward(const F&, bool create_graph) -> Gradients
//       seeds the output gradient with ones (Burn's semantics: for a non-scalar output the
//       result is the gradient of its sum); with create_graph the gradients are themselves
//       recorded (higher-order gradients) and the graph is kept, else it is freed.
//   float_grad(const F&, const Gradients&) -> std::optional<IF>        leaves only
//   float_grad_graph(const F&, const Gradients&) -> std::optional<F>   tracked when
//       the pass ran with create_graph (for grad of grad)
//   float_grad_remove(const F&, Gradients&) -> std::optional<IF>
//   float_grad_replace(const F&, Gradients&, IF)
//   float_inner(const F&) -> IF ; float_from_inner(IF) -> F (a constant, not tracked)
//   int_inner / int_from_inner, bool_inner / bool_from_inner likewise.
#pragma once

#include <optional>

#include "ember/backend/backend.hpp"

namespace ember {

template <class B>
concept AutodiffBackend = Backend<B> && Backend<typename B::InnerBackend> &&
    requires(const typename B::FloatTensor& f, typename B::Gradients& g,
             const typename B::InnerBackend::FloatTensor& inner_f, const typename B::IntTensor& i,
             const typename B::BoolTensor& b, const typename B::InnerBackend::IntTensor& inner_i,
             const typename B::InnerBackend::BoolTensor& inner_b) {
  { B::float_require_grad(f) } -> std::same_as<typename B::FloatTensor>;
  { B::float_is_require_grad(f) } -> std::same_as<bool>;
  { B::float_detach(f) } -> std::same_as<typename B::FloatTensor>;
  { B::float_backward(f, false) } -> std::same_as<typename B::Gradients>;
  { B::float_grad(f, g) } -> std::same_as<std::optional<typename B::InnerBackend::FloatTensor>>;
  { B::float_grad_graph(f, g) } -> std::same_as<std::optional<typename B::FloatTensor>>;
  {
    B::float_grad_remove(f, g)
    } -> std::same_as<std::optional<typename B::InnerBackend::FloatTensor>>;
  B::float_grad_replace(f, g, inner_f);
  { B::float_inner(f) } -> std::same_as<typename B::InnerBackend::FloatTensor>;
  { B::float_from_inner(inner_f) } -> std::same_as<typename B::FloatTensor>;
  { B::int_inner(i) } -> std::same_as<typename B::InnerBackend::IntTensor>;
  { B::int_from_inner(inner_i) } -> std::same_as<typename B::IntTensor>;
  { B::bool_inner(b) } -> std::same_as<typename B::InnerBackend::BoolTensor>;
  { B::bool_from_inner(inner_b) } -> std::same_as<typename B::BoolTensor>;
};

}  // namespace ember
