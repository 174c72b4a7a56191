// Bad inputs to the losses: each throws the documented ember::Error subclass with a message
// that names the loss and the bad value. On Autodiff<Cpu> and Dispatch (cpu+autodiff).
// (Wrong tensor kinds - Int logits, Float class targets for nll_loss - do not compile.)
#include <gtest/gtest.h>

#include <limits>

#include "loss_support.hpp"

namespace ember::test {
namespace {

template <class B>
class LossErrors : public ::testing::Test {
 protected:
  typename B::Device dev = loss_device<B>();
  Tensor<B, 2> f2(std::int64_t a, std::int64_t b, double v = 0.5) const {
    return Tensor<B, 2>::full(Shape{a, b}, v, dev);
  }
  Tensor<B, 1> f1(std::int64_t a, double v = 0.5) const {
    return Tensor<B, 1>::full(Shape{a}, v, dev);
  }
  Tensor<B, 1, Int> ints(std::initializer_list<std::int64_t> v) const {
    return Tensor<B, 1, Int>::from_data(
        TensorData(std::vector<std::int64_t>(v), Shape{static_cast<std::int64_t>(v.size())}), dev);
  }
};

using LossBackends = ::testing::Types<AdCpu, Dispatch>;
TYPED_TEST_SUITE(LossErrors, LossBackends);

TYPED_TEST(LossErrors, CrossEntropy) {
  using B = TypeParam;
  auto x = this->f2(3, 4);
  EMBER_EXPECT_THROW_MSG(loss::cross_entropy(x, this->ints({0, 1})), ShapeError,
                         "[cross_entropy] class targets of shape [2] do not match input");
  EMBER_EXPECT_THROW_MSG(loss::cross_entropy(x, this->ints({0, 4, 1})), ValueError,
                         "[cross_entropy] target 4 at [1] is out of range for 4 classes");
  EMBER_EXPECT_THROW_MSG(loss::cross_entropy(x, this->ints({0, -1, 1})), ValueError,
                         "target -1 at [1]");
  // The ignored value is accepted anywhere, others are not.
  EXPECT_NO_THROW(loss::cross_entropy(x, this->ints({0, -100, 1})));
  EMBER_EXPECT_THROW_MSG((loss::cross_entropy(x, this->ints({0, 1, 2}), {.weight = this->f1(3)})),
                         ShapeError, "[cross_entropy] weight of shape [3] must be [4]");
  EMBER_EXPECT_THROW_MSG((loss::cross_entropy(x, this->ints({0, 1, 2}), {.label_smoothing = 1.5})),
                         ValueError, "label smoothing must be in [0, 1], got 1.5");
  EMBER_EXPECT_THROW_MSG(
      (loss::cross_entropy(x, this->ints({0, 1, 2}), {.reduction = loss::Reduction::BatchMean})),
      ValueError, "[cross_entropy] reduction 'batchmean' is only defined for kl_div");
  EMBER_EXPECT_THROW_MSG(loss::cross_entropy(x, this->f2(3, 5)), ShapeError,
                         "[cross_entropy] input of shape [3, 4] and probability targets of shape "
                         "[3, 5] must have the same shape");
  auto x4 = Tensor<B, 4>::zeros(Shape{2, 3, 4, 5}, this->dev);
  auto t3 = Tensor<B, 3, Int>::zeros(Shape{2, 4, 4}, this->dev);
  EMBER_EXPECT_THROW_MSG(loss::cross_entropy(x4, t3), ShapeError, "(expected [2, 4, 5]");
}

TYPED_TEST(LossErrors, Nll) {
  auto x = this->f2(2, 3, -1.0);
  EMBER_EXPECT_THROW_MSG(loss::nll_loss(x, this->ints({3, 0})), ValueError,
                         "[nll_loss] target 3 at [0] is out of range for 3 classes");
  EMBER_EXPECT_THROW_MSG((loss::nll_loss(x, this->ints({0, 1}), {.weight = this->f1(2)})),
                         ShapeError, "[nll_loss] weight of shape [2] must be [3]");
}

TYPED_TEST(LossErrors, BinaryCrossEntropy) {
  using B = TypeParam;
  auto x = this->f2(2, 3);
  auto bad = x.slice_fill({s(1), s(2)}, 1.5);
  EMBER_EXPECT_THROW_MSG(loss::binary_cross_entropy(bad, x), ValueError,
                         "[binary_cross_entropy] every input value must be in [0, 1], got 1.5 "
                         "at [1, 2]");
  EMBER_EXPECT_THROW_MSG(loss::binary_cross_entropy(x, x.slice_fill({s(0), s(0)}, -0.5)),
                         ValueError, "every target value must be in [0, 1], got -0.5 at [0, 0]");
  auto nan = x.slice_fill({s(0), s(1)}, std::numeric_limits<double>::quiet_NaN());
  EMBER_EXPECT_THROW_MSG(loss::binary_cross_entropy(nan, x), ValueError, "got nan at [0, 1]");
  EMBER_EXPECT_THROW_MSG(loss::binary_cross_entropy(x, this->f2(3, 2)), ShapeError,
                         "[binary_cross_entropy] input of shape [2, 3] and target of shape [3, 2]");
  EMBER_EXPECT_THROW_MSG((loss::binary_cross_entropy(x, x, {.weight = this->f2(2, 2)})), ShapeError,
                         "weight of shape [2, 2] does not broadcast to the input's shape [2, 3]");
  EMBER_EXPECT_THROW_MSG(
      (loss::binary_cross_entropy_with_logits(x, x, {.pos_weight = this->f1(2)})), ShapeError,
      "[binary_cross_entropy_with_logits] pos_weight of shape [2] must be [3]");
  EXPECT_NO_THROW((loss::binary_cross_entropy_with_logits(x, x, {.pos_weight = this->f1(1)})));
  EMBER_EXPECT_THROW_MSG(loss::binary_cross_entropy_with_logits(x, this->f2(2, 4)), ShapeError,
                         "[binary_cross_entropy_with_logits] input of shape [2, 3]");
  (void)sizeof(B);
}

TYPED_TEST(LossErrors, Regression) {
  auto a = this->f2(2, 3), b = this->f2(3, 2);
  EMBER_EXPECT_THROW_MSG(loss::mse_loss(a, b), ShapeError,
                         "[mse_loss] input of shape [2, 3] and target of shape [3, 2] must have "
                         "the same shape");
  EMBER_EXPECT_THROW_MSG(loss::l1_loss(a, b), ShapeError, "[l1_loss]");
  EMBER_EXPECT_THROW_MSG(loss::huber_loss(a, b), ShapeError, "[huber_loss]");
  EMBER_EXPECT_THROW_MSG(loss::smooth_l1_loss(a, b), ShapeError, "[smooth_l1_loss]");
  EMBER_EXPECT_THROW_MSG(loss::huber_loss(a, a, loss::Reduction::Mean, 0.0), ValueError,
                         "[huber_loss] delta must be > 0, got 0");
  EMBER_EXPECT_THROW_MSG(loss::smooth_l1_loss(a, a, loss::Reduction::Mean, -1.0), ValueError,
                         "[smooth_l1_loss] beta must be >= 0, got -1");
  EMBER_EXPECT_THROW_MSG(loss::mse_loss(a, a, loss::Reduction::BatchMean), ValueError,
                         "[mse_loss] reduction 'batchmean'");
  EMBER_EXPECT_THROW_MSG(loss::kl_div(a, b), ShapeError, "[kl_div] input of shape [2, 3]");
}

TYPED_TEST(LossErrors, Margin) {
  auto a = this->f2(3, 4, 0.1), b = this->f2(3, 4, 0.2);
  EMBER_EXPECT_THROW_MSG(loss::cosine_embedding_loss(a, b, this->ints({1, 0, -1})), ValueError,
                         "[cosine_embedding_loss] target 0 at [1] must be 1 or -1");
  EMBER_EXPECT_THROW_MSG(loss::cosine_embedding_loss(a, b, this->ints({1, -1})), ShapeError,
                         "[cosine_embedding_loss] target of shape [2] must be [3]");
  EMBER_EXPECT_THROW_MSG(loss::cosine_embedding_loss(a, this->f2(3, 5), this->ints({1, 1, 1})),
                         ShapeError, "input1 of shape [3, 4] and input2 of shape [3, 5]");
  EMBER_EXPECT_THROW_MSG(loss::margin_ranking_loss(this->f1(3), this->f1(3), this->f1(4)),
                         ShapeError,
                         "[margin_ranking_loss] input1 of shape [3] and target of "
                         "shape [4]");
  EMBER_EXPECT_THROW_MSG(loss::triplet_margin_loss(a, b, this->f2(2, 4)), ShapeError,
                         "[triplet_margin_loss] anchor of shape [3, 4] and negative of shape");
  EMBER_EXPECT_THROW_MSG((loss::triplet_margin_loss(a, b, b, {.p = 0.0})), ValueError,
                         "[triplet_margin_loss] p must be > 0, got 0");
}

TYPED_TEST(LossErrors, Ctc) {
  using B = TypeParam;
  auto lp = Tensor<B, 3>::full(Shape{5, 2, 4}, -1.3862943611198906, this->dev);  // log(1/4)
  auto padded = Tensor<B, 2, Int>::from_data(
      TensorData(std::vector<std::int64_t>{1, 2, 3, 0}, Shape{2, 2}), this->dev);
  auto in_len = this->ints({5, 4}), tgt_len = this->ints({2, 1});
  EXPECT_NO_THROW(loss::ctc_loss(lp, padded, in_len, tgt_len));
  EMBER_EXPECT_THROW_MSG(loss::ctc_loss(lp, padded, in_len, tgt_len, {.blank = 4}), ValueError,
                         "[ctc_loss] blank 4 is out of range for 4 classes");
  EMBER_EXPECT_THROW_MSG(loss::ctc_loss(lp, padded, this->ints({6, 4}), tgt_len), ValueError,
                         "[ctc_loss] input length 6 of sample 0 is out of range [0, 5]");
  EMBER_EXPECT_THROW_MSG(loss::ctc_loss(lp, padded, in_len, this->ints({2, 3})), ValueError,
                         "target length 3 of sample 1 exceeds the padded targets' length 2");
  EMBER_EXPECT_THROW_MSG(loss::ctc_loss(lp, padded, in_len, this->ints({-1, 1})), ValueError,
                         "target length -1 of sample 0 is negative");
  EMBER_EXPECT_THROW_MSG(loss::ctc_loss(lp, padded, in_len, this->ints({2, 2})), ValueError,
                         "target label 0 (sample 1, position 1) must be in [0, 4) and differ "
                         "from the blank 0");
  auto big = Tensor<B, 2, Int>::from_data(
      TensorData(std::vector<std::int64_t>{1, 7, 3, 0}, Shape{2, 2}), this->dev);
  EMBER_EXPECT_THROW_MSG(loss::ctc_loss(lp, big, in_len, tgt_len), ValueError, "target label 7");
  EMBER_EXPECT_THROW_MSG(loss::ctc_loss(lp, this->ints({1, 2, 3, 1}), in_len, tgt_len), ShapeError,
                         "[ctc_loss] concatenated targets of shape [4] do not hold the sum of "
                         "the target lengths, 3");
  EMBER_EXPECT_THROW_MSG(loss::ctc_loss(lp, padded, this->ints({5}), tgt_len), ShapeError,
                         "must both be [2]");
  EMBER_EXPECT_THROW_MSG(
      loss::ctc_loss(lp, padded, in_len, tgt_len, {.reduction = loss::Reduction::BatchMean}),
      ValueError, "[ctc_loss] reduction 'batchmean'");
}

TYPED_TEST(LossErrors, Configs) {
  using B = TypeParam;
  const auto dev = this->dev;
  EMBER_EXPECT_THROW_MSG(nn::CrossEntropyLossConfig{.smoothing = 2.0}.init<B>(dev), ValueError,
                         "[CrossEntropyLossConfig] smoothing must be in [0, 1], got 2");
  EMBER_EXPECT_THROW_MSG(
      (nn::CrossEntropyLossConfig{.weights = std::vector<double>{1.0, -2.0}}.init<B>(dev)),
      ValueError, "[CrossEntropyLossConfig] weights must be finite and >= 0, got -2");
  EMBER_EXPECT_THROW_MSG((nn::NllLossConfig{.weights = std::vector<double>{}}.init<B>(dev)),
                         ValueError, "[NllLossConfig] weights must not be empty");
  EMBER_EXPECT_THROW_MSG(
      (nn::BinaryCrossEntropyLossConfig{.pos_weight = std::vector<double>{1.0}}.init<B>(dev)),
      ValueError, "pos_weight needs logits = true");
  EMBER_EXPECT_THROW_MSG(nn::HuberLossConfig{.delta = -1.0}.init<B>(dev), ValueError,
                         "[HuberLossConfig] delta must be > 0, got -1");
  EMBER_EXPECT_THROW_MSG(nn::SmoothL1LossConfig{.beta = -0.5}.init<B>(dev), ValueError,
                         "[SmoothL1LossConfig] beta must be >= 0, got -0.5");
  EMBER_EXPECT_THROW_MSG(nn::TripletMarginLossConfig{.p = -2.0}.init<B>(dev), ValueError,
                         "[TripletMarginLossConfig] p must be > 0, got -2");
  EMBER_EXPECT_THROW_MSG(nn::CosineEmbeddingLossConfig{.margin = 1.5}.init<B>(dev), ValueError,
                         "[CosineEmbeddingLossConfig] margin must be in [-1, 1], got 1.5");
  EMBER_EXPECT_THROW_MSG(nn::CTCLossConfig{.blank = -1}.init<B>(dev), ValueError,
                         "[CTCLossConfig] blank must be >= 0, got -1");
}

TYPED_TEST(LossErrors, Modules) {
  using B = TypeParam;
  const auto dev = this->dev;
  auto x = this->f2(2, 3);
  auto bce = nn::BinaryCrossEntropyLossConfig{.logits = true}.init<B>(dev);
  auto t = Tensor<B, 2, Int>::from_data(
      TensorData(std::vector<std::int64_t>{0, 1, 2, 1, 0, 1}, Shape{2, 3}), dev);
  EMBER_EXPECT_THROW_MSG(bce.forward(x, t), ValueError,
                         "[BinaryCrossEntropyLoss] Int targets must be 0 or 1, got 2 at [0, 2]");
  auto weighted =
      nn::BinaryCrossEntropyLossConfig{.weights = std::vector<double>{1.0, 2.0}}.init<B>(dev);
  EMBER_EXPECT_THROW_MSG(weighted.forward(x, x), ShapeError,
                         "[BinaryCrossEntropyLoss] weight of shape [2] must be [3]");
  auto ce = nn::CrossEntropyLossConfig{.pad_tokens = std::vector<std::int64_t>{5}}.init<B>(dev);
  EXPECT_NO_THROW(ce.forward(x, this->ints({5, 1})));  // a pad token need not be a class
  EMBER_EXPECT_THROW_MSG(ce.forward(x, this->ints({4, 1})), ValueError,
                         "[CrossEntropyLoss] target 4 at [0] is out of range for 3 classes");
}

TEST(LossReduction, Names) {
  using loss::Reduction;
  for (Reduction r : {Reduction::Mean, Reduction::Sum, Reduction::None, Reduction::BatchMean}) {
    EXPECT_EQ(loss::parse_reduction(loss::reduction_name(r)), r);
  }
  EXPECT_STREQ(loss::reduction_name(Reduction::BatchMean), "batchmean");
  EMBER_EXPECT_THROW_MSG(loss::parse_reduction("avg"), ValueError,
                         "[reduction] unknown reduction 'avg' (expected mean, sum, none or "
                         "batchmean)");
}

}  // namespace
}  // namespace ember::test
