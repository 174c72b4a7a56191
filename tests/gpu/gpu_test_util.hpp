// What the GPU backends' own test files share: typed-test names, input values, the count of
// calls through the host.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
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

/// The values of `d` as f64 (any dtype), for comparisons with tolerances.
inline std::vector<double> values(const TensorData& d) {
  return d.convert(DType::F64).to_vec<double>();
}

/// The tolerance of a device kernel's sums against the CPU backend's in dtype `dt`: f32 sums
/// of up to a few thousand products of values below 2 in another order (with FMA
/// contraction); f16/bf16 one rounding of the f32 result on each side (11 and 8 significant
/// bits); f64 the summation order.
inline Tolerance sum_tolerance(DType dt) {
  switch (dt) {
    case DType::F16:
      return Tolerance::rel_abs(1e-2, 1e-2);
    case DType::BF16:
      return Tolerance::rel_abs(2e-2, 5e-2);
    case DType::F64:
      return Tolerance::rel_abs(1e-12, 1e-12);
    default:
      return Tolerance::rel_abs(1e-4, 1e-4);
  }
}

/// The bit pattern of each element of `d` (any dtype), for bit-for-bit comparisons.
inline std::vector<std::uint64_t> bits_of(const TensorData& d) {
  std::vector<std::uint64_t> out;
  const std::vector<std::uint8_t>& bytes = d.bytes();
  const std::size_t w = dtype_size(d.dtype());
  for (std::size_t i = 0; i + w <= bytes.size(); i += w) {
    std::uint64_t b = 0;
    for (std::size_t k = 0; k < w; ++k) b |= static_cast<std::uint64_t>(bytes[i + k]) << (8 * k);
    out.push_back(b);
  }
  return out;
}

/// n values spread over [lo, hi] with a fixed irregular pattern (no generator needed).
inline std::vector<float> spread(std::size_t n, float lo, float hi) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = lo + (hi - lo) * std::fmod(0.618034f * (i + 1), 1.f);
  return v;
}

/// Sets an environment variable for the scope (restores the old value after).
class EnvGuard {
 public:
  EnvGuard(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value)
      ::setenv(name, value, 1);
    else
      ::unsetenv(name);
  }
  ~EnvGuard() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }
  EnvGuard(const EnvGuard&) = delete;
  EnvGuard& operator=(const EnvGuard&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace ember::test
