// The caching memory pool (see pool.hpp).
#include "ember/kernel/pool.hpp"

#include <algorithm>
#include <bit>

namespace ember::kernel {

CachingPool::CachingPool(Driver& driver, Options options) : driver_(driver), opt_(options) {
  if (opt_.alignment == 0 || !std::has_single_bit(opt_.alignment))
    detail::fail<ValueError>("pool", "alignment must be a power of two");
  opt_.small_limit = std::min(opt_.small_limit, opt_.slab_bytes / 2);
}

CachingPool::~CachingPool() {
  try {
    std::lock_guard lock(mu_);
    release_locked();
  } catch (...) {  // a device lost at exit: nothing left to do
  }
}

std::size_t CachingPool::class_size(std::size_t bytes) const {
  const std::size_t a = opt_.alignment;
  if (bytes <= a) return a;
  const std::size_t p = std::bit_floor(bytes);
  const std::size_t steps = bytes <= opt_.small_limit ? 4 : 8;
  const std::size_t step = std::max(p / steps, a);
  return (bytes + step - 1) / step * step;
}

std::optional<std::uint64_t> CachingPool::driver_alloc(std::size_t bytes, const char* op) {
  auto h = driver_.allocate(bytes);
  if (!h) {
    ++stats_.oom_retries;
    release_locked();
    h = driver_.allocate(bytes);
    if (!h)
      detail::fail<OutOfMemoryError>(op, "out of device memory allocating ", bytes,
                                     " bytes (pool holds ", stats_.bytes_reserved, " bytes, ",
                                     stats_.bytes_in_use, " in use)");
  }
  ++stats_.driver_allocs;
  stats_.bytes_reserved += bytes;
  return h;
}

CachingPool::Block CachingPool::allocate(std::size_t bytes, const char* op) {
  if (bytes == 0) detail::fail<ValueError>(op, "allocation of 0 bytes");
  std::lock_guard lock(mu_);
  const std::size_t c = class_size(bytes);
  ++stats_.allocs;
  Block b;
  auto& list = free_[c];
  if (!list.empty()) {
    b = list.back();
    list.pop_back();
    ++stats_.cache_hits;
  } else if (c <= opt_.small_limit) {
    const std::uint64_t h = *driver_alloc(opt_.slab_bytes, op);
    slabs_.emplace(h, Slab{h, c, 0});
    const std::size_t n = opt_.slab_bytes / c;
    auto& l = free_[c];  // driver_alloc may have released: look the list up again
    for (std::size_t s = n; s-- > 1;) l.push_back(Block{h, s * c, c});
    b = Block{h, 0, c};
  } else {
    const std::uint64_t h = *driver_alloc(c, op);
    large_.emplace(h, c);
    b = Block{h, 0, c};
  }
  if (auto it = slabs_.find(b.handle); it != slabs_.end() && it->second.slot_size == b.size)
    ++it->second.used;
  stats_.bytes_in_use += c;
  stats_.peak_bytes_in_use = std::max(stats_.peak_bytes_in_use, stats_.bytes_in_use);
  return b;
}

void CachingPool::free(const Block& b) {
  std::lock_guard lock(mu_);
  free_[b.size].push_back(b);
  stats_.bytes_in_use -= b.size;
  ++stats_.frees;
  if (auto it = slabs_.find(b.handle); it != slabs_.end()) --it->second.used;
}

void CachingPool::release() {
  std::lock_guard lock(mu_);
  release_locked();
}

void CachingPool::release_locked() {
  driver_.wait_idle();
  for (auto& [size, list] : free_) {
    std::erase_if(list, [&](const Block& b) {
      auto it = large_.find(b.handle);
      if (it == large_.end()) return false;
      driver_.free(b.handle, it->second);
      ++stats_.driver_frees;
      stats_.bytes_reserved -= it->second;
      large_.erase(it);
      return true;
    });
  }
  for (auto it = slabs_.begin(); it != slabs_.end();) {
    if (it->second.used != 0) {
      ++it;
      continue;
    }
    const std::uint64_t h = it->first;
    std::erase_if(free_[it->second.slot_size], [&](const Block& b) { return b.handle == h; });
    driver_.free(h, opt_.slab_bytes);
    ++stats_.driver_frees;
    stats_.bytes_reserved -= opt_.slab_bytes;
    it = slabs_.erase(it);
  }
}

MemoryStats CachingPool::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

void CachingPool::reset_peak() {
  std::lock_guard lock(mu_);
  stats_.peak_bytes_in_use = stats_.bytes_in_use;
}

}  // namespace ember::kernel
