// CPU backend: linalg functions of the contract (see ember/backend/linalg.hpp).
#pragma once

#include <cstddef>

#include "ember/cpu/tensor.hpp"

namespace ember::cpu {

/// Kind-agnostic kernels behind the linalg functions of `cpu::Ops` (src/cpu/linalg*.cpp).
struct LinalgOps {
  using P = CpuTensor;
  /// [..., m, k] x [..., k, n] -> [..., m, n], batch dims broadcast. f32/f64 through
  /// OpenBLAS / oneDNN (transposed views are passed as trans flags, not copied), f16/bf16
  /// through f32. Small batched products run one matrix per thread.
  static P float_matmul(const P& lhs, const P& rhs);
  /// Integer matmul (i64/i32/i16/i8/u8), accumulated in 64 bits, wrapping like torch.
  static P int_matmul(const P& lhs, const P& rhs);
  /// torch.linalg.vector_norm(t, p, dim, keepdim=True); accumulates in double.
  static P float_vector_norm(const P& t, double p, std::size_t dim);
  /// torch.nn.functional.cosine_similarity with the dim kept (size 1).
  static P float_cosine_similarity(const P& lhs, const P& rhs, std::size_t dim, double eps);
  /// [..., m, n] -> [..., min(m, n)]: a view of the main diagonal of the last two dims.
  static P diag(const P& t);
  /// Cross product of 3-vectors along `dim`; shapes broadcast.
  static P cross(const P& lhs, const P& rhs, std::size_t dim);
};

}  // namespace ember::cpu
