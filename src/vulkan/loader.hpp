// The Vulkan loader opened at run time (dlopen of libvulkan.so.1) and the entry points the
// runtime uses, plus the instance and the list of usable physical devices.
#pragma once

#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#include <string>
#include <vector>

namespace ember::vulkan::detail {

#define EMBER_VK_INSTANCE_FUNCS(X)                                                        \
  X(vkDestroyInstance)                                                                    \
  X(vkEnumeratePhysicalDevices)                                                           \
  X(vkGetPhysicalDeviceProperties)                                                        \
  X(vkGetPhysicalDeviceProperties2)                                                       \
  X(vkGetPhysicalDeviceFeatures2) X(vkGetPhysicalDeviceMemoryProperties)                  \
      X(vkGetPhysicalDeviceQueueFamilyProperties) X(vkEnumerateDeviceExtensionProperties) \
          X(vkCreateDevice) X(vkGetDeviceProcAddr)

#define EMBER_VK_DEVICE_FUNCS(X)                                                                   \
  X(vkDestroyDevice)                                                                               \
  X(vkGetDeviceQueue)                                                                              \
  X(vkCreateBuffer)                                                                                \
  X(vkDestroyBuffer)                                                                               \
  X(vkGetBufferMemoryRequirements) X(vkAllocateMemory) X(vkFreeMemory) X(vkBindBufferMemory)       \
      X(vkMapMemory) X(vkUnmapMemory) X(vkCreateCommandPool) X(vkAllocateCommandBuffers)           \
          X(vkResetCommandBuffer) X(vkBeginCommandBuffer) X(vkEndCommandBuffer)                    \
              X(vkCmdBindPipeline) X(vkCmdPushDescriptorSetKHR) X(vkCmdDispatch)                   \
                  X(vkCmdPipelineBarrier) X(vkCmdCopyBuffer) X(vkCmdWriteTimestamp)                \
                      X(vkCmdResetQueryPool) X(vkCreateQueryPool) X(vkGetQueryPoolResults)         \
                          X(vkQueueSubmit) X(vkCreateSemaphore) X(vkGetSemaphoreCounterValue)      \
                              X(vkWaitSemaphores) X(vkCreateShaderModule) X(vkDestroyShaderModule) \
                                  X(vkCreateDescriptorSetLayout) X(vkDestroyDescriptorSetLayout)   \
                                      X(vkCreatePipelineLayout) X(vkDestroyPipelineLayout)         \
                                          X(vkCreateComputePipelines) X(vkDestroyPipeline)         \
                                              X(vkCreatePipelineCache) X(vkGetPipelineCacheData)   \
                                                  X(vkDeviceWaitIdle)

#define EMBER_VK_MEMBER(fn) PFN_##fn fn = nullptr;

struct InstanceFns {
  EMBER_VK_INSTANCE_FUNCS(EMBER_VK_MEMBER)
};
struct DeviceFns {
  EMBER_VK_DEVICE_FUNCS(EMBER_VK_MEMBER)
};

/// The process-wide instance and its usable physical devices, best first.
struct Instance {
  VkInstance instance = VK_NULL_HANDLE;
  InstanceFns fn;
  std::vector<VkPhysicalDevice> devices;
};

/// The instance, made once; nullptr with the reason (no loader, no Vulkan 1.2 device, ...).
const Instance* instance(std::string* why = nullptr);
/// Loads the device-level entry points of `device`.
DeviceFns load_device_fns(const Instance& inst, VkDevice device);

/// "VK_ERROR_DEVICE_LOST" etc.
const char* result_name(VkResult r);
/// Throws DeviceError "[op] Vulkan error NAME" (OutOfMemoryError for out-of-memory results)
/// unless r is VK_SUCCESS.
void check(VkResult r, const std::string& op);

}  // namespace ember::vulkan::detail
