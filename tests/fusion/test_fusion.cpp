// Fusion<Cpu>: recorded element-wise chains run as one block (counted), with the values of
// the unfused functions; pending values held elsewhere become extra outputs; switches.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "ember/autodiff/fusion_cpu.hpp"
#include "ember/cpu/cpu.hpp"
#include "ember/fusion/cpu.hpp"
#include "ember/tensor/tensor.hpp"
#include "fusion_test_util.hpp"

namespace ember::test {
namespace {

using FB = Fusion<Cpu>;
using T2 = Tensor<FB, 2>;
using C2 = Tensor<Cpu, 2>;

template <class B, std::size_t D>
Tensor<B, D> custom_gelu(const Tensor<B, D>& x) {
  return x.mul(x.div_scalar(std::sqrt(2.0)).erf().add_scalar(1.0)).div_scalar(2.0);
}

TEST(Fusion, GeluChainIsOneBlockWithTheUnfusedValues) {
  FusionScope scope(true);
  const TensorData data = TensorData(
      std::vector<float>{-3.0f, -1.0f, -0.5f, 0.0f, 0.25f, 1.0f, 2.0f, 10.0f}, Shape{2, 4});
  const T2 x = T2::from_data(data);
  const T2 y = custom_gelu(x);
  EXPECT_TRUE(FB::float_is_pending(y.primitive()));
  EXPECT_EQ(fusion::stats().blocks, 0u);
  const std::vector<float> got = y.to_vec<float>();
  EXPECT_EQ(fusion::stats().blocks, 1u);
  EXPECT_EQ(fusion::stats().fused_ops, 5u);  // div, erf, add, mul, div
  EXPECT_EQ(fusion::stats().replayed_ops, 0u);
  const std::vector<float> eager = custom_gelu(C2::from_data(data)).to_vec<float>();
  ASSERT_EQ(got.size(), eager.size());
  const std::vector<float> xs = data.to_vec<float>();
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i], eager[i]) << i;  // the same element loops: identical values
    const double ref = 0.5 * xs[i] * (1.0 + std::erf(xs[i] / std::sqrt(2.0)));
    EXPECT_NEAR(got[i], ref, 1e-6 * (1.0 + std::fabs(ref))) << i;
  }
  // Read again: no new work.
  EXPECT_EQ(y.to_vec<float>(), got);
  EXPECT_EQ(fusion::stats().blocks, 1u);
}

TEST(Fusion, DivisionByAPowerOfTwoKeepsEveryBit) {
  // The CPU's block multiplies by the reciprocal of a power-of-two divisor: the same
  // correctly rounded value, also for subnormal, huge, signed-zero and non-finite elements.
  FusionScope scope(true);
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> xs{1.0f, -3.0f, 1e-45f, -1.2e-38f, 3.4e38f, -0.0f,
                              0.0f, inf,   -inf,   nan,       7.0f,    1e-40f};
  const TensorData data(xs, Shape{2, 6});
  for (double d : {2.0, 0.25, -8.0, 3.0, 1e-30, std::ldexp(1.0, -130), std::ldexp(1.0, 127)}) {
    const std::vector<float> got = T2::from_data(data).div_scalar(d).exp().to_vec<float>();
    const std::vector<float> want = C2::from_data(data).div_scalar(d).exp().to_vec<float>();
    for (std::size_t i = 0; i < xs.size(); ++i) {
      if (std::isnan(want[i]))
        EXPECT_TRUE(std::isnan(got[i])) << d << " " << i;
      else
        EXPECT_EQ(std::bit_cast<std::uint32_t>(got[i]), std::bit_cast<std::uint32_t>(want[i]))
            << "x = " << xs[i] << " / " << d;
    }
  }
  EXPECT_EQ(fusion::stats().blocks, 7u);
}

TEST(Fusion, BroadcastOperandsAndScalars) {
  FusionScope scope(true);
  const T2 a = T2::from_floats({{1.0}, {2.0}, {3.0}});       // [3, 1]
  const T2 b = T2::from_floats({{10.0, 20.0, 30.0, 40.0}});  // [1, 4]
  const T2 c = a.mul(b).add_scalar(1.0).sub(a.square());     // a*b + 1 - a^2: [3, 4]
  EXPECT_EQ(c.shape(), Shape({3, 4}));
  const std::vector<float> got = c.to_vec<float>();
  EXPECT_EQ(fusion::stats().blocks, 1u);
  EXPECT_EQ(fusion::stats().fused_ops, 4u);
  std::vector<float> want;
  for (double i : {1.0, 2.0, 3.0})
    for (double j : {10.0, 20.0, 30.0, 40.0}) want.push_back(static_cast<float>(i * j + 1 - i * i));
  EXPECT_EQ(got, want);
}

TEST(Fusion, PendingValueHeldElsewhereIsASecondOutput) {
  FusionScope scope(true);
  const T2 x = T2::from_floats({{0.0, 1.0}, {2.0, -1.0}});
  const T2 e = x.exp();                  // held by the test: written by the same block
  const T2 z = e.add_scalar(1.0).log();  // softplus
  const std::vector<float> zs = z.to_vec<float>();
  EXPECT_EQ(fusion::stats().blocks, 1u);
  EXPECT_EQ(fusion::stats().fused_ops, 3u);
  EXPECT_FALSE(FB::float_is_pending(e.primitive()));
  const std::vector<float> es = e.to_vec<float>();
  EXPECT_EQ(fusion::stats().blocks, 1u);  // e came out of the first block
  const float xs[] = {0.0f, 1.0f, 2.0f, -1.0f};
  for (int i = 0; i < 4; ++i) {
    EXPECT_FLOAT_EQ(es[i], std::exp(xs[i]));
    EXPECT_NEAR(zs[i], std::log1p(std::exp(static_cast<double>(xs[i]))), 1e-6);
  }
}

TEST(Fusion, BroadcastIntermediateHeldElsewhereRunsFirst) {
  FusionScope scope(true);
  const T2 row = T2::from_floats({{1.0, 2.0, 3.0}});  // [1, 3]
  const T2 big = T2::from_floats({{1.0, 1.0, 1.0}, {2.0, 2.0, 2.0}});
  const T2 r2 = row.mul_scalar(2.0);   // [1, 3], held
  const T2 out = big.mul(r2).add(r2);  // [2, 3]
  EXPECT_EQ(out.to_vec<float>(), (std::vector<float>{4, 8, 12, 6, 12, 18}));
  EXPECT_EQ(fusion::stats().blocks, 2u);  // r2 alone (its own shape), then the rest
  EXPECT_EQ(r2.to_vec<float>(), (std::vector<float>{2, 4, 6}));
  EXPECT_EQ(fusion::stats().blocks, 2u);
}

TEST(Fusion, StridedInputsAndNonFusedConsumers) {
  FusionScope scope(true);
  const TensorData data = TensorData(std::vector<float>{1, 2, 3, 4, 5, 6}, Shape{2, 3});
  const T2 x = T2::from_data(data).transpose();  // [3, 2], strided
  const T2 y = x.mul_scalar(3.0).add(x).clamp(2.0, 20.0);
  const C2 xc = C2::from_data(data).transpose();
  const C2 yc = xc.mul_scalar(3.0).add(xc).clamp(2.0, 20.0);
  EXPECT_EQ(y.to_vec<float>(), yc.to_vec<float>());
  EXPECT_EQ(y.to_vec<float>(), (std::vector<float>{4, 16, 8, 20, 12, 20}));
  // A matmul reads a pending operand: the chain runs first, as one block.
  fusion::reset_stats();
  const T2 m = x.add_scalar(1.0).matmul(T2::from_floats({{1.0}, {1.0}}));
  EXPECT_EQ(m.to_vec<float>(), (std::vector<float>{7, 9, 11}));
  EXPECT_EQ(fusion::stats().blocks, 1u);
}

TEST(Fusion, AnInputUsedOnlyByTheChainGivesItsBuffer) {
  FusionScope scope(true);
  T2 x = T2::from_floats({{1.0, 2.0}, {3.0, 4.0}});
  const void* buffer = FB::float_value(x.primitive()).storage.get();
  const T2 y = std::move(x).mul_scalar(2.0).add_scalar(1.0);
  EXPECT_EQ(FB::float_value(y.primitive()).storage.get(), buffer);
  EXPECT_EQ(y.to_vec<float>(), (std::vector<float>{3, 5, 7, 9}));
  // Still held elsewhere: a new buffer, the input unchanged.
  const T2 a = T2::from_floats({{1.0, 2.0}});
  const T2 b = a.mul_scalar(2.0).add_scalar(1.0);
  EXPECT_NE(FB::float_value(b.primitive()).storage.get(),
            FB::float_value(a.primitive()).storage.get());
  EXPECT_EQ(a.to_vec<float>(), (std::vector<float>{1, 2}));
  EXPECT_EQ(b.to_vec<float>(), (std::vector<float>{3, 5}));
}

TEST(Fusion, SyncComputesEveryPendingValueHeld) {
  FusionScope scope(true);
  const T2 x = T2::from_floats({{1.0, 4.0}, {9.0, 16.0}});
  const T2 a = x.sqrt().add_scalar(1.0).mul_scalar(2.0);  // one chain: its middle not held
  T2 b = x.neg();
  b = b.exp();  // the first value of b is gone: only its chain holds it
  T2 c = x.add_scalar(1.0);
  const T2 d = c.mul(c);  // c held: an extra output of d's block
  EXPECT_TRUE(FB::float_is_pending(a.primitive()));
  EXPECT_EQ(fusion::stats().blocks, 0u);
  FB::sync(FB::Device{});
  for (const T2* t : std::initializer_list<const T2*>{&a, &b, &c, &d})
    EXPECT_FALSE(FB::float_is_pending(t->primitive()));
  EXPECT_EQ(fusion::stats().blocks, 3u);  // a's, b's and d's chains
  EXPECT_EQ(fusion::stats().fused_ops, 7u);
  EXPECT_EQ(fusion::stats().replayed_ops, 0u);
  EXPECT_EQ(a.to_vec<float>(), (std::vector<float>{4, 6, 8, 10}));
  EXPECT_EQ(d.to_vec<float>(), (std::vector<float>{4, 25, 100, 289}));
  EXPECT_EQ(c.to_vec<float>(), (std::vector<float>{2, 5, 10, 17}));
  EXPECT_FLOAT_EQ(b.to_vec<float>()[0], std::exp(-1.0f));
  // Nothing pending: another sync runs nothing.
  FB::sync(FB::Device{});
  EXPECT_EQ(fusion::stats().blocks, 3u);
}

TEST(Fusion, SwitchedOffRunsAtOnce) {
  FusionScope scope(false);
  const T2 x = T2::from_floats({{1.0, 4.0}});
  const T2 y = x.sqrt().add_scalar(1.0);
  EXPECT_FALSE(FB::float_is_pending(y.primitive()));
  EXPECT_EQ(y.to_vec<float>(), (std::vector<float>{2, 3}));
  EXPECT_EQ(fusion::stats().blocks, 0u);
  EXPECT_EQ(fusion::stats().replayed_ops, 2u);
}

TEST(Fusion, HalfPrecisionChainsRunOpByOne) {
  FusionScope scope(true);
  const T2 x = T2::from_data(TensorData(std::vector<float>{1.0f, 2.0f, 3.0f}, Shape{1, 3}),
                             FB::Device{}, DType::BF16);
  const T2 y = x.mul_scalar(1.5).add_scalar(0.25);
  EXPECT_EQ(y.dtype(), DType::BF16);
  EXPECT_EQ(y.to_vec<float>(), (std::vector<float>{1.75f, 3.25f, 4.75f}));
  EXPECT_EQ(fusion::stats().blocks, 0u);
  EXPECT_EQ(fusion::stats().replayed_ops, 2u);
}

TEST(Fusion, LongChainsAreBounded) {
  FusionScope scope(true);
  T2 x = T2::from_floats({{0.0}});
  for (int i = 0; i < 200; ++i) x = x.add_scalar(1.0);
  EXPECT_EQ(x.to_vec<float>(), std::vector<float>{200.0f});
  EXPECT_GE(fusion::stats().blocks, 3u);  // at most kMaxChain operations per block
  EXPECT_EQ(fusion::stats().fused_ops, 200u);
}

// A value updated every step and never read (batch norm's running mean and variance: one new
// operand a step) is computed every kMaxChainOperands steps at the step's last operation, so
// every block holds whole steps and has one pattern.
TEST(Fusion, RunningStatisticsAreCutAtWholeSteps) {
  FusionScope scope(true);
  T2 mean = T2::from_floats({{0.0, 0.0}});
  T2 var = T2::from_floats({{1.0, 1.0}});
  const int steps = 3 * static_cast<int>(fusion::kMaxChainOperands);  // 36
  for (int k = 1; k <= steps; ++k) {
    const T2 batch = T2::from_floats({{1.0 * k, 2.0}});  // computed: a new operand each step
    mean = mean.mul_scalar(0.9).add(batch.mul_scalar(0.1));
    var = var.mul_scalar(0.9).add(batch.mul_scalar(1.5).mul_scalar(0.1));
  }
  // 3 blocks of 12 steps each: 36 operations (mean), 48 (var); none cut inside a step.
  EXPECT_EQ(fusion::stats().blocks, 6u);
  EXPECT_EQ(fusion::stats().fused_ops, 3u * (36 + 48));
  EXPECT_FALSE(FB::float_is_pending(mean.primitive()));
  double m = 0, v = 1;
  for (int k = 1; k <= steps; ++k) {
    m = static_cast<float>(static_cast<float>(m * 0.9f) + static_cast<float>(k * 0.1f));
    v = 0.9 * v + 0.15 * 2.0;
  }
  EXPECT_NEAR(mean.to_vec<float>()[0], m, 1e-4);
  EXPECT_NEAR(var.to_vec<float>()[1], v, 1e-5);
}

TEST(Fusion, AutodiffOverFusionFusesForwardAndBackward) {
  FusionScope scope(true);
  using AB = Autodiff<Fusion<Cpu>>;
  const std::vector<float> xs{-2.0f, -0.5f, 0.0f, 0.75f, 3.0f};
  auto x = Tensor<AB, 1>::from_data(TensorData(xs, Shape{5})).require_grad();
  const auto loss = custom_gelu(x).sum();
  const auto grads = loss.backward();
  const std::vector<float> g = x.grad(grads)->to_vec<float>();
  EXPECT_GE(fusion::stats().blocks, 2u);  // forward chain, backward chain
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const double v = xs[i];
    // d/dx x Phi(x) = Phi(x) + x phi(x)
    const double want = 0.5 * (1.0 + std::erf(v / std::sqrt(2.0))) +
                        v * std::exp(-0.5 * v * v) / std::sqrt(2.0 * M_PI);
    EXPECT_NEAR(g[i], want, 1e-6) << i;
  }
}

}  // namespace
}  // namespace ember::test
