// The host fallback's bookkeeping and the broadcast rule of the GPU backends.
#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "ember/gpu/gpu.hpp"

namespace ember::gpu {

namespace {

std::mutex& counts_mutex() {
  static std::mutex m;
  return m;
}
std::map<std::string, std::uint64_t>& counts() {
  static std::map<std::string, std::uint64_t> c;
  return c;
}
bool log_enabled() {
  static const bool on = [] {
    const char* v = std::getenv("EMBER_GPU_FALLBACK_LOG");
    return v && *v && std::string(v) != "0";
  }();
  return on;
}

}  // namespace

void note_fallback(const char* fn) {
  std::lock_guard lock(counts_mutex());
  if (++counts()[fn] == 1 && log_enabled())
    std::fprintf(stderr, "[ember gpu] %s runs on the host (no device kernel yet)\n", fn);
}

std::map<std::string, std::uint64_t> fallback_counts() {
  std::lock_guard lock(counts_mutex());
  return counts();
}

Shape broadcast_shape(const Shape& a, const Shape& b) {
  Shape out = a;
  for (std::size_t d = 0; d < out.dims.size() && d < b.dims.size(); ++d)
    if (out.dims[d] == 1) out.dims[d] = b.dims[d];
  return out;
}

}  // namespace ember::gpu
