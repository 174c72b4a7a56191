// A caching memory pool over a device's allocator, shared by every runtime.
//
// Requests are rounded up to size classes (4 per power of two, multiples of the alignment;
// at most 25 % padding below 1 MiB, 12.5 % above). Classes up to `small_limit` are cut from
// slabs of `slab_bytes`; larger ones are one driver allocation each. A freed block goes to its
// class's free list and is handed out again to later work; runtimes queue all work of a
// device in one stream, so a block is reused only by work that the device runs after every
// earlier use of it has finished (stream order). Cached memory goes back to the driver on
// release() (after waiting for the device) and when a driver allocation fails, before one
// retry; a second failure throws OutOfMemoryError.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "ember/kernel/core.hpp"

namespace ember::kernel {

/// Counters of a device's memory pool (bytes and counts since the pool was made).
struct MemoryStats {
  std::uint64_t bytes_in_use = 0;    // handed out to live buffers (class sizes)
  std::uint64_t bytes_reserved = 0;  // held from the driver, in use or cached
  std::uint64_t peak_bytes_in_use = 0;
  std::uint64_t driver_allocs = 0;  // calls of the driver's allocator
  std::uint64_t driver_frees = 0;
  std::uint64_t allocs = 0;  // requests served
  std::uint64_t frees = 0;
  std::uint64_t cache_hits = 0;  // requests served without a driver allocation
  std::uint64_t oom_retries = 0;
  std::uint64_t device_free = 0;  // free device memory reported by the driver (CUDA), else 0
};

class CachingPool {
 public:
  /// The device's allocator. allocate returns an opaque handle, or nullopt when out of
  /// memory (other failures throw); wait_idle blocks until the device finished all work.
  struct Driver {
    virtual ~Driver() = default;
    virtual std::optional<std::uint64_t> allocate(std::size_t bytes) = 0;
    virtual void free(std::uint64_t handle, std::size_t bytes) = 0;
    virtual void wait_idle() = 0;
  };
  struct Options {
    std::size_t alignment = 256;
    std::size_t small_limit = std::size_t{1} << 20;
    std::size_t slab_bytes = std::size_t{2} << 20;
  };
  /// A piece of a driver allocation: the handle, the byte offset in it, the class size.
  struct Block {
    std::uint64_t handle = 0;
    std::size_t offset = 0;
    std::size_t size = 0;
  };

  CachingPool(Driver& driver, Options options);
  explicit CachingPool(Driver& driver) : CachingPool(driver, Options{}) {}
  ~CachingPool();
  CachingPool(const CachingPool&) = delete;
  CachingPool& operator=(const CachingPool&) = delete;

  /// A block of at least `bytes` (> 0). Throws OutOfMemoryError "[op] ...".
  Block allocate(std::size_t bytes, const char* op = "alloc");
  void free(const Block& b);
  /// Waits for the device, then returns every cached block (and empty slab) to the driver.
  void release();
  MemoryStats stats() const;
  /// Starts the peak (peak_bytes_in_use) again from the bytes in use now.
  void reset_peak();
  /// The class size a request of `bytes` is rounded up to.
  std::size_t class_size(std::size_t bytes) const;

 private:
  struct Slab {
    std::uint64_t handle;
    std::size_t slot_size;
    std::uint32_t used = 0;
  };
  std::optional<std::uint64_t> driver_alloc(std::size_t bytes, const char* op);
  void release_locked();

  Driver& driver_;
  Options opt_;
  mutable std::mutex mu_;
  std::unordered_map<std::size_t, std::vector<Block>> free_;  // class size -> free blocks
  std::unordered_map<std::uint64_t, Slab> slabs_;             // slab handle -> slab
  std::unordered_map<std::uint64_t, std::size_t> large_;      // handle -> bytes (all large)
  MemoryStats stats_;
};

}  // namespace ember::kernel
