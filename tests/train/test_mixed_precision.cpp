// Mixed precision: optim::GradScaler (loss scaling, unscaling, the inf/NaN check, the scale's
// updates and state) and the Learner's mixed_precision (bf16 and f16 autocast with f32
// parameters, skipped steps, the scale across a resume), on Dispatch's cpu+autodiff.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>

#include "ember/optim/grad_scaler.hpp"
#include "fixtures.hpp"
#include "train_test_util.hpp"

namespace ember::train {
namespace {

namespace fs = std::filesystem;
using testing::classify;
using testing::make_data;
using testing::make_net;
using testing::params_of;
using testing::TempDir;
using testing::TinyNet;
using testing::VecLoader;
using testing::XYBatch;

const Device kTrainDevice = Device::cpu().autodiff();

/// Gradients of every parameter of `net`, each filled with `value`, and one element of
/// fc2.weight's replaced by `odd` when given.
optim::GradientsParams filled_grads(const TinyNet<>& net, double value,
                                    std::optional<double> odd = std::nullopt) {
  optim::GradientsParams grads;
  nn::visit(net, [&](const std::string& path, const auto& leaf) {
    if constexpr (optim::detail::is_float_param<decltype(leaf)>()) {
      const Shape s = leaf.val().shape();
      std::vector<float> v(static_cast<std::size_t>(s.numel()), static_cast<float>(value));
      if (odd && path == "fc2.weight") v[1] = static_cast<float>(*odd);
      grads.insert_flat(
          leaf.id(),
          Tensor<Dispatch, 1>::from_data(TensorData(std::move(v), Shape{s.numel()}), Device::cpu()),
          s);
    }
  });
  return grads;
}

std::vector<double> all_grads(const TinyNet<>& net, const optim::GradientsParams& grads) {
  std::vector<double> out;
  nn::visit(net, [&](const std::string&, const auto& leaf) {
    if constexpr (optim::detail::is_float_param<decltype(leaf)>()) {
      const auto g = grads.get_flat<Dispatch>(leaf.id()).value().template to_vec<double>();
      out.insert(out.end(), g.begin(), g.end());
    }
  });
  return out;
}

TEST(GradScaler, ScalesTheLossAndUnscalesTheGradients) {
  const optim::GradScaler scaler;
  EXPECT_EQ(scaler.get_scale(), 65536.0);
  const auto loss = Tensor<Dispatch, 1>::from_floats({1.5}, Device::cpu());
  EXPECT_EQ(scaler.scale(loss).into_scalar(), 98304.0);
  const TinyNet<> net = make_net(kTrainDevice, 3);
  auto grads = filled_grads(net, 16384.0);
  EXPECT_TRUE(scaler.unscale(net, grads));
  for (double g : all_grads(net, grads)) ASSERT_EQ(g, 0.25);
  EXPECT_EQ(scaler.get_scale(), 65536.0);  // unscale does not update
}

TEST(GradScaler, FindsInfAndNanInAnyGradient) {
  const optim::GradScaler scaler;
  const TinyNet<> net = make_net(kTrainDevice, 3);
  const double inf = std::numeric_limits<double>::infinity();
  for (double odd : {inf, -inf, std::numeric_limits<double>::quiet_NaN()}) {
    auto grads = filled_grads(net, 1.0, odd);
    EXPECT_FALSE(scaler.unscale(net, grads)) << odd;
  }
  optim::GradientsParams none;
  EXPECT_TRUE(scaler.unscale(net, none));
}

TEST(GradScaler, BacksOffOnOverflowAndGrowsAfterTheInterval) {
  optim::GradScaler scaler =
      optim::GradScalerConfig{.init_scale = 1024.0, .growth_interval = 3}.init();
  scaler.update(false);
  EXPECT_EQ(scaler.get_scale(), 512.0);
  EXPECT_EQ(scaler.skipped_steps(), 1u);
  scaler.update(true);
  scaler.update(true);
  EXPECT_EQ(scaler.get_scale(), 512.0);
  EXPECT_EQ(scaler.growth_tracker(), 2u);
  scaler.update(false);  // an overflow restarts the count
  EXPECT_EQ(scaler.get_scale(), 256.0);
  EXPECT_EQ(scaler.growth_tracker(), 0u);
  for (int i = 0; i < 3; ++i) scaler.update(true);
  EXPECT_EQ(scaler.get_scale(), 512.0);
  EXPECT_EQ(scaler.growth_tracker(), 0u);
  EXPECT_EQ(scaler.skipped_steps(), 2u);
}

TEST(GradScaler, StepSkipsTheOptimizerOnOverflow) {
  optim::GradScaler scaler = optim::GradScalerConfig{.init_scale = 4.0}.init();
  auto sgd = optim::SgdConfig{}.init();
  TinyNet<> net = make_net(kTrainDevice, 3);
  const auto before = params_of(net);
  EXPECT_FALSE(scaler.step(sgd, 1.0, net, filled_grads(net, 1.0, std::nanf(""))));
  EXPECT_EQ(params_of(net), before);
  EXPECT_EQ(scaler.get_scale(), 2.0);
  // lr 1, gradient 2 / 2 = 1: every parameter goes down by exactly 1.
  EXPECT_TRUE(scaler.step(sgd, 1.0, net, filled_grads(net, 2.0)));
  const auto after = params_of(net);
  for (const auto& [name, values] : before) {
    for (std::size_t i = 0; i < values.size(); ++i) {
      ASSERT_FLOAT_EQ(after.at(name)[i], static_cast<float>(values[i] - 1.0)) << name;
    }
  }
}

TEST(GradScaler, StateRoundTripsAndBadStateIsRefused) {
  optim::GradScaler a = optim::GradScalerConfig{.growth_interval = 5}.init();
  a.update(false);
  a.update(true);
  optim::GradScaler b;
  b.load_state(a.state());
  EXPECT_EQ(b.get_scale(), 32768.0);
  EXPECT_EQ(b.growth_tracker(), 1u);
  EXPECT_EQ(b.skipped_steps(), 1u);
  // JSON built in code holds 0 as a signed integer: accepted as well.
  b.load_state({{"scale", 8.0}, {"growth_tracker", 0}, {"skipped_steps", 2}});
  EXPECT_EQ(b.get_scale(), 8.0);
  EXPECT_EQ(b.skipped_steps(), 2u);
  b.load_state(a.state());
  EMBER_EXPECT_THROW_MSG(b.load_state(nlohmann::json::array()), ValueError, "JSON object");
  EMBER_EXPECT_THROW_MSG(
      b.load_state({{"scale", 1e300}, {"growth_tracker", 0}, {"skipped_steps", 0}}), ValueError,
      "'scale' must be finite and > 0");
  EMBER_EXPECT_THROW_MSG(b.load_state({{"scale", 2.0}}), ValueError, "growth_tracker");
  EMBER_EXPECT_THROW_MSG(
      b.load_state({{"scale", -1.0}, {"growth_tracker", 0}, {"skipped_steps", 0}}), ValueError,
      "'scale' must be finite and > 0");
  EMBER_EXPECT_THROW_MSG(
      b.load_state({{"scale", 8.0}, {"growth_tracker", -3}, {"skipped_steps", 0}}), ValueError,
      "'growth_tracker' is not a whole number");
  EXPECT_EQ(b.get_scale(), 32768.0);  // a refused state changes nothing
}

TEST(GradScaler, TheScaleStaysInF32sRange) {
  // Growth that would pass f32's largest value keeps S (2^127 * 2 = 2^128 > FLT_MAX).
  optim::GradScaler top =
      optim::GradScalerConfig{.init_scale = std::ldexp(1.0, 127), .growth_interval = 1}.init();
  top.update(true);
  EXPECT_EQ(top.get_scale(), std::ldexp(1.0, 127));
  // Backoff stops at 2^-126, the smallest f32 normal number.
  optim::GradScaler bottom = optim::GradScalerConfig{.init_scale = std::ldexp(1.0, -125)}.init();
  bottom.update(false);
  bottom.update(false);
  EXPECT_EQ(bottom.get_scale(), std::ldexp(1.0, -126));
  EMBER_EXPECT_THROW_MSG(optim::GradScalerConfig{.init_scale = 1e300}.init(), ValueError,
                         "init_scale must be in f32's normal range");
  EMBER_EXPECT_THROW_MSG(optim::GradScalerConfig{.init_scale = 1e-300}.init(), ValueError,
                         "init_scale");
  // A step with no gradients checked nothing: refused, S unchanged.
  auto sgd = optim::SgdConfig{}.init();
  TinyNet<> net = make_net(kTrainDevice, 3);
  EMBER_EXPECT_THROW_MSG(top.step(sgd, 1.0, net, optim::GradientsParams{}), ValueError,
                         "no gradients to unscale");
  EXPECT_EQ(top.growth_tracker(), 0u);
}

TEST(GradScaler, ConfigErrors) {
  EMBER_EXPECT_THROW_MSG(optim::GradScalerConfig{.init_scale = 0.0}.init(), ValueError,
                         "init_scale");
  EMBER_EXPECT_THROW_MSG(
      optim::GradScalerConfig{.init_scale = std::numeric_limits<double>::infinity()}.init(),
      ValueError, "init_scale");
  EMBER_EXPECT_THROW_MSG(optim::GradScalerConfig{.growth_factor = 1.0}.init(), ValueError,
                         "growth_factor");
  EMBER_EXPECT_THROW_MSG(optim::GradScalerConfig{.backoff_factor = 1.0}.init(), ValueError,
                         "backoff_factor");
  EMBER_EXPECT_THROW_MSG(optim::GradScalerConfig{.growth_interval = 0}.init(), ValueError,
                         "growth_interval");
}

// ---- the Learner ---------------------------------------------------------------------------

struct MpRun {
  std::optional<DType> dtype;
  optim::GradScalerConfig scaler{};
  std::size_t epochs = 3;
  bool resume = false;
};

struct MpResult {
  TinyNet<> model;
  std::optional<double> scale;
  std::size_t skipped = 0;
  MetricHistory history;
};

MpResult train_mp(const MpRun& r, const fs::path& dir) {
  VecLoader train{make_data(48, 7), 8, 11, kTrainDevice};
  VecLoader valid{make_data(24, 8), 8, std::nullopt, Device::cpu()};
  auto learner =
      LearnerBuilder(make_net(kTrainDevice, 5), optim::AdamConfig{}.init(), train, valid)
          .train_step([](TinyNet<>& m, const XYBatch& b) { return classify(m, b); })
          .valid_step([](const TinyNet<>& m, const XYBatch& b) { return classify(m, b); })
          .learning_rate(0.05)
          .metric(LossMetric{})
          .num_epochs(r.epochs)
          .seed(1234)
          .run_dir(dir)
          .resume(r.resume)
          .renderer(RendererKind::None)
          .handle_signals(false)
          .print_summary(false)
          .mixed_precision(r.dtype, r.scaler)
          .build();
  TinyNet<> model = learner.fit();
  EXPECT_EQ(learner.mixed_precision(), r.dtype);
  return {model, learner.loss_scale(), learner.skipped_steps(), learner.history()};
}

double max_abs_diff(const TinyNet<>& a, const TinyNet<>& b) {
  double d = 0;
  const auto pa = params_of(a), pb = params_of(b);
  for (const auto& [name, values] : pa) {
    for (std::size_t i = 0; i < values.size(); ++i) {
      d = std::max(d, std::abs(values[i] - pb.at(name)[i]));
    }
  }
  return d;
}

double valid_loss(const MpResult& r, std::size_t epoch) {
  return r.history.value(Split::Valid, "Loss", epoch).value();
}

TEST(TrainMixedPrecision, Bf16TrainsF32ParametersCloseToTheF32Run) {
  TempDir d32("mp-f32"), d16("mp-bf16");
  const MpResult f32 = train_mp({}, d32.path());
  const MpResult bf16 = train_mp({.dtype = DType::BF16}, d16.path());
  EXPECT_EQ(bf16.model.fc1.weight.val().dtype(), DType::F32);
  EXPECT_EQ(bf16.scale, std::nullopt);  // bf16 needs no loss scaling
  EXPECT_EQ(bf16.skipped, 0u);
  EXPECT_FALSE(fs::exists(d16.path() / "checkpoints" / "epoch-3" / "grad_scaler.json"));
  // The forward ran in bf16 (the weights took another path) but learned as well.
  const double diff = max_abs_diff(f32.model, bf16.model);
  EXPECT_GT(diff, 1e-4);
  EXPECT_LT(diff, 0.1);
  EXPECT_LT(valid_loss(bf16, 3), valid_loss(bf16, 1));
  EXPECT_NEAR(valid_loss(bf16, 3), valid_loss(f32, 3), 0.05);
}

TEST(TrainMixedPrecision, F16LeavesOverflowingBatchesOutAndBacksOff) {
  // With S = 2^24 the logits' gradient (up to S / 8) overflows f16 (max 65504): those
  // batches are left out and S halves until it fits; it never grows (interval 2000).
  TempDir dir("mp-f16");
  const double s0 = std::ldexp(1.0, 24);
  const MpResult r = train_mp({.dtype = DType::F16, .scaler = {.init_scale = s0}}, dir.path());
  ASSERT_TRUE(r.scale.has_value());
  EXPECT_GE(r.skipped, 3u);
  EXPECT_LT(r.skipped, 18u);
  EXPECT_EQ(*r.scale, std::ldexp(s0, -static_cast<int>(r.skipped)));
  EXPECT_EQ(r.model.fc2.weight.val().dtype(), DType::F32);
  for (const auto& [name, values] : params_of(r.model)) {
    for (double v : values) ASSERT_TRUE(std::isfinite(v)) << name;
  }
  EXPECT_LT(valid_loss(r, 3), valid_loss(r, 1));
  const auto state = nlohmann::json::parse(
      testing::slurp(dir.path() / "checkpoints" / "epoch-3" / "grad_scaler.json"));
  EXPECT_EQ(state.at("scale").get<double>(), *r.scale);
  EXPECT_EQ(state.at("skipped_steps").get<std::size_t>(), r.skipped);
}

TEST(TrainMixedPrecision, F16ResumeContinuesWithTheSavedScale) {
  // Growth every 4 finite batches and overflow at first: the scale moves both ways.
  const optim::GradScalerConfig cfg{.init_scale = std::ldexp(1.0, 20), .growth_interval = 4};
  TempDir straight("mp-straight"), split("mp-split");
  const MpResult a = train_mp({.dtype = DType::F16, .scaler = cfg, .epochs = 2}, straight.path());
  train_mp({.dtype = DType::F16, .scaler = cfg, .epochs = 1}, split.path());
  const MpResult b =
      train_mp({.dtype = DType::F16, .scaler = cfg, .epochs = 2, .resume = true}, split.path());
  EXPECT_EQ(b.scale, a.scale);
  EXPECT_EQ(b.skipped, a.skipped);
  EXPECT_GT(a.skipped, 0u);
  EXPECT_EQ(params_of(b.model), params_of(a.model));
}

TEST(TrainMixedPrecision, ADamagedScalerStateIsNamed) {
  TempDir dir("mp-damaged");
  train_mp({.dtype = DType::F16, .epochs = 1}, dir.path());
  const fs::path file = dir.path() / "checkpoints" / "epoch-1" / "grad_scaler.json";
  ASSERT_TRUE(fs::exists(file));
  std::ofstream(file) << R"({"scale": 2.0})";
  EMBER_EXPECT_THROW_MSG(train_mp({.dtype = DType::F16, .epochs = 2, .resume = true}, dir.path()),
                         IoError, "grad_scaler.json");
  std::ofstream(file) << "garbage";
  EMBER_EXPECT_THROW_MSG(train_mp({.dtype = DType::F16, .epochs = 2, .resume = true}, dir.path()),
                         IoError, "damaged checkpoint file");
}

TEST(TrainMixedPrecision, Errors) {
  VecLoader train{make_data(16, 7), 8, std::nullopt, kTrainDevice};
  auto builder = LearnerBuilder(make_net(kTrainDevice, 5), optim::SgdConfig{}.init(), train, train);
  EMBER_EXPECT_THROW_MSG(builder.mixed_precision(DType::F32), ValueError,
                         "mixed precision is bf16 or f16, got f32");
  EMBER_EXPECT_THROW_MSG(builder.mixed_precision(DType::F16, {.backoff_factor = 2.0}), ValueError,
                         "backoff_factor");
  // f16 scales the loss before backward: a step that took its own gradients cannot be scaled.
  TempDir dir("mp-errors");
  auto learner =
      builder
          .train_step([](TinyNet<>& m, const XYBatch& b) {
            auto out = classify(m, b);
            return TrainOutput<ClassificationOutput<Dispatch>>{
                optim::GradientsParams::from_grads(out.loss.backward(), m), out};
          })
          .valid_step([](const TinyNet<>& m, const XYBatch& b) { return classify(m, b); })
          .mixed_precision(DType::F16)
          .run_dir(dir.path())
          .renderer(RendererKind::None)
          .handle_signals(false)
          .print_summary(false)
          .build();
  EMBER_EXPECT_THROW_MSG(learner.fit(), ValueError, "returned a TrainOutput");
}

}  // namespace
}  // namespace ember::train
