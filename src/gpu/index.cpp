// Indexing on the GPU backends: strided assignment (cat, slice_assign), flip, index_select,
// index_copy / index_add, gather, scatter (assign: the last duplicate wins, by an atomic max of
// the source positions, then a write; add: f32 atomics), mask_where and mask_fill. The front
// end has checked the shapes and the index ranges (ember/tensor/ops/indexing.hpp); the kernels
// still skip an index outside its dim rather than address memory outside the tensor.
#include "ember/gpu/index.hpp"

#include <algorithm>
#include <sstream>

#include "ember/core/error.hpp"
#include "ember/gpu/create.hpp"
#include "ember/gpu/ops.hpp"
#include "kernels.hpp"

namespace ember::gpu {

namespace {

using namespace detail::names;

std::uint32_t u32(std::int64_t v, const char* what) {
  return detail::u32_index(v, "gpu index", what);
}

std::uint32_t rank_of(const Shape& s) {
  const auto r = static_cast<std::uint32_t>(std::max<std::size_t>(s.dims.size(), 1));
  if (r > kernel::kMaxRank)
    throw UnsupportedError("[gpu index] rank " + std::to_string(r) + " exceeds the kernels' " +
                           std::to_string(kernel::kMaxRank));
  return r;
}

/// `t` as a kernel view of rank `rank` bound from its buffer's start (its first element is
/// passed as a scalar): shape `shape` (t's, or a broadcast of it) and t's strides (0 along
/// size-1 dims, which broadcast).
Arg view_of(const GpuTensor& t, const Shape& shape, std::uint32_t rank) {
  std::vector<std::uint32_t> sh(rank, 1), st(rank, 0);
  const std::size_t off = rank - std::max<std::size_t>(t.shape.dims.size(), 1);
  for (std::size_t d = 0; d < shape.dims.size(); ++d) sh[d] = u32(shape.dims[d], "dim");
  for (std::size_t d = 0; d < t.shape.dims.size(); ++d)
    st[off + d] = t.shape.dims[d] == 1 ? 0 : u32(t.strides[d], "stride");
  Arg a = Arg::view(t.buffer, sh, st, 0);
  a.len = u32(span_of(t).second + 1, "view's last element");
  if (a.len == 0) a.len = 1;
  return a;
}

/// `t` as a kernel view of its own shape and strides (size-1 dims keep their stride: every
/// element is addressed, none broadcast).
Arg own_view(const GpuTensor& t, std::uint32_t rank) {
  Arg a = view_of(t, t.shape, rank);
  for (std::size_t d = 0; d < t.shape.dims.size(); ++d)
    a.strides[rank - t.shape.dims.size() + d] = u32(t.strides[d], "stride");
  return a;
}

/// The result of an update of `t`: t's buffer when the caller holds it alone (`reuse`) and it
/// is contiguous from offset 0, else a contiguous copy.
GpuTensor writable(const GpuTensor& t, bool reuse) {
  return reuse && t.offset == 0 && t.is_contiguous() ? t : copy(t);
}

bool native(const GpuTensor& t) {
  return native_dtype(t.dtype, t.compute()) && t.numel() <= std::int64_t{0xffffffff};
}

/// Whether index value `raw` (i64, i32 or u8) lies in [0, size) for the u32 dim size `size`,
/// compared without narrowing `size` to the index's type (a u8 index on a dim of 300 must not
/// compare against 300 mod 256).
Val index_ok(Val raw, Val size) {
  switch (raw.elem()) {
    case Elem::I64:
      return (raw >= kernel::lit(raw, 0)) & (raw < kernel::cast(size, Elem::I64));
    case Elem::U8:
    case Elem::U32:
      return kernel::cast(raw, Elem::U32) < size;
    default:
      return (raw >= kernel::lit(raw, 0)) & (kernel::cast(raw, Elem::U32) < size);
  }
}

/// Element `pos` of [outer, m, inner] in index_select / index_copy / index_add: its
/// coordinates, and idx[i0 + j] checked against a dim of `size` (`at` is 0 where not `ok`).
struct Slab {
  Val in, j, outer, ok, at;
};
Slab slab_of(KernelBuilder& kb, const Mem& idx, Val pos, Val i0, Val size, Val m, Val inner) {
  Slab s;
  s.in = pos % inner;
  s.j = (pos / inner) % m;
  s.outer = pos / (inner * m);
  Val raw = idx[i0 + s.j];
  s.ok = index_ok(raw, size);
  s.at = kernel::select(s.ok, kernel::cast(raw, Elem::U32), kb.u32(0));
  return s;
}

/// Decomposes `pos` over `shape_of` (a buffer of `rank` dims): the coordinate per dim.
std::vector<Val> coords(const Mem& shape_of, Val pos, std::uint32_t rank) {
  std::vector<Val> c(rank);
  Val rem = pos;
  for (std::uint32_t d = rank; d-- > 0;) {
    Val extent = shape_of.shape(d);
    c[d] = d == 0 ? rem : rem % extent;
    if (d) rem = rem / extent;
  }
  return c;
}

Val offset(const Mem& m, const std::vector<Val>& c, Val start) {
  Val o = start;
  for (std::uint32_t d = 0; d < c.size(); ++d) o = o + c[d] * m.stride(d);
  return o;
}

/// y[view] = x[view] (same shapes, any strides; x cast to y's type).
kernel::Kernel build_assign(Elem ex, Elem ey, std::uint32_t rank) {
  KernelBuilder kb("strided_assign", {kGroup, 1, 1});
  Mem x = kb.buffer("x", ex, kernel::Access::Read, rank);
  Mem y = kb.buffer("y", ey, kernel::Access::ReadWrite, rank);
  Val x0 = kb.scalar("x0", Elem::U32), y0 = kb.scalar("y0", Elem::U32);
  Val n = kb.scalar("n", Elem::U32);
  Val pos = kb.absolute_pos();
  kb.if_in_bounds(pos, n, [&] {
    const auto c = coords(y, pos, rank);
    Val v = x[offset(x, c, x0)];
    y[offset(y, c, y0)] = ex == ey ? v : kernel::cast(v, ey);
  });
  return kb.build();
}

/// Copies `src` into the view `dst` (same shape) on the device; false when the dtypes have
/// no kernel here.
bool assign(const GpuTensor& dst, const GpuTensor& src) {
  if (!native(dst) || !native(src)) return false;
  const std::int64_t n = dst.numel();
  if (n == 0) return true;
  kernel::ComputeDevice& dev = dst.compute();
  const std::uint32_t rank = rank_of(dst.shape);
  const Elem ex = elem_of(src.dtype, "assign"), ey = elem_of(dst.dtype, "assign");
  std::ostringstream key;
  key << "assign|" << static_cast<int>(ex) << '|' << static_cast<int>(ey) << '|' << rank;
  const auto* k = compiled(dev, key.str(), [&] { return build_assign(ex, ey, rank); });
  if (!k) return false;
  // dst with its own strides (a view may not broadcast: every dim is written once).
  dev.launch(
      *k, kernel::grid_for(k->kernel(), static_cast<std::uint64_t>(n)),
      {view_of(src, dst.shape, rank), own_view(dst, rank), Arg::u32(u32(src.offset, "offset")),
       Arg::u32(u32(dst.offset, "offset")), Arg::u32(u32(n, "element count"))});
  return true;
}

/// The element of `dst` (a view from `start`) that element `c` of idx addresses along `dim`
/// (gather's source, scatter's target): c with `dim` replaced by the index; `ok` false when
/// the index is outside the dim (`at` then addresses index 0).
struct Target {
  Val ok, at;
};
Target target(KernelBuilder& kb, const Mem& idx, const Mem& dst, const std::vector<Val>& c, Val dim,
              Val i0, Val start) {
  Val raw = idx[offset(idx, c, i0)];
  Val ok = index_ok(raw, dst.shape(dim));
  Val at = kernel::select(ok, kernel::cast(raw, Elem::U32), kb.u32(0));
  Val o = start;
  for (std::uint32_t d = 0; d < c.size(); ++d)
    o = o + kernel::select(dim == d, at, c[d]) * dst.stride(d);
  return {ok, o};
}

/// Scatter with "the last one wins" in two launches: `claim` records, per target element,
/// the largest source position + 1 (atomic max); `write` stores each value whose position
/// holds its target.
kernel::Kernel build_scatter_assign(Elem e, Elem ei, std::uint32_t rank, bool claim) {
  KernelBuilder kb(claim ? "scatter_claim" : "scatter_assign", {kGroup, 1, 1});
  Mem v = kb.buffer("values", e, kernel::Access::Read, rank);
  Mem idx = kb.buffer("idx", ei, kernel::Access::Read, rank);
  Mem y = kb.buffer("y", e, claim ? kernel::Access::Read : kernel::Access::ReadWrite, rank);
  Mem win =
      kb.buffer("winner", Elem::U32, claim ? kernel::Access::ReadWrite : kernel::Access::Read);
  Val dim = kb.scalar("dim", Elem::U32), v0 = kb.scalar("v0", Elem::U32);
  Val i0 = kb.scalar("i0", Elem::U32), n = kb.scalar("n", Elem::U32);
  Val pos = kb.absolute_pos();
  kb.if_in_bounds(pos, n, [&] {
    const auto c = coords(idx, pos, rank);
    const Target t = target(kb, idx, y, c, dim, i0, kb.u32(0));
    if (claim) {
      kb.if_(t.ok, [&] { win.atomic_max(t.at, pos + 1u); });
    } else {
      kb.if_(t.ok & (Val(win[t.at]) == pos + 1u), [&] { y[t.at] = v[offset(v, c, v0)]; });
    }
  });
  return kb.build();
}

/// index_add / index_copy over [outer, size, inner] (t contiguous) from values [outer, n,
/// inner] (contiguous) with idx [n]: `Add` adds with f32 atomics; `claim` / `write` as in
/// build_scatter_assign.
enum class SelectPhase { Add, Claim, Write };
kernel::Kernel build_select_assign(Elem e, Elem ei, SelectPhase phase) {
  KernelBuilder kb(phase == SelectPhase::Add     ? "index_add"
                   : phase == SelectPhase::Claim ? "index_copy_claim"
                                                 : "index_copy",
                   {kGroup, 1, 1});
  Mem v = kb.buffer("values", e, kernel::Access::Read);
  Mem idx = kb.buffer("idx", ei, kernel::Access::Read);
  Mem y = kb.buffer("y", e, kernel::Access::ReadWrite);
  Mem win = kb.buffer("winner", Elem::U32, kernel::Access::ReadWrite);
  Val size = kb.scalar("size", Elem::U32), m = kb.scalar("m", Elem::U32);
  Val inner = kb.scalar("inner", Elem::U32), v0 = kb.scalar("v0", Elem::U32);
  Val i0 = kb.scalar("i0", Elem::U32), n = kb.scalar("n", Elem::U32);
  Val pos = kb.absolute_pos();
  kb.if_in_bounds(pos, n, [&] {
    const Slab s = slab_of(kb, idx, pos, i0, size, m, inner);
    Val dst = (s.outer * size + s.at) * inner + s.in;
    switch (phase) {
      case SelectPhase::Add:
        kb.if_(s.ok, [&] { y.atomic_add(dst, v[v0 + pos]); });
        break;
      case SelectPhase::Claim:
        // One claim per index (the first element of its slab is enough).
        kb.if_(s.ok & (pos < m * inner) & (s.in == 0u), [&] { win.atomic_max(s.at, s.j + 1u); });
        break;
      case SelectPhase::Write:
        kb.if_(s.ok & (Val(win[s.at]) == s.j + 1u), [&] { y[dst] = v[v0 + pos]; });
        break;
    }
  });
  return kb.build();
}

/// y[pos] = x[coords of pos, reversed along the dims whose bit is set in `mask`] (x any view
/// of y's shape, y contiguous).
kernel::Kernel build_flip(Elem e, std::uint32_t rank) {
  KernelBuilder kb("flip", {kGroup, 1, 1});
  Mem x = kb.buffer("x", e, kernel::Access::Read, rank);
  Mem y = kb.buffer("y", e, kernel::Access::Write);
  Val x0 = kb.scalar("x0", Elem::U32), mask = kb.scalar("mask", Elem::U32);
  Val n = kb.scalar("n", Elem::U32);
  Val pos = kb.absolute_pos();
  kb.if_in_bounds(pos, n, [&] {
    auto c = coords(x, pos, rank);
    for (std::uint32_t d = 0; d < rank; ++d) {
      Val flipped = ((mask >> kb.u32(d)) & kb.u32(1)) != 0u;
      c[d] = kernel::select(flipped, x.shape(d) - kb.u32(1) - c[d], c[d]);
    }
    y[pos] = x[offset(x, c, x0)];
  });
  return kb.build();
}

/// out[..., j, ...] = x[..., idx[j], ...] with x, out contiguous as [outer, size, inner].
kernel::Kernel build_select(Elem e, Elem ei) {
  KernelBuilder kb("index_select", {kGroup, 1, 1});
  Mem x = kb.buffer("x", e, kernel::Access::Read);
  Mem idx = kb.buffer("idx", ei, kernel::Access::Read);
  Mem y = kb.buffer("y", e, kernel::Access::Write);
  Val size = kb.scalar("size", Elem::U32), m = kb.scalar("m", Elem::U32);
  Val inner = kb.scalar("inner", Elem::U32), x0 = kb.scalar("x0", Elem::U32);
  Val i0 = kb.scalar("i0", Elem::U32), n = kb.scalar("n", Elem::U32);
  Val pos = kb.absolute_pos();
  kb.if_in_bounds(pos, n, [&] {
    const Slab s = slab_of(kb, idx, pos, i0, size, m, inner);
    y[pos] = x[x0 + (s.outer * size + s.at) * inner + s.in];
  });
  return kb.build();
}

/// out[pos] = x[coords of pos with dim replaced by idx[pos]] (x contiguous, idx a view).
kernel::Kernel build_gather(Elem e, Elem ei, std::uint32_t rank) {
  KernelBuilder kb("gather", {kGroup, 1, 1});
  Mem x = kb.buffer("x", e, kernel::Access::Read, rank);
  Mem idx = kb.buffer("idx", ei, kernel::Access::Read, rank);
  Mem y = kb.buffer("y", e, kernel::Access::Write);
  Val dim = kb.scalar("dim", Elem::U32), x0 = kb.scalar("x0", Elem::U32);
  Val i0 = kb.scalar("i0", Elem::U32), n = kb.scalar("n", Elem::U32);
  Val pos = kb.absolute_pos();
  kb.if_in_bounds(pos, n, [&] {
    const auto c = coords(idx, pos, rank);
    y[pos] = x[target(kb, idx, x, c, dim, i0, x0).at];
  });
  return kb.build();
}

/// dst[coords with dim replaced by idx[pos]] += values[pos] (f32 atomics; dst contiguous).
kernel::Kernel build_scatter_add(Elem ei, std::uint32_t rank) {
  KernelBuilder kb("scatter_add", {kGroup, 1, 1});
  Mem v = kb.buffer("values", Elem::F32, kernel::Access::Read, rank);
  Mem idx = kb.buffer("idx", ei, kernel::Access::Read, rank);
  Mem y = kb.buffer("y", Elem::F32, kernel::Access::ReadWrite, rank);
  Val dim = kb.scalar("dim", Elem::U32), v0 = kb.scalar("v0", Elem::U32);
  Val i0 = kb.scalar("i0", Elem::U32), n = kb.scalar("n", Elem::U32);
  Val pos = kb.absolute_pos();
  kb.if_in_bounds(pos, n, [&] {
    const auto c = coords(idx, pos, rank);
    const Target t = target(kb, idx, y, c, dim, i0, kb.u32(0));
    kb.if_(t.ok, [&] { y.atomic_add(t.at, v[offset(v, c, v0)]); });
  });
  return kb.build();
}

}  // namespace

std::optional<GpuTensor> cat(const std::vector<GpuTensor>& xs, std::size_t dim) {
  if (xs.empty()) return std::nullopt;
  for (const GpuTensor& t : xs)
    if (!native(t) || &t.compute() != &xs.front().compute() || t.dtype != xs.front().dtype)
      return std::nullopt;
  Shape out_shape = xs.front().shape;
  std::int64_t total = 0;
  for (const GpuTensor& t : xs) total += t.shape.dims[dim];
  out_shape.dims[dim] = total;
  GpuTensor out = empty(out_shape, xs.front().dtype, xs.front().compute(), xs.front().device);
  if (!native(out)) return std::nullopt;
  std::int64_t at = 0;
  for (const GpuTensor& t : xs) {
    GpuTensor part = out;
    part.shape = t.shape;
    part.offset = at * out.strides[dim];
    at += t.shape.dims[dim];
    if (!assign(part, t)) return std::nullopt;
  }
  return out;
}

std::optional<GpuTensor> slice_assign(const GpuTensor& t, const std::vector<SliceRange>& ranges,
                                      const GpuTensor& values, bool reuse) {
  for (const SliceRange& r : ranges)
    if (r.step <= 0) return std::nullopt;
  if (!native(t) || !native(values) || &t.compute() != &values.compute()) return std::nullopt;
  GpuTensor out = writable(t, reuse);
  GpuTensor region = out;
  for (std::size_t d = 0; d < ranges.size(); ++d) {
    const SliceRange& r = ranges[d];
    region.offset += r.start * out.strides[d];
    region.shape.dims[d] = r.count;
    region.strides[d] = out.strides[d] * r.step;
  }
  if (!assign(region, values)) return std::nullopt;
  return out;
}

std::optional<GpuTensor> select(const GpuTensor& x_in, std::size_t dim, const GpuTensor& idx_in) {
  if (!native(x_in) || !native(idx_in)) return std::nullopt;
  kernel::ComputeDevice& dev = x_in.compute();
  const GpuTensor x = contiguous(x_in), idx = contiguous(idx_in);
  Shape out_shape = x.shape;
  const std::int64_t m = idx.numel();
  out_shape.dims[dim] = m;
  GpuTensor out = empty(out_shape, x.dtype, dev, x.device);
  const std::int64_t n = out.numel();
  if (n == 0) return out;
  std::int64_t inner = 1;
  for (std::size_t d = dim + 1; d < x.shape.dims.size(); ++d) inner *= x.shape.dims[d];
  const Elem e = elem_of(x.dtype, "select"), ei = elem_of(idx.dtype, "select");
  std::ostringstream key;
  key << "select|" << static_cast<int>(e) << '|' << static_cast<int>(ei);
  const auto* k = compiled(dev, key.str(), [&] { return build_select(e, ei); });
  if (!k) return std::nullopt;
  dev.launch(*k, kernel::grid_for(k->kernel(), static_cast<std::uint64_t>(n)),
             {Arg::buf(x.buffer, 0, u32(x.offset + std::max<std::int64_t>(x.numel(), 1), "x")),
              Arg::buf(idx.buffer, 0, u32(idx.offset + std::max<std::int64_t>(m, 1), "idx")),
              Arg::buf(out.buffer, 0, u32(n, "out")), Arg::u32(u32(x.shape.dims[dim], "size")),
              Arg::u32(u32(m, "indices")), Arg::u32(u32(inner, "inner")),
              Arg::u32(u32(x.offset, "offset")), Arg::u32(u32(idx.offset, "offset")),
              Arg::u32(u32(n, "out"))});
  return out;
}

std::optional<GpuTensor> flip(const GpuTensor& t, const std::vector<std::size_t>& axes) {
  if (!native(t) || t.shape.dims.size() > kernel::kMaxRank) return std::nullopt;
  kernel::ComputeDevice& dev = t.compute();
  GpuTensor out = empty(t.shape, t.dtype, dev, t.device);
  const std::int64_t n = out.numel();
  if (n == 0) return out;
  const std::uint32_t rank = rank_of(t.shape);
  std::uint32_t mask = 0;
  for (std::size_t a : axes) mask |= std::uint32_t{1} << (rank - t.shape.dims.size() + a);
  const Elem e = elem_of(t.dtype, "flip");
  std::ostringstream key;
  key << "flip|" << static_cast<int>(e) << '|' << rank;
  const auto* k = compiled(dev, key.str(), [&] { return build_flip(e, rank); });
  if (!k) return std::nullopt;
  // t with its own strides (a size-1 dim has stride 0 in view_of, which reads the same).
  dev.launch(*k, kernel::grid_for(k->kernel(), static_cast<std::uint64_t>(n)),
             {view_of(t, t.shape, rank), Arg::buf(out.buffer, 0, u32(n, "out")),
              Arg::u32(u32(t.offset, "offset")), Arg::u32(mask), Arg::u32(u32(n, "out"))});
  return out;
}

std::optional<GpuTensor> gather(std::size_t dim, const GpuTensor& x_in, const GpuTensor& idx) {
  if (!native(x_in) || !native(idx)) return std::nullopt;
  kernel::ComputeDevice& dev = x_in.compute();
  const GpuTensor x = contiguous(x_in);
  GpuTensor out = empty(idx.shape, x.dtype, dev, x.device);
  const std::int64_t n = out.numel();
  if (n == 0) return out;
  const std::uint32_t rank = rank_of(idx.shape);
  const Elem e = elem_of(x.dtype, "gather"), ei = elem_of(idx.dtype, "gather");
  std::ostringstream key;
  key << "gather|" << static_cast<int>(e) << '|' << static_cast<int>(ei) << '|' << rank;
  const auto* k = compiled(dev, key.str(), [&] { return build_gather(e, ei, rank); });
  if (!k) return std::nullopt;
  // x as a view of its own shape and strides (the kernel reads its extents along dim).
  const Arg xa = own_view(x, rank);
  dev.launch(*k, kernel::grid_for(k->kernel(), static_cast<std::uint64_t>(n)),
             {xa, view_of(idx, idx.shape, rank), Arg::buf(out.buffer, 0, u32(n, "out")),
              Arg::u32(static_cast<std::uint32_t>(dim)), Arg::u32(u32(x.offset, "offset")),
              Arg::u32(u32(idx.offset, "offset")), Arg::u32(u32(n, "out"))});
  return out;
}

std::optional<GpuTensor> scatter_add(std::size_t dim, const GpuTensor& t, const GpuTensor& idx,
                                     const GpuTensor& values, bool reuse) {
  if (t.dtype != DType::F32 || values.dtype != DType::F32 || !native(t) || !native(idx) ||
      !native(values))
    return std::nullopt;
  kernel::ComputeDevice& dev = t.compute();
  const std::uint32_t rank = rank_of(t.shape);
  const Elem ei = elem_of(idx.dtype, "scatter");
  std::ostringstream key;
  key << "scatter_add|" << static_cast<int>(ei) << '|' << rank;
  const auto* k = compiled(dev, key.str(), [&] { return build_scatter_add(ei, rank); });
  if (!k) return std::nullopt;
  GpuTensor out = writable(t, reuse);
  const std::int64_t n = idx.numel();
  if (n == 0 || out.numel() == 0) return out;
  const Arg ya = own_view(out, rank);
  dev.launch(*k, kernel::grid_for(k->kernel(), static_cast<std::uint64_t>(n)),
             {view_of(values, idx.shape, rank), view_of(idx, idx.shape, rank), ya,
              Arg::u32(static_cast<std::uint32_t>(dim)), Arg::u32(u32(values.offset, "offset")),
              Arg::u32(u32(idx.offset, "offset")), Arg::u32(u32(n, "indices"))});
  return out;
}

/// A zeroed u32 buffer of `n` (at least one) elements for the claims of a scatter.
kernel::Buffer claims(kernel::ComputeDevice& dev, int device, std::int64_t n) {
  const std::optional<GpuTensor> z =
      full(Shape{std::max<std::int64_t>(n, 1)}, 0.0, DType::I32, dev, device);
  if (!z) throw UnsupportedError("[gpu index] the device has no 32-bit integers");
  return z->buffer;
}

std::optional<GpuTensor> scatter_assign(std::size_t dim, const GpuTensor& t, const GpuTensor& idx,
                                        const GpuTensor& values, bool reuse) {
  if (!native(t) || !native(idx) || !native(values) || values.dtype != t.dtype ||
      idx.numel() >= std::int64_t{0xffffffff})
    return std::nullopt;
  kernel::ComputeDevice& dev = t.compute();
  const std::uint32_t rank = rank_of(t.shape);
  const Elem e = elem_of(t.dtype, "scatter"), ei = elem_of(idx.dtype, "scatter");
  std::ostringstream key;
  key << "scatter_assign|" << static_cast<int>(e) << '|' << static_cast<int>(ei) << '|' << rank;
  const auto* kc =
      compiled(dev, key.str() + "|claim", [&] { return build_scatter_assign(e, ei, rank, true); });
  const auto* kw =
      compiled(dev, key.str(), [&] { return build_scatter_assign(e, ei, rank, false); });
  if (!kc || !kw) return std::nullopt;
  GpuTensor out = writable(t, reuse);
  const std::int64_t n = idx.numel();
  if (n == 0 || out.numel() == 0) return out;
  const Arg ya = own_view(out, rank);
  const kernel::Buffer winner = claims(dev, t.device, out.numel());
  for (const auto* k : {kc, kw})
    dev.launch(
        *k, kernel::grid_for(k->kernel(), static_cast<std::uint64_t>(n)),
        {view_of(values, idx.shape, rank), view_of(idx, idx.shape, rank), ya,
         Arg::buf(winner, 0, static_cast<std::uint64_t>(std::max<std::int64_t>(out.numel(), 1))),
         Arg::u32(static_cast<std::uint32_t>(dim)), Arg::u32(u32(values.offset, "offset")),
         Arg::u32(u32(idx.offset, "offset")), Arg::u32(u32(n, "indices"))});
  return out;
}

std::optional<GpuTensor> select_assign(std::size_t dim, const GpuTensor& t, const GpuTensor& idx_in,
                                       const GpuTensor& values_in, IndexUpdate update, bool reuse) {
  if (!native(t) || !native(idx_in) || !native(values_in) || values_in.dtype != t.dtype)
    return std::nullopt;
  if (update == IndexUpdate::Add && t.dtype != DType::F32) return std::nullopt;
  kernel::ComputeDevice& dev = t.compute();
  const Elem e = elem_of(t.dtype, "select_assign"), ei = elem_of(idx_in.dtype, "select_assign");
  std::ostringstream key;
  key << "select_assign|" << static_cast<int>(e) << '|' << static_cast<int>(ei) << '|';
  const auto kernel_of = [&](SelectPhase p) {
    return compiled(dev, key.str() + std::to_string(static_cast<int>(p)),
                    [&] { return build_select_assign(e, ei, p); });
  };
  const bool add = update == IndexUpdate::Add;
  const auto* k1 = kernel_of(add ? SelectPhase::Add : SelectPhase::Claim);
  const auto* k2 = add ? k1 : kernel_of(SelectPhase::Write);
  if (!k1 || !k2) return std::nullopt;
  GpuTensor out = writable(t, reuse);
  const GpuTensor values = contiguous(values_in), idx = contiguous(idx_in);
  const std::int64_t n = values.numel(), m = idx.numel();
  if (n == 0 || out.numel() == 0) return out;
  std::int64_t inner = 1;
  for (std::size_t d = dim + 1; d < t.shape.dims.size(); ++d) inner *= t.shape.dims[d];
  const kernel::Buffer winner = claims(dev, t.device, add ? 1 : t.shape.dims[dim]);
  const std::vector<Arg> args{
      Arg::buf(values.buffer, 0, u32(values.offset + n, "values")),
      Arg::buf(idx.buffer, 0, u32(idx.offset + std::max<std::int64_t>(m, 1), "idx")),
      Arg::buf(out.buffer, 0, u32(out.numel(), "out")),
      Arg::buf(winner, 0,
               static_cast<std::uint64_t>(add ? 1 : std::max<std::int64_t>(t.shape.dims[dim], 1))),
      Arg::u32(u32(t.shape.dims[dim], "size")),
      Arg::u32(u32(m, "indices")),
      Arg::u32(u32(inner, "inner")),
      Arg::u32(u32(values.offset, "offset")),
      Arg::u32(u32(idx.offset, "offset")),
      Arg::u32(u32(n, "values"))};
  dev.launch(*k1, kernel::grid_for(k1->kernel(), static_cast<std::uint64_t>(n)), args);
  if (!add) dev.launch(*k2, kernel::grid_for(k2->kernel(), static_cast<std::uint64_t>(n)), args);
  return out;
}

std::optional<GpuTensor> mask_where(const GpuTensor& t, const GpuTensor& mask,
                                    const GpuTensor& values, bool reuse) {
  if (!native(t) || !native(mask) || !native(values) || values.dtype != t.dtype)
    return std::nullopt;
  MapSpec spec{"mask_where", t.dtype, {}, [](auto in, auto) {
                 return kernel::select(in[1] != kernel::lit(in[1], 0), in[2], in[0]);
               }};
  const GpuTensor in[3] = {t, mask, values};
  return try_map(spec, in, t.shape, {}, reuse ? 1u : 0u);
}

std::optional<GpuTensor> mask_fill(const GpuTensor& t, const GpuTensor& mask, double value,
                                   bool reuse) {
  if (!native(t) || !native(mask)) return std::nullopt;
  const Elem e = elem_of(t.dtype, "mask_fill");
  const bool is_float = t.dtype == DType::F32 || t.dtype == DType::F16 || t.dtype == DType::BF16 ||
                        t.dtype == DType::F64;
  const Elem se = is_float ? (t.dtype == DType::F64 ? Elem::F64 : Elem::F32) : e;
  MapSpec spec{"mask_fill", t.dtype, {se}, [](auto in, auto sc) {
                 Val v = in[0];
                 Val s = sc[0];
                 if (s.elem() != v.elem()) s = kernel::cast(s, v.elem());
                 return kernel::select(in[1] != kernel::lit(in[1], 0), s, v);
               }};
  ScalarArg arg{se, value, static_cast<std::int64_t>(value)};
  if (!is_float) {
    // The value in the tensor's type, as the CPU's static_cast<T>(value).
    if (t.dtype == DType::Bool) arg.i = value != 0.0 ? 1 : 0;
  }
  const GpuTensor in[2] = {t, mask};
  return try_map(spec, in, t.shape, std::span<const ScalarArg>(&arg, 1), reuse ? 1u : 0u);
}

}  // namespace ember::gpu
