// Line kernels of the GPU backends (src/gpu/scan.cpp): the functions that walk each line along
// one dim in order, as the CPU backend does, so they give its values (bit for bit where the
// device has the CPU's accumulator type): the cumulative scans, max/min with their index,
// any/all and var_mean. Shapes and semantics as the contract's (ember/backend/reduce.hpp).
// Each returns nullopt when the device kernels do not serve the case (a dtype the device
// lacks, an empty dim where the contract calls it an error); the caller then takes the host
// path.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>

#include "ember/gpu/tensor.hpp"

namespace ember::gpu {

enum class Scan { Sum, Prod, Max, Min };

/// cumsum / cumprod / cummax / cummin along `dim` (same shape and dtype). Float sums and
/// products accumulate in f64 where the device has it (the CPU's accumulator), else f32;
/// integers in i64. cummax/cummin: once a NaN is seen it stays (torch.cummax).
std::optional<GpuTensor> scan(Scan s, const GpuTensor& x, std::int64_t dim);
/// cummax / cummin (`max` true / false) with the index each running value came from (i64):
/// ties and NaN take the later index (PyTorch's rule).
std::optional<std::pair<GpuTensor, GpuTensor>> scan_with_indices(bool max, const GpuTensor& x,
                                                                 std::int64_t dim);
/// max / min along a non-empty `dim` (kept with size 1) with the index of the first extreme;
/// a NaN is the extreme (its first index).
std::optional<std::pair<GpuTensor, GpuTensor>> extreme_with_indices(bool max, const GpuTensor& x,
                                                                    std::int64_t dim);
/// any / all (`all` true) of x != 0 along `dim` (kept with size 1), bool; an empty dim gives
/// false / true.
std::optional<GpuTensor> any_all(bool all, const GpuTensor& x, std::int64_t dim);
/// (variance, mean) of a float tensor along `dim` (kept with size 1): the mean, then
/// sum((x - mean)^2) / max(0, n - correction), both sums in order in the accumulator type.
std::optional<std::pair<GpuTensor, GpuTensor>> var_mean(const GpuTensor& x, std::int64_t dim,
                                                        std::int64_t correction);

}  // namespace ember::gpu
