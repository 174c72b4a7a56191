// The Vulkan compute device: a queue fed with batched command buffers (a timeline semaphore
// tracks their completion), the caching pool over device-local buffers, host-visible
// staging for copies, push descriptors, and pipelines from cached SPIR-V.
#include <chrono>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "ember/kernel/cache.hpp"
#include "ember/kernel/codegen.hpp"
#include "ember/kernel/passes.hpp"
#include "ember/vulkan/vulkan.hpp"
#include "loader.hpp"

namespace ember::vulkan {

using detail::check;
using kernel::Arg;
using kernel::CachingPool;
using kernel::CompiledKernel;
using kernel::CompiledPtr;
using kernel::Grid;
using kernel::Kernel;

namespace {

constexpr std::uint32_t kMaxBatch = 256;                       // dispatches per submission
constexpr std::size_t kInfoChunk = std::size_t{64} << 10;      // info words per host buffer
constexpr std::size_t kStagingChunk = std::size_t{64} << 20;   // bytes per staging copy
constexpr std::size_t kStagingLimit = std::size_t{256} << 20;  // staging in flight

struct HostBuffer {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  std::byte* map = nullptr;
  std::size_t bytes = 0;
  bool readback = false;
};

class VulkanDevice;

class VulkanCompiled final : public CompiledKernel {
 public:
  VulkanCompiled(Kernel k, std::string source, VulkanDevice* d)
      : CompiledKernel(std::move(k), std::move(source)), owner(d) {}
  ~VulkanCompiled() override;
  VulkanDevice* owner;
  VkShaderModule module = VK_NULL_HANDLE;
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkPipeline pipeline = VK_NULL_HANDLE;
  std::uint32_t bindings = 0;  // buffers + the info buffer
};

class VulkanDevice final : public kernel::ComputeDevice, private CachingPool::Driver {
 public:
  VulkanDevice(const detail::Instance& inst, VkPhysicalDevice pd);

  const kernel::DeviceProperties& properties() const override { return props_; }
  void write(const kernel::Buffer& dst, std::size_t offset, const void* src,
             std::size_t bytes) override;
  void read(const kernel::Buffer& src, std::size_t offset, void* dst, std::size_t bytes) override;
  void copy(const kernel::Buffer& src, std::size_t so, const kernel::Buffer& dst, std::size_t dof,
            std::size_t bytes) override;
  CompiledPtr compile(const Kernel& k) override;
  void sync() override {
    std::lock_guard lock(mu_);
    submit();
    wait(submitted_);
  }
  double time_ms(const std::function<void()>& work) override;
  kernel::MemoryStats memory_stats() const override { return pool_.stats(); }
  void reset_peak_memory() override { pool_.reset_peak(); }
  void release_memory() override {
    pool_.release();  // waits for the device first
    std::lock_guard lock(mu_);
    for (auto* list : {&free_staging_, &free_readback_, &free_info_}) {
      for (HostBuffer& h : *list) destroy_host(h);
      list->clear();
    }
  }

  void retire(VulkanCompiled& c) {
    std::lock_guard lock(mu_);
    submit();
    wait(submitted_);  // the pipeline may be in use by queued work
    f_.vkDestroyPipeline(dev_, c.pipeline, nullptr);
    f_.vkDestroyPipelineLayout(dev_, c.layout, nullptr);
    f_.vkDestroyDescriptorSetLayout(dev_, c.set_layout, nullptr);
    f_.vkDestroyShaderModule(dev_, c.module, nullptr);
  }

 protected:
  CachingPool::Block allocate_block(std::size_t bytes) override { return pool_.allocate(bytes); }
  void free_block(const CachingPool::Block& b) override { pool_.free(b); }
  void enqueue(const CompiledKernel& k, Grid grid, std::span<const Arg> args,
               const std::uint32_t* info) override;

 private:
  struct Segment {
    VkBuffer buffer;
    VkDeviceMemory memory;
  };
  struct Batch {
    VkCommandBuffer cmd = VK_NULL_HANDLE;
    std::uint64_t value = 0;
    std::uint32_t commands = 0;
    std::vector<HostBuffer> staging, info;
  };

  // CachingPool::Driver
  std::optional<std::uint64_t> allocate(std::size_t bytes) override;
  void free(std::uint64_t handle, std::size_t bytes) override;
  void wait_idle() override { sync(); }

  std::uint32_t memory_type(std::uint32_t bits, VkMemoryPropertyFlags want,
                            VkMemoryPropertyFlags prefer) const;
  HostBuffer make_host(std::size_t bytes, bool readback);
  void destroy_host(HostBuffer& h);
  HostBuffer take_host(std::vector<HostBuffer>& pool, std::size_t bytes, bool readback);
  Batch& batch();
  void barrier(VkPipelineStageFlags dst_stage, VkAccessFlags dst_access);
  void submit();
  void wait(std::uint64_t value);
  void reclaim();
  VkBuffer vk_buffer(const kernel::BufferStorage& b) const {
    return segments_.at(b.block().handle).buffer;
  }

  const detail::Instance& inst_;
  VkPhysicalDevice pd_;
  VkDevice dev_ = VK_NULL_HANDLE;
  detail::DeviceFns f_;
  VkQueue queue_ = VK_NULL_HANDLE;
  std::uint32_t family_ = 0;
  VkCommandPool cmd_pool_ = VK_NULL_HANDLE;
  VkSemaphore timeline_ = VK_NULL_HANDLE;
  VkQueryPool queries_ = VK_NULL_HANDLE;
  VkPhysicalDeviceMemoryProperties mem_props_{};
  VkPhysicalDeviceLimits limits_{};
  bool timestamps_ = false;
  kernel::DeviceProperties props_;
  kernel::GlslOptions glsl_;
  CachingPool pool_;
  kernel::DiskCache disk_{"vulkan"};
  kernel::LruCache<CompiledPtr> memory_{4096};
  std::unordered_map<std::uint64_t, Segment> segments_;
  std::uint64_t next_segment_ = 1;
  std::unique_ptr<Batch> cur_;
  std::deque<std::unique_ptr<Batch>> inflight_;
  std::vector<VkCommandBuffer> free_cmds_;
  std::vector<HostBuffer> free_staging_, free_readback_, free_info_;
  std::size_t info_used_ = 0;  // bytes used in the current batch's last info buffer
  std::size_t staging_in_flight_ = 0;
  std::uint64_t submitted_ = 0;
  std::string last_kernel_;
  mutable std::recursive_mutex mu_;
};

VulkanCompiled::~VulkanCompiled() {
  owner->retire(*this);
}

VulkanDevice::VulkanDevice(const detail::Instance& inst, VkPhysicalDevice pd)
    : inst_(inst), pd_(pd), pool_(*this, CachingPool::Options{}) {
  const auto& fi = inst.fn;
  VkPhysicalDeviceVulkan12Properties p12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_PROPERTIES};
  VkPhysicalDeviceSubgroupProperties sg{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES,
                                        &p12};
  VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &sg};
  fi.vkGetPhysicalDeviceProperties2(pd, &p2);
  const VkPhysicalDeviceProperties& p = p2.properties;
  limits_ = p.limits;
  fi.vkGetPhysicalDeviceMemoryProperties(pd, &mem_props_);

  // extensions
  std::uint32_t n = 0;
  fi.vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, nullptr);
  std::vector<VkExtensionProperties> exts(n);
  fi.vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, exts.data());
  const auto has = [&](const char* e) {
    for (const auto& x : exts)
      if (std::strcmp(x.extensionName, e) == 0) return true;
    return false;
  };
  if (!has(VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME))
    ember::detail::fail<DeviceError>("vulkan", p.deviceName, " lacks VK_KHR_push_descriptor");
  std::vector<const char*> enable = {VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME};
  const bool atomic_float = has(VK_EXT_SHADER_ATOMIC_FLOAT_EXTENSION_NAME);
  const bool coop = has(VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME);
  if (atomic_float) enable.push_back(VK_EXT_SHADER_ATOMIC_FLOAT_EXTENSION_NAME);
  if (coop) enable.push_back(VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME);

  // features: query what exists, enable what the generator uses
  VkPhysicalDeviceCooperativeMatrixFeaturesNV qc{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
  VkPhysicalDeviceShaderAtomicFloatFeaturesEXT qa{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT, coop ? &qc : nullptr};
  VkPhysicalDeviceVulkan12Features q12{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
      atomic_float ? static_cast<void*>(&qa) : (coop ? static_cast<void*>(&qc) : nullptr)};
  VkPhysicalDeviceVulkan11Features q11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES, &q12};
  VkPhysicalDeviceFeatures2 q{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &q11};
  fi.vkGetPhysicalDeviceFeatures2(pd, &q);
  if (!q12.timelineSemaphore)
    ember::detail::fail<DeviceError>("vulkan", p.deviceName, " lacks timeline semaphores");

  VkPhysicalDeviceCooperativeMatrixFeaturesNV ec{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
  ec.cooperativeMatrix = qc.cooperativeMatrix;
  VkPhysicalDeviceShaderAtomicFloatFeaturesEXT ea{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT, coop ? &ec : nullptr};
  ea.shaderBufferFloat32Atomics = qa.shaderBufferFloat32Atomics;
  ea.shaderBufferFloat32AtomicAdd = qa.shaderBufferFloat32AtomicAdd;
  ea.shaderSharedFloat32Atomics = qa.shaderSharedFloat32Atomics;
  ea.shaderSharedFloat32AtomicAdd = qa.shaderSharedFloat32AtomicAdd;
  VkPhysicalDeviceVulkan12Features e12{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
      atomic_float ? static_cast<void*>(&ea) : (coop ? static_cast<void*>(&ec) : nullptr)};
  e12.storageBuffer8BitAccess = q12.storageBuffer8BitAccess;
  e12.shaderInt8 = q12.shaderInt8;
  e12.shaderFloat16 = q12.shaderFloat16;
  e12.timelineSemaphore = VK_TRUE;
  e12.shaderBufferInt64Atomics = q12.shaderBufferInt64Atomics;
  e12.shaderSharedInt64Atomics = q12.shaderSharedInt64Atomics;
  e12.shaderSubgroupExtendedTypes = q12.shaderSubgroupExtendedTypes;
  e12.vulkanMemoryModel = q12.vulkanMemoryModel;
  VkPhysicalDeviceVulkan11Features e11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES, &e12};
  e11.storageBuffer16BitAccess = q11.storageBuffer16BitAccess;
  VkPhysicalDeviceFeatures2 e{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &e11};
  e.features.shaderFloat64 = q.features.shaderFloat64;
  e.features.shaderInt64 = q.features.shaderInt64;
  e.features.shaderInt16 = q.features.shaderInt16;

  // a queue family with compute (a compute-only one first)
  fi.vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, nullptr);
  std::vector<VkQueueFamilyProperties> fams(n);
  fi.vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, fams.data());
  int best = -1;
  for (std::uint32_t i = 0; i < n; ++i) {
    if (!(fams[i].queueFlags & VK_QUEUE_COMPUTE_BIT)) continue;
    if (best < 0 || !(fams[i].queueFlags & VK_QUEUE_GRAPHICS_BIT)) best = static_cast<int>(i);
    if (!(fams[i].queueFlags & VK_QUEUE_GRAPHICS_BIT)) break;
  }
  if (best < 0) ember::detail::fail<DeviceError>("vulkan", p.deviceName, " has no compute queue");
  family_ = static_cast<std::uint32_t>(best);
  timestamps_ = fams[family_].timestampValidBits > 0 && p.limits.timestampPeriod > 0;

  const float priority = 1.0f;
  VkDeviceQueueCreateInfo qci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  qci.queueFamilyIndex = family_;
  qci.queueCount = 1;
  qci.pQueuePriorities = &priority;
  VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, &e};
  dci.queueCreateInfoCount = 1;
  dci.pQueueCreateInfos = &qci;
  dci.enabledExtensionCount = static_cast<std::uint32_t>(enable.size());
  dci.ppEnabledExtensionNames = enable.data();
  check(fi.vkCreateDevice(pd, &dci, nullptr, &dev_), "vkCreateDevice");
  f_ = detail::load_device_fns(inst, dev_);
  f_.vkGetDeviceQueue(dev_, family_, 0, &queue_);

  VkCommandPoolCreateInfo cp{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  cp.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  cp.queueFamilyIndex = family_;
  check(f_.vkCreateCommandPool(dev_, &cp, nullptr, &cmd_pool_), "vkCreateCommandPool");
  VkSemaphoreTypeCreateInfo st{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
  st.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
  VkSemaphoreCreateInfo sci{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, &st};
  check(f_.vkCreateSemaphore(dev_, &sci, nullptr, &timeline_), "vkCreateSemaphore");
  if (timestamps_) {
    VkQueryPoolCreateInfo qp{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    qp.queryType = VK_QUERY_TYPE_TIMESTAMP;
    qp.queryCount = 2;
    check(f_.vkCreateQueryPool(dev_, &qp, nullptr, &queries_), "vkCreateQueryPool");
  }

  props_.kind = "vulkan";
  props_.software = p.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
  props_.name = p.deviceName;
  const std::uint32_t v = p.driverVersion;
  props_.driver = p.vendorID == 0x10de  // NVIDIA packs 10.8.8.6 bits
                      ? std::to_string(v >> 22) + "." + std::to_string((v >> 14) & 0xff) + "." +
                            std::to_string((v >> 6) & 0xff)
                      : std::to_string(VK_API_VERSION_MAJOR(v)) + "." +
                            std::to_string(VK_API_VERSION_MINOR(v)) + "." +
                            std::to_string(VK_API_VERSION_PATCH(v));
  for (std::uint32_t h = 0; h < mem_props_.memoryHeapCount; ++h)
    if (mem_props_.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)
      props_.total_memory =
          std::max<std::uint64_t>(props_.total_memory, mem_props_.memoryHeaps[h].size);
  props_.subgroup_size = sg.subgroupSize;
  props_.max_workgroup_threads = p.limits.maxComputeWorkGroupInvocations;
  props_.shared_memory_bytes = p.limits.maxComputeSharedMemorySize;
  props_.max_grid = {p.limits.maxComputeWorkGroupCount[0], p.limits.maxComputeWorkGroupCount[1],
                     p.limits.maxComputeWorkGroupCount[2]};
  glsl_.int8 = e12.storageBuffer8BitAccess && e12.shaderInt8;
  glsl_.int16 = e11.storageBuffer16BitAccess && e.features.shaderInt16;
  glsl_.float_atomics = ea.shaderBufferFloat32AtomicAdd && ea.shaderBufferFloat32Atomics;
  glsl_.int64_atomics = e12.shaderBufferInt64Atomics;
  glsl_.coop_matrix = ec.cooperativeMatrix;
  glsl_.denorm_preserve = p12.shaderDenormPreserveFloat32;
  glsl_.nan_preserve = p12.shaderSignedZeroInfNanPreserveFloat32;
  props_.denormals = p12.shaderDenormPreserveFloat32;
  props_.nans = p12.shaderSignedZeroInfNanPreserveFloat32;
  props_.f16 = props_.bf16 = glsl_.int16;
  props_.u8 = glsl_.int8;
  props_.f64 = e.features.shaderFloat64;
  props_.i64 = e.features.shaderInt64;
  props_.f64_math = false;
  props_.float_atomics = glsl_.float_atomics;
  props_.i64_atomics = glsl_.int64_atomics;
  const VkSubgroupFeatureFlags need =
      VK_SUBGROUP_FEATURE_BASIC_BIT | VK_SUBGROUP_FEATURE_SHUFFLE_BIT;
  props_.subgroups =
      (sg.supportedOperations & need) == need && (sg.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT);
  props_.matrix = glsl_.coop_matrix;
}

// ---- memory ----------------------------------------------------------------------------------

std::uint32_t VulkanDevice::memory_type(std::uint32_t bits, VkMemoryPropertyFlags want,
                                        VkMemoryPropertyFlags prefer) const {
  int fallback = -1;
  for (std::uint32_t i = 0; i < mem_props_.memoryTypeCount; ++i) {
    if (!(bits & (1u << i))) continue;
    const VkMemoryPropertyFlags f = mem_props_.memoryTypes[i].propertyFlags;
    if ((f & want) != want) continue;
    if ((f & prefer) == prefer) return i;
    if (fallback < 0) fallback = static_cast<int>(i);
  }
  if (fallback < 0)
    ember::detail::fail<DeviceError>("vulkan", props_.name, " has no suitable memory type");
  return static_cast<std::uint32_t>(fallback);
}

std::optional<std::uint64_t> VulkanDevice::allocate(std::size_t bytes) {
  std::lock_guard lock(mu_);
  VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bi.size = bytes;
  bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
             VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  Segment s{};
  // Out of memory (for the buffer or its memory) lets the pool release its cache and retry,
  // then report the request's size.
  const VkResult cr = f_.vkCreateBuffer(dev_, &bi, nullptr, &s.buffer);
  if (cr == VK_ERROR_OUT_OF_DEVICE_MEMORY || cr == VK_ERROR_OUT_OF_HOST_MEMORY) return std::nullopt;
  check(cr, "alloc");
  VkMemoryRequirements req;
  f_.vkGetBufferMemoryRequirements(dev_, s.buffer, &req);
  VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  ai.allocationSize = req.size;
  ai.memoryTypeIndex = memory_type(req.memoryTypeBits, 0, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
  const VkResult r = f_.vkAllocateMemory(dev_, &ai, nullptr, &s.memory);
  if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY) {
    f_.vkDestroyBuffer(dev_, s.buffer, nullptr);
    return std::nullopt;
  }
  check(r, "alloc");
  check(f_.vkBindBufferMemory(dev_, s.buffer, s.memory, 0), "alloc");
  const std::uint64_t h = next_segment_++;
  segments_.emplace(h, s);
  return h;
}

void VulkanDevice::free(std::uint64_t handle, std::size_t) {
  std::lock_guard lock(mu_);
  auto it = segments_.find(handle);
  if (it == segments_.end()) return;
  f_.vkDestroyBuffer(dev_, it->second.buffer, nullptr);
  f_.vkFreeMemory(dev_, it->second.memory, nullptr);
  segments_.erase(it);
}

HostBuffer VulkanDevice::make_host(std::size_t bytes, bool readback) {
  HostBuffer h;
  h.bytes = bytes;
  h.readback = readback;
  VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bi.size = bytes;
  bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
             VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  check(f_.vkCreateBuffer(dev_, &bi, nullptr, &h.buffer), "staging");
  VkMemoryRequirements req;
  f_.vkGetBufferMemoryRequirements(dev_, h.buffer, &req);
  VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  ai.allocationSize = req.size;
  ai.memoryTypeIndex =
      memory_type(req.memoryTypeBits,
                  VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                  readback ? VK_MEMORY_PROPERTY_HOST_CACHED_BIT : 0);
  check(f_.vkAllocateMemory(dev_, &ai, nullptr, &h.memory), "staging");
  check(f_.vkBindBufferMemory(dev_, h.buffer, h.memory, 0), "staging");
  void* m = nullptr;
  check(f_.vkMapMemory(dev_, h.memory, 0, VK_WHOLE_SIZE, 0, &m), "staging");
  h.map = static_cast<std::byte*>(m);
  return h;
}

void VulkanDevice::destroy_host(HostBuffer& h) {
  f_.vkUnmapMemory(dev_, h.memory);
  f_.vkDestroyBuffer(dev_, h.buffer, nullptr);
  f_.vkFreeMemory(dev_, h.memory, nullptr);
  h = HostBuffer{};
}

HostBuffer VulkanDevice::take_host(std::vector<HostBuffer>& free_list, std::size_t bytes,
                                   bool readback) {
  for (std::size_t i = 0; i < free_list.size(); ++i)
    if (free_list[i].bytes >= bytes) {
      HostBuffer h = free_list[i];
      free_list.erase(free_list.begin() + static_cast<std::ptrdiff_t>(i));
      return h;
    }
  return make_host(bytes, readback);
}

// ---- batches ---------------------------------------------------------------------------------

VulkanDevice::Batch& VulkanDevice::batch() {
  if (cur_) return *cur_;
  reclaim();
  cur_ = std::make_unique<Batch>();
  if (!free_cmds_.empty()) {
    cur_->cmd = free_cmds_.back();
    free_cmds_.pop_back();
    check(f_.vkResetCommandBuffer(cur_->cmd, 0), "vkResetCommandBuffer");
  } else {
    VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    ai.commandPool = cmd_pool_;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    check(f_.vkAllocateCommandBuffers(dev_, &ai, &cur_->cmd), "vkAllocateCommandBuffers");
  }
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  check(f_.vkBeginCommandBuffer(cur_->cmd, &bi), "vkBeginCommandBuffer");
  info_used_ = kInfoChunk;  // the first launch takes a fresh info buffer
  return *cur_;
}

void VulkanDevice::barrier(VkPipelineStageFlags dst_stage, VkAccessFlags dst_access) {
  VkMemoryBarrier b{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  b.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  b.dstAccessMask = dst_access;
  f_.vkCmdPipelineBarrier(cur_->cmd,
                          VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                          dst_stage, 0, 1, &b, 0, nullptr, 0, nullptr);
}

void VulkanDevice::submit() {
  if (!cur_) return;
  check(f_.vkEndCommandBuffer(cur_->cmd), "vkEndCommandBuffer");
  cur_->value = ++submitted_;
  VkTimelineSemaphoreSubmitInfo ts{VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
  ts.signalSemaphoreValueCount = 1;
  ts.pSignalSemaphoreValues = &cur_->value;
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO, &ts};
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cur_->cmd;
  si.signalSemaphoreCount = 1;
  si.pSignalSemaphores = &timeline_;
  check(f_.vkQueueSubmit(queue_, 1, &si, VK_NULL_HANDLE), "submit");
  inflight_.push_back(std::move(cur_));
}

void VulkanDevice::wait(std::uint64_t value) {
  VkSemaphoreWaitInfo wi{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
  wi.semaphoreCount = 1;
  wi.pSemaphores = &timeline_;
  wi.pValues = &value;
  check(f_.vkWaitSemaphores(dev_, &wi, UINT64_MAX),
        last_kernel_.empty() ? std::string("sync") : "sync (after kernel " + last_kernel_ + ")");
  reclaim();
}

void VulkanDevice::reclaim() {
  std::uint64_t done = 0;
  check(f_.vkGetSemaphoreCounterValue(dev_, timeline_, &done), "sync");
  while (!inflight_.empty() && inflight_.front()->value <= done) {
    Batch& b = *inflight_.front();
    free_cmds_.push_back(b.cmd);
    for (HostBuffer& h : b.info) free_info_.push_back(h);
    for (HostBuffer& h : b.staging) {
      staging_in_flight_ -= h.bytes;
      (h.readback ? free_readback_ : free_staging_).push_back(h);
    }
    inflight_.pop_front();
  }
}

// ---- copies ----------------------------------------------------------------------------------

void VulkanDevice::write(const kernel::Buffer& dst, std::size_t offset, const void* src,
                         std::size_t bytes) {
  check_range("write", dst, offset, bytes);
  std::lock_guard lock(mu_);
  const auto* s = static_cast<const std::byte*>(src);
  for (std::size_t done = 0; done < bytes;) {
    if (staging_in_flight_ + kStagingChunk > kStagingLimit) {
      submit();
      wait(submitted_);
    }
    const std::size_t n = std::min(kStagingChunk, bytes - done);
    HostBuffer h = take_host(free_staging_, kStagingChunk, false);
    std::memcpy(h.map, s + done, n);
    Batch& b = batch();
    VkBufferCopy region{0, dst->block().offset + offset + done, n};
    f_.vkCmdCopyBuffer(b.cmd, h.buffer, vk_buffer(*dst), 1, &region);
    barrier(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
            VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT |
                VK_ACCESS_TRANSFER_WRITE_BIT);
    b.staging.push_back(h);
    staging_in_flight_ += h.bytes;
    ++b.commands;
    done += n;
  }
}

void VulkanDevice::read(const kernel::Buffer& src, std::size_t offset, void* dst,
                        std::size_t bytes) {
  check_range("read", src, offset, bytes);
  std::lock_guard lock(mu_);
  auto* d = static_cast<std::byte*>(dst);
  for (std::size_t done = 0; done < bytes;) {
    const std::size_t n = std::min(kStagingChunk, bytes - done);
    HostBuffer h = take_host(free_readback_, kStagingChunk, true);
    Batch& b = batch();
    VkBufferCopy region{src->block().offset + offset + done, 0, n};
    f_.vkCmdCopyBuffer(b.cmd, vk_buffer(*src), h.buffer, 1, &region);
    barrier(VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
    b.staging.push_back(h);
    staging_in_flight_ += h.bytes;
    submit();
    wait(submitted_);
    std::memcpy(d + done, h.map, n);
    done += n;
  }
}

void VulkanDevice::copy(const kernel::Buffer& src, std::size_t so, const kernel::Buffer& dst,
                        std::size_t dof, std::size_t bytes) {
  check_range("copy", src, so, bytes);
  check_range("copy", dst, dof, bytes);
  std::lock_guard lock(mu_);
  Batch& b = batch();
  VkBufferCopy region{src->block().offset + so, dst->block().offset + dof, bytes};
  f_.vkCmdCopyBuffer(b.cmd, vk_buffer(*src), vk_buffer(*dst), 1, &region);
  barrier(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
          VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT |
              VK_ACCESS_TRANSFER_WRITE_BIT);
  if (++b.commands >= kMaxBatch) submit();
}

// ---- kernels ---------------------------------------------------------------------------------

CompiledPtr VulkanDevice::compile(const Kernel& k) {
  if (const std::string m = kernel::missing_features(props_, kernel::features(k)); !m.empty())
    ember::detail::fail<UnsupportedError>("compile " + k.name, props_.name, " lacks ", m);
  Kernel opt = k;
  kernel::optimize(opt);
  const std::string glsl = kernel::generate_glsl(opt, glsl_);
  const std::string key = kernel::cache_key(glsl + "|spirv-vulkan1.2");
  if (auto hit = memory_.get(key)) return *hit;
  std::vector<std::uint32_t> spirv;
  if (auto cached = disk_.get(key); cached && cached->size() % 4 == 0 && !cached->empty()) {
    spirv.resize(cached->size() / 4);
    std::memcpy(spirv.data(), cached->data(), cached->size());
  } else {
    spirv = compile_spirv(glsl, opt.name);
    disk_.put(key, std::string(reinterpret_cast<const char*>(spirv.data()), spirv.size() * 4));
  }
  log_kernel(opt, "vulkan", glsl);
  std::uint32_t buffers = 0;
  for (kernel::VarId a : opt.args) buffers += opt.vars[a].kind == kernel::VarKind::Buffer;
  const std::string op = "compile " + opt.name;
  std::lock_guard lock(mu_);
  auto c = std::make_shared<VulkanCompiled>(std::move(opt), glsl, this);
  c->bindings = buffers + 1;
  VkShaderModuleCreateInfo sm{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  sm.codeSize = spirv.size() * 4;
  sm.pCode = spirv.data();
  check(f_.vkCreateShaderModule(dev_, &sm, nullptr, &c->module), op);
  std::vector<VkDescriptorSetLayoutBinding> b(c->bindings);
  for (std::uint32_t i = 0; i < c->bindings; ++i) {
    b[i].binding = i;
    b[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    b[i].descriptorCount = 1;
    b[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
  }
  VkDescriptorSetLayoutCreateInfo dl{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  dl.flags = VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR;
  dl.bindingCount = c->bindings;
  dl.pBindings = b.data();
  check(f_.vkCreateDescriptorSetLayout(dev_, &dl, nullptr, &c->set_layout), op);
  VkPipelineLayoutCreateInfo pl{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  pl.setLayoutCount = 1;
  pl.pSetLayouts = &c->set_layout;
  check(f_.vkCreatePipelineLayout(dev_, &pl, nullptr, &c->layout), op);
  VkComputePipelineCreateInfo pi{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  pi.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  pi.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  pi.stage.module = c->module;
  pi.stage.pName = "main";
  pi.layout = c->layout;
  check(f_.vkCreateComputePipelines(dev_, VK_NULL_HANDLE, 1, &pi, nullptr, &c->pipeline), op);
  memory_.put(key, c);
  return c;
}

void VulkanDevice::enqueue(const CompiledKernel& k, Grid grid, std::span<const Arg> args,
                           const std::uint32_t* info) {
  const auto& c = static_cast<const VulkanCompiled&>(k);
  const Kernel& ker = k.kernel();
  const std::uint32_t words = std::max<std::uint32_t>(1, k.layout().words);
  std::array<VkDescriptorBufferInfo, kernel::kMaxInfoWords> bi;
  std::uint32_t n = 0;
  for (std::size_t a = 0; a < args.size(); ++a) {
    const kernel::VarInfo& v = ker.vars[ker.args[a]];
    if (v.kind != kernel::VarKind::Buffer) continue;
    const auto eb = static_cast<std::uint64_t>(kernel::elem_bytes(v.type.elem));
    const std::uint64_t off = args[a].buffer->block().offset + args[a].offset * eb;
    const std::uint64_t len = info[k.layout().offset[a]];
    const std::uint64_t range = std::max<std::uint64_t>(4, (len * eb + 3) / 4 * 4);
    if (off % limits_.minStorageBufferOffsetAlignment != 0)
      ember::detail::fail<UnsupportedError>(
          "launch " + ker.name, "argument ", a, " starts at byte ", off,
          ", not a multiple of the device's storage buffer alignment ",
          limits_.minStorageBufferOffsetAlignment);
    if (range > limits_.maxStorageBufferRange)
      ember::detail::fail<UnsupportedError>("launch " + ker.name, "argument ", a, " spans ", range,
                                            " bytes; ", props_.name, " binds at most ",
                                            limits_.maxStorageBufferRange);
    bi[n++] = VkDescriptorBufferInfo{
        vk_buffer(*args[a].buffer), off,
        std::min<std::uint64_t>(
            range, args[a].buffer->block().size - (off - args[a].buffer->block().offset))};
  }
  std::lock_guard lock(mu_);
  Batch& b = batch();
  const std::size_t align = std::max<std::size_t>(16, limits_.minStorageBufferOffsetAlignment);
  const std::size_t bytes = words * 4;
  std::size_t at = (info_used_ + align - 1) / align * align;
  if (b.info.empty() || at + bytes > kInfoChunk) {
    b.info.push_back(take_host(free_info_, kInfoChunk, false));
    at = 0;
  }
  std::memcpy(b.info.back().map + at, info, bytes);
  info_used_ = at + bytes;
  bi[n++] = VkDescriptorBufferInfo{b.info.back().buffer, at, bytes};
  std::array<VkWriteDescriptorSet, kernel::kMaxInfoWords> w;
  for (std::uint32_t i = 0; i < n; ++i) {
    w[i] = VkWriteDescriptorSet{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    w[i].dstBinding = i;
    w[i].descriptorCount = 1;
    w[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    w[i].pBufferInfo = &bi[i];
  }
  f_.vkCmdBindPipeline(b.cmd, VK_PIPELINE_BIND_POINT_COMPUTE, c.pipeline);
  f_.vkCmdPushDescriptorSetKHR(b.cmd, VK_PIPELINE_BIND_POINT_COMPUTE, c.layout, 0, n, w.data());
  f_.vkCmdDispatch(b.cmd, grid.x, grid.y, grid.z);
  barrier(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
          VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT |
              VK_ACCESS_TRANSFER_WRITE_BIT);
  last_kernel_ = ker.name;
  if (++b.commands >= kMaxBatch) submit();
}

double VulkanDevice::time_ms(const std::function<void()>& work) {
  if (!timestamps_) {
    sync();
    const auto t0 = std::chrono::steady_clock::now();
    work();
    sync();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }
  {
    std::lock_guard lock(mu_);
    Batch& b = batch();
    f_.vkCmdResetQueryPool(b.cmd, queries_, 0, 2);
    f_.vkCmdWriteTimestamp(b.cmd, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, queries_, 0);
  }
  work();
  std::uint64_t t[2] = {0, 0};
  {
    std::lock_guard lock(mu_);
    Batch& b = batch();
    f_.vkCmdWriteTimestamp(b.cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries_, 1);
    submit();
    wait(submitted_);
    check(f_.vkGetQueryPoolResults(dev_, queries_, 0, 2, sizeof t, t, 8,
                                   VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
          "time");
  }
  return static_cast<double>(t[1] - t[0]) * limits_.timestampPeriod * 1e-6;
}

}  // namespace

int device_count(std::string* why) {
  const detail::Instance* i = detail::instance(why);
  return i ? static_cast<int>(i->devices.size()) : 0;
}

bool is_software(int index) {
  const detail::Instance* inst = detail::instance(nullptr);
  if (!inst || index < 0 || index >= static_cast<int>(inst->devices.size())) return false;
  VkPhysicalDeviceProperties p;
  inst->fn.vkGetPhysicalDeviceProperties(inst->devices[static_cast<std::size_t>(index)], &p);
  return p.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
}

kernel::ComputeDevice& device(int index) {
  static std::mutex mu;
  static std::vector<VulkanDevice*> devices;  // never destroyed: buffers may outlive statics
  std::string why;
  const detail::Instance* inst = detail::instance(&why);
  const int n = inst ? static_cast<int>(inst->devices.size()) : 0;
  if (index < 0 || index >= n)
    ember::detail::fail<DeviceError>("vulkan", "no Vulkan device ", index, " (", n, " present",
                                     why.empty() ? "" : ": " + why, ")");
  std::lock_guard lock(mu);
  if (devices.empty()) devices.resize(static_cast<std::size_t>(n), nullptr);
  auto& d = devices[static_cast<std::size_t>(index)];
  if (!d) d = new VulkanDevice(*inst, inst->devices[static_cast<std::size_t>(index)]);
  return *d;
}

}  // namespace ember::vulkan
