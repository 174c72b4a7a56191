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
#include "ember/tensor/slice.hpp"

namespace ember {

/// How select_assign / scatter combine the new values with the existing ones.
enum class IndexUpdate : std::uint8_t {
  Assign,  ///< replace (torch.index_copy / scatter); duplicates: the last one wins
  Add,     ///< accumulate (torch.index_add / scatter_add); duplicates all add up
};

template <class B>
concept IndexingBackend = CoreBackend<B> &&
    requires(const typename B::FloatTensor& f, const typename B::IntTensor& i,
             const typename B::BoolTensor& b, const std::vector<SliceRange>& ranges,
             std::size_t dim, IndexUpdate up, DType dt) {
  { B::float_slice_assign(f, ranges, f) } -> std::same_as<typename B::FloatTensor>;
  { B::int_slice_assign(i, ranges, i) } -> std::same_as<typename B::IntTensor>;
  { B::bool_slice_assign(b, ranges, b) } -> std::same_as<typename B::BoolTensor>;
  { B::float_select(f, dim, i) } -> std::same_as<typename B::FloatTensor>;
  { B::int_select(i, dim, i) } -> std::same_as<typename B::IntTensor>;
  { B::bool_select(b, dim, i) } -> std::same_as<typename B::BoolTensor>;
  { B::float_select_assign(f, dim, i, f, up) } -> std::same_as<typename B::FloatTensor>;
  { B::int_select_assign(i, dim, i, i, up) } -> std::same_as<typename B::IntTensor>;
  { B::bool_select_assign(b, dim, i, b, up) } -> std::same_as<typename B::BoolTensor>;
  { B::float_gather(dim, f, i) } -> std::same_as<typename B::FloatTensor>;
  { B::int_gather(dim, i, i) } -> std::same_as<typename B::IntTensor>;
  { B::bool_gather(dim, b, i) } -> std::same_as<typename B::BoolTensor>;
  { B::float_scatter(dim, f, i, f, up) } -> std::same_as<typename B::FloatTensor>;
  { B::int_scatter(dim, i, i, i, up) } -> std::same_as<typename B::IntTensor>;
  { B::bool_scatter(dim, b, i, b, up) } -> std::same_as<typename B::BoolTensor>;
  { B::float_mask_where(f, b, f) } -> std::same_as<typename B::FloatTensor>;
  { B::int_mask_where(i, b, i) } -> std::same_as<typename B::IntTensor>;
  { B::bool_mask_where(b, b, b) } -> std::same_as<typename B::BoolTensor>;
  { B::float_mask_fill(f, b, 0.0) } -> std::same_as<typename B::FloatTensor>;
  { B::int_mask_fill(i, b, 0.0) } -> std::same_as<typename B::IntTensor>;
  { B::bool_mask_fill(b, b, 0.0) } -> std::same_as<typename B::BoolTensor>;
  { B::bool_argwhere(b, dt) } -> std::same_as<typename B::IntTensor>;
};

}  // namespace ember
