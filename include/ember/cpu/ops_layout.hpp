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
#include "ember/core/slice.hpp"
#include "ember/cpu/tensor.hpp"

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

}  // namespace ember::cpu
