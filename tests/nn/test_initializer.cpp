// nn::Initializer statistics on large tensors ([400, 500], 200k values; fan_in = 500,
// fan_out = 400, PyTorch's convention for a [out, in] weight):
//   - against Burn's formulas (ember/module/initializer.hpp): bounds of the uniform kinds,
//     mean and standard deviation within 4 standard errors;
//   - against torch.nn.init's draws (tests/fixtures/nn/initializer.json, gen_nn_norm.py):
//     the PyTorch call and the Ember initializer with the same formula give the same mean,
//     std (within 4 standard errors of the difference) and, for uniform kinds, the same
//     maximum |w| (the bound) within 0.2%;
//   - orthogonal: W W^T = gain^2 I (rows <= cols) or W^T W = gain^2 I (rows > cols).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "ember/autodiff/cpu.hpp"
#include "ember/dispatch/dispatch.hpp"
#include "ember/module/initializer.hpp"
#include "ember/nn/linear.hpp"
#include "fixtures.hpp"

namespace ember::test {
namespace {

using nn::Initializer;

constexpr std::int64_t kRows = 400, kCols = 500;
constexpr std::int64_t kFanIn = kCols, kFanOut = kRows;

struct Stats {
  double n = 0, mean = 0, std = 0, min = 0, max = 0, max_abs = 0;
};

Stats stats(const std::vector<double>& v) {
  Stats s;
  s.n = static_cast<double>(v.size());
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / s.n;
  double ss = 0;
  for (double x : v) ss += (x - s.mean) * (x - s.mean);
  s.std = std::sqrt(ss / (s.n - 1));
  s.min = *std::min_element(v.begin(), v.end());
  s.max = *std::max_element(v.begin(), v.end());
  s.max_abs = std::max(-s.min, s.max);
  return s;
}

/// One large draw on the Cpu backend.
Stats draw(const Initializer& init, std::uint64_t seed, std::int64_t rows = kRows,
           std::int64_t cols = kCols) {
  Cpu::seed(seed);
  auto w = init.init<Cpu, 2>(Shape{rows, cols}, Cpu::Device{}, cols, rows);
  EXPECT_EQ(w.shape(), (Shape{rows, cols}));
  EXPECT_EQ(w.dtype(), DType::F32);
  return stats(w.to_vec<double>());
}

/// Mean 0 and standard deviation `sd` within 4 standard errors (se of the std of n samples
/// is at most sd / sqrt(n): sd / sqrt(2n) for a normal, 0.45 sd / sqrt(n) for a uniform).
void expect_moments(const Stats& s, double mean, double sd) {
  const double se = sd / std::sqrt(s.n);
  EXPECT_NEAR(s.mean, mean, 4.0 * se);
  EXPECT_NEAR(s.std, sd, 4.0 * se);
}

/// U(-b, b): every value inside, the extremes within 0.1% of b, std b / sqrt(3).
void expect_symmetric_uniform(const Stats& s, double b) {
  EXPECT_LE(s.max_abs, b * (1 + 1e-6));
  EXPECT_GE(s.max, 0.999 * b);
  EXPECT_LE(s.min, -0.999 * b);
  expect_moments(s, 0.0, b / std::sqrt(3.0));
}

TEST(InitializerStats, ConstantZerosOnes) {
  for (auto [init, v] :
       {std::pair{Initializer::constant(0.25), 0.25}, std::pair{Initializer::zeros(), 0.0},
        std::pair{Initializer::ones(), 1.0}}) {
    auto w = init.init<Cpu, 3>(Shape{3, 4, 5}, Cpu::Device{});
    for (double x : w.to_vec<double>()) ASSERT_EQ(x, v);
  }
}

TEST(InitializerStats, Uniform) {
  const auto s = draw(Initializer::uniform(-0.3, 0.7), 1);
  EXPECT_GE(s.min, -0.3);
  EXPECT_LT(s.max, 0.7);
  EXPECT_LE(s.min, -0.299);
  EXPECT_GE(s.max, 0.699);
  expect_moments(s, 0.2, 1.0 / std::sqrt(12.0));
}

TEST(InitializerStats, Normal) {
  const auto s = draw(Initializer::normal(0.5, 2.0), 2);
  expect_moments(s, 0.5, 2.0);
  // 200k normal draws reach about 4.5 sd; far tails do not appear.
  EXPECT_GT(s.max_abs, 0.5 + 3.5 * 2.0);
  EXPECT_LT(s.max_abs, 0.5 + 6.5 * 2.0);
}

TEST(InitializerStats, KaimingUniformBurnFormula) {
  // b = gain * sqrt(3 / fan), fan = fan_in unless fan_out_only.
  const double g = 1.0 / std::sqrt(3.0);
  expect_symmetric_uniform(draw(Initializer::kaiming_uniform(g, false), 3),
                           g * std::sqrt(3.0 / kFanIn));
  expect_symmetric_uniform(draw(Initializer::kaiming_uniform(std::sqrt(2.0), true), 4),
                           std::sqrt(2.0) * std::sqrt(3.0 / kFanOut));
  // PyTorch's default Linear/Conv bound 1 / sqrt(fan_in) with gain 1/sqrt(3).
  EXPECT_NEAR(g * std::sqrt(3.0 / kFanIn), 1.0 / std::sqrt(kFanIn), 1e-15);
}

TEST(InitializerStats, KaimingNormalBurnFormula) {
  // std = gain / sqrt(fan).
  expect_moments(draw(Initializer::kaiming_normal(std::sqrt(2.0), false), 5), 0.0,
                 std::sqrt(2.0) / std::sqrt(kFanIn));
  expect_moments(draw(Initializer::kaiming_normal(1.0, true), 6), 0.0, 1.0 / std::sqrt(kFanOut));
}

TEST(InitializerStats, XavierBurnFormula) {
  // uniform b = gain * sqrt(6 / (fan_in + fan_out)); normal std = gain * sqrt(2 / (..)).
  expect_symmetric_uniform(draw(Initializer::xavier_uniform(1.0), 7),
                           std::sqrt(6.0 / (kFanIn + kFanOut)));
  expect_symmetric_uniform(draw(Initializer::xavier_uniform(5.0 / 3.0), 8),
                           5.0 / 3.0 * std::sqrt(6.0 / (kFanIn + kFanOut)));
  expect_moments(draw(Initializer::xavier_normal(2.0), 9), 0.0,
                 2.0 * std::sqrt(2.0 / (kFanIn + kFanOut)));
}

TEST(InitializerStats, MissingFansThrow) {
  const auto dev = Cpu::Device{};
  EXPECT_THROW((Initializer::kaiming_uniform(1.0).init<Cpu, 2>(Shape{3, 4}, dev)), ValueError);
  EXPECT_THROW((Initializer::kaiming_normal(1.0, true).init<Cpu, 2>(Shape{3, 4}, dev, 4)),
               ValueError);
  EXPECT_THROW((Initializer::xavier_normal().init<Cpu, 2>(Shape{3, 4}, dev, 4)), ValueError);
  EXPECT_NO_THROW((Initializer::normal(0, 1).init<Cpu, 2>(Shape{3, 4}, dev)));
}

TEST(InitializerStats, NonFiniteOrInvalidParametersThrow) {
  // Each would otherwise fill the weights with NaN (or infinities) without a word.
  const auto dev = Cpu::Device{};
  const double nan = std::nan("");
  const double inf = std::numeric_limits<double>::infinity();
  const auto expect = [&](const Initializer& init, const std::string& what) {
    SCOPED_TRACE(what);
    EMBER_EXPECT_THROW_MSG((init.init<Cpu, 2>(Shape{3, 4}, dev, 4, 3)), ValueError,
                           "[Initializer] " + what);
    EMBER_EXPECT_THROW_MSG(init.distribution(4, 3), ValueError, "[Initializer] " + what);
  };
  expect(Initializer::normal(nan, 1), "normal needs a finite mean and a finite std >= 0, got mean");
  expect(Initializer::normal(0, nan), "normal needs a finite mean and a finite std >= 0");
  expect(Initializer::normal(0, -1), "normal needs a finite mean and a finite std >= 0");
  expect(Initializer::normal(0, inf), "normal needs a finite mean and a finite std >= 0");
  expect(Initializer::uniform(nan, 1), "uniform bounds must be finite with low <= high");
  expect(Initializer::uniform(0, nan), "uniform bounds must be finite with low <= high");
  expect(Initializer::uniform(-inf, inf), "uniform bounds must be finite with low <= high");
  expect(Initializer::uniform(1, 0), "uniform bounds must be finite with low <= high, got low 1");
  expect(Initializer::constant(nan), "constant value must be finite");
  expect(Initializer::kaiming_uniform(nan), "kaiming_uniform gain must be finite and >= 0");
  expect(Initializer::kaiming_normal(-1), "kaiming_normal gain must be finite and >= 0");
  expect(Initializer::xavier_uniform(inf), "xavier_uniform gain must be finite and >= 0");
  expect(Initializer::xavier_normal(nan), "xavier_normal gain must be finite and >= 0");
  expect(Initializer::orthogonal(nan), "orthogonal gain must be finite");
  // Limit cases that stay finite.
  EXPECT_NO_THROW((Initializer::uniform(1, 1).init<Cpu, 2>(Shape{3, 4}, dev)));
  EXPECT_NO_THROW((Initializer::normal(0, 0).init<Cpu, 2>(Shape{3, 4}, dev)));
  EXPECT_NO_THROW((Initializer::orthogonal(-2).init<Cpu, 2>(Shape{3, 4}, dev)));
  // JSON cannot hold NaN, but it can hold a negative std: refused when read.
  EMBER_EXPECT_THROW_MSG(
      (nlohmann::json{{"kind", "normal"}, {"mean", 0}, {"std", -1}}.get<Initializer>()), ValueError,
      "normal needs a finite mean and a finite std >= 0");
}

/// max |W W^T - gain^2 I| (rows <= cols) or |W^T W - gain^2 I| (rows > cols), in f64.
double orthogonality_error(const std::vector<double>& w, std::int64_t rows, std::int64_t cols,
                           double gain) {
  const bool by_rows = rows <= cols;
  const std::int64_t k = by_rows ? rows : cols, len = by_rows ? cols : rows;
  auto at = [&](std::int64_t vec, std::int64_t i) {
    return by_rows ? w[static_cast<std::size_t>(vec * cols + i)]
                   : w[static_cast<std::size_t>(i * cols + vec)];
  };
  double err = 0;
  for (std::int64_t a = 0; a < k; ++a)
    for (std::int64_t b = 0; b < k; ++b) {
      double dot = 0;
      for (std::int64_t i = 0; i < len; ++i) dot += at(a, i) * at(b, i);
      err = std::max(err, std::abs(dot - (a == b ? gain * gain : 0.0)));
    }
  return err;
}

TEST(InitializerStats, OrthogonalGivesGainSquaredIdentity) {
  Cpu::seed(10);
  for (auto [rows, cols, gain] :
       {std::tuple{30, 50, 1.0}, std::tuple{50, 30, 1.5}, std::tuple{40, 40, 0.5}}) {
    SCOPED_TRACE(std::to_string(rows) + "x" + std::to_string(cols));
    auto w = Initializer::orthogonal(gain).init<Cpu, 2>(Shape{rows, cols}, Cpu::Device{});
    EXPECT_LT(orthogonality_error(w.to_vec<double>(), rows, cols, gain), 2e-6 * gain * gain);
  }
  // Rank 4 (a conv weight [out, in, kh, kw]) is flattened to [out, in * kh * kw].
  auto w4 = Initializer::orthogonal(2.0).init<Cpu, 4>(Shape{6, 2, 3, 3}, Cpu::Device{});
  EXPECT_LT(orthogonality_error(w4.to_vec<double>(), 6, 18, 2.0), 1e-5);
  // Two draws differ (a random orthogonal matrix, not a fixed one).
  auto a = Initializer::orthogonal().init<Cpu, 2>(Shape{5, 5}, Cpu::Device{}).to_vec<float>();
  auto b = Initializer::orthogonal().init<Cpu, 2>(Shape{5, 5}, Cpu::Device{}).to_vec<float>();
  EXPECT_NE(a, b);
}

TEST(InitializerStats, DispatchAndAutodiffBackendsDrawTheSameDistribution) {
  Dispatch::seed(12);
  auto wd = Initializer::kaiming_uniform(1.0).init<Dispatch, 2>(Shape{kRows, kCols},
                                                                Device::cpu().autodiff(), kFanIn);
  expect_symmetric_uniform(stats(wd.to_vec<double>()), std::sqrt(3.0 / kFanIn));
  Autodiff<Cpu>::seed(13);
  auto wa = Initializer::xavier_normal(1.0).init<Autodiff<Cpu>, 2>(Shape{kRows, kCols}, {}, kFanIn,
                                                                   kFanOut);
  expect_moments(stats(wa.to_vec<double>()), 0.0, std::sqrt(2.0 / (kFanIn + kFanOut)));
}

TEST(InitializerStats, LinearDefaultMatchesTorchBound) {
  Cpu::seed(14);
  auto fc = nn::LinearConfig{.d_input = kFanIn, .d_output = kFanOut}.init<Cpu>();
  expect_symmetric_uniform(stats(fc.weight.val().to_vec<double>()), 1.0 / std::sqrt(kFanIn));
}

// ---- against torch.nn.init -------------------------------------------------------------------

class InitializerTorch : public ::testing::TestWithParam<std::string> {};

TEST_P(InitializerTorch, SameStatisticsAsTorch) {
  const FixtureCase* found = nullptr;
  const auto cases = fixture_cases("nn/initializer");
  for (const auto& fc : cases)
    if (fc.name == GetParam()) found = &fc;
  ASSERT_NE(found, nullptr) << "no fixture case " << GetParam();
  const auto& c = *found;
  const auto init = c.at("initializer").get<Initializer>();
  const auto rows = c.param<std::int64_t>("rows"), cols = c.param<std::int64_t>("cols");
  const Stats s = draw(init, 100 + static_cast<std::uint64_t>(init.kind()), rows, cols);
  const double torch_std = c.param<double>("std");
  // Two independent draws: the difference has twice the variance.
  const double se = std::sqrt(2.0) * torch_std / std::sqrt(s.n);
  EXPECT_NEAR(s.std, torch_std, 4.0 * se);
  EXPECT_NEAR(s.mean, c.param<double>("mean"), 4.0 * se);
  const auto kind = c.at("initializer").at("kind").get<std::string>();
  if (kind.find("uniform") != std::string::npos) {
    EXPECT_NEAR(s.max_abs, c.param<double>("max_abs"), 2e-3 * c.param<double>("max_abs"));
  }
  if (kind == "orthogonal") {
    // Orthonormal rows scaled by gain: the Frobenius norm is fixed, so the std is too.
    EXPECT_NEAR(s.std, torch_std, 1e-4 * torch_std);
  }
}

INSTANTIATE_TEST_SUITE_P(Fixture, InitializerTorch,
                         ::testing::Values("kaiming_uniform_linear_default",
                                           "kaiming_uniform_relu_fan_out", "kaiming_normal_relu",
                                           "kaiming_normal_linear_fan_out", "xavier_uniform",
                                           "xavier_uniform_tanh_gain", "xavier_normal_gain2",
                                           "uniform", "normal", "orthogonal_gain"));

}  // namespace
}  // namespace ember::test
