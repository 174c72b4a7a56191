// BatchNorm against PyTorch's BatchNorm1d/2d/3d (tests/fixtures/nn/norm.json, cases
// "batch_norm/..."), on Autodiff<Cpu> and on Dispatch (cpu+autodiff): three training-mode
// forwards (output and gradients of sum(out * w) wrt x, weight, bias), then the running
// statistics and num_batches_tracked, then one eval-mode forward with its gradients. Tolerance
// rel 1e-4 / abs 1e-5.
#include <gtest/gtest.h>

#include "ember/nn/norm.hpp"
#include "norm_test_support.hpp"

namespace ember::test::norm {
namespace {

template <class B>
void batch_norm_step(const nn::BatchNorm<B>& m, const FixtureCase& c, const typename B::Device& dev,
                     const std::string& tag, const std::string& grad_prefix) {
  with_rank(c.tensor("x" + tag).shape().rank(), [&]<std::size_t D>() {
    auto x = Tensor<B, D>::from_data(c.tensor("x" + tag), dev).require_grad();
    Grads<B> g;
    g.add("x", x);
    g.add_if("weight", m.weight);
    g.add_if("bias", m.bias);
    g.check(c, m.forward(x), dev, "out" + tag, "w" + tag, grad_prefix);
  });
}

template <class Env>
void run_batch_norm(const FixtureCase& c) {
  using B = typename Env::B;
  const auto dev = Env::device();
  const bool affine = c.param<bool>("affine");
  auto m = nn::BatchNormConfig{.num_features = c.param<std::int64_t>("num_features"),
                               .epsilon = c.param<double>("epsilon"),
                               .momentum = c.param<double>("momentum"),
                               .affine = affine}
               .template init<B>(dev);
  expect_torch_state(m, c);
  if (affine) {
    set_param(m.weight, c, "weight", dev);
    set_param(m.bias, c, "bias", dev);
  }
  ASSERT_TRUE(m.training);
  for (int step = 0; step < 3; ++step) {
    SCOPED_TRACE("training forward " + std::to_string(step));
    batch_norm_step(m, c, dev, std::to_string(step), "grad" + std::to_string(step) + "_");
  }
  {
    SCOPED_TRACE("running_mean");
    expect_approx(m.running_mean.val().into_data(), c.tensor("running_mean"), kTol);
  }
  {
    SCOPED_TRACE("running_var");
    expect_approx(m.running_var.val().into_data(), c.tensor("running_var"), kTol);
  }
  EXPECT_EQ(m.num_batches_tracked.val().template to_vec<std::int64_t>(),
            std::vector<std::int64_t>{c.param<std::int64_t>("num_batches_tracked")});
  EXPECT_FALSE(m.running_mean.val().is_require_grad());

  m.eval();
  const auto mean_before = m.running_mean.val().into_data();
  SCOPED_TRACE("eval forward");
  batch_norm_step(m, c, dev, "_eval", "grad_eval_");
  // Eval mode reads the running statistics and leaves them alone.
  expect_eq(m.running_mean.val().into_data(), mean_before);
  EXPECT_EQ(m.num_batches_tracked.val().template to_vec<std::int64_t>(),
            std::vector<std::int64_t>{c.param<std::int64_t>("num_batches_tracked")});
}
EMBER_NORM_FIXTURES(BatchNormFixture, "nn/norm", "batch_norm/", run_batch_norm);

}  // namespace
}  // namespace ember::test::norm

namespace ember::test::norm {
namespace {

/// The training and eval forwards of a fixture case on a backend without autodiff (plain
/// Cpu, Dispatch on "cpu"): same outputs and running statistics, no gradients involved.
template <class B>
void batch_norm_forward_only(const FixtureCase& c, const typename B::Device& dev) {
  auto m = nn::BatchNormConfig{.num_features = c.param<std::int64_t>("num_features"),
                               .epsilon = c.param<double>("epsilon"),
                               .momentum = c.param<double>("momentum"),
                               .affine = c.param<bool>("affine")}
               .template init<B>(dev);
  if (m.weight) set_param(m.weight, c, "weight", dev);
  if (m.bias) set_param(m.bias, c, "bias", dev);
  auto fwd = [&](const std::string& tag) {
    with_rank(c.tensor("x" + tag).shape().rank(), [&]<std::size_t D>() {
      auto y = m.forward(Tensor<B, D>::from_data(c.tensor("x" + tag), dev));
      expect_approx(y.into_data(), c.tensor("out" + tag), kTol);
    });
  };
  for (const char* tag : {"0", "1", "2"}) fwd(tag);
  expect_approx(m.running_mean.val().into_data(), c.tensor("running_mean"), kTol);
  expect_approx(m.running_var.val().into_data(), c.tensor("running_var"), kTol);
  m.eval();
  fwd("_eval");
}

TEST(BatchNormPlainBackends, TrainingAndEvalWithoutAutodiff) {
  for (const auto& c : fixture_cases("nn/norm", "batch_norm/")) {
    SCOPED_TRACE(c.name);
    {
      SCOPED_TRACE("Cpu");
      batch_norm_forward_only<Cpu>(c, Cpu::Device{});
    }
    {
      SCOPED_TRACE("Dispatch on cpu");
      batch_norm_forward_only<Dispatch>(c, Device::cpu());
    }
  }
}

/// PyTorch's state dict (weight, bias, running_mean, running_var and the 0-dim i64
/// num_batches_tracked, as torch saves them after the three training steps) loads by name
/// into a fresh BatchNorm, whose eval forward then gives torch's.
template <class Env>
void run_batch_norm_torch_state(const FixtureCase& c) {
  using B = typename Env::B;
  const auto dev = Env::device();
  auto m = nn::BatchNormConfig{.num_features = c.param<std::int64_t>("num_features"),
                               .epsilon = c.param<double>("epsilon"),
                               .momentum = c.param<double>("momentum"),
                               .affine = c.param<bool>("affine")}
               .template init<B>(dev);
  std::map<std::string, TensorData> sd{
      {"running_mean", c.tensor("running_mean")},
      {"running_var", c.tensor("running_var")},
      {"num_batches_tracked",
       TensorData(std::vector<std::int64_t>{c.param<std::int64_t>("num_batches_tracked")},
                  Shape{})}};
  if (c.param<bool>("affine")) {
    sd.emplace("weight", c.tensor("weight"));
    sd.emplace("bias", c.tensor("bias"));
  }
  const auto report = m.load_state_dict(sd);
  EXPECT_EQ(report.loaded.size(), sd.size());
  EXPECT_EQ(m.num_batches_tracked.val().template to_vec<std::int64_t>(),
            std::vector<std::int64_t>{3});
  m.eval();
  batch_norm_step(m, c, dev, "_eval", "grad_eval_");
  // And back out: the exported counter is 0-dim again.
  for (const auto& [name, data] : m.state_dict())
    if (name == "num_batches_tracked") {
      EXPECT_EQ(data.shape(), Shape{});
    }
}
EMBER_NORM_FIXTURES(BatchNormTorchState, "nn/norm", "batch_norm/", run_batch_norm_torch_state);

}  // namespace
}  // namespace ember::test::norm
