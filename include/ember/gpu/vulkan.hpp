// ember::Vulkan: the GPU backend on Vulkan devices (ember/gpu/gpu.hpp); link ember::gpu.
// Needs the Vulkan runtime (ember::vulkan, built when CMake finds the Vulkan headers and
// shaderc); on a machine without a GPU, Mesa's llvmpipe is a Vulkan device.
#pragma once

#include "ember/gpu/gpu.hpp"

namespace ember {

/// The Vulkan runtime of Gpu<R>: devices in the order of ember::vulkan::device(i).
struct VulkanRuntime {
  static constexpr const char* name = "vulkan";
  /// Device `index`; DeviceError when there is no such device (with the reason).
  static kernel::ComputeDevice& device(int index);
  /// Number of Vulkan devices (0 without a driver); `why` gets the reason when 0.
  static int device_count(std::string* why = nullptr);
  /// Whether device `index` runs on the CPU (llvmpipe): never picked as the default device.
  static bool software(int index);
};

using Vulkan = Gpu<VulkanRuntime>;

}  // namespace ember
