// The CPU compute device: host memory through the caching pool, kernels on the interpreter.
#include <omp.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include "ember/kernel/device.hpp"
#include "ember/kernel/passes.hpp"
#include "interp.hpp"

namespace ember::kernel {

namespace {

constexpr std::uint32_t kCpuSubgroup = 32;

class HostDriver final : public CachingPool::Driver {
 public:
  std::optional<std::uint64_t> allocate(std::size_t bytes) override {
    void* p = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
    if (!p) return std::nullopt;
    return reinterpret_cast<std::uint64_t>(p);
  }
  void free(std::uint64_t handle, std::size_t) override {
    std::free(reinterpret_cast<void*>(handle));
  }
  void wait_idle() override {}
};

class CpuCompiled final : public CompiledKernel {
 public:
  explicit CpuCompiled(Kernel k) : CompiledKernel(k, {}), program(std::move(k), kCpuSubgroup) {}
  cpu::Program program;
};

class CpuDevice final : public ComputeDevice {
 public:
  CpuDevice() : pool_(driver_) {
    props_.kind = "cpu";
    props_.name = "cpu (kernel interpreter)";
    props_.driver = "ember";
    props_.total_memory = static_cast<std::uint64_t>(sysconf(_SC_PHYS_PAGES)) *
                          static_cast<std::uint64_t>(sysconf(_SC_PAGE_SIZE));
    props_.compute_units = static_cast<std::uint32_t>(omp_get_max_threads());
    props_.subgroup_size = kCpuSubgroup;
    props_.max_workgroup_threads = 1024;
    props_.shared_memory_bytes = 64 * 1024;
    props_.max_grid = {0x7fffffffu, 65535, 65535};
    props_.matrix = true;  // emulated in f32
  }

  const DeviceProperties& properties() const override { return props_; }

  void write(const Buffer& dst, std::size_t offset, const void* src, std::size_t bytes) override {
    check_range("write", dst, offset, bytes);
    std::memcpy(ptr(*dst) + offset, src, bytes);
  }
  void read(const Buffer& src, std::size_t offset, void* dst, std::size_t bytes) override {
    check_range("read", src, offset, bytes);
    std::memcpy(dst, ptr(*src) + offset, bytes);
  }
  void copy(const Buffer& src, std::size_t so, const Buffer& dst, std::size_t dof,
            std::size_t bytes) override {
    check_range("copy", src, so, bytes);
    check_range("copy", dst, dof, bytes);
    std::memmove(ptr(*dst) + dof, ptr(*src) + so, bytes);
  }

  CompiledPtr compile(const Kernel& k) override {
    Kernel opt = k;
    optimize(opt);
    const std::string key = to_string(opt);
    std::lock_guard lock(mu_);
    if (auto it = cache_.find(key); it != cache_.end()) return it->second;
    log_kernel(opt, "cpu", "");
    auto c = std::make_shared<CpuCompiled>(std::move(opt));
    cache_.emplace(key, c);
    return c;
  }

  void sync() override {}
  double time_ms(const std::function<void()>& work) override {
    const auto t0 = std::chrono::steady_clock::now();
    work();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }
  MemoryStats memory_stats() const override { return pool_.stats(); }
  void release_memory() override { pool_.release(); }
  void reset_peak_memory() override { pool_.reset_peak(); }

 protected:
  CachingPool::Block allocate_block(std::size_t bytes) override { return pool_.allocate(bytes); }
  void free_block(const CachingPool::Block& b) override { pool_.free(b); }

  void enqueue(const CompiledKernel& k, Grid grid, std::span<const Arg> args,
               const std::uint32_t* info) override {
    const auto& c = static_cast<const CpuCompiled&>(k);
    cpu::RunArgs r;
    r.grid = grid;
    r.info = info;
    const Kernel& ker = k.kernel();
    for (std::size_t a = 0; a < args.size(); ++a) {
      const VarInfo& v = ker.vars[ker.args[a]];
      if (v.kind == VarKind::Buffer) {
        r.mem.push_back(ptr(*args[a].buffer) +
                        args[a].offset * static_cast<std::uint64_t>(elem_bytes(v.type.elem)));
        r.len.push_back(info[k.layout().offset[a]]);
      } else {
        r.mem.push_back(nullptr);
        r.len.push_back(0);
      }
    }
    c.program.run(r);
  }

 private:
  static std::byte* ptr(const BufferStorage& b) {
    return reinterpret_cast<std::byte*>(b.block().handle) + b.block().offset;
  }

  DeviceProperties props_;
  HostDriver driver_;
  CachingPool pool_;
  std::mutex mu_;
  std::map<std::string, CompiledPtr> cache_;
};

}  // namespace

ComputeDevice& cpu_device() {
  static CpuDevice* d = new CpuDevice();  // never destroyed: buffers may outlive statics
  return *d;
}

}  // namespace ember::kernel
