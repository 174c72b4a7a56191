// MultiHeadAttention against torch.nn.MultiheadAttention (tests/fixtures/gen_nn_seq.py ->
// nn/seq_attention.json): context, per-head weights and the gradients of
// sum(context * w) + sum(weights * w2) wrt the inputs and every parameter, within rel 1e-4 /
// abs 1e-5, on Autodiff<Cpu> and Dispatch (cpu+autodiff). Also: the KV cache against the
// full causal forward, the causal flag against an explicit mask, dropout, fully masked
// rows, quiet softmax, initialisation and errors.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "ember/nn/attention.hpp"
#include "seq_support.hpp"

namespace {

using namespace ember;
using namespace ember::test;
using namespace ember::test::seq;

const char* kFile = "nn/seq_attention";

template <class B>
nn::MultiHeadAttention<B> mha_from(const FixtureCase& c, double dropout = 0.25) {
  nn::MultiHeadAttentionConfig cfg{.d_model = c.param<std::int64_t>("d_model"),
                                   .n_heads = c.param<std::int64_t>("n_heads"),
                                   .dropout = dropout,
                                   .bias = c.param<bool>("bias"),
                                   .kdim = c.has("kdim") ? c.param<std::int64_t>("kdim") : 0,
                                   .vdim = c.has("vdim") ? c.param<std::int64_t>("vdim") : 0};
  auto m = cfg.init<B>(dev<B>());
  load_params(m, c);
  m.eval();  // the configured dropout must not act in eval mode
  return m;
}

template <class B>
struct RunMha {
  void operator()(const FixtureCase& c) {
    auto m = mha_from<B>(c);
    const bool self = c.has("x");
    auto x = self ? ten<B, 3>(c, "x").require_grad() : ten<B, 3>(c, "query").require_grad();
    auto k = self ? x : ten<B, 3>(c, "key").require_grad();
    auto v = self ? x : ten<B, 3>(c, "value").require_grad();
    nn::MhaInput<B> in{x, k, v};
    if (c.has("key_padding_mask")) in = in.with_mask_pad(ten<B, 2, Bool>(c, "key_padding_mask"));
    if (c.has("attn_mask")) in = in.with_mask_attn(ten<B, 2, Bool>(c, "attn_mask"));
    auto out = m.forward(in);
    expect_approx(out.context.into_data(), c.tensor("out"), tol());
    expect_approx(out.weights->into_data(), c.tensor("out2"), tol());
    auto grads = weighted(out.context, c, "w").add(weighted(*out.weights, c, "w2")).backward();
    if (self) {
      expect_approx(x.grad(grads)->into_data(), c.tensor("gx"), tol());
    } else {
      expect_approx(x.grad(grads)->into_data(), c.tensor("gquery"), tol());
      expect_approx(k.grad(grads)->into_data(), c.tensor("gkey"), tol());
      expect_approx(v.grad(grads)->into_data(), c.tensor("gvalue"), tol());
    }
    check_param_grads(m, grads, c);
  }
};

const Registrar<RunMha> reg_mha("SeqMha", kFile, "mha");

FixtureCase case_named(const std::string& name) {
  for (const auto& c : fixture_cases(kFile)) {
    if (c.name == name) return c;
  }
  throw std::runtime_error("no fixture case " + name);
}

template <class B>
class SeqMhaTest : public ::testing::Test {};
using Backends = ::testing::Types<AdCpu, Dispatch>;
TYPED_TEST_SUITE(SeqMhaTest, Backends);

// The causal flag gives torch's result for an explicit upper-triangular attn_mask.
TYPED_TEST(SeqMhaTest, CausalFlagMatchesMask) {
  using B = TypeParam;
  for (const char* name : {"mha_causal", "mha_pad_causal"}) {
    SCOPED_TRACE(name);
    const auto c = case_named(name);
    auto m = mha_from<B>(c);
    auto in = nn::MhaInput<B>::self_attn(ten<B, 3>(c, "x")).with_causal();
    if (c.has("key_padding_mask")) in = in.with_mask_pad(ten<B, 2, Bool>(c, "key_padding_mask"));
    auto out = m.forward(in);
    expect_approx(out.context.into_data(), c.tensor("out"), tol());
    expect_approx(out.weights->into_data(), c.tensor("out2"), tol());
  }
}

// Feeding the sequence in pieces through the KV cache gives the rows of the full causal
// forward (torch's outputs), piece by piece, and the weights over the keys seen so far.
TYPED_TEST(SeqMhaTest, KvCacheMatchesFullCausalForward) {
  using B = TypeParam;
  for (const char* name : {"mha_causal", "mha_pad_causal"}) {
    SCOPED_TRACE(name);
    const auto c = case_named(name);
    auto m = mha_from<B>(c);
    const auto x = ten<B, 3>(c, "x");
    const auto full = ten<B, 3>(c, "out");
    const auto full_w = ten<B, 4>(c, "out2");
    const std::int64_t seq = x.dim(1);
    auto cache = nn::MhaCache<B>::autoregressive();
    std::int64_t at = 0;
    for (std::int64_t n : {std::int64_t{2}, std::int64_t{1}, seq - 3}) {
      SCOPED_TRACE("piece at " + std::to_string(at));
      auto piece = x.narrow(1, at, n);
      auto in = nn::MhaInput<B>::self_attn(piece).with_causal();
      if (c.has("key_padding_mask")) {
        in = in.with_mask_pad(ten<B, 2, Bool>(c, "key_padding_mask").narrow(1, 0, at + n));
      }
      auto out = m.forward_cache(in, cache);
      EXPECT_EQ(cache.len(), at + n);
      EXPECT_EQ(cache.position, at + n);
      expect_approx(out.context.into_data(), full.narrow(1, at, n).into_data(), tol());
      expect_approx(out.weights->into_data(),
                    full_w.narrow(2, at, n).narrow(3, 0, at + n).into_data(), tol());
      at += n;
    }
    cache.reset();
    EXPECT_EQ(cache.len(), 0);
  }
}

// A cross-attention cache projects the memory once and reuses it.
TYPED_TEST(SeqMhaTest, CrossAttentionCacheReusesMemory) {
  using B = TypeParam;
  const auto c = case_named("mha_kdim_vdim");
  auto m = mha_from<B>(c);
  const auto q = ten<B, 3>(c, "query"), k = ten<B, 3>(c, "key"), v = ten<B, 3>(c, "value");
  const auto pad = ten<B, 2, Bool>(c, "key_padding_mask");
  const auto full = ten<B, 3>(c, "out");
  auto cache = nn::MhaCache<B>::cross_attention();
  for (std::int64_t t = 0; t < q.dim(1); ++t) {
    // After the first call the key/value passed are ignored: give garbage of the right shape.
    auto kk = t == 0 ? k : k.mul_scalar(7.0);
    auto out = m.forward_cache(nn::MhaInput<B>{q.narrow(1, t, 1), kk, v}.with_mask_pad(pad), cache);
    expect_approx(out.context.into_data(), full.narrow(1, t, 1).into_data(), tol());
  }
  EXPECT_EQ(cache.len(), k.dim(1));
  EXPECT_EQ(cache.position, q.dim(1));
}

// Training mode: each weight is 0 or scaled by 1 / (1 - p); p = 1 drops everything, leaving
// out_proj's bias. Eval mode: no dropout.
TYPED_TEST(SeqMhaTest, AttentionDropout) {
  using B = TypeParam;
  const auto c = case_named("mha_self");
  const auto x = ten<B, 3>(c, "x");
  auto m = mha_from<B>(c, 0.5);
  const auto ref = m.forward(nn::MhaInput<B>::self_attn(x)).weights->template to_vec<double>();
  m.train();
  EXPECT_TRUE(m.training);
  const auto w = m.forward(nn::MhaInput<B>::self_attn(x)).weights->template to_vec<double>();
  ASSERT_EQ(w.size(), ref.size());
  std::size_t zeros = 0;
  for (std::size_t i = 0; i < w.size(); ++i) {
    if (w[i] == 0.0) {
      ++zeros;
    } else {
      EXPECT_NEAR(w[i], 2.0 * ref[i], 1e-6) << "element " << i;
    }
  }
  EXPECT_GT(zeros, 0u);
  EXPECT_LT(zeros, w.size());

  auto all = mha_from<B>(c, 1.0);
  all.train();
  auto out = all.forward(nn::MhaInput<B>::self_attn(x));
  for (double v : out.weights->template to_vec<double>()) EXPECT_EQ(v, 0.0);
  const auto bias = all.out_proj.bias->val().template to_vec<double>();
  const auto ctx = out.context.template to_vec<double>();
  for (std::size_t i = 0; i < ctx.size(); ++i) EXPECT_NEAR(ctx[i], bias[i % bias.size()], 1e-6);
}

// A query whose keys are all masked gets zero weights, a context equal to out_proj's bias
// and finite gradients; the other batch rows are unaffected.
TYPED_TEST(SeqMhaTest, FullyMaskedRowsGiveZeros) {
  using B = TypeParam;
  const auto c = case_named("mha_pad");
  auto m = mha_from<B>(c);
  const auto x = ten<B, 3>(c, "x").require_grad();
  auto pad = Tensor<B, 2, Bool>::from_bools(
      {{false, false, false, false}, {true, true, true, true}}, dev<B>());
  auto out = m.forward(nn::MhaInput<B>::self_attn(x).with_mask_pad(pad));
  const auto w = out.weights->narrow(0, 1, 1).template to_vec<double>();
  for (double v : w) EXPECT_EQ(v, 0.0);
  const auto bias = m.out_proj.bias->val().template to_vec<double>();
  const auto ctx = out.context.narrow(0, 1, 1).template to_vec<double>();
  for (std::size_t i = 0; i < ctx.size(); ++i) EXPECT_NEAR(ctx[i], bias[i % bias.size()], 1e-6);
  auto grads = out.context.sum().backward();
  for (double g : x.grad(grads)->template to_vec<double>()) EXPECT_TRUE(std::isfinite(g));
  // Batch 0 has no padding in the fixture either.
  expect_approx(out.context.narrow(0, 0, 1).into_data(),
                ten<B, 3>(c, "out").narrow(0, 0, 1).into_data(), tol());
}

// Without weights (torch's need_weights=False) the context comes from
// scaled_dot_product_attention: the same context and gradients as the weights path, for a
// padding mask, a [seq_q, seq_k] mask and causal alone; no weights returned.
TYPED_TEST(SeqMhaTest, WithoutWeightsMatchesTheWeightsPath) {
  using B = TypeParam;
  const auto c = case_named("mha_pad");
  auto m = mha_from<B>(c);
  const auto x0 = ten<B, 3>(c, "x");
  const std::int64_t s = x0.dim(1);
  const auto pad = ten<B, 2, Bool>(c, "key_padding_mask");
  std::vector<std::uint8_t> later(static_cast<std::size_t>(s * s), 0);  // true: masked
  for (std::int64_t i = 0; i < s; ++i)
    for (std::int64_t j = i + 2; j < s; ++j) later[static_cast<std::size_t>(i * s + j)] = 1;
  const auto attn = Tensor<B, 2, Bool>::from_data(
      TensorData::from_bytes(std::move(later), Shape{s, s}, DType::Bool), dev<B>());
  for (int variant = 0; variant < 3; ++variant) {
    SCOPED_TRACE(variant);
    const auto run = [&](bool need) {
      auto x = x0.require_grad();
      auto in = nn::MhaInput<B>::self_attn(x);
      if (variant == 0) in = in.with_mask_pad(pad);
      if (variant == 1) in = in.with_mask_attn(attn);
      if (variant == 2) in = in.with_causal();
      if (!need) in = in.without_weights();
      auto out = m.forward(in);
      EXPECT_EQ(out.weights.has_value(), need);
      auto grads = weighted(out.context, c, "w").backward();
      return std::make_pair(out.context.into_data(), x.grad(grads)->into_data());
    };
    const auto [ctx, gx] = run(true);
    const auto [ctx2, gx2] = run(false);
    expect_approx(ctx2, ctx, tol());
    expect_approx(gx2, gx, tol());
  }
}

// Quiet softmax: with zero projections every score is 0, so each weight is 1 / (1 + seq_k)
// (softmax: 1 / seq_k).
TYPED_TEST(SeqMhaTest, QuietSoftmax) {
  using B = TypeParam;
  for (bool quiet : {false, true}) {
    auto m = nn::MultiHeadAttentionConfig{.d_model = 4, .n_heads = 2, .quiet_softmax = quiet}
                 .template init<B>(dev<B>());
    m.eval();
    m.in_proj_weight->set(Tensor<B, 2>::zeros(Shape{12, 4}, dev<B>()));
    m.in_proj_bias->set(Tensor<B, 1>::zeros(Shape{12}, dev<B>()));
    auto x = Tensor<B, 3>::ones(Shape{1, 2, 4}, dev<B>());
    auto k = Tensor<B, 3>::ones(Shape{1, 5, 4}, dev<B>());
    auto w = m.forward(nn::MhaInput<B>{x, k, k}).weights->template to_vec<double>();
    ASSERT_EQ(w.size(), 20u);
    for (double v : w) EXPECT_NEAR(v, quiet ? 1.0 / 6.0 : 1.0 / 5.0, 1e-7);
  }
}

// Burn's initialisation: Kaiming uniform with gain 1/sqrt(3) per projection gives
// |w| <= 1/sqrt(fan_in); torch's layouts and names.
TYPED_TEST(SeqMhaTest, InitShapesAndBounds) {
  using B = TypeParam;
  auto m = nn::MultiHeadAttentionConfig{.d_model = 8, .n_heads = 2}.template init<B>(dev<B>());
  EXPECT_EQ(m.in_proj_weight->shape(), (Shape{24, 8}));
  EXPECT_EQ(m.in_proj_bias->shape(), (Shape{24}));
  EXPECT_EQ(m.out_proj.weight.shape(), (Shape{8, 8}));
  EXPECT_FALSE(m.q_proj_weight.has_value());
  EXPECT_EQ(nn::num_params(m), 4 * 64 + 4 * 8);
  double mx = 0;
  for (double v : m.in_proj_weight->val().template to_vec<double>()) mx = std::max(mx, std::abs(v));
  EXPECT_LE(mx, 1.0 / std::sqrt(8.0) + 1e-7);
  EXPECT_GT(mx, 0.1);
  EXPECT_DOUBLE_EQ(m.dropout, 0.1);

  auto kv =
      nn::MultiHeadAttentionConfig{.d_model = 8, .n_heads = 4, .bias = false, .kdim = 6, .vdim = 3}
          .template init<B>(dev<B>());
  EXPECT_FALSE(kv.in_proj_weight.has_value());
  EXPECT_FALSE(kv.in_proj_bias.has_value());
  EXPECT_FALSE(kv.out_proj.bias.has_value());
  EXPECT_EQ(kv.q_proj_weight->shape(), (Shape{8, 8}));
  EXPECT_EQ(kv.k_proj_weight->shape(), (Shape{8, 6}));
  EXPECT_EQ(kv.v_proj_weight->shape(), (Shape{8, 3}));
  std::vector<std::string> names;
  for (const auto& [k, v] : nn::state_dict(kv)) names.push_back(k);
  EXPECT_EQ(names, (std::vector<std::string>{"q_proj_weight", "k_proj_weight", "v_proj_weight",
                                             "out_proj.weight"}));
}

TYPED_TEST(SeqMhaTest, BadInputThrows) {
  using B = TypeParam;
  const auto d = dev<B>();
  auto m = nn::MultiHeadAttentionConfig{.d_model = 8, .n_heads = 2}.template init<B>(d);
  auto x = Tensor<B, 3>::ones(Shape{2, 3, 8}, d);
  EMBER_EXPECT_THROW_MSG(
      m.forward(nn::MhaInput<B>::self_attn(Tensor<B, 3>::ones(Shape{2, 3, 6}, d))), ShapeError,
      "[MultiHeadAttention]");
  EMBER_EXPECT_THROW_MSG(m.forward(nn::MhaInput<B>{x, Tensor<B, 3>::ones(Shape{1, 4, 8}, d),
                                                   Tensor<B, 3>::ones(Shape{1, 4, 8}, d)}),
                         ShapeError, "[MultiHeadAttention]");
  EMBER_EXPECT_THROW_MSG(m.forward(nn::MhaInput<B>{x, x, Tensor<B, 3>::ones(Shape{2, 4, 8}, d)}),
                         ShapeError, "[MultiHeadAttention]");
  EMBER_EXPECT_THROW_MSG(m.forward(nn::MhaInput<B>::self_attn(x).with_mask_pad(
                             Tensor<B, 2, Bool>::full(Shape{2, 4}, 0.0, d))),
                         ShapeError, "mask_pad");
  EMBER_EXPECT_THROW_MSG(m.forward(nn::MhaInput<B>::self_attn(x).with_mask_attn(
                             Tensor<B, 3, Bool>::full(Shape{3, 3, 3}, 0.0, d))),
                         ShapeError, "mask_attn");
  auto cache = nn::MhaCache<B>::autoregressive();
  m.forward_cache(nn::MhaInput<B>::self_attn(x), cache);
  EMBER_EXPECT_THROW_MSG(
      m.forward_cache(nn::MhaInput<B>::self_attn(Tensor<B, 3>::ones(Shape{1, 1, 8}, d)), cache),
      ShapeError, "cache holds batch size 2");
  EMBER_EXPECT_THROW_MSG(
      (nn::MultiHeadAttentionConfig{.d_model = 8, .n_heads = 3}.template init<B>(d)), ValueError,
      "[MultiHeadAttentionConfig]");
  EMBER_EXPECT_THROW_MSG(
      (nn::MultiHeadAttentionConfig{.d_model = 8, .n_heads = 2, .dropout = 1.5}.template init<B>(
          d)),
      ValueError, "dropout");
}

}  // namespace

namespace {

// A torch state dict loads through the core's load_state_dict with no adapter (kdim/vdim
// layout), and valid() (no autodiff, eval mode) gives torch's output.
TYPED_TEST(SeqMhaTest, LoadStateDictAndValid) {
  using B = TypeParam;
  const auto c = case_named("mha_kdim_vdim");
  auto m = nn::MultiHeadAttentionConfig{.d_model = 8, .n_heads = 2, .kdim = 6, .vdim = 4}
               .template init<B>(dev<B>());
  std::map<std::string, TensorData> sd;
  for (const auto& k : keys_with(c, "p.")) sd[k] = c.tensor("p." + k);
  const auto report = m.load_state_dict(sd);
  EXPECT_EQ(report.loaded.size(), sd.size());
  auto v = m.valid();
  EXPECT_FALSE(v.training);
  const auto vd = v.out_proj.weight.val().device();
  using VB = typename std::remove_cvref_t<decltype(v.out_proj.weight.val())>::Backend;
  auto q = Tensor<VB, 3>::from_data(c.tensor("query"), vd);
  auto k = Tensor<VB, 3>::from_data(c.tensor("key"), vd);
  auto val = Tensor<VB, 3>::from_data(c.tensor("value"), vd);
  auto pad = Tensor<VB, 2, Bool>::from_data(c.tensor("key_padding_mask"), vd);
  auto out = v.forward(nn::MhaInput<VB>{q, k, val}.with_mask_pad(pad));
  expect_approx(out.context.into_data(), c.tensor("out"), tol());
}

TEST(SeqMhaConfig, JsonRoundTrip) {
  nn::MultiHeadAttentionConfig cfg{
      .d_model = 16, .n_heads = 4, .dropout = 0.0, .bias = false, .kdim = 3, .quiet_softmax = true};
  const auto j = nn::config_to_json(cfg);
  EXPECT_EQ(j.at("kdim"), 3);
  const auto back = nn::config_from_json<nn::MultiHeadAttentionConfig>(j);
  EXPECT_EQ(back.d_model, 16);
  EXPECT_EQ(back.n_heads, 4);
  EXPECT_EQ(back.dropout, 0.0);
  EXPECT_FALSE(back.bias);
  EXPECT_EQ(back.kdim, 3);
  EXPECT_EQ(back.vdim, 0);
  EXPECT_TRUE(back.quiet_softmax);
  EXPECT_EQ(nn::config_to_json(back), j);
  // Missing keys keep Burn's defaults.
  const auto partial =
      nn::config_from_json<nn::MultiHeadAttentionConfig>(nlohmann::json{{"d_model", 8}});
  EXPECT_EQ(partial.d_model, 8);
  EXPECT_DOUBLE_EQ(partial.dropout, 0.1);
  EXPECT_TRUE(partial.bias);
  EXPECT_EQ(nn::config_to_json(partial.initializer),
            nn::config_to_json(nn::Initializer::kaiming_uniform(1.0 / std::sqrt(3.0), false)));
}

}  // namespace
