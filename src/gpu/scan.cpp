// Line kernels on the GPU backends: cumulative scans, max/min with indices, any/all, var_mean.
//
// The input is made contiguous and seen as [outer, len, inner]: `outer * inner` lines of `len`
// values `inner` apart. One thread walks one line in order, as the CPU backend does, so the
// results are its values. The walk runs in passes of at most kPiece values: Mesa's llvmpipe
// stops a shader loop after 65,535 iterations, so a long line continues in the next launch
// from the state (running value, index, ...) the previous one left in a buffer of one entry
// per line. Neighbouring threads take neighbouring lines, which read neighbouring values when
// inner > 1.
#include "ember/gpu/scan.hpp"

#include <algorithm>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "ember/core/error.hpp"
#include "ember/gpu/ops.hpp"
#include "kernels.hpp"

namespace ember::gpu {

namespace {

using namespace detail::names;

constexpr std::int64_t kPiece = 4096;  // values per line and launch

/// The accumulator of sums and products: f64 for floats where the device has it (the CPU's),
/// else f32; i64 for integers.
Elem sum_elem(Elem e, const kernel::ComputeDevice& dev) {
  if (!is_float_elem(e)) return Elem::I64;
  return native_dtype(DType::F64, dev) ? Elem::F64 : Elem::F32;
}

/// `a` stored as `out` the way the CPU stores its accumulator: f16/bf16 through f32.
Val store(Val a, Elem out) {
  if (a.elem() == out) return a;
  if ((out == Elem::F16 || out == Elem::BF16) && a.elem() == Elem::F64)
    return kernel::cast(kernel::cast(a, Elem::F32), out);
  return kernel::cast(a, out);
}

/// The common part of a line kernel: the scalars after its buffers and the line's position.
/// `body(t, at)` runs for line t < lines, with at(k) the element index of value k.
template <class Body>
void line_frame(KernelBuilder& kb, Body body) {
  Val lines = kb.scalar("lines", Elem::U32), len = kb.scalar("len", Elem::U32);
  Val inner = kb.scalar("inner", Elem::U32);
  Val k0 = kb.scalar("k0", Elem::U32), k1 = kb.scalar("k1", Elem::U32);
  Val first = kb.scalar("first", Elem::U32);
  Val t = kb.absolute_pos();
  kb.if_in_bounds(t, lines, [&] {
    Val base = (t / inner) * len * inner + t % inner;
    body(
        t, [base, inner](Val k) { return base + k * inner; }, k0, k1, first != 0u);
  });
}

/// Whether running value `a` gives way to `v`. Scan (cummax/cummin): a tie or better, and a
/// NaN once seen stays. ScanIndexed (with indices, PyTorch's rule): every NaN and every tie.
/// First (max/min with indices): a strictly better value or the first NaN.
enum class Rule { Scan, ScanIndexed, First };
Val takes(Rule rule, bool max, Val a, Val v) {
  const bool fp = is_float_elem(v.elem());
  Val better = rule == Rule::First ? (max ? v > a : v < a) : (max ? v >= a : v <= a);
  if (!fp) return better;
  if (rule == Rule::ScanIndexed) return (v != v) | ((a == a) & better);
  return (a == a) & (better | (v != v));
}

/// Scans (`indexed`: cummax/cummin with indices). Buffers: x, y, state[, yi, state_i].
kernel::Kernel build_scan(Scan s, bool indexed, Elem e, Elem acc) {
  KernelBuilder kb(std::string("scan") + (indexed ? "_indexed" : ""), {kGroup, 1, 1});
  Mem x = kb.buffer("x", e, kernel::Access::Read);
  Mem y = kb.buffer("y", e, kernel::Access::Write);
  Mem state = kb.buffer("state", acc, kernel::Access::ReadWrite);
  std::optional<Mem> yi, si;
  if (indexed) {
    yi.emplace(kb.buffer("yi", Elem::I64, kernel::Access::Write));
    si.emplace(kb.buffer("state_i", Elem::I64, kernel::Access::ReadWrite));
  }
  const bool extreme = s == Scan::Max || s == Scan::Min;
  line_frame(kb, [&](Val t, auto at, Val k0, Val k1, Val first) {
    Val init = extreme ? kernel::cast(x[at(kb.u32(0))], acc)
                       : kb.constant(acc, s == Scan::Prod ? 1.0 : 0.0);
    Var a = kb.var(kernel::select(first, init, state[t]));
    Var ai = kb.var(indexed ? kernel::select(first, kb.constant(Elem::I64, 0), (*si)[t])
                            : kb.constant(Elem::I64, 0));
    kb.for_(k0, k1, kb.u32(1), [&](Val k) {
      Val v = kernel::cast(x[at(k)], acc);
      if (s == Scan::Sum) {
        a = a + v;
      } else if (s == Scan::Prod) {
        a = a * v;
      } else {
        Val take = takes(indexed ? Rule::ScanIndexed : Rule::Scan, s == Scan::Max, a, v);
        a = kernel::select(take, v, a);
        if (indexed) {
          ai = kernel::select(take, kernel::cast(k, Elem::I64), ai);
          (*yi)[at(k)] = ai.get();
        }
      }
      y[at(k)] = store(a, e);
    });
    state[t] = a.get();
    if (indexed) (*si)[t] = ai.get();
  });
  return kb.build();
}

/// max/min with the first extreme's index. Buffers: x, y, yi, state, state_i. Every pass
/// writes y and yi; the last pass's values stand.
kernel::Kernel build_extreme(bool max, Elem e, Elem acc) {
  KernelBuilder kb(max ? "max_with_index" : "min_with_index", {kGroup, 1, 1});
  Mem x = kb.buffer("x", e, kernel::Access::Read);
  Mem y = kb.buffer("y", e, kernel::Access::Write);
  Mem yi = kb.buffer("yi", Elem::I64, kernel::Access::Write);
  Mem state = kb.buffer("state", acc, kernel::Access::ReadWrite);
  Mem si = kb.buffer("state_i", Elem::I64, kernel::Access::ReadWrite);
  line_frame(kb, [&](Val t, auto at, Val k0, Val k1, Val first) {
    Var a = kb.var(kernel::select(first, kernel::cast(x[at(kb.u32(0))], acc), state[t]));
    Var ai = kb.var(kernel::select(first, kb.constant(Elem::I64, 0), si[t]));
    kb.for_(k0, k1, kb.u32(1), [&](Val k) {
      Val v = kernel::cast(x[at(k)], acc);
      Val take = takes(Rule::First, max, a, v);
      a = kernel::select(take, v, a);
      ai = kernel::select(take, kernel::cast(k, Elem::I64), ai);
    });
    state[t] = a.get();
    si[t] = ai.get();
    y[t] = store(a, e);
    yi[t] = ai.get();
  });
  return kb.build();
}

/// any/all of x != 0. Buffers: x, y (bool), state (u32).
kernel::Kernel build_any_all(bool all, Elem e) {
  KernelBuilder kb(all ? "all_dim" : "any_dim", {kGroup, 1, 1});
  Mem x = kb.buffer("x", e, kernel::Access::Read);
  Mem y = kb.buffer("y", Elem::Bool, kernel::Access::Write);
  Mem state = kb.buffer("state", Elem::U32, kernel::Access::ReadWrite);
  line_frame(kb, [&](Val t, auto at, Val k0, Val k1, Val first) {
    Var a = kb.var(kernel::select(first, kb.u32(all ? 1 : 0), state[t]));
    kb.for_(k0, k1, kb.u32(1), [&](Val k) {
      Val raw = x[at(k)];
      Val nz =
          kernel::select(e == Elem::Bool ? raw : raw != kernel::lit(raw, 0), kb.u32(1), kb.u32(0));
      a = all ? (a & nz) : (a | nz);
    });
    state[t] = a.get();
    y[t] = a != 0u;
  });
  return kb.build();
}

/// var_mean's two walks. `squares` false: state = sum of x. `squares` true: state holds the
/// sum on the first pass (turned into the mean m), then sum((x - m)^2) accumulates in
/// state_sq; every pass writes var and mean, the last one's stand. Buffers: x, var, mean,
/// state, state_sq.
kernel::Kernel build_var_mean(bool squares, Elem e, Elem acc) {
  KernelBuilder kb(squares ? "var_mean_squares" : "var_mean_sum", {kGroup, 1, 1});
  Mem x = kb.buffer("x", e, kernel::Access::Read);
  Mem var = kb.buffer("var", e, kernel::Access::Write);
  Mem mean = kb.buffer("mean", e, kernel::Access::Write);
  Mem state = kb.buffer("state", acc, kernel::Access::ReadWrite);
  Mem sq = kb.buffer("state_sq", acc, kernel::Access::ReadWrite);
  Val count = kb.scalar("count", acc), dof = kb.scalar("dof", acc);
  line_frame(kb, [&](Val t, auto at, Val k0, Val k1, Val first) {
    if (!squares) {
      Var a = kb.var(kernel::select(first, kb.constant(acc, 0), state[t]));
      kb.for_(k0, k1, kb.u32(1), [&](Val k) { a = a + kernel::cast(x[at(k)], acc); });
      state[t] = a.get();
      return;
    }
    Val m = state[t] / count;
    Var a = kb.var(kernel::select(first, kb.constant(acc, 0), sq[t]));
    kb.for_(k0, k1, kb.u32(1), [&](Val k) {
      Val d = kernel::cast(x[at(k)], acc) - m;
      a = a + d * d;
    });
    sq[t] = a.get();
    var[t] = store(a / dof, e);
    mean[t] = store(m, e);
  });
  return kb.build();
}

std::uint32_t u32(std::int64_t v, const char* what) {
  return detail::u32_index(v, "gpu scan", what);
}

bool served(const GpuTensor& x) {
  return native_dtype(x.dtype, x.compute()) && x.dtype != DType::Bool &&
         native_dtype(DType::I64, x.compute()) && x.numel() <= std::int64_t{0xffffffff};
}

Shape keep_dim(Shape s, std::int64_t dim) {
  s.dims[dim] = 1;
  return s;
}

/// A scratch buffer of `n` elements of `e` (at least one). kernel::Arg does not own its buffer:
/// keep the result in a variable for as long as launches use it.
kernel::Buffer scratch(kernel::ComputeDevice& dev, std::int64_t n, Elem e) {
  return dev.alloc(static_cast<std::size_t>(std::max<std::int64_t>(n, 1)) *
                   static_cast<std::size_t>(kernel::elem_bytes(e)));
}

/// Launches `k` over the lines of `l` in passes of kPiece values: `fixed` are the kernel's
/// buffers and scalars before line_frame's.
void walk(kernel::ComputeDevice& dev, const kernel::CompiledKernel& k, const Lines& l,
          const std::vector<Arg>& fixed) {
  const std::uint32_t lines = u32(l.count(), "line count");
  const std::int64_t passes = std::max<std::int64_t>((l.len + kPiece - 1) / kPiece, 1);
  for (std::int64_t p = 0; p < passes; ++p) {
    std::vector<Arg> args = fixed;
    args.push_back(Arg::u32(lines));
    args.push_back(Arg::u32(u32(l.len, "dim size")));
    args.push_back(Arg::u32(u32(l.inner, "inner size")));
    args.push_back(Arg::u32(static_cast<std::uint32_t>(p * kPiece)));
    args.push_back(Arg::u32(static_cast<std::uint32_t>(std::min(l.len, (p + 1) * kPiece))));
    args.push_back(Arg::u32(p == 0 ? 1 : 0));
    dev.launch(k, kernel::grid_for(k.kernel(), lines), args);
  }
}

std::uint64_t span(std::int64_t n) {
  return static_cast<std::uint64_t>(std::max<std::int64_t>(n, 1));
}

std::string key_of(const char* what, std::initializer_list<int> parts) {
  std::ostringstream k;
  k << what;
  for (int p : parts) k << '|' << p;
  return k.str();
}

}  // namespace

std::optional<GpuTensor> scan(Scan s, const GpuTensor& x_in, std::int64_t dim) {
  if (!served(x_in)) return std::nullopt;
  kernel::ComputeDevice& dev = x_in.compute();
  const Elem e = elem_of(x_in.dtype, "scan");
  const bool extreme = s == Scan::Max || s == Scan::Min;
  const Elem acc = extreme ? compare_elem(e) : sum_elem(e, dev);
  const auto* k = compiled(
      dev, key_of("scan", {static_cast<int>(s), static_cast<int>(e), static_cast<int>(acc)}),
      [&] { return build_scan(s, false, e, acc); });
  if (!k) return std::nullopt;
  GpuTensor out = empty(x_in.shape, x_in.dtype, dev, x_in.device);
  if (x_in.numel() == 0) return out;
  const GpuTensor x = packed(x_in);
  const Lines l = lines_of(x.shape, dim);
  const kernel::Buffer state = scratch(dev, l.count(), acc);
  walk(dev, *k, l,
       {Arg::buf(x.buffer, static_cast<std::uint64_t>(x.offset), span(x.numel())),
        Arg::buf(out.buffer, 0, span(x.numel())), Arg::buf(state, 0, span(l.count()))});
  return out;
}

std::optional<std::pair<GpuTensor, GpuTensor>> scan_with_indices(bool max, const GpuTensor& x_in,
                                                                 std::int64_t dim) {
  if (!served(x_in)) return std::nullopt;
  kernel::ComputeDevice& dev = x_in.compute();
  const Elem e = elem_of(x_in.dtype, "scan"), acc = compare_elem(e);
  const Scan s = max ? Scan::Max : Scan::Min;
  const auto* k = compiled(dev, key_of("scan_indexed", {static_cast<int>(s), static_cast<int>(e)}),
                           [&] { return build_scan(s, true, e, acc); });
  if (!k) return std::nullopt;
  GpuTensor out = empty(x_in.shape, x_in.dtype, dev, x_in.device);
  GpuTensor idx = empty(x_in.shape, DType::I64, dev, x_in.device);
  if (x_in.numel() == 0) return std::pair{out, idx};
  const GpuTensor x = packed(x_in);
  const Lines l = lines_of(x.shape, dim);
  const kernel::Buffer state = scratch(dev, l.count(), acc);
  const kernel::Buffer state_i = scratch(dev, l.count(), Elem::I64);
  walk(dev, *k, l,
       {Arg::buf(x.buffer, static_cast<std::uint64_t>(x.offset), span(x.numel())),
        Arg::buf(out.buffer, 0, span(x.numel())), Arg::buf(state, 0, span(l.count())),
        Arg::buf(idx.buffer, 0, span(x.numel())), Arg::buf(state_i, 0, span(l.count()))});
  return std::pair{out, idx};
}

std::optional<std::pair<GpuTensor, GpuTensor>> extreme_with_indices(bool max, const GpuTensor& x_in,
                                                                    std::int64_t dim) {
  if (!served(x_in) || x_in.shape.dims[dim] == 0) return std::nullopt;
  kernel::ComputeDevice& dev = x_in.compute();
  const Elem e = elem_of(x_in.dtype, "max/min"), acc = compare_elem(e);
  const auto* k = compiled(dev, key_of("extreme", {max ? 1 : 0, static_cast<int>(e)}),
                           [&] { return build_extreme(max, e, acc); });
  if (!k) return std::nullopt;
  const Shape shape = keep_dim(x_in.shape, dim);
  GpuTensor out = empty(shape, x_in.dtype, dev, x_in.device);
  GpuTensor idx = empty(shape, DType::I64, dev, x_in.device);
  if (out.numel() == 0) return std::pair{out, idx};
  const GpuTensor x = packed(x_in);
  const Lines l = lines_of(x.shape, dim);
  const kernel::Buffer state = scratch(dev, l.count(), acc);
  const kernel::Buffer state_i = scratch(dev, l.count(), Elem::I64);
  walk(dev, *k, l,
       {Arg::buf(x.buffer, static_cast<std::uint64_t>(x.offset), span(x.numel())),
        Arg::buf(out.buffer, 0, span(l.count())), Arg::buf(idx.buffer, 0, span(l.count())),
        Arg::buf(state, 0, span(l.count())), Arg::buf(state_i, 0, span(l.count()))});
  return std::pair{out, idx};
}

std::optional<GpuTensor> any_all(bool all, const GpuTensor& x_in, std::int64_t dim) {
  if (!native_dtype(x_in.dtype, x_in.compute()) || x_in.numel() > std::int64_t{0xffffffff})
    return std::nullopt;
  kernel::ComputeDevice& dev = x_in.compute();
  const Elem e = elem_of(x_in.dtype, all ? "all_dim" : "any_dim");
  const auto* k = compiled(dev, key_of("any_all", {all ? 1 : 0, static_cast<int>(e)}),
                           [&] { return build_any_all(all, e); });
  if (!k) return std::nullopt;
  const Shape shape = keep_dim(x_in.shape, dim);
  GpuTensor out = empty(shape, DType::Bool, dev, x_in.device);
  if (out.numel() == 0) return out;
  const GpuTensor x = packed(x_in);
  const Lines l = lines_of(x.shape, dim);
  const kernel::Buffer state = scratch(dev, l.count(), Elem::U32);
  walk(dev, *k, l,
       {Arg::buf(x.buffer, static_cast<std::uint64_t>(x.offset), span(x.numel())),
        Arg::buf(out.buffer, 0, span(l.count())), Arg::buf(state, 0, span(l.count()))});
  return out;
}

std::optional<std::pair<GpuTensor, GpuTensor>> var_mean(const GpuTensor& x_in, std::int64_t dim,
                                                        std::int64_t correction) {
  if (!served(x_in)) return std::nullopt;
  kernel::ComputeDevice& dev = x_in.compute();
  const Elem e = elem_of(x_in.dtype, "var_mean");
  if (!is_float_elem(e)) return std::nullopt;
  const Elem acc = sum_elem(e, dev);
  const auto* ks =
      compiled(dev, key_of("var_mean_sum", {static_cast<int>(e), static_cast<int>(acc)}),
               [&] { return build_var_mean(false, e, acc); });
  const auto* kq =
      compiled(dev, key_of("var_mean_sq", {static_cast<int>(e), static_cast<int>(acc)}),
               [&] { return build_var_mean(true, e, acc); });
  if (!ks || !kq) return std::nullopt;
  const Shape shape = keep_dim(x_in.shape, dim);
  GpuTensor var = empty(shape, x_in.dtype, dev, x_in.device);
  GpuTensor mean = empty(shape, x_in.dtype, dev, x_in.device);
  if (var.numel() == 0) return std::pair{var, mean};
  const GpuTensor x = packed(x_in);
  const Lines l = lines_of(x.shape, dim);
  const kernel::Buffer sum = scratch(dev, l.count(), acc), squares = scratch(dev, l.count(), acc);
  const std::vector<Arg> fixed{
      Arg::buf(x.buffer, static_cast<std::uint64_t>(x.offset), span(x.numel())),
      Arg::buf(var.buffer, 0, span(l.count())),
      Arg::buf(mean.buffer, 0, span(l.count())),
      Arg::buf(sum, 0, span(l.count())),
      Arg::buf(squares, 0, span(l.count())),
      Arg::scalar(acc, static_cast<double>(l.len)),
      Arg::scalar(acc, std::max(0.0, static_cast<double>(l.len - correction)))};
  walk(dev, *ks, l, fixed);
  walk(dev, *kq, l, fixed);
  return std::pair{var, mean};
}

}  // namespace ember::gpu
