// Autodiff<B>: definitions of the core float functions and of backward().
#pragma once

#include "ember/autodiff/impl/common.hpp"

namespace ember::autodiff {

template <class B>
AdTensor<B> AdOps<B>::float_to_device(F t, const Dev& dev) {
  const Dev from = B::float_device(t.inner);
  return Recorder<B>::unary(
      "to_device", Bound::Memory, kSaveNothing, std::move(t),
      [dev](IP x) { return B::float_to_device(std::move(x), dev); },
      [from](BackwardContext<B>& c) { c.set(0, AdOps<B>::float_to_device(c.grad, from)); });
}

template <class B>
AdTensor<B> AdOps<B>::float_reshape(F t, const Shape& shape) {
  const Shape in = B::float_shape(t.inner);
  return Recorder<B>::unary(
      "reshape", Bound::Memory, kSaveNothing, std::move(t),
      [shape](IP x) { return B::float_reshape(std::move(x), shape); },
      [in](BackwardContext<B>& c) { c.set(0, AdOps<B>::float_reshape(c.grad, in)); });
}

template <class B>
AdTensor<B> AdOps<B>::float_cast(F t, DType dtype) {
  const DType in = B::float_dtype(t.inner);
  return Recorder<B>::unary(
      "cast", Bound::Memory, kSaveNothing, std::move(t),
      [dtype](IP x) { return B::float_cast(std::move(x), dtype); },
      [in](BackwardContext<B>& c) { c.set(0, AdOps<B>::float_cast(c.grad, in)); });
}

template <class B>
Gradients<B> AdOps<B>::float_backward(const AP& t, bool create_graph) {
  return Recorder<B>::backward(t, create_graph);
}

}  // namespace ember::autodiff
