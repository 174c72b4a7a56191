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

  // Generic kernels (any dtype, bool as one byte).
  static P slice_assign(P t, const std::vector<SliceRange>& ranges, const P& values);
  static P select(const P& t, std::size_t dim, const P& indices);
  static P select_assign(P t, std::size_t dim, const P& indices, const P& values, IndexUpdate up);
  static P gather(std::size_t dim, const P& t, const P& indices);
  static P scatter(std::size_t dim, P t, const P& indices, const P& values, IndexUpdate up);
  static P mask_where(P t, const P& mask, const P& values);
  static P mask_fill(P t, const P& mask, double value);
  static P argwhere(const P& mask, DType index_dtype);

  // clang-format off
  static P float_slice_assign(P t, const std::vector<SliceRange>& r, P v) { return slice_assign(std::move(t), r, v); }
  static P int_slice_assign(P t, const std::vector<SliceRange>& r, P v) { return slice_assign(std::move(t), r, v); }
  static P bool_slice_assign(P t, const std::vector<SliceRange>& r, P v) { return slice_assign(std::move(t), r, v); }
  static P float_select(const P& t, std::size_t d, const P& i) { return select(t, d, i); }
  static P int_select(const P& t, std::size_t d, const P& i) { return select(t, d, i); }
  static P bool_select(const P& t, std::size_t d, const P& i) { return select(t, d, i); }
  static P float_select_assign(P t, std::size_t d, const P& i, const P& v, IndexUpdate u) { return select_assign(std::move(t), d, i, v, u); }
  static P int_select_assign(P t, std::size_t d, const P& i, const P& v, IndexUpdate u) { return select_assign(std::move(t), d, i, v, u); }
  static P bool_select_assign(P t, std::size_t d, const P& i, const P& v, IndexUpdate u) { return select_assign(std::move(t), d, i, v, u); }
  static P float_gather(std::size_t d, const P& t, const P& i) { return gather(d, t, i); }
  static P int_gather(std::size_t d, const P& t, const P& i) { return gather(d, t, i); }
  static P bool_gather(std::size_t d, const P& t, const P& i) { return gather(d, t, i); }
  static P float_scatter(std::size_t d, P t, const P& i, const P& v, IndexUpdate u) { return scatter(d, std::move(t), i, v, u); }
  static P int_scatter(std::size_t d, P t, const P& i, const P& v, IndexUpdate u) { return scatter(d, std::move(t), i, v, u); }
  static P bool_scatter(std::size_t d, P t, const P& i, const P& v, IndexUpdate u) { return scatter(d, std::move(t), i, v, u); }
  static P float_mask_where(P t, const P& m, const P& v) { return mask_where(std::move(t), m, v); }
  static P int_mask_where(P t, const P& m, const P& v) { return mask_where(std::move(t), m, v); }
  static P bool_mask_where(P t, const P& m, const P& v) { return mask_where(std::move(t), m, v); }
  static P float_mask_fill(P t, const P& m, double v) { return mask_fill(std::move(t), m, v); }
  static P int_mask_fill(P t, const P& m, double v) { return mask_fill(std::move(t), m, v); }
  static P bool_mask_fill(P t, const P& m, double v) { return mask_fill(std::move(t), m, v); }
  static P bool_argwhere(const P& m, DType dt) { return argwhere(m, dt); }
  // clang-format on
};

}  // namespace ember::cpu
