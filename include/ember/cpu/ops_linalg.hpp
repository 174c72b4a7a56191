// CPU backend: linalg functions of the contract (see ember/backend/linalg.hpp).
#pragma once

#include <cstddef>

#include "ember/cpu/tensor.hpp"

namespace ember::cpu {

struct LinalgOps {
  using P = CpuTensor;

  /// [..., m, k] x [..., k, n] -> [..., m, n], batch dims broadcast. f32/f64 through
  /// OpenBLAS (transposed views are passed as trans flags, not copied), f16/bf16 through
  /// f32. Small batched products run one matrix per thread.
  static P float_matmul(const P& lhs, const P& rhs);
  /// Integer matmul (i64/i32/i16/i8/u8), accumulated in 64 bits, wrapping like torch.
  static P int_matmul(const P& lhs, const P& rhs);

  /// [..., m, n] -> [..., min(m, n)]: a view of the main diagonal of the last two dims.
  static P float_diag(const P& t) { return diag(t); }
  static P int_diag(const P& t) { return diag(t); }
  static P diag(const P& t);

  /// Cross product of 3-vectors along `dim`; shapes broadcast.
  static P float_cross(const P& lhs, const P& rhs, std::size_t dim) { return cross(lhs, rhs, dim); }
  static P int_cross(const P& lhs, const P& rhs, std::size_t dim) { return cross(lhs, rhs, dim); }
  static P cross(const P& lhs, const P& rhs, std::size_t dim);

  /// torch.linalg.vector_norm(t, p, dim, keepdim=True); accumulates in double.
  static P float_vector_norm(const P& t, double p, std::size_t dim);
  /// torch.nn.functional.cosine_similarity with the dim kept (size 1).
  static P float_cosine_similarity(const P& lhs, const P& rhs, std::size_t dim, double eps);
};

}  // namespace ember::cpu
