// The GPU backends' primitive (ember::Gpu<R>, ember/gpu/gpu.hpp): a strided view over a device
// buffer of the kernel runtimes (ember::kernel::Buffer), and the device value of a runtime.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ember/core/dtype.hpp"
#include "ember/core/shape.hpp"
#include "ember/kernel/device.hpp"

namespace ember {

/// Device `index` of runtime R ("cuda:0", "vulkan:1"). The default is device 0.
template <class R>
struct GpuDevice {
  using runtime_type = R;
  int index = 0;
  bool operator==(const GpuDevice&) const = default;
  std::string to_string() const { return std::string(R::name) + ":" + std::to_string(index); }
};

/// GPU tensor primitive. `strides` and `offset` are in elements (a stride may be 0 for
/// expanded dims); views share `buffer`. `device` is the runtime's device index.
struct GpuTensor {
  kernel::Buffer buffer;
  Shape shape;
  std::vector<std::int64_t> strides;
  std::int64_t offset = 0;
  DType dtype = DType::F32;
  int device = 0;

  std::int64_t numel() const { return shape.numel(); }
  /// Row-major contiguous (size-1 dims may have any stride).
  bool is_contiguous() const;
  /// The device that holds the buffer.
  kernel::ComputeDevice& compute() const { return buffer->device(); }
};

}  // namespace ember
