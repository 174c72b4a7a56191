// CPU backend: sorting along a dim (sort_with_indices, topk_with_indices,
// median_dim_with_indices). Each line is gathered into a buffer of (value, index) and
// ordered with a stable sort / partial sort; NaN orders above every number (torch.sort:
// last ascending, first descending).
#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <numeric>
#include <type_traits>
#include <vector>

#include "ember/cpu/ops_reduce.hpp"
#include "reduce_common.hpp"

namespace ember::cpu {

using rd::i64;

namespace {

/// a < b in the order where NaN is the largest value.
template <class C>
inline bool less_nan_last(C a, C b) {
  if constexpr (std::is_floating_point_v<C>) {
    if (b != b) return a == a;
    return a < b;
  } else {
    return a < b;
  }
}

template <class T>
using key_t = compute_t<T>;

/// Gathers line p (stride s, length n) into keys.
template <class T>
void gather(const T* p, i64 s, i64 n, std::vector<key_t<T>>& keys) {
  keys.resize(static_cast<std::size_t>(n));
  for (i64 k = 0; k < n; ++k) keys[k] = static_cast<key_t<T>>(p[k * s]);
}

template <class T>
inline T from_key(key_t<T> v) {
  if constexpr (std::is_same_v<T, f16> || std::is_same_v<T, bf16>)
    return T(v);
  else
    return v;
}

/// Order-preserving unsigned key of a sortable value: NaN (any sign) maps above +inf and
/// -0.0 equals +0.0, so an LSD radix sort matches the comparator order.
template <class C>
inline auto radix_key(C v) {
  if constexpr (std::is_same_v<C, float> || std::is_same_v<C, double>) {
    using U = std::conditional_t<sizeof(C) == 4, std::uint32_t, std::uint64_t>;
    constexpr U sign = U(1) << (sizeof(U) * 8 - 1);
    if (v != v) v = std::numeric_limits<C>::quiet_NaN();
    if (v == 0) v = 0;  // -0.0 -> +0.0
    // __builtin_bit_cast: libc++ 14 (emscripten) has no std::bit_cast.
    U bits = __builtin_bit_cast(U, v);
    return (bits & sign) ? U(~bits) : U(bits | sign);
  } else {
    using U = std::make_unsigned_t<C>;
    return U(static_cast<U>(v) ^ (U(1) << (sizeof(U) * 8 - 1)));
  }
}

template <class C>
inline constexpr bool radix_ok = std::is_same_v<C, float> || std::is_same_v<C, double> ||
                                 std::is_same_v<C, std::int32_t> || std::is_same_v<C, std::int64_t>;

/// Stable LSD radix sort (8 bits a pass) of `order` (initially 0..n-1) by keys; passes
/// whose byte is the same for every key are skipped.
template <class C>
void radix_sort(const std::vector<C>& vals, bool descending, std::vector<i64>& order) {
  using U = decltype(radix_key(C{}));
  const std::size_t n = vals.size();
  thread_local std::vector<U> k1, k2;
  thread_local std::vector<i64> i2;
  k1.resize(n);
  k2.resize(n);
  i2.resize(n);
  order.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const U k = radix_key(vals[i]);
    k1[i] = descending ? U(~k) : k;
    order[i] = static_cast<i64>(i);
  }
  for (unsigned shift = 0; shift < sizeof(U) * 8; shift += 8) {
    std::size_t cnt[256] = {};
    for (std::size_t i = 0; i < n; ++i) ++cnt[(k1[i] >> shift) & 255];
    if (cnt[(k1[0] >> shift) & 255] == n) continue;
    std::size_t off = 0;
    for (auto& c : cnt) {
      const std::size_t t = c;
      c = off;
      off += t;
    }
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t pos = cnt[(k1[i] >> shift) & 255]++;
      k2[pos] = k1[i];
      i2[pos] = order[i];
    }
    std::swap(k1, k2);
    std::swap(order, i2);
  }
}

}  // namespace

ReduceOps::Pair ReduceOps::sort_with_indices(const CpuTensor& x, i64 dim, bool descending) {
  CpuTensor val = alloc(x.shape, x.dtype);
  CpuTensor idx = alloc(x.shape, DType::I64);
  if (x.numel() == 0) return {val, idx};
  rd::visit_numeric(x.dtype, [&]<class T>() {
    const rd::Lines L = rd::make_lines(x, dim);
    T* vo = val.data<T>();
    i64* io = idx.data<i64>();
    rd::for_lines<T>(x, L, [&](i64 j, const T* p, i64 s, i64 n) {
      thread_local std::vector<key_t<T>> keys;
      thread_local std::vector<i64> order;
      gather(p, s, n, keys);
      if constexpr (radix_ok<key_t<T>>) {
        if (n >= 64) {
          radix_sort(keys, descending, order);
          const i64 ob = L.out_base(j), os = L.inner;
          for (i64 k = 0; k < n; ++k) {
            vo[ob + k * os] = from_key<T>(keys[order[k]]);
            io[ob + k * os] = order[k];
          }
          return;
        }
      }
      order.resize(static_cast<std::size_t>(n));
      std::iota(order.begin(), order.end(), i64{0});
      if (descending) {
        std::stable_sort(order.begin(), order.end(),
                         [&](i64 a, i64 b) { return less_nan_last(keys[b], keys[a]); });
      } else {
        std::stable_sort(order.begin(), order.end(),
                         [&](i64 a, i64 b) { return less_nan_last(keys[a], keys[b]); });
      }
      const i64 ob = L.out_base(j), os = L.inner;
      for (i64 k = 0; k < n; ++k) {
        vo[ob + k * os] = from_key<T>(keys[order[k]]);
        io[ob + k * os] = order[k];
      }
    });
  });
  return {val, idx};
}

ReduceOps::Pair ReduceOps::topk_with_indices(const CpuTensor& x, i64 k, i64 dim) {
  Shape os = x.shape;
  os[static_cast<std::size_t>(dim)] = k;
  CpuTensor val = alloc(os, x.dtype);
  CpuTensor idx = alloc(os, DType::I64);
  if (val.numel() == 0) return {val, idx};
  rd::visit_numeric(x.dtype, [&]<class T>() {
    const rd::Lines L = rd::make_lines(x, dim);
    T* vo = val.data<T>();
    i64* io = idx.data<i64>();
    rd::for_lines<T>(x, L, [&](i64 j, const T* p, i64 s, i64 n) {
      thread_local std::vector<key_t<T>> keys;
      thread_local std::vector<i64> order;
      gather(p, s, n, keys);
      order.resize(static_cast<std::size_t>(n));
      std::iota(order.begin(), order.end(), i64{0});
      // descending, ties by lower index (a total order, so partial_sort is deterministic)
      auto greater = [&](i64 a, i64 b) {
        if (less_nan_last(keys[b], keys[a])) return true;
        if (less_nan_last(keys[a], keys[b])) return false;
        return a < b;
      };
      std::partial_sort(order.begin(), order.begin() + k, order.end(), greater);
      const i64 ob = (j / L.inner) * k * L.inner + j % L.inner, ostr = L.inner;
      for (i64 r = 0; r < k; ++r) {
        vo[ob + r * ostr] = from_key<T>(keys[order[r]]);
        io[ob + r * ostr] = order[r];
      }
    });
  });
  return {val, idx};
}

ReduceOps::Pair ReduceOps::median_dim_with_indices(const CpuTensor& x, i64 dim) {
  CpuTensor val = alloc(rd::keep_dim(x.shape, dim), x.dtype);
  CpuTensor idx = alloc(val.shape, DType::I64);
  rd::visit_numeric(x.dtype, [&]<class T>() {
    const rd::Lines L = rd::make_lines(x, dim);
    T* vo = val.data<T>();
    i64* io = idx.data<i64>();
    rd::for_lines<T>(x, L, [&](i64 j, const T* p, i64 s, i64 n) {
      thread_local std::vector<key_t<T>> keys;
      thread_local std::vector<i64> order;
      gather(p, s, n, keys);
      for (i64 k = 0; k < n; ++k) {
        if (rd::isnan_v(p[k * s])) {  // NaN propagates (torch.median)
          vo[j] = p[k * s];
          io[j] = k;
          return;
        }
      }
      order.resize(static_cast<std::size_t>(n));
      std::iota(order.begin(), order.end(), i64{0});
      const i64 m = (n - 1) / 2;  // lower median
      auto less = [&](i64 a, i64 b) { return keys[a] < keys[b] || (keys[a] == keys[b] && a < b); };
      std::nth_element(order.begin(), order.begin() + m, order.end(), less);
      vo[j] = from_key<T>(keys[order[m]]);
      io[j] = order[m];
    });
  });
  return {val, idx};
}

}  // namespace ember::cpu
