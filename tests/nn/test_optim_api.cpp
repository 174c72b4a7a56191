// Optimizer API behaviour: bad options and inputs (ValueError / ShapeError, model unchanged),
// GradientsParams and GradientsAccumulator, parameter-group matching, state_dict errors,
// configs as JSON, and a model on a device without autodiff. Expected values are computed by
// hand from the documented formulas.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

#include "optim_support.hpp"

namespace ember::test {
namespace {

using namespace optim_support;
namespace op = ember::optim;

using AD = Autodiff<Cpu>;

template <class M>
void expect_same_params(const M& a, const std::map<std::string, TensorData>& before) {
  for (const auto& [path, v] : params_of(a)) expect_eq(v, before.at(path));
}

TEST(OptimApi, BadOptionsThrowValueError) {
  EMBER_EXPECT_THROW_MSG((op::AdamConfig{.beta_1 = 1.0}.init()), ValueError,
                         "[AdamConfig] beta_1 must be in [0, 1), got 1");
  EMBER_EXPECT_THROW_MSG((op::AdamConfig{.beta_2 = -0.1}.init()), ValueError,
                         "beta_2 must be in [0, 1), got -0.1");
  EMBER_EXPECT_THROW_MSG((op::AdamWConfig{.beta_2 = 1.5}.init()), ValueError, "beta_2");
  EMBER_EXPECT_THROW_MSG((op::AdamConfig{.epsilon = -1e-8}.init()), ValueError,
                         "epsilon must be finite and >= 0");
  EMBER_EXPECT_THROW_MSG((op::AdamWConfig{.weight_decay = -0.01}.init()), ValueError,
                         "[AdamWConfig] weight_decay must be finite and >= 0, got -0.01");
  EMBER_EXPECT_THROW_MSG(
      (op::AdamConfig{.weight_decay = op::WeightDecayConfig{.penalty = -1.0}}.init()), ValueError,
      "weight_decay.penalty");
  EMBER_EXPECT_THROW_MSG((op::SgdConfig{.momentum = op::MomentumConfig{.momentum = -0.5}}.init()),
                         ValueError, "momentum.momentum must be finite and >= 0, got -0.5");
  EMBER_EXPECT_THROW_MSG(
      (op::SgdConfig{.momentum =
                         op::MomentumConfig{.momentum = 0.9, .dampening = 0.1, .nesterov = true}}
           .init()),
      ValueError, "Nesterov momentum requires momentum > 0 and dampening 0");
  EMBER_EXPECT_THROW_MSG((op::RmsPropConfig{.alpha = -0.9}.init()), ValueError, "alpha");
  EMBER_EXPECT_THROW_MSG((op::RmsPropConfig{.momentum = NAN}.init()), ValueError, "momentum");
  EMBER_EXPECT_THROW_MSG((op::AdaGradConfig{.lr_decay = -1.0}.init()), ValueError, "lr_decay");
  EMBER_EXPECT_THROW_MSG((op::AdaGradConfig{.initial_accumulator_value = -0.1}.init()), ValueError,
                         "initial_accumulator_value");
  EMBER_EXPECT_THROW_MSG(
      (op::SgdConfig{.gradient_clipping = op::GradientClippingConfig::value(0.0)}.init()),
      ValueError, "threshold must be finite and > 0, got 0");
  EMBER_EXPECT_THROW_MSG(
      (op::SgdConfig{.gradient_clipping = op::GradientClippingConfig::global_norm(1.0, 0.0)}
           .init()),
      ValueError, "norm_type must be > 0");
  EMBER_EXPECT_THROW_MSG(
      (op::SgdConfig{.param_groups = {{.pattern = "fc1(", .lr_scale = 0.5}}}.init()), ValueError,
      "pattern 'fc1(' is not a valid regex");
  EMBER_EXPECT_THROW_MSG(
      (op::SgdConfig{.param_groups = {{.pattern = "fc1.*", .lr = 0.1, .lr_scale = 0.5}}}.init()),
      ValueError, "sets both lr (0.1) and lr_scale (0.5)");
  EMBER_EXPECT_THROW_MSG(
      (op::SgdConfig{.param_groups = {{.pattern = "fc1.*", .weight_decay = -1.0}}}.init()),
      ValueError, "weight_decay must be finite and >= 0");
}

TEST(OptimApi, NegativeOrNonFiniteLrThrowsAndLeavesModelUnchanged) {
  auto model = make_model<AD>();
  const auto before = params_of(model);
  auto sgd = op::SgdConfig{}.init();
  const auto gp = grads_of(model);
  EMBER_EXPECT_THROW_MSG(sgd.step(-0.1, model, gp), ValueError,
                         "[sgd.step] learning rate must be finite and >= 0, got -0.1");
  EMBER_EXPECT_THROW_MSG(sgd.step(std::numeric_limits<double>::infinity(), model, gp), ValueError,
                         "learning rate must be finite");
  expect_same_params(model, before);
  EXPECT_EQ(sgd.state(model.fc1.weight.id()), nullptr);
}

TEST(OptimApi, GradientShapeMismatchThrowsBeforeAnyUpdate) {
  auto model = make_model<AD>();
  const auto before = params_of(model);
  auto gp = grads_of(model);
  gp.insert(model.fc2.bias->id(), Tensor<Cpu, 1>::zeros({5}));
  auto adam = op::AdamConfig{}.init();
  EMBER_EXPECT_THROW_MSG(adam.step(0.1, model, gp), ShapeError,
                         "[adam.step] gradient of 'fc2.bias' has shape [5], the parameter has "
                         "shape [2]");
  expect_same_params(model, before);
}

TEST(OptimApi, GlobalNormErrorIfNonfinite) {
  auto model = make_model<AD>();
  const auto before = params_of(model);
  auto gp = grads_of(model);
  gp.insert(model.fc1.weight.id(), Tensor<Cpu, 2>::full({3, 4}, std::nan("")));
  auto strict =
      op::SgdConfig{.gradient_clipping = op::GradientClippingConfig::global_norm(1.0, 2.0, true)}
          .init();
  EMBER_EXPECT_THROW_MSG(strict.step(0.1, model, gp), ValueError,
                         "[sgd.step] the total 2-norm of the gradients is nan");
  expect_same_params(model, before);
  // Without error_if_nonfinite the NaN propagates (torch's behaviour).
  auto lenient =
      op::SgdConfig{.gradient_clipping = op::GradientClippingConfig::global_norm(1.0)}.init();
  lenient.step(0.1, model, gp);
  EXPECT_TRUE(std::isnan(model.fc2.weight.val().into_data().to_vec<float>()[0]));
}

TEST(OptimApi, ClippingByHand) {
  // One parameter [3, 4] with gradient g = 3 everywhere (norm 3 * sqrt(12) = 10.392...).
  auto model = make_model<AD>();
  const auto w0 = model.fc1.weight.val().into_data().to_vec<float>();
  op::GradientsParams gp;
  gp.insert(model.fc1.weight.id(), Tensor<Cpu, 2>::full({3, 4}, 3.0));
  const double norm = 3.0 * std::sqrt(12.0);
  struct Case {
    op::GradientClippingConfig clip;
    double g;  // the clipped gradient value
  } cases[] = {
      {op::GradientClippingConfig::value(0.5), 0.5},
      {op::GradientClippingConfig::norm(2.0), 3.0 * 2.0 / (norm + 1e-6)},
      {op::GradientClippingConfig::global_norm(2.0), 3.0 * 2.0 / (norm + 1e-6)},
      {op::GradientClippingConfig::global_norm(2.0, 1.0), 3.0 * 2.0 / (36.0 + 1e-6)},
      {op::GradientClippingConfig::global_norm(2.0, std::numeric_limits<double>::infinity()),
       3.0 * 2.0 / (3.0 + 1e-6)},
      {op::GradientClippingConfig::norm(100.0), 3.0},  // below the bound: unchanged
  };
  for (const auto& c : cases) {
    auto m = make_model<AD>();
    op::GradientsParams g1;
    g1.insert(m.fc1.weight.id(), Tensor<Cpu, 2>::full({3, 4}, 3.0));
    auto sgd = op::SgdConfig{.gradient_clipping = c.clip}.init();
    sgd.step(1.0, m, g1);
    const auto w = m.fc1.weight.val().into_data().to_vec<float>();
    for (std::size_t i = 0; i < w.size(); ++i) {
      EXPECT_NEAR(w[i], w0[i] - c.g, 1e-6) << json(c.clip).dump();
    }
    // Parameters without a gradient are untouched.
    expect_eq(m.fc2.weight.val().into_data(), model.fc2.weight.val().into_data());
  }
}

TEST(OptimApi, ParamGroupsMatchWholePathsFirstGroupWins) {
  auto run = [](std::vector<op::ParamGroupConfig> groups) {
    auto m = make_model<AD>();
    auto before = params_of(m);
    auto sgd = op::SgdConfig{.param_groups = std::move(groups)}.init();
    sgd.step(0.1, m, grads_of(m));
    std::map<std::string, bool> changed;
    for (const auto& [path, v] : params_of(m)) {
      changed[path] = v.to_vec<float>() != before.at(path).to_vec<float>();
    }
    return changed;
  };
  // "bias" does not match "fc1.bias" (whole-path match), so every parameter moves.
  auto c = run({{.pattern = "bias", .lr = 0.0}});
  EXPECT_TRUE(c["fc1.bias"] && c["fc2.bias"] && c["fc1.weight"] && c["fc2.weight"]);
  // ".*\.bias" with lr 0 freezes the biases.
  c = run({{.pattern = R"(.*\.bias)", .lr = 0.0}});
  EXPECT_FALSE(c["fc1.bias"] || c["fc2.bias"]);
  EXPECT_TRUE(c["fc1.weight"] && c["fc2.weight"]);
  // First match wins: fc1.bias takes the first group (moves), fc2.bias the second (frozen).
  c = run({{.pattern = R"(fc1\..*)", .lr_scale = 2.0}, {.pattern = R"(.*bias)", .lr = 0.0}});
  EXPECT_TRUE(c["fc1.bias"] && c["fc1.weight"] && c["fc2.weight"]);
  EXPECT_FALSE(c["fc2.bias"]);
}

TEST(OptimApi, ParamGroupLrScaleAndWeightDecayByHand) {
  auto m = make_model<AD>();
  const auto w0 = m.fc2.weight.val().into_data().to_vec<float>();
  const auto b0 = m.fc2.bias->val().into_data().to_vec<float>();
  op::GradientsParams gp;
  gp.insert(m.fc2.weight.id(), Tensor<Cpu, 2>::full({2, 3}, 1.0));
  gp.insert(m.fc2.bias->id(), Tensor<Cpu, 1>::full({2}, 1.0));
  auto sgd =
      op::SgdConfig{
          .weight_decay = op::WeightDecayConfig{.penalty = 0.5},
          .param_groups = {{.pattern = R"(fc2\.weight)", .lr_scale = 3.0, .weight_decay = 0.0}}}
          .init();
  sgd.step(0.1, m, gp);
  const auto w = m.fc2.weight.val().into_data().to_vec<float>();
  const auto b = m.fc2.bias->val().into_data().to_vec<float>();
  for (std::size_t i = 0; i < w.size(); ++i) EXPECT_NEAR(w[i], w0[i] - 0.3 * 1.0, 1e-6);
  for (std::size_t i = 0; i < b.size(); ++i) {
    EXPECT_NEAR(b[i], b0[i] - 0.1 * (1.0 + 0.5 * b0[i]), 1e-6);
  }
}

TEST(OptimApi, GradientsParamsAccess) {
  auto model = make_model<AD>();
  const auto gp = grads_of(model);
  EXPECT_EQ(gp.size(), 4u);
  const auto g = gp.get<Cpu, 2>(model.fc1.weight.id());
  ASSERT_TRUE(g.has_value());
  EXPECT_EQ(g->shape(), Shape({3, 4}));
  EXPECT_EQ(gp.get_flat<Cpu>(model.fc1.weight.id())->shape(), Shape({12}));
  EMBER_EXPECT_THROW_MSG((gp.get<Cpu, 1>(model.fc1.weight.id())), ShapeError,
                         "has shape [3, 4], not rank 1");
  EMBER_EXPECT_THROW_MSG((gp.get<Dispatch, 2>(model.fc1.weight.id())), ValueError,
                         "held for another backend");
  EXPECT_FALSE((gp.get<Cpu, 2>(nn::ParamId::next()).has_value()));
  // Frozen parameters get no entry.
  auto frozen = make_model<AD>();
  frozen.fc1.weight.set_require_grad(false);
  const auto gp2 = grads_of(frozen);
  EXPECT_EQ(gp2.size(), 3u);
  EXPECT_FALSE(gp2.contains(frozen.fc1.weight.id()));
  auto gp3 = gp;
  EXPECT_TRUE((gp3.remove<Cpu, 2>(model.fc1.weight.id()).has_value()));
  EXPECT_EQ(gp3.size(), 3u);
}

TEST(OptimApi, AccumulatorSumsAndResets) {
  auto model = make_model<AD>();
  const auto gp = grads_of(model);
  op::GradientsAccumulator acc;
  acc.accumulate(model, gp);
  acc.accumulate(model, gp);
  acc.accumulate(model, gp);
  EXPECT_EQ(acc.count(), 3u);
  const auto sum = acc.grads();
  EXPECT_EQ(acc.count(), 0u);
  EXPECT_EQ(sum.size(), 4u);
  const auto one = gp.get<Cpu, 2>(model.fc2.weight.id())->into_data().to_vec<float>();
  const auto three = sum.get<Cpu, 2>(model.fc2.weight.id())->into_data().to_vec<float>();
  for (std::size_t i = 0; i < one.size(); ++i) EXPECT_FLOAT_EQ(three[i], 3.0f * one[i]);
  EXPECT_TRUE(acc.grads().empty());
  // A gradient of another shape for an accumulated parameter.
  acc.accumulate(model, gp);
  op::GradientsParams bad;
  bad.insert(model.fc2.weight.id(), Tensor<Cpu, 1>::zeros({6}));
  EMBER_EXPECT_THROW_MSG(acc.accumulate(model, bad), ShapeError,
                         "gradient of 'fc2.weight' has shape [6], accumulated so far with shape "
                         "[2, 3]");
}

TEST(OptimApi, StateFollowsParamIdThroughCopies) {
  auto model = make_model<AD>();
  auto adam = op::AdamConfig{}.init();
  adam.step(0.01, model, grads_of(model));
  TinyNet<AD> copy = model;  // same ParamIds
  adam.step(0.01, copy, grads_of(copy));
  ASSERT_NE(adam.state(copy.fc1.weight.id()), nullptr);
  EXPECT_EQ(adam.state(copy.fc1.weight.id())->step, 2);
  adam.reset_state();
  EXPECT_EQ(adam.state(copy.fc1.weight.id()), nullptr);
}

TEST(OptimApi, StateOfAnotherBackendIsAnError) {
  op::ParamState st;
  st.set("exp_avg", Tensor<Cpu, 1>::zeros({2}));
  using CpuT = Tensor<Cpu, 1>;
  using DispatchT = Tensor<Dispatch, 1>;
  EXPECT_NE(st.find<CpuT>("exp_avg"), nullptr);
  EXPECT_EQ(st.find<CpuT>("exp_avg_sq"), nullptr);
  EMBER_EXPECT_THROW_MSG(st.find<DispatchT>("exp_avg"), ValueError,
                         "'exp_avg' is held for another backend");
}

TEST(OptimApi, LoadStateDictErrorsLeaveStateUnchanged) {
  auto model = make_model<AD>();
  auto adam = op::AdamConfig{.amsgrad = true}.init();
  adam.step(0.01, model, grads_of(model));
  const op::OptimizerRecord good = adam.state_dict(model);
  EXPECT_EQ(good.tensors.size(), 12u);
  EXPECT_EQ(good.meta.at("optimizer"), "adam");
  EXPECT_EQ(good.tensors.at("fc1.weight.exp_avg").shape(), Shape({3, 4}));

  auto target = make_model<AD>();
  auto fresh = op::AdamConfig{}.init();
  auto expect_rejected = [&](const op::OptimizerRecord& rec, auto check) {
    check(rec);
    EXPECT_EQ(fresh.state(target.fc1.weight.id()), nullptr);
    EXPECT_FALSE(fresh.config().amsgrad);
  };
  auto sgd = op::SgdConfig{}.init();
  EMBER_EXPECT_THROW_MSG(sgd.load_state_dict(target, good), ValueError,
                         "[sgd.load_state_dict] record is not of a 'sgd' optimizer (optimizer: "
                         "\"adam\")");

  auto missing = good;
  missing.tensors.erase("fc2.bias.max_exp_avg_sq");
  expect_rejected(missing, [&](const auto& r) {
    EMBER_EXPECT_THROW_MSG(fresh.load_state_dict(target, r), ValueError,
                           "missing state tensor 'fc2.bias.max_exp_avg_sq'");
  });

  auto unlisted = good;  // the JSON drops a name that amsgrad requires
  unlisted.meta["params"]["fc1.bias"]["state"] = json::array({"exp_avg", "exp_avg_sq"});
  unlisted.tensors.erase("fc1.bias.max_exp_avg_sq");
  expect_rejected(unlisted, [&](const auto& r) {
    EMBER_EXPECT_THROW_MSG(fresh.load_state_dict(target, r), ValueError,
                           "missing state tensor 'fc1.bias.max_exp_avg_sq'");
  });

  auto extra = good;
  extra.tensors.emplace("fc1.weight.momentum_buffer", good.tensors.at("fc1.weight.exp_avg"));
  expect_rejected(extra, [&](const auto& r) {
    EMBER_EXPECT_THROW_MSG(fresh.load_state_dict(target, r), ValueError,
                           "unexpected state tensor 'fc1.weight.momentum_buffer'");
  });

  auto unknown = good;
  unknown.meta["params"]["fc3.weight"] = unknown.meta["params"]["fc1.weight"];
  expect_rejected(unknown, [&](const auto& r) {
    EMBER_EXPECT_THROW_MSG(fresh.load_state_dict(target, r), ValueError,
                           "record has state for 'fc3.weight', which is not a parameter");
  });

  auto shaped = good;
  shaped.tensors.at("fc2.weight.exp_avg") = TensorData(std::vector<float>(6, 0.0f), Shape({3, 2}));
  expect_rejected(shaped, [&](const auto& r) {
    EMBER_EXPECT_THROW_MSG(fresh.load_state_dict(target, r), ShapeError,
                           "state tensor 'fc2.weight.exp_avg' has shape [3, 2], parameter "
                           "'fc2.weight' has shape [2, 3]");
  });

  auto bad_cfg = good;
  bad_cfg.meta["config"]["beta_1"] = 2.0;
  expect_rejected(bad_cfg, [&](const auto& r) {
    EMBER_EXPECT_THROW_MSG(fresh.load_state_dict(target, r), ValueError, "beta_1");
  });

  fresh.load_state_dict(target, good);
  EXPECT_TRUE(fresh.config().amsgrad);
  ASSERT_NE(fresh.state(target.fc1.weight.id()), nullptr);
  EXPECT_EQ(fresh.state(target.fc1.weight.id())->step, 1);
}

TEST(OptimApi, ConfigJsonRoundTrip) {
  const op::AdamWConfig c{.beta_1 = 0.8,
                          .epsilon = 1e-7,
                          .weight_decay = 0.05,
                          .amsgrad = true,
                          .gradient_clipping = op::GradientClippingConfig::global_norm(
                              0.5, std::numeric_limits<double>::infinity(), true),
                          .param_groups = {{.pattern = "fc1.*", .lr = 0.01},
                                           {.pattern = ".*bias", .weight_decay = 0.0}}};
  const json j = c;
  EXPECT_EQ(j.at("gradient_clipping").at("norm_type"), "inf");
  const auto back = json::parse(j.dump()).get<op::AdamWConfig>();
  EXPECT_EQ(json(back), j);
  EXPECT_TRUE(std::isinf(back.gradient_clipping->norm_type));
  EXPECT_EQ(back.param_groups[0].lr, 0.01);
  EXPECT_FALSE(back.param_groups[1].lr.has_value());
  // Missing keys keep the defaults; null clears an optional.
  const auto d = json{{"momentum", {{"nesterov", true}}}}.get<op::SgdConfig>();
  ASSERT_TRUE(d.momentum.has_value());
  EXPECT_EQ(d.momentum->momentum, 0.9);
  EXPECT_EQ(d.momentum->dampening, 0.0);
  EXPECT_TRUE(d.momentum->nesterov);
  EXPECT_FALSE((json{{"momentum", nullptr}}.get<op::SgdConfig>().momentum.has_value()));
  const auto a = json::object().get<op::AdamConfig>();
  EXPECT_EQ(a.epsilon, 1e-8);
  EXPECT_EQ(json::object().get<op::AdamWConfig>().weight_decay, 1e-2);
  EXPECT_EQ(json::object().get<op::AdaGradConfig>().epsilon, 1e-10);
  EXPECT_EQ(json::object().get<op::RmsPropConfig>().alpha, 0.99);
  EMBER_EXPECT_THROW_MSG((json{{"beta_1", "high"}}.get<op::AdamConfig>()), ValueError,
                         "[AdamConfig] field 'beta_1'");
  EMBER_EXPECT_THROW_MSG((json{{"gradient_clipping", {{"type", "clamp"}}}}.get<op::SgdConfig>()),
                         ValueError,
                         "type must be \"value\", \"norm\" or \"global_norm\", got \"clamp\"");
}

TEST(OptimApi, DispatchModelOnDeviceWithoutAutodiff) {
  // Parameters on plain "cpu" stay there; the gradients are given by hand.
  const Device cpu = Device::cpu();
  TinyNet<Dispatch> m{nn::LinearConfig{.d_input = 4, .d_output = 3}.init<Dispatch>(cpu),
                      nn::LinearConfig{.d_input = 3, .d_output = 2}.init<Dispatch>(cpu)};
  const auto w0 = m.fc1.weight.val().into_data().to_vec<float>();
  op::GradientsParams gp;
  gp.insert(m.fc1.weight.id(), Tensor<Dispatch, 2>::full({3, 4}, 2.0, cpu));
  auto sgd = op::SgdConfig{}.init();
  sgd.step(0.25, m, gp);
  EXPECT_EQ(m.fc1.weight.val().device(), cpu);
  const auto w = m.fc1.weight.val().into_data().to_vec<float>();
  for (std::size_t i = 0; i < w.size(); ++i) EXPECT_NEAR(w[i], w0[i] - 0.5, 1e-6);
}

TEST(OptimApi, StepRetracksParamsOnAutodiffDevices) {
  auto model = make_model<Dispatch>();
  auto sgd = op::SgdConfig{}.init();
  sgd.step(0.1, model, grads_of(model));
  EXPECT_TRUE(model.fc1.weight.val().is_require_grad());
  EXPECT_EQ(model.fc1.weight.val().device(), ember::test::nn_dispatch_device());
  // A second backward pass works on the updated leaves.
  EXPECT_EQ(grads_of(model).size(), 4u);
}

TEST(OptimApi, StepKeepsCheckpointingDevices) {
  // The updated parameters stay on cpu+autodiff+checkpointing (not plain +autodiff, which
  // made the next forward mix devices: "[conv] tensors are on different devices").
  const Device ck = Device::cpu().gradient_checkpointing();
  TinyNet<Dispatch> m{nn::LinearConfig{.d_input = 4, .d_output = 3}.init<Dispatch>(ck),
                      nn::LinearConfig{.d_input = 3, .d_output = 2}.init<Dispatch>(ck)};
  auto sgd = op::SgdConfig{}.init();
  for (int step = 0; step < 2; ++step) {
    const auto x = Tensor<Dispatch, 2>::ones({5, 4}, ck);
    const auto y = m.forward(x);
    const auto loss = (y * y).mean();
    auto grads = op::GradientsParams::from_grads(loss.backward(), m);
    sgd.step(0.1, m, grads);
    EXPECT_EQ(m.fc1.weight.val().device(), ck);
    EXPECT_EQ(m.fc2.weight.val().device(), ck);
    EXPECT_TRUE(m.fc1.weight.val().is_require_grad());
  }
}

/// A fresh temporary folder, removed at the end of the test.
struct TempDir {
  std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("ember_optim_test_" + std::to_string(::getpid()));
  TempDir() { std::filesystem::create_directories(path); }
  ~TempDir() { std::filesystem::remove_all(path); }
};

TEST(OptimApi, RecordFileRoundTripAndErrors) {
  TempDir dir;
  auto model = make_model<AD>();
  auto rms = op::RmsPropConfig{.centered = true, .momentum = 0.5}.init();
  rms.step(0.01, model, grads_of(model));
  rms.save(dir.path / "rms.safetensors", model);

  auto model2 = make_model<AD>();
  set_params(model2, params_of(model));
  op::RmsProp resumed;
  resumed.load(dir.path / "rms.safetensors", model2);
  EXPECT_TRUE(resumed.config().centered);
  rms.step(0.01, model, grads_of(model));
  resumed.step(0.01, model2, grads_of(model2));
  const auto want = params_of(model);
  for (const auto& [path, v] : params_of(model2)) expect_eq(v, want.at(path));

  model.save(dir.path / "model.safetensors");
  EMBER_EXPECT_THROW_MSG(resumed.load(dir.path / "model.safetensors", model2), IoError,
                         "is not an optimizer record (no 'ember.optimizer' metadata)");
  EMBER_EXPECT_THROW_MSG(resumed.load(dir.path / "absent.safetensors", model2), IoError,
                         "absent.safetensors");
  {
    std::ifstream in(dir.path / "rms.safetensors", std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::ofstream out(dir.path / "cut.safetensors", std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size() / 2));
  }
  EMBER_EXPECT_THROW_MSG(resumed.load(dir.path / "cut.safetensors", model2), IoError,
                         "cut.safetensors");
  // The failed loads left the resumed state as it was.
  EXPECT_EQ(resumed.state(model2.fc1.weight.id())->step, 2);
}

TEST(OptimApi, ConfigsSaveAndLoadAsJsonFiles) {
  TempDir dir;
  const op::RmsPropConfig rms{.alpha = 0.9,
                              .centered = true,
                              .weight_decay = op::WeightDecayConfig{.penalty = 0.01},
                              .gradient_clipping = op::GradientClippingConfig::value(0.5)};
  nn::save_config(rms, dir.path / "rms.json");
  EXPECT_EQ(json(nn::load_config<op::RmsPropConfig>(dir.path / "rms.json")), json(rms));

  const op::LrSchedulerConfig sched = op::SequentialLrSchedulerConfig{
      .schedulers = {op::LinearLrSchedulerConfig{
                         .initial_lr = 0.0, .final_lr = 0.1, .num_iters = 2},
                     op::CosineAnnealingLrSchedulerConfig{.initial_lr = 0.1, .num_iters = 4}},
      .milestones = {2}};
  nn::save_config(sched, dir.path / "sched.json");
  const auto back = nn::load_config<op::LrSchedulerConfig>(dir.path / "sched.json");
  EXPECT_EQ(back.type(), "sequential");
  EXPECT_EQ(back.to_json(), sched.to_json());
  auto a = sched.init();
  auto b = back.init();
  for (int k = 0; k < 8; ++k) EXPECT_EQ(a.step(), b.step());
}

}  // namespace
}  // namespace ember::test
