// Internal helpers shared by the reduce kernels (src/cpu/reduce*.cpp): a "line" is the
// 1-d slice of the input along the reduced dim for one output position.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "kernel.hpp"

namespace ember::cpu::rd {

using i64 = std::int64_t;

/// Storage type for a dtype's C++ type (bool as one byte).
template <class T>
using store_t = std::conditional_t<std::is_same_v<T, bool>, std::uint8_t, T>;

template <class T>
inline constexpr bool is_fp =
    std::is_floating_point_v<T> || std::is_same_v<T, f16> || std::is_same_v<T, bf16>;

/// The lines of `x` along `dim`: line j (j in [0, count), in row-major order of the
/// reduced shape) starts at element offset base(j) of x's storage and has `n` elements
/// `stride` apart.
struct Lines {
  i64 count = 0, n = 0, stride = 0, inner = 1, offset = 0;
  bool contiguous = true;
  std::vector<i64> bases;

  i64 base(i64 j) const {
    return contiguous ? offset + (j / inner) * n * inner + j % inner
                      : bases[static_cast<std::size_t>(j)];
  }
  /// Offset of element k of line j in a contiguous tensor of x's shape.
  i64 out_base(i64 j) const { return (j / inner) * n * inner + j % inner; }
};

inline Lines make_lines(const CpuTensor& x, i64 dim) {
  Lines L;
  const auto d = static_cast<std::size_t>(dim);
  L.n = x.shape[d];
  for (std::size_t i = d + 1; i < x.shape.rank(); ++i) L.inner *= x.shape[i];
  Shape reduced = x.shape;
  reduced[d] = 1;
  L.count = reduced.numel();
  L.offset = x.offset;
  if (x.is_contiguous()) {
    L.contiguous = true;
    L.stride = L.inner;
  } else {
    L.contiguous = false;
    L.stride = x.strides[d];
    L.bases.reserve(static_cast<std::size_t>(L.count));
    for_each_offset(reduced, x.strides, x.offset, [&](i64 o) { L.bases.push_back(o); });
  }
  return L;
}

/// Output shape: x's shape with `dim` set to 1.
inline Shape keep_dim(const Shape& s, i64 dim) {
  Shape r = s;
  r[static_cast<std::size_t>(dim)] = 1;
  return r;
}

/// Grain (in lines) so that a chunk has about kParallelGrain elements.
inline i64 line_grain(i64 n) {
  return std::max<i64>(1, kParallelGrain / std::max<i64>(n, 1));
}

/// Runs f(j, const S* line_base, stride, n) for every line j in parallel.
template <class S, class F>
void for_lines(const CpuTensor& x, const Lines& L, F&& f) {
  const S* data = reinterpret_cast<const S*>(x.storage->data());
  parallel_for(L.count, line_grain(L.n), [&](i64 b, i64 e) {
    for (i64 j = b; j < e; ++j) f(j, data + L.base(j), L.stride, L.n);
  });
}

template <class T>
inline bool isnan_v(T v) {
  if constexpr (is_fp<T>)
    return std::isnan(static_cast<double>(static_cast<compute_t<T>>(v)));
  else
    return false;
}

/// Visits every dtype but bool (numeric kernels).
template <class F>
void visit_numeric(DType dt, F&& f) {
  visit_dtype(dt, [&]<class T>() {
    if constexpr (!std::is_same_v<T, bool>) f.template operator()<T>();
  });
}

}  // namespace ember::cpu::rd
