// Autodiff<Cpu>: gradients of the nn functional composites (ember/tensor/module/nn.hpp,
// loss.hpp): linear, embedding, norms, inference batch norm, scaled dot-product attention,
// cross-entropy. f64 central differences; parameters of rank < D are passed as [1, .., n]
// leaves and reshaped inside the function.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <optional>

#include "ember/autodiff/cpu.hpp"
#include "ember/tensor/loss.hpp"
#include "ember/tensor/module/nn.hpp"
#include "ember/tensor/tensor.hpp"
#include "fixtures.hpp"
#include "gradcheck.hpp"
#include "test_grad_nn_support.hpp"

namespace ember::test {
namespace {

namespace nn = ember::module;
using T2 = Tensor<AD, 2>;
using T3 = Tensor<AD, 3>;
using T4 = Tensor<AD, 4>;
using V2 = std::vector<T2>;
using V3 = std::vector<T3>;
using V4 = std::vector<T4>;

/// layer_norm and group_norm reduce with var_mean; its backward rule belongs to the reduction
/// rules (impl/reduce.hpp). Until it exists their gradient tests are skipped (and say so).
bool var_mean_has_rule() {
  auto x = Tensor<AD, 2>::from_floats({{1.0, 2.0}}).require_grad();
  try {
    auto [v, m] = x.var_mean_bias(1);
    (void)(v + m).sum().backward();
    return true;
  } catch (const UnsupportedError&) {
    return false;
  }
}
#define EMBER_SKIP_WITHOUT_VAR_MEAN_RULE() \
  if (!var_mean_has_rule()) GTEST_SKIP() << "no backward rule for var_mean yet (impl/reduce.hpp)"

TEST(GradNn, Linear) {
  gradcheck<2>("linear with bias",
               [](const V2& xs) { return nn::linear(xs[0], xs[1], xs[2].reshape({2})); },
               {random_data({4, 3}, 1), random_data({2, 3}, 2), random_data({1, 2}, 3)});
  gradcheck<2>("linear without bias", [](const V2& xs) { return nn::linear(xs[0], xs[1]); },
               {random_data({4, 3}, 4), random_data({5, 3}, 5)});
  gradcheck<3>("linear 3-D input",
               [](const V3& xs) {
                 return nn::linear(xs[0], xs[1].reshape({5, 4}), xs[2].reshape({5}));
               },
               {random_data({2, 3, 4}, 6), random_data({1, 5, 4}, 7), random_data({1, 1, 5}, 8)});
}

TEST(GradNn, EmbeddingRepeatedIndicesAccumulate) {
  const auto idx = Tensor<AD, 2, Int>::from_ints({{1, 4, 1, 0}, {4, 4, 5, 1}});
  gradcheck<2>("embedding", [idx](const V2& xs) { return nn::embedding(xs[0], idx); },
               {random_data({6, 3}, 11)});
  // d/dW sum(embedding(W, idx)) counts each row's uses.
  auto w = T2::from_data(random_data({6, 3}, 12)).require_grad();
  auto grads = nn::embedding(w, idx).sum().backward();
  EXPECT_EQ(w.grad(grads)->to_vec<double>(),
            (std::vector<double>{1, 1, 1, 3, 3, 3, 0, 0, 0, 0, 0, 0, 3, 3, 3, 1, 1, 1}));
}

TEST(GradNn, LayerNorm) {
  EMBER_SKIP_WITHOUT_VAR_MEAN_RULE();
  const auto x = random_data({2, 3, 4}, 21, -2.0, 2.0);
  gradcheck<3>("layer_norm affine",
               [](const V3& xs) {
                 return nn::layer_norm(xs[0], xs[1].reshape({4}), xs[2].reshape({4}), 1e-5);
               },
               {x, random_data({1, 1, 4}, 22, 0.5, 1.5), random_data({1, 1, 4}, 23)});
  gradcheck<3>("layer_norm weight only",
               [](const V3& xs) { return nn::layer_norm(xs[0], xs[1].reshape({4})); },
               {x, random_data({1, 1, 4}, 24, 0.5, 1.5)});
  gradcheck<3>("layer_norm over 2 dims",
               [](const V3& xs) {
                 return nn::layer_norm(xs[0], xs[1].reshape({3, 4}), xs[2].reshape({3, 4}), 1e-5);
               },
               {x, random_data({1, 3, 4}, 25, 0.5, 1.5), random_data({1, 3, 4}, 26)});
  gradcheck<3>("layer_norm no affine", [](const V3& xs) { return nn::layer_norm<1>(xs[0]); }, {x});
}

TEST(GradNn, GroupNorm) {
  EMBER_SKIP_WITHOUT_VAR_MEAN_RULE();
  const auto x = random_data({2, 6, 3}, 31, -2.0, 2.0);
  gradcheck<3>("group_norm affine",
               [](const V3& xs) {
                 return nn::group_norm(xs[0], 3, xs[1].reshape({6}), xs[2].reshape({6}), 1e-5);
               },
               {x, random_data({1, 1, 6}, 32, 0.5, 1.5), random_data({1, 1, 6}, 33)});
  gradcheck<3>("group_norm 2 groups, no affine",
               [](const V3& xs) { return nn::group_norm(xs[0], 2); }, {x});
  gradcheck<4>("group_norm 4-D",
               [](const V4& xs) { return nn::group_norm(xs[0], 2, xs[1].reshape({4})); },
               {random_data({2, 4, 2, 3}, 34, -2.0, 2.0), random_data({1, 1, 1, 4}, 35, 0.5, 1.5)});
}

TEST(GradNn, RmsNorm) {
  const auto x = random_data({2, 3, 5}, 41, -2.0, 2.0);
  gradcheck<3>("rms_norm weight",
               [](const V3& xs) { return nn::rms_norm(xs[0], xs[1].reshape({5})); },
               {x, random_data({1, 1, 5}, 42, 0.5, 1.5)});
  gradcheck<3>("rms_norm no weight", [](const V3& xs) { return nn::rms_norm(xs[0]); }, {x});
  // A zero row: sqrt(0 + eps) is fine, d/dx = w / sqrt(eps).
  auto z = Tensor<AD, 2>::zeros({1, 3}, AD::Device{}, DType::F64).require_grad();
  auto grads = nn::rms_norm(z, std::nullopt, 1e-4).sum().backward();
  for (double g : z.grad(grads)->to_vec<double>()) EXPECT_NEAR(g, 100.0, 1e-9);
}

TEST(GradNn, BatchNormInferenceGradsToAllInputs) {
  // x, running mean, running var (> 0), weight, bias all differentiated.
  const auto x = random_data({3, 4, 2}, 51, -2.0, 2.0);
  const auto mean = random_data({1, 1, 4}, 52), var = random_data({1, 1, 4}, 53, 0.5, 1.5);
  gradcheck<3>("batch_norm affine",
               [](const V3& xs) {
                 return nn::batch_norm(xs[0], xs[1].reshape({4}), xs[2].reshape({4}),
                                       xs[3].reshape({4}), xs[4].reshape({4}), 1e-5);
               },
               {x, mean, var, random_data({1, 1, 4}, 54, 0.5, 1.5), random_data({1, 1, 4}, 55)});
  gradcheck<3>(
      "batch_norm no affine",
      [](const V3& xs) { return nn::batch_norm(xs[0], xs[1].reshape({4}), xs[2].reshape({4})); },
      {x, mean, var});
  gradcheck<2>("batch_norm 2-D",
               [](const V2& xs) {
                 return nn::batch_norm(xs[0], xs[1].reshape({4}), xs[2].reshape({4}),
                                       xs[3].reshape({4}), xs[4].reshape({4}), 1e-3);
               },
               {random_data({5, 4}, 56), random_data({1, 4}, 57), random_data({1, 4}, 58, 0.5, 1.5),
                random_data({1, 4}, 59), random_data({1, 4}, 60)});
}

// Training batch norm: the gradient flows through the batch statistics (fused kernel and
// its backward on Autodiff<Cpu>; the composite under create_graph, checked second-order).
TEST(GradNn, BatchNormTrain) {
  const auto x = random_data({3, 4, 5}, 71, -2.0, 2.0);
  const auto w = random_data({1, 1, 4}, 72, 0.5, 1.5), b = random_data({1, 1, 4}, 73);
  gradcheck<3>(
      "batch_norm_train affine",
      [](const V3& xs) {
        return nn::batch_norm_train(xs[0], xs[1].reshape({4}), xs[2].reshape({4}), 1e-3).output;
      },
      {x, w, b});
  gradcheck<3>("batch_norm_train no affine",
               [](const V3& xs) { return nn::batch_norm_train(xs[0]).output; }, {x});
  gradcheck<3>("batch_norm_train bias only",
               [](const V3& xs) {
                 return nn::batch_norm_train(xs[0], std::nullopt, xs[1].reshape({4})).output;
               },
               {x, b});
  gradcheck<4>("batch_norm_train 4-D",
               [](const V4& xs) {
                 return nn::batch_norm_train(xs[0], xs[1].reshape({3}), std::nullopt).output;
               },
               {random_data({2, 3, 2, 4}, 74, -1.0, 3.0), random_data({1, 1, 1, 3}, 75, 0.5, 1.5)});
  gradcheck<2>(
      "batch_norm_train 2-D",
      [](const V2& xs) {
        return nn::batch_norm_train(xs[0], xs[1].reshape({4}), xs[2].reshape({4})).output;
      },
      {random_data({5, 4}, 76), random_data({1, 4}, 77, 0.5, 1.5), random_data({1, 4}, 78)});
}

// Second order: the gradients of a create_graph pass, differentiated again (loss sum(y^2 r),
// so dy depends on x, weight and bias too). The first gradients are taken with respect to
// zero tensors added to x and to the weight (leaves in every evaluation), which equal dx and
// dweight and stay functions of the checked inputs.
TEST(GradNn, BatchNormTrainGradOfGrad) {
  const TensorData r = random_data({3, 4, 5}, 81);
  // which = 0: dx; 1: dweight (as [1, 1, 4]).
  const auto grad_of = [r](const V3& xs, int which) {
    auto zx = T3::zeros(Shape{3, 4, 5}, AD::Device{}, DType::F64).require_grad();
    auto zw = Tensor<AD, 1>::zeros(Shape{4}, AD::Device{}, DType::F64).require_grad();
    auto y =
        nn::batch_norm_train(xs[0] + zx, xs[1].reshape({4}) + zw, xs[2].reshape({4}), 1e-3).output;
    auto grads = (y * y * T3::from_data(r)).sum().backward(/*create_graph=*/true);
    return which == 0 ? *zx.grad_graph(grads) : zw.grad_graph(grads)->reshape({1, 1, 4});
  };
  const std::vector<TensorData> in{random_data({3, 4, 5}, 82, -2.0, 2.0),
                                   random_data({1, 1, 4}, 83, 0.5, 1.5),
                                   random_data({1, 1, 4}, 84)};
  gradcheck<3>(
      "d/d(x, w, b) of batch_norm_train's dx", [grad_of](const V3& xs) { return grad_of(xs, 0); },
      in);
  gradcheck<3>(
      "d/d(x, w, b) of batch_norm_train's dweight",
      [grad_of](const V3& xs) { return grad_of(xs, 1); }, in);
}

// ---- attention -------------------------------------------------------------------------------

const std::vector<TensorData> kQkv{random_data({2, 3, 4}, 61), random_data({2, 5, 4}, 62),
                                   random_data({2, 5, 3}, 63)};

TEST(GradNn, AttentionPlainAndScaled) {
  gradcheck<3>(
      "attention",
      [](const V3& xs) { return nn::scaled_dot_product_attention(xs[0], xs[1], xs[2]); }, kQkv);
  gradcheck<3>(
      "attention scale 0.7",
      [](const V3& xs) {
        return nn::scaled_dot_product_attention<AD, 3>(xs[0], xs[1], xs[2], std::nullopt,
                                                       std::nullopt, false, 0.7);
      },
      kQkv);
  gradcheck<4>("attention with heads",
               [](const V4& xs) { return nn::scaled_dot_product_attention(xs[0], xs[1], xs[2]); },
               {random_data({1, 2, 3, 4}, 64), random_data({1, 2, 4, 4}, 65),
                random_data({1, 2, 4, 2}, 66)});
}

TEST(GradNn, AttentionBoolMask) {
  // Column 0 always visible; query 1 of batch 1 sees only key 0.
  const auto mask = Tensor<AD, 3, Bool>::from_bools({{{true, false, true, true, false},
                                                      {true, true, false, false, true},
                                                      {true, false, false, true, true}},
                                                     {{true, true, true, false, false},
                                                      {true, false, false, false, false},
                                                      {true, true, false, true, false}}});
  gradcheck<3>(
      "attention bool mask",
      [mask](const V3& xs) { return nn::scaled_dot_product_attention(xs[0], xs[1], xs[2], mask); },
      kQkv);
  // A broadcast rank-2 mask with a fully masked query row: that row's output is 0 (torch's
  // _safe_softmax), its gradients are 0, nothing is NaN.
  const auto mask2 = Tensor<AD, 2, Bool>::from_bools({{true, true, false, true, false},
                                                      {false, false, false, false, false},
                                                      {false, true, true, true, true}});
  gradcheck<3>(
      "attention fully masked row",
      [mask2](const V3& xs) {
        return nn::scaled_dot_product_attention(xs[0], xs[1], xs[2], mask2);
      },
      kQkv);
  auto q = T3::from_data(kQkv[0]).require_grad();
  auto k = T3::from_data(kQkv[1]).require_grad();
  auto v = T3::from_data(kQkv[2]).require_grad();
  auto grads = nn::scaled_dot_product_attention(q, k, v, mask2).sum().backward();
  const auto gq = q.grad(grads)->to_vec<double>();
  for (std::size_t b = 0; b < 2; ++b)
    for (std::size_t e = 0; e < 4; ++e) EXPECT_EQ(gq[b * 12 + 4 + e], 0.0);
  for (double g : k.grad(grads)->to_vec<double>()) EXPECT_TRUE(std::isfinite(g));
  for (double g : v.grad(grads)->to_vec<double>()) EXPECT_TRUE(std::isfinite(g));
}

// A query row whose bias is -inf for every key is dead as a masked one: output 0, zero
// gradients for that query, finite gradients everywhere (the shared composite,
// ember/backend/attention_composite.hpp; the front end's earlier softmax gave NaN here).
TEST(GradNn, AttentionBiasRowOfMinusInfinity) {
  std::vector<double> bias(15, 0.25);
  for (std::size_t j = 0; j < 5; ++j) bias[5 + j] = -std::numeric_limits<double>::infinity();
  const auto b = T3::from_data(TensorData(bias, Shape{1, 3, 5}).convert(DType::F64));
  auto q = T3::from_data(kQkv[0]).require_grad();
  auto k = T3::from_data(kQkv[1]).require_grad();
  auto v = T3::from_data(kQkv[2]).require_grad();
  const auto out = nn::scaled_dot_product_attention(q, k, v, b);
  const auto o = out.to_vec<double>();
  for (std::size_t bi = 0; bi < 2; ++bi)
    for (std::size_t e = 0; e < 3; ++e) EXPECT_EQ(o[bi * 9 + 3 + e], 0.0);
  auto grads = out.sum().backward();
  const auto gq = q.grad(grads)->to_vec<double>();
  for (std::size_t bi = 0; bi < 2; ++bi)
    for (std::size_t e = 0; e < 4; ++e) EXPECT_EQ(gq[bi * 12 + 4 + e], 0.0);
  for (double g : gq) EXPECT_TRUE(std::isfinite(g));
  for (double g : k.grad(grads)->to_vec<double>()) EXPECT_TRUE(std::isfinite(g));
  for (double g : v.grad(grads)->to_vec<double>()) EXPECT_TRUE(std::isfinite(g));
}

TEST(GradNn, AttentionAdditiveBias) {
  auto data = kQkv;
  data.push_back(random_data({1, 3, 5}, 67));
  gradcheck<3>(
      "attention broadcast bias",
      [](const V3& xs) { return nn::scaled_dot_product_attention(xs[0], xs[1], xs[2], xs[3]); },
      data);
  data.back() = random_data({2, 3, 5}, 68);
  gradcheck<3>(
      "attention full bias, causal",
      [](const V3& xs) {
        return nn::scaled_dot_product_attention<AD, 3>(xs[0], xs[1], xs[2], std::nullopt, xs[3],
                                                       true);
      },
      data);
}

TEST(GradNn, AttentionCausal) {
  gradcheck<3>(
      "attention causal L < S",
      [](const V3& xs) {
        return nn::scaled_dot_product_attention<AD, 3>(xs[0], xs[1], xs[2], std::nullopt,
                                                       std::nullopt, true);
      },
      kQkv);
  gradcheck<3>(
      "attention causal L = S",
      [](const V3& xs) {
        return nn::scaled_dot_product_attention<AD, 3>(xs[0], xs[1], xs[2], std::nullopt,
                                                       std::nullopt, true);
      },
      {random_data({2, 4, 3}, 69), random_data({2, 4, 3}, 70), random_data({2, 4, 2}, 71)});
}

// ---- cross-entropy ---------------------------------------------------------------------------

TEST(GradNn, CrossEntropy) {
  const auto logits = random_data({4, 5}, 81, -3.0, 3.0);
  const auto raw = Tensor<ADInner, 2>::from_data(random_data({4, 5}, 82, 0.1, 1.0));
  const auto target = raw.div(raw.sum_dim(1));
  gradcheck<2>("cross_entropy probabilities",
               [](const V2& xs) { return loss::cross_entropy_with_logits(xs[0], xs[1]); },
               {logits, target.into_data()}, {.constant_inputs = {1}});
  const auto cls = Tensor<AD, 1, Int>::from_ints({0, 4, 2, 2});
  gradcheck<2>("cross_entropy class indices",
               [cls](const V2& xs) { return loss::cross_entropy_with_logits(xs[0], cls); },
               {logits});
  // d/dlogits = (softmax - onehot) / N
  auto x = T2::from_data(logits).require_grad();
  auto grads = loss::cross_entropy_with_logits(x, cls).backward();
  const auto p =
      ember::activation::softmax(Tensor<ADInner, 2>::from_data(logits), 1).to_vec<double>();
  const auto g = x.grad(grads)->to_vec<double>();
  const std::int64_t c[4] = {0, 4, 2, 2};
  for (std::size_t i = 0; i < 20; ++i) {
    const double onehot = static_cast<std::int64_t>(i % 5) == c[i / 5] ? 1.0 : 0.0;
    EXPECT_NEAR(g[i], (p[i] - onehot) / 4, 1e-14) << i;
  }
}

// ---- grad of grad ----------------------------------------------------------------------------

TEST(GradNn, SecondDerivatives) {
  using nn_grad::gradgradcheck;
  const auto w = T3::from_data(random_data({1, 1, 5}, 91, 0.5, 1.5)).reshape({5});
  gradgradcheck<3>(
      "rms_norm", [w](const T3& x) { return nn::rms_norm(x, w); },
      random_data({2, 3, 5}, 92, -2.0, 2.0));
  const auto k = T3::from_data(kQkv[1]), v = T3::from_data(kQkv[2]);
  gradgradcheck<3>(
      "attention (q), causal",
      [k, v](const T3& q) {
        return nn::scaled_dot_product_attention<AD, 3>(q, k, v, std::nullopt, std::nullopt, true);
      },
      kQkv[0]);
  const auto q = T3::from_data(kQkv[0]);
  gradgradcheck<3>(
      "attention (k)", [q, v](const T3& kk) { return nn::scaled_dot_product_attention(q, kk, v); },
      kQkv[1]);
  const auto cls = Tensor<AD, 1, Int>::from_ints({0, 4, 2, 2});
  gradgradcheck<2>(
      "cross_entropy class indices",
      [cls](const T2& x) { return loss::cross_entropy_with_logits(x, cls); },
      random_data({4, 5}, 93, -3.0, 3.0));
  if (var_mean_has_rule()) {
    gradgradcheck<3>(
        "layer_norm", [](const T3& x) { return nn::layer_norm<1>(x); },
        random_data({2, 3, 4}, 94, -2.0, 2.0));
  }
}

}  // namespace
}  // namespace ember::test
