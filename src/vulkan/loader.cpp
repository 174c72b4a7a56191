// Opening the Vulkan loader, the instance and device discovery.
#include "loader.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "ember/kernel/core.hpp"

namespace ember::vulkan::detail {

namespace {

struct State {
  Instance inst;
  std::string error;
  bool ok = false;
};

int rank(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
      return 0;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
      return 1;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
      return 2;
    case VK_PHYSICAL_DEVICE_TYPE_CPU:
      return 3;
    default:
      return 4;
  }
}

State make() {
  State s;
  void* lib = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) lib = dlopen("libvulkan.so", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* e = dlerror();
    s.error = std::string("no Vulkan loader (") + (e ? e : "libvulkan.so.1") + ")";
    return s;
  }
  auto gipa = reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(lib, "vkGetInstanceProcAddr"));
  if (!gipa) {
    s.error = "the Vulkan loader has no vkGetInstanceProcAddr";
    return s;
  }
  auto version_fn = reinterpret_cast<PFN_vkEnumerateInstanceVersion>(
      gipa(VK_NULL_HANDLE, "vkEnumerateInstanceVersion"));
  std::uint32_t version = VK_API_VERSION_1_0;
  if (version_fn) version_fn(&version);
  if (version < VK_API_VERSION_1_2) {
    s.error = "the Vulkan loader is older than 1.2";
    return s;
  }
  auto create = reinterpret_cast<PFN_vkCreateInstance>(gipa(VK_NULL_HANDLE, "vkCreateInstance"));
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "ember";
  app.pEngineName = "ember";
  app.apiVersion = VK_API_VERSION_1_2;
  VkInstanceCreateInfo ci{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ci.pApplicationInfo = &app;
  const VkResult r = create(&ci, nullptr, &s.inst.instance);
  if (r != VK_SUCCESS) {
    s.error = std::string("vkCreateInstance failed: ") + result_name(r);
    return s;
  }
#define EMBER_VK_LOAD_I(name)                                                  \
  s.inst.fn.name = reinterpret_cast<PFN_##name>(gipa(s.inst.instance, #name)); \
  if (!s.inst.fn.name) {                                                       \
    s.error = "the Vulkan loader lacks " #name;                                \
    return s;                                                                  \
  }
  EMBER_VK_INSTANCE_FUNCS(EMBER_VK_LOAD_I)
  std::uint32_t n = 0;
  s.inst.fn.vkEnumeratePhysicalDevices(s.inst.instance, &n, nullptr);
  std::vector<VkPhysicalDevice> all(n);
  if (n) s.inst.fn.vkEnumeratePhysicalDevices(s.inst.instance, &n, all.data());
  std::vector<std::pair<int, VkPhysicalDevice>> usable;
  for (VkPhysicalDevice d : all) {
    VkPhysicalDeviceProperties p;
    s.inst.fn.vkGetPhysicalDeviceProperties(d, &p);
    if (p.apiVersion < VK_API_VERSION_1_2) continue;
    usable.emplace_back(rank(p.deviceType), d);
  }
  std::stable_sort(usable.begin(), usable.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  // EMBER_VULKAN_DEVICE: an index into that list, or part of a device name.
  const char* pick = std::getenv("EMBER_VULKAN_DEVICE");
  for (std::size_t i = 0; i < usable.size(); ++i) {
    VkPhysicalDeviceProperties p;
    s.inst.fn.vkGetPhysicalDeviceProperties(usable[i].second, &p);
    if (pick && *pick) {
      const std::string want = pick;
      const bool by_index = std::all_of(want.begin(), want.end(), ::isdigit);
      if (by_index ? std::to_string(i) != want : std::strstr(p.deviceName, want.c_str()) == nullptr)
        continue;
    }
    s.inst.devices.push_back(usable[i].second);
  }
  if (s.inst.devices.empty()) {
    s.error = all.empty() ? "no Vulkan device (the loader found no driver)"
              : pick      ? "no Vulkan device matches EMBER_VULKAN_DEVICE=" + std::string(pick)
                          : "no Vulkan 1.2 device";
    return s;
  }
  s.ok = true;
  return s;
}

}  // namespace

const Instance* instance(std::string* why) {
  static const State s = make();
  if (!s.ok) {
    if (why) *why = s.error;
    return nullptr;
  }
  return &s.inst;
}

DeviceFns load_device_fns(const Instance& inst, VkDevice device) {
  DeviceFns f;
#define EMBER_VK_LOAD_D(name)                                                        \
  f.name = reinterpret_cast<PFN_##name>(inst.fn.vkGetDeviceProcAddr(device, #name)); \
  if (!f.name) ember::detail::fail<DeviceError>("vulkan", "the Vulkan driver lacks " #name);
  EMBER_VK_DEVICE_FUNCS(EMBER_VK_LOAD_D)
  return f;
}

const char* result_name(VkResult r) {
  switch (r) {
    case VK_SUCCESS:
      return "VK_SUCCESS";
    case VK_NOT_READY:
      return "VK_NOT_READY";
    case VK_TIMEOUT:
      return "VK_TIMEOUT";
    case VK_INCOMPLETE:
      return "VK_INCOMPLETE";
    case VK_ERROR_OUT_OF_HOST_MEMORY:
      return "VK_ERROR_OUT_OF_HOST_MEMORY";
    case VK_ERROR_OUT_OF_DEVICE_MEMORY:
      return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
    case VK_ERROR_INITIALIZATION_FAILED:
      return "VK_ERROR_INITIALIZATION_FAILED";
    case VK_ERROR_DEVICE_LOST:
      return "VK_ERROR_DEVICE_LOST";
    case VK_ERROR_MEMORY_MAP_FAILED:
      return "VK_ERROR_MEMORY_MAP_FAILED";
    case VK_ERROR_EXTENSION_NOT_PRESENT:
      return "VK_ERROR_EXTENSION_NOT_PRESENT";
    case VK_ERROR_FEATURE_NOT_PRESENT:
      return "VK_ERROR_FEATURE_NOT_PRESENT";
    case VK_ERROR_INCOMPATIBLE_DRIVER:
      return "VK_ERROR_INCOMPATIBLE_DRIVER";
    case VK_ERROR_TOO_MANY_OBJECTS:
      return "VK_ERROR_TOO_MANY_OBJECTS";
    case VK_ERROR_INVALID_SHADER_NV:
      return "VK_ERROR_INVALID_SHADER_NV";
    default:
      return "VK_ERROR (unknown)";
  }
}

void check(VkResult r, const std::string& op) {
  if (r == VK_SUCCESS) return;
  if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY)
    ember::detail::fail<OutOfMemoryError>(op, "Vulkan error ", result_name(r));
  ember::detail::fail<DeviceError>(op, "Vulkan error ", result_name(r), " (", static_cast<int>(r),
                                   ")");
}

}  // namespace ember::vulkan::detail
