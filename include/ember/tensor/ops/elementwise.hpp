// Tensor front end: elementwise methods, mixed into Tensor<B, D, K>.
#pragma once

#include "ember/tensor/fwd.hpp"

namespace ember::detail {

template <class B, std::size_t D, class K>
class ElementwiseApi {
 protected:
  const Tensor<B, D, K>& self() const { return static_cast<const Tensor<B, D, K>&>(*this); }
  Tensor<B, D, K>& self() { return static_cast<Tensor<B, D, K>&>(*this); }
};

}  // namespace ember::detail
