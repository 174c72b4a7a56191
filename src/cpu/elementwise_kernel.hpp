// Internal: the strided/broadcast iterator and vectorised row loops of the element-wise
// kernels (not installed).
//
// A kernel maps N inputs (any strides, stride 0 on broadcast dims, any offset) to one
// contiguous output. The iteration plan drops size-1 dims and merges dims that are
// contiguous for every operand, then walks the output in rows of the innermost dim; the
// row loops are specialised for unit-stride / broadcast-scalar operands and compiled three
// times (baseline, AVX2+FMA, AVX-512) with `__attribute__((target))`, picked at run time
// with `__builtin_cpu_supports`. The element functions are the rows of ember/ir/elementwise.hpp.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>
#include <vector>

#include "ember/ir/elementwise.hpp"
#include "kernel.hpp"

namespace ember::cpu::ew {

/// 0: baseline, 1: AVX2+FMA, 2: AVX-512 (F, DQ, BW, VL).
int simd_level();

/// Storage type for a dtype's C++ type (bool is one byte).
template <class T>
using storage_t = std::conditional_t<std::is_same_v<T, bool>, std::uint8_t, T>;

template <class T>
inline constexpr bool kSimdType = std::is_same_v<T, float> || std::is_same_v<T, double>;

// ---- iteration plan ------------------------------------------------------------------------

template <std::size_t N>
struct Plan {
  std::vector<std::int64_t> shape;                   // collapsed output dims (rank >= 1)
  std::array<std::vector<std::int64_t>, N> strides;  // per input, aligned with shape
  std::array<std::int64_t, N> offsets{};
};

/// The iteration dims of `out` over n operands (`operand(k)`: operand k's CpuTensor): size-1
/// dims dropped, dims merged where every operand is contiguous across them (at least one dim).
/// `strides[k]` (a vector per operand, empty on entry) gets operand k's strides, 0 on its
/// broadcast dims.
template <class Strides, class Operand>
std::vector<std::int64_t> collapse_dims(const Shape& out, std::size_t n, Operand&& operand,
                                        Strides& strides) {
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> st(n);
  for (std::size_t d = 0; d < out.rank(); ++d) {
    if (out[d] == 1) continue;
    for (std::size_t k = 0; k < n; ++k) {
      const CpuTensor& t = operand(k);
      st[k] = t.shape[d] == 1 ? 0 : t.strides[d];
    }
    bool merge = !shape.empty();
    for (std::size_t k = 0; k < n && merge; ++k) merge = strides[k].back() == st[k] * out[d];
    if (merge) {
      shape.back() *= out[d];
      for (std::size_t k = 0; k < n; ++k) strides[k].back() = st[k];
    } else {
      shape.push_back(out[d]);
      for (std::size_t k = 0; k < n; ++k) strides[k].push_back(st[k]);
    }
  }
  if (shape.empty()) {
    shape.push_back(1);
    for (std::size_t k = 0; k < n; ++k) strides[k].push_back(1);
  }
  return shape;
}

template <std::size_t N>
Plan<N> make_plan(const Shape& out, const std::array<const CpuTensor*, N>& ins) {
  Plan<N> p;
  for (std::size_t k = 0; k < N; ++k) p.offsets[k] = ins[k]->offset;
  p.shape = collapse_dims(
      out, N, [&](std::size_t k) -> const CpuTensor& { return *ins[k]; }, p.strides);
  return p;
}

/// Calls row(out_index, len, in_offsets, in_inner_strides) over every row segment of the
/// output, in parallel chunks of the flat output range.
template <std::size_t N, class Row>
void for_each_row(const Plan<N>& p, std::int64_t numel, std::int64_t grain, Row&& row) {
  const std::size_t r = p.shape.size();
  const std::int64_t inner = p.shape[r - 1];
  std::array<std::int64_t, N> inner_st;
  for (std::size_t k = 0; k < N; ++k) inner_st[k] = p.strides[k][r - 1];
  parallel_for(numel, grain, [&](std::int64_t b, std::int64_t e) {
    // multi-index of b
    std::vector<std::int64_t> idx(r, 0);
    std::int64_t rem = b;
    for (std::size_t d = r; d-- > 0;) {
      idx[d] = rem % p.shape[d];
      rem /= p.shape[d];
    }
    std::array<std::int64_t, N> off = p.offsets;
    for (std::size_t k = 0; k < N; ++k)
      for (std::size_t d = 0; d < r; ++d) off[k] += idx[d] * p.strides[k][d];
    std::int64_t pos = b;
    while (pos < e) {
      const std::int64_t len = std::min(inner - idx[r - 1], e - pos);
      row(pos, len, off, inner_st);
      pos += len;
      if (pos >= e) break;
      // advance to the start of the next row
      for (std::size_t k = 0; k < N; ++k) off[k] += (inner - idx[r - 1]) * inner_st[k];
      idx[r - 1] = 0;
      for (std::size_t k = 0; k < N; ++k) off[k] -= inner * inner_st[k];
      std::size_t d = r - 1;
      while (d-- > 0) {
        ++idx[d];
        for (std::size_t k = 0; k < N; ++k) off[k] += p.strides[k][d];
        if (idx[d] < p.shape[d]) break;
        for (std::size_t k = 0; k < N; ++k) off[k] -= idx[d] * p.strides[k][d];
        idx[d] = 0;
      }
    }
  });
}

// ---- row loops -------------------------------------------------------------------------------
// I: stored input type, O: stored output type, C: compute type; F: C -> C/bool.

template <class C, class I>
EMBER_SCALAR_INLINE C load(I v) {
  return static_cast<C>(v);
}
template <class O, class R>
EMBER_SCALAR_INLINE O store(R v) {
  if constexpr (std::is_same_v<O, f16> || std::is_same_v<O, bf16>)
    return O(static_cast<float>(v));
  else
    return static_cast<O>(v);
}

#define EMBER_EW_UNARY_LOOP \
  _Pragma("omp simd") for (std::int64_t i = 0; i < n; ++i) o[i] = store<O>(f(load<C>(a[i * SA])));
#define EMBER_EW_BINARY_LOOP                                      \
  _Pragma("omp simd") for (std::int64_t i = 0; i < n; ++i) o[i] = \
      store<O>(f(load<C>(a[i * SA]), load<C>(b[i * SB])));

template <class I, class O, class C, int SA, class F>
void unary_loop(const I* a, O* o, std::int64_t n, F f) {
  EMBER_EW_UNARY_LOOP
}
#if EMBER_CPU_X86
template <class I, class O, class C, int SA, class F>
__attribute__((target("avx2,fma"))) void unary_loop_avx2(const I* a, O* o, std::int64_t n, F f) {
  EMBER_EW_UNARY_LOOP
}
template <class I, class O, class C, int SA, class F>
__attribute__((target("avx512f,avx512dq,avx512bw,avx512vl,avx2,fma"))) void unary_loop_avx512(
    const I* a, O* o, std::int64_t n, F f) {
  EMBER_EW_UNARY_LOOP
}
#endif
template <class I, class O, class C, int SA, int SB, class F>
void binary_loop(const I* a, const I* b, O* o, std::int64_t n, F f) {
  EMBER_EW_BINARY_LOOP
}
#if EMBER_CPU_X86
template <class I, class O, class C, int SA, int SB, class F>
__attribute__((target("avx2,fma"))) void binary_loop_avx2(const I* a, const I* b, O* o,
                                                          std::int64_t n, F f) {
  EMBER_EW_BINARY_LOOP
}
template <class I, class O, class C, int SA, int SB, class F>
__attribute__((target("avx512f,avx512dq,avx512bw,avx512vl,avx2,fma"))) void binary_loop_avx512(
    const I* a, const I* b, O* o, std::int64_t n, F f) {
  EMBER_EW_BINARY_LOOP
}
#endif

template <class I, class O, class C, int SA, class F>
void unary_dispatch(const I* a, O* o, std::int64_t n, F f) {
#if EMBER_CPU_X86
  if constexpr (kSimdType<I>) {
    const int lvl = simd_level();
    if (lvl == 2) return unary_loop_avx512<I, O, C, SA>(a, o, n, f);
    if (lvl == 1) return unary_loop_avx2<I, O, C, SA>(a, o, n, f);
  }
#endif
  unary_loop<I, O, C, SA>(a, o, n, f);
}
template <class I, class O, class C, int SA, int SB, class F>
void binary_dispatch(const I* a, const I* b, O* o, std::int64_t n, F f) {
#if EMBER_CPU_X86
  if constexpr (kSimdType<I>) {
    const int lvl = simd_level();
    if (lvl == 2) return binary_loop_avx512<I, O, C, SA, SB>(a, b, o, n, f);
    if (lvl == 1) return binary_loop_avx2<I, O, C, SA, SB>(a, b, o, n, f);
  }
#endif
  binary_loop<I, O, C, SA, SB>(a, b, o, n, f);
}

/// Grain for parallel_for: expensive element functions parallelise earlier.
template <class F>
constexpr std::int64_t grain_for() {
  return kParallelGrain;
}

// ---- kernels ---------------------------------------------------------------------------------

/// out[i] = f(a[i]) for storage type I -> O (O is I, or uint8_t for bool results). `a` may be
/// any strided view; the result reuses a's buffer when `reuse` and a can_reuse() and O == I.
template <class I, class O, class F>
CpuTensor unary_typed(CpuTensor a, DType out_dtype, F f, bool reuse = true) {
  using C = compute_t<I>;
  CpuTensor out;
  if (reuse && std::is_same_v<I, O> && a.dtype == out_dtype && a.can_reuse())
    out = a;
  else
    out = alloc(a.shape, out_dtype);
  const std::int64_t n = a.numel();
  if (n == 0) return out;
  const I* src = reinterpret_cast<const I*>(a.storage->data());
  O* dst = out.template data<O>();
  if (a.is_contiguous()) {
    const I* s = src + a.offset;
    parallel_for(n, grain_for<F>(), [&](std::int64_t b, std::int64_t e) {
      unary_dispatch<I, O, C, 1>(s + b, dst + b, e - b, f);
    });
    return out;
  }
  const Plan<1> p = make_plan<1>(a.shape, {&a});
  for_each_row(p, n, grain_for<F>(),
               [&](std::int64_t pos, std::int64_t len, const std::array<std::int64_t, 1>& off,
                   const std::array<std::int64_t, 1>& st) {
                 if (st[0] == 1) {
                   unary_dispatch<I, O, C, 1>(src + off[0], dst + pos, len, f);
                 } else if (st[0] == 0) {
                   unary_dispatch<I, O, C, 0>(src + off[0], dst + pos, len, f);
                 } else {
                   const I* s = src + off[0];
                   for (std::int64_t i = 0; i < len; ++i)
                     dst[pos + i] = store<O>(f(load<C>(s[i * st[0]])));
                 }
               });
  return out;
}

/// out = f(a, b) with broadcasting (a, b: same dtype and rank, broadcast-compatible). The
/// result reuses a's (else b's) buffer when it is reusable and has the output's shape.
template <class I, class O, class F>
CpuTensor binary_typed(CpuTensor a, CpuTensor b, DType out_dtype, F f) {
  using C = compute_t<I>;
  Shape shape = a.shape;
  for (std::size_t d = 0; d < shape.rank(); ++d)
    if (shape[d] == 1) shape[d] = b.shape[d];
  CpuTensor out;
  const bool same_t = std::is_same_v<I, O>;
  if (same_t && a.dtype == out_dtype && a.shape == shape && a.can_reuse())
    out = a;
  else if (same_t && b.dtype == out_dtype && b.shape == shape && b.can_reuse())
    out = b;
  else
    out = alloc(shape, out_dtype);
  const std::int64_t n = shape.numel();
  if (n == 0) return out;
  const I* pa = reinterpret_cast<const I*>(a.storage->data());
  const I* pb = reinterpret_cast<const I*>(b.storage->data());
  O* dst = out.template data<O>();
  if (a.shape == shape && b.shape == shape && a.is_contiguous() && b.is_contiguous()) {
    const I* sa = pa + a.offset;
    const I* sb = pb + b.offset;
    parallel_for(n, grain_for<F>(), [&](std::int64_t s, std::int64_t e) {
      binary_dispatch<I, O, C, 1, 1>(sa + s, sb + s, dst + s, e - s, f);
    });
    return out;
  }
  const Plan<2> p = make_plan<2>(shape, {&a, &b});
  for_each_row(p, n, grain_for<F>(),
               [&](std::int64_t pos, std::int64_t len, const std::array<std::int64_t, 2>& off,
                   const std::array<std::int64_t, 2>& st) {
                 const I* x = pa + off[0];
                 const I* y = pb + off[1];
                 O* o = dst + pos;
                 if (st[0] == 1 && st[1] == 1)
                   binary_dispatch<I, O, C, 1, 1>(x, y, o, len, f);
                 else if (st[0] == 1 && st[1] == 0)
                   binary_dispatch<I, O, C, 1, 0>(x, y, o, len, f);
                 else if (st[0] == 0 && st[1] == 1)
                   binary_dispatch<I, O, C, 0, 1>(x, y, o, len, f);
                 else {
                   for (std::int64_t i = 0; i < len; ++i)
                     o[i] = store<O>(f(load<C>(x[i * st[0]]), load<C>(y[i * st[1]])));
                 }
               });
  return out;
}

/// Visits the storage type of a float dtype.
template <class G>
decltype(auto) visit_float(DType d, G&& g) {
  switch (d) {
    case DType::F64:
      return g.template operator()<double>();
    case DType::F16:
      return g.template operator()<f16>();
    case DType::BF16:
      return g.template operator()<bf16>();
    default:
      return g.template operator()<float>();
  }
}
/// Visits the storage type of an int dtype.
template <class G>
decltype(auto) visit_int(DType d, G&& g) {
  switch (d) {
    case DType::I32:
      return g.template operator()<std::int32_t>();
    case DType::I16:
      return g.template operator()<std::int16_t>();
    case DType::I8:
      return g.template operator()<std::int8_t>();
    case DType::U8:
      return g.template operator()<std::uint8_t>();
    default:
      return g.template operator()<std::int64_t>();
  }
}

/// Emits fn<Op> for every row Op of ir::ElementwiseOps for which `Use<Op>` holds: the
/// returned table of function pointers (null for the other rows) is stored in a variable with
/// external linkage by each kernel file, which forces the instantiations.
template <class Fn, template <class> class Ptr, class... Ops>
constexpr auto instantiate_rows(ir::TypeList<Ops...>) {
  return std::array<Fn, sizeof...(Ops)>{Ptr<Ops>::value...};
}

}  // namespace ember::cpu::ew
