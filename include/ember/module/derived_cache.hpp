// nn::DerivedCache: data a layer computes from its stored tensors before a kernel can use them
// (a quantized weight packed for the integer matmul, its scales checked on the host), kept
// until those tensors are replaced.
//
// An entry is keyed by its type and the value ids (Buffer::value_id) of the Buffers it was
// computed from. set(), loading, to_device and valid() give a Buffer a new value id, so a
// stale entry is never returned; a copy of a module shares the cache with the original (it
// shares the tensors too), and entries of both are kept side by side (a model and its copy
// on another device). At most kCapacity entries are kept, the least recently used dropped.
//
//   std::shared_ptr<DerivedCache> cache = std::make_shared<DerivedCache>();
//   auto packed = cache->get<Packed>({values.value_id()}, [&] { return pack(values.val()); });
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <typeindex>
#include <utility>
#include <vector>

namespace ember::nn {

class DerivedCache {
 public:
  /// The value ids an entry depends on.
  using Key = std::vector<std::uint64_t>;
  static constexpr std::size_t kCapacity = 4;

  /// The T stored under `key`, or make() (a T) stored and returned. Thread-safe. make() runs
  /// outside the lock, so it may use the cache itself (a packed weight built from the checked
  /// one); threads that miss at the same time may each run it, and the first to finish is
  /// kept and returned to all. What make() throws propagates and nothing is stored.
  template <class T, class F>
  std::shared_ptr<const T> get(const Key& key, F&& make) {
    const std::type_index type(typeid(T));
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (auto found = find(type, key)) return std::static_pointer_cast<const T>(found);
    }
    std::shared_ptr<const void> value = std::make_shared<const T>(make());
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto found = find(type, key)) return std::static_pointer_cast<const T>(found);
    entries_.push_front(Entry{type, key, value});
    if (entries_.size() > kCapacity) entries_.pop_back();
    return std::static_pointer_cast<const T>(value);
  }

  /// Entries held (for tests).
  std::size_t size() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return entries_.size();
  }

 private:
  struct Entry {
    std::type_index type;
    Key key;
    std::shared_ptr<const void> value;
  };
  /// The entry's value, moved to the front; null if none. Called with the lock held.
  std::shared_ptr<const void> find(const std::type_index& type, const Key& key) {
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->type == type && it->key == key) {
        entries_.splice(entries_.begin(), entries_, it);
        return entries_.front().value;
      }
    }
    return nullptr;
  }

  mutable std::mutex mutex_;
  std::list<Entry> entries_;  // most recently used first
};

}  // namespace ember::nn
