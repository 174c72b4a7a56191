// The convolution gradients on the GPU backends as implicit matrix products: the patches are
// gathered straight into shared-memory tiles, so no column matrix is written (src/gpu/conv.cpp's
// im2col path writes one K times the input's size, in chunks of the batch).
//
// Per group g, both gradients are products C = A x B with A and B read through the geometry:
//   input gradient  dx[b, g Cg + m, i] = sum_{r = (co, tap)} w[g Cog + co, m, tap]
//                                         * dy[b, g Cog + co, o(i, tap)]
//     (M = Cg, N = batch x input positions, R = Cog x taps; o(i, tap) = (i + p - tap d) / s
//     where that divides exactly and lands inside the output, else the term is zero: a gather,
//     deterministic, no atomics; with a stride above 1 most terms are zero);
//   weight gradient dw[g Cog + m, ci, tap] = sum_{r = (b, o)} dy[b, g Cog + m, o]
//                                         * x[b, g Cg + ci, o s + tap d - p]
//     (M = Cog, N = Cg x taps, R = batch x output positions), cut along R into slices that
//     run as separate workgroups (R is long and M x N often small) and write partial sums in
//     f32 (f64 for f64); a second kernel adds the slices in order and rounds once.
// A workgroup of 16 x 16 threads computes a tile of (16 rm) x (16 rn) results, each thread
// rm x rn of them in registers (rm, rn = 4, 2 or 1 by the sizes of M and N); each step stages
// 16 values of R for the tile's rows and columns in shared memory (thread tx loads reduction
// index r0 + tx, so the decomposition of r happens once per thread and step). f16/bf16 load as
// f32; the products accumulate in f32 (f64 for f64).
//
// Mesa's llvmpipe ends an invocation's loops after 65,535 iterations: the input gradient takes
// ceil(R / 16) steps (beyond the limit the caller's im2col path serves it), the weight gradient
// at most 4,096 per slice on a software device.
#include "conv_backward.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "ember/gpu/create.hpp"
#include "ember/gpu/ops.hpp"
#include "kernels.hpp"

namespace ember::gpu::detail {

namespace {

using namespace names;

constexpr std::uint32_t kT = 16;      // threads along each side of a workgroup
constexpr std::uint32_t kDepth = kT;  // reduction indices per step (thread tx loads r0 + tx)
constexpr std::int64_t kMaxLoop = 65535;
constexpr std::int64_t kSoftwareSteps = 4096;  // weight gradient: steps a slice on llvmpipe
constexpr std::int64_t kPartialBudget = std::int64_t{64} << 20;  // bytes of partial sums

/// Outputs per thread along a side of length `len`: 64-wide tiles for long sides.
std::uint32_t regs_for(std::int64_t len) {
  return len >= 64 ? 4 : len >= 32 ? 2 : 1;
}

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

/// The scalars both kernels take, in this order.
constexpr const char* kNames[] = {"B",  "C",  "Cg", "Co", "cog", "K",  "L",    "S",  "D",
                                  "H",  "W",  "KH", "KW", "OD",  "OH", "OW",   "sd", "sh",
                                  "sw", "pd", "ph", "pw", "dd",  "dh", "dw",   "M",  "N",
                                  "R",  "WN", "x0", "y0", "w0",  "tm", "chunk"};

/// The kernel's view of the scalars, by name.
class Scalars {
 public:
  explicit Scalars(KernelBuilder& kb) {
    for (const char* n : kNames) v_.emplace(n, kb.scalar(n, Elem::U32));
  }
  Val operator[](const char* n) const { return v_.at(n); }

 private:
  std::map<std::string, Val> v_;
};

/// The launch's scalars: every name of kNames from `v` (0 where absent).
std::vector<Arg> scalar_args(const std::map<std::string, std::int64_t>& v) {
  std::vector<Arg> args;
  for (const char* n : kNames) {
    const auto it = v.find(n);
    args.push_back(Arg::u32(u32_index(it == v.end() ? 0 : it->second, "gpu conv", n)));
  }
  return args;
}

std::map<std::string, std::int64_t> geometry_values(const ConvShape& s) {
  return {{"B", s.batch},
          {"C", s.groups * s.cg},
          {"Cg", s.cg},
          {"Co", s.groups * s.cog},
          {"cog", s.cog},
          {"K", s.k[0] * s.k[1] * s.k[2]},
          {"L", s.out[0] * s.out[1] * s.out[2]},
          {"S", s.in[0] * s.in[1] * s.in[2]},
          {"D", s.in[0]},
          {"H", s.in[1]},
          {"W", s.in[2]},
          {"KH", s.k[1]},
          {"KW", s.k[2]},
          {"OD", s.out[0]},
          {"OH", s.out[1]},
          {"OW", s.out[2]},
          {"sd", s.stride[0]},
          {"sh", s.stride[1]},
          {"sw", s.stride[2]},
          {"pd", s.pad[0]},
          {"ph", s.pad[1]},
          {"pw", s.pad[2]},
          {"dd", s.dil[0]},
          {"dh", s.dil[1]},
          {"dw", s.dil[2]}};
}

Val i32(Val v) {
  return kernel::cast(v, Elem::I32);
}
Val u32v(Val v) {
  return kernel::cast(v, Elem::U32);
}

/// The shared tiles and the accumulators of one workgroup: A staged as [kDepth][16 rm] and B
/// as [kDepth][16 rn] (rows padded by one against bank conflicts).
struct Tiles {
  std::uint32_t rm, rn, pa, pb;
  Mem as, bs;
  Val tx, ty;
  std::vector<Var> acc;

  Tiles(KernelBuilder& kb, Elem a, std::uint32_t rm_, std::uint32_t rn_)
      : rm(rm_),
        rn(rn_),
        pa(kT * rm_ + 1),
        pb(kT * rn_ + 1),
        as(kb.shared(a, kDepth * pa)),
        bs(kb.shared(a, kDepth * pb)),
        tx(kb.thread_idx(0)),
        ty(kb.thread_idx(1)) {
    for (std::uint32_t i = 0; i < rm * rn; ++i) acc.push_back(kb.var(kb.constant(a, 0)));
  }
  /// This thread's slot q of the step's A values (row 16 q + ty, reduction index tx).
  void stage_a(std::uint32_t q, Val v) const { as[tx * pa + (ty + kT * q)] = v; }
  void stage_b(std::uint32_t q, Val v) const { bs[tx * pb + (ty + kT * q)] = v; }
  /// acc[i][j] += sum_kk A[kk][ty + 16 i] B[kk][tx + 16 j] over the staged step.
  void multiply() {
    for (std::uint32_t kk = 0; kk < kDepth; ++kk) {
      std::vector<Val> a, b;
      for (std::uint32_t i = 0; i < rm; ++i) a.push_back(as[ty + (kk * pa + kT * i)]);
      for (std::uint32_t j = 0; j < rn; ++j) b.push_back(bs[tx + (kk * pb + kT * j)]);
      for (std::uint32_t i = 0; i < rm; ++i)
        for (std::uint32_t j = 0; j < rn; ++j)
          acc[i * rn + j] = acc[i * rn + j].get() + a[i] * b[j];
    }
  }
};

/// A value loaded where `ok`, else zero, in the accumulation type.
template <class Load>
Val load_or_zero(KernelBuilder& kb, Elem a, Val ok, Load load) {
  Var v = kb.var(kb.constant(a, 0));
  kb.if_(ok, [&] { v = kernel::cast(load(), a); });
  return v.get();
}

/// The input gradient's kernel (see the file comment); `unit_stride` drops the divisibility
/// tests when every stride is 1.
kernel::Kernel build_data_grad(DType dt, std::uint32_t rm, std::uint32_t rn, bool unit_stride) {
  const Elem e = elem_of(dt, "conv");
  const Elem a = dt == DType::F64 ? Elem::F64 : Elem::F32;
  KernelBuilder kb("conv_data_grad", {kT, kT, 1});
  kb.allow_contraction();
  Mem dy = kb.buffer("dy", e, kernel::Access::Read);
  Mem w = kb.buffer("w", e, kernel::Access::Read);
  Mem dx = kb.buffer("dx", e, kernel::Access::Write);
  const Scalars s(kb);
  Tiles t(kb, a, rm, rn);
  Val grp = kb.block_idx(1) / s["tm"];
  Val m0 = kb.block_idx(1) % s["tm"] * (kT * rm);
  Val n0 = kb.block_idx(0) * (kT * rn);
  // This thread's B columns (batch item, input position) for every step.
  // Along each dim, the output position that input position i reaches through tap offset
  // e = k d is (i + p - e) / s where that divides: with j = i + p = jq s + jr and
  // e = eq s + er, where jr == er and then o = jq - eq. The quotients and residues of j are
  // computed once here, those of e once per step: no division per slot and step.
  std::vector<Val> n_ok, base;
  std::array<std::vector<Val>, 3> jq, jr;
  const char* pads[3] = {"pd", "ph", "pw"};
  const char* strides[3] = {"sd", "sh", "sw"};
  const char* dils[3] = {"dd", "dh", "dw"};
  const char* outs[3] = {"OD", "OH", "OW"};
  for (std::uint32_t q = 0; q < rn; ++q) {
    Val n = n0 + (t.ty + kT * q);
    n_ok.push_back(n < s["N"]);
    Val b = n / s["S"], i = n % s["S"];
    const Val pos[3] = {i / (s["W"] * s["H"]), i / s["W"] % s["H"], i % s["W"]};
    base.push_back(s["y0"] + (b * s["Co"] + grp * s["cog"]) * s["L"]);
    for (int d = 0; d < 3; ++d) {
      Val j = pos[d] + s[pads[d]];
      jq[d].push_back(i32(unit_stride ? j : j / s[strides[d]]));
      if (!unit_stride) jr[d].push_back(j % s[strides[d]]);
    }
  }
  kb.for_(kb.u32(0), s["R"], kb.u32(kDepth), [&](Val r0) {
    Val r = r0 + t.tx;
    Val ok = r < s["R"];
    Val co = r / s["K"], tap = r % s["K"];
    const Val k[3] = {tap / (s["KW"] * s["KH"]), tap / s["KW"] % s["KH"], tap % s["KW"]};
    Val wrow = s["w0"] + (grp * s["cog"] + co) * s["Cg"] * s["K"] + tap;
    for (std::uint32_t q = 0; q < rm; ++q) {
      Val m = m0 + (t.ty + kT * q);
      t.stage_a(q,
                load_or_zero(kb, a, ok & (m < s["Cg"]), [&] { return Val(w[wrow + m * s["K"]]); }));
    }
    Val eq[3], er[3];
    for (int d = 0; d < 3; ++d) {
      Val e = k[d] * s[dils[d]];
      eq[d] = i32(unit_stride ? e : e / s[strides[d]]);
      if (!unit_stride) er[d] = e % s[strides[d]];
    }
    for (std::uint32_t q = 0; q < rn; ++q) {
      Val in = ok & n_ok[q];
      Val o[3];
      for (int d = 0; d < 3; ++d) {
        o[d] = jq[d][q] - eq[d];
        in = in & (o[d] >= 0) & (o[d] < i32(s[outs[d]]));
        if (!unit_stride) in = in & (jr[d][q] == er[d]);
      }
      t.stage_b(q, load_or_zero(kb, a, in, [&] {
                  Val p = (u32v(o[0]) * s["OH"] + u32v(o[1])) * s["OW"] + u32v(o[2]);
                  return Val(dy[base[q] + co * s["L"] + p]);
                }));
    }
    kb.barrier();
    t.multiply();
    kb.barrier();
  });
  for (std::uint32_t i = 0; i < rm; ++i) {
    for (std::uint32_t j = 0; j < rn; ++j) {
      Val m = m0 + (t.ty + kT * i), n = n0 + (t.tx + kT * j);
      kb.if_((m < s["Cg"]) & (n < s["N"]), [&] {
        Val b = n / s["S"], pos = n % s["S"];
        dx[(b * s["C"] + grp * s["Cg"] + m) * s["S"] + pos] =
            kernel::cast(t.acc[i * rn + j].get(), e);
      });
    }
  }
  return kb.build();
}

/// The weight gradient's kernel: slice blockIdx.z of R, partial sums [slices, WN] in `a`.
kernel::Kernel build_weight_grad(DType dt, std::uint32_t rm, std::uint32_t rn) {
  const Elem e = elem_of(dt, "conv");
  const Elem a = dt == DType::F64 ? Elem::F64 : Elem::F32;
  KernelBuilder kb("conv_weight_grad", {kT, kT, 1});
  kb.allow_contraction();
  Mem x = kb.buffer("x", e, kernel::Access::Read);
  Mem dy = kb.buffer("dy", e, kernel::Access::Read);
  Mem part = kb.buffer("part", a, kernel::Access::Write);
  const Scalars s(kb);
  Tiles t(kb, a, rm, rn);
  Val grp = kb.block_idx(1) / s["tm"];
  Val m0 = kb.block_idx(1) % s["tm"] * (kT * rm);
  Val n0 = kb.block_idx(0) * (kT * rn);
  Val slice = kb.block_idx(2);
  Val r_begin = slice * s["chunk"];
  Val r_end = kernel::min(r_begin + s["chunk"], s["R"]);
  // This thread's B columns (input channel, tap) for every step.
  std::vector<Val> n_ok, xoff, fd, fh, fw;
  for (std::uint32_t q = 0; q < rn; ++q) {
    Val n = n0 + (t.ty + kT * q);
    n_ok.push_back(n < s["N"]);
    Val ci = n / s["K"], tap = n % s["K"];
    Val kw = tap % s["KW"], kh = tap / s["KW"] % s["KH"], kd = tap / (s["KW"] * s["KH"]);
    xoff.push_back((grp * s["Cg"] + ci) * s["S"]);
    fd.push_back(i32(kd * s["dd"]) - i32(s["pd"]));
    fh.push_back(i32(kh * s["dh"]) - i32(s["ph"]));
    fw.push_back(i32(kw * s["dw"]) - i32(s["pw"]));
  }
  kb.for_(r_begin, r_end, kb.u32(kDepth), [&](Val r0) {
    Val r = r0 + t.tx;
    Val ok = r < r_end;
    Val b = r / s["L"], o = r % s["L"];
    Val ow = o % s["OW"], oh = o / s["OW"] % s["OH"], od = o / (s["OW"] * s["OH"]);
    Val yrow = s["y0"] + (b * s["Co"] + grp * s["cog"]) * s["L"] + o;
    for (std::uint32_t q = 0; q < rm; ++q) {
      Val m = m0 + (t.ty + kT * q);
      t.stage_a(
          q, load_or_zero(kb, a, ok & (m < s["cog"]), [&] { return Val(dy[yrow + m * s["L"]]); }));
    }
    Val xb = s["x0"] + b * s["C"] * s["S"];
    Val bd = i32(od * s["sd"]), bh = i32(oh * s["sh"]), bw = i32(ow * s["sw"]);
    for (std::uint32_t q = 0; q < rn; ++q) {
      Val id = bd + fd[q], ih = bh + fh[q], iw = bw + fw[q];
      Val in = ok & n_ok[q] & (id >= 0) & (ih >= 0) & (iw >= 0) & (id < i32(s["D"])) &
               (ih < i32(s["H"])) & (iw < i32(s["W"]));
      t.stage_b(q, load_or_zero(kb, a, in, [&] {
                  Val p = (u32v(id) * s["H"] + u32v(ih)) * s["W"] + u32v(iw);
                  return Val(x[xb + xoff[q] + p]);
                }));
    }
    kb.barrier();
    t.multiply();
    kb.barrier();
  });
  for (std::uint32_t i = 0; i < rm; ++i) {
    for (std::uint32_t j = 0; j < rn; ++j) {
      Val m = m0 + (t.ty + kT * i), n = n0 + (t.tx + kT * j);
      kb.if_((m < s["cog"]) & (n < s["N"]), [&] {
        part[slice * s["WN"] + (grp * s["cog"] + m) * s["N"] + n] = t.acc[i * rn + j].get();
      });
    }
  }
  return kb.build();
}

/// out[e] = sum over the slices s (in order) of part[s * n + e], rounded once to out's type.
kernel::Kernel build_slice_sum(DType dt) {
  const Elem e = elem_of(dt, "conv");
  const Elem a = dt == DType::F64 ? Elem::F64 : Elem::F32;
  KernelBuilder kb("conv_slice_sum", {kGroup, 1, 1});
  Mem part = kb.buffer("part", a, kernel::Access::Read);
  Mem out = kb.buffer("out", e, kernel::Access::Write);
  Val n = kb.scalar("n", Elem::U32), slices = kb.scalar("slices", Elem::U32);
  Val pos = kb.absolute_pos();
  kb.if_in_bounds(pos, n, [&] {
    Var sum = kb.var(kb.constant(a, 0));
    kb.for_(0u, slices, 1u, [&](Val sl) { sum = sum.get() + Val(part[sl * n + pos]); });
    out[pos] = kernel::cast(sum.get(), e);
  });
  return kb.build();
}

template <class Make>
const kernel::CompiledKernel* kernel_for(kernel::ComputeDevice& dev, const std::string& key,
                                         Make make) {
  return compiled(dev, "conv_backward|" + key, make);
}

/// EMBER_GPU_CONV_IM2COL=1: the gradients take src/gpu/conv.cpp's im2col path (to compare).
bool im2col_forced() {
  static const bool on = [] {
    const char* v = std::getenv("EMBER_GPU_CONV_IM2COL");
    return v && *v && std::string(v) != "0";
  }();
  return on;
}

Arg buffer_arg(const GpuTensor& t) {
  return Arg::buf(t.buffer, 0,
                  u32_index(t.offset + std::max<std::int64_t>(t.numel(), 1), "gpu conv", "span"));
}

bool software(const kernel::ComputeDevice& dev) {
  return dev.properties().software;
}

}  // namespace

std::optional<GpuTensor> conv_data_grad(const GpuTensor& dy_in, const GpuTensor& w_in,
                                        const Shape& x_shape, const ConvShape& s) {
  if (im2col_forced()) return std::nullopt;
  kernel::ComputeDevice& dev = dy_in.compute();
  const kernel::DeviceProperties& props = dev.properties();
  const std::int64_t taps = s.k[0] * s.k[1] * s.k[2];
  const std::int64_t M = s.cg, N = s.batch * s.in[0] * s.in[1] * s.in[2], R = s.cog * taps;
  if (x_shape.numel() == 0) return empty(x_shape, dy_in.dtype, dev, dy_in.device);
  if (R == 0 || dy_in.numel() == 0) return full(x_shape, 0.0, dy_in.dtype, dev, dy_in.device);
  if (software(dev) && ceil_div(R, kDepth) >= kMaxLoop) return std::nullopt;
  u32_index(R + kDepth, "gpu conv", "reduction length");  // r0 + tx stays in 32 bits
  const std::uint32_t rm = regs_for(M), rn = regs_for(N);
  const std::int64_t tiles_m = ceil_div(M, kT * rm), tiles_n = ceil_div(N, kT * rn);
  if (tiles_n > props.max_grid[0] || s.groups * tiles_m > props.max_grid[1]) return std::nullopt;
  const bool unit = s.stride[0] == 1 && s.stride[1] == 1 && s.stride[2] == 1;
  const std::string key = "data|" + std::to_string(static_cast<int>(dy_in.dtype)) + "|" +
                          std::to_string(rm) + std::to_string(rn) + (unit ? "u" : "s");
  const kernel::CompiledKernel* k =
      kernel_for(dev, key, [&] { return build_data_grad(dy_in.dtype, rm, rn, unit); });
  if (!k) return std::nullopt;
  const GpuTensor dy = contiguous(dy_in), w = contiguous(w_in);
  GpuTensor dx = empty(x_shape, dy.dtype, dev, dy.device);
  auto v = geometry_values(s);
  v["M"] = M;
  v["N"] = N;
  v["R"] = R;
  v["y0"] = dy.offset;
  v["w0"] = w.offset;
  v["tm"] = tiles_m;
  std::vector<Arg> args{buffer_arg(dy), buffer_arg(w), buffer_arg(dx)};
  for (Arg& arg : scalar_args(v)) args.push_back(arg);
  dev.launch(*k,
             kernel::Grid{static_cast<std::uint32_t>(tiles_n),
                          static_cast<std::uint32_t>(s.groups * tiles_m), 1},
             args);
  return dx;
}

std::optional<GpuTensor> conv_weight_grad(const GpuTensor& x_in, const GpuTensor& dy_in,
                                          const Shape& w_shape, const ConvShape& s) {
  if (im2col_forced()) return std::nullopt;
  kernel::ComputeDevice& dev = x_in.compute();
  const kernel::DeviceProperties& props = dev.properties();
  const std::int64_t taps = s.k[0] * s.k[1] * s.k[2];
  const std::int64_t M = s.cog, N = s.cg * taps;
  const std::int64_t R = s.batch * s.out[0] * s.out[1] * s.out[2];
  const std::int64_t WN = w_shape.numel();
  if (WN == 0) return empty(w_shape, x_in.dtype, dev, x_in.device);
  if (R == 0) return full(w_shape, 0.0, x_in.dtype, dev, x_in.device);
  const std::uint32_t rm = regs_for(M), rn = regs_for(N);
  const std::int64_t tiles_m = ceil_div(M, kT * rm), tiles_n = ceil_div(N, kT * rn);
  if (tiles_n > props.max_grid[0] || s.groups * tiles_m > props.max_grid[1]) return std::nullopt;
  // Slices of R: enough workgroups to fill the device (8 per compute unit), at least 16 steps
  // a slice, the partial sums within their budget; on a software device at most 4,096 steps a
  // slice (llvmpipe's loop limit).
  const DType acc_dt = x_in.dtype == DType::F64 ? DType::F64 : DType::F32;
  const std::int64_t tiles = s.groups * tiles_m * tiles_n;
  const std::int64_t want = std::max<std::int64_t>(props.compute_units, 1) * 8;
  const std::int64_t by_memory = std::max<std::int64_t>(
      kPartialBudget / (WN * static_cast<std::int64_t>(dtype_size(acc_dt))), 1);
  std::int64_t slices = std::min(ceil_div(want, tiles), ceil_div(R, 16 * kDepth));
  slices = std::min({slices, by_memory, std::int64_t{props.max_grid[2]}});
  if (software(dev)) slices = std::max(slices, ceil_div(R, kSoftwareSteps * kDepth));
  slices = std::max<std::int64_t>(slices, 1);
  const std::int64_t chunk = ceil_div(ceil_div(R, slices), kDepth) * kDepth;
  slices = ceil_div(R, chunk);
  if (slices > by_memory || slices > props.max_grid[2]) return std::nullopt;
  if (software(dev) && chunk / kDepth >= kMaxLoop) return std::nullopt;
  u32_index(R + chunk, "gpu conv", "reduction length");  // r_begin + chunk stays in 32 bits
  const std::string key = "weight|" + std::to_string(static_cast<int>(x_in.dtype)) + "|" +
                          std::to_string(rm) + std::to_string(rn);
  const kernel::CompiledKernel* k =
      kernel_for(dev, key, [&] { return build_weight_grad(x_in.dtype, rm, rn); });
  const bool direct = slices == 1 && acc_dt == x_in.dtype;  // the partial sums are dw
  const kernel::CompiledKernel* sum =
      direct ? nullptr
             : kernel_for(dev, "sum|" + std::to_string(static_cast<int>(x_in.dtype)),
                          [&] { return build_slice_sum(x_in.dtype); });
  if (!k || (!direct && !sum)) return std::nullopt;
  const GpuTensor x = contiguous(x_in), dy = contiguous(dy_in);
  GpuTensor part = direct ? empty(w_shape, acc_dt, dev, x.device)
                          : empty(Shape{slices, WN}, acc_dt, dev, x.device);
  auto v = geometry_values(s);
  v["M"] = M;
  v["N"] = N;
  v["R"] = R;
  v["WN"] = WN;
  v["x0"] = x.offset;
  v["y0"] = dy.offset;
  v["tm"] = tiles_m;
  v["chunk"] = chunk;
  std::vector<Arg> args{buffer_arg(x), buffer_arg(dy), buffer_arg(part)};
  for (Arg& arg : scalar_args(v)) args.push_back(arg);
  dev.launch(*k,
             kernel::Grid{static_cast<std::uint32_t>(tiles_n),
                          static_cast<std::uint32_t>(s.groups * tiles_m),
                          static_cast<std::uint32_t>(slices)},
             args);
  if (direct) return part;
  GpuTensor dw = empty(w_shape, x.dtype, dev, x.device);
  const Arg sum_args[] = {buffer_arg(part), buffer_arg(dw),
                          Arg::u32(u32_index(WN, "gpu conv", "weight elements")),
                          Arg::u32(static_cast<std::uint32_t>(slices))};
  dev.launch(*sum, kernel::grid_for(sum->kernel(), static_cast<std::uint64_t>(WN)), sum_args);
  return dw;
}

}  // namespace ember::gpu::detail
