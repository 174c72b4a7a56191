// Builtins over a 3-D grid, control flow (if/else, early return, for loops with uniform and
// per-thread bounds, loop/break, nesting), mutable variables, bounds-check elision, subgroup
// operations and matrix units, on every target.
#include <numeric>

#include "kernel_test.hpp"

namespace ember::kernel::test {
namespace {

class Control : public KernelTest {};

TEST_P(Control, BuiltinsOnA3DGrid) {
  const std::array<std::uint32_t, 3> wg{4, 2, 2};
  const Grid grid{3, 2, 2};
  constexpr std::uint32_t K = 12;
  KernelBuilder kb("builtins", wg);
  Mem out = kb.buffer("out", Elem::U32, Access::Write);
  Val p = kb.absolute_pos();
  const Val rec[K] = {kb.thread_idx(0), kb.thread_idx(1), kb.thread_idx(2),      kb.block_idx(0),
                      kb.block_idx(1),  kb.block_idx(2),  kb.block_dim(1),       kb.grid_dim(0),
                      kb.grid_dim(2),   kb.global_idx(1), kb.local_linear_idx(), p};
  for (std::uint32_t k = 0; k < K; ++k) out[p * K + k] = rec[k];
  const Kernel kern = kb.build();
  const std::uint32_t total = 16 * 12;
  auto c = compile(kern);
  Buffer b = poisoned<std::uint32_t>(total * K);
  run(c, grid, {Arg::buf(b)});
  const auto got = down<std::uint32_t>(b, total * K);
  std::uint32_t seen = 0;
  for (std::uint32_t bz = 0; bz < 2; ++bz)
    for (std::uint32_t by = 0; by < 2; ++by)
      for (std::uint32_t bx = 0; bx < 3; ++bx)
        for (std::uint32_t tz = 0; tz < 2; ++tz)
          for (std::uint32_t ty = 0; ty < 2; ++ty)
            for (std::uint32_t tx = 0; tx < 4; ++tx) {
              const std::uint32_t local = tx + 4 * (ty + 2 * tz);
              const std::uint32_t pos = ((bz * 2 + by) * 3 + bx) * 16 + local;
              const std::vector<std::uint32_t> want = {tx, ty, tz, bx,          by,    bz,
                                                       2,  3,  2,  by * 2 + ty, local, pos};
              const std::vector<std::uint32_t> rec_got(got.begin() + pos * K,
                                                       got.begin() + pos * K + K);
              ASSERT_EQ(rec_got, want) << "thread " << pos;
              ++seen;
            }
  EXPECT_EQ(seen, total);
}

TEST_P(Control, IfElseAndEarlyReturn) {
  KernelBuilder kb("branches", {32, 1, 1});
  Mem x = kb.buffer("x", Elem::F32, Access::Read);
  Mem y = kb.buffer("y", Elem::I32, Access::ReadWrite);
  Val i = kb.absolute_pos();
  kb.if_(i >= x.len(), [&] { kb.return_(); });
  Val v = x[i];
  kb.if_(v < 0.0f, [&] { kb.return_(); });  // y[i] keeps its value
  Var r = kb.var(kb.i32(0));
  kb.if_else(
      v > 10.0f, [&] { r = kb.i32(1); },
      [&] {
        kb.if_else(
            v > 5.0f, [&] { r = kb.i32(2); }, [&] { r = kb.i32(3); });
      });
  y[i] = r;
  const Kernel k = kb.build();
  std::vector<float> xv(100);
  for (std::size_t j = 0; j < xv.size(); ++j) xv[j] = static_cast<float>(j % 17) - 3;
  auto c = compile(k);
  Buffer bx = up(xv), by = up(std::vector<std::int32_t>(xv.size(), -7));
  run(c, grid_for(k, xv.size() + 40), {Arg::buf(bx), Arg::buf(by)});
  const auto got = down<std::int32_t>(by, xv.size());
  for (std::size_t j = 0; j < xv.size(); ++j) {
    const float v = xv[j];
    EXPECT_EQ(got[j], v < 0 ? -7 : v > 10 ? 1 : v > 5 ? 2 : 3) << v;
  }
}

TEST_P(Control, ForLoops) {
  KernelBuilder kb("for_loops", {32, 1, 1});
  Mem x = kb.buffer("x", Elem::F32, Access::Read);
  Mem y = kb.buffer("y", Elem::F32, Access::Write);
  Mem z = kb.buffer("z", Elem::U32, Access::Write);
  Val n = kb.scalar("n", Elem::U32);
  Val i = kb.absolute_pos();
  kb.if_in_bounds(i, y.len(), [&] {
    Var acc = kb.var(kb.f32(0));
    kb.for_(kb.u32(1), n, kb.u32(3),
            [&](Val k) { acc = acc + x[i] * cast(k, Elem::F32); });  // uniform bounds
    y[i] = acc;
    Var cnt = kb.var(kb.u32(0));
    kb.for_(0u, i % 7u, 1u, [&](Val k) {  // bounds that differ per thread, with a nested loop
      kb.for_(0u, k + 1u, 1u, [&](Val m) { cnt = cnt + m; });
    });
    z[i] = cnt;
  });
  const Kernel k = kb.build();
  std::vector<float> xv(70);
  std::iota(xv.begin(), xv.end(), 0.5f);
  auto c = compile(k);
  Buffer bx = up(xv), by = poisoned<float>(xv.size()), bz = poisoned<std::uint32_t>(xv.size());
  run(c, grid_for(k, xv.size()), {Arg::buf(bx), Arg::buf(by), Arg::buf(bz), Arg::u32(20)});
  const auto gy = down<float>(by, xv.size());
  const auto gz = down<std::uint32_t>(bz, xv.size());
  for (std::size_t j = 0; j < xv.size(); ++j) {
    float acc = 0;
    for (std::uint32_t kk = 1; kk < 20; kk += 3) acc += xv[j] * static_cast<float>(kk);
    std::uint32_t cnt = 0;
    for (std::uint32_t kk = 0; kk < j % 7; ++kk)
      for (std::uint32_t m = 0; m <= kk; ++m) cnt += m;
    EXPECT_EQ(gy[j], acc);
    EXPECT_EQ(gz[j], cnt);
  }
}

// Collatz step counts: loops whose trip count differs per thread, break, a nested loop with
// its own break.
TEST_P(Control, LoopBreakAndNesting) {
  KernelBuilder kb("collatz", {64, 1, 1});
  Mem x = kb.buffer("x", Elem::U32, Access::Read);
  Mem y = kb.buffer("y", Elem::U32, Access::Write);
  Mem w = kb.buffer("w", Elem::U32, Access::Write);
  Val i = kb.absolute_pos();
  kb.if_in_bounds(i, y.len(), [&] {
    Var v = kb.var(x[i]);
    Var steps = kb.var(kb.u32(0));
    kb.loop([&] {
      kb.if_(Val(v) <= 1u, [&] { kb.break_(); });
      v = select((Val(v) & 1u) == 0u, Val(v) / 2u, Val(v) * 3u + 1u);
      steps = steps + 1u;
    });
    y[i] = steps;
    Var found = kb.var(kb.u32(0));  // first k with k * k > x[i], by an inner loop that breaks
    kb.for_(0u, kb.u32(1000), 1u, [&](Val k) {
      kb.if_(k * k > x[i], [&] {
        found = k;
        kb.break_();
      });
    });
    w[i] = found;
  });
  const Kernel k = kb.build();
  std::vector<std::uint32_t> xv(200);
  std::iota(xv.begin(), xv.end(), 1u);
  auto c = compile(k);
  Buffer bx = up(xv), by = poisoned<std::uint32_t>(xv.size()),
         bw = poisoned<std::uint32_t>(xv.size());
  run(c, grid_for(k, xv.size()), {Arg::buf(bx), Arg::buf(by), Arg::buf(bw)});
  const auto gy = down<std::uint32_t>(by, xv.size()), gw = down<std::uint32_t>(bw, xv.size());
  for (std::size_t j = 0; j < xv.size(); ++j) {
    std::uint32_t v = xv[j], s = 0;
    while (v > 1) {
      v = v % 2 == 0 ? v / 2 : 3 * v + 1;
      ++s;
    }
    std::uint32_t f = 0;
    while (f * f <= xv[j]) ++f;
    EXPECT_EQ(gy[j], s) << xv[j];
    EXPECT_EQ(gw[j], f) << xv[j];
  }
}

// The bounds check goes away when the launch covers the shape exactly; with it the extra
// threads leave the output alone.
TEST_P(Control, BoundsCheckElision) {
  KernelBuilder kb("bounded", {64, 1, 1});
  Mem x = kb.buffer("x", Elem::F32, Access::Read);
  Mem y = kb.buffer("y", Elem::F32, Access::Write);
  Val i = kb.absolute_pos();
  kb.if_in_bounds(i, y.len(), [&] { y[i] = x[i] * 2.0f; });
  const Kernel checked = kb.build();
  Kernel exact = checked;
  EXPECT_TRUE(assume_in_bounds(exact));
  EXPECT_EQ(to_string(exact).find("if_in_bounds"), std::string::npos);
  EXPECT_NE(to_string(checked).find("if_in_bounds"), std::string::npos);
  std::vector<float> xv(256);
  std::iota(xv.begin(), xv.end(), 0.0f);
  Buffer bx = up(xv);
  // exact cover: 256 threads for 256 elements
  ASSERT_TRUE(covers_exactly(exact, grid_for(exact, 256), 256));
  Buffer by = poisoned<float>(256);
  run(compile(exact), grid_for(exact, 256), {Arg::buf(bx), Arg::buf(by)});
  const auto g = down<float>(by, 256);
  for (std::size_t j = 0; j < 256; ++j) EXPECT_EQ(g[j], 2.0f * xv[j]);
  // 100 elements: 128 threads, checked kernel, elements past 100 untouched
  Buffer bz = up(std::vector<float>(128, -1.0f));
  ASSERT_FALSE(covers_exactly(checked, grid_for(checked, 100), 100));
  run(compile(checked), grid_for(checked, 100), {Arg::buf(bx, 0, 100), Arg::buf(bz, 0, 100)});
  const auto h = down<float>(bz, 128);
  for (std::size_t j = 0; j < 128; ++j) EXPECT_EQ(h[j], j < 100 ? 2.0f * xv[j] : -1.0f) << j;
}

// Subgroup operations, checked for the device's subgroup size (subgroups are consecutive
// threads of a workgroup).
TEST_P(Control, Subgroups) {
  EMBER_REQUIRE(props().subgroups, "subgroup operations");
  constexpr std::uint32_t wg = 64, groups = 3, n = wg * groups;
  KernelBuilder kb("subgroups", {wg, 1, 1});
  Mem x = kb.buffer("x", Elem::I32, Access::Read);
  Mem f = kb.buffer("f", Elem::F32, Access::Read);
  Mem out = kb.buffer("out", Elem::I32, Access::Write);
  Mem fout = kb.buffer("fout", Elem::F32, Access::Write);
  Val i = kb.absolute_pos();
  Val v = x[i];
  Val fv = f[i];
  Val lane = kb.lane_id(), size = kb.subgroup_size();
  const Val res[] = {subgroup_sum(v),
                     subgroup_min(v),
                     subgroup_max(v),
                     cast(subgroup_all(v > -100), Elem::I32),
                     cast(subgroup_any(v == 7), Elem::I32),
                     subgroup_broadcast(v, kb.u32(3)),
                     shuffle(v, (lane + 1u) % size),
                     shuffle_xor(v, kb.u32(1)),
                     cast(lane, Elem::I32),
                     cast(size, Elem::I32)};
  for (std::uint32_t k = 0; k < 10; ++k) out[i * 10u + k] = res[k];
  fout[i * 2u] = subgroup_sum(fv);
  fout[i * 2u + 1u] = subgroup_max(fv);
  const Kernel k = kb.build();
  std::vector<std::int32_t> xv(n);
  std::vector<float> fv_(n);
  for (std::uint32_t j = 0; j < n; ++j) {
    xv[j] = static_cast<std::int32_t>((j * 37) % 41) - 20;
    fv_[j] = static_cast<float>((j * 11) % 13) * 0.25f;
  }
  auto c = compile(k);
  Buffer bx = up(xv), bf = up(fv_), bo = poisoned<std::int32_t>(n * 10),
         bfo = poisoned<float>(n * 2);
  run(c, Grid{groups}, {Arg::buf(bx), Arg::buf(bf), Arg::buf(bo), Arg::buf(bfo)});
  const auto o = down<std::int32_t>(bo, n * 10);
  const auto fo = down<float>(bfo, n * 2);
  const std::uint32_t S = static_cast<std::uint32_t>(o[9]);
  ASSERT_TRUE(S == props().subgroup_size || target() == "vulkan") << S;  // Vulkan may vary it
  ASSERT_TRUE(S >= 4 && S <= 64 && wg % S == 0) << S;
  for (std::uint32_t j = 0; j < n; ++j) {
    const std::uint32_t l = j % S, base = j - l;
    std::int32_t sum = 0, mn = INT32_MAX, mx = INT32_MIN, all = 1, any = 0;
    float fsum_l = 0, fmax_l = -1e30f;
    for (std::uint32_t m = 0; m < S; ++m) {
      const std::int32_t a = xv[base + m];
      sum += a;
      mn = std::min(mn, a);
      mx = std::max(mx, a);
      all &= a > -100;
      any |= a == 7;
      fsum_l += fv_[base + m];  // values are multiples of 1/4: exact in any order
      fmax_l = std::max(fmax_l, fv_[base + m]);
    }
    const std::vector<std::int32_t> want = {sum,
                                            mn,
                                            mx,
                                            all,
                                            any,
                                            xv[base + 3],
                                            xv[base + (l + 1) % S],
                                            xv[base + (l ^ 1)],
                                            static_cast<std::int32_t>(l),
                                            static_cast<std::int32_t>(S)};
    const std::vector<std::int32_t> got(o.begin() + j * 10, o.begin() + j * 10 + 10);
    ASSERT_EQ(got, want) << "thread " << j << " (subgroup size " << S << ")";
    EXPECT_EQ(fo[j * 2], fsum_l);
    EXPECT_EQ(fo[j * 2 + 1], fmax_l);
  }
}

// D = A B + C on the matrix units: 16x16x16 tiles, f16 inputs, f32 accumulators, A row-major
// and B column-major or row-major.
TEST_P(Control, MatrixUnits) {
  EMBER_REQUIRE(props().matrix, "matrix units");
  for (MatrixLayout bl : {MatrixLayout::RowMajor, MatrixLayout::ColMajor}) {
    const std::uint32_t S = props().subgroup_size;
    KernelBuilder kb("mma", {S, 1, 1});
    Mem a = kb.buffer("a", Elem::F16, Access::Read);
    Mem b = kb.buffer("b", Elem::F16, Access::Read);
    Mem c = kb.buffer("c", Elem::F32, Access::Read);
    Mem d = kb.buffer("d", Elem::F32, Access::Write);
    Fragment fa = kb.fragment({MatrixUse::A, 16, 16, 16, MatrixLayout::RowMajor}, Elem::F16);
    Fragment fb = kb.fragment({MatrixUse::B, 16, 16, 16, bl}, Elem::F16);
    Fragment fc = kb.fragment({MatrixUse::Acc, 16, 16, 16}, Elem::F32);
    Fragment fd = kb.fragment({MatrixUse::Acc, 16, 16, 16}, Elem::F32);
    mat_load(fa, a, kb.u32(0), kb.u32(16));
    mat_load(fb, b, kb.u32(0), kb.u32(16));
    mat_load(fc, c, kb.u32(0), kb.u32(16), MatrixLayout::RowMajor);
    mat_fill(fd, kb.f32(0));
    mat_mma(fd, fa, fb, fc);
    mat_store(d, kb.u32(0), kb.u32(16), fd, MatrixLayout::RowMajor);
    const Kernel k = kb.build();
    std::vector<std::uint16_t> ah(256), bh(256);
    std::vector<float> af(256), bf(256), cf(256);
    for (int j = 0; j < 256; ++j) {
      af[j] = static_cast<float>((j * 7) % 11 - 5) * 0.125f;
      bf[j] = static_cast<float>((j * 5) % 13 - 6) * 0.25f;
      cf[j] = static_cast<float>(j % 9) - 4;
      ah[j] = f16::from_float(af[j]);
      bh[j] = f16::from_float(bf[j]);
    }
    auto cc = compile(k);
    Buffer ba = up(ah), bb = up(bh), bc = up(cf), bd = poisoned<float>(256);
    run(cc, Grid{}, {Arg::buf(ba), Arg::buf(bb), Arg::buf(bc), Arg::buf(bd)});
    const auto got = down<float>(bd, 256);
    for (int r = 0; r < 16; ++r)
      for (int col = 0; col < 16; ++col) {
        float want = cf[r * 16 + col];
        for (int kk = 0; kk < 16; ++kk)
          want += af[r * 16 + kk] *
                  (bl == MatrixLayout::RowMajor ? bf[kk * 16 + col] : bf[col * 16 + kk]);
        ASSERT_EQ(got[r * 16 + col], want) << r << "," << col;  // small exact products
      }
  }
}

EMBER_KERNEL_INSTANTIATE(Control);

}  // namespace
}  // namespace ember::kernel::test
