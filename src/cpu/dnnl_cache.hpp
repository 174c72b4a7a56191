// oneDNN helpers shared by the CPU's convolutions (conv_dnnl.cpp) and its quantized conv2d
// (quant_conv.cpp): the one CPU engine, and a bounded cache of primitives keyed by strings.
// Only with EMBER_HAVE_DNNL.
#pragma once

#include <cstddef>
#include <list>
#include <memory>
#include <mutex>
#include <oneapi/dnnl/dnnl.hpp>
#include <string>
#include <unordered_map>
#include <utility>

namespace ember::cpu::dnnl_util {

/// The CPU engine every oneDNN primitive of the backend runs on.
inline dnnl::engine& engine() {
  static dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  return eng;
}

/// A thread-safe cache of at most kMax entries, least recently used out first.
template <class Entry, std::size_t kMax>
class LruCache {
 public:
  std::shared_ptr<Entry> get(const std::string& key) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = map_.find(key);
    if (it == map_.end()) return nullptr;
    order_.splice(order_.begin(), order_, it->second.second);
    return it->second.first;
  }
  void put(const std::string& key, std::shared_ptr<Entry> e) {
    std::lock_guard<std::mutex> lock(mu_);
    if (map_.count(key)) return;
    order_.push_front(key);
    map_.emplace(key, std::make_pair(std::move(e), order_.begin()));
    if (map_.size() > kMax) {
      map_.erase(order_.back());
      order_.pop_back();
    }
  }

 private:
  std::mutex mu_;
  std::list<std::string> order_;
  std::unordered_map<std::string,
                     std::pair<std::shared_ptr<Entry>, std::list<std::string>::iterator>>
      map_;
};

}  // namespace ember::cpu::dnnl_util
