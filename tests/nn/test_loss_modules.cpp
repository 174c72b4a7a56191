// Loss modules and configs: Burn's / PyTorch's defaults, the modules give the functional
// forms' values (the functional forms are checked against PyTorch in the fixture tests),
// weights held as buffers, Reduction as JSON, dtypes kept. On Autodiff<Cpu> and Dispatch.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "ember/tensor/loss.hpp"
#include "loss_support.hpp"

namespace ember::test {
namespace {

template <class B>
class LossModules : public ::testing::Test {
 protected:
  typename B::Device dev = loss_device<B>();
  template <std::size_t D>
  Tensor<B, D> rnd(const Shape& s, std::uint64_t seed, double lo = -1.0, double hi = 1.0) const {
    return Tensor<B, D>::from_data(random_data(s, seed, lo, hi), dev);
  }
};

using LossBackends = ::testing::Types<AdCpu, Dispatch>;
TYPED_TEST_SUITE(LossModules, LossBackends);

void expect_same(const TensorData& a, const TensorData& b) {
  expect_eq(a, b);
}

TYPED_TEST(LossModules, ConfigDefaultsFollowBurnAndPyTorch) {
  using B = TypeParam;
  const auto ce = nn::CrossEntropyLossConfig{}.init<B>(this->dev);
  EXPECT_TRUE(ce.logits);
  EXPECT_FALSE(ce.weight.has_value());
  EXPECT_TRUE(ce.pad_tokens.empty());
  EXPECT_EQ(ce.smoothing, 0.0);
  EXPECT_EQ(ce.reduction, loss::Reduction::Mean);
  const auto bce = nn::BinaryCrossEntropyLossConfig{}.init<B>(this->dev);
  EXPECT_FALSE(bce.logits);
  EXPECT_EQ(nn::HuberLossConfig{}.delta, 1.0);
  EXPECT_EQ(nn::SmoothL1LossConfig{}.beta, 1.0);
  EXPECT_FALSE(nn::KLDivLossConfig{}.log_target);
  const nn::TripletMarginLossConfig tm{};
  EXPECT_EQ(tm.margin, 1.0);
  EXPECT_EQ(tm.p, 2.0);
  EXPECT_EQ(tm.eps, 1e-6);
  EXPECT_FALSE(tm.swap);
  EXPECT_EQ(nn::CosineEmbeddingLossConfig{}.margin, 0.0);
  EXPECT_EQ(nn::MarginRankingLossConfig{}.margin, 0.0);
  const nn::CTCLossConfig ctc{};
  EXPECT_EQ(ctc.blank, 0);
  EXPECT_FALSE(ctc.zero_infinity);
  EXPECT_EQ(nn::NllLossConfig{}.ignore_index, -100);
}

TYPED_TEST(LossModules, WeightsAreBuffersOnTheDevice) {
  using B = TypeParam;
  const auto ce =
      nn::CrossEntropyLossConfig{.weights = std::vector<double>{0.5, 1.0, 2.0}}.init<B>(this->dev);
  ASSERT_TRUE(ce.weight.has_value());
  EXPECT_EQ(ce.weight->val().template to_vec<double>(), (std::vector<double>{0.5, 1.0, 2.0}));
  EXPECT_EQ(ce.weight->val().device(), this->dev);
  const auto bce = nn::BinaryCrossEntropyLossConfig{
      .logits = true,
      .pos_weight = std::vector<double>{
          3.0, 1.0}}.init<B>(this->dev);
  ASSERT_TRUE(bce.pos_weight.has_value());
  EXPECT_EQ(bce.pos_weight->val().template to_vec<double>(), (std::vector<double>{3.0, 1.0}));
  EXPECT_FALSE(bce.weight.has_value());
}

TYPED_TEST(LossModules, RegressionModulesMatchTheFunctions) {
  using B = TypeParam;
  using loss::Reduction;
  auto x = this->template rnd<2>({3, 4}, 1, -2.0, 2.0), y = this->template rnd<2>({3, 4}, 2);
  const auto mse = nn::MseLossConfig{}.init<B>(this->dev);
  expect_same(mse.forward(x, y).into_data(), loss::mse_loss(x, y).into_data());
  expect_same(mse.forward(x, y, Reduction::Sum).into_data(),
              loss::mse_loss(x, y, Reduction::Sum).into_data());
  EXPECT_EQ(mse.forward_no_reduction(x, y).shape(), (Shape{3, 4}));
  const auto l1 = nn::L1LossConfig{.reduction = Reduction::None}.init<B>(this->dev);
  EXPECT_EQ(l1.forward(x, y).shape(), (Shape{12}));  // None: flattened per-element losses
  expect_same(l1.forward(x, y).into_data(),
              loss::l1_loss_no_reduction(x, y).template reshape<1>(Shape{12}).into_data());
  const auto huber = nn::HuberLossConfig{.delta = 0.5}.init<B>(this->dev);
  expect_same(huber.forward(x, y).into_data(),
              loss::huber_loss(x, y, Reduction::Mean, 0.5).into_data());
  expect_same(huber.forward_no_reduction(x, y).into_data(),
              loss::huber_loss_no_reduction(x, y, 0.5).into_data());
  const auto sl1 =
      nn::SmoothL1LossConfig{.beta = 0.5, .reduction = Reduction::Sum}.init<B>(this->dev);
  expect_same(sl1.forward(x, y).into_data(),
              loss::smooth_l1_loss(x, y, Reduction::Sum, 0.5).into_data());
  // Huber(delta) = delta * SmoothL1(beta = delta) (PyTorch's documented relation).
  expect_approx(huber.forward(x, y).into_data(),
                sl1.forward(x, y, Reduction::Mean).mul_scalar(0.5).into_data(), kLossTol);
  const auto kl =
      nn::KLDivLossConfig{.log_target = true, .reduction = Reduction::BatchMean}.init<B>(this->dev);
  expect_same(kl.forward(x, y).into_data(),
              loss::kl_div(x, y, Reduction::BatchMean, true).into_data());
  expect_approx(kl.forward(x, y).into_data(),
                kl.forward(x, y, Reduction::Sum).div_scalar(3.0).into_data(), kLossTol);
}

TYPED_TEST(LossModules, MarginModulesMatchTheFunctions) {
  using B = TypeParam;
  using loss::Reduction;
  auto a = this->template rnd<2>({4, 3}, 3), p = this->template rnd<2>({4, 3}, 4),
       n = this->template rnd<2>({4, 3}, 5);
  auto y = Tensor<B, 1, Int>::from_data(
      TensorData(std::vector<std::int64_t>{1, -1, -1, 1}, Shape{4}), this->dev);
  const auto cos = nn::CosineEmbeddingLossConfig{.margin = 0.2}.init<B>(this->dev);
  expect_same(cos.forward(a, p, y).into_data(),
              loss::cosine_embedding_loss(a, p, y, {.margin = 0.2}).into_data());
  EXPECT_EQ(cos.forward_no_reduction(a, p, y).shape(), (Shape{4}));
  const auto rank = nn::MarginRankingLossConfig{.margin = 0.3}.init<B>(this->dev);
  auto y1 = this->template rnd<1>({4}, 6);
  expect_same(
      rank.forward(a.narrow(1, 0, 1), p.narrow(1, 0, 1), y1.template reshape<2>(Shape{4, 1}))
          .into_data(),
      loss::margin_ranking_loss(a.narrow(1, 0, 1), p.narrow(1, 0, 1),
                                y1.template reshape<2>(Shape{4, 1}), {.margin = 0.3})
          .into_data());
  const auto tri =
      nn::TripletMarginLossConfig{.p = 1.0, .swap = true, .reduction = Reduction::Sum}.init<B>(
          this->dev);
  expect_same(
      tri.forward(a, p, n).into_data(),
      loss::triplet_margin_loss(a, p, n, {.p = 1.0, .swap = true, .reduction = Reduction::Sum})
          .into_data());
  EXPECT_EQ(tri.forward_no_reduction(a, p, n).shape(), (Shape{4}));
}

TYPED_TEST(LossModules, ClassModulesMatchTheFunctions) {
  using B = TypeParam;
  using loss::Reduction;
  auto x = this->template rnd<2>({5, 3}, 7, -2.0, 2.0);
  auto t = Tensor<B, 1, Int>::from_data(
      TensorData(std::vector<std::int64_t>{0, 2, 1, 1, 2}, Shape{5}), this->dev);
  auto w = Tensor<B, 1>::from_floats({0.5, 1.0, 2.0}, this->dev);
  const auto ce = nn::CrossEntropyLossConfig{.pad_tokens = std::vector<std::int64_t>{1},
                                             .weights = std::vector<double>{0.5, 1.0, 2.0},
                                             .smoothing = 0.1}
                      .init<B>(this->dev);
  const loss::CrossEntropyOptions<B> o{.weight = w, .ignore_index = 1, .label_smoothing = 0.1};
  expect_approx(ce.forward(x, t).into_data(), loss::cross_entropy(x, t, o).into_data(), kLossTol);
  expect_approx(ce.forward_no_reduction(x, t).into_data(),
                loss::cross_entropy_no_reduction(x, t, o).into_data(), kLossTol);
  auto probs = activation::softmax(this->template rnd<2>({5, 3}, 8), 1);
  expect_approx(ce.forward(x, probs).into_data(),
                loss::cross_entropy(x, probs, {.weight = w, .label_smoothing = 0.1}).into_data(),
                kLossTol);
  // The Burn-era helper agrees with the index form.
  expect_approx(loss::cross_entropy(x, t).into_data(),
                ember::loss::cross_entropy_with_logits(x, t).into_data(), kLossTol);

  auto lp = activation::log_softmax(x, 1);
  const auto nll = nn::NllLossConfig{.weights = std::vector<double>{0.5, 1.0, 2.0},
                                     .ignore_index = 2,
                                     .reduction = Reduction::Sum}
                       .init<B>(this->dev);
  expect_same(nll.forward(lp, t).into_data(),
              loss::nll_loss(lp, t, {.weight = w, .ignore_index = 2, .reduction = Reduction::Sum})
                  .into_data());
  // cross_entropy = nll_loss(log_softmax).
  expect_approx(loss::cross_entropy(x, t, {.weight = w}).into_data(),
                loss::nll_loss(lp, t, {.weight = w}).into_data(), kLossTol);

  auto probs01 = activation::sigmoid(x);
  auto y = this->template rnd<2>({5, 3}, 9, 0.0, 1.0);
  const auto bce =
      nn::BinaryCrossEntropyLossConfig{
          .logits = true, .pos_weight = std::vector<double>{1, 2, 3}, .reduction = Reduction::Sum}
          .init<B>(this->dev);
  auto pw = Tensor<B, 1>::from_floats({1.0, 2.0, 3.0}, this->dev);
  expect_same(
      bce.forward(x, y).into_data(),
      loss::binary_cross_entropy_with_logits(x, y, {.pos_weight = pw, .reduction = Reduction::Sum})
          .into_data());
  // With logits, BCE equals BCE of the sigmoid (away from saturation).
  expect_approx(loss::binary_cross_entropy_with_logits(x, y).into_data(),
                loss::binary_cross_entropy(probs01, y).into_data(), kLossTol);
}

TYPED_TEST(LossModules, CtcModuleMatchesTheFunction) {
  using B = TypeParam;
  auto lp = activation::log_softmax(this->template rnd<3>({6, 2, 4}, 10, -2.0, 2.0), 2);
  auto targets = Tensor<B, 2, Int>::from_data(
      TensorData(std::vector<std::int64_t>{1, 2, 2, 3, 0, 0}, Shape{2, 3}), this->dev);
  auto in_len = Tensor<B, 1, Int>::from_data(TensorData(std::vector<std::int64_t>{6, 5}, Shape{2}),
                                             this->dev);
  auto tgt_len = Tensor<B, 1, Int>::from_data(TensorData(std::vector<std::int64_t>{3, 1}, Shape{2}),
                                              this->dev);
  const auto ctc = nn::CTCLossConfig{.reduction = loss::Reduction::Sum}.init<B>(this->dev);
  expect_same(ctc.forward(lp, targets, in_len, tgt_len).into_data(),
              loss::ctc_loss(lp, targets, in_len, tgt_len, {.reduction = loss::Reduction::Sum})
                  .into_data());
  auto per_sample = ctc.forward_no_reduction(lp, targets, in_len, tgt_len);
  EXPECT_EQ(per_sample.shape(), (Shape{2}));
  // Mean: each loss over its target length, then the batch mean.
  const auto v = per_sample.template to_vec<double>();
  const auto mean = loss::ctc_loss(lp, targets, in_len, tgt_len).into_scalar();
  EXPECT_NEAR(mean, (v[0] / 3.0 + v[1] / 1.0) / 2.0, 1e-5);
  // A single-label, single-step sample: -log p(label).
  auto one = Tensor<B, 3>::from_data(
      TensorData(std::vector<double>{std::log(0.25), std::log(0.75)}, Shape{1, 1, 2}), this->dev);
  auto l = loss::ctc_loss_no_reduction(one, Tensor<B, 1, Int>::from_ints({1}, this->dev),
                                       Tensor<B, 1, Int>::from_ints({1}, this->dev),
                                       Tensor<B, 1, Int>::from_ints({1}, this->dev));
  EXPECT_NEAR(l.into_scalar(), -std::log(0.75), 1e-6);
}

TYPED_TEST(LossModules, DtypeIsKept) {
  using B = TypeParam;
  auto x = this->template rnd<2>({3, 4}, 11).cast(DType::F64);
  auto y = this->template rnd<2>({3, 4}, 12).cast(DType::F64);
  auto l = loss::mse_loss(x, y);
  EXPECT_EQ(l.dtype(), DType::F64);
  auto t = Tensor<B, 1, Int>::from_ints({0, 3, 1}, this->dev);
  auto ce = loss::cross_entropy(x, t, {.label_smoothing = 0.1});
  EXPECT_EQ(ce.dtype(), DType::F64);
  // Same value as in f32 (to f32 accuracy).
  expect_approx(ce.into_data(),
                loss::cross_entropy(x.cast(DType::F32), t, {.label_smoothing = 0.1}).into_data(),
                kLossTol);
}

TEST(LossReduction, Json) {
  nlohmann::json j = loss::Reduction::BatchMean;
  EXPECT_EQ(j, "batchmean");
  EXPECT_EQ(nlohmann::json("sum").get<loss::Reduction>(), loss::Reduction::Sum);
  EMBER_EXPECT_THROW_MSG((void)nlohmann::json("avg").get<loss::Reduction>(), ValueError,
                         "unknown reduction 'avg'");
}

}  // namespace
}  // namespace ember::test

namespace ember::test {
namespace {

template <class C>
C json_round_trip(const C& cfg) {
  return nn::config_from_json<C>(nlohmann::json::parse(nn::config_to_json(cfg).dump()));
}

TEST(LossConfigs, JsonRoundTrip) {
  using loss::Reduction;
  const nn::CrossEntropyLossConfig ce{.pad_tokens = std::vector<std::int64_t>{0, 3},
                                      .weights = std::vector<double>{0.5, 2.0},
                                      .smoothing = 0.1,
                                      .logits = false,
                                      .reduction = Reduction::Sum};
  const auto j = nn::config_to_json(ce);
  EXPECT_EQ(j.at("reduction"), "sum");
  EXPECT_EQ(j.at("pad_tokens"), nlohmann::json({0, 3}));
  const auto ce2 = json_round_trip(ce);
  EXPECT_EQ(ce2.pad_tokens, ce.pad_tokens);
  EXPECT_EQ(ce2.weights, ce.weights);
  EXPECT_EQ(ce2.smoothing, ce.smoothing);
  EXPECT_EQ(ce2.logits, false);
  EXPECT_EQ(ce2.reduction, Reduction::Sum);
  // Missing keys keep the defaults (Burn's); null is nullopt.
  const auto dflt = nn::config_from_json<nn::CrossEntropyLossConfig>(
      nlohmann::json::parse(R"({"weights": null, "reduction": "none"})"));
  EXPECT_FALSE(dflt.weights.has_value());
  EXPECT_TRUE(dflt.logits);
  EXPECT_EQ(dflt.reduction, Reduction::None);
  EMBER_EXPECT_THROW_MSG(nn::config_from_json<nn::CrossEntropyLossConfig>(
                             nlohmann::json::parse(R"({"reduction": "avg"})")),
                         ValueError, "unknown reduction 'avg'");

  const nn::BinaryCrossEntropyLossConfig bce{
      .logits = true, .pos_weight = std::vector<double>{2.0}, .reduction = Reduction::None};
  const auto bce2 = json_round_trip(bce);
  EXPECT_EQ(bce2.pos_weight, bce.pos_weight);
  EXPECT_TRUE(bce2.logits);
  EXPECT_EQ(bce2.reduction, Reduction::None);
  EXPECT_EQ(json_round_trip(nn::NllLossConfig{.ignore_index = 4}).ignore_index, 4);
  EXPECT_EQ(json_round_trip(nn::MseLossConfig{.reduction = Reduction::Sum}).reduction,
            Reduction::Sum);
  EXPECT_EQ(json_round_trip(nn::L1LossConfig{.reduction = Reduction::None}).reduction,
            Reduction::None);
  EXPECT_EQ(json_round_trip(nn::HuberLossConfig{.delta = 0.25}).delta, 0.25);
  EXPECT_EQ(json_round_trip(nn::SmoothL1LossConfig{.beta = 0.75}).beta, 0.75);
  const auto kl =
      json_round_trip(nn::KLDivLossConfig{.log_target = true, .reduction = Reduction::BatchMean});
  EXPECT_TRUE(kl.log_target);
  EXPECT_EQ(kl.reduction, Reduction::BatchMean);
  EXPECT_EQ(json_round_trip(nn::CosineEmbeddingLossConfig{.margin = -0.5}).margin, -0.5);
  EXPECT_EQ(json_round_trip(nn::MarginRankingLossConfig{.margin = 0.2}).margin, 0.2);
  const auto tm = json_round_trip(
      nn::TripletMarginLossConfig{.margin = 0.3, .p = 1.0, .eps = 1e-3, .swap = true});
  EXPECT_EQ(tm.margin, 0.3);
  EXPECT_EQ(tm.p, 1.0);
  EXPECT_EQ(tm.eps, 1e-3);
  EXPECT_TRUE(tm.swap);
  const auto ctc = json_round_trip(nn::CTCLossConfig{.blank = 4, .zero_infinity = true});
  EXPECT_EQ(ctc.blank, 4);
  EXPECT_TRUE(ctc.zero_infinity);
}

TEST(LossConfigs, SaveAndLoadFile) {
  const auto dir = std::filesystem::temp_directory_path() / "ember_loss_config_test";
  std::filesystem::create_directories(dir);
  const auto path = dir / "ctc.json";
  nn::save_config(nn::CTCLossConfig{.blank = 2, .reduction = loss::Reduction::Sum}, path);
  const auto back = nn::load_config<nn::CTCLossConfig>(path);
  EXPECT_EQ(back.blank, 2);
  EXPECT_EQ(back.reduction, loss::Reduction::Sum);
  std::filesystem::remove_all(dir);
}

// The loss modules are modules: PyTorch's buffers ("weight", "pos_weight") in the state dict,
// no parameters, settings carried through valid() / to_device().
TEST(LossModulesCore, StateDictHoldsTheWeightBuffers) {
  auto dev = Device::cpu().autodiff();
  auto ce =
      nn::CrossEntropyLossConfig{.weights = std::vector<double>{1.0, 2.0, 3.0}, .smoothing = 0.2}
          .init(dev);
  EXPECT_EQ(ce.num_params(), 0);
  const auto sd = ce.state_dict();
  ASSERT_EQ(sd.size(), 1u);
  EXPECT_EQ(sd[0].first, "weight");
  EXPECT_EQ(sd[0].second.to_vec<double>(), (std::vector<double>{1.0, 2.0, 3.0}));
  // A PyTorch nn.CrossEntropyLoss(weight=...) state dict loads by name.
  std::map<std::string, TensorData> torch_sd{
      {"weight", TensorData(std::vector<float>{0.5f, 0.25f, 4.0f}, Shape{3})}};
  ce.load_state_dict(torch_sd);
  EXPECT_EQ(ce.weight->val().to_vec<double>(), (std::vector<double>{0.5, 0.25, 4.0}));
  EMBER_EXPECT_THROW_MSG(ce.load_state_dict(std::map<std::string, TensorData>{
                             {"weight", TensorData(std::vector<float>{1.0f, 2.0f}, Shape{2})}}),
                         nn::LoadError, "weight: shape [2] in the file, [3] in the model");

  auto bce = nn::BinaryCrossEntropyLossConfig{.weights = std::vector<double>{1.0, 2.0},
                                              .logits = true,
                                              .pos_weight = std::vector<double>{3.0, 4.0}}
                 .init(dev);
  const auto bsd = bce.state_dict();
  ASSERT_EQ(bsd.size(), 2u);
  EXPECT_EQ(bsd[0].first, "weight");
  EXPECT_EQ(bsd[1].first, "pos_weight");
  EXPECT_TRUE(nn::MseLossConfig{}.init(dev).state_dict().empty());
  EXPECT_TRUE(nn::CTCLossConfig{}.init(dev).state_dict().empty());
}

TEST(LossModulesCore, ValidAndToDeviceKeepTheSettings) {
  const auto ce = nn::CrossEntropyLossConfig{.pad_tokens = std::vector<std::int64_t>{2},
                                             .weights = std::vector<double>{1.0, 2.0, 3.0},
                                             .smoothing = 0.1,
                                             .reduction = loss::Reduction::Sum}
                      .init<AdCpu>();
  const nn::CrossEntropyLoss<Cpu> v = ce.valid();
  EXPECT_EQ(v.pad_tokens, std::vector<std::int64_t>{2});
  EXPECT_EQ(v.smoothing, 0.1);
  EXPECT_EQ(v.reduction, loss::Reduction::Sum);
  ASSERT_TRUE(v.weight.has_value());
  EXPECT_EQ(v.weight->val().to_vec<double>(), (std::vector<double>{1.0, 2.0, 3.0}));
  // The inner-backend module computes the same loss.
  auto x = Tensor<AdCpu, 2>::from_data(random_data(Shape{4, 3}, 21));
  auto t = Tensor<AdCpu, 1, Int>::from_ints({0, 2, 1, 2});
  expect_approx(v.forward(x.inner(), t.inner()).into_data(), ce.forward(x, t).into_data(),
                kLossTol);

  const auto tri =
      nn::TripletMarginLossConfig{.p = 1.0, .swap = true}.init<Dispatch>(Device::cpu().autodiff());
  const auto tri_plain = tri.to_device(Device::cpu());
  EXPECT_EQ(tri_plain.p, 1.0);
  EXPECT_TRUE(tri_plain.swap);
  const auto bce =
      nn::BinaryCrossEntropyLossConfig{.weights = std::vector<double>{1.0, 2.0}}.init<Dispatch>(
          Device::cpu().autodiff());
  const auto moved = bce.to_device(Device::cpu());
  EXPECT_EQ(moved.weight->val().device(), Device::cpu());
}

}  // namespace
}  // namespace ember::test
