// The Vulkan runtime of the kernel language: devices (any Vulkan 1.2 driver; Mesa's llvmpipe
// runs it on a CPU), one queue each with batched submissions, a caching memory pool,
// staging buffers for copies, and GLSL compute shaders compiled to SPIR-V by shaderc (cached
// in memory and on disk, plus the driver's pipeline cache).
//
// The loader (libvulkan.so.1) is opened at run time: without it device_count() is 0 and says
// why. EMBER_VULKAN_DEVICE picks a device by index or by part of its name (devices are
// ordered discrete GPU, integrated GPU, virtual GPU, CPU).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ember/kernel/device.hpp"

namespace ember::vulkan {

/// Number of usable Vulkan devices; 0 with the reason in `why` when there is none.
int device_count(std::string* why = nullptr);
/// Device `index` (made on first use; lives until the process ends). DeviceError when there
/// is no such device.
kernel::ComputeDevice& device(int index = 0);
/// Whether device `index` is a CPU implementation of Vulkan (Mesa's llvmpipe), read from the
/// driver's properties without creating the device; false for an index out of range.
bool is_software(int index);

/// Compiles GLSL compute source to SPIR-V words with shaderc (no device needed). DeviceError
/// with shaderc's messages when it fails.
std::vector<std::uint32_t> compile_spirv(const std::string& glsl, const std::string& name);

}  // namespace ember::vulkan
