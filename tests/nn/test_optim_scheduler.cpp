// LR schedulers against torch.optim.lr_scheduler sequences (tests/fixtures/gen_nn_optim.py,
// cases "sched_*"), state save/restore, JSON round trips and bad configs.
// Tolerance: rel 1e-9 / abs 1e-12 (the rates are f64 closed forms; torch's recursive forms
// differ by a few ulps).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "ember/optim/lr_scheduler.hpp"
#include "fixtures.hpp"

namespace ember::optim {
namespace {

using test::FixtureCase;
using json = nlohmann::json;

void expect_rates(const std::vector<double>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t k = 0; k < want.size(); ++k) {
    EXPECT_NEAR(got[k], want[k], 1e-12 + 1e-9 * std::abs(want[k])) << "step " << k;
  }
}

std::vector<double> run(LrScheduler& s, std::size_t n) {
  std::vector<double> out;
  for (std::size_t k = 0; k < n; ++k) out.push_back(s.step());
  return out;
}

FixtureCase find_case(const std::string& name) {
  for (const auto& c : test::fixture_cases("nn/optim", name)) {
    if (c.name == name) return c;
  }
  throw std::runtime_error("no fixture case " + name);
}

class LrSchedulerFixture : public ::testing::TestWithParam<std::string> {};

TEST_P(LrSchedulerFixture, MatchesTorch) {
  const FixtureCase c = find_case(GetParam());
  const auto want = c.param<std::vector<double>>("lrs");
  const LrSchedulerConfig cfg = LrSchedulerConfig::from_json(c.at("config"));
  LrScheduler s = cfg.init();
  expect_rates(run(s, want.size()), want);

  // The config survives a JSON round trip.
  LrScheduler s2 = LrSchedulerConfig::from_json(json::parse(cfg.to_json().dump())).init();
  expect_rates(run(s2, want.size()), want);

  // Save after every prefix k, restore into a fresh scheduler (through a JSON string), and
  // continue: the same rates as the uninterrupted run.
  for (std::size_t k = 0; k <= want.size(); ++k) {
    LrScheduler a = cfg.init();
    run(a, k);
    const std::string saved = a.state().dump();
    LrScheduler b = cfg.init();
    b.load_state(json::parse(saved));
    const auto rest = run(b, want.size() - k);
    expect_rates(rest,
                 std::vector<double>(want.begin() + static_cast<std::ptrdiff_t>(k), want.end()));
  }
}

std::vector<std::string> sched_cases() {
  std::vector<std::string> names;
  for (const auto& c : test::fixture_cases("nn/optim", "sched_")) names.push_back(c.name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(Torch, LrSchedulerFixture, ::testing::ValuesIn(sched_cases()),
                         [](const auto& info) { return info.param; });

TEST(LrScheduler, FirstStepReturnsInitialRate) {
  auto lin = LinearLrSchedulerConfig{.initial_lr = 0.3, .final_lr = 0.1, .num_iters = 7}.init();
  auto step = StepLrSchedulerConfig{.initial_lr = 0.3, .step_size = 1}.init();
  auto exp = ExponentialLrSchedulerConfig{.initial_lr = 0.3, .gamma = 0.5}.init();
  auto cos = CosineAnnealingLrSchedulerConfig{.initial_lr = 0.3, .num_iters = 3}.init();
  auto cst = ConstantLrSchedulerConfig{.lr = 0.3}.init();
  auto noam = NoamLrSchedulerConfig{.init_lr = 1.0, .warmup_steps = 4, .model_size = 4}.init();
  EXPECT_DOUBLE_EQ(lin.step(), 0.3);
  EXPECT_DOUBLE_EQ(step.step(), 0.3);
  EXPECT_DOUBLE_EQ(exp.step(), 0.3);
  EXPECT_DOUBLE_EQ(cos.step(), 0.3);
  EXPECT_DOUBLE_EQ(cst.step(), 0.3);
  // Noam's first rate is that of step 1: init * d^-0.5 * w^-1.5 = 1 * 1/2 * 1/8.
  EXPECT_DOUBLE_EQ(noam.step(), 1.0 / 16.0);
}

TEST(LrScheduler, LinearEndpointsAreExact) {
  auto s = LinearLrSchedulerConfig{.initial_lr = 0.1, .final_lr = 0.7, .num_iters = 3}.init();
  EXPECT_EQ(s.step(), 0.1);
  s.step();
  s.step();
  EXPECT_EQ(s.step(), 0.7);
  EXPECT_EQ(s.step(), 0.7);
}

TEST(LrScheduler, CosineFollowsTorchPastTheEnd) {
  // Issue 19: torch's CosineAnnealingLR keeps following the cosine after T_max (no restart).
  auto s = CosineAnnealingLrSchedulerConfig{.initial_lr = 1.0, .num_iters = 4}.init();
  const std::vector<double> want = {1.0, 0.853553390593, 0.5, 0.146446609407, 0.0, 0.146446609407,
                                    0.5, 0.853553390593, 1.0};
  for (std::size_t k = 0; k < want.size(); ++k) EXPECT_NEAR(s.step(), want[k], 1e-12) << k;
}

TEST(LrScheduler, WarmRestartsStartEveryCycleAtTheInitialRate) {
  auto s =
      CosineAnnealingWarmRestartsLrSchedulerConfig{.initial_lr = 1.0, .t_0 = 2, .t_mult = 3}.init();
  // Cycles of 2 and 6 steps: restarts at steps 0, 2 and 8.
  const std::vector<double> want = {1.0, 0.5, 1.0, 0.933012701892, 0.75, 0.5, 0.25, 0.066987298108,
                                    1.0};
  for (std::size_t k = 0; k < want.size(); ++k) EXPECT_NEAR(s.step(), want[k], 1e-12) << k;
  EXPECT_EQ(s.state().at("type"), "cosine_restarts");
}

TEST(LrScheduler, CopiesStepIndependently) {
  LrScheduler a = ExponentialLrSchedulerConfig{.initial_lr = 1.0, .gamma = 0.5}.init();
  a.step();
  LrScheduler b = a;
  EXPECT_DOUBLE_EQ(a.step(), 0.5);
  EXPECT_DOUBLE_EQ(a.step(), 0.25);
  EXPECT_DOUBLE_EQ(b.step(), 0.5);
}

TEST(LrScheduler, ComposedOfRuntimeSchedulers) {
  // Composition also takes scheduler objects (including composed ones).
  ComposedLrScheduler inner({ConstantLrScheduler(2.0), ExponentialLrScheduler(1.0, 0.5)});
  ComposedLrScheduler outer({inner, ConstantLrScheduler(0.25)}, SchedReduceType::Sum);
  EXPECT_DOUBLE_EQ(outer.step(), 2.0 * 1.0 + 0.25);
  EXPECT_DOUBLE_EQ(outer.step(), 2.0 * 0.5 + 0.25);
  EXPECT_EQ(outer.state()["schedulers"][0]["type"], "composed");
}

TEST(LrScheduler, ConfigJsonDefaultsAndTags) {
  const auto cfg = LrSchedulerConfig::from_json(json{{"type", "step"}, {"initial_lr", 0.5}});
  EXPECT_EQ(cfg.type(), "step");
  const json j = cfg.to_json();
  EXPECT_EQ(j.at("gamma").get<double>(), 0.1);
  EXPECT_EQ(j.at("step_size").get<std::int64_t>(), 1);
  const auto noam = LrSchedulerConfig::from_json(json{{"type", "noam"}}).to_json();
  EXPECT_EQ(noam.at("warmup_steps").get<std::int64_t>(), 4000);
  EXPECT_EQ(noam.at("model_size").get<std::int64_t>(), 512);
}

TEST(LrScheduler, BadConfigsThrowValueError) {
  EMBER_EXPECT_THROW_MSG(
      (LinearLrSchedulerConfig{.initial_lr = -0.1, .final_lr = 0.0, .num_iters = 3}.init()),
      ValueError, "initial_lr must be finite and >= 0, got -0.1");
  EMBER_EXPECT_THROW_MSG(
      (LinearLrSchedulerConfig{.initial_lr = 0.1, .final_lr = 0.0, .num_iters = 0}.init()),
      ValueError, "num_iters must be >= 1, got 0");
  EMBER_EXPECT_THROW_MSG((StepLrSchedulerConfig{.initial_lr = 0.1, .step_size = 0}.init()),
                         ValueError, "step_size");
  EMBER_EXPECT_THROW_MSG(
      (StepLrSchedulerConfig{.initial_lr = 0.1, .step_size = 2, .gamma = 0.0}.init()), ValueError,
      "gamma must be finite and > 0");
  EMBER_EXPECT_THROW_MSG((ExponentialLrSchedulerConfig{.initial_lr = 0.1, .gamma = 1.5}.init()),
                         ValueError, "gamma must be in (0, 1], got 1.5");
  EMBER_EXPECT_THROW_MSG(
      (CosineAnnealingLrSchedulerConfig{.initial_lr = 0.1, .num_iters = 5, .min_lr = 0.2}.init()),
      ValueError, "min_lr must be <= initial_lr");
  EMBER_EXPECT_THROW_MSG(
      (CosineAnnealingLrSchedulerConfig{.initial_lr = NAN, .num_iters = 5}.init()), ValueError,
      "initial_lr must be finite");
  EMBER_EXPECT_THROW_MSG(
      (CosineAnnealingWarmRestartsLrSchedulerConfig{.initial_lr = 0.1, .t_0 = 0}.init()),
      ValueError, "t_0 must be >= 1, got 0");
  EMBER_EXPECT_THROW_MSG(
      (CosineAnnealingWarmRestartsLrSchedulerConfig{.initial_lr = 0.1, .t_0 = 3, .t_mult = 0}
           .init()),
      ValueError, "t_mult must be >= 1, got 0");
  EMBER_EXPECT_THROW_MSG((NoamLrSchedulerConfig{.warmup_steps = 0}.init()), ValueError,
                         "warmup_steps must be >= 1");
  EMBER_EXPECT_THROW_MSG((ComposedLrSchedulerConfig{}.init()), ValueError, "no schedulers");
  EMBER_EXPECT_THROW_MSG(
      (SequentialLrSchedulerConfig{.schedulers = {ConstantLrSchedulerConfig{.lr = 0.1},
                                                  ConstantLrSchedulerConfig{.lr = 0.2}},
                                   .milestones = {}}
           .init()),
      ValueError, "expected 1 milestones for 2 schedulers, got 0");
  EMBER_EXPECT_THROW_MSG(
      (SequentialLrSchedulerConfig{
          .schedulers = {ConstantLrSchedulerConfig{.lr = 0.1}, ConstantLrSchedulerConfig{.lr = 0.2},
                         ConstantLrSchedulerConfig{.lr = 0.3}},
          .milestones = {4, 4}}
           .init()),
      ValueError, "strictly increasing");
  EMBER_EXPECT_THROW_MSG(LrSchedulerConfig::from_json(json{{"type", "cyclic"}}), ValueError,
                         "unknown scheduler type 'cyclic'");
  EMBER_EXPECT_THROW_MSG(
      LrSchedulerConfig::from_json(json{{"type", "step"}, {"step_size", "three"}}), ValueError,
      "field 'step_size'");
  EMBER_EXPECT_THROW_MSG(
      LrSchedulerConfig::from_json(json{{"type", "composed"}, {"reduction", "max"}}), ValueError,
      "reduction must be \"sum\" or \"prod\"");
}

TEST(LrScheduler, LoadStateRejectsOtherSchedulersAndLeavesStateUnchanged) {
  LrScheduler lin =
      LinearLrSchedulerConfig{.initial_lr = 0.4, .final_lr = 0.0, .num_iters = 4}.init();
  LrScheduler exp = ExponentialLrSchedulerConfig{.initial_lr = 1.0, .gamma = 0.5}.init();
  exp.step();
  EMBER_EXPECT_THROW_MSG(lin.load_state(exp.state()), ValueError,
                         "state is not of a 'linear' scheduler");
  EMBER_EXPECT_THROW_MSG(lin.load_state(json{{"type", "linear"}, {"iteration", -2}}), ValueError,
                         "no valid 'iteration' counter");
  // A counter step() would wrap (issue 19: INT64_MAX loaded, then the next step overflowed).
  EMBER_EXPECT_THROW_MSG(
      lin.load_state(
          json{{"type", "linear"}, {"iteration", std::numeric_limits<std::int64_t>::max()}}),
      ValueError, "'iteration' counter 9223372036854775807 exceeds 2^53");
  EXPECT_DOUBLE_EQ(lin.step(), 0.4);

  SequentialLrScheduler seq({ConstantLrScheduler(0.1), ConstantLrScheduler(0.2)}, {1});
  json bad = seq.state();
  bad["schedulers"][1] = json{{"type", "linear"}, {"iteration", 0}};
  EMBER_EXPECT_THROW_MSG(seq.load_state(bad), ValueError, "state is not of a 'constant'");
  EXPECT_DOUBLE_EQ(seq.step(), 0.1);
  EXPECT_DOUBLE_EQ(seq.step(), 0.2);

  ComposedLrScheduler comp({ConstantLrScheduler(0.1)});
  EMBER_EXPECT_THROW_MSG(comp.load_state(json{{"type", "composed"}, {"schedulers", json::array()}}),
                         ValueError, "state has 0 schedulers, this scheduler has 1");
}

}  // namespace
}  // namespace ember::optim
