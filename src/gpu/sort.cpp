// Sorting on the GPU backends: a bitonic sorting network over each line's (value, index) pairs
// (Batcher, "Sorting networks and their applications", AFIPS 1968).
//
// The input is seen as [outer, len, inner]; each of the outer * inner lines is copied into a
// row of P = next power of two >= len slots (keys in the compare type, u32 source indices;
// slots past len are padding, ordered after every value). Comparing (value, index) makes the
// order total: NaN above every number (any payload), -0.0 equal to +0.0, equal values by
// source index. A total order has one sorted sequence, so the network's result is the CPU
// backend's stable sort exactly. The network runs log2(P) (log2(P) + 1) / 2 launches of one
// compare-exchange per slot pair, with no loop inside a kernel (llvmpipe's loop limit). Then
// the first len (sort) or k (topk) slots of each row are written out. The median takes slot
// (len - 1) / 2 of the ascending sort, or the line's first NaN (max_with_index finds it).
//
// Work O(n log^2 n): a radix sort would do O(n) (issue 15, GPU performance).
#include "ember/gpu/sort.hpp"

#include <algorithm>
#include <sstream>
#include <vector>

#include "ember/backend/views.hpp"
#include "ember/gpu/ops.hpp"
#include "ember/gpu/scan.hpp"
#include "kernels.hpp"

namespace ember::gpu {

namespace {

using namespace detail::names;

/// a < b with NaN above every number.
Val less(Val a, Val b) {
  if (!detail::is_float_elem(a.elem())) return a < b;
  return kernel::select(b != b, a == a, a < b);
}

/// Row slots: keys[t * P + j] = x[line t, j] for j < len, index j (padding: index j >= len).
kernel::Kernel build_load(Elem e, Elem key) {
  KernelBuilder kb("sort_load", {kGroup, 1, 1});
  Mem x = kb.buffer("x", e, kernel::Access::Read);
  Mem keys = kb.buffer("keys", key, kernel::Access::Write);
  Mem idx = kb.buffer("idx", Elem::U32, kernel::Access::Write);
  Val len = kb.scalar("len", Elem::U32), inner = kb.scalar("inner", Elem::U32);
  Val slots = kb.scalar("slots", Elem::U32), n = kb.scalar("n", Elem::U32);
  Val pos = kb.absolute_pos();
  kb.if_in_bounds(pos, n, [&] {
    Val t = pos / slots, j = pos % slots;
    Val real = j < len;
    Val at = kernel::select(real, (t / inner) * len * inner + t % inner + j * inner, kb.u32(0));
    keys[pos] = kernel::select(real, kernel::cast(x[at], key), kb.constant(key, 0));
    idx[pos] = j;
  });
  return kb.build();
}

/// One step (k, j) of the network: slot i and its partner i ^ j are put in order, ascending
/// where i & k is 0, else descending (the halves of the bitonic merge).
kernel::Kernel build_step(Elem key, bool descending) {
  KernelBuilder kb(descending ? "sort_step_desc" : "sort_step", {kGroup, 1, 1});
  Mem keys = kb.buffer("keys", key, kernel::Access::ReadWrite);
  Mem idx = kb.buffer("idx", Elem::U32, kernel::Access::ReadWrite);
  Val len = kb.scalar("len", Elem::U32), slots = kb.scalar("slots", Elem::U32);
  Val k = kb.scalar("k", Elem::U32), j = kb.scalar("j", Elem::U32);
  Val n = kb.scalar("n", Elem::U32);
  Val pos = kb.absolute_pos();
  kb.if_in_bounds(pos, n, [&] {
    Val i = pos % slots;
    Val partner = i ^ j;
    kb.if_(partner > i, [&] {
      Val a = pos, b = pos - i + partner;
      Val key_a = keys[a], key_b = keys[b];
      Val ia = idx[a], ib = idx[b];
      // before(a, b): a comes first in the final order.
      const auto before = [&](Val k1, Val i1, Val k2, Val i2) {
        Val p1 = i1 >= len, p2 = i2 >= len;
        Val by_value = descending ? less(k2, k1) : less(k1, k2);
        Val tie = (!less(k1, k2)) & (!less(k2, k1));
        Val real = by_value | (tie & (i1 < i2));
        return kernel::select(p1 | p2, ((!p1) & p2) | (p1 & p2 & (i1 < i2)), real);
      };
      Val up = (i & k) == 0u;
      Val swap = kernel::select(up, before(key_b, ib, key_a, ia), before(key_a, ia, key_b, ib));
      kb.if_(swap, [&] {
        keys[a] = key_b;
        keys[b] = key_a;
        idx[a] = ib;
        idx[b] = ia;
      });
    });
  });
  return kb.build();
}

/// y[line t, r] = keys[t * P + r], yi = its index, for r < m (the output's dim size).
kernel::Kernel build_store(Elem key, Elem e) {
  KernelBuilder kb("sort_store", {kGroup, 1, 1});
  Mem keys = kb.buffer("keys", key, kernel::Access::Read);
  Mem idx = kb.buffer("idx", Elem::U32, kernel::Access::Read);
  Mem y = kb.buffer("y", e, kernel::Access::Write);
  Mem yi = kb.buffer("yi", Elem::I64, kernel::Access::Write);
  Val m = kb.scalar("m", Elem::U32), inner = kb.scalar("inner", Elem::U32);
  Val slots = kb.scalar("slots", Elem::U32), n = kb.scalar("n", Elem::U32);
  Val pos = kb.absolute_pos();
  kb.if_in_bounds(pos, n, [&] {
    Val t = pos / m, r = pos % m;
    Val src = t * slots + r;
    Val out = (t / inner) * m * inner + t % inner + r * inner;
    y[out] = key == e ? Val(keys[src]) : kernel::cast(keys[src], e);
    yi[out] = kernel::cast(idx[src], Elem::I64);
  });
  return kb.build();
}

/// The lower median of each sorted float line (slot m), or the line's first NaN and its index
/// (from max_with_index, where a NaN is the first extreme) when it has one.
kernel::Kernel build_median_pick(Elem e) {
  KernelBuilder kb("median_pick", {kGroup, 1, 1});
  Mem sv = kb.buffer("sorted", e, kernel::Access::Read);
  Mem si = kb.buffer("sorted_i", Elem::I64, kernel::Access::Read);
  Mem mx = kb.buffer("max", e, kernel::Access::Read);
  Mem mi = kb.buffer("max_i", Elem::I64, kernel::Access::Read);
  Mem y = kb.buffer("y", e, kernel::Access::Write);
  Mem yi = kb.buffer("yi", Elem::I64, kernel::Access::Write);
  Val len = kb.scalar("len", Elem::U32), inner = kb.scalar("inner", Elem::U32);
  Val m = kb.scalar("m", Elem::U32), n = kb.scalar("n", Elem::U32);
  Val t = kb.absolute_pos();
  kb.if_in_bounds(t, n, [&] {
    Val src = ((t / inner) * len + m) * inner + t % inner;
    Val top = mx[t];
    Val nan = top != top;
    y[t] = kernel::select(nan, top, Val(sv[src]));
    yi[t] = kernel::select(nan, Val(mi[t]), Val(si[src]));
  });
  return kb.build();
}

/// Sorts along `dim` and keeps the first `m` of each line.
std::optional<std::pair<GpuTensor, GpuTensor>> sorted(const GpuTensor& x_in, std::int64_t dim,
                                                      bool descending, std::int64_t m) {
  kernel::ComputeDevice& dev = x_in.compute();
  if (!native_dtype(x_in.dtype, dev) || x_in.dtype == DType::Bool || !native_dtype(DType::I64, dev))
    return std::nullopt;
  const detail::Lines l = detail::lines_of(x_in.shape, dim);
  const std::int64_t len = l.len, inner = l.inner, lines = l.count();
  std::int64_t slots = 1;
  while (slots < len) slots *= 2;
  const std::int64_t total = lines * slots;
  if (total > std::int64_t{0xffffffff} || x_in.numel() > std::int64_t{0xffffffff})
    return std::nullopt;
  const Elem e = elem_of(x_in.dtype, "sort"), key = compare_elem(e);
  std::ostringstream tag;
  tag << static_cast<int>(e) << '|' << static_cast<int>(key);
  const auto* load = compiled(dev, "sort_load|" + tag.str(), [&] { return build_load(e, key); });
  const auto* step = compiled(dev, "sort_step|" + tag.str() + (descending ? "|desc" : ""),
                              [&] { return build_step(key, descending); });
  const auto* store = compiled(dev, "sort_store|" + tag.str(), [&] { return build_store(key, e); });
  if (!load || !step || !store) return std::nullopt;
  Shape out_shape = x_in.shape;
  out_shape.dims[dim] = m;
  GpuTensor y = empty(out_shape, x_in.dtype, dev, x_in.device);
  GpuTensor yi = empty(out_shape, DType::I64, dev, x_in.device);
  if (y.numel() == 0) return std::pair{y, yi};
  const GpuTensor x = packed(x_in);
  const auto n = static_cast<std::uint32_t>(total);
  const kernel::Buffer keys = dev.alloc(static_cast<std::size_t>(total) *
                                        static_cast<std::size_t>(kernel::elem_bytes(key)));
  const kernel::Buffer idx = dev.alloc(static_cast<std::size_t>(total) * 4);
  const auto u = [](std::int64_t v) { return Arg::u32(static_cast<std::uint32_t>(v)); };
  dev.launch(*load, kernel::grid_for(load->kernel(), n),
             {Arg::buf(x.buffer, static_cast<std::uint64_t>(x.offset),
                       static_cast<std::uint64_t>(x.numel())),
              Arg::buf(keys, 0, n), Arg::buf(idx, 0, n), u(len), u(inner), u(slots), u(n)});
  for (std::int64_t k = 2; k <= slots; k *= 2)
    for (std::int64_t j = k / 2; j > 0; j /= 2)
      dev.launch(*step, kernel::grid_for(step->kernel(), n),
                 {Arg::buf(keys, 0, n), Arg::buf(idx, 0, n), u(len), u(slots), u(k), u(j), u(n)});
  const std::int64_t outs = lines * m;
  dev.launch(*store, kernel::grid_for(store->kernel(), static_cast<std::uint64_t>(outs)),
             {Arg::buf(keys, 0, n), Arg::buf(idx, 0, n),
              Arg::buf(y.buffer, 0, static_cast<std::uint64_t>(outs)),
              Arg::buf(yi.buffer, 0, static_cast<std::uint64_t>(outs)), u(m), u(inner), u(slots),
              u(outs)});
  return std::pair{y, yi};
}

}  // namespace

std::optional<std::pair<GpuTensor, GpuTensor>> sort(const GpuTensor& x, std::int64_t dim,
                                                    bool descending) {
  return sorted(x, dim, descending, x.shape.dims[dim]);
}

std::optional<std::pair<GpuTensor, GpuTensor>> topk(const GpuTensor& x, std::int64_t k,
                                                    std::int64_t dim) {
  return sorted(x, dim, true, k);
}

std::optional<std::pair<GpuTensor, GpuTensor>> median(const GpuTensor& x, std::int64_t dim) {
  const std::int64_t len = x.shape.dims[dim];
  if (len == 0) return std::nullopt;  // an error the host path reports
  auto s = sort(x, dim, false);
  if (!s) return std::nullopt;
  if (!is_float(x.dtype)) {
    // No NaN: slot (len - 1) / 2 of the ascending sort, as a contiguous copy.
    std::vector<SliceRange> at(x.shape.dims.size());
    for (std::size_t d = 0; d < at.size(); ++d) at[d] = {0, x.shape.dims[d], 1};
    at[dim] = {(len - 1) / 2, 1, 1};
    return std::pair{contiguous(views::slice(s->first, at)),
                     contiguous(views::slice(s->second, at))};
  }
  auto top = extreme_with_indices(true, x, dim);
  if (!top) return std::nullopt;
  kernel::ComputeDevice& dev = x.compute();
  const Elem e = elem_of(x.dtype, "median");
  const auto* k = compiled(dev, "median_pick|" + std::to_string(static_cast<int>(e)),
                           [&] { return build_median_pick(e); });
  if (!k) return std::nullopt;
  GpuTensor y = empty(top->first.shape, x.dtype, dev, x.device);
  GpuTensor yi = empty(top->first.shape, DType::I64, dev, x.device);
  const detail::Lines l = detail::lines_of(x.shape, dim);
  if (l.count() == 0) return std::pair{y, yi};
  const auto n = static_cast<std::uint64_t>(l.count()), all = static_cast<std::uint64_t>(x.numel());
  const auto u = [](std::int64_t v) { return Arg::u32(static_cast<std::uint32_t>(v)); };
  dev.launch(*k, kernel::grid_for(k->kernel(), n),
             {Arg::buf(s->first.buffer, 0, all), Arg::buf(s->second.buffer, 0, all),
              Arg::buf(top->first.buffer, 0, n), Arg::buf(top->second.buffer, 0, n),
              Arg::buf(y.buffer, 0, n), Arg::buf(yi.buffer, 0, n), u(len), u(l.inner),
              u((len - 1) / 2), u(l.count())});
  return std::pair{y, yi};
}

}  // namespace ember::gpu
