// Launch arguments, grids and the "info" words that carry scalars and buffer metadata.
//
// Info layout (32-bit words, in argument order): a scalar takes one word (f16/bf16 as f32
// bits, bool/u8 zero-extended) or two for 64-bit types (low word first); a buffer of rank r
// takes 1 + 2r words: its length in elements, its shape, its strides (elements). CUDA passes
// them as a by-value kernel parameter, Vulkan in a storage buffer, the CPU target as an
// array. Kernels index with u32: a buffer is limited to 2^32 - 1 elements.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <vector>

#include "ember/kernel/ir.hpp"
#include "ember/kernel/pool.hpp"

namespace ember::kernel {

class ComputeDevice;

/// Device memory. Freed back to the device's pool when the last handle goes.
class BufferStorage {
 public:
  BufferStorage(ComputeDevice* d, CachingPool::Block b, std::size_t bytes)
      : device_(d), block_(b), bytes_(bytes) {}
  ~BufferStorage();
  BufferStorage(const BufferStorage&) = delete;
  BufferStorage& operator=(const BufferStorage&) = delete;
  ComputeDevice& device() const { return *device_; }
  const CachingPool::Block& block() const { return block_; }
  std::size_t bytes() const { return bytes_; }

 private:
  ComputeDevice* device_;
  CachingPool::Block block_;
  std::size_t bytes_;
};
using Buffer = std::shared_ptr<BufferStorage>;

inline constexpr std::uint32_t kMaxRank = 8;

/// One launch argument: a buffer with the shape the kernel sees, or a scalar.
struct Arg {
  enum class Kind : std::uint8_t { Buffer, Scalar } kind = Kind::Scalar;
  // buffer
  const BufferStorage* buffer = nullptr;
  std::uint64_t offset = 0;  // elements from the start of the buffer
  std::uint64_t len = 0;     // elements the kernel may address (0: to the end)
  std::uint32_t rank = 0;    // 0: [len] with stride 1
  std::array<std::uint32_t, kMaxRank> shape{}, strides{};
  // scalar
  Elem elem = Elem::F32;
  std::uint64_t bits = 0;  // the register value's bits (f16/bf16: f32 bits)

  /// The whole buffer as a rank-1 tensor.
  static Arg buf(const Buffer& b, std::uint64_t offset = 0, std::uint64_t len = 0);
  /// A strided view: shape and strides in elements (strides default to contiguous).
  static Arg view(const Buffer& b, std::initializer_list<std::uint32_t> shape,
                  std::initializer_list<std::uint32_t> strides = {}, std::uint64_t offset = 0);
  static Arg view(const Buffer& b, const std::vector<std::uint32_t>& shape,
                  const std::vector<std::uint32_t>& strides = {}, std::uint64_t offset = 0);
  /// A scalar of element type e holding v (rounded to the type).
  static Arg scalar(Elem e, double v);
  static Arg f32(float v) { return scalar(Elem::F32, v); }
  static Arg u32(std::uint32_t v) { return scalar(Elem::U32, v); }
  static Arg i32(std::int32_t v) { return scalar(Elem::I32, v); }
  static Arg i64(std::int64_t v);
  static Arg f64(double v) { return scalar(Elem::F64, v); }
};

/// Workgroups per dimension.
struct Grid {
  std::uint32_t x = 1, y = 1, z = 1;
  std::uint64_t count() const { return std::uint64_t{x} * y * z; }
};

/// The smallest grid of workgroups of `kernel` that holds `threads` threads, laid out in x
/// (up to `max_x` workgroups), then y.
Grid grid_for(const Kernel& kernel, std::uint64_t threads, std::uint32_t max_x = 65535);
/// True when the grid has exactly `threads` threads (so IfInBounds on absolute_pos() against
/// a length of `threads` can be removed, see assume_in_bounds).
bool covers_exactly(const Kernel& kernel, Grid grid, std::uint64_t threads);

/// Where each argument's words start in the info array.
struct InfoLayout {
  std::vector<std::uint32_t> offset;  // per argument
  std::uint32_t words = 0;
  explicit InfoLayout(const Kernel& k);
  InfoLayout() = default;
};
inline constexpr std::uint32_t kMaxInfoWords = 512;

/// Checks `args` against the kernel's signature and writes the info words. Throws
/// ValueError / DTypeError / DeviceError / UnsupportedError "[launch <kernel>] ...".
void pack_info(const Kernel& k, const InfoLayout& layout, const ComputeDevice& device, Grid grid,
               const Arg* args, std::size_t nargs, std::uint32_t* words);

/// The vector width (lanes) for element-wise access of a contiguous run of `n` elements of
/// `e` starting at element `offset`: the widest of 8, 4, 2, 1 with at most 16 bytes per
/// access that divides n and the offset and fits `max_lanes`.
int choose_lanes(Elem e, std::uint64_t n, std::uint64_t offset = 0, int max_lanes = 8);

}  // namespace ember::kernel
