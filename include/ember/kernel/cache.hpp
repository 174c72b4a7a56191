// Compiled-kernel caches shared by the GPU runtimes: a bounded in-memory LRU map and a
// bounded on-disk store.
//
// The disk cache lives in $EMBER_CACHE_DIR, else $XDG_CACHE_HOME/ember, else ~/.cache/ember,
// under kernels/<target>/; EMBER_KERNEL_CACHE=0 turns it off; it keeps at most
// EMBER_KERNEL_CACHE_MB megabytes (default 256), dropping the least recently used files.
// Keys are hashes of everything the compiled code depends on (source, compiler and driver
// versions, device); files are written atomically, so concurrent processes are safe.
#pragma once

#include <cstdint>
#include <filesystem>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

namespace ember::kernel {

/// The cache folder (see above), or an empty path when caching on disk is off.
std::filesystem::path cache_dir();

class DiskCache {
 public:
  /// `target`: the sub-folder ("cuda", "vulkan"); `max_bytes`: 0 for the environment default.
  explicit DiskCache(const std::string& target, std::uint64_t max_bytes = 0);
  bool enabled() const { return !dir_.empty(); }
  /// The bytes stored under `key` (a hex hash), or nullopt.
  std::optional<std::string> get(const std::string& key) const;
  /// Stores bytes under key (atomically), then evicts the oldest files beyond the bound.
  /// Failures (read-only disk, full disk) are ignored: the cache is an optimisation.
  void put(const std::string& key, const std::string& bytes) const;
  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path dir_;
  std::uint64_t max_bytes_;
};

/// "%016llx%016llx" of two 64-bit hashes of s: the disk cache key.
std::string cache_key(const std::string& s);

/// A map with at most `capacity` entries; the least recently used one goes first.
template <class V>
class LruCache {
 public:
  explicit LruCache(std::size_t capacity) : cap_(capacity) {}
  std::optional<V> get(const std::string& key) {
    std::lock_guard lock(mu_);
    auto it = map_.find(key);
    if (it == map_.end()) return std::nullopt;
    order_.splice(order_.begin(), order_, it->second.second);
    return it->second.first;
  }
  void put(const std::string& key, V value) {
    std::lock_guard lock(mu_);
    auto it = map_.find(key);
    if (it != map_.end()) {
      it->second.first = std::move(value);
      order_.splice(order_.begin(), order_, it->second.second);
      return;
    }
    order_.push_front(key);
    map_.emplace(key, std::make_pair(std::move(value), order_.begin()));
    while (map_.size() > cap_) {
      map_.erase(order_.back());
      order_.pop_back();
    }
  }
  std::size_t size() const {
    std::lock_guard lock(mu_);
    return map_.size();
  }

 private:
  std::size_t cap_;
  mutable std::mutex mu_;
  std::list<std::string> order_;
  std::unordered_map<std::string, std::pair<V, std::list<std::string>::iterator>> map_;
};

}  // namespace ember::kernel
