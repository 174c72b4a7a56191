// Op descriptions: linear algebra (ember/backend/linalg.hpp).
#pragma once

#include "ember/ir/desc.hpp"

namespace ember::ir {

/// lhs [..., m, k] @ rhs [..., k, n] -> [..., m, n]; batch dims broadcast; same rank >= 2
/// and dtype.
struct Matmul {
  static constexpr const char* name = "matmul";
  static constexpr Bound bound = Bound::Compute;
  EMBER_IR_NO_FIELDS
  TensorType infer(const TensorType& lhs, const TensorType& rhs) const;
};
/// [..., m, n] -> [..., min(m, n)]: the main diagonal of the last two dims.
struct Diag {
  static constexpr const char* name = "diag";
  static constexpr Bound bound = Bound::Memory;
  EMBER_IR_NO_FIELDS
  TensorType infer(const TensorType& x) const;
};
/// Cross product of 3-vectors along `dim` (size 3 in both; shapes broadcast).
struct Cross {
  static constexpr const char* name = "cross";
  static constexpr Bound bound = Bound::Memory;
  std::size_t dim = 0;
  EMBER_IR_FIELDS(dim)
  TensorType infer(const TensorType& lhs, const TensorType& rhs) const;
};
/// torch.linalg.vector_norm along `dim`, kept (p = 0 counts non-zeros, +-inf max/min |x|).
struct VectorNorm {
  static constexpr const char* name = "vector_norm";
  static constexpr Bound bound = Bound::Compute;
  double p = 2.0;
  std::size_t dim = 0;
  EMBER_IR_FIELDS(p, dim)
  TensorType infer(const TensorType& x) const;
};
/// sum(x1 * x2) / (max(||x1||, eps) * max(||x2||, eps)) along `dim` (broadcast shape, dim 1).
struct CosineSimilarity {
  static constexpr const char* name = "cosine_similarity";
  static constexpr Bound bound = Bound::Compute;
  std::size_t dim = 0;
  double eps = 1e-8;
  EMBER_IR_FIELDS(dim, eps)
  TensorType infer(const TensorType& lhs, const TensorType& rhs) const;
};

}  // namespace ember::ir

// Registry rows (see ember/ir/core.hpp for the columns).
// clang-format off
#define EMBER_IR_LINALG(X, XN) \
  X(REQ, F, F, float_matmul, Matmul, (const F&, const F&)) \
  X(REQ, N, I, int_matmul, Matmul, (const I&, const I&)) \
  X(OPT, F, F, float_diag, Diag, (const F&)) \
  X(OPT, N, I, int_diag, Diag, (const I&)) \
  X(OPT, F, F, float_cross, Cross, (const F&, const F&, usize)) \
  X(OPT, N, I, int_cross, Cross, (const I&, const I&, usize)) \
  X(OPT, F, F, float_vector_norm, VectorNorm, (const F&, double, usize)) \
  X(OPT, F, F, float_cosine_similarity, CosineSimilarity, (const F&, const F&, usize, double))
// clang-format on
