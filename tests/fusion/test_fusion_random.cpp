// Fusion<Cpu> against the CPU backend on random element-wise programs: random shapes with
// broadcast dims, transposed (strided) inputs, f32, f64 and bf16, values read in a random
// order (so pending values become extra outputs or run in blocks of their own).
//
// Tolerance: f32 4 ulp-ish (1e-6 relative, plus 1e-30 absolute), f64 1e-14 relative: the fused
// steps are the unfused kernels' own loops, so values differ at most where a vectorised body
// and a scalar tail contract a multiply-add differently. bf16 chains run op by op: equal.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "ember/cpu/cpu.hpp"
#include "ember/fusion/cpu.hpp"
#include "ember/tensor/tensor.hpp"
#include "fusion_test_util.hpp"

namespace ember::test {
namespace {

using FB = Fusion<Cpu>;
constexpr std::size_t D = 3;
using TF = Tensor<FB, D>;
using TC = Tensor<Cpu, D>;

struct Pair {
  TF f;
  TC c;
};

// One operation applied the same way to both tensors.
template <class T>
T unary(const T& x, int which) {
  switch (which) {
    case 0:
      return x.exp();
    case 1:
      return x.tanh();
    case 2:
      return x.sin();
    case 3:
      return x.abs().sqrt();
    case 4:
      return x.neg();
    case 5:
      return x.erf();
    case 6:
      return x.abs().log1p();
    case 7:
      return x.square();
    case 8:
      return x.recip();
    case 9:
      return x.clamp(-0.5, 0.75);
    case 10:
      return x.add_scalar(0.5);
    case 11:
      return x.mul_scalar(-1.25);
    case 12:
      return x.sub_scalar(2.0);
    default:
      return x.div_scalar(3.0);
  }
}
constexpr int kUnary = 14;
template <class T>
T binary(const T& a, const T& b, int which) {
  switch (which) {
    case 0:
      return a.add(b);
    case 1:
      return a.sub(b);
    case 2:
      return a.mul(b);
    case 3:
      return a.div(b);
    case 4:
      return a.max_pair(b);
    case 5:
      return a.min_pair(b);
    default:
      return a.atan2(b);
  }
}
constexpr int kBinary = 7;

bool close(double got, double want, DType dt) {
  if (std::isnan(want)) return std::isnan(got);
  if (std::isinf(want)) return got == want;
  if (dt == DType::BF16) return got == want;
  const double rel = dt == DType::F64 ? 1e-14 : 1e-6;
  return std::fabs(got - want) <= rel * std::fabs(want) + 1e-30;
}

void check(const Pair& p, DType dt, const std::string& what) {
  const std::vector<double> got = p.f.to_vec<double>();
  const std::vector<double> want = p.c.to_vec<double>();
  ASSERT_EQ(p.f.shape(), p.c.shape()) << what;
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t i = 0; i < got.size(); ++i)
    ASSERT_TRUE(close(got[i], want[i], dt))
        << what << ": element " << i << " fused " << got[i] << " unfused " << want[i];
}

void random_program(std::mt19937& rng, DType dt, int trial) {
  std::uniform_int_distribution<int> dim(1, 9);
  Shape out{dim(rng), dim(rng), dim(rng) * 37};  // long inner rows cross tile boundaries
  if (trial % 5 == 0) out = Shape{2, 3, 5000};   // several tiles and threads
  std::vector<Pair> pool;
  const int inputs = 1 + static_cast<int>(rng() % 3);
  for (int k = 0; k < inputs; ++k) {
    Shape s = out;
    for (std::size_t d = 0; d < D; ++d)
      if (rng() % 3 == 0) s[d] = 1;  // broadcast dim
    const bool transposed = rng() % 3 == 0;
    Shape stored = s;
    if (transposed) std::swap(stored[0], stored[2]);
    std::vector<float> v(stored.numel());
    std::uniform_real_distribution<float> u(-2.0f, 2.0f);
    for (float& x : v) x = u(rng);
    const TensorData data(v, stored);
    TF f = TF::from_data(data, FB::Device{}, dt);
    TC c = TC::from_data(data, Cpu::Device{}, dt);
    if (transposed) {
      f = f.swap_dims(0, 2);
      c = c.swap_dims(0, 2);
    }
    pool.push_back({f, c});
  }
  const int steps = 2 + static_cast<int>(rng() % 12);
  for (int i = 0; i < steps; ++i) {
    const Pair& a = pool[rng() % pool.size()];
    if (rng() % 2 == 0) {
      const int w = static_cast<int>(rng() % kUnary);
      pool.push_back({unary(a.f, w), unary(a.c, w)});
    } else {
      const Pair& b = pool[rng() % pool.size()];
      const int w = static_cast<int>(rng() % kBinary);
      pool.push_back({binary(a.f, b.f, w), binary(a.c, b.c, w)});
    }
  }
  // Read in a random order: each read may run a block whose other pending values are
  // still held by the pool (extra outputs).
  std::vector<std::size_t> order(pool.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), rng);
  for (std::size_t i : order)
    check(pool[i], dt, "trial " + std::to_string(trial) + " value " + std::to_string(i));
}

TEST(FusionRandom, ProgramsMatchTheUnfusedBackend) {
  FusionScope scope(true);
  std::mt19937 rng(20261204);
  for (DType dt : {DType::F32, DType::F64, DType::BF16})
    for (int trial = 0; trial < 60; ++trial) {
      random_program(rng, dt, trial);
      if (HasFatalFailure()) return;
    }
  EXPECT_GT(fusion::stats().blocks, 100u);
  EXPECT_GT(fusion::stats().replayed_ops, 100u);  // bf16
}

}  // namespace
}  // namespace ember::test
