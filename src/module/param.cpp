// ParamId generation.
#include "ember/module/param.hpp"

#include <atomic>

namespace ember::nn {

ParamId ParamId::next() {
  static std::atomic<std::uint64_t> counter{1};
  return ParamId{counter.fetch_add(1, std::memory_order_relaxed)};
}

}  // namespace ember::nn
