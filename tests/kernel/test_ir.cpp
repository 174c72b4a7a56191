// The IR, the builder's checks, the passes, the printer and the generators' text.
#include <gtest/gtest.h>

#include "ember/kernel/builder.hpp"
#include "ember/kernel/codegen.hpp"
#include "ember/kernel/device.hpp"
#include "ember/kernel/passes.hpp"

namespace ember::kernel {
namespace {

template <class E, class F>
void expect_error(F&& f, const std::string& starts_with, const std::string& contains = "") {
  try {
    f();
    ADD_FAILURE() << "no exception; expected " << starts_with;
  } catch (const E& e) {
    const std::string m = e.what();
    EXPECT_EQ(m.rfind(starts_with, 0), 0u) << m;
    EXPECT_NE(m.find(contains), std::string::npos) << m;
  }
}

std::size_t count_ops(const Block& b, Op op) {
  std::size_t n = 0;
  for_each_inst(b, [&](const Inst& i) { n += i.op == op; });
  return n;
}

TEST(KernelBuilder, TypeErrorsNameTheOperation) {
  KernelBuilder kb("bad", {32, 1, 1});
  Mem x = kb.buffer("x", Elem::F32, Access::Read);
  Mem y = kb.buffer("y", Elem::I32, Access::Write);
  Val i = kb.absolute_pos();
  expect_error<DTypeError>([&] { (void)(x[i].get() + y.len()); },
                           "[kernel bad] add:", "f32 and u32 differ");
  expect_error<DTypeError>([&] { y[i] = x[i].get(); }, "[kernel bad] store:", "f32 value into i32");
  expect_error<ValueError>([&] { x[i] = 1.0f; }, "[kernel bad] store:", "read-only");
  expect_error<ValueError>([&] { (void)y.load(i); }, "[kernel bad] load:", "write-only");
  expect_error<DTypeError>([&] { (void)exp(cast(i, Elem::I32)); }, "[kernel bad] exp:", "i32");
  expect_error<DTypeError>([&] { kb.if_(i, [] {}); }, "[kernel bad] if:", "scalar bool");
  expect_error<ValueError>([&] { (void)x.shape(1u); }, "[kernel bad] shape:", "rank-1");
  expect_error<ValueError>([&] { (void)x.load(i, 3); }, "[kernel bad] load:", "lanes");
  expect_error<DTypeError>([&] { (void)bitcast(x[i].get(), Elem::I64); }, "[kernel bad] bitcast:");
  expect_error<ValueError>([] { KernelBuilder("9lives"); }, "[kernel]", "must start with a letter");
}

TEST(KernelBuilder, ScopingIsVerified) {
  KernelBuilder kb2("leak", {32, 1, 1});
  Mem y2 = kb2.buffer("y", Elem::U32, Access::Write);
  Val leaked;
  kb2.if_(kb2.absolute_pos() < 4u, [&] { leaked = kb2.absolute_pos() + 1u; });
  y2[0u] = leaked;  // used outside the block that defines it
  expect_error<ValueError>([&] { (void)kb2.build(); }, "[kernel leak] store:", "outside the block");
  KernelBuilder kb3("brk", {32, 1, 1});
  kb3.break_();
  expect_error<ValueError>([&] { (void)kb3.build(); }, "[kernel brk] break:", "outside a loop");
}

TEST(KernelPasses, FoldCseDceAndBounds) {
  KernelBuilder kb("passes", {32, 1, 1});
  Mem x = kb.buffer("x", Elem::F32, Access::Read);
  Mem y = kb.buffer("y", Elem::F32, Access::Write);
  Val i = kb.absolute_pos();
  kb.if_in_bounds(i, y.len(), [&] {
    Val c = (kb.f32(2) + kb.f32(3)) * kb.f32(0.5);  // folds to 2.5
    Val a = x[i] * c;
    Val b = x[i] * c;        // a second load: loads are not merged
    Val unused = exp(x[i]);  // dead
    (void)unused;
    Val k = cast(i, Elem::I32) * 1 + 0;  // integer identities
    y[i] = a + b + cast(k, Elem::F32) + cast(k, Elem::F32);
  });
  Kernel k = kb.build();
  const std::size_t loads = count_ops(k.body, Op::Load);
  optimize(k);
  EXPECT_EQ(count_ops(k.body, Op::Exp), 0u);          // dead code
  EXPECT_EQ(count_ops(k.body, Op::Load), loads - 1);  // the dead load went with it
  EXPECT_EQ(count_ops(k.body, Op::Cast), 2u);         // CSE: one i32 cast, one f32 cast
  EXPECT_EQ(count_ops(k.body, Op::Add), 3u);          // a + b + k + k (k + 0 folded)
  const std::string text = to_string(k);
  EXPECT_NE(text.find("2.5f32"), std::string::npos) << text;
  EXPECT_EQ(count_ops(k.body, Op::Mul), 2u) << text;  // x * 2.5 twice; i * 1 folded
  EXPECT_TRUE(assume_in_bounds(k));
  EXPECT_EQ(count_ops(k.body, Op::IfInBounds), 0u);
  EXPECT_NO_THROW(verify(k));
}

TEST(KernelPasses, OptimizedKernelsComputeTheSame) {
  KernelBuilder kb("same", {32, 1, 1});
  Mem x = kb.buffer("x", Elem::I32, Access::Read);
  Mem y = kb.buffer("y", Elem::I32, Access::Write);
  Val i = kb.absolute_pos();
  kb.if_in_bounds(i, y.len(), [&] {
    Val v = x[i];
    Val c = kb.i32(7) % kb.i32(-3) + kb.i32(-7) / kb.i32(2);  // folds PyTorch-style: -2 + -4
    y[i] = (v * c + (v << 2)) ^ select(v > 0, kb.i32(5), kb.i32(-5));
  });
  const Kernel raw = kb.build();
  std::vector<std::int32_t> xv(100);
  for (int j = 0; j < 100; ++j) xv[j] = j * 13 - 600;
  ComputeDevice& d = cpu_device();
  Buffer bx = d.upload(xv.data(), 400), by = d.alloc(400);
  d.launch(*d.compile(raw), grid_for(raw, 100), {Arg::buf(bx), Arg::buf(by)});
  std::vector<std::int32_t> got(100);
  d.read(by, 0, got.data(), 400);
  for (int j = 0; j < 100; ++j)
    EXPECT_EQ(got[j], (xv[j] * -6 + (xv[j] << 2)) ^ (xv[j] > 0 ? 5 : -5)) << xv[j];
}

TEST(KernelPrinter, ShowsArgumentsDefinesAndBlocks) {
  KernelBuilder kb("printed", {128, 1, 1});
  Mem x = kb.buffer("x", Elem::F16, Access::Read, 2);
  Val s = kb.scalar("alpha", Elem::F32);
  kb.define("tile", Elem::U32, 16);
  Mem sh = kb.shared(Elem::F32, 64);
  kb.if_(kb.thread_idx(0) == 0u, [&] { sh[0u] = cast(x[0u], Elem::F32) * s; });
  const std::string t = to_string(kb.build());
  for (const char* want :
       {"kernel printed workgroup(128, 1, 1)", "define tile = 16", "x: buffer f16 rank 2 read",
        "alpha: scalar f32", "shared %", "f32[64]", "if %", "store %"})
    EXPECT_NE(t.find(want), std::string::npos) << want << "\n" << t;
}

TEST(KernelCodegen, WideAccessesAndSharedHelpers) {
  KernelBuilder kb("wide", {256, 1, 1});
  Mem x = kb.buffer("x", Elem::F32, Access::Read);
  Mem y = kb.buffer("y", Elem::F32, Access::Write);
  Val i = kb.absolute_pos();
  kb.if_in_bounds(i, y.len() / 4u, [&] { y.store(i, tanh(x.load(i, 4))); });
  Kernel k = kb.build();
  optimize(k);
  const std::string cu = generate_cuda(k);
  EXPECT_NE(cu.find("reinterpret_cast<const uint4*>"), std::string::npos) << cu;
  EXPECT_NE(cu.find("ember::scalar::tanh_f32"), std::string::npos);
  EXPECT_NE(cu.find("#include \"ember_scalar.hpp\""), std::string::npos);
  const std::string gl = generate_glsl(k);
  EXPECT_NE(gl.find("uvec4 d[]"), std::string::npos) << gl;
  EXPECT_NE(gl.find("ember_tanh_f32"), std::string::npos);
  EXPECT_NE(std::string(scalar_header_text()).find("tanh_f32"), std::string::npos);
  KernelBuilder kb64("exp64");
  Mem z = kb64.buffer("z", Elem::F64);
  z[0u] = exp(z[0u].get());
  expect_error<UnsupportedError>([&] { (void)generate_glsl(kb64.build()); }, "[glsl exp64]", "f64");
}

TEST(KernelLaunch, GridsLanesAndArgumentChecks) {
  KernelBuilder kb("checked", {64, 1, 1});
  Mem x = kb.buffer("x", Elem::F32, Access::Read, 2);
  Val s = kb.scalar("s", Elem::F32);
  x.shape(0u);
  (void)s;
  const Kernel k = kb.build();
  EXPECT_EQ(grid_for(k, 1000).x, 16u);
  const Grid big = grid_for(k, 64ull * 70000);
  EXPECT_EQ(big.x, 65535u);
  EXPECT_EQ(big.y, 2u);
  EXPECT_TRUE(covers_exactly(k, Grid{16}, 1024));
  EXPECT_FALSE(covers_exactly(k, Grid{16}, 1000));
  EXPECT_EQ(choose_lanes(Elem::F32, 1024), 4);
  EXPECT_EQ(choose_lanes(Elem::F16, 1024), 8);
  EXPECT_EQ(choose_lanes(Elem::F64, 1024), 2);
  EXPECT_EQ(choose_lanes(Elem::F32, 1026), 2);
  EXPECT_EQ(choose_lanes(Elem::F32, 1024, 1), 1);
  ComputeDevice& d = cpu_device();
  auto c = d.compile(k);
  Buffer b = d.alloc(64 * 4);
  expect_error<ValueError>(
      [&] {
        d.launch(*c, Grid{}, {Arg::view(b, {8, 8})});
      },
      "[launch checked]", "expects 2 arguments");
  expect_error<DTypeError>(
      [&] {
        d.launch(*c, Grid{}, {Arg::view(b, {8, 8}), Arg::u32(1)});
      },
      "[launch checked]", "argument 1 's' is f32, got u32");
  expect_error<ValueError>(
      [&] {
        d.launch(*c, Grid{}, {Arg::buf(b), Arg::f32(1)});
      },
      "[launch checked]", "rank 2 in the kernel");
  expect_error<ValueError>(
      [&] {
        d.launch(*c, Grid{}, {Arg::view(b, {9, 8}), Arg::f32(1)});
      },
      "[launch checked]", "reaches element 71 of 64");
  expect_error<ValueError>(
      [&] {
        d.launch(*c, Grid{0}, {Arg::view(b, {8, 8}), Arg::f32(1)});
      },
      "[launch checked]", "grid");
  expect_error<ValueError>([&] { d.write(b, 200, b.get(), 100); }, "[write]", "exceed");
}

TEST(KernelInterpreter, OutOfBoundsAccessIsADeviceError) {
  KernelBuilder kb("oob", {32, 1, 1});
  Mem x = kb.buffer("x", Elem::F32, Access::ReadWrite);
  x[kb.absolute_pos() + 5u] = 1.0f;
  const Kernel k = kb.build();
  ComputeDevice& d = cpu_device();
  Buffer b = d.alloc(32 * 4);
  expect_error<DeviceError>([&] { d.launch(*d.compile(k), Grid{}, {Arg::buf(b)}); },
                            "[kernel oob] store:", "index 32 is out of bounds (32 elements)");
}

}  // namespace
}  // namespace ember::kernel
