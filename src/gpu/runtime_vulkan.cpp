// VulkanRuntime: ember::Vulkan's devices are ember::vulkan's.
#include "ember/gpu/vulkan.hpp"
#include "ember/vulkan/vulkan.hpp"

namespace ember {

kernel::ComputeDevice& VulkanRuntime::device(int index) {
  return vulkan::device(index);
}
int VulkanRuntime::device_count(std::string* why) {
  return vulkan::device_count(why);
}
bool VulkanRuntime::software(int index) {
  return vulkan::is_software(index);
}

}  // namespace ember
