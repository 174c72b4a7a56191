// LayerNorm, GroupNorm, InstanceNorm, RmsNorm and Embedding modules against PyTorch
// (tests/fixtures/nn/norm.json, written by tests/fixtures/gen_nn_norm.py), on Autodiff<Cpu>
// and on Dispatch (cpu+autodiff): state_dict names and shapes as torch's, output and
// gradients of sum(out * w) wrt the input and every parameter within rel 1e-4 / abs 1e-5.
#include <gtest/gtest.h>

#include "ember/nn/embedding.hpp"
#include "ember/nn/norm.hpp"
#include "norm_test_support.hpp"

namespace ember::test::norm {
namespace {

/// Input leaf "x" of the fixture's rank, the forward, and the comparison.
template <class B, class M>
void check_forward(const M& m, const FixtureCase& c, const typename B::Device& dev) {
  with_rank(c.tensor("x").shape().rank(), [&]<std::size_t D>() {
    auto x = Tensor<B, D>::from_data(c.tensor("x"), dev).require_grad();
    Grads<B> g;
    g.add("x", x);
    g.add_if("weight", m.weight);
    if constexpr (requires { m.bias; }) g.add_if("bias", m.bias);
    g.check(c, m.forward(x), dev);
  });
}

template <class Env>
void run_layer_norm(const FixtureCase& c) {
  using B = typename Env::B;
  const auto dev = Env::device();
  auto m = nn::LayerNormConfig{.d_model = c.param<std::int64_t>("d_model"),
                               .epsilon = c.param<double>("epsilon"),
                               .bias = c.param<bool>("use_bias")}
               .template init<B>(dev);
  expect_torch_state(m, c);
  set_param(m.weight, c, "weight", dev);
  if (c.param<bool>("use_bias")) set_param(m.bias, c, "bias", dev);
  check_forward<B>(m, c, dev);
}
EMBER_NORM_FIXTURES(LayerNormFixture, "nn/norm", "layer_norm/", run_layer_norm);

template <class Env>
void run_group_norm(const FixtureCase& c) {
  using B = typename Env::B;
  const auto dev = Env::device();
  auto m = nn::GroupNormConfig{.num_groups = c.param<std::int64_t>("num_groups"),
                               .num_channels = c.param<std::int64_t>("num_channels"),
                               .epsilon = c.param<double>("epsilon"),
                               .affine = c.param<bool>("affine")}
               .template init<B>(dev);
  expect_torch_state(m, c);
  if (c.param<bool>("affine")) {
    set_param(m.weight, c, "weight", dev);
    set_param(m.bias, c, "bias", dev);
  }
  check_forward<B>(m, c, dev);
}
EMBER_NORM_FIXTURES(GroupNormFixture, "nn/norm", "group_norm/", run_group_norm);

template <class Env>
void run_instance_norm(const FixtureCase& c) {
  using B = typename Env::B;
  const auto dev = Env::device();
  auto m = nn::InstanceNormConfig{.num_channels = c.param<std::int64_t>("num_channels"),
                                  .epsilon = c.param<double>("epsilon"),
                                  .affine = c.param<bool>("affine")}
               .template init<B>(dev);
  expect_torch_state(m, c);
  if (c.param<bool>("affine")) {
    set_param(m.weight, c, "weight", dev);
    set_param(m.bias, c, "bias", dev);
  }
  check_forward<B>(m, c, dev);
}
EMBER_NORM_FIXTURES(InstanceNormFixture, "nn/norm", "instance_norm/", run_instance_norm);

template <class Env>
void run_rms_norm(const FixtureCase& c) {
  using B = typename Env::B;
  const auto dev = Env::device();
  auto m = nn::RmsNormConfig{.d_model = c.param<std::int64_t>("d_model"),
                             .epsilon = c.param<double>("epsilon")}
               .template init<B>(dev);
  expect_torch_state(m, c);
  set_param(m.weight, c, "weight", dev);
  check_forward<B>(m, c, dev);
}
EMBER_NORM_FIXTURES(RmsNormFixture, "nn/norm", "rms_norm/", run_rms_norm);

template <class Env>
void run_embedding(const FixtureCase& c) {
  using B = typename Env::B;
  const auto dev = Env::device();
  nn::EmbeddingConfig cfg{.n_embedding = c.param<std::int64_t>("n_embedding"),
                          .d_model = c.param<std::int64_t>("d_model")};
  if (c.has("padding_idx")) cfg.padding_idx = c.param<std::int64_t>("padding_idx");
  auto m = cfg.template init<B>(dev);
  expect_torch_state(m, c);
  set_param(m.weight, c, "weight", dev);  // the padding row is non-zero in the fixture
  with_rank(c.tensor("idx").shape().rank(), [&]<std::size_t D>() {
    auto idx = Tensor<B, D, Int>::from_data(c.tensor("idx"), dev);
    Grads<B> g;
    g.add("weight", m.weight);
    g.check(c, m.forward(idx), dev);
  });
}
EMBER_NORM_FIXTURES(EmbeddingFixture, "nn/norm", "embedding/", run_embedding);

}  // namespace
}  // namespace ember::test::norm
