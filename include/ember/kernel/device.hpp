// The interface every compute runtime implements (CPU, CUDA, Vulkan).
//
// A device owns a memory pool, a kernel cache and one queue. alloc/write/launch/copy only
// enqueue work and return; read() and sync() wait for it. Errors of the driver become
// DeviceError "[operation] ..." naming the kernel or operation; errors of asynchronous work
// are reported by the next call that waits.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>

#include "ember/kernel/launch.hpp"

namespace ember::kernel {

struct DeviceProperties {
  std::string kind;                // "cpu", "cuda", "vulkan"
  bool software = false;           // a CPU implementation of the API (Mesa's llvmpipe)
  std::string name;                // "NVIDIA H200", "llvmpipe (LLVM 15.0.6, 256 bits)", ...
  std::string driver;              // driver version
  std::uint64_t total_memory = 0;  // bytes
  std::uint32_t compute_units = 0;
  std::uint32_t subgroup_size = 0;
  std::uint32_t max_workgroup_threads = 0;
  std::uint32_t shared_memory_bytes = 0;  // per workgroup
  std::array<std::uint32_t, 3> max_grid{65535, 65535, 65535};
  std::uint32_t compute_capability = 0;  // CUDA: 10 * major + minor
  // supported element types and operations
  bool f16 = true, bf16 = true, f64 = true, i64 = true, u8 = true;
  bool f64_math = true;  // exp, log, ... on f64
  bool float_atomics = true, i64_atomics = true;
  bool subgroups = true;
  bool matrix = false;    // matrix-unit fragments (16x16x16)
  bool denormals = true;  // f32 subnormals are kept (false: the device may flush them to zero)
  bool nans = true;       // NaN and infinities follow IEEE through comparisons and clamps
};

/// What `props` lacks to run a kernel with `f`; empty when it can run it.
std::string missing_features(const DeviceProperties& props, const Features& f);

/// A compiled kernel (the runtime's module/pipeline), made by ComputeDevice::compile.
class CompiledKernel {
 public:
  CompiledKernel(Kernel k, std::string source)
      : kernel_(std::move(k)), layout_(kernel_), source_(std::move(source)) {}
  virtual ~CompiledKernel() = default;
  const Kernel& kernel() const { return kernel_; }
  const InfoLayout& layout() const { return layout_; }
  /// The generated code (CUDA C, GLSL or C++); empty for the CPU interpreter.
  const std::string& source() const { return source_; }

 private:
  Kernel kernel_;
  InfoLayout layout_;
  std::string source_;
};
using CompiledPtr = std::shared_ptr<const CompiledKernel>;

class ComputeDevice {
 public:
  virtual ~ComputeDevice() = default;
  virtual const DeviceProperties& properties() const = 0;

  /// An uninitialised buffer of `bytes` bytes from the pool. OutOfMemoryError when full.
  Buffer alloc(std::size_t bytes);
  /// A buffer holding a copy of `bytes` bytes at `src` (the copy is enqueued; src may be
  /// reused when this returns).
  Buffer upload(const void* src, std::size_t bytes);
  /// Copies host memory into the buffer at byte `offset` (enqueued; src may be reused when
  /// this returns). ValueError when the range exceeds the buffer.
  virtual void write(const Buffer& dst, std::size_t offset, const void* src, std::size_t bytes) = 0;
  /// Waits for the work enqueued before, then copies the bytes to host memory.
  virtual void read(const Buffer& src, std::size_t offset, void* dst, std::size_t bytes) = 0;
  /// Device-to-device copy (enqueued).
  virtual void copy(const Buffer& src, std::size_t src_offset, const Buffer& dst,
                    std::size_t dst_offset, std::size_t bytes) = 0;

  /// Optimises and compiles a kernel (cached in memory and, for GPUs, on disk). Throws
  /// UnsupportedError when the device lacks a feature the kernel uses, DeviceError when the
  /// compiler fails (with its log).
  virtual CompiledPtr compile(const Kernel& k) = 0;
  /// Enqueues the kernel over `grid` workgroups. Checks the arguments (count, kinds, element
  /// types, ranks, ranges, device) first.
  void launch(const CompiledKernel& k, Grid grid, std::span<const Arg> args);
  void launch(const CompiledKernel& k, Grid grid, std::initializer_list<Arg> args) {
    launch(k, grid, std::span<const Arg>(args.begin(), args.size()));
  }
  /// Waits until every enqueued operation has finished; reports asynchronous errors.
  virtual void sync() = 0;

  /// Runs `work` (which enqueues operations) and returns the device time it took in
  /// milliseconds, measured with the device's timers (events, timestamp queries).
  virtual double time_ms(const std::function<void()>& work) = 0;

  virtual MemoryStats memory_stats() const = 0;
  /// Starts memory_stats().peak_bytes_in_use again from the bytes in use now.
  virtual void reset_peak_memory() = 0;
  /// Returns cached memory to the driver (waits for the device first).
  virtual void release_memory() = 0;

 protected:
  friend class BufferStorage;
  virtual CachingPool::Block allocate_block(std::size_t bytes) = 0;
  virtual void free_block(const CachingPool::Block& b) = 0;
  virtual void enqueue(const CompiledKernel& k, Grid grid, std::span<const Arg> args,
                       const std::uint32_t* info) = 0;
  void check_range(const char* op, const Buffer& b, std::size_t offset, std::size_t bytes) const;
  /// Logs the kernel and its code to stderr when EMBER_KERNEL_LOG is set.
  static void log_kernel(const Kernel& k, const std::string& target, const std::string& code);
};

/// The CPU target: kernels run by the interpreter (see cpu.hpp).
ComputeDevice& cpu_device();

}  // namespace ember::kernel
