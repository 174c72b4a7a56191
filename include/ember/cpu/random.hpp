// The CPU backend's counter-based random generator, shared with the GPU backends so that a
// seed gives the same values on every device (docs/gpu.md).
//
// Value i of a float_random call of n values is drawn from the counters base + 2i and
// base + 2i + 1: u(c) = (mix64(seed ^ mix64(c + 0x9e3779b97f4a7c15)) >> 11) * 2^-53 in [0, 1),
// where mix64 is splitmix64's finaliser (Steele, Lea and Flood, "Fast splittable pseudorandom
// number generators", OOPSLA 2014). Uniform: low + (high - low) * u(c); Bernoulli: u(c) < p;
// normal: Box-Muller with 1 - u(c) and u(c + 1).
#pragma once

#include <cstdint>

namespace ember::cpu {

struct RandomStream {
  std::uint64_t seed = 0;  ///< the mixed seed (after Cpu::seed)
  std::uint64_t base = 0;  ///< the first counter of the call
};

/// Reserves the counters of `n` values (2n counters) and returns where they start; the next
/// call, on any backend, continues after them.
RandomStream reserve_random(std::int64_t n);

}  // namespace ember::cpu
