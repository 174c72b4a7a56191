// Fused scaled dot-product attention on the GPU backends (ember/gpu/attention.hpp).
//
// Forward (FlashAttention, Dao et al. 2022, algorithm 1, with FlashAttention-2's single
// rescale at the end): a workgroup of kRows threads takes kRows query rows of one batch row,
// one thread per query, the query and its output accumulator in registers (the builder
// unrolls the head dims, so they are plain variables of the generated code). Tiles of `tile`
// keys and values are staged in shared memory; each thread walks the tile's keys keeping the
// running maximum m and sum l of exp(score - m) (the online softmax of Milakov & Gimelshein
// 2018), rescaling its accumulator when m grows. The output is acc / l, the row's
// log-sum-exp m + log l. Under is_causal a workgroup stops at its last query's key.
//
// Backward (FlashAttention-2, section 3.1 and algorithm 2), with P = exp(score - lse) rebuilt
// from the saved lse instead of the stored probabilities:
//   D_l = sum_c dout[l, c] * out[l, c]
//   dv[s] = sum_l P[l, s] dout[l]          dS[l, s] = P[l, s] (dout[l] . v[s] - D_l)
//   dq[l] = scale * sum_s dS[l, s] k[s]    dk[s] = scale * sum_l dS[l, s] q[l]
// in two kernels without atomics (so results do not depend on scheduling): one thread per
// query row for dq and D (key tiles staged), then one thread per key row for dk and dv (query,
// dout, lse and D tiles staged).
//
// Masks and biases keep their broadcast layout: a table of each batch row's offset into the
// mask and the bias (the batch dims may broadcast in any pattern, e.g. a padding mask
// [B, 1, L, S] over heads) and the strides of their last two dims (0 where broadcast).
#include "ember/gpu/attention.hpp"

#include <algorithm>
#include <limits>
#include <string>

#include "ember/core/data.hpp"
#include "ember/gpu/ops.hpp"
#include "kernels.hpp"

namespace ember::gpu {

namespace {

using namespace detail::names;

constexpr std::uint32_t kRows = 64;                 // threads per workgroup: query (or key) rows
constexpr std::int64_t kMaxHead = 128;              // largest E and Ev held in registers
constexpr std::uint32_t kSharedBudget = 48 * 1024;  // bytes of shared memory a kernel may use
// Mesa's llvmpipe ends a shader invocation's loops after 65,535 iterations in all
// (src/gpu/rows.cpp): a thread here counts one per key (query) it walks and two per tile (the
// tile loop's and the inner loop's last test), as measured.
constexpr std::int64_t kMaxLoopIterations = 65535;

/// The larger of a and b, NaN when either is NaN (the CPU's softmax rule).
Val nan_max(Val a, Val b) {
  return kernel::select((a > b) | kernel::is_nan(a), a, b);
}

struct Plan {
  Elem e = Elem::F32, acc = Elem::F32;
  std::uint32_t E = 0, Ev = 0, tile = 64;
  bool causal = false, mask = false, bias = false, lse = false;

  std::string key(const char* kind) const {
    return std::string("attention|") + kind + "|" + std::to_string(static_cast<int>(e)) + "|" +
           std::to_string(static_cast<int>(acc)) + "|" + std::to_string(E) + "|" +
           std::to_string(Ev) + "|" + std::to_string(tile) + (causal ? "|c" : "") +
           (mask ? "|m" : "") + (bias ? "|b" : "") + (lse ? "|l" : "");
  }
  std::string name(const char* kind) const {
    return std::string("attention_") + kind + "_" + std::string(kernel::elem_name(e)) + "_e" +
           std::to_string(E) + "_v" + std::to_string(Ev) + "_t" + std::to_string(tile) +
           (causal ? "_causal" : "") + (mask ? "_mask" : "") + (bias ? "_bias" : "");
  }
};

/// The mask and bias of a kernel: buffers (declared with the other buffers), the per-batch-row
/// offset table, the strides of their last two dims (declared with the scalars).
struct Masking {
  std::optional<Mem> mask, bias, offs;
  std::optional<Val> msl, mss, bsl, bss, moff, boff;

  void buffers(KernelBuilder& kb, const Plan& p) {
    if (p.mask) mask = kb.buffer("mask", Elem::Bool, kernel::Access::Read);
    if (p.bias) bias = kb.buffer("bias", p.e, kernel::Access::Read);
    if (p.mask || p.bias) offs = kb.buffer("offsets", Elem::I32, kernel::Access::Read);
  }
  void scalars(KernelBuilder& kb, const Plan& p) {
    if (p.mask) {
      msl = kb.scalar("mask_stride_l", Elem::U32);
      mss = kb.scalar("mask_stride_s", Elem::U32);
    }
    if (p.bias) {
      bsl = kb.scalar("bias_stride_l", Elem::U32);
      bss = kb.scalar("bias_stride_s", Elem::U32);
    }
  }
  /// Loads batch row bh's offsets (once per workgroup).
  void at_batch(Val bh) {
    if (mask) moff = kernel::cast((*offs)[bh * 2u], Elem::U32);
    if (bias) boff = kernel::cast((*offs)[bh * 2u + 1u], Elem::U32);
  }
  /// The scaled score of query l and key s from their dot product, plus the bias; -inf where
  /// the key is masked or (causal) lies after the query. l and s must address the mask/bias.
  Val score(const Plan& p, Val l, Val s, Val dot, Val scale, Val ninf) const {
    Val sc = dot * scale;
    if (bias) sc = sc + kernel::cast((*bias)[*boff + l * *bsl + s * *bss], p.acc);
    std::optional<Val> valid;
    if (p.causal) valid = s <= l;
    if (mask) {
      Val m = (*mask)[*moff + l * *msl + s * *mss];
      valid = valid ? (*valid & m) : m;
    }
    return valid ? kernel::select(*valid, sc, ninf) : sc;
  }
};

/// Stages rows [t0, t0 + tile) of the [rows, width] matrix at `base` of `src` into `dst`
/// (tile * width values of the accumulator type), zeros from row `limit` on. The kRows threads
/// copy neighbouring elements.
void stage(KernelBuilder& kb, const Mem& src, const Mem& dst, Val base, Val t0, Val limit,
           std::uint32_t tile, std::uint32_t width, Val tid, Elem acc) {
  const std::uint32_t total = tile * width;
  for (std::uint32_t c = 0; c < total; c += kRows) {
    Val idx = tid + c;
    Val row = t0 + idx / width;
    Var x = kb.var(kb.constant(acc, 0));
    kb.if_((idx < total) & (row < limit),
           [&] { x = kernel::cast(src[base + row * width + idx % width], acc); });
    if (total % kRows == 0 || c + kRows <= total) {
      dst[idx] = x.get();
    } else {
      kb.if_(idx < total, [&] { dst[idx] = x.get(); });
    }
  }
}

/// Sum over i of a[i] * b(i) for the unrolled registers `a`.
template <class At>
Val dot(const std::vector<Var>& a, At b, Val zero) {
  Val d = zero;
  for (std::size_t i = 0; i < a.size(); ++i) d = d + a[i].get() * b(static_cast<std::uint32_t>(i));
  return d;
}

std::vector<Var> registers(KernelBuilder& kb, std::uint32_t n, Val zero) {
  std::vector<Var> r;
  r.reserve(n);
  for (std::uint32_t i = 0; i < n; ++i) r.push_back(kb.var(zero));
  return r;
}

/// What each kernel declares after its own buffers: the mask and bias (buffers, then strides
/// after the scalars L, S, scale and batch), the constants and the thread's place: thread
/// `tid` of the workgroup, batch row `bh` (grid y, then z: more than 65,535 batch rows fit;
/// the workgroups past the last one return at once), rows [first, first + kRows) of the
/// workgroup's kind.
struct Frame {
  Masking mk;
  Val L, S, scale, batch, zero, ninf, tid, bh, first;

  Frame(KernelBuilder& kb, const Plan& p)
      : mk(with_buffers(kb, p)),
        L(kb.scalar("L", Elem::U32)),
        S(kb.scalar("S", Elem::U32)),
        scale(kb.scalar("scale", p.acc)),
        batch(kb.scalar("batch", Elem::U32)),
        zero(kb.constant(p.acc, 0)),
        ninf(kb.constant(p.acc, -std::numeric_limits<double>::infinity())),
        tid(kb.thread_idx(0)),
        bh(kb.block_idx(1) + kb.block_idx(2) * kb.grid_dim(1)),
        first(kb.block_idx(0) * kRows) {
    mk.scalars(kb, p);
    kb.if_(bh >= batch, [&] { kb.return_(); });  // the whole workgroup: no barrier waits
    mk.at_batch(bh);
  }
  static Masking with_buffers(KernelBuilder& kb, const Plan& p) {
    Masking m;
    m.buffers(kb, p);
    return m;
  }
  /// The keys a query block reads: up to its last query under is_causal.
  Val key_end(const Plan& p) const { return p.causal ? kernel::min(S, first + kRows) : S; }
};

/// The query-side walk of the forward and dq kernels: the keys [0, end) in tiles staged in
/// shared memory (k into ks, v into vs); for each key s, f(s, dot of the registers `qr` with
/// key s, the key's offset in ks, the value's offset in vs).
template <class F>
void walk_keys(KernelBuilder& kb, const Plan& p, const Frame& fr, const Mem& k, const Mem& v,
               const Mem& ks, const Mem& vs, Val end, const std::vector<Var>& qr, F&& f) {
  Val kb0 = fr.bh * fr.S * p.E, vb0 = fr.bh * fr.S * p.Ev;
  kb.for_(0u, end, p.tile, [&](Val t0) {
    stage(kb, k, ks, kb0, t0, end, p.tile, p.E, fr.tid, p.acc);
    stage(kb, v, vs, vb0, t0, end, p.tile, p.Ev, fr.tid, p.acc);
    kb.barrier();
    Val n = kernel::min(end - t0, kb.u32(p.tile));
    kb.for_(0u, n, 1u, [&](Val j) {
      Val kj = j * p.E, vj = j * p.Ev;
      f(t0 + j,
        dot(
            qr, [&](std::uint32_t e) { return Val(ks[kj + e]); }, fr.zero),
        kj, vj);
    });
    kb.barrier();
  });
}

/// Arguments: q, k, v, out, [lse], [mask], [bias], [offsets], L, S, scale, batch, [mask strides],
/// [bias strides]. Grid: (query blocks of kRows, batch rows).
kernel::Kernel build_forward(const Plan& p) {
  KernelBuilder kb(p.name("fwd"), {kRows, 1, 1});
  kb.allow_contraction();
  Mem q = kb.buffer("q", p.e, kernel::Access::Read);
  Mem k = kb.buffer("k", p.e, kernel::Access::Read);
  Mem v = kb.buffer("v", p.e, kernel::Access::Read);
  Mem o = kb.buffer("out", p.e, kernel::Access::Write);
  std::optional<Mem> lse;
  if (p.lse) lse = kb.buffer("lse", p.acc, kernel::Access::Write);
  const Frame fr(kb, p);
  Mem ks = kb.shared(p.acc, p.tile * p.E), vs = kb.shared(p.acc, p.tile * p.Ev);
  const Val one = kb.constant(p.acc, 1), zero = fr.zero, ninf = fr.ninf;
  Val l = fr.first + fr.tid;
  Val live = l < fr.L;
  Val lc = kernel::select(live, l, kb.u32(0));
  std::vector<Var> qr = registers(kb, p.E, zero), acc = registers(kb, p.Ev, zero);
  Val qb = (fr.bh * fr.L + lc) * p.E;
  kb.if_(live, [&] {
    for (std::uint32_t e = 0; e < p.E; ++e) qr[e] = kernel::cast(q[qb + e], p.acc);
  });
  Var m = kb.var(ninf), sum = kb.var(zero);
  walk_keys(kb, p, fr, k, v, ks, vs, fr.key_end(p), qr, [&](Val s, Val d, Val, Val vj) {
    Val sc = fr.mk.score(p, lc, s, d, fr.scale, ninf);
    Val mn = nan_max(m.get(), sc);
    Val dead = mn == ninf;
    Val corr = kernel::select(dead, one, kernel::exp(m.get() - mn));
    Val pr = kernel::select(dead, zero, kernel::exp(sc - mn));
    sum = sum.get() * corr + pr;
    for (std::uint32_t c = 0; c < p.Ev; ++c) acc[c] = acc[c].get() * corr + pr * Val(vs[vj + c]);
    m = mn;
  });
  kb.if_(live, [&] {
    Val none = sum.get() == zero;  // every key masked: zeros (torch's _safe_softmax)
    Val ob = (fr.bh * fr.L + l) * p.Ev;
    for (std::uint32_t c = 0; c < p.Ev; ++c)
      o[ob + c] = kernel::cast(kernel::select(none, zero, acc[c].get() / sum.get()), p.e);
    if (lse) (*lse)[fr.bh * fr.L + l] = m.get() + kernel::log(sum.get());
  });
  return kb.build();
}

/// Arguments: q, k, v, out, dout, lse, dq, D, [mask], [bias], [offsets], L, S, scale, batch, [mask
/// strides], [bias strides]. Grid: (query blocks of kRows, batch rows).
kernel::Kernel build_dq(const Plan& p) {
  KernelBuilder kb(p.name("dq"), {kRows, 1, 1});
  kb.allow_contraction();
  Mem q = kb.buffer("q", p.e, kernel::Access::Read);
  Mem k = kb.buffer("k", p.e, kernel::Access::Read);
  Mem v = kb.buffer("v", p.e, kernel::Access::Read);
  Mem o = kb.buffer("out", p.e, kernel::Access::Read);
  Mem dout = kb.buffer("dout", p.e, kernel::Access::Read);
  Mem lse = kb.buffer("lse", p.acc, kernel::Access::Read);
  Mem dq = kb.buffer("dq", p.e, kernel::Access::Write);
  Mem dd = kb.buffer("D", p.acc, kernel::Access::Write);
  const Frame fr(kb, p);
  Mem ks = kb.shared(p.acc, p.tile * p.E), vs = kb.shared(p.acc, p.tile * p.Ev);
  const Val zero = fr.zero, ninf = fr.ninf;
  Val l = fr.first + fr.tid;
  Val live = l < fr.L;
  Val lc = kernel::select(live, l, kb.u32(0));
  std::vector<Var> qr = registers(kb, p.E, zero), dor = registers(kb, p.Ev, zero);
  std::vector<Var> g = registers(kb, p.E, zero);
  Var di = kb.var(zero), li = kb.var(ninf);
  Val qb = (fr.bh * fr.L + lc) * p.E, ob = (fr.bh * fr.L + lc) * p.Ev;
  kb.if_(live, [&] {
    for (std::uint32_t e = 0; e < p.E; ++e) qr[e] = kernel::cast(q[qb + e], p.acc);
    for (std::uint32_t c = 0; c < p.Ev; ++c) dor[c] = kernel::cast(dout[ob + c], p.acc);
    di = dot(
        dor, [&](std::uint32_t c) { return kernel::cast(o[ob + c], p.acc); }, zero);
    li = lse[fr.bh * fr.L + l];
  });
  walk_keys(kb, p, fr, k, v, ks, vs, fr.key_end(p), qr, [&](Val s, Val d, Val kj, Val vj) {
    Val sc = fr.mk.score(p, lc, s, d, fr.scale, ninf);
    Val pr = kernel::select(li.get() == ninf, zero, kernel::exp(sc - li.get()));
    Val dp = dot(
        dor, [&](std::uint32_t c) { return Val(vs[vj + c]); }, zero);
    Val ds = pr * (dp - di.get());
    for (std::uint32_t e = 0; e < p.E; ++e) g[e] = g[e].get() + ds * Val(ks[kj + e]);
  });
  kb.if_(live, [&] {
    for (std::uint32_t e = 0; e < p.E; ++e) dq[qb + e] = kernel::cast(g[e].get() * fr.scale, p.e);
    dd[fr.bh * fr.L + l] = di.get();
  });
  return kb.build();
}

/// Arguments: q, k, v, dout, lse, D, dk, dv, [mask], [bias], [offsets], L, S, scale, batch, [mask
/// strides], [bias strides]. Grid: (key blocks of kRows, batch rows).
kernel::Kernel build_dkdv(const Plan& p) {
  KernelBuilder kb(p.name("dkdv"), {kRows, 1, 1});
  kb.allow_contraction();
  Mem q = kb.buffer("q", p.e, kernel::Access::Read);
  Mem k = kb.buffer("k", p.e, kernel::Access::Read);
  Mem v = kb.buffer("v", p.e, kernel::Access::Read);
  Mem dout = kb.buffer("dout", p.e, kernel::Access::Read);
  Mem lse = kb.buffer("lse", p.acc, kernel::Access::Read);
  Mem dd = kb.buffer("D", p.acc, kernel::Access::Read);
  Mem dk = kb.buffer("dk", p.e, kernel::Access::Write);
  Mem dv = kb.buffer("dv", p.e, kernel::Access::Write);
  const Frame fr(kb, p);
  Mem qs = kb.shared(p.acc, p.tile * p.E), dos = kb.shared(p.acc, p.tile * p.Ev);
  Mem ls = kb.shared(p.acc, p.tile), ds_ = kb.shared(p.acc, p.tile);
  const Val zero = fr.zero, ninf = fr.ninf, L = fr.L, bh = fr.bh, tid = fr.tid;
  Val s = fr.first + tid;
  Val live = s < fr.S;
  Val sc0 = kernel::select(live, s, kb.u32(0));
  std::vector<Var> kr = registers(kb, p.E, zero), vr = registers(kb, p.Ev, zero);
  std::vector<Var> gk = registers(kb, p.E, zero), gv = registers(kb, p.Ev, zero);
  Val kb0 = (bh * fr.S + sc0) * p.E, vb0 = (bh * fr.S + sc0) * p.Ev;
  kb.if_(live, [&] {
    for (std::uint32_t e = 0; e < p.E; ++e) kr[e] = kernel::cast(k[kb0 + e], p.acc);
    for (std::uint32_t c = 0; c < p.Ev; ++c) vr[c] = kernel::cast(v[vb0 + c], p.acc);
  });
  // Causal: queries before the workgroup's first key see none of its keys.
  Val start = p.causal ? kernel::min(fr.first, L) : kb.u32(0);
  Val qb0 = bh * L * p.E, ob0 = bh * L * p.Ev;
  kb.for_(start, L, kb.u32(p.tile), [&](Val t0) {
    stage(kb, q, qs, qb0, t0, L, p.tile, p.E, tid, p.acc);
    stage(kb, dout, dos, ob0, t0, L, p.tile, p.Ev, tid, p.acc);
    for (std::uint32_t c = 0; c < p.tile; c += kRows) {
      Val i = tid + c;
      Val row = t0 + i;
      Var lv = kb.var(ninf), dv0 = kb.var(zero);
      kb.if_(i < p.tile, [&] {
        kb.if_(row < L, [&] {
          lv = lse[bh * L + row];
          dv0 = dd[bh * L + row];
        });
        ls[i] = lv.get();
        ds_[i] = dv0.get();
      });
    }
    kb.barrier();
    Val n = kernel::min(L - t0, kb.u32(p.tile));
    kb.for_(0u, n, 1u, [&](Val i) {
      Val qi = i * p.E, oi = i * p.Ev;
      Val sc = fr.mk.score(p, t0 + i, sc0,
                           dot(
                               kr, [&](std::uint32_t e) { return Val(qs[qi + e]); }, zero),
                           fr.scale, ninf);
      Val li = ls[i];
      Val pr = kernel::select(li == ninf, zero, kernel::exp(sc - li));
      for (std::uint32_t c = 0; c < p.Ev; ++c) gv[c] = gv[c].get() + pr * Val(dos[oi + c]);
      Val dp = dot(
          vr, [&](std::uint32_t c) { return Val(dos[oi + c]); }, zero);
      Val dsv = pr * (dp - Val(ds_[i]));
      for (std::uint32_t e = 0; e < p.E; ++e) gk[e] = gk[e].get() + dsv * Val(qs[qi + e]);
    });
    kb.barrier();
  });
  kb.if_(live, [&] {
    for (std::uint32_t e = 0; e < p.E; ++e) dk[kb0 + e] = kernel::cast(gk[e].get() * fr.scale, p.e);
    for (std::uint32_t c = 0; c < p.Ev; ++c) dv[vb0 + c] = kernel::cast(gv[c].get(), p.e);
  });
  return kb.build();
}

std::uint64_t len(const GpuTensor& t) {
  return static_cast<std::uint64_t>(std::max<std::int64_t>(t.numel(), 1));
}
Arg buf(const GpuTensor& t) {
  return Arg::buf(t.buffer, static_cast<std::uint64_t>(t.offset), len(t));
}

/// What the three kernels share: sizes, packed q/k/v, the mask and bias with their offset
/// table and strides, the plan, and the grid's batch rows.
struct Setup {
  Plan plan;
  std::int64_t bf = 1, L = 0, S = 0;
  Shape lse_shape;
  GpuTensor q, k, v;
  std::optional<GpuTensor> mask, bias, offs;
  std::uint32_t msl = 0, mss = 0, bsl = 0, bss = 0;

  /// The mask/bias buffers and offsets (after the kernel's own buffers), for `args`.
  void masking_buffers(std::vector<Arg>& args) const {
    if (mask) args.push_back(buf(*mask));
    if (bias) args.push_back(buf(*bias));
    if (offs) args.push_back(buf(*offs));
  }
  void scalars(std::vector<Arg>& args, double scale) const {
    args.push_back(Arg::u32(static_cast<std::uint32_t>(L)));
    args.push_back(Arg::u32(static_cast<std::uint32_t>(S)));
    args.push_back(Arg::scalar(plan.acc, scale));
    args.push_back(Arg::u32(static_cast<std::uint32_t>(bf)));
    if (mask) {
      args.push_back(Arg::u32(msl));
      args.push_back(Arg::u32(mss));
    }
    if (bias) {
      args.push_back(Arg::u32(bsl));
      args.push_back(Arg::u32(bss));
    }
  }
};

/// The setup of a case, nullopt when the kernels do not serve it (see the header).
std::optional<Setup> setup(const GpuTensor& q, const GpuTensor& k, const GpuTensor& v,
                           const std::optional<GpuTensor>& mask,
                           const std::optional<GpuTensor>& bias, bool is_causal) {
  kernel::ComputeDevice& dev = q.compute();
  const auto& props = dev.properties();
  const DType dt = q.dtype;
  if (dt != DType::F32 && dt != DType::F16 && dt != DType::BF16 && dt != DType::F64) return {};
  if (!native_dtype(dt, dev) || !native_dtype(DType::I32, dev)) return {};
  const std::size_t r = q.shape.rank();
  Setup st;
  st.L = q.shape[r - 2];
  st.S = k.shape[r - 2];
  const std::int64_t E = q.shape[r - 1], Ev = v.shape[r - 1];
  for (std::size_t d = 0; d + 2 < r; ++d) st.bf *= q.shape[d];
  if (E < 1 || Ev < 1 || E > kMaxHead || Ev > kMaxHead) return {};
  const std::int64_t limit = 0xffffffff;
  if (q.numel() > limit || k.numel() > limit || v.numel() > limit || st.bf * st.L * Ev > limit)
    return {};
  if (mask && mask->numel() > limit) return {};
  if (bias && bias->numel() > limit) return {};
  if (st.bf > std::int64_t{props.max_grid[1]} * props.max_grid[2] ||
      (st.L + kRows - 1) / kRows > props.max_grid[0] ||
      (st.S + kRows - 1) / kRows > props.max_grid[0])
    return {};
  Plan& p = st.plan;
  p.e = elem_of(dt, "scaled_dot_product_attention");
  p.acc = dt == DType::F64 ? Elem::F64 : Elem::F32;
  p.E = static_cast<std::uint32_t>(E);
  p.Ev = static_cast<std::uint32_t>(Ev);
  p.causal = is_causal;
  p.mask = mask.has_value();
  p.bias = bias.has_value();
  const std::uint32_t bytes = p.acc == Elem::F64 ? 8 : 4;
  const std::uint32_t budget = std::min(props.shared_memory_bytes, kSharedBudget);
  p.tile = kRows;
  while (p.tile > 8 && p.tile * (p.E + p.Ev + 2) * bytes > budget) p.tile /= 2;
  if (p.tile * (p.E + p.Ev + 2) * bytes > budget) return {};
  // A thread walks every key (or query) once, and two loop tests per tile.
  const std::int64_t walk = std::max(st.L, st.S);
  if (props.software && walk + 2 * ((walk + p.tile - 1) / p.tile) + 2 >= kMaxLoopIterations)
    return {};
  st.q = packed(q);
  st.k = packed(k);
  st.v = packed(v);
  st.lse_shape = q.shape;
  st.lse_shape.dims.pop_back();
  if (mask || bias) {
    // Each batch row's offset into the mask and the bias, from their broadcast shapes.
    std::vector<std::int32_t> table(static_cast<std::size_t>(st.bf) * 2, 0);
    const auto fill = [&](const GpuTensor& t, std::size_t col, std::uint32_t& sl,
                          std::uint32_t& ss) -> bool {
      const std::vector<std::int64_t> cs = t.shape.contiguous_strides();  // packed
      for (std::int64_t b = 0; b < st.bf; ++b) {
        std::int64_t rest = b, off = 0;
        for (std::size_t d = r - 2; d-- > 0;) {
          const std::int64_t i = rest % q.shape[d];
          rest /= q.shape[d];
          if (t.shape[d] != 1) off += i * cs[d];
        }
        if (off > std::numeric_limits<std::int32_t>::max()) return false;
        table[static_cast<std::size_t>(b) * 2 + col] = static_cast<std::int32_t>(off);
      }
      sl = t.shape[r - 2] == 1 ? 0u : static_cast<std::uint32_t>(cs[r - 2]);
      ss = t.shape[r - 1] == 1 ? 0u : static_cast<std::uint32_t>(cs[r - 1]);
      return true;
    };
    if (mask) {
      st.mask = packed(*mask);
      if (!fill(*st.mask, 0, st.msl, st.mss)) return {};
    }
    if (bias) {
      st.bias = packed(*bias);
      if (!fill(*st.bias, 1, st.bsl, st.bss)) return {};
    }
    st.offs = upload(TensorData(std::move(table), Shape{st.bf * 2}), dev, q.device);
  }
  return st;
}

/// Blocks of kRows rows in x; the batch rows in y, then z when they exceed the device's y.
kernel::Grid grid(const kernel::ComputeDevice& dev, std::int64_t rows, std::int64_t bf) {
  const std::int64_t y = std::min<std::int64_t>(bf, dev.properties().max_grid[1]);
  return kernel::Grid{static_cast<std::uint32_t>((rows + kRows - 1) / kRows),
                      static_cast<std::uint32_t>(y), static_cast<std::uint32_t>((bf + y - 1) / y)};
}

}  // namespace

std::optional<std::pair<GpuTensor, GpuTensor>> attention(const GpuTensor& q, const GpuTensor& k,
                                                         const GpuTensor& v,
                                                         const std::optional<GpuTensor>& mask,
                                                         const std::optional<GpuTensor>& bias,
                                                         bool is_causal, double scale,
                                                         bool with_lse) {
  std::optional<Setup> st = setup(q, k, v, mask, bias, is_causal);
  if (!st) return std::nullopt;
  st->plan.lse = with_lse;
  kernel::ComputeDevice& dev = q.compute();
  const Plan& p = st->plan;
  const kernel::CompiledKernel* kern =
      compiled(dev, p.key("fwd"), [&] { return build_forward(p); });
  if (!kern) return std::nullopt;
  // The backward kernels must serve whatever the training forward served.
  if (with_lse && (!compiled(dev, p.key("dq"), [&] { return build_dq(p); }) ||
                   !compiled(dev, p.key("dkdv"), [&] { return build_dkdv(p); })))
    return std::nullopt;
  Shape out_shape = q.shape;
  out_shape.dims.back() = v.shape.dims.back();
  GpuTensor out = empty(out_shape, q.dtype, dev, q.device);
  GpuTensor lse = empty(with_lse ? st->lse_shape : Shape{0},
                        p.acc == Elem::F64 ? DType::F64 : DType::F32, dev, q.device);
  if (out.numel() == 0) return std::make_pair(std::move(out), std::move(lse));
  std::vector<Arg> args{buf(st->q), buf(st->k), buf(st->v), buf(out)};
  if (with_lse) args.push_back(buf(lse));
  st->masking_buffers(args);
  st->scalars(args, scale);
  dev.launch(*kern, grid(dev, st->L, st->bf), args);
  return std::make_pair(std::move(out), std::move(lse));
}

std::optional<std::vector<GpuTensor>> attention_backward(
    const GpuTensor& q, const GpuTensor& k, const GpuTensor& v, const GpuTensor& out,
    const GpuTensor& dout, const GpuTensor& lse, const std::optional<GpuTensor>& mask,
    const std::optional<GpuTensor>& bias, bool is_causal, double scale) {
  // The forward's own results, or nothing (the kernels would read past them).
  Shape lse_shape = q.shape;
  lse_shape.dims.pop_back();
  Shape out_shape = q.shape;
  out_shape.dims.back() = v.shape.dims.back();
  const DType lse_dtype = q.dtype == DType::F64 ? DType::F64 : DType::F32;
  if (out.dtype != q.dtype || dout.dtype != q.dtype || out.shape != out_shape ||
      dout.shape != out_shape || lse.dtype != lse_dtype || lse.shape != lse_shape)
    return std::nullopt;
  std::optional<Setup> st = setup(q, k, v, mask, bias, is_causal);
  if (!st) return std::nullopt;
  kernel::ComputeDevice& dev = q.compute();
  Plan& p = st->plan;
  p.lse = true;
  const kernel::CompiledKernel* kdq = compiled(dev, p.key("dq"), [&] { return build_dq(p); });
  const kernel::CompiledKernel* kdkdv = compiled(dev, p.key("dkdv"), [&] { return build_dkdv(p); });
  if (!kdq || !kdkdv) return std::nullopt;
  GpuTensor dq = empty(q.shape, q.dtype, dev, q.device);
  GpuTensor dk = empty(k.shape, k.dtype, dev, q.device);
  GpuTensor dv = empty(v.shape, v.dtype, dev, q.device);
  const GpuTensor o = packed(out), go = packed(dout), ls = packed(lse);
  GpuTensor dd = empty(st->lse_shape, ls.dtype, dev, q.device);
  if (dq.numel() > 0) {
    std::vector<Arg> args{buf(st->q), buf(st->k), buf(st->v), buf(o),
                          buf(go),    buf(ls),    buf(dq),    buf(dd)};
    st->masking_buffers(args);
    st->scalars(args, scale);
    dev.launch(*kdq, grid(dev, st->L, st->bf), args);
  }
  if (dk.numel() > 0 || dv.numel() > 0) {
    if (st->L == 0) {
      // No queries: no gradient reaches k or v.
      dk = upload(TensorData::full(k.shape, 0.0, k.dtype), dev, q.device);
      dv = upload(TensorData::full(v.shape, 0.0, v.dtype), dev, q.device);
    } else {
      std::vector<Arg> args{buf(st->q), buf(st->k), buf(st->v), buf(go),
                            buf(ls),    buf(dd),    buf(dk),    buf(dv)};
      st->masking_buffers(args);
      st->scalars(args, scale);
      dev.launch(*kdkdv, grid(dev, st->S, st->bf), args);
    }
  }
  return std::vector<GpuTensor>{std::move(dq), std::move(dk), std::move(dv)};
}

}  // namespace ember::gpu
