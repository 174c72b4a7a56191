// Reductions along one dim (sum, product, mean, max, min) on the GPU backends.
//
// The input is made contiguous and seen as [outer, len, inner]. Every thread folds a bounded
// number of values (at most kChunk, or kPer per thread of a workgroup): Mesa's llvmpipe stops
// any loop after 65,535 iterations, and bounded work per thread also spreads a long row over
// many workgroups. A pass turns [outer, len, inner] into [outer, ceil(len / piece), inner]
// partials in the accumulator type; passes repeat until one value is left per output (the last
// pass divides by the count for mean and casts to the output type). Two kernels:
//   - rows (inner == 1, long rows): a workgroup of 256 threads folds a piece of kGroup * kPer
//     values of a row, each thread every 256th value (neighbouring threads read neighbouring
//     values), then combines the 256 partials as a tree in shared memory;
//   - cols (inner > 1, or short rows): one thread per (output, piece of kChunk values), values
//     `inner` apart (neighbouring threads read neighbouring values when inner > 1).
// The partial sums also make the sums more accurate than one running sum per thread.
//
// Accumulators: f32 for f16/bf16/f32 (f64 for f64), i64 for the integer types, as wide as the
// CPU backend's for integers; float sums differ from the CPU's (double) by rounding only.
#include <algorithm>

#include "ember/core/error.hpp"
#include "ember/gpu/ops.hpp"
#include "ember/kernel/cache.hpp"
#include "kernels.hpp"

namespace ember::gpu {

namespace {

using namespace detail::names;

const char* reduce_name(Reduce r) {
  switch (r) {
    case Reduce::Sum:
      return "sum";
    case Reduce::Prod:
      return "prod";
    case Reduce::Mean:
      return "mean";
    case Reduce::Max:
      return "max";
    case Reduce::Min:
      return "min";
  }
  return "?";
}

Elem acc_elem(DType d) {
  switch (d) {
    case DType::F64:
      return Elem::F64;
    case DType::F32:
    case DType::F16:
    case DType::BF16:
      return Elem::F32;
    default:
      return Elem::I64;
  }
}

Val combine(Reduce r, Val a, Val b) {
  switch (r) {
    case Reduce::Sum:
    case Reduce::Mean:
      return a + b;
    case Reduce::Prod:
      return a * b;
    case Reduce::Max:
      return kernel::max(a, b);
    case Reduce::Min:
      return kernel::min(a, b);
  }
  return a;
}

/// The fold's start: the identity of sum/product, the row's first value for max/min (which
/// are idempotent, so every thread may start from it).
Val start(Reduce r, KernelBuilder& kb, Elem acc, const Mem& x, Val first) {
  if (r == Reduce::Max || r == Reduce::Min) return kernel::cast(x[first], acc);
  return kb.constant(acc, r == Reduce::Prod ? 1.0 : 0.0);
}

Val finish(Reduce r, Val acc, Val count) {
  if (r == Reduce::Mean) return acc / kernel::cast(count, acc.elem());
  return acc;
}

constexpr std::uint32_t kPer = 16;    // values per thread of a rows workgroup
constexpr std::uint32_t kChunk = 64;  // values per thread of the cols kernel

/// One pass: x [outer, len, inner] (element type `in`) -> y [outer, pieces, inner] (type
/// `out`). `last`: y is the result (finish() applied).
kernel::Kernel build(Reduce r, Elem in, Elem out, Elem acc, bool rows, bool last) {
  // Inner passes of mean are sums; the last one divides by the whole length.
  const Reduce fold = r == Reduce::Mean && !last ? Reduce::Sum : r;
  KernelBuilder kb(std::string("reduce_") + reduce_name(fold) + (rows ? "_rows" : "_cols") +
                       (last ? "" : "_part"),
                   {kGroup, 1, 1});
  Mem x = kb.buffer("x", in, kernel::Access::Read);
  Mem y = kb.buffer("y", out, kernel::Access::Write);
  Val n_out = kb.scalar("n_out", Elem::U32);  // outer * pieces * inner
  Val len = kb.scalar("len", Elem::U32);
  Val inner = kb.scalar("inner", Elem::U32);
  Val pieces = kb.scalar("pieces", Elem::U32);
  Val count = kb.scalar("count", Elem::U32);  // the reduced dim's full length (mean)
  const auto result = [&](Val a) { return kernel::cast(last ? finish(fold, a, count) : a, out); };
  if (!rows) {
    Val pos = kb.absolute_pos();
    kb.if_in_bounds(pos, n_out, [&] {
      Val i = pos % inner, t = pos / inner;
      Val piece = t % pieces, o = t / pieces;
      Val j0 = piece * kChunk;
      Val j1 = kernel::min(len, j0 + kChunk);
      Val base = o * len * inner + i;
      Var a = kb.var(start(fold, kb, acc, x, base + j0 * inner));
      kb.for_(j0, j1, kb.u32(1),
              [&](Val j) { a = combine(fold, a, kernel::cast(x[base + j * inner], acc)); });
      y[pos] = result(a.get());
    });
    return kb.build();
  }
  Mem part = kb.shared(acc, kGroup);
  Val w = kb.block_idx(0) + kb.block_idx(1) * kb.grid_dim(0);  // (row, piece)
  Val lid = kb.local_linear_idx();
  Val live = w < n_out;
  kb.if_(live, [&] {
    Val row = w / pieces, piece = w % pieces;
    Val j0 = piece * (kGroup * kPer);
    Val j1 = kernel::min(len, j0 + kGroup * kPer);
    Val base = row * len;
    Var a = kb.var(start(fold, kb, acc, x, base + j0));
    kb.for_(j0 + lid, j1, kb.u32(kGroup),
            [&](Val j) { a = combine(fold, a, kernel::cast(x[base + j], acc)); });
    part[lid] = a.get();
  });
  kb.barrier();
  for (std::uint32_t s = kGroup / 2; s > 0; s /= 2) {
    kb.if_((lid < s) & live, [&] { part[lid] = combine(fold, part[lid], part[lid + s]); });
    kb.barrier();
  }
  kb.if_((lid == 0u) & live, [&] { y[w] = result(part[0u]); });
  return kb.build();
}

kernel::LruCache<kernel::CompiledPtr>& cache() {
  static kernel::LruCache<kernel::CompiledPtr> c(256);
  return c;
}

/// How a pass folds a dim of `len` values (`inner` apart): the rows kernel or the cols one,
/// and the pieces (partials per output) it leaves; 1 piece: the pass gives the result.
struct Split {
  bool rows;
  std::int64_t pieces;
};
Split split(std::int64_t len, std::int64_t inner) {
  const bool rows = inner == 1 && len > kChunk;
  const std::int64_t piece = rows ? kGroup * kPer : kChunk;
  return {rows, std::max<std::int64_t>((len + piece - 1) / piece, 1)};  // len 0: 1 piece
}

/// Runs one pass over x ([outer, len, inner] in `in`) into a new buffer y of `out` elements.
void pass(Reduce r, kernel::ComputeDevice& dev, const kernel::Buffer& x, std::uint64_t x_off,
          Elem in, const kernel::Buffer& y, Elem out, Elem acc, std::int64_t outer,
          std::int64_t len, std::int64_t inner, std::int64_t count, bool last) {
  const auto [rows, pieces] = split(len, inner);
  const std::int64_t n_out = outer * pieces * inner;
  const std::string key = std::to_string(reinterpret_cast<std::uintptr_t>(&dev)) + "|" +
                          reduce_name(r) + "|" + std::to_string(static_cast<int>(in)) + "|" +
                          std::to_string(static_cast<int>(out)) + (rows ? "|rows" : "|cols") +
                          (last ? "|last" : "|part");
  auto compiled = cache().get(key);
  if (!compiled) {
    compiled = dev.compile(build(r, in, out, acc, rows, last));
    cache().put(key, *compiled);
  }
  const std::uint64_t in_len =
      static_cast<std::uint64_t>(std::max<std::int64_t>(outer * len * inner, 1));
  const Arg args[] = {Arg::buf(x, x_off, in_len),
                      Arg::buf(y, 0, static_cast<std::uint64_t>(n_out)),
                      Arg::u32(static_cast<std::uint32_t>(n_out)),
                      Arg::u32(static_cast<std::uint32_t>(len)),
                      Arg::u32(static_cast<std::uint32_t>(inner)),
                      Arg::u32(static_cast<std::uint32_t>(pieces)),
                      Arg::u32(static_cast<std::uint32_t>(count))};
  kernel::Grid grid;
  if (rows) {
    const std::uint32_t max_x = dev.properties().max_grid[0];
    grid.x = static_cast<std::uint32_t>(std::min<std::int64_t>(n_out, max_x));
    grid.y = static_cast<std::uint32_t>((n_out + grid.x - 1) / grid.x);
  } else {
    grid = kernel::grid_for((*compiled)->kernel(), static_cast<std::uint64_t>(n_out));
  }
  dev.launch(**compiled, grid, args);
}

}  // namespace

bool reduce_native(Reduce r, const GpuTensor& x, std::int64_t dim) {
  if (!native_dtype(x.dtype, x.compute())) return false;
  const bool is_float = x.dtype == DType::F32 || x.dtype == DType::F16 || x.dtype == DType::BF16 ||
                        x.dtype == DType::F64;
  if (!is_float && (r == Reduce::Mean || !native_dtype(DType::I64, x.compute()))) return false;
  if (x.dtype == DType::Bool) return false;
  if (x.numel() > std::int64_t{0xffffffff}) return false;
  // max/min of an empty dim is an error the host path reports.
  if ((r == Reduce::Max || r == Reduce::Min) && dim >= 0 && x.shape.dims[dim] == 0) return false;
  return true;
}

GpuTensor reduce(Reduce r, const GpuTensor& x_in, std::int64_t dim) {
  const GpuTensor x = packed(x_in);
  std::int64_t outer = 1, len = 1, inner = 1;
  Shape out_shape{1};
  if (dim < 0) {
    len = x.numel();
  } else {
    for (std::int64_t d = 0; d < dim; ++d) outer *= x.shape.dims[d];
    len = x.shape.dims[dim];
    for (std::size_t d = dim + 1; d < x.shape.dims.size(); ++d) inner *= x.shape.dims[d];
    out_shape = x.shape;
    out_shape.dims[dim] = 1;
  }
  kernel::ComputeDevice& dev = x.compute();
  GpuTensor out = empty(out_shape, x.dtype, dev, x.device);
  if (outer * inner == 0) return out;
  const Elem e = elem_of(x.dtype, reduce_name(r)), acc = acc_elem(x.dtype);
  // Passes until one value per output is left; partials live in the accumulator type.
  kernel::Buffer cur = x.buffer;
  auto cur_off = static_cast<std::uint64_t>(x.offset);
  Elem cur_elem = e;
  const std::int64_t count = len;
  for (;;) {
    const std::int64_t pieces = split(len, inner).pieces;
    if (pieces == 1) {
      pass(r, dev, cur, cur_off, cur_elem, out.buffer, e, acc, outer, len, inner, count, true);
      return out;
    }
    kernel::Buffer next = dev.alloc(static_cast<std::size_t>(outer * pieces * inner) *
                                    static_cast<std::size_t>(kernel::elem_bytes(acc)));
    pass(r, dev, cur, cur_off, cur_elem, next, acc, acc, outer, len, inner, count, false);
    cur = std::move(next);
    cur_off = 0;
    cur_elem = acc;
    len = pieces;
  }
}

}  // namespace ember::gpu
