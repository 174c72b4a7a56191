// CPU backend: layout functions of the contract (see ember/backend/layout.hpp).
//
// permute, expand (stride 0), slice (negative steps give negative strides), flip (negative
// strides), unfold (overlapping strides), squeeze/unsqueeze are zero-copy views sharing
// the input's storage; cat copies into a new contiguous tensor.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "ember/backend/layout.hpp"
#include "ember/cpu/tensor.hpp"
#include "ember/tensor/slice.hpp"

namespace ember::cpu {

// Layout helpers other families may use (views share storage; inputs may be any view).
/// View with dims reordered: out.shape[i] = in.shape[axes[i]]. Any dtype.
CpuTensor permute_view(CpuTensor t, const std::vector<std::size_t>& axes);
/// View broadcast to `shape` (new leading dims and expanded size-1 dims get stride 0).
CpuTensor expand_view(CpuTensor t, const Shape& shape);
/// View of `count` indices start + k * step per dim (step may be negative).
CpuTensor slice_view(CpuTensor t, const std::vector<SliceRange>& ranges);
/// View with the listed dims reversed (negative strides).
CpuTensor flip_view(CpuTensor t, const std::vector<std::size_t>& axes);
/// New contiguous tensor: the inputs (one dtype, equal dims except `dim`) joined on `dim`.
CpuTensor cat_copy(const std::vector<CpuTensor>& ts, std::size_t dim);
/// View [.., n_windows, .., size]: torch.Tensor.unfold(dim, size, step).
CpuTensor unfold_view(CpuTensor t, std::size_t dim, std::int64_t size, std::int64_t step);
/// View without the listed (size-1) dims.
CpuTensor squeeze_view(CpuTensor t, const std::vector<std::size_t>& dims);
/// View with size-1 dims at the listed (sorted) output positions.
CpuTensor unsqueeze_view(CpuTensor t, const std::vector<std::size_t>& dims);
/// New contiguous tensor: `t` padded by one (before, after) pair per dim (negative crops),
/// in one pass (see Tensor::pad for the modes).
CpuTensor pad_copy(const CpuTensor& t,
                   const std::vector<std::pair<std::int64_t, std::int64_t>>& pads, PadMode mode,
                   double value);

struct LayoutOps {
  using P = CpuTensor;

  static P float_permute(P t, const std::vector<std::size_t>& a) {
    return permute_view(std::move(t), a);
  }
  static P int_permute(P t, const std::vector<std::size_t>& a) {
    return permute_view(std::move(t), a);
  }
  static P bool_permute(P t, const std::vector<std::size_t>& a) {
    return permute_view(std::move(t), a);
  }
  static P float_expand(P t, const Shape& s) { return expand_view(std::move(t), s); }
  static P int_expand(P t, const Shape& s) { return expand_view(std::move(t), s); }
  static P bool_expand(P t, const Shape& s) { return expand_view(std::move(t), s); }
  static P float_slice(P t, const std::vector<SliceRange>& r) {
    return slice_view(std::move(t), r);
  }
  static P int_slice(P t, const std::vector<SliceRange>& r) { return slice_view(std::move(t), r); }
  static P bool_slice(P t, const std::vector<SliceRange>& r) { return slice_view(std::move(t), r); }
  static P float_flip(P t, const std::vector<std::size_t>& a) { return flip_view(std::move(t), a); }
  static P int_flip(P t, const std::vector<std::size_t>& a) { return flip_view(std::move(t), a); }
  static P bool_flip(P t, const std::vector<std::size_t>& a) { return flip_view(std::move(t), a); }
  static P float_cat(const std::vector<P>& ts, std::size_t dim) { return cat_copy(ts, dim); }
  static P int_cat(const std::vector<P>& ts, std::size_t dim) { return cat_copy(ts, dim); }
  static P bool_cat(const std::vector<P>& ts, std::size_t dim) { return cat_copy(ts, dim); }
  static P float_unfold(P t, std::size_t dim, std::int64_t size, std::int64_t step) {
    return unfold_view(std::move(t), dim, size, step);
  }
  static P int_unfold(P t, std::size_t dim, std::int64_t size, std::int64_t step) {
    return unfold_view(std::move(t), dim, size, step);
  }
  static P bool_unfold(P t, std::size_t dim, std::int64_t size, std::int64_t step) {
    return unfold_view(std::move(t), dim, size, step);
  }
  static P float_squeeze_dims(P t, const std::vector<std::size_t>& d) {
    return squeeze_view(std::move(t), d);
  }
  static P int_squeeze_dims(P t, const std::vector<std::size_t>& d) {
    return squeeze_view(std::move(t), d);
  }
  static P bool_squeeze_dims(P t, const std::vector<std::size_t>& d) {
    return squeeze_view(std::move(t), d);
  }
  static P float_unsqueeze_dims(P t, const std::vector<std::size_t>& d) {
    return unsqueeze_view(std::move(t), d);
  }
  static P int_unsqueeze_dims(P t, const std::vector<std::size_t>& d) {
    return unsqueeze_view(std::move(t), d);
  }
  static P bool_unsqueeze_dims(P t, const std::vector<std::size_t>& d) {
    return unsqueeze_view(std::move(t), d);
  }
  using Pads = std::vector<std::pair<std::int64_t, std::int64_t>>;
  static P float_pad(const P& t, const Pads& p, PadMode m, double v) {
    return pad_copy(t, p, m, v);
  }
  static P int_pad(const P& t, const Pads& p, PadMode m, double v) { return pad_copy(t, p, m, v); }
  static P bool_pad(const P& t, const Pads& p, PadMode m, double v) { return pad_copy(t, p, m, v); }
};

}  // namespace ember::cpu
