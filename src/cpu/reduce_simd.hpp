// Internal: SIMD row/column kernels for the reduce family, compiled for several ISAs
// (AVX-512, AVX2+FMA, baseline x86-64) and picked at run time with
// __builtin_cpu_supports. The bodies are plain loops over independent accumulator
// lanes that GCC vectorises for the target of the wrapper they are inlined into.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include "kernel.hpp"

namespace ember::cpu::rd {

#define EMBER_RD_INLINE inline __attribute__((always_inline))

/// Lane accumulator: the element type for floats, int64 for ints.
template <class S>
using lane_t = std::conditional_t<std::is_integral_v<S>, std::int64_t, S>;
/// Total accumulator: double for floats, int64 for ints.
template <class S>
using total_t = std::conditional_t<std::is_integral_v<S>, std::int64_t, double>;

/// Types with SIMD kernels.
template <class S>
inline constexpr bool simd_type =
    std::is_same_v<S, float> || std::is_same_v<S, double> || std::is_same_v<S, std::int32_t> ||
    std::is_same_v<S, std::int64_t>;

inline constexpr std::int64_t kSumBlock = 8192;  // elements summed in lanes before the total
inline constexpr std::int64_t kColChunk = 2048;  // kept columns processed together
// Rows of a column summed in the lane type before the total: 256 equal f32 terms drift by
// ~1e-5 at most (2048 drifted by 3e-5 over a column of 4M).
inline constexpr std::int64_t kColBlock = 256;

/// Sum of x[0, n): blocks of kSumBlock summed in W independent lanes, lanes combined
/// pairwise, block totals accumulated in double (int64 for ints).
template <class S>
EMBER_RD_INLINE total_t<S> row_sum_impl(const S* x, std::int64_t n) {
  using A = lane_t<S>;
  constexpr int W = 512 / static_cast<int>(sizeof(A));
  total_t<S> total = 0;
  for (std::int64_t b = 0; b < n; b += kSumBlock) {
    const std::int64_t m = std::min(kSumBlock, n - b);
    const S* p = x + b;
    A acc[W] = {};
    std::int64_t i = 0;
    for (; i + W <= m; i += W)
      for (int j = 0; j < W; ++j) acc[j] += static_cast<A>(p[i + j]);
    for (int w = W / 2; w >= 1; w /= 2)
      for (int j = 0; j < w; ++j) acc[j] += acc[j + w];
    A t = acc[0];
    for (; i < m; ++i) t += static_cast<A>(p[i]);
    total += static_cast<total_t<S>>(t);
  }
  return total;
}

/// out[i] = sum_k x[k * ld + i] for i < cols (cols <= kColChunk), k < n: vectorised
/// across the kept columns; rows summed in lanes in blocks of kColChunk, then in double.
template <class S>
EMBER_RD_INLINE void col_sum_impl(const S* x, std::int64_t n, std::int64_t ld, std::int64_t cols,
                                  total_t<S>* out) {
  using A = lane_t<S>;
  A acc[kColChunk];
  total_t<S> tot[kColChunk];
  for (std::int64_t i = 0; i < cols; ++i) tot[i] = 0;
  for (std::int64_t kb = 0; kb < n; kb += kColBlock) {
    const std::int64_t ke = std::min(n, kb + kColBlock);
    for (std::int64_t i = 0; i < cols; ++i) acc[i] = 0;
    for (std::int64_t k = kb; k < ke; ++k) {
      const S* r = x + k * ld;
      for (std::int64_t i = 0; i < cols; ++i) acc[i] += static_cast<A>(r[i]);
    }
    for (std::int64_t i = 0; i < cols; ++i) tot[i] += static_cast<total_t<S>>(acc[i]);
  }
  for (std::int64_t i = 0; i < cols; ++i) out[i] = tot[i];
}

/// v beats a for max (Max) / min; NaN beats everything (NaN propagates).
template <bool Max, class S>
EMBER_RD_INLINE bool beats(S v, S a) {
  if constexpr (std::is_integral_v<S>)
    return Max ? v > a : v < a;
  else
    return (Max ? v > a : v < a) || v != v;
}

/// Max (M::value) or min of x[0, n), n >= 1, NaN propagating.
template <class M, class S>
EMBER_RD_INLINE S row_ext_impl(const S* x, std::int64_t n) {
  constexpr int W = 128 / static_cast<int>(sizeof(S));
  S best;
  std::int64_t i = 0;
  if (n >= 2 * W) {
    S acc[W];
    for (int j = 0; j < W; ++j) acc[j] = x[j];
    for (i = W; i + W <= n; i += W)
      for (int j = 0; j < W; ++j) {
        const S v = x[i + j];
        acc[j] = beats<M::value>(v, acc[j]) ? v : acc[j];
      }
    best = acc[0];
    for (int j = 1; j < W; ++j) best = beats<M::value>(acc[j], best) ? acc[j] : best;
  } else {
    best = x[0];
    i = 1;
  }
  for (; i < n; ++i) best = beats<M::value>(x[i], best) ? x[i] : best;
  return best;
}

/// out[i] = max_k x[k * ld + i] (or min), i < cols, n >= 1.
template <class M, class S>
EMBER_RD_INLINE void col_ext_impl(const S* x, std::int64_t n, std::int64_t ld, std::int64_t cols,
                                  S* out) {
  for (std::int64_t i = 0; i < cols; ++i) out[i] = x[i];
  for (std::int64_t k = 1; k < n; ++k) {
    const S* r = x + k * ld;
    for (std::int64_t i = 0; i < cols; ++i) {
      const S v = r[i];
      out[i] = beats<M::value>(v, out[i]) ? v : out[i];
    }
  }
}

/// Index and value of the first max (Max) / min along columns: like col_ext_impl but
/// also records the row of the first winner (ties keep the lowest row; the first NaN wins).
template <class M, class S>
EMBER_RD_INLINE void col_arg_impl(const S* x, std::int64_t n, std::int64_t ld, std::int64_t cols,
                                  S* val, std::int64_t* idx) {
  for (std::int64_t i = 0; i < cols; ++i) {
    val[i] = x[i];
    idx[i] = 0;
  }
  for (std::int64_t k = 1; k < n; ++k) {
    const S* r = x + k * ld;
    for (std::int64_t i = 0; i < cols; ++i) {
      const S v = r[i];
      bool take;
      if constexpr (std::is_integral_v<S>)
        take = M::value ? v > val[i] : v < val[i];
      else
        take = (M::value ? v > val[i] : v < val[i]) || (v != v && val[i] == val[i]);
      val[i] = take ? v : val[i];
      idx[i] = take ? k : idx[i];
    }
  }
}

/// v strictly beats a for argmax (M::value) / argmin: greater (smaller), or the first NaN.
template <class M, class S>
EMBER_RD_INLINE bool beats_first(S v, S a) {
  if constexpr (std::is_integral_v<S>)
    return M::value ? v > a : v < a;
  else
    return (M::value ? v > a : v < a) || (v != v && a == a);
}

/// Index of the first max (M::value) / min of x[0, n), n >= 1; a NaN counts as the max/min.
/// One pass: W lanes keep (best value, its index), then the lanes are merged preferring
/// the lowest index among equal values.
template <class M, class S>
EMBER_RD_INLINE std::int64_t row_arg_impl(const S* x, std::int64_t n) {
  using I = std::conditional_t<sizeof(S) == 4, std::int32_t, std::int64_t>;
  constexpr int W = 128 / static_cast<int>(sizeof(S));
  S best = x[0];
  std::int64_t bi = 0, i = 1;
  if (n >= 2 * W && n < (std::int64_t{1} << 31)) {
    S acc[W];
    I ai[W];
    for (int j = 0; j < W; ++j) {
      acc[j] = x[j];
      ai[j] = static_cast<I>(j);
    }
    for (i = W; i + W <= n; i += W)
      for (int j = 0; j < W; ++j) {
        const S v = x[i + j];
        const bool take = beats_first<M>(v, acc[j]);
        acc[j] = take ? v : acc[j];
        ai[j] = take ? static_cast<I>(i + j) : ai[j];
      }
    best = acc[0];
    bi = ai[0];
    for (int j = 1; j < W; ++j) {
      const bool same = acc[j] == best || (acc[j] != acc[j] && best != best);
      if (beats_first<M>(acc[j], best) || (same && ai[j] < bi)) {
        best = acc[j];
        bi = ai[j];
      }
    }
  }
  for (; i < n; ++i) {
    if (beats_first<M>(x[i], best)) {
      best = x[i];
      bi = i;
    }
  }
  return bi;
}

#if EMBER_CPU_X86
#define EMBER_RD_TARGET_512 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx2,fma")))
#define EMBER_RD_TARGET_256 __attribute__((target("avx2,fma")))

/// Defines name(args...) dispatching to copies of impl compiled per ISA.
#define EMBER_RD_MULTIVERSION(name, impl)             \
  template <class... Tp, class... Args>               \
  EMBER_RD_TARGET_512 auto name##_avx512(Args... a) { \
    return impl<Tp...>(a...);                         \
  }                                                   \
  template <class... Tp, class... Args>               \
  EMBER_RD_TARGET_256 auto name##_avx2(Args... a) {   \
    return impl<Tp...>(a...);                         \
  }                                                   \
  template <class... Tp, class... Args>               \
  auto name##_base(Args... a) {                       \
    return impl<Tp...>(a...);                         \
  }                                                   \
  template <class... Tp, class... Args>               \
  auto name(Args... a) {                              \
    switch (cpu_isa()) {                              \
      case Isa::Avx512:                               \
        return name##_avx512<Tp...>(a...);            \
      case Isa::Avx2:                                 \
        return name##_avx2<Tp...>(a...);              \
      default:                                        \
        return name##_base<Tp...>(a...);              \
    }                                                 \
  }
#else
/// One variant off x86 (SIMD from the compiler flags).
#define EMBER_RD_MULTIVERSION(name, impl) \
  template <class... Tp, class... Args>   \
  auto name(Args... a) {                  \
    return impl<Tp...>(a...);             \
  }
#endif

}  // namespace ember::cpu::rd
