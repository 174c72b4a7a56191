// Indexing kernels of the GPU backends (src/gpu/index.cpp). Shapes and semantics as the backend
// contract's (ember/backend/layout.hpp: cat, slice_assign, select, gather, scatter, mask_where,
// mask_fill); each returns nullopt when the device kernels do not serve the case (a dtype the
// device lacks, a negative slice step, scatter other than f32 add), and the caller then takes
// the host path. `reuse`: the caller holds t's buffer alone, so the result may be written
// into it.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "ember/core/options.hpp"
#include "ember/core/slice.hpp"
#include "ember/gpu/tensor.hpp"

namespace ember::gpu {

/// The tensors joined along `dim` (one dtype, one device; shapes checked by the front end).
std::optional<GpuTensor> cat(const std::vector<GpuTensor>& xs, std::size_t dim);
/// `t` with the region `ranges` (positive steps) replaced by `values` (cast to t's dtype).
std::optional<GpuTensor> slice_assign(const GpuTensor& t, const std::vector<SliceRange>& ranges,
                                      const GpuTensor& values, bool reuse);
/// A contiguous copy of `t` reversed along `axes` (torch.flip; the kernels take no negative
/// strides, so a flipped view is a copy here).
std::optional<GpuTensor> flip(const GpuTensor& t, const std::vector<std::size_t>& axes);
/// torch.index_select along `dim` with the integer indices `idx` [n].
std::optional<GpuTensor> select(const GpuTensor& x, std::size_t dim, const GpuTensor& idx);
/// torch.index_copy (Assign: of duplicate indices the last one wins) or torch.index_add (Add:
/// f32 only, atomic adds) along `dim` with idx [n]; values: t's shape with `dim` of size n.
std::optional<GpuTensor> select_assign(std::size_t dim, const GpuTensor& t, const GpuTensor& idx,
                                       const GpuTensor& values, IndexUpdate update, bool reuse);
/// torch.gather along `dim`: the result has idx's shape.
std::optional<GpuTensor> gather(std::size_t dim, const GpuTensor& x, const GpuTensor& idx);
/// torch.scatter_add along `dim` for f32 (atomic adds: duplicates sum in any order).
std::optional<GpuTensor> scatter_add(std::size_t dim, const GpuTensor& t, const GpuTensor& idx,
                                     const GpuTensor& values, bool reuse);
/// torch.scatter along `dim`: of duplicate targets the last in idx's row-major order wins.
std::optional<GpuTensor> scatter_assign(std::size_t dim, const GpuTensor& t, const GpuTensor& idx,
                                        const GpuTensor& values, bool reuse);
/// torch.where(mask, values, t) with mask and values broadcast to t's shape.
std::optional<GpuTensor> mask_where(const GpuTensor& t, const GpuTensor& mask,
                                    const GpuTensor& values, bool reuse);
/// torch.masked_fill(t, mask, value) with mask broadcast to t's shape.
std::optional<GpuTensor> mask_fill(const GpuTensor& t, const GpuTensor& mask, double value,
                                   bool reuse);

}  // namespace ember::gpu
