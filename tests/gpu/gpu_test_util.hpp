// What the GPU backends' own test files share: typed-test names and input values.
#pragma once

#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

namespace ember::test {

/// Names typed GPU tests by their backend ("GpuTest/cuda.X").
struct GpuNames {
  template <class B>
  static std::string GetName(int) {
    return B::name();
  }
};

/// n values spread over [lo, hi] with a fixed irregular pattern (no generator needed).
inline std::vector<float> spread(std::size_t n, float lo, float hi) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = lo + (hi - lo) * std::fmod(0.618034f * (i + 1), 1.f);
  return v;
}

}  // namespace ember::test
