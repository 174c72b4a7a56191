// Tensor front end: indexing methods, mixed into Tensor<B, D, K>.
#pragma once

#include "ember/tensor/fwd.hpp"
#include "ember/tensor/slice.hpp"

namespace ember::detail {

template <class B, std::size_t D, class K>
class IndexingApi {
 protected:
  const Tensor<B, D, K>& self() const { return static_cast<const Tensor<B, D, K>&>(*this); }
  Tensor<B, D, K>& self() { return static_cast<Tensor<B, D, K>&>(*this); }
};

}  // namespace ember::detail
