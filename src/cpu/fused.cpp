// Fused element-wise blocks on the CPU (Fusion<Cpu>; ember/ir/fused.hpp).
//
// Each thread walks its part of the block's index space in tiles of kTile elements along
// the innermost (collapsed) dim. An input with unit stride there is read in place; a
// broadcast or strided one is first copied into the tile. Every step is the element-wise
// kernels' own vectorised row loop (src/cpu/elementwise_kernel.hpp) over the tile, from
// tile to tile in a per-thread scratch of (inputs + steps) tiles that stays in the L2
// cache; only the outputs are copied to memory. Same element functions, same compute type
// as the unfused kernels.
// Speculating FP selects (no-trapping-math) lets GCC if-convert and vectorise the
// branch-free element functions of ember/ir/scalar.hpp; must precede every include.
#pragma GCC optimize("no-trapping-math")
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "elementwise_kernel.hpp"
#include "ember/cpu/ops_elementwise.hpp"
#include "ember/ir/fused_rewrite.hpp"
#if EMBER_CPU_X86
#include <immintrin.h>
#endif

namespace ember::cpu {

namespace {

constexpr std::int64_t kTile = 1024;

template <class T>
using StepFn = void (*)(const T* a, const T* b, T* o, std::int64_t n, double s0, double s1);

template <class T, class Op>
void step_unary(const T* a, const T*, T* o, std::int64_t n, double, double) {
  ew::unary_dispatch<T, T, compute_t<T>, 1>(a, o, n, Op{});
}
template <class T, class Op>
void step_binary(const T* a, const T* b, T* o, std::int64_t n, double, double) {
  ew::binary_dispatch<T, T, compute_t<T>, 1, 1>(a, b, o, n, Op{});
}
template <class T, class Op>
void step_scalar(const T* a, const T*, T* o, std::int64_t n, double s, double) {
  using C = compute_t<T>;
  const C c = static_cast<C>(s);
  ew::unary_dispatch<T, T, C, 1>(a, o, n, [c](C v) { return Op{}(v, c); });
}
template <class T>
void step_clamp(const T* a, const T*, T* o, std::int64_t n, double lo_, double hi_) {
  using C = compute_t<T>;
  const C lo = static_cast<C>(lo_), hi = static_cast<C>(hi_);
  ew::unary_dispatch<T, T, C, 1>(
      a, o, n, [lo, hi](C v) { return ir::op::MinPair{}(ir::op::MaxPair{}(v, lo), hi); });
}

/// The step functions of each row (null where the row has no such float form), as tables
/// indexed by ir::op_index (ew::instantiate_rows).
template <class T>
struct Steps {
  template <class Op>
  struct Unary {
    static constexpr StepFn<T> value = []() -> StepFn<T> {
      if constexpr (ir::is_row<Op, ir::Family::Unary, ir::kFloat>) return &step_unary<T, Op>;
      return StepFn<T>{};
    }();
  };
  template <class Op>
  struct Binary {
    static constexpr StepFn<T> value = []() -> StepFn<T> {
      if constexpr (ir::is_row<Op, ir::Family::Binary, ir::kFloat>) return &step_binary<T, Op>;
      return StepFn<T>{};
    }();
  };
  template <class Op>
  struct Scalar {
    static constexpr StepFn<T> value = []() -> StepFn<T> {
      if constexpr (Op::family == ir::Family::Binary && ir::has_scalar_form<Op, ir::kFloat>)
        return &step_scalar<T, Op>;
      return StepFn<T>{};
    }();
  };
  static constexpr auto unary = ew::instantiate_rows<StepFn<T>, Unary>(ir::ElementwiseOps{});
  static constexpr auto binary = ew::instantiate_rows<StepFn<T>, Binary>(ir::ElementwiseOps{});
  static constexpr auto scalar = ew::instantiate_rows<StepFn<T>, Scalar>(ir::ElementwiseOps{});
};

template <class T>
StepFn<T> step_fn(const ir::FusedStep& s) {
  if (s.kind == ir::FusedKind::Clamp) return &step_clamp<T>;
  if (s.row >= ir::ElementwiseOps::size) return nullptr;
  switch (s.kind) {
    case ir::FusedKind::Unary:
      return Steps<T>::unary[s.row];
    case ir::FusedKind::Binary:
      return Steps<T>::binary[s.row];
    case ir::FusedKind::Scalar:
      return Steps<T>::scalar[s.row];
    default:
      return nullptr;
  }
}

/// The block's index space collapsed over its inputs (ew::collapse_dims).
struct Plan {
  std::vector<std::int64_t> shape;
  std::vector<std::vector<std::int64_t>> strides;  // [input][dim]
};

Plan make_plan(const Shape& out, const std::vector<CpuTensor>& ins) {
  Plan p;
  p.strides.resize(ins.size());
  p.shape = ew::collapse_dims(
      out, ins.size(), [&](std::size_t k) -> const CpuTensor& { return ins[k]; }, p.strides);
  return p;
}

#if EMBER_CPU_X86
/// dst[0, n) = src[0, n): 32-byte aligned part with non-temporal stores (a fence at the end
/// of each block, in run_block).
template <class T>
__attribute__((target("avx2"))) void stream_copy(T* dst, const T* src, std::int64_t n) {
  auto* d = reinterpret_cast<char*>(dst);
  const auto* s = reinterpret_cast<const char*>(src);
  std::size_t bytes = static_cast<std::size_t>(n) * sizeof(T);
  const std::size_t head = std::min(bytes, (32 - reinterpret_cast<std::uintptr_t>(d) % 32) % 32);
  std::memcpy(d, s, head);
  d += head;
  s += head;
  bytes -= head;
  for (; bytes >= 32; bytes -= 32, d += 32, s += 32)
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d),
                        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s)));
  std::memcpy(d, s, bytes);
}
#endif

/// Outputs larger than this many bytes in all are written with non-temporal stores: they
/// will not be read again before they leave the cache, and such stores skip reading each
/// destination line first.
constexpr std::size_t kStreamBytes = std::size_t{8} << 20;

template <class T>
void copy_out(T* dst, const T* src, std::int64_t n, bool stream) {
#if EMBER_CPU_X86
  if (stream && ew::simd_level() >= 1) return stream_copy(dst, src, n);
#endif
  std::memcpy(dst, src, static_cast<std::size_t>(n) * sizeof(T));
}

template <class T>
std::vector<CpuTensor> run_block(const ir::FusedBlock& blk, std::vector<CpuTensor>& ins,
                                 const std::vector<StepFn<T>>& fns) {
  const std::size_t ni = ins.size(), ns = blk.steps.size(), no = blk.outputs.size();
  // Outputs: into an input's buffer when the input is its buffer's only holder and covers
  // the whole index space (each element is read before its tile is written), else new.
  std::vector<CpuTensor> outs(no);
  std::vector<bool> given(ni, false);
  for (std::size_t j = 0; j < no; ++j) {
    for (std::size_t k = 0; k < ni && !outs[j].storage; ++k)
      if (!given[k] && ins[k].shape == blk.shape && ins[k].can_reuse()) {
        outs[j] = ins[k];
        given[k] = true;
      }
    if (!outs[j].storage) outs[j] = alloc(blk.shape, blk.dtype);
  }
  const std::int64_t numel = blk.shape.numel();
  if (numel == 0) return outs;

  const Plan p = make_plan(blk.shape, ins);
  const std::size_t r = p.shape.size();
  const std::int64_t inner = p.shape[r - 1];
  std::vector<const T*> base(ni);
  for (std::size_t k = 0; k < ni; ++k)
    base[k] = reinterpret_cast<const T*>(ins[k].storage->data()) + ins[k].offset;
  std::vector<T*> dst(no);
  for (std::size_t j = 0; j < no; ++j) dst[j] = outs[j].template data<T>();

  const bool stream = static_cast<std::size_t>(numel) * sizeof(T) * no > kStreamBytes;
  // Expensive steps parallelise earlier than plain copies.
  const std::int64_t grain = std::max<std::int64_t>(
      kTile, kParallelGrain / std::max<std::int64_t>(1, static_cast<std::int64_t>(ns)));
  parallel_for(numel, grain, [&](std::int64_t b, std::int64_t e) {
    std::vector<T> scratch((ni + ns) * static_cast<std::size_t>(kTile));
    std::vector<const T*> slot(ni + ns);
    std::vector<std::int64_t> idx(r, 0), off(ni, 0);
    std::int64_t rem = b;
    for (std::size_t d = r; d-- > 0;) {
      idx[d] = rem % p.shape[d];
      rem /= p.shape[d];
    }
    for (std::size_t k = 0; k < ni; ++k)
      for (std::size_t d = 0; d < r; ++d) off[k] += idx[d] * p.strides[k][d];
    std::int64_t pos = b;
    while (pos < e) {
      const std::int64_t len = std::min({inner - idx[r - 1], e - pos, kTile});
      for (std::size_t k = 0; k < ni; ++k) {
        const std::int64_t s = p.strides[k][r - 1];
        const T* src = base[k] + off[k];
        if (s == 1) {
          slot[k] = src;
          continue;
        }
        T* t = scratch.data() + k * kTile;
        if (s == 0)
          std::fill(t, t + len, *src);
        else
          for (std::int64_t i = 0; i < len; ++i) t[i] = src[i * s];
        slot[k] = t;
      }
      for (std::size_t i = 0; i < ns; ++i) {
        const ir::FusedStep& st = blk.steps[i];
        T* o = scratch.data() + (ni + i) * kTile;
        fns[i](slot[st.a], st.kind == ir::FusedKind::Binary ? slot[st.b] : nullptr, o, len, st.s0,
               st.s1);
        slot[ni + i] = o;
      }
      for (std::size_t j = 0; j < no; ++j)
        copy_out(dst[j] + pos, slot[ni + blk.outputs[j]], len, stream);
      pos += len;
      if (pos >= e) break;
      // Next tile: along the innermost dim, carrying into the outer dims at its end.
      idx[r - 1] += len;
      for (std::size_t k = 0; k < ni; ++k) off[k] += len * p.strides[k][r - 1];
      for (std::size_t d = r - 1; d > 0 && idx[d] == p.shape[d]; --d) {
        for (std::size_t k = 0; k < ni; ++k)
          off[k] += p.strides[k][d - 1] - idx[d] * p.strides[k][d];
        idx[d] = 0;
        ++idx[d - 1];
      }
    }
#if EMBER_CPU_X86
    if (stream) _mm_sfence();  // the non-temporal stores are visible before the block ends
#endif
  });
  return outs;
}

}  // namespace

std::optional<std::vector<CpuTensor>> ElementwiseOps::float_fused_elementwise(
    const ir::FusedBlock& block, std::vector<CpuTensor>& inputs) {
  const auto run = [&]<class T>() -> std::optional<std::vector<CpuTensor>> {
    ir::FusedBlock blk = block;
    std::vector<StepFn<T>> fns;
    fns.reserve(blk.steps.size());
    for (ir::FusedStep& s : blk.steps) {
      ir::exact_reciprocal<compute_t<T>>(s);
      StepFn<T> f = step_fn<T>(s);
      if (!f) return std::nullopt;
      fns.push_back(f);
    }
    return run_block<T>(blk, inputs, fns);
  };
  if (inputs.size() != block.inputs || block.outputs.empty()) return std::nullopt;
  for (const CpuTensor& t : inputs)
    if (t.dtype != block.dtype || t.shape.rank() != block.shape.rank()) return std::nullopt;
  if (block.dtype == DType::F32) return run.template operator()<float>();
  if (block.dtype == DType::F64) return run.template operator()<double>();
  return std::nullopt;
}

}  // namespace ember::cpu
