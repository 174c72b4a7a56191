// The CPU backend's optional float_max_pool2d_backward (ember/backend/pool.hpp) against the
// formula evaluated directly, with indices from float_max_pool2d_with_indices (2x2 stride-2
// windows; overlapping 3x3 stride-1 windows, where an input may receive several gradients;
// padding and ceil_mode), for f32, f64 and bf16; and Autodiff<Cpu>'s max_pool2d gradient
// against its create_graph (scatter) path. Tolerance: exact for f32/f64 sums of at most
// 9 terms in index order (rel 1e-6 / abs 1e-6 allows the reordering); bf16 rel 1e-2.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "ember/autodiff/cpu.hpp"
#include "ember/cpu/cpu.hpp"
#include "ember/tensor/module/pool.hpp"
#include "fixtures.hpp"

using namespace ember;
using ember::test::expect_approx;

namespace {

using i64 = std::int64_t;

static_assert(HasMaxPoolBackward<Cpu>);

std::vector<double> values(i64 n, std::uint64_t seed) {
  std::vector<double> v(static_cast<std::size_t>(n));
  std::uint64_t s = seed * 0x9E3779B97F4A7C15ull + 3;
  for (auto& x : v) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    x = static_cast<double>(s >> 11) / static_cast<double>(1ull << 53) * 2.0 - 1.0;
  }
  return v;
}

struct PoolCase {
  Shape xs;
  PoolArg2 k, s, p;
  bool ceil;
};

void check(const PoolCase& c, DType dt, Tolerance tol, std::uint64_t seed) {
  SCOPED_TRACE(c.xs.to_string() + " k" + std::to_string(c.k[0]) + " s" + std::to_string(c.s[0]) +
               " p" + std::to_string(c.p[0]) + (c.ceil ? " ceil" : "") + " " +
               std::string(dtype_name(dt)));
  const CpuTensor x =
      Cpu::float_from_data(TensorData(values(c.xs.numel(), seed), c.xs).convert(dt), {});
  const auto [y, idx] =
      Cpu::float_max_pool_with_indices<2>(x, MaxPoolOptions<2>{c.k, c.s, c.p, {1, 1}, c.ceil});
  const Shape ys = y.shape;
  const auto gv = values(ys.numel(), seed + 1);
  const CpuTensor g = Cpu::float_from_data(TensorData(gv, ys).convert(dt), {});
  const auto iv = Cpu::float_into_data(idx).to_vec<std::int64_t>();
  const i64 planes = c.xs[0] * c.xs[1], hw = c.xs[2] * c.xs[3], ohw = ys[2] * ys[3];
  std::vector<double> ref(static_cast<std::size_t>(c.xs.numel()), 0.0);
  const auto gq = TensorData(gv, ys).convert(dt).convert(DType::F64).to_vec<double>();
  for (i64 pl = 0; pl < planes; ++pl)
    for (i64 o = 0; o < ohw; ++o)
      ref[static_cast<std::size_t>(pl * hw + iv[static_cast<std::size_t>(pl * ohw + o)])] +=
          gq[static_cast<std::size_t>(pl * ohw + o)];
  const CpuTensor dx = Cpu::float_max_pool_backward<2>(g, idx, c.xs);
  ASSERT_EQ(dx.dtype, dt);
  expect_approx(Cpu::float_into_data(dx).convert(DType::F64), TensorData(ref, c.xs), tol);
}

const std::vector<PoolCase> kCases = {
    {Shape{2, 3, 8, 6}, {2, 2}, {2, 2}, {0, 0}, false},
    {Shape{2, 3, 7, 5}, {2, 2}, {2, 2}, {0, 0}, false},  // odd sizes: last row/col unused
    {Shape{2, 2, 7, 5}, {2, 2}, {2, 2}, {0, 0}, true},   // ceil_mode: partial windows
    {Shape{1, 4, 6, 7}, {3, 3}, {1, 1}, {1, 1}, false},  // overlapping windows
    {Shape{3, 2, 9, 9}, {3, 2}, {2, 3}, {1, 1}, false},
};

}  // namespace

TEST(MaxPoolBackward, MatchesFormula) {
  std::uint64_t seed = 1;
  for (const auto& c : kCases) {
    check(c, DType::F32, Tolerance::rel_abs(1e-6, 1e-6), seed += 2);
    check(c, DType::F64, Tolerance::rel_abs(1e-12, 1e-12), seed += 2);
    check(c, DType::BF16, Tolerance::rel_abs(1e-2, 1e-2), seed += 2);
  }
}

TEST(MaxPoolBackward, EmptyBatch) {
  const CpuTensor g = Cpu::float_full(Shape{0, 2, 3, 3}, 1.0, {}, DType::F32);
  const CpuTensor idx = Cpu::int_full(Shape{0, 2, 3, 3}, 0.0, {}, DType::I64);
  EXPECT_EQ(Cpu::float_max_pool_backward<2>(g, idx, Shape{0, 2, 6, 6}).shape, (Shape{0, 2, 6, 6}));
}

// Autodiff<Cpu>: a plain backward (the kernel) against a create_graph one (scatter-add).
TEST(MaxPoolBackward, AutodiffAgreesWithScatterPath) {
  using AD = Autodiff<Cpu>;
  for (const auto& c : kCases) {
    const auto x =
        Tensor<AD, 4>::from_data(TensorData(values(c.xs.numel(), 77), c.xs).convert(DType::F32))
            .require_grad();
    const auto loss = [&] {
      auto y = module::max_pool2d(x, c.k, c.s, c.p, {1, 1}, c.ceil);
      return y.mul(y).sum();
    };
    expect_approx(x.grad(loss().backward())->into_data(),
                  x.grad(loss().backward(/*create_graph=*/true))->into_data(),
                  Tolerance::rel_abs(1e-6, 1e-6));
  }
}
