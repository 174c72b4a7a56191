// Adversarial tests of Fusion<Cpu> and Autodiff<Fusion<Cpu>>: every value is compared with the
// plain CPU backend (or computed by hand): empty tensors, rank 1 and rank 6, broadcasting both
// ways, views of pending values and pending values of views, in-place reuse while the user
// holds a view, long chains and diamonds, read orders, exceptions (shape errors, out of
// memory) and what stays readable after them, f16/bf16/f64, int/bool tensors mixed in, the
// switch, threads, create_graph, and an Adam training loop.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "ember/autodiff/cpu.hpp"
#include "ember/autodiff/fusion_cpu.hpp"
#include "ember/cpu/cpu.hpp"
#include "ember/fusion/cpu.hpp"
#include "ember/module/module.hpp"
#include "ember/nn/linear.hpp"
#include "ember/optim/optim.hpp"
#include "ember/tensor/activation.hpp"
#include "ember/tensor/tensor.hpp"
#include "fusion_test_util.hpp"

namespace ember::test {
namespace {

using FB = Fusion<Cpu>;
using AF = Autodiff<Fusion<Cpu>>;
using AC = Autodiff<Cpu>;

TensorData rnd(const Shape& shape, std::uint64_t seed, double lo = -2.0, double hi = 2.0) {
  std::vector<double> v(static_cast<std::size_t>(shape.numel()));
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  for (auto& x : v) x = u(g);
  return TensorData(std::move(v), shape);
}

template <class B, std::size_t D>
Tensor<B, D> mk(const TensorData& d, DType dt = DType::F32) {
  return Tensor<B, D>::from_data(d, typename B::Device{}, dt);
}

void expect_close(const std::vector<double>& got, const std::vector<double>& want, double rel,
                  const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << what << " [" << i << "]";
      continue;
    }
    if (std::isinf(want[i])) {
      EXPECT_EQ(got[i], want[i]) << what << " [" << i << "]";
      continue;
    }
    EXPECT_NEAR(got[i], want[i], rel * std::max(1.0, std::fabs(want[i])))
        << what << " [" << i << "]";
  }
}

template <class TF, class TC>
void expect_same(const TF& f, const TC& c, double rel, const std::string& what) {
  EXPECT_EQ(f.shape(), c.shape()) << what;
  EXPECT_EQ(f.dtype(), c.dtype()) << what;
  expect_close(f.template to_vec<double>(), c.template to_vec<double>(), rel, what);
}

// Runs `prog` (a generic lambda over a vector of inputs, returning a vector of outputs) on
// Fusion<Cpu> and on Cpu from the same data and compares every output.
template <std::size_t D, class Prog>
void check_prog(const std::vector<TensorData>& ins, Prog prog, DType dt = DType::F32,
                double rel = 1e-6, const std::string& what = "") {
  std::vector<Tensor<FB, D>> f;
  std::vector<Tensor<Cpu, D>> c;
  for (const auto& d : ins) {
    f.push_back(mk<FB, D>(d, dt));
    c.push_back(mk<Cpu, D>(d, dt));
  }
  const auto of = prog(f);
  const auto oc = prog(c);
  ASSERT_EQ(of.size(), oc.size());
  for (std::size_t i = 0; i < of.size(); ++i)
    expect_same(of[i], oc[i], rel, what + " output " + std::to_string(i));
}

// ---- shapes ---------------------------------------------------------------------------------

TEST(FusionAdversarial, EmptyTensors) {
  FusionScope scope(true);
  const auto prog = [](const auto& x) {
    using T = std::remove_cvref_t<decltype(x[0])>;
    std::vector<T> out;
    out.push_back(x[0].exp().add(x[1]).mul_scalar(2.0));  // [0, 3] + [1, 3]
    out.push_back(x[1].add(x[0].sin()).sqrt());           // [1, 3] + [0, 3]
    out.push_back(x[2].mul(x[3]).tanh());                 // [3, 0] * [3, 1]
    out.push_back(x[3].sub(x[2]).abs());                  // [3, 1] - [3, 0]
    out.push_back(x[0].transpose().exp().transpose());    // [0, 3] through a transpose
    return out;
  };
  check_prog<2>({rnd({0, 3}, 1), rnd({1, 3}, 2), rnd({3, 0}, 3), rnd({3, 1}, 4)}, prog);
  // Rank 1, moved (in place), reduced.
  auto e = Tensor<FB, 1>::from_data(TensorData(std::vector<float>{}, Shape{0}));
  auto y = std::move(e).exp().add_scalar(1.0);
  EXPECT_EQ(y.shape(), Shape({0}));
  EXPECT_TRUE(y.to_vec<float>().empty());
  EXPECT_EQ(y.sum().to_vec<float>(), std::vector<float>{0.0f});
}

TEST(FusionAdversarial, RankOneAndRankSix) {
  FusionScope scope(true);
  check_prog<1>({rnd({5000}, 5), rnd({1}, 6)}, [](const auto& x) {
    using T = std::remove_cvref_t<decltype(x[0])>;
    return std::vector<T>{x[0].mul(x[1]).exp().add(x[0]).tanh(), x[1].add(x[0].sin())};
  });
  // [2, 1, 3, 1, 4, 5] op [1, 2, 1, 3, 1, 5] -> [2, 2, 3, 3, 4, 5], and a permuted input.
  check_prog<6>(
      {rnd({2, 1, 3, 1, 4, 5}, 7), rnd({1, 2, 1, 3, 1, 5}, 8), rnd({5, 4, 3, 3, 2, 2}, 9)},
      [](const auto& x) {
        using T = std::remove_cvref_t<decltype(x[0])>;
        const T a = x[0].exp().mul_scalar(0.5);
        const T b = x[1].sin();
        const T p = x[2].permute({5, 4, 3, 2, 1, 0});  // [2, 2, 3, 3, 4, 5], strided
        return std::vector<T>{a.add(b).mul(p), b.sub(a).div(p.abs().add_scalar(1.0)), a};
      });
}

TEST(FusionAdversarial, BroadcastBothWaysWithHeldSmallIntermediates) {
  FusionScope scope(true);
  check_prog<3>({rnd({4, 1, 3}, 10), rnd({1, 5, 1}, 11), rnd({4, 5, 3}, 12)}, [](const auto& x) {
    using T = std::remove_cvref_t<decltype(x[0])>;
    const T a = x[0].exp();   // [4, 1, 3] held
    const T b = x[1].tanh();  // [1, 5, 1] held
    const T ab = a.mul(b);    // [4, 5, 3]
    const T ba = b.sub(a);    // smaller operand first
    const T c = ab.add(ba).add(x[2]).add(b).add(a);
    return std::vector<T>{c, ab, a.add_scalar(1.0), ba, b};
  });
}

// ---- views ------------------------------------------------------------------------------------

TEST(FusionAdversarial, ViewsOfPendingValuesAndPendingValuesOfViews) {
  FusionScope scope(true);
  check_prog<2>({rnd({6, 8}, 13), rnd({1, 8}, 14)}, [](const auto& x) {
    using T = std::remove_cvref_t<decltype(x[0])>;
    const T y = x[0].exp().mul_scalar(0.5);  // pending
    std::vector<T> out;
    out.push_back(y.slice({s(1, 5), s(0, 8, 3)}).add_scalar(1.0).sqrt());
    out.push_back(y.transpose().sin().add(y.transpose()));
    out.push_back(y.flip({0, 1}).mul(y));
    out.push_back(y.slice({s(2), s()}).expand({6, 8}).sub(y));
    out.push_back(y.narrow(1, 2, 3).square());
    // Pending values of views of computed tensors.
    const T v = x[0].transpose().slice({s(0, 8, 2), s(1, 6)});  // [4, 5], strided
    out.push_back(v.exp().add(v).clamp(-1.0, 3.0));
    out.push_back(x[1].expand({6, 8}).mul(x[0]).add(x[1].expand({6, 8}).cos()));
    out.push_back(x[0].flip({1}).slice({s(0, 6, 2), s()}).exp().mul(x[1]));
    out.push_back(y);
    return out;
  });
}

// ---- in place -----------------------------------------------------------------------------------

TEST(FusionAdversarial, InPlaceReuseNeverClobbersAViewTheUserHolds) {
  FusionScope scope(true);
  const TensorData d = rnd({4, 6}, 15);
  const std::vector<double> orig = mk<Cpu, 2>(d).to_vec<double>();
  const std::vector<double> want = mk<Cpu, 2>(d).exp().add_scalar(1.0).to_vec<double>();
  {  // a reshape view
    auto x = mk<FB, 2>(d);
    const auto v = x.reshape({24});
    const auto y = std::move(x).exp().add_scalar(1.0);
    expect_close(y.to_vec<double>(), want, 1e-6, "y");
    expect_close(v.to_vec<double>(), orig, 0, "reshape view");
  }
  {  // a slice view at offset 0
    auto x = mk<FB, 2>(d);
    const auto v = x.slice({s(0, 2), s()});
    const auto y = std::move(x).exp().add_scalar(1.0);
    expect_close(y.to_vec<double>(), want, 1e-6, "y");
    expect_close(v.to_vec<double>(), std::vector<double>(orig.begin(), orig.begin() + 12), 0,
                 "slice view");
  }
  {  // a copy of the handle
    auto x = mk<FB, 2>(d);
    const auto w = x;
    const auto y = std::move(x).exp().add_scalar(1.0);
    expect_close(y.to_vec<double>(), want, 1e-6, "y");
    expect_close(w.to_vec<double>(), orig, 0, "copy");
  }
  {  // a view of a pending intermediate, then the intermediate moved into a chain
    auto x = mk<FB, 2>(d);
    auto e = x.mul_scalar(1.0);  // pending
    const auto v = e.reshape({24});
    const auto y = std::move(e).exp().add_scalar(1.0);
    expect_close(y.to_vec<double>(), want, 1e-6, "y");
    expect_close(v.to_vec<double>(), orig, 0, "view of intermediate");
  }
  {  // a transposed view moved in: must not be written in place in row-major order
    auto x = mk<FB, 2>(d).transpose();
    const auto y = std::move(x).exp().add_scalar(1.0);
    const auto yc = mk<Cpu, 2>(d).transpose().exp().add_scalar(1.0);
    expect_same(y, yc, 1e-6, "transposed in place");
  }
  {  // two inputs given to two outputs
    auto a = mk<FB, 2>(d);
    auto b = mk<FB, 2>(rnd({4, 6}, 16));
    const auto t = std::move(a).exp();  // held: a second output
    const auto r = t.add(std::move(b)).sin();
    const auto tc = mk<Cpu, 2>(d).exp();
    const auto rc = tc.add(mk<Cpu, 2>(rnd({4, 6}, 16))).sin();
    expect_same(r, rc, 1e-6, "r");
    expect_same(t, tc, 1e-6, "t");
  }
}

// ---- long chains, diamonds, read orders ---------------------------------------------------------

TEST(FusionAdversarial, LongChainsWithAnInputUsedEverywhere) {
  FusionScope scope(true);
  check_prog<2>(
      {rnd({3, 257}, 17, -1, 1)},
      [](const auto& x) {
        using T = std::remove_cvref_t<decltype(x[0])>;
        T y = x[0];
        for (int i = 0; i < 150; ++i)
          y = y.mul_scalar(0.99).add(x[0].sin().mul_scalar(0.01 * (i % 7))).tanh();
        return std::vector<T>{y};
      },
      DType::F32, 1e-5);
  // Doubling: each step uses the previous value twice (the chain bound counts both).
  auto x = Tensor<FB, 1>::from_floats({1.0, -3.0, 0.5});
  auto y = x;
  for (int i = 0; i < 40; ++i) y = y.add(y);
  EXPECT_EQ(y.to_vec<float>(),
            (std::vector<float>{std::ldexp(1.0f, 40), -3.0f * std::ldexp(1.0f, 40),
                                std::ldexp(1.0f, 39)}));
}

TEST(FusionAdversarial, EveryIntermediateHeldAndReadInManyOrders) {
  for (int order = 0; order < 4; ++order) {
    FusionScope scope(true);
    const TensorData dx = rnd({5, 40}, 18, -1, 1), db = rnd({1, 40}, 19, -1, 1);
    std::vector<Tensor<FB, 2>> f{mk<FB, 2>(dx), mk<FB, 2>(db)};
    std::vector<Tensor<Cpu, 2>> c{mk<Cpu, 2>(dx), mk<Cpu, 2>(db)};
    std::mt19937 g(static_cast<unsigned>(order));
    for (int i = 0; i < 90; ++i) {
      const std::size_t a = g() % f.size(), b = g() % f.size();
      switch (g() % 5) {
        case 0:
          f.push_back(f[a].add(f[b]).mul_scalar(0.5));
          c.push_back(c[a].add(c[b]).mul_scalar(0.5));
          break;
        case 1:
          f.push_back(f[a].tanh());
          c.push_back(c[a].tanh());
          break;
        case 2:
          f.push_back(f[a].mul(f[b]));
          c.push_back(c[a].mul(c[b]));
          break;
        case 3:
          f.push_back(f[a].sub(f[b]).sin());
          c.push_back(c[a].sub(c[b]).sin());
          break;
        default:
          f.push_back(f[a].clamp(-0.3, 0.4));
          c.push_back(c[a].clamp(-0.3, 0.4));
      }
    }
    std::vector<std::size_t> idx(f.size());
    for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = i;
    if (order == 1) std::reverse(idx.begin(), idx.end());
    if (order >= 2) std::shuffle(idx.begin(), idx.end(), g);
    for (std::size_t i : idx) expect_same(f[i], c[i], 1e-5, "node " + std::to_string(i));
  }
}

// ---- exceptions -------------------------------------------------------------------------------

TEST(FusionAdversarial, ShapeErrorFromTheFrontEndLeavesPendingValuesIntact) {
  FusionScope scope(true);
  const TensorData d = rnd({2, 3}, 20);
  const auto p = mk<FB, 2>(d).exp().add_scalar(1.0);
  const auto bad = mk<FB, 2>(rnd({3, 2}, 21));
  EXPECT_THROW((void)p.add(bad), ShapeError);
  EXPECT_THROW((void)p.mul(bad.exp()), ShapeError);
  EXPECT_THROW((void)p.matmul(p), ShapeError);
  EXPECT_TRUE(FB::float_is_pending(p.primitive()));
  expect_same(p, mk<Cpu, 2>(d).exp().add_scalar(1.0), 1e-6, "p");
}

// A chain whose block cannot be allocated (an expanded [2^31, 2^31] operand): the read throws
// OutOfMemoryError; every value stays readable and a second read throws the same error.
template <DType DT>
void out_of_memory_case() {
  const TensorData d(std::vector<float>{0.5f}, Shape{1, 1});
  const auto x = mk<FB, 2>(d, DT);
  const auto held = x.mul_scalar(2.0).exp();  // pending, held
  const auto y = held.add(x.expand({std::int64_t{1} << 31, std::int64_t{1} << 31}));
  EXPECT_THROW((void)y.to_vec<float>(), OutOfMemoryError);
  EXPECT_NEAR(held.to_vec<double>()[0], std::exp(1.0), 1e-2);
  EXPECT_THROW((void)y.to_vec<float>(), OutOfMemoryError);
  // Nothing held but the failing value: its operands live only inside the chain.
  const auto z =
      x.mul_scalar(2.0).exp().add(x.expand({std::int64_t{1} << 31, std::int64_t{1} << 31}));
  EXPECT_THROW((void)z.to_vec<float>(), OutOfMemoryError);
  EXPECT_THROW((void)z.to_vec<float>(), OutOfMemoryError);  // again, not a crash
  EXPECT_THROW((void)z.sum().to_vec<float>(), OutOfMemoryError);
  EXPECT_NEAR(x.mul_scalar(2.0).exp().to_vec<double>()[0], std::exp(1.0), 1e-2);
}

TEST(FusionAdversarial, OutOfMemoryF32Fused) {
  FusionScope scope(true);
  out_of_memory_case<DType::F32>();
}
TEST(FusionAdversarial, OutOfMemoryF64Fused) {
  FusionScope scope(true);
  out_of_memory_case<DType::F64>();
}
TEST(FusionAdversarial, OutOfMemoryBF16Replayed) {
  FusionScope scope(true);
  out_of_memory_case<DType::BF16>();
}

// A sync that meets a value out of memory computes the other pending values, then throws; the
// value stays pending and registered, so the next sync tries it again (and throws again)
// rather than returning with it pending.
TEST(FusionAdversarial, SyncKeepsAValueOutOfMemoryForTheNextSync) {
  FusionScope scope(true);
  const TensorData d(std::vector<float>{0.5f}, Shape{1, 1});
  const auto x = mk<FB, 2>(d, DType::F32);
  const auto older = x.add_scalar(1.0);  // recorded before y: reached after it (newest first)
  const auto held = x.mul_scalar(2.0).exp();
  const auto y = held.add(x.expand({std::int64_t{1} << 31, std::int64_t{1} << 31}));
  const auto newer = x.sub_scalar(1.0);
  EXPECT_THROW(FB::sync(FB::Device{}), OutOfMemoryError);
  EXPECT_FALSE(FB::float_is_pending(newer.primitive()));
  EXPECT_FALSE(FB::float_is_pending(older.primitive()));
  EXPECT_TRUE(FB::float_is_pending(y.primitive()));
  EXPECT_THROW(FB::sync(FB::Device{}), OutOfMemoryError);
  EXPECT_TRUE(FB::float_is_pending(y.primitive()));
  EXPECT_EQ(newer.to_vec<float>(), std::vector<float>{-0.5f});
  EXPECT_EQ(older.to_vec<float>(), std::vector<float>{1.5f});
  EXPECT_NEAR(held.to_vec<double>()[0], std::exp(1.0), 1e-6);
  EXPECT_THROW((void)y.to_vec<float>(), OutOfMemoryError);
}

// A value computed from a step that failed for good (its operands were given to the step) keeps
// that error: reading it throws again, and sync skips it rather than throwing at every call.
TEST(FusionAdversarial, SyncSkipsAValueComputedFromAFailedStep) {
  FusionScope scope(true);
  const TensorData d(std::vector<float>{0.5f}, Shape{1, 1});
  const auto x = mk<FB, 2>(d, DType::BF16);  // bf16 runs step by step on the CPU
  const auto y = x.mul_scalar(2.0).add(x.expand({std::int64_t{1} << 31, std::int64_t{1} << 31}));
  const auto y2 = y.mul_scalar(2.0);
  EXPECT_THROW((void)y2.to_vec<float>(), OutOfMemoryError);
  EXPECT_NO_THROW(FB::sync(FB::Device{}));
  EXPECT_NO_THROW(FB::sync(FB::Device{}));
  EXPECT_THROW((void)y2.to_vec<float>(), OutOfMemoryError);
  EXPECT_THROW((void)y.to_vec<float>(), OutOfMemoryError);
  const auto fresh = x.add_scalar(1.0);
  FB::sync(FB::Device{});
  EXPECT_FALSE(FB::float_is_pending(fresh.primitive()));
  EXPECT_EQ(fresh.to_vec<float>(), std::vector<float>{1.5f});
}

// ---- dtypes and kinds ---------------------------------------------------------------------------

TEST(FusionAdversarial, F16BF16F64ChainsAndPromotion) {
  FusionScope scope(true);
  const auto prog = [](const auto& x) {
    using T = std::remove_cvref_t<decltype(x[0])>;
    const T a = x[0].exp().mul(x[1]).add_scalar(0.25);
    const T b = a.div_scalar(3.0).sub(x[1].sin()).clamp(-1.0, 2.0);
    return std::vector<T>{a, b, b.div_scalar(4.0).recip()};
  };
  const std::vector<TensorData> ins{rnd({7, 33}, 22, -1, 1), rnd({1, 33}, 23, -1, 1)};
  check_prog<2>(ins, prog, DType::F64, 1e-14, "f64");
  check_prog<2>(ins, prog, DType::F16, 0, "f16");
  check_prog<2>(ins, prog, DType::BF16, 0, "bf16");
  // f32 pending + f64 pending: the f32 side is cast (computed) and the f64 chain fuses.
  const auto pf = mk<FB, 2>(ins[0]).exp().add(mk<FB, 2>(ins[1], DType::F64).sin());
  const auto pc = mk<Cpu, 2>(ins[0]).exp().add(mk<Cpu, 2>(ins[1], DType::F64).sin());
  expect_same(pf, pc, 1e-14, "f32 + f64");
  // bf16 pending + f32 pending.
  const auto qf = mk<FB, 2>(ins[0], DType::BF16).exp().mul(mk<FB, 2>(ins[1]).tanh());
  const auto qc = mk<Cpu, 2>(ins[0], DType::BF16).exp().mul(mk<Cpu, 2>(ins[1]).tanh());
  expect_same(qf, qc, 1e-6, "bf16 * f32");
}

TEST(FusionAdversarial, IntAndBoolTensorsMixedIn) {
  FusionScope scope(true);
  const TensorData d = rnd({6, 9}, 24, -3, 3);
  const auto run = [&]<class B>() {
    const auto x = mk<B, 2>(d);
    const auto p = x.exp().sub_scalar(1.0);         // pending
    const auto m = p.greater_elem(0.5);             // bool from a pending value
    const auto q = x.mul_scalar(3.0);               // pending
    const auto w = p.mask_where(m, q.sin());        // pending operands
    const auto i = q.int_();                        // int cast of a pending value
    const auto back = i.float_().add(p).mul(w);     // float from int, then a chain
    const auto am = back.abs().argmax(1).float_();  // a reduction of a pending value
    const auto mf = p.mask_fill(m.bool_not(), -1.0).add_scalar(1.0);
    return std::vector<Tensor<B, 2>>{w, back, am, mf, p};
  };
  const auto f = run.template operator()<FB>();
  const auto c = run.template operator()<Cpu>();
  for (std::size_t k = 0; k < f.size(); ++k) expect_same(f[k], c[k], 1e-6, std::to_string(k));
}

TEST(FusionAdversarial, ClampEdgesAndSpecialValuesMatchTheCpuBitForBit) {
  FusionScope scope(true);
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const TensorData d(
      std::vector<float>{-inf, -2.0f, -0.0f, 0.0f, 1e-42f, 0.5f, 3.0f, inf, nan, 1.0f},
      Shape{2, 5});
  check_prog<2>(
      {d},
      [](const auto& x) {
        using T = std::remove_cvref_t<decltype(x[0])>;
        return std::vector<T>{x[0].clamp(1.0, -1.0).add_scalar(0.0),
                              x[0].clamp_min(0.0).exp(),
                              x[0].clamp_max(0.25).neg(),
                              x[0].powf_scalar(2.0).sqrt(),
                              x[0].add_scalar(1e-30).div_scalar(0.5).log(),
                              x[0].remainder_scalar(0.75).atan2(x[0]),
                              x[0].sign().mul(x[0])};
      },
      DType::F32, 0);
}

// ---- switch, threads ---------------------------------------------------------------------------

TEST(FusionAdversarial, SwitchingOffAndOnMidChainGivesTheSameValues) {
  const TensorData d = rnd({8, 8}, 25);
  const auto prog = [](const auto& x, bool flip) {
    auto a = x.exp().mul_scalar(0.5);
    if (flip) fusion::set_enabled(!fusion::enabled());
    auto b = a.add(x).tanh();
    auto c = b.mul(a).sub_scalar(0.25);
    return std::vector{a, b, c};
  };
  const auto want = prog(mk<Cpu, 2>(d), false);
  for (bool start : {true, false}) {
    FusionScope scope(start);
    const auto got = prog(mk<FB, 2>(d), true);
    for (std::size_t k = 0; k < got.size(); ++k)
      expect_same(got[k], want[k], 1e-6, std::to_string(k));
  }
}

TEST(FusionAdversarial, TwoThreadsRunTheirOwnChains) {
  FusionScope scope(true);
  std::vector<std::string> errors[2];
  const auto work = [&](int t) {
    for (int it = 0; it < 60; ++it) {
      const TensorData d = rnd({3, 300 + it}, 100 * t + it);
      const TensorData e = rnd({1, 300 + it}, 1000 * t + it);
      auto f = mk<FB, 2>(d), fb = mk<FB, 2>(e);
      auto c = mk<Cpu, 2>(d), cb = mk<Cpu, 2>(e);
      for (int k = 0; k < 20; ++k) {
        f = f.mul(fb).tanh().add_scalar(0.1 * t);
        c = c.mul(cb).tanh().add_scalar(0.1 * t);
      }
      const auto vf = f.to_vec<double>(), vc = c.to_vec<double>();
      for (std::size_t i = 0; i < vf.size(); ++i)
        if (std::fabs(vf[i] - vc[i]) > 1e-6 * std::max(1.0, std::fabs(vc[i])))
          errors[t].push_back("it " + std::to_string(it) + " elem " + std::to_string(i));
    }
  };
  std::thread a(work, 0), b(work, 1);
  a.join();
  b.join();
  EXPECT_TRUE(errors[0].empty()) << errors[0].front();
  EXPECT_TRUE(errors[1].empty()) << errors[1].front();
}

TEST(FusionAdversarial, APendingValueSharedByTwoThreads) {
  FusionScope scope(true);
  const TensorData d = rnd({4, 1000}, 26);
  const auto want = mk<Cpu, 2>(d).exp().mul_scalar(0.5);
  for (int rep = 0; rep < 50; ++rep) {
    const auto p = mk<FB, 2>(d).exp().mul_scalar(0.5);  // pending, read by both threads
    std::vector<double> out[2];
    const auto work = [&](int t) {
      out[t] = rep % 2 ? p.to_vec<double>() : p.add_scalar(t).sub_scalar(t).to_vec<double>();
    };
    std::thread a(work, 0), b(work, 1);
    a.join();
    b.join();
    expect_close(out[0], want.to_vec<double>(), 1e-6, "thread 0");
    expect_close(out[1], want.to_vec<double>(), 1e-6, "thread 1");
  }
}

// ---- memory -------------------------------------------------------------------------------------

TEST(FusionAdversarial, UnreadChainsDoNotGrowMemory) {
  FusionScope scope(true);
  const auto x = mk<FB, 2>(rnd({64, 1024}, 27, -1, 1));
  auto acc = Tensor<FB, 2>::zeros({64, 1024});
  (void)acc.to_vec<float>();
  std::size_t after_warmup = 0;
  for (int i = 0; i < 1000; ++i) {
    acc = acc.mul_scalar(0.5).add(x.exp());
    if (i == 100) after_warmup = cpu::memory_stats().live_bytes;
  }
  EXPECT_LE(cpu::memory_stats().live_bytes, after_warmup + 4 * 64 * 1024 * 4);
  const auto v = acc.to_vec<double>();
  const auto e = x.exp().to_vec<double>();
  for (std::size_t i = 0; i < v.size(); i += 97) EXPECT_NEAR(v[i], 2.0 * e[i], 1e-5 * v[i]);
}

// ---- autodiff --------------------------------------------------------------------------------

template <class B>
std::vector<std::vector<double>> second_order(const TensorData& d) {
  auto x = Tensor<B, 2>::from_data(d).require_grad();
  const auto f = x.mul(x.tanh()).mul(x.square().neg().exp()).add(x.sin().mul(x)).sum();
  const auto g1 = f.backward(true);
  const auto gx = x.grad_graph(g1).value();
  const auto h = gx.mul(gx).add(gx.exp()).sum();
  const auto g2 = h.backward();
  return {gx.inner().template to_vec<double>(), x.grad(g2)->template to_vec<double>()};
}

TEST(FusionAdversarial, CreateGraphSecondOrderGradientsMatchAutodiffCpu) {
  FusionScope scope(true);
  const TensorData d = rnd({3, 17}, 28);
  const auto f = second_order<AF>(d);
  const auto c = second_order<AC>(d);
  expect_close(f[0], c[0], 1e-6, "first order");
  expect_close(f[1], c[1], 1e-5, "second order");
}

TEST(FusionAdversarial, GradientOfAnInputUsedSeventyTimes) {
  FusionScope scope(true);
  const TensorData d = rnd({2, 50}, 29, -1, 1);
  const auto run = [&]<class B>() {
    auto x = Tensor<B, 2>::from_data(d).require_grad();
    auto y = x;
    for (int i = 0; i < 70; ++i) y = y.mul_scalar(0.9).add(x.mul(x).mul_scalar(0.01)).sin();
    const auto g = y.sum().backward();
    return std::vector<std::vector<double>>{y.inner().template to_vec<double>(),
                                            x.grad(g)->template to_vec<double>()};
  };
  const auto f = run.template operator()<AF>();
  const auto c = run.template operator()<AC>();
  expect_close(f[0], c[0], 1e-5, "value");
  expect_close(f[1], c[1], 1e-5, "grad");
}

template <Backend B>
struct Net {
  nn::Linear<B> fc1;
  nn::Linear<B> fc2;
  EMBER_MODULE(fc1, fc2)
  Tensor<B, 2> forward(const Tensor<B, 2>& x) const { return fc2.forward(fc1.forward(x).tanh()); }
};

template <Backend B>
std::vector<std::vector<double>> train(int steps) {
  Net<B> m{nn::LinearConfig{.d_input = 6, .d_output = 5}.init<B>(),
           nn::LinearConfig{.d_input = 5, .d_output = 3}.init<B>()};
  m.fc1.weight.set(mk<B, 2>(rnd({5, 6}, 30, -0.5, 0.5)));
  m.fc1.bias->set(mk<B, 1>(rnd({5}, 31, -0.5, 0.5)));
  m.fc2.weight.set(mk<B, 2>(rnd({3, 5}, 32, -0.5, 0.5)));
  m.fc2.bias->set(mk<B, 1>(rnd({3}, 33, -0.5, 0.5)));
  auto adam = optim::AdamConfig{.weight_decay = optim::WeightDecayConfig{.penalty = 0.01}}.init();
  const auto x = mk<B, 2>(rnd({8, 6}, 34));
  const auto y = mk<B, 2>(rnd({8, 3}, 35));
  std::vector<double> losses;
  for (int s = 0; s < steps; ++s) {
    const auto diff = m.forward(x).sub(y);
    const auto loss = diff.mul(diff).mean();
    losses.push_back(loss.template to_vec<double>()[0]);
    auto grads = optim::GradientsParams::from_grads(loss.backward(), m);
    adam.step(1e-2, m, grads);
  }
  return {losses, m.fc1.weight->template to_vec<double>(),
          m.fc1.bias.value()->template to_vec<double>(), m.fc2.weight->template to_vec<double>(),
          m.fc2.bias.value()->template to_vec<double>()};
}

TEST(FusionAdversarial, LinearAdamTrainingMatchesAutodiffCpu) {
  FusionScope scope(true);
  const auto f = train<AF>(25);
  const auto c = train<AC>(25);
  for (std::size_t k = 0; k < f.size(); ++k) expect_close(f[k], c[k], 1e-5, std::to_string(k));
  // The loss went down.
  EXPECT_LT(f[0].back(), f[0].front());
}

}  // namespace
}  // namespace ember::test

namespace ember::test {
namespace {

// The same element in a fused scalar tail and an unfused vector body (rows of 10 in the
// block, 30 contiguous elements unfused): pure relative 1e-6 for f32, as docs/fusion.md says.
TEST(FusionAdversarial, TailVersusVectorBodyWithinOnePpmRelative) {
  FusionScope scope(true);
  const double pi = 3.14159265358979323846;
  std::vector<double> vals{
      pi,        2 * pi,    100 * pi,  1e4,     12345.678, -pi / 2, 0.1,   1e-3,
      -1e-3,     7.5,       -20.0,     30.0,    88.5,      -87.0,   1e-20, 0.7853981633974483,
      1.5707963, 3.1415925, 6.2831855, 9.424778};
  std::mt19937 g(7);
  std::uniform_real_distribution<double> u(-50, 50);
  for (int i = 0; i < 200; ++i) vals.push_back(u(g));
  using Op = std::function<std::vector<double>(bool, const TensorData&)>;
  const auto make = [](auto f) -> Op {
    return [f](bool fused, const TensorData& row) {
      if (fused) {
        const auto x = mk<FB, 2>(row).add(Tensor<FB, 2>::zeros({3, 10}));
        return f(x).template to_vec<double>();
      }
      const auto x = mk<Cpu, 2>(row).add(Tensor<Cpu, 2>::zeros({3, 10}));
      return f(x).template to_vec<double>();
    };
  };
  const std::vector<std::pair<std::string, Op>> ops{
      {"sin", make([](const auto& x) { return x.sin(); })},
      {"cos", make([](const auto& x) { return x.cos(); })},
      {"tan", make([](const auto& x) { return x.tan(); })},
      {"exp", make([](const auto& x) { return x.exp(); })},
      {"expm1", make([](const auto& x) { return x.expm1(); })},
      {"log", make([](const auto& x) { return x.abs().log(); })},
      {"log1p", make([](const auto& x) { return x.abs().log1p(); })},
      {"erf", make([](const auto& x) { return x.erf(); })},
      {"tanh", make([](const auto& x) { return x.tanh(); })},
      {"atan", make([](const auto& x) { return x.atan(); })},
      {"asinh", make([](const auto& x) { return x.asinh(); })},
      {"sinh", make([](const auto& x) { return x.sinh(); })},
      {"cosh", make([](const auto& x) { return x.cosh(); })},
      {"pow", make([](const auto& x) { return x.abs().powf_scalar(2.5); })},
      {"atan2", make([](const auto& x) { return x.atan2(x.add_scalar(1.0)); })},
      {"hypot", make([](const auto& x) { return x.hypot(x.add_scalar(1.0)); })},
      {"fmod", make([](const auto& x) { return x.fmod(x.mul_scalar(0.3).add_scalar(0.1)); })},
      {"remainder", make([](const auto& x) { return x.remainder_scalar(0.7); })},
  };
  for (const auto& [name, op] : ops) {
    int bad = 0;
    std::string first;
    for (std::size_t start = 0; start + 10 <= vals.size(); start += 10) {
      const TensorData row(std::vector<double>(vals.begin() + start, vals.begin() + start + 10),
                           Shape{1, 10});
      const auto f = op(true, row), c = op(false, row);
      for (std::size_t i = 0; i < f.size(); ++i) {
        const bool same = (std::isnan(f[i]) && std::isnan(c[i])) || f[i] == c[i] ||
                          std::fabs(f[i] - c[i]) <= 1e-6 * std::fabs(c[i]);
        if (!same && bad++ == 0) {
          std::ostringstream o;
          o.precision(9);
          o << "x=" << vals[start + i % 10] << " fused " << f[i] << " cpu " << c[i];
          first = o.str();
        }
      }
    }
    EXPECT_EQ(bad, 0) << name << ": " << first;
  }
}

}  // namespace
}  // namespace ember::test

namespace ember::test {
namespace {

// Above 8 MiB of outputs the block streams its stores; odd sizes, an input at an odd offset,
// two outputs, and an input whose buffer is reused.
TEST(FusionAdversarial, LargeBlocksWithStreamingStores) {
  FusionScope scope(true);
  const TensorData d = rnd({2049, 1031}, 40), r = rnd({1, 1030}, 41);
  const auto run = [&]<class B>() {
    auto x = mk<B, 2>(d);
    const auto v = x.slice({s(), s(1, 1031)});  // offset 1: unaligned reads
    const auto e = v.exp();                     // held: a second output
    const auto y = e.mul(mk<B, 2>(r)).add(v).tanh();
    auto moved = mk<B, 2>(d).mul_scalar(1.0);
    const auto z = std::move(moved).sin().add_scalar(2.0);  // in place
    return std::vector<Tensor<B, 2>>{y, e, z, x};
  };
  const auto f = run.template operator()<FB>();
  const auto c = run.template operator()<Cpu>();
  for (std::size_t k = 0; k < f.size(); ++k) expect_same(f[k], c[k], 1e-6, std::to_string(k));
}

}  // namespace
}  // namespace ember::test

namespace ember::test {
namespace {

// A pending value reads its input as it was when recorded, even when the input is then
// written in place (slice_fill / mask_fill on a moved handle).
TEST(FusionAdversarial, InPlaceWritesAfterRecordingDoNotChangePendingValues) {
  FusionScope scope(true);
  const TensorData d = rnd({5, 7}, 50);
  const auto want = mk<Cpu, 2>(d).exp().add_scalar(1.0);
  {
    auto x = mk<FB, 2>(d);
    const auto y = x.exp().add_scalar(1.0);
    x = std::move(x).slice_fill({s(0, 3), s()}, 0.0);
    expect_same(y, want, 1e-6, "slice_fill");
  }
  {
    auto x = mk<FB, 2>(d);
    const auto v = x.slice({s(1, 4), s(2, 6)});
    const auto y = v.exp();  // pending on a view
    x = std::move(x).mask_fill(x.greater_elem(-10.0), 7.0);
    expect_same(y, mk<Cpu, 2>(d).slice({s(1, 4), s(2, 6)}).exp(), 1e-6, "mask_fill");
    EXPECT_EQ(x.to_vec<float>(), std::vector<float>(35, 7.0f));
  }
  {
    auto x = mk<FB, 2>(d).mul_scalar(1.0);  // pending itself
    const auto y = x.exp().add_scalar(1.0);
    x = std::move(x).slice_fill({s(), s(0, 7, 2)}, -1.0);
    expect_same(y, want, 1e-6, "pending input");
  }
}

// Activations and composites (softmax, log_softmax, silu, softplus, ...) over pending inputs.
TEST(FusionAdversarial, ActivationsAndCompositesOverPendingValues) {
  FusionScope scope(true);
  check_prog<3>(
      {rnd({2, 5, 34}, 51, -4, 4)},
      [](const auto& x) {
        using T = std::remove_cvref_t<decltype(x[0])>;
        const T p = x[0].mul_scalar(1.5).sub_scalar(0.25);  // pending
        return std::vector<T>{activation::softmax(p, 2),  activation::log_softmax(p, 1),
                              activation::silu(p).add(p), activation::softplus(p, 2.0, 10.0),
                              activation::gelu(p.tanh()), activation::relu(p).mul(p),
                              activation::mish(p),        activation::elu(p).exp(),
                              activation::glu(p, 2),      activation::hard_swish(p)};
      },
      DType::F32, 1e-6);
}

// Memory over a training loop stays flat (no pending chains kept alive across steps).
TEST(FusionAdversarial, TrainingLoopMemoryIsFlat) {
  FusionScope scope(true);
  using B = AF;
  Net<B> m{nn::LinearConfig{.d_input = 64, .d_output = 128}.init<B>(),
           nn::LinearConfig{.d_input = 128, .d_output = 8}.init<B>()};
  auto adam = optim::AdamConfig{}.init();
  const auto x = mk<B, 2>(rnd({256, 64}, 52));
  const auto y = mk<B, 2>(rnd({256, 8}, 53));
  std::size_t at10 = 0;
  for (int s = 0; s < 120; ++s) {
    const auto diff = m.forward(x).sub(y);
    const auto loss = diff.mul(diff).mean();
    auto grads = optim::GradientsParams::from_grads(loss.backward(), m);
    adam.step(1e-3, m, grads);
    if (s == 10) at10 = cpu::memory_stats().live_bytes;
  }
  EXPECT_LE(cpu::memory_stats().live_bytes, at10 + 4096);
  EXPECT_GT(fusion::stats().fused_ops, 0u);
}

}  // namespace
}  // namespace ember::test
