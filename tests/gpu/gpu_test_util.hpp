// What the GPU backends' own test files share: typed-test names, input values, the count of
// calls through the host.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ember/gpu/gpu.hpp"

namespace ember::test {

/// Names typed GPU tests by their backend ("GpuTest/cuda.X").
struct GpuNames {
  template <class B>
  static std::string GetName(int) {
    return B::name();
  }
};

/// Calls through the host so far (every function, ember::gpu::fallback_counts()).
inline std::uint64_t host_calls() {
  std::uint64_t n = 0;
  for (const auto& [k, v] : gpu::fallback_counts()) n += v;
  return n;
}

/// n values spread over [lo, hi] with a fixed irregular pattern (no generator needed).
inline std::vector<float> spread(std::size_t n, float lo, float hi) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = lo + (hi - lo) * std::fmod(0.618034f * (i + 1), 1.f);
  return v;
}

}  // namespace ember::test
