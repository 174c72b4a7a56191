// The row kernels of the GPU backends: the softmax family, layer_norm and rms_norm in one
// launch each, cross-entropy's row losses in one (ember/gpu/rows.hpp).
//
// Rows (the normalised values are contiguous): a team of threads per row (256 threads for
// long rows, fewer for short ones, several teams per workgroup of 256), in three phases (a
// fold, a second fold, the write; rms_norm has one fold). Where the row fits, each thread
// holds up to 8 vectors of the row in registers: the builder unrolls the thread's slots, so
// they are plain variables of the generated code, and the row is read from memory once and
// written once (a [8192, 8192] f32 softmax moves 2 x 256 MiB). Longer rows take the looped
// variant, whose phases read the row again (from the L2 cache: a workgroup works on one row at
// a time). Neighbouring threads read neighbouring vectors. A fold combines the thread's
// values, then the team's: between the lanes of a subgroup by shuffles, then between
// subgroups through shared memory as a tree.
// Columns (softmax along a dim with inner > 1): one thread per line, three passes along it.
//
// Formulas and the order of operations follow the CPU backend (src/cpu/activation.cpp,
// activation_nn.cpp); the kernels allow contraction (a * b + c as one FMA), so values differ
// from the CPU's by rounding.
#include "ember/gpu/rows.hpp"

#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "ember/gpu/ops.hpp"
#include "kernels.hpp"

namespace ember::gpu {

namespace {

using namespace detail::names;

constexpr std::uint32_t kMaxPer = 8;  // vectors per thread held in registers
// Mesa's llvmpipe ends a shader invocation's loops after 65,535 iterations in all (every loop
// of the invocation counts towards one limit, as measured): the columns kernel walks a line
// three times, and the looped rows kernel ceil(vectors / team) times per phase. Longer walks
// take the host path on a software device.
constexpr std::int64_t kMaxLoopIterations = 65535;

const char* op_name(RowOp op) {
  switch (op) {
    case RowOp::Softmax:
      return "softmax";
    case RowOp::LogSoftmax:
      return "log_softmax";
    case RowOp::Softmin:
      return "softmin";
    case RowOp::QuietSoftmax:
      return "quiet_softmax";
    case RowOp::LayerNorm:
      return "layer_norm";
    case RowOp::RmsNorm:
      return "rms_norm";
    case RowOp::CrossEntropy:
      return "cross_entropy";
  }
  return "?";
}

bool softmax_like(RowOp op) {
  return op == RowOp::Softmax || op == RowOp::LogSoftmax || op == RowOp::Softmin ||
         op == RowOp::QuietSoftmax;
}

/// The larger of a and b, NaN when either is NaN (the CPU's `v > m || v != v`).
Val nan_max(Val a, Val b) {
  return kernel::select((a > b) | kernel::is_nan(a), a, b);
}

enum class Fold { Max, Sum };

Val combine(Fold f, Val a, Val b) {
  return f == Fold::Max ? nan_max(a, b) : a + b;
}

/// The lanes of `v` folded into one value.
Val fold_lanes(Fold f, Val v) {
  Val r = kernel::extract(v, 0);
  for (int l = 1; l < v.lanes(); ++l) r = combine(f, r, kernel::extract(v, l));
  return r;
}

/// Every thread's `t` folded over its team of `team` threads (lid = team's first + tid; all
/// threads of the workgroup must call it). The first levels exchange values between the lanes
/// of a subgroup (`lanes` = min(team, subgroup size) lanes, a butterfly that leaves the result
/// in every lane); the subgroups' values then meet in shared memory as a tree, read by every
/// thread before `red` is written again. lanes 1: shared memory only.
Val fold_team(KernelBuilder& kb, const Mem& red, Val lid, Val tid, std::uint32_t team,
              std::uint32_t lanes, Fold f, Val t) {
  for (std::uint32_t off = lanes / 2; off > 0; off /= 2)
    t = combine(f, t, kernel::shuffle_xor(t, kb.u32(off)));
  if (lanes >= team) return t;
  Val first = (lid - tid) / lanes;  // the team's first slot in `red`
  kb.if_(tid % lanes == 0u, [&] { red[lid / lanes] = t; });
  kb.barrier();
  for (std::uint32_t s = team / lanes / 2; s > 0; s /= 2) {
    kb.if_(tid < s, [&] { red[first + tid] = combine(f, red[first + tid], red[first + tid + s]); });
    kb.barrier();
  }
  Val r = red[first];
  kb.barrier();
  return r;
}

struct Plan {
  RowOp op = RowOp::Softmax;
  Elem e = Elem::F32, acc = Elem::F32;
  int lanes = 1;
  std::uint32_t team = kGroup;  // threads per row (a power of two up to kGroup)
  std::uint32_t per = 0;        // vectors per thread held in registers; 0: looped
  std::uint32_t sg_lanes = 1;   // subgroup lanes a fold exchanges values between
  bool weight = false, bias = false;
  Elem target = Elem::I64;  // cross_entropy: the class indices' type
  Elem loss = Elem::F32;    // cross_entropy: the rows' losses (f64 where the device has it)

  std::string key() const {
    return std::string("rows|") + op_name(op) + "|" + std::to_string(static_cast<int>(e)) + "|" +
           std::to_string(static_cast<int>(acc)) + "|" + std::to_string(lanes) + "|" +
           std::to_string(team) + "|" + std::to_string(per) + "|" + std::to_string(sg_lanes) +
           (weight ? "|w" : "") + (bias ? "|b" : "") + "|" +
           std::to_string(static_cast<int>(target)) + "|" + std::to_string(static_cast<int>(loss));
  }
};

/// sum += term as a compensated (Kahan) sum: `lost` carries the low-order bits each addition
/// rounded away (Kahan 1965). Needs a kernel without contraction (`precise` GLSL), else a
/// compiler may simplify (sum - t) - d to 0.
void kahan_add(Var& sum, Var& lost, Val term) {
  Val d = term - lost;
  Val t = sum + d;
  lost = (t - sum) - d;
  sum = t;
}

/// Arguments: x, y, [weight], [bias] (the row's shape), [targets] (cross_entropy: one class
/// index per row; y then holds one loss per row in the accumulator type), rows, vectors per
/// row, the row's length as a float, eps. Workgroup w = block_idx.x + block_idx.y * grid.x works on
/// rows w * (kGroup / team) + lid / team.
kernel::Kernel build_rows(const Plan& p) {
  KernelBuilder kb(std::string("rows_") + op_name(p.op) + "_l" + std::to_string(p.lanes) + "_w" +
                       std::to_string(p.team) + "_p" + std::to_string(p.per) + "_s" +
                       std::to_string(p.sg_lanes),
                   {kGroup, 1, 1});
  // The looped variant's compensated sums need every operation as written: without
  // contraction the GLSL is `precise`, which NVIDIA's Vulkan compiler needs not to simplify
  // the compensation away (it did: a 4M row drifted by 1.2e-4 as without it).
  kb.allow_contraction(p.per > 0);
  Mem x = kb.buffer("x", p.e, kernel::Access::Read);
  const bool ce = p.op == RowOp::CrossEntropy;
  Mem y = kb.buffer("y", ce ? p.loss : p.e, kernel::Access::Write);
  std::optional<Mem> w, b, targets;
  if (p.weight) w = kb.buffer("weight", p.e, kernel::Access::Read);
  if (p.bias) b = kb.buffer("bias", p.e, kernel::Access::Read);
  if (ce) targets = kb.buffer("targets", p.target, kernel::Access::Read);
  Val rows = kb.scalar("rows", Elem::U32);
  Val nvec = kb.scalar("nvec", Elem::U32);
  Val count = kb.scalar("count", p.acc);
  Val eps = kb.scalar("eps", p.acc);
  Mem red = kb.shared(p.acc, kGroup);
  Val lid = kb.local_linear_idx();
  Val tid = lid % p.team;
  Val row = (kb.block_idx(0) + kb.block_idx(1) * kb.grid_dim(0)) * (kGroup / p.team) + lid / p.team;
  Val live = row < rows;
  Val base = row * nvec;
  const int L = p.lanes;
  const Elem acc = p.acc;
  const auto zero = kb.constant(acc, 0.0, L);
  const auto ninf = kb.constant(acc, -std::numeric_limits<double>::infinity(), L);
  const auto one = kb.constant(acc, 1.0);

  const auto load = [&](Val j) {
    Val v = kernel::cast(x.load(base + j, L), acc);
    return p.op == RowOp::Softmin ? -v : v;
  };
  // The thread's slots: held in registers (in[c]: slot c lies in the row), or a loop.
  std::vector<Var> held;
  std::vector<Val> in, at;
  for (std::uint32_t c = 0; c < p.per; ++c) {
    Val j = tid + c * p.team;
    in.push_back(live & (j < nvec));
    at.push_back(j);
    held.push_back(kb.var(zero));
    kb.if_(in[c], [&] { held[c] = load(j); });
  }
  // f(value, slot or -1, vector index) for each of the thread's vectors in the row.
  const auto each = [&](auto&& f) {
    if (p.per > 0) {
      for (std::uint32_t c = 0; c < p.per; ++c) f(held[c].get(), static_cast<int>(c), at[c]);
    } else {
      kb.if_(live, [&] { kb.for_(tid, nvec, kb.u32(p.team), [&](Val j) { f(load(j), -1, j); }); });
    }
  };
  // The team's fold of term(value, slot) over the row (identity: -inf for max, 0 for sum).
  const auto fold = [&](Fold f, auto&& term) {
    Var t = kb.var(kernel::extract(f == Fold::Max ? ninf : zero, 0));
    if (f == Fold::Sum && p.per == 0) {
      // A looped row's thread adds thousands of terms: a compensated (Kahan) sum, else their
      // rounding errors add up (4M equal terms of a softmax drifted by 1.2e-4 in f32).
      Var lost = kb.var(kernel::extract(zero, 0));
      each([&](Val v, int, Val) { kahan_add(t, lost, fold_lanes(f, term(v, -1))); });
      return fold_team(kb, red, lid, tid, p.team, p.sg_lanes, f, t);
    }
    each([&](Val v, int c, Val) {
      Val s = term(v, c);
      if (c >= 0) s = kernel::select(in[c], s, f == Fold::Max ? ninf : zero);
      t = combine(f, t, fold_lanes(f, s));
    });
    return fold_team(kb, red, lid, tid, p.team, p.sg_lanes, f, t);
  };
  const auto write = [&](auto&& value) {
    each([&](Val v, int c, Val j) {
      const auto store = [&] { y.store(base + j, kernel::cast(value(v, c, j), p.e)); };
      if (c >= 0)
        kb.if_(in[c], store);
      else
        store();
    });
  };
  const auto scale = [&](Val v, Val j) {  // the affine part of the norms
    if (w) v = v * kernel::cast(w->load(j, L), acc);
    if (b) v = v + kernel::cast(b->load(j, L), acc);
    return v;
  };

  if (ce) {
    // loss = log(sum exp(x)) - x[t] = (m - x[t]) + log(sum exp(x - m)), in the loss type (no
    // cancellation between m and x[t] when the logits are large): one thread per row.
    Val m = fold(Fold::Max, [](Val v, int) { return v; });
    Val s = fold(Fold::Sum, [&](Val v, int) { return kernel::exp(v - m); });
    kb.if_(live & (tid == 0u), [&] {
      Val t = kernel::cast((*targets)[row], Elem::U32);
      Val xt = kernel::cast(x[base * static_cast<std::uint32_t>(L) + t], p.loss);
      y[row] = (kernel::cast(m, p.loss) - xt) + kernel::cast(kernel::log(s), p.loss);
    });
  } else if (softmax_like(p.op)) {
    Val m = fold(Fold::Max, [](Val v, int) { return v; });
    // Held slots keep exp(v - m) for the write (except log_softmax, which needs v).
    const bool keep = p.op != RowOp::LogSoftmax && p.per > 0;
    Val s = fold(Fold::Sum, [&](Val v, int c) {
      Val e = kernel::exp(v - m);
      if (keep) held[c] = e;
      return e;
    });
    if (p.op == RowOp::LogSoftmax) {
      Val ls = kernel::log(s);
      write([&](Val v, int, Val) { return v - m - ls; });
    } else {
      Val r = one / (p.op == RowOp::QuietSoftmax ? s + kernel::exp(-m) : s);
      write([&](Val v, int, Val) { return (keep ? v : kernel::exp(v - m)) * r; });
    }
  } else if (p.op == RowOp::LayerNorm) {
    Val mean = fold(Fold::Sum, [](Val v, int) { return v; }) / count;
    Val sq = fold(Fold::Sum, [&](Val v, int) {
      Val d = v - mean;
      return d * d;
    });
    Val rstd = one / kernel::sqrt(sq / count + eps);
    write([&](Val v, int, Val j) { return scale((v - mean) * rstd, j); });
  } else {
    Val sq = fold(Fold::Sum, [](Val v, int) { return v * v; });
    Val rr = one / kernel::sqrt(sq / count + eps);
    write([&](Val v, int, Val j) { return scale(v * rr, j); });
  }
  return kb.build();
}

/// Softmax along a dim with inner > 1: one thread per line of [outer, len, inner]. Arguments:
/// x, y, lines, len, inner.
kernel::Kernel build_cols(RowOp op, Elem e, Elem acc) {
  KernelBuilder kb(std::string("cols_") + op_name(op), {kGroup, 1, 1});
  // no contraction: the compensated sum needs its operations as written (`precise` GLSL)
  Mem x = kb.buffer("x", e, kernel::Access::Read);
  Mem y = kb.buffer("y", e, kernel::Access::Write);
  Val lines = kb.scalar("lines", Elem::U32), len = kb.scalar("len", Elem::U32);
  Val inner = kb.scalar("inner", Elem::U32);
  Val t = kb.absolute_pos();
  kb.if_in_bounds(t, lines, [&] {
    Val base = (t / inner) * len * inner + t % inner;
    const auto value = [&](Val k) {
      Val v = kernel::cast(x[base + k * inner], acc);
      return op == RowOp::Softmin ? -v : v;
    };
    Var m = kb.var(kb.constant(acc, -std::numeric_limits<double>::infinity()));
    kb.for_(0u, len, 1u, [&](Val k) { m = nan_max(value(k), m); });
    Var s = kb.var(kb.constant(acc, 0.0));
    Var lost = kb.var(kb.constant(acc, 0.0));  // a compensated (Kahan) sum, as the rows'
    kb.for_(0u, len, 1u, [&](Val k) { kahan_add(s, lost, kernel::exp(value(k) - m)); });
    Val ls = kernel::log(s.get());
    Val r = kb.constant(acc, 1.0) /
            (op == RowOp::QuietSoftmax ? s.get() + kernel::exp(-m.get()) : s.get());
    kb.for_(0u, len, 1u, [&](Val k) {
      Val v = value(k);
      Val out = op == RowOp::LogSoftmax ? v - m - ls : kernel::exp(v - m) * r;
      y[base + k * inner] = kernel::cast(out, e);
    });
  });
  return kb.build();
}

Elem acc_of(Elem e) {
  return e == Elem::F64 ? Elem::F64 : Elem::F32;
}

bool served(const GpuTensor& x) {
  return (x.dtype == DType::F32 || x.dtype == DType::F16 || x.dtype == DType::BF16 ||
          x.dtype == DType::F64) &&
         native_dtype(x.dtype, x.compute()) && x.numel() <= std::int64_t{0xffffffff};
}

std::uint64_t span(std::int64_t n) {
  return static_cast<std::uint64_t>(std::max<std::int64_t>(n, 1));
}

/// Runs the rows kernel of `op` over x seen as [rows, n]; nullopt when the device lacks a
/// feature the kernel needs.
std::optional<GpuTensor> run_rows(RowOp op, const GpuTensor& x_in, std::int64_t n,
                                  const std::optional<GpuTensor>& weight,
                                  const std::optional<GpuTensor>& bias, double eps,
                                  const GpuTensor* targets = nullptr) {
  kernel::ComputeDevice& dev = x_in.compute();
  Plan p;
  p.op = op;
  p.e = elem_of(x_in.dtype, op_name(op));
  p.acc = acc_of(p.e);
  p.weight = weight.has_value();
  p.bias = bias.has_value();
  const kernel::DeviceProperties& props = dev.properties();
  if (targets) {
    p.target = elem_of(targets->dtype, op_name(op));
    p.loss = props.f64 ? Elem::F64 : p.acc;
  }
  // Four lanes per load where the rows keep 16-byte (8-byte for halves) alignment; packed()
  // starts every bound buffer at a multiple of 256 bytes.
  p.lanes = p.e != Elem::F64 && n % 4 == 0 ? 4 : 1;
  const std::int64_t nvec = n / p.lanes;
  // Teams of up to 256 threads with 4 slots each; longer rows up to 8 slots, then looped.
  p.team = 1;
  while (p.team < kGroup && p.team * 4 < nvec) p.team *= 2;
  const std::int64_t per = (nvec + p.team - 1) / p.team;
  p.per = 1;
  while (p.per < per) p.per *= 2;
  if (p.per > kMaxPer) p.per = 0;
  const std::int64_t walks = op == RowOp::RmsNorm || op == RowOp::CrossEntropy ? 2 : 3;
  if (p.per == 0 && props.software && walks * ((nvec + p.team - 1) / p.team) >= kMaxLoopIterations)
    return std::nullopt;
  // Subgroup exchanges for f32 accumulators on devices with a known power-of-two subgroup size
  // (32 on NVIDIA) that divides the workgroup; shared memory alone otherwise.
  const std::uint32_t sg = props.subgroup_size;
  if (props.subgroups && p.acc == Elem::F32 && sg > 1 && (sg & (sg - 1)) == 0 && sg <= kGroup)
    p.sg_lanes = std::min(p.team, sg);
  const auto* k = compiled(dev, p.key(), [&] { return build_rows(p); });
  if (!k) return std::nullopt;
  const std::int64_t rows = x_in.numel() / n;
  GpuTensor out =
      targets ? empty(Shape{rows}, p.loss == Elem::F64 ? DType::F64 : DType::F32, dev, x_in.device)
              : empty(x_in.shape, x_in.dtype, dev, x_in.device);
  if (x_in.numel() == 0) return out;
  const GpuTensor x = packed(x_in);
  std::vector<Arg> args{Arg::buf(x.buffer, static_cast<std::uint64_t>(x.offset), span(x.numel())),
                        Arg::buf(out.buffer, 0, span(out.numel()))};
  std::optional<GpuTensor> w, b;  // kept alive until the launch is enqueued
  if (weight) {
    w = packed(*weight);
    args.push_back(Arg::buf(w->buffer, static_cast<std::uint64_t>(w->offset), span(n)));
  }
  if (bias) {
    b = packed(*bias);
    args.push_back(Arg::buf(b->buffer, static_cast<std::uint64_t>(b->offset), span(n)));
  }
  std::optional<GpuTensor> t;
  if (targets) {
    t = packed(*targets);
    args.push_back(Arg::buf(t->buffer, static_cast<std::uint64_t>(t->offset), span(rows)));
  }
  args.push_back(Arg::u32(detail::u32_index(rows, op_name(op), "row count")));
  args.push_back(Arg::u32(detail::u32_index(nvec, op_name(op), "row length")));
  args.push_back(Arg::scalar(p.acc, static_cast<double>(n)));
  args.push_back(Arg::scalar(p.acc, eps));
  kernel::Grid grid;
  const std::int64_t groups = (rows + kGroup / p.team - 1) / (kGroup / p.team);
  grid.x = static_cast<std::uint32_t>(std::min<std::int64_t>(groups, dev.properties().max_grid[0]));
  grid.y = static_cast<std::uint32_t>((groups + grid.x - 1) / grid.x);
  dev.launch(*k, grid, args);
  return out;
}

}  // namespace

std::optional<GpuTensor> softmax(RowOp op, const GpuTensor& x_in, std::int64_t dim) {
  if (!served(x_in) || !softmax_like(op)) return std::nullopt;
  if (x_in.numel() == 0) return empty(x_in.shape, x_in.dtype, x_in.compute(), x_in.device);
  const Lines l = lines_of(x_in.shape, dim);
  if (l.inner == 1) return run_rows(op, x_in, l.len, {}, {}, 0.0);
  if (x_in.compute().properties().software && 3 * l.len >= kMaxLoopIterations) return std::nullopt;
  kernel::ComputeDevice& dev = x_in.compute();
  const Elem e = elem_of(x_in.dtype, op_name(op));
  const auto* k =
      compiled(dev, std::string("cols|") + op_name(op) + "|" + std::to_string(static_cast<int>(e)),
               [&] { return build_cols(op, e, acc_of(e)); });
  if (!k) return std::nullopt;
  GpuTensor out = empty(x_in.shape, x_in.dtype, dev, x_in.device);
  const GpuTensor x = packed(x_in);
  const std::uint32_t lines = detail::u32_index(l.count(), op_name(op), "line count");
  const Arg args[] = {Arg::buf(x.buffer, static_cast<std::uint64_t>(x.offset), span(x.numel())),
                      Arg::buf(out.buffer, 0, span(x.numel())), Arg::u32(lines),
                      Arg::u32(static_cast<std::uint32_t>(l.len)),
                      Arg::u32(static_cast<std::uint32_t>(l.inner))};
  dev.launch(*k, kernel::grid_for(k->kernel(), lines), args);
  return out;
}

std::optional<GpuTensor> layer_norm(const GpuTensor& x, std::int64_t k,
                                    const std::optional<GpuTensor>& weight,
                                    const std::optional<GpuTensor>& bias, double eps) {
  if (!served(x)) return std::nullopt;
  std::int64_t n = 1;
  const auto rank = static_cast<std::int64_t>(x.shape.dims.size());
  for (std::int64_t d = rank - k; d < rank; ++d) n *= x.shape.dims[d];
  if (n == 0) return empty(x.shape, x.dtype, x.compute(), x.device);
  return run_rows(RowOp::LayerNorm, x, n, weight, bias, eps);
}

std::optional<GpuTensor> rms_norm(const GpuTensor& x, const std::optional<GpuTensor>& weight,
                                  double eps) {
  if (!served(x) || x.shape.dims.empty()) return std::nullopt;
  const std::int64_t n = x.shape.dims.back();
  if (n == 0) return empty(x.shape, x.dtype, x.compute(), x.device);
  return run_rows(RowOp::RmsNorm, x, n, weight, {}, eps);
}

std::optional<GpuTensor> cross_entropy(const GpuTensor& logits, const GpuTensor& targets) {
  if (!served(logits) || logits.shape.dims.size() != 2 || targets.dtype == DType::Bool ||
      !native_dtype(targets.dtype, targets.compute()))
    return std::nullopt;
  const std::int64_t n = logits.shape.dims[0], c = logits.shape.dims[1];
  if (n == 0 || c == 0) return std::nullopt;  // the CPU's rule (NaN or an error) decides
  auto losses = run_rows(RowOp::CrossEntropy, logits, c, {}, {}, 0.0, &targets);
  if (!losses) return std::nullopt;
  GpuTensor mean = reduce(Reduce::Mean, *losses, -1);
  if (mean.dtype == logits.dtype) return mean;
  MapSpec cast{"identity", logits.dtype, {}, [](auto in, auto) { return in[0]; }};
  return map(cast, std::span<const GpuTensor>(&mean, 1), mean.shape);
}

}  // namespace ember::gpu
