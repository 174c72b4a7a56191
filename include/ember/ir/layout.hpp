// Op descriptions: layout (ember/backend/layout.hpp) and indexing (ember/backend/indexing.hpp).
#pragma once

#include "ember/core/options.hpp"
#include "ember/core/slice.hpp"
#include "ember/ir/desc.hpp"

namespace ember::ir {

using Axes = std::vector<std::size_t>;
using Ranges = std::vector<SliceRange>;
using Pads = std::vector<std::pair<std::int64_t, std::int64_t>>;
using Reps = std::vector<std::int64_t>;

// ---- layout -----------------------------------------------------------------------------------

/// out.shape[i] = in.shape[axes[i]]; axes is a permutation of 0..rank-1.
struct Permute {
  static constexpr const char* name = "permute";
  static constexpr Bound bound = Bound::Memory;
  Axes axes;
  EMBER_IR_FIELDS(axes)
  TensorType infer(const TensorType& x) const;
};
/// Broadcast to `shape` (input dims align to the right; each equals the target or is 1).
struct Expand {
  static constexpr const char* name = "expand";
  static constexpr Bound bound = Bound::Memory;
  Shape shape;
  EMBER_IR_FIELDS(shape)
  TensorType infer(const TensorType& x) const;
};
/// One resolved range per dim (start, count, step; every index in [0, dim)).
struct Slice {
  static constexpr const char* name = "slice";
  static constexpr Bound bound = Bound::Memory;
  Ranges ranges;
  EMBER_IR_FIELDS(ranges)
  TensorType infer(const TensorType& x) const;
};
/// Reverses the listed dims (distinct).
struct Flip {
  static constexpr const char* name = "flip";
  static constexpr Bound bound = Bound::Memory;
  Axes axes;
  EMBER_IR_FIELDS(axes)
  TensorType infer(const TensorType& x) const;
};
/// Concatenation along `dim` of tensors of one dtype and rank (other dims equal).
struct Cat {
  static constexpr const char* name = "cat";
  static constexpr Bound bound = Bound::Memory;
  std::size_t dim = 0;
  EMBER_IR_FIELDS(dim)
  TensorType infer(const std::vector<TensorType>& xs) const;
};
/// torch.Tensor.unfold: `dim` becomes (n - size) / step + 1 windows, a new last dim of
/// length `size` holds each window.
struct Unfold {
  static constexpr const char* name = "unfold";
  static constexpr Bound bound = Bound::Memory;
  std::size_t dim = 0;
  std::int64_t size = 1, step = 1;
  EMBER_IR_FIELDS(dim, size, step)
  TensorType infer(const TensorType& x) const;
};
/// Removes the listed size-1 dims (sorted, distinct).
struct SqueezeDims {
  static constexpr const char* name = "squeeze_dims";
  static constexpr Bound bound = Bound::Memory;
  Axes dims;
  EMBER_IR_FIELDS(dims)
  TensorType infer(const TensorType& x) const;
};
/// Inserts size-1 dims at the listed output positions (sorted, distinct).
struct UnsqueezeDims {
  static constexpr const char* name = "unsqueeze_dims";
  static constexpr Bound bound = Bound::Memory;
  Axes dims;
  EMBER_IR_FIELDS(dims)
  TensorType infer(const TensorType& x) const;
};
/// torch.Tensor.repeat with one count (>= 0) per dim.
struct Repeat {
  static constexpr const char* name = "repeat";
  static constexpr Bound bound = Bound::Memory;
  Reps times;
  EMBER_IR_FIELDS(times)
  TensorType infer(const TensorType& x) const;
};
/// One (before, after) pair per dim, negative crops (torch.nn.functional.pad).
struct Pad {
  static constexpr const char* name = "pad";
  static constexpr Bound bound = Bound::Memory;
  Pads pads;
  PadMode mode = PadMode::Constant;
  double value = 0.0;
  EMBER_IR_FIELDS(pads, mode, value)
  TensorType infer(const TensorType& x) const;
};

// ---- indexing ---------------------------------------------------------------------------------

/// A copy of t whose elements selected by `ranges` are replaced by `values` (shape: the
/// ranges' counts).
struct SliceAssign {
  static constexpr const char* name = "slice_assign";
  static constexpr Bound bound = Bound::Memory;
  Ranges ranges;
  EMBER_IR_FIELDS(ranges)
  TensorType infer(const TensorType& t, const TensorType& values) const;
};
/// torch.index_select: indices [n] along `dim`.
struct Select {
  static constexpr const char* name = "select";
  static constexpr Bound bound = Bound::Memory;
  std::size_t dim = 0;
  EMBER_IR_FIELDS(dim)
  TensorType infer(const TensorType& t, const TensorType& indices) const;
};
/// torch.index_copy / index_add along `dim`.
struct SelectAssign {
  static constexpr const char* name = "select_assign";
  static constexpr Bound bound = Bound::Memory;
  std::size_t dim = 0;
  IndexUpdate update = IndexUpdate::Assign;
  EMBER_IR_FIELDS(dim, update)
  TensorType infer(const TensorType& t, const TensorType& indices, const TensorType& values) const;
};
/// torch.gather: the result has the indices' shape.
struct Gather {
  static constexpr const char* name = "gather";
  static constexpr Bound bound = Bound::Memory;
  std::size_t dim = 0;
  EMBER_IR_FIELDS(dim)
  TensorType infer(const TensorType& t, const TensorType& indices) const;
};
/// torch.scatter / scatter_add.
struct Scatter {
  static constexpr const char* name = "scatter";
  static constexpr Bound bound = Bound::Memory;
  std::size_t dim = 0;
  IndexUpdate update = IndexUpdate::Assign;
  EMBER_IR_FIELDS(dim, update)
  TensorType infer(const TensorType& t, const TensorType& indices, const TensorType& values) const;
};
/// torch.where(mask, values, t): mask and values broadcast to t's shape.
struct MaskWhere {
  static constexpr const char* name = "mask_where";
  static constexpr Bound bound = Bound::Memory;
  EMBER_IR_NO_FIELDS
  TensorType infer(const TensorType& t, const TensorType& mask, const TensorType& values) const;
};
/// torch.masked_fill.
struct MaskFill {
  static constexpr const char* name = "mask_fill";
  static constexpr Bound bound = Bound::Memory;
  double value = 0.0;
  EMBER_IR_FIELDS(value)
  TensorType infer(const TensorType& t, const TensorType& mask) const;
};
/// torch.argwhere: [n, rank] indices of the true elements (n depends on the data).
struct Argwhere {
  static constexpr const char* name = "argwhere";
  static constexpr Bound bound = Bound::Memory;
  DType index_dtype = DType::I64;
  EMBER_IR_FIELDS(index_dtype)
  TensorType infer(const TensorType& mask) const;
};

}  // namespace ember::ir

// Registry rows (see ember/ir/core.hpp for the columns).
// clang-format off
#define EMBER_IR_LAYOUT(X, XN) \
  X(REQ, F, F, float_permute, Permute, (F, const Axes&)) \
  X(REQ, F, F, float_expand, Expand, (F, const Shape&)) \
  X(REQ, F, F, float_slice, Slice, (F, const Ranges&)) \
  X(REQ, F, F, float_flip, Flip, (F, const Axes&)) \
  X(REQ, F, F, float_cat, Cat, (const VecF&, usize)) \
  X(OPT, F, F, float_unfold, Unfold, (F, usize, i64, i64)) \
  X(OPT, F, F, float_squeeze_dims, SqueezeDims, (F, const Axes&)) \
  X(OPT, F, F, float_unsqueeze_dims, UnsqueezeDims, (F, const Axes&)) \
  X(OPT, F, F, float_repeat, Repeat, (F, const Reps&)) \
  X(OPT, F, F, float_pad, Pad, (const F&, const Pads&, PadMode, double)) \
  X(REQ, F, F, float_slice_assign, SliceAssign, (F, const Ranges&, F)) \
  X(REQ, F, F, float_select, Select, (const F&, usize, const I&)) \
  X(REQ, F, F, float_select_assign, SelectAssign, (F, usize, const I&, const F&, IndexUpdate)) \
  X(REQ, F, F, float_gather, Gather, (usize, const F&, const I&)) \
  X(REQ, F, F, float_scatter, Scatter, (usize, F, const I&, const F&, IndexUpdate)) \
  X(REQ, F, F, float_mask_where, MaskWhere, (F, const Bo&, const F&)) \
  X(REQ, F, F, float_mask_fill, MaskFill, (F, const Bo&, double)) \
  X(REQ, N, I, int_permute, Permute, (I, const Axes&)) \
  X(REQ, N, I, int_expand, Expand, (I, const Shape&)) \
  X(REQ, N, I, int_slice, Slice, (I, const Ranges&)) \
  X(REQ, N, I, int_flip, Flip, (I, const Axes&)) \
  X(REQ, N, I, int_cat, Cat, (const VecI&, usize)) \
  X(OPT, N, I, int_unfold, Unfold, (I, usize, i64, i64)) \
  X(OPT, N, I, int_squeeze_dims, SqueezeDims, (I, const Axes&)) \
  X(OPT, N, I, int_unsqueeze_dims, UnsqueezeDims, (I, const Axes&)) \
  X(OPT, N, I, int_repeat, Repeat, (I, const Reps&)) \
  X(OPT, N, I, int_pad, Pad, (const I&, const Pads&, PadMode, double)) \
  X(REQ, N, I, int_slice_assign, SliceAssign, (I, const Ranges&, I)) \
  X(REQ, N, I, int_select, Select, (const I&, usize, const I&)) \
  X(REQ, N, I, int_select_assign, SelectAssign, (I, usize, const I&, const I&, IndexUpdate)) \
  X(REQ, N, I, int_gather, Gather, (usize, const I&, const I&)) \
  X(REQ, N, I, int_scatter, Scatter, (usize, I, const I&, const I&, IndexUpdate)) \
  X(REQ, N, I, int_mask_where, MaskWhere, (I, const Bo&, const I&)) \
  X(REQ, N, I, int_mask_fill, MaskFill, (I, const Bo&, double)) \
  X(REQ, N, Bo, bool_permute, Permute, (Bo, const Axes&)) \
  X(REQ, N, Bo, bool_expand, Expand, (Bo, const Shape&)) \
  X(REQ, N, Bo, bool_slice, Slice, (Bo, const Ranges&)) \
  X(REQ, N, Bo, bool_flip, Flip, (Bo, const Axes&)) \
  X(REQ, N, Bo, bool_cat, Cat, (const VecBo&, usize)) \
  X(OPT, N, Bo, bool_unfold, Unfold, (Bo, usize, i64, i64)) \
  X(OPT, N, Bo, bool_squeeze_dims, SqueezeDims, (Bo, const Axes&)) \
  X(OPT, N, Bo, bool_unsqueeze_dims, UnsqueezeDims, (Bo, const Axes&)) \
  X(OPT, N, Bo, bool_repeat, Repeat, (Bo, const Reps&)) \
  X(OPT, N, Bo, bool_pad, Pad, (const Bo&, const Pads&, PadMode, double)) \
  X(REQ, N, Bo, bool_slice_assign, SliceAssign, (Bo, const Ranges&, Bo)) \
  X(REQ, N, Bo, bool_select, Select, (const Bo&, usize, const I&)) \
  X(REQ, N, Bo, bool_select_assign, SelectAssign, (Bo, usize, const I&, const Bo&, IndexUpdate)) \
  X(REQ, N, Bo, bool_gather, Gather, (usize, const Bo&, const I&)) \
  X(REQ, N, Bo, bool_scatter, Scatter, (usize, Bo, const I&, const Bo&, IndexUpdate)) \
  X(REQ, N, Bo, bool_mask_where, MaskWhere, (Bo, const Bo&, const Bo&)) \
  X(REQ, N, Bo, bool_mask_fill, MaskFill, (Bo, const Bo&, double)) \
  X(REQ, N, I, bool_argwhere, Argwhere, (const Bo&, DType))
// clang-format on
