// Backend contract: indexing functions. See core.hpp for the conventions.
//
// Required, for X in {float, int, bool} and P = X's primitive, I = IntTensor (any int
// dtype: i64, i32, i16, i8 or u8), M = BoolTensor. The front end has already validated
// every shape, dim and index value, so backends may assume valid input. Functions taking
// `P t` by value may write into `t` when they own it uniquely (the result then aliases it).
//
//   X_slice_assign(P t, const std::vector<SliceRange>& ranges, P values) -> P
//       a copy of t whose elements selected by `ranges` (one per dim) are replaced by
//       `values` (shape = the counts of `ranges`).
//   X_select(const P& t, size_t dim, const I& indices) -> P          (torch.index_select)
//       indices: [n]; result: t's shape with dim `dim` of size n.
//   X_select_assign(P t, size_t dim, const I& indices, const P& values, IndexUpdate) -> P
//       (torch.index_copy / index_add) values: t's shape with dim `dim` of size n.
//       bool_select_assign only receives IndexUpdate::Assign.
//   X_gather(size_t dim, const P& t, const I& indices) -> P          (torch.gather)
//       indices has t's rank; result has indices' shape.
//   X_scatter(size_t dim, P t, const I& indices, const P& values, IndexUpdate) -> P
//       (torch.scatter / scatter_add) indices has t's rank; values at least indices' extent.
//       bool_scatter only receives IndexUpdate::Assign.
//   X_mask_where(P t, const M& mask, const P& values) -> P           (torch.where(mask, v, t))
//       mask and values have t's rank with each dim equal to t's or 1 (broadcast).
//   X_mask_fill(P t, const M& mask, double value) -> P               (torch.masked_fill)
//   bool_argwhere(const M& mask, DType index_dtype) -> I             (torch.argwhere)
//       [n, rank] indices of the true elements in row-major order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ember/backend/core.hpp"
#include "ember/core/slice.hpp"

namespace ember {}  // namespace ember
