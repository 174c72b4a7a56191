// Normalisation and embedding modules beyond the PyTorch fixtures: Burn's config defaults,
// the initial parameters and buffers, errors that name the layer, train/eval and valid(),
// and Embedding's padding_idx (zero row at init, no gradient).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>

#include "ember/nn/dropout.hpp"
#include "ember/nn/embedding.hpp"
#include "ember/nn/norm.hpp"
#include "norm_test_support.hpp"

namespace ember::test::norm {
namespace {

using AD = Autodiff<Cpu>;

std::vector<float> vec(const Tensor<AD, 1>& t) {
  return t.to_vec<float>();
}

TEST(NormLayer, ConfigDefaultsAreBurns) {
  EXPECT_EQ(nn::BatchNormConfig{}.epsilon, 1e-5);
  EXPECT_EQ(nn::BatchNormConfig{}.momentum, 0.1);
  EXPECT_TRUE(nn::BatchNormConfig{}.affine);
  EXPECT_EQ(nn::LayerNormConfig{}.epsilon, 1e-5);
  EXPECT_TRUE(nn::LayerNormConfig{}.bias);
  EXPECT_EQ(nn::GroupNormConfig{}.epsilon, 1e-5);
  EXPECT_TRUE(nn::GroupNormConfig{}.affine);
  EXPECT_EQ(nn::InstanceNormConfig{}.epsilon, 1e-5);
  EXPECT_TRUE(nn::InstanceNormConfig{}.affine);
  EXPECT_EQ(nn::RmsNormConfig{}.epsilon, 1e-5);
  EXPECT_FALSE(nn::EmbeddingConfig{}.padding_idx.has_value());
}

TEST(NormLayer, BatchNormInitialState) {
  auto bn = nn::BatchNormConfig{.num_features = 3}.init<AD>();
  EXPECT_EQ(vec(bn.weight->val()), (std::vector<float>{1, 1, 1}));
  EXPECT_EQ(vec(bn.bias->val()), (std::vector<float>{0, 0, 0}));
  EXPECT_EQ(vec(bn.running_mean.val()), (std::vector<float>{0, 0, 0}));
  EXPECT_EQ(vec(bn.running_var.val()), (std::vector<float>{1, 1, 1}));
  EXPECT_EQ(bn.num_batches_tracked.val().to_vec<std::int64_t>(), std::vector<std::int64_t>{0});
  EXPECT_TRUE(bn.num_batches_tracked.scalar());
  EXPECT_TRUE(bn.training);
  EXPECT_EQ(nn::num_params(bn), 6);  // buffers do not count
  auto plain = nn::BatchNormConfig{.num_features = 3, .affine = false}.init<AD>();
  EXPECT_FALSE(plain.weight.has_value());
  EXPECT_EQ(nn::num_params(plain), 0);
}

TEST(NormLayer, BatchNormStateDictHasScalarCounter) {
  auto bn = nn::BatchNormConfig{.num_features = 2}.init<AD>();
  bool found = false;
  for (const auto& [name, data] : nn::state_dict(bn)) {
    if (name == "num_batches_tracked") {
      found = true;
      EXPECT_EQ(data.shape().rank(), 0u);  // torch's 0-dim i64
      EXPECT_EQ(data.dtype(), DType::I64);
    }
  }
  EXPECT_TRUE(found);
}

TEST(NormLayer, BatchNormHandComputedTrainingStep) {
  // One channel, values 1, 2, 3, 6: mean 3, biased var 3.5, unbiased 14/3.
  auto bn = nn::BatchNormConfig{.num_features = 1, .momentum = 0.5}.init<AD>();
  auto y = bn.forward(Tensor<AD, 2>::from_floats({{1.0}, {2.0}, {3.0}, {6.0}}));
  const auto out = y.to_vec<float>();
  const double s = std::sqrt(3.5 + 1e-5);
  EXPECT_NEAR(out[0], -2.0 / s, 1e-6);
  EXPECT_NEAR(out[3], 3.0 / s, 1e-6);
  EXPECT_NEAR(vec(bn.running_mean.val())[0], 0.5 * 3.0, 1e-6);
  EXPECT_NEAR(vec(bn.running_var.val())[0], 0.5 * 1.0 + 0.5 * 14.0 / 3.0, 1e-6);
  EXPECT_EQ(bn.num_batches_tracked.val().to_vec<std::int64_t>(), std::vector<std::int64_t>{1});
}

TEST(NormLayer, BatchNormEvalAndValidUseRunningStats) {
  auto bn = nn::BatchNormConfig{.num_features = 2}.init<AD>();
  bn.running_mean.set(Tensor<AD, 1>::from_floats({1.0, -1.0}));
  bn.running_var.set(Tensor<AD, 1>::from_floats({4.0, 0.25}));
  const auto x = Tensor<AD, 2>::from_floats({{3.0, 0.0}});  // one sample: fine in eval
  bn.eval();
  EXPECT_FALSE(bn.training);
  auto y = bn.forward(x).to_vec<float>();
  EXPECT_NEAR(y[0], 2.0 / std::sqrt(4.0 + 1e-5), 1e-6);
  EXPECT_NEAR(y[1], 1.0 / std::sqrt(0.25 + 1e-5), 1e-5);
  bn.train();
  auto v = nn::valid(bn);  // inner backend, eval mode
  EXPECT_FALSE(v.training);
  auto yv = v.forward(Tensor<Cpu, 2>::from_floats({{3.0, 0.0}})).to_vec<float>();
  EXPECT_EQ(yv, y);
  // Training mode on a single value per channel is an error (as torch).
  EMBER_EXPECT_THROW_MSG(bn.forward(x), ValueError, "more than 1 value per channel");
}

TEST(NormLayer, WrongInputNamesTheLayer) {
  auto bn = nn::BatchNormConfig{.num_features = 3}.init<AD>();
  EMBER_EXPECT_THROW_MSG(bn.forward(Tensor<AD, 3>::zeros({2, 4, 5})), ShapeError, "[BatchNorm]");
  EMBER_EXPECT_THROW_MSG(bn.forward(Tensor<AD, 1>::zeros({3})), ShapeError, "[BatchNorm]");
  bn.eval();
  EMBER_EXPECT_THROW_MSG(bn.forward(Tensor<AD, 4>::zeros({2, 2, 2, 2})), ShapeError,
                         "num_features = 3");
  auto ln = nn::LayerNormConfig{.d_model = 4}.init<AD>();
  EMBER_EXPECT_THROW_MSG(ln.forward(Tensor<AD, 2>::zeros({2, 5})), ShapeError, "[LayerNorm]");
  auto gn = nn::GroupNormConfig{.num_groups = 2, .num_channels = 4}.init<AD>();
  EMBER_EXPECT_THROW_MSG(gn.forward(Tensor<AD, 3>::zeros({2, 6, 3})), ShapeError, "[GroupNorm]");
  auto in = nn::InstanceNormConfig{.num_channels = 3}.init<AD>();
  EMBER_EXPECT_THROW_MSG(in.forward(Tensor<AD, 3>::zeros({2, 4, 3})), ShapeError, "[InstanceNorm]");
  auto rn = nn::RmsNormConfig{.d_model = 3}.init<AD>();
  EMBER_EXPECT_THROW_MSG(rn.forward(Tensor<AD, 2>::zeros({2, 4})), ShapeError, "[RmsNorm]");
}

TEST(NormLayer, InvalidConfigsThrow) {
  EMBER_EXPECT_THROW_MSG(nn::BatchNormConfig{.num_features = 0}.init<AD>(), ValueError,
                         "num_features");
  EMBER_EXPECT_THROW_MSG((nn::BatchNormConfig{.num_features = 2, .momentum = 1.5}.init<AD>()),
                         ValueError, "momentum");
  EMBER_EXPECT_THROW_MSG((nn::GroupNormConfig{.num_groups = 4, .num_channels = 6}.init<AD>()),
                         ValueError, "does not divide");
  EMBER_EXPECT_THROW_MSG((nn::RmsNormConfig{.d_model = 4, .epsilon = 0.0}.init<AD>()), ValueError,
                         "epsilon");
  EMBER_EXPECT_THROW_MSG(
      (nn::EmbeddingConfig{.n_embedding = 5, .d_model = 2, .padding_idx = 5}.init<AD>()),
      ValueError, "padding_idx");
}

TEST(NormLayer, EpsilonMustBeFiniteAndNonNegative) {
  // A negative or NaN epsilon would give NaN outputs (sqrt of a negative variance + eps).
  const double nan = std::nan("");
  const double inf = std::numeric_limits<double>::infinity();
  for (const double eps : {-1.0, nan, inf}) {
    SCOPED_TRACE(eps);
    EMBER_EXPECT_THROW_MSG((nn::BatchNormConfig{.num_features = 2, .epsilon = eps}.init<AD>()),
                           ValueError, "[BatchNormConfig] epsilon must be finite and >= 0, got");
    EMBER_EXPECT_THROW_MSG((nn::LayerNormConfig{.d_model = 2, .epsilon = eps}.init<AD>()),
                           ValueError, "[LayerNormConfig] epsilon must be finite and >= 0, got");
    EMBER_EXPECT_THROW_MSG(
        (nn::GroupNormConfig{.num_groups = 1, .num_channels = 2, .epsilon = eps}.init<AD>()),
        ValueError, "[GroupNormConfig] epsilon must be finite and >= 0, got");
    EMBER_EXPECT_THROW_MSG((nn::InstanceNormConfig{.num_channels = 2, .epsilon = eps}.init<AD>()),
                           ValueError, "[InstanceNormConfig] epsilon must be finite and >= 0, got");
    EMBER_EXPECT_THROW_MSG((nn::RmsNormConfig{.d_model = 2, .epsilon = eps}.init<AD>()), ValueError,
                           "[RmsNormConfig] epsilon must be finite and > 0, got");
  }
  EMBER_EXPECT_THROW_MSG((nn::RmsNormConfig{.d_model = 2, .epsilon = 0.0}.init<AD>()), ValueError,
                         "[RmsNormConfig] epsilon must be finite and > 0, got 0");
  // Zero is PyTorch's limit case for the others (eps = 0 is accepted there too).
  EXPECT_NO_THROW((nn::LayerNormConfig{.d_model = 2, .epsilon = 0.0}.init<AD>()));
  EXPECT_NO_THROW((nn::BatchNormConfig{.num_features = 2, .epsilon = 0.0}.init<AD>()));
  // momentum outside [0, 1] (NaN included).
  for (const double m : {-0.1, 1.5, nan}) {
    SCOPED_TRACE(m);
    EMBER_EXPECT_THROW_MSG((nn::BatchNormConfig{.num_features = 2, .momentum = m}.init<AD>()),
                           ValueError, "[BatchNormConfig] momentum must be in [0, 1], got");
  }
  EXPECT_NO_THROW((nn::BatchNormConfig{.num_features = 2, .momentum = 1.0}.init<AD>()));
}

TEST(NormLayer, LayerNormInitAndNoBias) {
  auto ln = nn::LayerNormConfig{.d_model = 3, .bias = false}.init<AD>();
  EXPECT_FALSE(ln.bias.has_value());
  EXPECT_EQ(vec(ln.weight.val()), (std::vector<float>{1, 1, 1}));
  EXPECT_EQ(nn::num_params(ln), 3);
  // Initial layer norm of [1, 2, 3]: (x - 2) / sqrt(2/3 + eps).
  auto y = ln.forward(Tensor<AD, 2>::from_floats({{1.0, 2.0, 3.0}})).to_vec<float>();
  EXPECT_NEAR(y[0], -1.0 / std::sqrt(2.0 / 3.0 + 1e-5), 1e-6);
  EXPECT_NEAR(y[1], 0.0, 1e-7);
}

TEST(NormLayer, EmbeddingPaddingRowStartsAtZeroAndGetsNoGradient) {
  AD::seed(3);
  auto emb = nn::EmbeddingConfig{.n_embedding = 4, .d_model = 3, .padding_idx = -1}.init<AD>();
  EXPECT_EQ(emb.padding_idx, std::optional<std::int64_t>{3});  // -1 counts from the end
  const auto w = emb.weight.val().to_vec<float>();
  for (int j = 0; j < 3; ++j) EXPECT_EQ(w[9 + j], 0.0f);
  for (int j = 0; j < 9; ++j) EXPECT_NE(w[j], 0.0f);  // normal(0, 1) elsewhere
  auto idx = Tensor<AD, 2, Int>::from_ints({{3, 1, 3}, {0, 3, 1}});
  auto out = emb.forward(idx);
  EXPECT_EQ(out.shape(), (Shape{2, 3, 3}));
  auto grads = out.sum().backward();
  auto g = emb.weight.val().grad(grads)->to_vec<float>();
  EXPECT_EQ(g, (std::vector<float>{1, 1, 1, 2, 2, 2, 0, 0, 0, 0, 0, 0}));
  EMBER_EXPECT_THROW_MSG(emb.forward(Tensor<AD, 1, Int>::from_ints({4})), ValueError,
                         "out of range");
}

TEST(NormLayer, EmbeddingNormalInitStatistics) {
  AD::seed(11);
  auto emb = nn::EmbeddingConfig{.n_embedding = 200, .d_model = 100}.init<AD>();
  const auto w = emb.weight.val().to_vec<double>();
  double s = 0, s2 = 0;
  for (double v : w) s += v, s2 += v * v;
  const double n = static_cast<double>(w.size()), mean = s / n, var = s2 / n - mean * mean;
  EXPECT_NEAR(mean, 0.0, 4.0 / std::sqrt(n));       // 4 sigma of the mean
  EXPECT_NEAR(var, 1.0, 4.0 * std::sqrt(2.0 / n));  // 4 sigma of the variance
}

TEST(NormLayer, ConfigsRoundTripThroughJson) {
  const nn::BatchNormConfig bn{
      .num_features = 8, .epsilon = 1e-3, .momentum = 0.2, .affine = false};
  const auto j = nn::config_to_json(bn);
  EXPECT_EQ(j.at("num_features"), 8);
  EXPECT_EQ(j.at("momentum"), 0.2);
  EXPECT_EQ(j.at("affine"), false);
  const auto bn2 = nn::config_from_json<nn::BatchNormConfig>(j);
  EXPECT_EQ(bn2.num_features, 8);
  EXPECT_EQ(bn2.epsilon, 1e-3);
  EXPECT_EQ(bn2.momentum, 0.2);
  EXPECT_FALSE(bn2.affine);
  // Missing keys keep Burn's defaults.
  const auto gn = nn::config_from_json<nn::GroupNormConfig>(
      nlohmann::json{{"num_groups", 2}, {"num_channels", 6}});
  EXPECT_EQ(gn.epsilon, 1e-5);
  EXPECT_TRUE(gn.affine);

  const nn::EmbeddingConfig ec{.n_embedding = 10,
                               .d_model = 4,
                               .initializer = nn::Initializer::uniform(-0.1, 0.1),
                               .padding_idx = 2};
  const auto je = nn::config_to_json(ec);
  EXPECT_EQ(je.at("padding_idx"), 2);
  const auto ec2 = nn::config_from_json<nn::EmbeddingConfig>(je);
  EXPECT_EQ(ec2.padding_idx, std::optional<std::int64_t>{2});
  EXPECT_EQ(ec2.initializer, nn::Initializer::uniform(-0.1, 0.1));
  const auto none = nn::config_to_json(nn::EmbeddingConfig{.n_embedding = 3, .d_model = 2});
  EXPECT_TRUE(none.at("padding_idx").is_null());
  const auto ec3 = nn::config_from_json<nn::EmbeddingConfig>(none);
  EXPECT_FALSE(ec3.padding_idx.has_value());
  EXPECT_EQ(ec3.initializer, nn::Initializer::normal(0.0, 1.0));

  const auto path = std::filesystem::temp_directory_path() / "ember_layer_norm_config.json";
  nn::save_config(nn::LayerNormConfig{.d_model = 7, .epsilon = 1e-6, .bias = false}, path);
  const auto ln = nn::load_config<nn::LayerNormConfig>(path);
  std::filesystem::remove(path);
  EXPECT_EQ(ln.d_model, 7);
  EXPECT_EQ(ln.epsilon, 1e-6);
  EXPECT_FALSE(ln.bias);
  EXPECT_EQ(nn::config_from_json<nn::DropoutConfig>(nlohmann::json{{"prob", 0.2}}).prob, 0.2);
  EXPECT_EQ(nn::config_from_json<nn::RmsNormConfig>(nlohmann::json::object()).epsilon, 1e-5);
}

TEST(NormLayer, ModulesOnPlainBackends) {
  // Embedding and the norms run on backends without autodiff (no padding mask needed).
  auto emb = nn::EmbeddingConfig{.n_embedding = 4, .d_model = 2, .padding_idx = 0}.init<Cpu>();
  emb.weight.set(Tensor<Cpu, 2>::from_floats({{9, 9}, {1, 2}, {3, 4}, {5, 6}}));
  EXPECT_EQ(emb.forward(Tensor<Cpu, 1, Int>::from_ints({2, 0})).to_vec<float>(),
            (std::vector<float>{3, 4, 9, 9}));
  auto gn = nn::GroupNormConfig{.num_groups = 1, .num_channels = 2}.init<Dispatch>(Device::cpu());
  auto y = gn.forward(DTensor<3>::from_floats({{{1, 3}, {5, 7}}}, Device::cpu())).to_vec<float>();
  // mean 4, var 5: (x - 4) / sqrt(5 + 1e-5).
  EXPECT_NEAR(y[0], -3.0 / std::sqrt(5.0 + 1e-5), 1e-6);
  EXPECT_NEAR(y[3], 3.0 / std::sqrt(5.0 + 1e-5), 1e-6);
}

TEST(NormLayer, ValidRebuildsOnInnerBackendInEvalMode) {
  auto bn = nn::BatchNormConfig{.num_features = 2}.init<Dispatch>(Device::cpu().autodiff());
  auto x = DTensor<2>::from_floats({{1, 2}, {3, 8}}, Device::cpu().autodiff());
  (void)bn.forward(x);  // one training step moves the running stats
  auto v = bn.valid();
  EXPECT_FALSE(v.training);
  EXPECT_TRUE(bn.training);
  expect_eq(v.running_mean.val().into_data(), bn.running_mean.val().into_data());
  EXPECT_EQ(v.num_batches_tracked.val().to_vec<std::int64_t>(), std::vector<std::int64_t>{1});
  EXPECT_FALSE(v.weight->val().device().is_autodiff());
  // Running mean [0.2, 0.5], running var 0.9 + 0.1 * [2, 18] = [1.1, 2.7].
  auto y = v.forward(DTensor<2>::from_floats({{0.2, 0.5}}, Device::cpu())).to_vec<float>();
  EXPECT_NEAR(y[0], 0.0, 1e-6);
  EXPECT_NEAR(y[1], 0.0, 1e-6);
  EXPECT_NEAR(v.running_var.val().to_vec<float>()[1], 2.7, 1e-6);
}

}  // namespace
}  // namespace ember::test::norm
