// Autodiff<B>: matmul (rule in ember/autodiff/impl/linalg.hpp). diag, cross, vector_norm
// and cosine_similarity run as the front end's composites.
#pragma once

#include "ember/autodiff/ops_core.hpp"

namespace ember::autodiff {

template <class B>
struct AdLinalgOps {
  using AP = AdTensor<B>;

  /// [..., m, k] x [..., k, n]: dA = dC B^T, dB = A^T dC, summed over broadcast batch dims.
  static AP float_matmul(AP lhs, AP rhs);

  EMBER_AD_FORWARD(int_matmul)
  EMBER_AD_FORWARD(int_diag)
  EMBER_AD_FORWARD(int_cross)
};

}  // namespace ember::autodiff
