// Autodiff<B, S>: the backend decorator that gives any backend B reverse-mode automatic
// differentiation (Burn's burn-autodiff).
//
//   using B = ember::Autodiff<ember::Cpu>;
//   auto w = Tensor<B, 2>::random({3, 3}).require_grad();
//   auto loss = (x.matmul(w) - y).square().mean();
//   auto grads = loss.backward();
//   Tensor<Cpu, 2> dw = *w.grad(grads);
//
// The float primitive pairs B's primitive with a node of a per-tensor graph (no global tape:
// threads train independently); int and bool tensors are B's own. Backward rules are written
// with this backend's ops, so they run on any B and, with backward(create_graph = true), are
// themselves recorded (higher-order gradients). S is the checkpointing strategy
// (NoCheckpointing or BalancedCheckpointing); `autodiff::Checkpointing` turns checkpointing
// on for the ops recorded while it lives, whatever S.
//
// Compile time: the op definitions (ember/autodiff/impl/*.hpp) are compiled once per stack
// in that backend's target (Autodiff<Cpu>: ember_autodiff_cpu). For another backend, include
// "ember/autodiff/impl.hpp" in its own instantiation files and instantiate AdOps<B> there
// (as src/autodiff/instances/*.cpp do), or include it everywhere.
#pragma once

#include <string>

#include "ember/autodiff/graph.hpp"
#include "ember/autodiff/ops.hpp"
#include "ember/autodiff/tensor.hpp"
#include "ember/backend/autodiff.hpp"

namespace ember {

template <class B, class S = autodiff::NoCheckpointing>
struct Autodiff : autodiff::AdOps<B> {
  using InnerBackend = B;
  using Strategy = S;
  using Device = typename B::Device;
  using FloatTensor = autodiff::AdTensor<B>;
  using IntTensor = typename B::IntTensor;
  using BoolTensor = typename B::BoolTensor;
  using Gradients = autodiff::Gradients<B>;

  static std::string name() {
    return std::string(S::enabled ? "autodiff_checkpointing_" : "autodiff_") + B::name();
  }

  // Creation: constants of this stack (they carry S's checkpointing flag).
  static FloatTensor float_from_data(const TensorData& d, const Device& dev) {
    return wrap(B::float_from_data(d, dev));
  }
  static FloatTensor float_empty(const Shape& s, const Device& dev, DType dt) {
    return wrap(B::float_empty(s, dev, dt));
  }
  static FloatTensor float_full(const Shape& s, double v, const Device& dev, DType dt) {
    return wrap(B::float_full(s, v, dev, dt));
  }
  static FloatTensor float_random(const Shape& s, Distribution dist, const Device& dev, DType dt) {
    return wrap(B::float_random(s, dist, dev, dt));
  }
  static FloatTensor int_into_float(const IntTensor& t, DType dt) {
    return wrap(B::int_into_float(t, dt));
  }
  static FloatTensor bool_into_float(const BoolTensor& t, DType dt) {
    return wrap(B::bool_into_float(t, dt));
  }
  /// A constant (untracked) tensor of this stack.
  static FloatTensor float_from_inner(typename B::FloatTensor t) { return wrap(std::move(t)); }
  /// The same values as a new leaf that requires a gradient.
  /// A tensor that is already tracked (a leaf or a result) is returned unchanged, as torch's
  /// requires_grad_() on a tensor that requires grad.
  static FloatTensor float_require_grad(const FloatTensor& t) {
    if (t.node) return t;
    return autodiff::AdOps<B>::make_leaf(t.inner, t.checkpointing || S::enabled);
  }

 private:
  static FloatTensor wrap(typename B::FloatTensor t) { return {std::move(t), nullptr, S::enabled}; }
};

}  // namespace ember
