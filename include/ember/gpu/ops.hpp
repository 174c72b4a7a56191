// The non-template functions of the GPU backends (ember::Gpu<R>, ember/gpu/gpu.hpp), compiled
// once in src/gpu/ for every runtime: moving tensors between the host and a device, views,
// and the element-wise kernel generator.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "ember/core/data.hpp"
#include "ember/core/runtime.hpp"
#include "ember/cpu/tensor.hpp"
#include "ember/gpu/tensor.hpp"
#include "ember/ir/fused.hpp"
#include "ember/kernel/builder.hpp"

namespace ember::gpu {

/// The kernel element type of `d`; UnsupportedError for the dtypes the kernel language has
/// no type for (i16, i8), naming `op`.
kernel::Elem elem_of(DType d, const char* op);
/// True when `d` has a kernel element type and `dev` supports it (f64, i64, u8, f16, bf16
/// are optional features of a device).
bool native_dtype(DType d, const kernel::ComputeDevice& dev);

/// A new contiguous tensor of `shape` and `dtype` on device `index` of `dev` (uninitialised).
GpuTensor empty(const Shape& shape, DType dtype, kernel::ComputeDevice& dev, int index);
/// Copies host data (row-major) to the device.
GpuTensor upload(const TensorData& data, kernel::ComputeDevice& dev, int index);
/// Copies a CPU tensor (any view) to the device, contiguous.
GpuTensor upload(const CpuTensor& t, kernel::ComputeDevice& dev, int index);
/// Reads a GPU tensor (any view) into a new CPU tensor with the same shape, strides and
/// dtype (waits for the device). Reads only the bytes the view spans.
CpuTensor download(const GpuTensor& t);
/// Row-major host data of `t` (waits for the device).
TensorData into_data(const GpuTensor& t);
/// `t` with `shape` (same numel): a view when `t` is contiguous, else a contiguous copy.
GpuTensor reshape(GpuTensor t, const Shape& shape);
/// A contiguous copy of any view of `t` (on the device; through the host for the dtypes
/// without kernels).
GpuTensor copy(const GpuTensor& t);
/// The element range [lo, hi] the view `t` addresses in its buffer (hi < lo when empty).
std::pair<std::int64_t, std::int64_t> span_of(const GpuTensor& t);
/// `t` itself when contiguous, else a contiguous copy made on the device.
GpuTensor contiguous(const GpuTensor& t);
/// `t` itself when contiguous and starting at a byte offset that every runtime can bind (a
/// multiple of 256, Vulkan's largest minStorageBufferOffsetAlignment), else a contiguous copy:
/// what kernels that bind their input at the tensor's offset need.
GpuTensor packed(const GpuTensor& t);
/// Copies `t` to device `index` of `dev` (through the host when the devices differ).
GpuTensor to_device(const GpuTensor& t, kernel::ComputeDevice& dev, int index);

/// An element-wise kernel: `expr` maps the loaded input values (in the inputs' element
/// types, f16/bf16 as f32 registers) and the run-time scalars to the output value (cast to
/// the output's type on store). `key` names the expression: kernels are compiled once per
/// key, dtypes, rank and layout.
struct MapSpec {
  std::string key;
  DType out = DType::F32;
  std::vector<kernel::Elem> scalar_elems;  // one per scalar, in order
  std::function<kernel::Val(std::span<const kernel::Val> in, std::span<const kernel::Val> scalars)>
      expr;
};
/// Runs `spec` over `inputs` broadcast to `out_shape` (inputs of any strides and offsets,
/// including stride 0 for broadcast dims; ranks equal to out_shape's). Each scalar is given
/// as a double `f` or, for integer types, exactly as `i`. `reusable`: bit i set when the
/// caller owns inputs[i]'s buffer alone (a moved tensor nobody else references); the result
/// is then written into the first such input that is contiguous from offset 0 with the
/// result's shape and dtype, in place (PyTorch's and the CPU backend's buffer reuse).
struct ScalarArg {
  kernel::Elem elem = kernel::Elem::F32;
  double f = 0;
  std::int64_t i = 0;
};
GpuTensor map(const MapSpec& spec, std::span<const GpuTensor> inputs, const Shape& out_shape,
              std::span<const ScalarArg> scalars = {}, unsigned reusable = 0);
/// map, or nullopt when the device lacks a feature the kernel needs (f64 transcendental
/// functions on Vulkan, ...): the caller then takes the host path. map throws
/// UnsupportedError naming the missing feature instead.
std::optional<GpuTensor> try_map(const MapSpec& spec, std::span<const GpuTensor> inputs,
                                 const Shape& out_shape, std::span<const ScalarArg> scalars = {},
                                 unsigned reusable = 0);

/// Runs a fused block of element-wise steps (ember/ir/fused.hpp; Fusion<Gpu<R>>) as one
/// generated kernel, compiled once per block pattern (src/gpu/fused.cpp): only the block's
/// outputs are written, in `block.outputs`' order. Takes f32/f16/bf16/f64 blocks whose steps
/// all have kernel expressions on a device with the dtype; otherwise nullopt with `inputs`
/// untouched (the caller runs the steps one by one). Inputs are views of any strides,
/// broadcast to block.shape; one that `inputs` holds alone may give its buffer to an output.
std::optional<std::vector<GpuTensor>> fused_elementwise(const ir::FusedBlock& block,
                                                        std::vector<GpuTensor>& inputs);
/// Fused-block kernels compiled so far, all devices together: one per block pattern, device,
/// layout (flat or strided, rank) and vector width (the compile count of a training run).
std::uint64_t fused_kernels_compiled();

/// Reductions along one dim, the dim kept with size 1 (dim < 0: over every element, shape
/// [1]); max/min propagate NaN (torch.amax). `reduce_native` says whether a device kernel
/// serves the case (else the caller runs the host path).
enum class Reduce { Sum, Prod, Mean, Max, Min };
bool reduce_native(Reduce r, const GpuTensor& x, std::int64_t dim);
GpuTensor reduce(Reduce r, const GpuTensor& x, std::int64_t dim);

/// Batched matrix product [..., m, k] x [..., k, n] -> [..., m, n] of float tensors of one
/// rank (batch dims broadcast), by the tiled kernel. `matmul_native` says whether it serves
/// the dtypes and sizes.
bool matmul_native(const GpuTensor& a, const GpuTensor& b);
GpuTensor matmul(const GpuTensor& a, const GpuTensor& b);

/// Bytes of live tensors and of the pool on `dev`.
MemoryStats memory_stats(kernel::ComputeDevice& dev);

}  // namespace ember::gpu
