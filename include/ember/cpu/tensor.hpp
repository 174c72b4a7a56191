// The CPU backend's primitive: a strided view over a shared, 64-byte aligned buffer.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ember/core/dtype.hpp"
#include "ember/core/shape.hpp"

namespace ember {

/// The CPU device (there is one: the host).
struct CpuDevice {
  bool operator==(const CpuDevice&) const = default;
  std::string to_string() const { return "cpu"; }
};

namespace cpu {

/// A host allocation. Large buffers come from and return to a bounded pool
/// (see `buffer_pool_stats`), so repeated ops of the same size do not page-fault.
class Storage {
 public:
  explicit Storage(std::size_t bytes);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  void* data() const { return data_; }
  std::size_t bytes() const { return bytes_; }

 private:
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
  std::size_t capacity_ = 0;
};

struct BufferPoolStats {
  std::size_t cached_bytes;  ///< bytes held in the pool, free for reuse
  std::size_t hits;          ///< allocations served from the pool
  std::size_t misses;        ///< allocations that went to the system
};
BufferPoolStats buffer_pool_stats();

/// Bytes held by live CPU tensors (requested sizes; all threads), and the most held at
/// once since the start or the last reset_peak_memory().
struct MemoryStats {
  std::size_t live_bytes;
  std::size_t peak_bytes;
};
MemoryStats memory_stats();
/// Restarts the peak at the current live bytes.
void reset_peak_memory();
/// Frees every cached buffer.
void buffer_pool_clear();

}  // namespace cpu

/// CPU tensor primitive. `strides` and `offset` are in elements; a stride may be 0
/// (expanded dims) and views share `storage`.
struct CpuTensor {
  std::shared_ptr<cpu::Storage> storage;
  Shape shape;
  std::vector<std::int64_t> strides;
  std::int64_t offset = 0;
  DType dtype = DType::F32;

  std::int64_t numel() const { return shape.numel(); }
  /// Row-major contiguous (size-1 dims may have any stride).
  bool is_contiguous() const;
  /// True when this handle is the only owner of its buffer and covers it contiguously
  /// from offset 0, so an op may write its result in place.
  bool can_reuse() const;
  template <class T>
  T* data() const {
    return reinterpret_cast<T*>(storage->data()) + offset;
  }
  void* raw() const {
    return static_cast<char*>(storage->data()) +
           offset * static_cast<std::int64_t>(dtype_size(dtype));
  }
};

}  // namespace ember
