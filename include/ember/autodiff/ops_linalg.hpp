// Autodiff<B>: matmul, and diag / cross / vector_norm / cosine_similarity when the inner
// backend provides them (rules in ember/autodiff/impl/linalg.hpp). The front end calls
// these optional functions directly (it has no composite for them), so Autodiff forwards
// them to B with a recorded backward rule; dot, outer and trace are composites of matmul.
#pragma once

#include <cstddef>

#include "ember/autodiff/ops_core.hpp"

namespace ember::autodiff {

template <class B>
concept AdInnerHasDiag = requires(const typename B::FloatTensor& p) {
  B::float_diag(p);
};
template <class B>
concept AdInnerHasCross = requires(const typename B::FloatTensor& p, std::size_t d) {
  B::float_cross(p, p, d);
};
template <class B>
concept AdInnerHasVectorNorm = requires(const typename B::FloatTensor& p, double v, std::size_t d) {
  B::float_vector_norm(p, v, d);
};
template <class B>
concept AdInnerHasCosineSimilarity = requires(const typename B::FloatTensor& p, std::size_t d,
                                              double eps) {
  B::float_cosine_similarity(p, p, d, eps);
};

template <class B>
struct AdLinalgOps {
  using AP = AdTensor<B>;

  /// [..., m, k] x [..., k, n]: dA = dC B^T, dB = A^T dC, summed over broadcast batch dims.
  static AP float_matmul(AP lhs, AP rhs);
  /// Gradient: written into the diagonal of zeros (torch's diagonal_backward).
  static AP float_diag(AP t) requires AdInnerHasDiag<B>;
  /// d/da = cross(b, g), d/db = cross(g, a) (linalg_cross in derivatives.yaml).
  static AP float_cross(AP lhs, AP rhs, std::size_t dim) requires AdInnerHasCross<B>;
  /// torch's norm_backward (p = 0: zero; +-inf: split evenly between tied |x|).
  static AP float_vector_norm(AP t, double p, std::size_t dim) requires AdInnerHasVectorNorm<B>;
  /// Gradient of sum(a b) / (max(|a|, eps) max(|b|, eps)); a clamped norm is a constant
  /// (as in ATen's cosine_similarity, which clamps under no_grad).
  static AP float_cosine_similarity(AP lhs, AP rhs, std::size_t dim,
                                    double eps) requires AdInnerHasCosineSimilarity<B>;

  EMBER_AD_FORWARD(int_matmul)
  EMBER_AD_FORWARD(int_diag)
  EMBER_AD_FORWARD(int_cross)
};

}  // namespace ember::autodiff
