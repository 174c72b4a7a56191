// Fusion's switches, counters and log (ember/fusion/fusion.hpp).
#include "ember/fusion/fusion.hpp"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <string>

namespace ember::fusion {

namespace {

bool env_flag(const char* name, bool fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  return std::strcmp(v, "0") != 0;
}

// -1: follow EMBER_FUSION; 0/1: set_enabled.
std::atomic<int> g_enabled{-1};
std::atomic<std::uint64_t> g_blocks{0}, g_fused_ops{0}, g_replayed_ops{0};

}  // namespace

bool enabled() {
  const int e = g_enabled.load(std::memory_order_relaxed);
  if (e >= 0) return e != 0;
  static const bool from_env = env_flag("EMBER_FUSION", true);
  return from_env;
}

void set_enabled(bool on) {
  g_enabled.store(on ? 1 : 0, std::memory_order_relaxed);
}

Stats stats() {
  return {g_blocks.load(), g_fused_ops.load(), g_replayed_ops.load()};
}

void reset_stats() {
  g_blocks = 0;
  g_fused_ops = 0;
  g_replayed_ops = 0;
}

void note_block(const ir::FusedBlock& block) {
  g_blocks.fetch_add(1, std::memory_order_relaxed);
  g_fused_ops.fetch_add(block.steps.size(), std::memory_order_relaxed);
  static const bool log = env_flag("EMBER_FUSION_LOG", false);
  if (!log) return;
  // The pattern: the block without its sizes and scalars (the same chain on other shapes or
  // constants is the same kernel).
  std::string key = std::string(dtype_name(block.dtype)) + ' ' +
                    std::to_string(block.shape.rank()) + ' ' + std::to_string(block.inputs);
  for (const ir::FusedStep& s : block.steps)
    key += ' ' + std::to_string(static_cast<int>(s.kind)) + ':' + std::to_string(s.row) + ':' +
           std::to_string(s.a) + ':' + std::to_string(s.b);
  for (std::uint32_t o : block.outputs) key += " o" + std::to_string(o);
  static std::mutex mu;
  static std::set<std::string> seen;
  std::lock_guard<std::mutex> lock(mu);
  if (!seen.insert(key).second) return;
  std::fprintf(stderr, "[ember fusion] %zu ops, %u inputs, %zu outputs: %s\n", block.steps.size(),
               block.inputs, block.outputs.size(), block.describe().c_str());
}

void note_replayed(std::uint64_t ops) {
  g_replayed_ops.fetch_add(ops, std::memory_order_relaxed);
}

}  // namespace ember::fusion
