// The element-wise kernel generator's core (src/gpu/map.cpp), shared by gpu::map/try_map and
// the fused element-wise blocks (src/gpu/fused.cpp). Not installed.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ember/gpu/ops.hpp"

namespace ember::gpu::detail {

/// An element-wise kernel with one or more outputs. `expr` maps the loaded input values (in
/// the inputs' element types) and the run-time scalars to one value per output, each cast to
/// its output's dtype on store. `key` names the expression: kernels are compiled once per
/// key, dtypes, rank, layout and width. `lanes` 4 lets a flat layout (every input contiguous
/// with the output's shape; the element count and every offset multiples of 4) move four
/// elements per thread: `expr` then receives and returns 4-lane values.
struct MultiMapSpec {
  std::string key;
  std::vector<DType> outs;
  std::vector<kernel::Elem> scalar_elems;
  std::function<std::vector<kernel::Val>(std::span<const kernel::Val> in,
                                         std::span<const kernel::Val> scalars)>
      expr;
  int lanes = 1;
  std::string name;                                // the kernel's name after "map_" (default: key)
  std::atomic<std::uint64_t>* compiles = nullptr;  // counts the kernels compiled for it
};

/// Runs `spec` over `inputs` broadcast to `out_shape` (gpu::try_map's rules for views,
/// scalars and `reusable`; each output takes a different reusable input's buffer, if any);
/// nullopt when the device lacks a feature the kernel needs.
std::optional<std::vector<GpuTensor>> try_map_multi(const MultiMapSpec& spec,
                                                    std::span<const GpuTensor> inputs,
                                                    const Shape& out_shape,
                                                    std::span<const ScalarArg> scalars,
                                                    unsigned reusable);

}  // namespace ember::gpu::detail
