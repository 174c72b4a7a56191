// The CUDA compute device: one context and stream per device, the caching pool over
// cuMemAlloc, pinned staging buffers, and NVRTC kernels cached in memory and on disk.
#include <array>
#include <cstring>
#include <memory>
#include <mutex>

#include "api.hpp"
#include "ember/cuda/cuda.hpp"
#include "ember/kernel/cache.hpp"
#include "ember/kernel/codegen.hpp"
#include "ember/kernel/passes.hpp"
#include "native.hpp"

namespace ember::cuda {

using kernel::Arg;
using kernel::CachingPool;
using kernel::CompiledKernel;
using kernel::CompiledPtr;
using kernel::Grid;
using kernel::Kernel;

namespace {

constexpr std::size_t kStagingBytes = std::size_t{32} << 20;  // per pinned staging buffer

class CudaCompiled final : public CompiledKernel {
 public:
  CudaCompiled(Kernel k, std::string source, CUmodule m, CUfunction f)
      : CompiledKernel(std::move(k), std::move(source)), module(m), function(f) {}
  CUmodule module;
  CUfunction function;
};

class CudaDevice final : public kernel::ComputeDevice, private CachingPool::Driver {
 public:
  explicit CudaDevice(int index) : d_(*detail::driver()), pool_(*this), disk_("cuda") {
    check(d_.cuDeviceGet_(&dev_, index), "cuDeviceGet");
    check(d_.cuDevicePrimaryCtxRetain_(&ctx_, dev_), "cuDevicePrimaryCtxRetain");
    bind();
    check(d_.cuStreamCreate_(&stream_, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    char name[256] = {};
    d_.cuDeviceGetName_(name, sizeof name, dev_);
    props_.kind = "cuda";
    props_.name = name;
    props_.driver =
        std::to_string(d_.version / 1000) + "." + std::to_string(d_.version % 1000 / 10);
    std::size_t mem = 0;
    d_.cuDeviceTotalMem_(&mem, dev_);
    props_.total_memory = mem;
    props_.compute_units = attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    props_.subgroup_size = attr(CU_DEVICE_ATTRIBUTE_WARP_SIZE);
    props_.max_workgroup_threads = attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    props_.shared_memory_bytes = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
    props_.max_grid = {attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X),
                       attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y),
                       attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z)};
    props_.compute_capability = 10 * attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) +
                                attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    props_.matrix = props_.compute_capability >= 70;
    props_.bf16 = props_.compute_capability >= 80;
    for (auto& s : staging_) {
      check(d_.cuMemHostAlloc_(&s.host, kStagingBytes, 0), "cuMemHostAlloc (staging)");
      check(d_.cuEventCreate_(&s.done, CU_EVENT_DISABLE_TIMING), "cuEventCreate");
    }
  }

  const kernel::DeviceProperties& properties() const override { return props_; }

  void write(const kernel::Buffer& dst, std::size_t offset, const void* src,
             std::size_t bytes) override {
    check_range("write", dst, offset, bytes);
    std::lock_guard lock(mu_);
    bind();
    const auto* s = static_cast<const char*>(src);
    for (std::size_t done = 0; done < bytes;) {
      Staging& st = next_staging();
      const std::size_t n = std::min(kStagingBytes, bytes - done);
      std::memcpy(st.host, s + done, n);
      check(d_.cuMemcpyHtoDAsync_(ptr(*dst) + offset + done, st.host, n, stream_), "write");
      check(d_.cuEventRecord_(st.done, stream_), "write");
      done += n;
    }
  }

  void read(const kernel::Buffer& src, std::size_t offset, void* dst, std::size_t bytes) override {
    check_range("read", src, offset, bytes);
    std::lock_guard lock(mu_);
    bind();
    auto* d = static_cast<char*>(dst);
    // Two staging buffers: the copy of one chunk overlaps the host copy of the previous one.
    std::size_t pending_at = 0, pending_n = 0;
    Staging* pending = nullptr;
    for (std::size_t done = 0; done < bytes || pending;) {
      Staging* st = nullptr;
      std::size_t n = 0;
      if (done < bytes) {
        st = &next_staging();
        n = std::min(kStagingBytes, bytes - done);
        check(d_.cuMemcpyDtoHAsync_(st->host, ptr(*src) + offset + done, n, stream_), "read");
        check(d_.cuEventRecord_(st->done, stream_), "read");
      }
      if (pending) {
        check(d_.cuEventSynchronize_(pending->done), sync_op("read"));
        std::memcpy(d + pending_at, pending->host, pending_n);
      }
      pending = st;
      pending_at = done;
      pending_n = n;
      done += n;
    }
  }

  void copy(const kernel::Buffer& src, std::size_t so, const kernel::Buffer& dst, std::size_t dof,
            std::size_t bytes) override {
    check_range("copy", src, so, bytes);
    check_range("copy", dst, dof, bytes);
    std::lock_guard lock(mu_);
    bind();
    check(d_.cuMemcpyDtoDAsync_(ptr(*dst) + dof, ptr(*src) + so, bytes, stream_), "copy");
  }

  CompiledPtr compile(const Kernel& k) override {
    if (const std::string m = kernel::missing_features(props_, kernel::features(k)); !m.empty())
      ember::detail::fail<UnsupportedError>("compile " + k.name, props_.name, " lacks ", m);
    Kernel opt = k;
    kernel::optimize(opt);
    const std::string source = kernel::generate_cuda(opt);
    const detail::Nvrtc* n = detail::nvrtc();
    const std::string key = kernel::cache_key(source + kernel::scalar_header_text() + "|sm" +
                                              std::to_string(props_.compute_capability) + "|nvrtc" +
                                              (n ? std::to_string(n->major * 100 + n->minor) : "") +
                                              "|driver" + std::to_string(d_.version));
    if (auto hit = memory_.get(key)) return *hit;
    std::string image;
    if (auto cached = disk_.get(key)) {
      image = std::move(*cached);
    } else {
      Program p = compile_program(opt, props_.compute_capability);
      image = std::move(p.image);
      disk_.put(key, image);
    }
    log_kernel(opt, "cuda", source);
    std::lock_guard lock(mu_);
    bind();
    CUmodule module = nullptr;
    CUfunction function = nullptr;
    check(d_.cuModuleLoadData_(&module, image.data()),
          "compile " + opt.name + " (cuModuleLoadData)");
    check(d_.cuModuleGetFunction_(&function, module, opt.name.c_str()), "compile " + opt.name);
    auto c = std::make_shared<CudaCompiled>(std::move(opt), source, module, function);
    memory_.put(key, c);
    return c;
  }

  void sync() override {
    std::lock_guard lock(mu_);
    bind();
    check(d_.cuStreamSynchronize_(stream_), sync_op("sync"));
  }

  double time_ms(const std::function<void()>& work) override {
    CUevent a = nullptr, b = nullptr;
    {
      std::lock_guard lock(mu_);
      bind();
      check(d_.cuEventCreate_(&a, CU_EVENT_DEFAULT), "time");
      check(d_.cuEventCreate_(&b, CU_EVENT_DEFAULT), "time");
      check(d_.cuEventRecord_(a, stream_), "time");
    }
    work();
    float ms = 0;
    {
      std::lock_guard lock(mu_);
      bind();
      check(d_.cuEventRecord_(b, stream_), "time");
      check(d_.cuEventSynchronize_(b), sync_op("time"));
      check(d_.cuEventElapsedTime_(&ms, a, b), "time");
      d_.cuEventDestroy_(a);
      d_.cuEventDestroy_(b);
    }
    return ms;
  }

  /// detail::with_stream: `fn` enqueues on the stream under the device's lock.
  void run_on_stream(const std::string& what, const std::function<void(CUstream)>& fn) {
    std::lock_guard lock(mu_);
    bind();
    fn(stream_);
    last_kernel_ = what;
  }

  kernel::MemoryStats memory_stats() const override {
    kernel::MemoryStats s = pool_.stats();
    bind();
    std::size_t free = 0, total = 0;
    if (d_.cuMemGetInfo_(&free, &total) == CUDA_SUCCESS) s.device_free = free;
    return s;
  }
  void release_memory() override { pool_.release(); }
  void reset_peak_memory() override { pool_.reset_peak(); }

 protected:
  CachingPool::Block allocate_block(std::size_t bytes) override { return pool_.allocate(bytes); }
  void free_block(const CachingPool::Block& b) override { pool_.free(b); }

  void enqueue(const CompiledKernel& k, Grid grid, std::span<const Arg> args,
               const std::uint32_t* info) override {
    const auto& c = static_cast<const CudaCompiled&>(k);
    const Kernel& ker = k.kernel();
    std::array<CUdeviceptr, kernel::kMaxInfoWords> ptrs;
    std::array<void*, kernel::kMaxInfoWords + 1> params;
    std::size_t n = 0;
    for (std::size_t a = 0; a < args.size(); ++a) {
      const kernel::VarInfo& v = ker.vars[ker.args[a]];
      if (v.kind != kernel::VarKind::Buffer) continue;
      ptrs[n] = ptr(*args[a].buffer) +
                args[a].offset * static_cast<std::uint64_t>(kernel::elem_bytes(v.type.elem));
      params[n] = &ptrs[n];
      ++n;
    }
    params[n] = const_cast<std::uint32_t*>(info);
    const auto& wg = ker.workgroup;
    std::lock_guard lock(mu_);
    bind();
    check(d_.cuLaunchKernel_(c.function, grid.x, grid.y, grid.z, wg[0], wg[1], wg[2], 0, stream_,
                             params.data(), nullptr),
          "launch " + ker.name);
    last_kernel_ = ker.name;
  }

 private:
  struct Staging {
    void* host = nullptr;
    CUevent done = nullptr;
  };

  // CachingPool::Driver
  std::optional<std::uint64_t> allocate(std::size_t bytes) override {
    bind();
    CUdeviceptr p = 0;
    const CUresult r = d_.cuMemAlloc_(&p, bytes);
    if (r == CUDA_ERROR_OUT_OF_MEMORY) return std::nullopt;
    check(r, "alloc");
    return static_cast<std::uint64_t>(p);
  }
  void free(std::uint64_t handle, std::size_t) override {
    bind();
    check(d_.cuMemFree_(static_cast<CUdeviceptr>(handle)), "free");
  }
  void wait_idle() override {
    bind();
    check(d_.cuStreamSynchronize_(stream_), sync_op("release"));
  }

  void bind() const {
    thread_local CUcontext current = nullptr;
    if (current != ctx_) {
      check(d_.cuCtxSetCurrent_(ctx_), "cuCtxSetCurrent");
      current = ctx_;
    }
  }
  std::uint32_t attr(CUdevice_attribute a) const {
    int v = 0;
    d_.cuDeviceGetAttribute_(&v, a, dev_);
    return static_cast<std::uint32_t>(v);
  }
  static CUdeviceptr ptr(const kernel::BufferStorage& b) {
    return static_cast<CUdeviceptr>(b.block().handle + b.block().offset);
  }
  /// The next staging buffer, once the copy that used it last has finished.
  Staging& next_staging() {
    Staging& s = staging_[next_];
    next_ = (next_ + 1) % staging_.size();
    check(d_.cuEventSynchronize_(s.done), sync_op("staging"));
    return s;
  }
  std::string sync_op(const char* op) const {
    return last_kernel_.empty() ? std::string(op)
                                : std::string(op) + " (after kernel " + last_kernel_ + ")";
  }
  static void check(CUresult r, const std::string& op) { detail::check(r, op); }

  const detail::Driver& d_;
  CUdevice dev_ = 0;
  CUcontext ctx_ = nullptr;
  CUstream stream_ = nullptr;
  kernel::DeviceProperties props_;
  CachingPool pool_;
  kernel::DiskCache disk_;
  kernel::LruCache<CompiledPtr> memory_{4096};
  std::array<Staging, 2> staging_;
  std::size_t next_ = 0;
  std::string last_kernel_;
  std::recursive_mutex mu_;
};

}  // namespace

namespace detail {

bool is_cuda_device(const kernel::ComputeDevice& device) {
  return dynamic_cast<const CudaDevice*>(&device) != nullptr;
}

CUdeviceptr device_ptr(const kernel::BufferStorage& buffer) {
  return static_cast<CUdeviceptr>(buffer.block().handle + buffer.block().offset);
}

void with_stream(kernel::ComputeDevice& device, const std::string& what,
                 const std::function<void(CUstream)>& fn) {
  auto* d = dynamic_cast<CudaDevice*>(&device);
  if (!d) ember::detail::fail<DeviceError>(what, device.properties().name, " is not a CUDA device");
  d->run_on_stream(what, fn);
}

}  // namespace detail

int device_count(std::string* why) {
  const detail::Driver* d = detail::driver(why);
  if (!d) return 0;
  int n = 0;
  if (d->cuDeviceGetCount_(&n) != CUDA_SUCCESS || n == 0) {
    if (why) *why = "the CUDA driver reports no device";
    return 0;
  }
  return n;
}

kernel::ComputeDevice& device(int index) {
  static std::mutex mu;
  static std::vector<CudaDevice*> devices;  // never destroyed: buffers may outlive statics
  std::string why;
  const int n = device_count(&why);
  if (index < 0 || index >= n)
    ember::detail::fail<DeviceError>("cuda", "no CUDA device ", index, " (", n, " present",
                                     why.empty() ? "" : ": " + why, ")");
  std::lock_guard lock(mu);
  if (devices.empty()) devices.resize(static_cast<std::size_t>(n), nullptr);
  auto& d = devices[static_cast<std::size_t>(index)];
  if (!d) d = new CudaDevice(index);
  return *d;
}

}  // namespace ember::cuda
