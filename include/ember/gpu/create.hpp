// Creation kernels of the GPU backends (src/gpu/create.cpp): constant fills, integer ranges
// and the counter-based random generator the CPU backend uses, so a seed gives the same values
// on every device. Each returns nullopt when the device lacks a type the kernel needs (the
// caller then takes the host path).
#pragma once

#include <cstdint>
#include <optional>

#include "ember/core/distribution.hpp"
#include "ember/gpu/tensor.hpp"

namespace ember::gpu {

/// A tensor of `shape` and `dtype` filled with `value`, converted as the CPU backend converts
/// it (ember::detail::convert_value: f16/bf16 through f32, integers saturate, NaN -> 0).
std::optional<GpuTensor> full(const Shape& shape, double value, DType dtype,
                              kernel::ComputeDevice& dev, int index);
/// [start, start + step, ...) below `end` (above it for a negative step), as int_arange.
std::optional<GpuTensor> arange(std::int64_t start, std::int64_t end, std::int64_t step,
                                DType dtype, kernel::ComputeDevice& dev, int index);
/// Values of `dist` from the CPU backend's generator (its seed and counter: the values equal
/// Cpu::float_random's after the same seed and the same calls). Uniform, default and Bernoulli
/// need f64 and i64 on the device; normal values stay on the host (the CPU's log and cos are
/// not the device's bit for bit), so this returns nullopt for them.
std::optional<GpuTensor> random(const Shape& shape, const Distribution& dist, DType dtype,
                                kernel::ComputeDevice& dev, int index);

}  // namespace ember::gpu
