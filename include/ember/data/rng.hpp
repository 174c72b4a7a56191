// Seeded random numbers for the data pipeline: shuffles, splits, samplers and augmentations.
//
// Everything random in ember::data is derived from a user seed with `mix`, so results are
// the same on every platform and standard library (std::shuffle and the std distributions
// are implementation-defined) and do not depend on the number of loader workers: the
// permutation of epoch e is seeded with mix(seed, e), the augmentation of item i in epoch e
// with mix(mix(seed, e), i).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <numeric>
#include <vector>

namespace ember::data {

/// The splitmix64 finaliser (Steele, Lea, Flood 2014): a bijection of 64-bit words with good
/// avalanche, used to turn counters into independent-looking values.
constexpr std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

/// Combines a seed with a counter (epoch, item index, block number) into a new seed.
/// Different counters give unrelated streams; the same pair always gives the same seed.
constexpr std::uint64_t mix(std::uint64_t seed, std::uint64_t counter) {
  return splitmix64(seed ^ splitmix64(counter + 0x632BE59BD9B4E019ULL));
}

/// A small, fast generator (splitmix64 sequence: state advances by the golden-ratio
/// increment, output is the finaliser). Satisfies std::uniform_random_bit_generator.
class Rng {
 public:
  using result_type = std::uint64_t;

  explicit Rng(std::uint64_t seed = 0) : state_(seed) {}

  static constexpr result_type min() { return 0; }
  static constexpr result_type max() { return std::numeric_limits<result_type>::max(); }

  /// The next 64 random bits.
  result_type operator()() {
    state_ += 0x9E3779B97F4A7C15ULL;
    std::uint64_t z = state_;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }

  /// A uniform integer in [0, n) without modulo bias (Lemire 2019, "Fast random integer
  /// generation in an interval"). Returns 0 when n is 0.
  std::uint64_t below(std::uint64_t n) {
    if (n == 0) return 0;
    unsigned __int128 m = static_cast<unsigned __int128>((*this)()) * n;
    auto low = static_cast<std::uint64_t>(m);
    if (low < n) {
      const std::uint64_t threshold = (0 - n) % n;
      while (low < threshold) {
        m = static_cast<unsigned __int128>((*this)()) * n;
        low = static_cast<std::uint64_t>(m);
      }
    }
    return static_cast<std::uint64_t>(m >> 64);
  }

  /// A uniform double in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>((*this)() >> 11) * 0x1.0p-53; }

  /// True with probability p (p <= 0: never, p >= 1: always).
  bool bernoulli(double p) { return uniform() < p; }

 private:
  std::uint64_t state_;
};

/// Shuffles `values` in place (Fisher-Yates, drawing from `rng`).
template <class T>
void shuffle(std::vector<T>& values, Rng& rng) {
  for (std::size_t i = values.size(); i > 1; --i) {
    const auto j = static_cast<std::size_t>(rng.below(i));
    std::swap(values[i - 1], values[j]);
  }
}

/// A random permutation of 0..n-1 determined by `seed`.
inline std::vector<std::size_t> permutation(std::size_t n, std::uint64_t seed) {
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  Rng rng(seed);
  shuffle(order, rng);
  return order;
}

}  // namespace ember::data
