// Vectors, buffer metadata and strided views, scalars, compile-time defines, local and
// shared arrays with barriers, and atomics on every target.
#include <algorithm>
#include <numeric>

#include "eval.hpp"
#include "kernel_test.hpp"

namespace ember::kernel::test {
namespace {

class Memory : public KernelTest {};

bool elem_supported(const DeviceProperties& p, Elem e) {
  switch (e) {
    case Elem::F16:
      return p.f16;
    case Elem::BF16:
      return p.bf16;
    case Elem::F64:
      return p.f64;
    case Elem::I64:
      return p.i64;
    case Elem::U8:
    case Elem::Bool:
      return p.u8;
    default:
      return true;
  }
}

// y[i] = insert(v + splat(v[0]), 1, 7) for v = x.load(i, lanes): wide loads and stores,
// extract, splat, insert and vector arithmetic, for every element type and width.
TEST_P(Memory, VectorsOfEveryTypeAndWidth) {
  int ran = 0;
  for (Elem e : kAllElems) {
    if (!elem_supported(props(), e)) continue;
    for (int lanes : {2, 4, 8}) {
      KernelBuilder kb("vec_" + std::string(elem_name(e)) + "_x" + std::to_string(lanes),
                       {32, 1, 1});
      Mem x = kb.buffer("x", e, Access::Read);
      Mem y = kb.buffer("y", e, Access::Write);
      Val i = kb.absolute_pos();
      kb.if_in_bounds(i, x.len() / static_cast<std::uint32_t>(lanes), [&] {
        Val v = x.load(i, lanes);
        Val first = extract(v, 0);
        Val r = e == Elem::Bool ? (v ^ splat(first, lanes)) : v + splat(first, lanes);
        r = insert(r, 1, e == Elem::Bool ? kb.boolean(true) : kb.constant(e, 7));
        y.store(i, r);
      });
      const Kernel k = kb.build();
      const std::size_t n = 64 * static_cast<std::size_t>(lanes);
      // inputs as doubles, stored in the element type's bytes
      std::vector<double> xv(n);
      for (std::size_t j = 0; j < n; ++j)
        xv[j] = e == Elem::Bool
                    ? (j * 7 % 3 == 0)
                    : static_cast<double>((j * 37) % 101) - (is_unsigned_int(e) ? 0 : 40);
      const int eb = elem_bytes(e);
      std::vector<std::uint8_t> bytes(n * eb);
      const auto put = [&](std::uint8_t* p, double v) {
        eval::with_elem(e, [&](auto te) {
          constexpr Elem E = decltype(te)::value;
          const auto r = eval::cast_elem<E, Elem::F64>(v);
          if constexpr (E == Elem::F16 || E == Elem::BF16) {
            const std::uint16_t h = E == Elem::F16 ? f16::from_float(r) : bf16::from_float(r);
            std::memcpy(p, &h, 2);
          } else {
            std::memcpy(p, &r, sizeof(r));
          }
        });
      };
      const auto get = [&](const std::uint8_t* p) {
        double v = 0;
        eval::with_elem(e, [&](auto te) {
          constexpr Elem E = decltype(te)::value;
          if constexpr (E == Elem::F16 || E == Elem::BF16) {
            std::uint16_t h;
            std::memcpy(&h, p, 2);
            v = E == Elem::F16 ? f16::to_float(h) : bf16::to_float(h);
          } else {
            eval::Reg<E> r;
            std::memcpy(&r, p, sizeof(r));
            v = static_cast<double>(r);
          }
        });
        return v;
      };
      for (std::size_t j = 0; j < n; ++j) put(&bytes[j * eb], xv[j]);
      auto c = compile(k);
      Buffer bx = up(bytes), by = poisoned<std::uint8_t>(bytes.size());
      run(c, grid_for(k, n / lanes), {Arg::buf(bx), Arg::buf(by)});
      const auto got = down<std::uint8_t>(by, bytes.size());
      for (std::size_t j = 0; j < n; ++j) {
        const std::size_t v0 = j - j % lanes;
        const double a = get(&bytes[j * eb]), f = get(&bytes[v0 * eb]);
        double want =
            j % lanes == 1 ? (e == Elem::Bool ? 1 : 7) : (e == Elem::Bool ? double(a != f) : a + f);
        if (e == Elem::U8) want = static_cast<std::uint8_t>(static_cast<int>(want));
        ASSERT_EQ(get(&got[j * eb]), want) << elem_name(e) << " x" << lanes << " element " << j;
      }
      ++ran;
    }
  }
  EXPECT_GE(ran, 12);
}

// A strided (transposed) view read through shape/stride metadata; one compiled kernel
// serves two shapes.
TEST_P(Memory, StridedViewsAndMetadata) {
  KernelBuilder kb("copy2d", {64, 1, 1});
  Mem x = kb.buffer("x", Elem::F32, Access::Read, 2);
  Mem y = kb.buffer("y", Elem::F32, Access::Write, 2);
  Mem info = kb.buffer("meta", Elem::U32, Access::Write);
  Val p = kb.absolute_pos();
  Val rows = x.shape(0u), cols = x.shape(1u);
  kb.if_in_bounds(p, rows * cols, [&] {
    Val i = p / cols, j = p % cols;
    y[i * y.stride(0u) + j * y.stride(1u)] = x[i * x.stride(0u) + j * x.stride(1u)];
  });
  kb.if_(p == 0u, [&] {
    info[0u] = x.len();
    info[1u] = rows;
    info[2u] = x.stride(kb.u32(1));
    info[3u] = y.len();
  });
  const Kernel k = kb.build();
  auto c = compile(k);
  for (auto [r, cl] : {std::pair<std::uint32_t, std::uint32_t>{5, 7}, {3, 130}}) {
    std::vector<float> src(r * cl);
    std::iota(src.begin(), src.end(), 1.0f);
    Buffer bx = up(src), by = poisoned<float>(src.size()), bm = poisoned<std::uint32_t>(4);
    // x is src [r, cl] seen transposed: shape [cl, r], strides [1, cl]
    run(c, grid_for(k, src.size()),
        {Arg::view(bx, {cl, r}, {1, cl}), Arg::view(by, {cl, r}), Arg::buf(bm)});
    const auto got = down<float>(by, src.size());
    for (std::uint32_t i = 0; i < cl; ++i)
      for (std::uint32_t j = 0; j < r; ++j)
        ASSERT_EQ(got[i * r + j], src[j * cl + i]) << i << "," << j;
    EXPECT_EQ(down<std::uint32_t>(bm, 4), (std::vector<std::uint32_t>{r * cl, cl, cl, r * cl}));
  }
}

TEST_P(Memory, RuntimeScalarsAndDefines) {
  const bool wide = props().i64 && props().f64 && props().u8;
  KernelBuilder kb("scalars", {1, 1, 1});
  Mem out = kb.buffer("out", Elem::F32, Access::Write);
  Val a = kb.scalar("a", Elem::F32), b = kb.scalar("b", Elem::I32), c = kb.scalar("c", Elem::U32);
  Val flag = kb.scalar("flag", Elem::Bool);
  Val scale = kb.define("scale", Elem::F32, 2.5);
  Val r = (a + cast(b, Elem::F32) + cast(c, Elem::F32)) * scale;
  out[0u] = select(flag, r, -r);
  Mem out64 = wide ? kb.buffer("out64", Elem::F64, Access::Write) : out;
  Mem outi = wide ? kb.buffer("outi", Elem::I64, Access::Write) : out;
  Mem out8 = wide ? kb.buffer("out8", Elem::U8, Access::Write) : out;
  if (wide) {
    Val d = kb.scalar("d", Elem::F64), e = kb.scalar("e", Elem::I64), g = kb.scalar("g", Elem::U8);
    out64[0u] = d / 3.0;
    outi[0u] = e * 3;
    out8[0u] = g + 200;
  }
  const Kernel k = kb.build();
  EXPECT_NE(to_string(k).find("define scale = 2.5"), std::string::npos) << to_string(k);
  auto cc = compile(k);
  Buffer bo = poisoned<float>(1), b64 = poisoned<double>(1), bi = poisoned<std::int64_t>(1),
         b8 = poisoned<std::uint8_t>(4);
  std::vector<Arg> args = {Arg::buf(bo), Arg::f32(1.5f), Arg::i32(-4), Arg::u32(10),
                           Arg::scalar(Elem::Bool, 0)};
  if (wide) {
    args.insert(args.end(), {Arg::buf(b64), Arg::buf(bi), Arg::buf(b8), Arg::f64(1.0),
                             Arg::i64(std::int64_t{1} << 40), Arg::scalar(Elem::U8, 100)});
  }
  dev().launch(*cc, Grid{}, args);
  dev().sync();
  EXPECT_EQ(down<float>(bo, 1)[0], -(1.5f - 4 + 10) * 2.5f);
  if (wide) {
    EXPECT_EQ(down<double>(b64, 1)[0], 1.0 / 3.0);
    EXPECT_EQ(down<std::int64_t>(bi, 1)[0], std::int64_t{3} << 40);
    EXPECT_EQ(down<std::uint8_t>(b8, 1)[0], static_cast<std::uint8_t>(300 - 256));
  }
}

TEST_P(Memory, LocalArrays) {
  KernelBuilder kb("local_array", {32, 1, 1});
  Mem x = kb.buffer("x", Elem::I32, Access::Read);
  Mem y = kb.buffer("y", Elem::I32, Access::Write);
  Mem tmp = kb.local(Elem::I32, 8);
  Val i = kb.absolute_pos();
  kb.if_in_bounds(i, y.len(), [&] {
    Val v = x[i];
    kb.for_(0u, kb.u32(8), 1u,
            [&](Val k) { tmp[k] = v * cast(k, Elem::I32) + cast(k, Elem::I32); });
    Var acc = kb.var(kb.i32(0));
    kb.for_(0u, kb.u32(8), 1u, [&](Val k) { acc = acc * 3 + tmp[kb.u32(7) - k]; });
    y[i] = acc;
  });
  const Kernel k = kb.build();
  std::vector<std::int32_t> xv(100);
  std::iota(xv.begin(), xv.end(), -50);
  auto c = compile(k);
  Buffer bx = up(xv), by = poisoned<std::int32_t>(xv.size());
  run(c, grid_for(k, xv.size()), {Arg::buf(bx), Arg::buf(by)});
  const auto got = down<std::int32_t>(by, xv.size());
  for (std::size_t j = 0; j < xv.size(); ++j) {
    std::int32_t acc = 0;
    for (int kk = 7; kk >= 0; --kk) acc = acc * 3 + (xv[j] * kk + kk);
    EXPECT_EQ(got[j], acc);
  }
}

// Shared memory and barriers: reverse within a workgroup, then a tree reduction.
TEST_P(Memory, SharedMemoryAndBarriers) {
  constexpr std::uint32_t wg = 64;
  KernelBuilder kb("shared_reduce", {wg, 1, 1});
  Mem x = kb.buffer("x", Elem::F32, Access::Read);
  Mem rev = kb.buffer("rev", Elem::F32, Access::Write);
  Mem sums = kb.buffer("sums", Elem::F32, Access::Write);
  Mem s = kb.shared(Elem::F32, wg);
  Val t = kb.thread_idx(0), g = kb.absolute_pos();
  s[t] = x[g];
  kb.barrier();
  rev[g] = s[kb.u32(wg - 1) - t];
  kb.barrier();
  Var stride = kb.var(kb.u32(wg / 2));
  kb.loop([&] {
    kb.if_(Val(stride) == 0u, [&] { kb.break_(); });
    kb.if_(t < stride, [&] { s[t] = s[t] + s[t + stride]; });
    kb.barrier();
    stride = Val(stride) >> 1u;
  });
  kb.if_(t == 0u, [&] { sums[kb.block_idx(0)] = s[0u]; });
  const Kernel k = kb.build();
  const std::size_t groups = 5;
  std::vector<float> xv(groups * wg);
  for (std::size_t j = 0; j < xv.size(); ++j) xv[j] = static_cast<float>((j * 13) % 17);
  auto c = compile(k);
  Buffer bx = up(xv), br = poisoned<float>(xv.size()), bs = poisoned<float>(groups);
  run(c, Grid{static_cast<std::uint32_t>(groups)}, {Arg::buf(bx), Arg::buf(br), Arg::buf(bs)});
  const auto r = down<float>(br, xv.size()), sm = down<float>(bs, groups);
  for (std::size_t gi = 0; gi < groups; ++gi) {
    float want = 0;
    for (std::uint32_t j = 0; j < wg; ++j) {
      want += xv[gi * wg + j];
      EXPECT_EQ(r[gi * wg + j], xv[gi * wg + wg - 1 - j]);
    }
    EXPECT_EQ(sm[gi], want);
  }
}

TEST_P(Memory, Atomics) {
  EMBER_REQUIRE(props().float_atomics, "f32 atomics");
  const std::uint32_t n = 1000;
  KernelBuilder kb("atomics", {64, 1, 1});
  Mem x = kb.buffer("x", Elem::I32, Access::Read);
  Mem hist = kb.buffer("hist", Elem::U32, Access::ReadWrite);
  Mem fsum = kb.buffer("fsum", Elem::F32, Access::ReadWrite);
  Mem ext = kb.buffer("ext", Elem::I32, Access::ReadWrite);    // [min, max]
  Mem fext = kb.buffer("fext", Elem::F32, Access::ReadWrite);  // [min, max]
  Mem cnt = kb.buffer("cnt", Elem::U32, Access::ReadWrite);    // CAS counter, exchange slot
  Mem olds = kb.buffer("olds", Elem::U32, Access::Write);
  Mem s = kb.shared(Elem::U32, 1);
  Val i = kb.absolute_pos(), t = kb.thread_idx(0);
  kb.if_(t == 0u, [&] { s[0u] = 0u; });
  kb.barrier();
  kb.if_in_bounds(i, x.len(), [&] {
    Val v = x[i];
    hist.atomic_add(cast(v & 15, Elem::U32), kb.u32(1));
    fsum.atomic_add(kb.u32(0), cast(v, Elem::F32));
    ext.atomic_min(kb.u32(0), v);
    ext.atomic_max(kb.u32(1), v);
    fext.atomic_min(kb.u32(0), cast(v, Elem::F32) * 0.5f);
    fext.atomic_max(kb.u32(1), cast(v, Elem::F32) * 0.5f);
    // lock-free increment with compare-exchange
    kb.loop([&] {
      Val old = cnt[0u];
      kb.if_(cnt.atomic_compare_exchange(kb.u32(0), old, old + 1u) == old, [&] { kb.break_(); });
    });
    olds[i] = cnt.atomic_exchange(kb.u32(1), i + 1u);
    s.atomic_add(kb.u32(0), kb.u32(1));
  });
  kb.barrier();
  kb.if_(t == 0u, [&] { hist.atomic_add(kb.u32(16), s[0u]); });
  const Kernel k = kb.build();
  std::vector<std::int32_t> xv(n);
  for (std::uint32_t j = 0; j < n; ++j) xv[j] = static_cast<std::int32_t>((j * 7919) % 2003) - 1000;
  auto c = compile(k);
  Buffer bx = up(xv), bh = up(std::vector<std::uint32_t>(17, 0)), bf = up(std::vector<float>{0}),
         be = up(std::vector<std::int32_t>{INT32_MAX, INT32_MIN}),
         bfe = up(std::vector<float>{1e30f, -1e30f}), bc = up(std::vector<std::uint32_t>{0, 0}),
         bo = poisoned<std::uint32_t>(n);
  run(c, grid_for(k, n),
      {Arg::buf(bx), Arg::buf(bh), Arg::buf(bf), Arg::buf(be), Arg::buf(bfe), Arg::buf(bc),
       Arg::buf(bo)});
  std::vector<std::uint32_t> want_h(17, 0);
  double want_sum = 0;
  for (std::int32_t v : xv) {
    ++want_h[static_cast<std::uint32_t>(v & 15)];
    want_sum += v;
  }
  want_h[16] = n;  // the shared counters, summed over workgroups
  EXPECT_EQ(down<std::uint32_t>(bh, 17), want_h);
  EXPECT_EQ(down<float>(bf, 1)[0], static_cast<float>(want_sum));  // integers: exact in any order
  const auto [mn, mx] = std::minmax_element(xv.begin(), xv.end());
  EXPECT_EQ(down<std::int32_t>(be, 2), (std::vector<std::int32_t>{*mn, *mx}));
  EXPECT_EQ(down<float>(bfe, 2), (std::vector<float>{*mn * 0.5f, *mx * 0.5f}));
  const auto cn = down<std::uint32_t>(bc, 2);
  EXPECT_EQ(cn[0], n);  // every thread incremented once
  // exchange: the old values are 0 and every i + 1 but one (the last writer's)
  auto o = down<std::uint32_t>(bo, n);
  o.push_back(cn[1]);
  std::sort(o.begin(), o.end());
  for (std::uint32_t j = 0; j <= n; ++j) ASSERT_EQ(o[j], j);
}

TEST_P(Memory, Int64Atomics) {
  EMBER_REQUIRE(props().i64_atomics, "i64 atomics");
  KernelBuilder kb("atomics64", {64, 1, 1});
  Mem acc = kb.buffer("acc", Elem::I64, Access::ReadWrite);
  Val i = kb.absolute_pos();
  kb.if_in_bounds(i, kb.u32(500),
                  [&] { acc.atomic_add(kb.u32(0), cast(i, Elem::I64) * (std::int64_t{1} << 33)); });
  const Kernel k = kb.build();
  auto c = compile(k);
  Buffer b = up(std::vector<std::int64_t>{5});
  run(c, grid_for(k, 500), {Arg::buf(b)});
  EXPECT_EQ(down<std::int64_t>(b, 1)[0],
            5 + (std::int64_t{499} * 500 / 2) * (std::int64_t{1} << 33));
}

EMBER_KERNEL_INSTANTIATE(Memory);

}  // namespace
}  // namespace ember::kernel::test
