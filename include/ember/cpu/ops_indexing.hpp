// CPU backend: indexing functions of the contract (see ember/backend/indexing.hpp).
//
// Inputs may be strided views; results are new contiguous tensors, or the input itself
// when it is uniquely owned (`CpuTensor::can_reuse()`) for the *_assign / scatter / mask
// functions. Index tensors may have any int dtype. Arguments are assumed valid (checked by
// the front end).
#pragma once

#include <cstddef>
#include <vector>

#include "ember/backend/indexing.hpp"
#include "ember/cpu/tensor.hpp"

namespace ember::cpu {

struct IndexingOps {
  using P = CpuTensor;

  // Kind-agnostic kernels (any dtype, bool as one byte) behind cpu::Ops.
  static P slice_assign(P t, const std::vector<SliceRange>& ranges, const P& values);
  static P select(const P& t, std::size_t dim, const P& indices);
  static P select_assign(P t, std::size_t dim, const P& indices, const P& values, IndexUpdate up);
  static P gather(std::size_t dim, const P& t, const P& indices);
  static P scatter(std::size_t dim, P t, const P& indices, const P& values, IndexUpdate up);
  static P mask_where(P t, const P& mask, const P& values);
  static P mask_fill(P t, const P& mask, double value);
  static P argwhere(const P& mask, DType index_dtype);
};

}  // namespace ember::cpu
