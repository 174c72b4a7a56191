// Sorting on the GPU backends (src/gpu/sort.cpp): a bitonic sort of each line's (value, index)
// pairs, which orders them totally, so the result is the CPU backend's stable sort bit for
// bit. Shapes and semantics as the contract's (ember/backend/reduce.hpp); nullopt when the
// device kernels do not serve the case (a dtype the device lacks, more than 2^32 - 1 padded
// elements), and the caller then takes the host path.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>

#include "ember/gpu/tensor.hpp"

namespace ember::gpu {

/// Stable sort along `dim` with the source indices (i64): NaN is the largest value (last
/// ascending, first descending); equal values keep their order (torch.sort(stable=True)).
std::optional<std::pair<GpuTensor, GpuTensor>> sort(const GpuTensor& x, std::int64_t dim,
                                                    bool descending);
/// The `k` largest along `dim`, descending, equal values by lower index (torch.topk).
std::optional<std::pair<GpuTensor, GpuTensor>> topk(const GpuTensor& x, std::int64_t k,
                                                    std::int64_t dim);

/// The lower median along a non-empty `dim` (kept with size 1) and its index: the value at
/// (n - 1) / 2 of the stable ascending sort; a line holding NaN gives its first NaN
/// (torch.median).
std::optional<std::pair<GpuTensor, GpuTensor>> median(const GpuTensor& x, std::int64_t dim);

}  // namespace ember::gpu
