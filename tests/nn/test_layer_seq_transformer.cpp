// Transformer layers against PyTorch (tests/fixtures/gen_nn_seq.py ->
// nn/seq_transformer.json, nn/seq_misc.json): TransformerEncoderLayer / TransformerEncoder /
// TransformerDecoderLayer / TransformerDecoder (post- and pre-norm, relu and gelu, padding
// and causal masks, final norm) loaded from torch's state dicts, and Burn's
// PositionWiseFeedForward; outputs and gradients of sum(out * w) wrt the inputs and every
// parameter within rel 1e-4 / abs 1e-5 on Autodiff<Cpu> and Dispatch (cpu+autodiff). Also the
// KV caches of the stacks against the full causal forward, dropout, configs and errors.
#include <gtest/gtest.h>

#include <map>

#include "ember/nn/transformer.hpp"
#include "seq_support.hpp"

namespace {

using namespace ember;
using namespace ember::test;
using namespace ember::test::seq;

nn::TransformerActivation act(const FixtureCase& c) {
  return c.param<std::string>("activation") == "gelu" ? nn::TransformerActivation::Gelu
                                                      : nn::TransformerActivation::Relu;
}

template <class Cfg>
Cfg cfg_from(const FixtureCase& c) {
  return Cfg{.d_model = c.param<std::int64_t>("d_model"),
             .d_ff = c.param<std::int64_t>("d_ff"),
             .n_heads = c.param<std::int64_t>("n_heads"),
             .n_layers = c.has("n_layers") ? c.param<std::int64_t>("n_layers") : 1,
             .dropout = 0.2,  // inactive: the tests run in eval mode
             .norm_first = c.param<bool>("norm_first"),
             .activation = act(c),
             .layer_norm_eps = c.param<double>("layer_norm_eps"),
             .final_norm = c.has("final_norm") && c.param<bool>("final_norm")};
}

template <class B>
nn::TransformerEncoderInput<B> enc_input(const FixtureCase& c, const Tensor<B, 3>& x) {
  nn::TransformerEncoderInput<B> in{x};
  if (c.has("src_key_padding_mask"))
    in = in.with_mask_pad(ten<B, 2, Bool>(c, "src_key_padding_mask"));
  if (c.has("mask")) in = in.with_mask_attn(ten<B, 2, Bool>(c, "mask"));
  return in;
}

template <class B>
nn::TransformerDecoderInput<B> dec_input(const FixtureCase& c, const Tensor<B, 3>& x,
                                         const Tensor<B, 3>& memory) {
  nn::TransformerDecoderInput<B> in{x, memory};
  if (c.has("tgt_mask")) in = in.with_target_mask_attn(ten<B, 2, Bool>(c, "tgt_mask"));
  if (c.has("tgt_key_padding_mask"))
    in = in.with_target_mask_pad(ten<B, 2, Bool>(c, "tgt_key_padding_mask"));
  if (c.has("memory_key_padding_mask"))
    in = in.with_memory_mask_pad(ten<B, 2, Bool>(c, "memory_key_padding_mask"));
  return in;
}

template <class B, class M>
void check_encoder_like(M& m, const FixtureCase& c) {
  load_params(m, c);
  m.eval();
  auto x = ten<B, 3>(c, "x").require_grad();
  auto out = m.forward(enc_input<B>(c, x));
  expect_approx(out.into_data(), c.tensor("out"), tol());
  auto grads = weighted(out, c, "w").backward();
  expect_approx(x.grad(grads)->into_data(), c.tensor("gx"), tol());
  check_param_grads(m, grads, c);
}

template <class B, class M>
void check_decoder_like(M& m, const FixtureCase& c) {
  load_params(m, c);
  m.eval();
  auto x = ten<B, 3>(c, "x").require_grad();
  auto memory = ten<B, 3>(c, "memory").require_grad();
  auto out = m.forward(dec_input<B>(c, x, memory));
  expect_approx(out.into_data(), c.tensor("out"), tol());
  auto grads = weighted(out, c, "w").backward();
  expect_approx(x.grad(grads)->into_data(), c.tensor("gx"), tol());
  expect_approx(memory.grad(grads)->into_data(), c.tensor("gmemory"), tol());
  check_param_grads(m, grads, c);
}

template <class B>
struct RunEncoderLayer {
  void operator()(const FixtureCase& c) {
    auto m = cfg_from<nn::TransformerEncoderConfig>(c).init_layer<B>(dev<B>());
    check_encoder_like<B>(m, c);
  }
};
template <class B>
struct RunEncoder {
  void operator()(const FixtureCase& c) {
    auto m = cfg_from<nn::TransformerEncoderConfig>(c).init<B>(dev<B>());
    check_encoder_like<B>(m, c);
  }
};
template <class B>
struct RunDecoderLayer {
  void operator()(const FixtureCase& c) {
    auto m = cfg_from<nn::TransformerDecoderConfig>(c).init_layer<B>(dev<B>());
    check_decoder_like<B>(m, c);
  }
};
template <class B>
struct RunDecoder {
  void operator()(const FixtureCase& c) {
    auto m = cfg_from<nn::TransformerDecoderConfig>(c).init<B>(dev<B>());
    check_decoder_like<B>(m, c);
  }
};
template <class B>
struct RunPwff {
  void operator()(const FixtureCase& c) {
    auto m = nn::PositionWiseFeedForwardConfig{.d_model = c.param<std::int64_t>("d_model"),
                                               .d_ff = c.param<std::int64_t>("d_ff"),
                                               .activation = act(c)}
                 .init<B>(dev<B>());
    load_params(m, c);
    m.eval();
    auto x = ten<B, 3>(c, "x").require_grad();
    auto out = m.forward(x);
    expect_approx(out.into_data(), c.tensor("out"), tol());
    auto grads = weighted(out, c, "w").backward();
    expect_approx(x.grad(grads)->into_data(), c.tensor("gx"), tol());
    check_param_grads(m, grads, c);
  }
};

const char* kFile = "nn/seq_transformer";
const Registrar<RunEncoderLayer> reg_el("SeqEncoderLayer", kFile, "encoder_layer");
const Registrar<RunEncoder> reg_e("SeqEncoder", kFile, "encoder");
const Registrar<RunDecoderLayer> reg_dl("SeqDecoderLayer", kFile, "decoder_layer");
const Registrar<RunDecoder> reg_d("SeqDecoder", kFile, "decoder");
const Registrar<RunPwff> reg_pwff("SeqPwff", "nn/seq_misc", "pwff");

FixtureCase case_named(const std::string& name) {
  for (const auto& c : fixture_cases(kFile)) {
    if (c.name == name) return c;
  }
  throw std::runtime_error("no fixture case " + name);
}

template <class B>
class SeqTransformerTest : public ::testing::Test {};
using Backends = ::testing::Types<AdCpu, Dispatch>;
TYPED_TEST_SUITE(SeqTransformerTest, Backends);

// The causal flag gives torch's result for the explicit causal masks of the fixtures.
TYPED_TEST(SeqTransformerTest, CausalFlagMatchesMask) {
  using B = TypeParam;
  {
    const auto c = case_named("encoder_pre_causal");
    auto m = cfg_from<nn::TransformerEncoderConfig>(c).template init<B>(dev<B>());
    load_params(m, c);
    m.eval();
    auto out = m.forward(nn::TransformerEncoderInput<B>{ten<B, 3>(c, "x")}.with_causal());
    expect_approx(out.into_data(), c.tensor("out"), tol());
  }
  {
    const auto c = case_named("decoder_post_norm");
    auto m = cfg_from<nn::TransformerDecoderConfig>(c).template init<B>(dev<B>());
    load_params(m, c);
    m.eval();
    nn::TransformerDecoderInput<B> in{ten<B, 3>(c, "x"), ten<B, 3>(c, "memory")};
    in = in.with_causal().with_memory_mask_pad(ten<B, 2, Bool>(c, "memory_key_padding_mask"));
    expect_approx(m.forward(in).into_data(), c.tensor("out"), tol());
  }
}

// Encoder KV cache: the sequence fed in pieces gives the rows of torch's causal output.
TYPED_TEST(SeqTransformerTest, EncoderCacheMatchesFullCausalForward) {
  using B = TypeParam;
  const auto c = case_named("encoder_pre_causal");
  auto m = cfg_from<nn::TransformerEncoderConfig>(c).template init<B>(dev<B>());
  load_params(m, c);
  m.eval();
  const auto x = ten<B, 3>(c, "x");
  const auto full = ten<B, 3>(c, "out");
  auto cache = m.new_cache();
  std::int64_t at = 0;
  for (std::int64_t n : {std::int64_t{1}, std::int64_t{3}, std::int64_t{1}}) {
    auto out =
        m.forward_cache(nn::TransformerEncoderInput<B>{x.narrow(1, at, n)}.with_causal(), cache);
    expect_approx(out.into_data(), full.narrow(1, at, n).into_data(), tol());
    at += n;
  }
  EXPECT_EQ(at, x.dim(1));
  EXPECT_EQ(cache.layers.at(1).len(), at);
}

// Decoder KV cache, token by token (self-attention appends, cross-attention reuses the
// memory), post-norm with a final norm and pre-norm, against torch's causal outputs.
TYPED_TEST(SeqTransformerTest, DecoderCacheMatchesFullCausalForward) {
  using B = TypeParam;
  for (const char* name : {"decoder_post_norm", "decoder_pre_causal"}) {
    SCOPED_TRACE(name);
    const auto c = case_named(name);
    auto m = cfg_from<nn::TransformerDecoderConfig>(c).template init<B>(dev<B>());
    load_params(m, c);
    m.eval();
    const auto x = ten<B, 3>(c, "x"), memory = ten<B, 3>(c, "memory");
    const auto full = ten<B, 3>(c, "out");
    auto cache = m.new_cache();
    for (std::int64_t t = 0; t < x.dim(1); ++t) {
      nn::TransformerDecoderInput<B> in{x.narrow(1, t, 1), memory};
      in = in.with_causal();
      if (c.has("memory_key_padding_mask"))
        in = in.with_memory_mask_pad(ten<B, 2, Bool>(c, "memory_key_padding_mask"));
      auto out = m.forward_cache(in, cache);
      expect_approx(out.into_data(), full.narrow(1, t, 1).into_data(), tol());
    }
  }
}

// Train mode activates every dropout (results change, eval restores torch's output);
// training flags propagate to the sub-modules.
TYPED_TEST(SeqTransformerTest, DropoutOnlyInTraining) {
  using B = TypeParam;
  const auto c = case_named("encoder_layer_post_relu");
  auto m = cfg_from<nn::TransformerEncoderConfig>(c).template init_layer<B>(dev<B>());
  load_params(m, c);
  m.train();
  EXPECT_TRUE(m.self_attn.training);
  EXPECT_TRUE(m.dropout1.training);
  const auto x = ten<B, 3>(c, "x");
  auto a = m.forward(enc_input<B>(c, x)).template to_vec<double>();
  auto ref = c.tensor("out").template to_vec<double>();
  double diff = 0;
  for (std::size_t i = 0; i < a.size(); ++i) diff = std::max(diff, std::abs(a[i] - ref[i]));
  EXPECT_GT(diff, 1e-3);
  m.eval();
  EXPECT_FALSE(m.self_attn.training);
  EXPECT_FALSE(m.dropout.training);
  expect_approx(m.forward(enc_input<B>(c, x)).into_data(), c.tensor("out"), tol());
}

// Burn's defaults and torch's parameter names of a fresh stack.
TYPED_TEST(SeqTransformerTest, InitStructure) {
  using B = TypeParam;
  nn::TransformerDecoderConfig cfg{.d_model = 8, .d_ff = 16, .n_heads = 2, .n_layers = 2};
  EXPECT_EQ(cfg.activation, nn::TransformerActivation::Gelu);
  EXPECT_DOUBLE_EQ(cfg.dropout, 0.1);
  auto m = cfg.template init<B>(dev<B>());
  ASSERT_EQ(m.layers.size(), 2u);
  EXPECT_FALSE(m.norm.has_value());
  EXPECT_DOUBLE_EQ(m.layers[0].dropout2.prob, 0.1);
  std::vector<std::string> names;
  for (const auto& [k, v] : nn::state_dict(m)) {
    if (k.rfind("layers.1.", 0) == 0) names.push_back(k.substr(9));
  }
  EXPECT_EQ(
      names,
      (std::vector<std::string>{
          "self_attn.in_proj_weight", "self_attn.in_proj_bias", "self_attn.out_proj.weight",
          "self_attn.out_proj.bias", "multihead_attn.in_proj_weight", "multihead_attn.in_proj_bias",
          "multihead_attn.out_proj.weight", "multihead_attn.out_proj.bias", "linear1.weight",
          "linear1.bias", "linear2.weight", "linear2.bias", "norm1.weight", "norm1.bias",
          "norm2.weight", "norm2.bias", "norm3.weight", "norm3.bias"}));
  // 2 x (2 MHA of 4*64+4*8, linears 8*16+16 + 16*8+8, 3 norms of 16)
  EXPECT_EQ(nn::num_params(m), 2 * (2 * 288 + 280 + 48));

  auto enc =
      nn::TransformerEncoderConfig{
          .d_model = 8, .d_ff = 16, .n_heads = 2, .n_layers = 1, .bias = false, .final_norm = true}
          .template init<B>(dev<B>());
  ASSERT_TRUE(enc.norm.has_value());
  EXPECT_FALSE(enc.norm->bias.has_value());
  EXPECT_FALSE(enc.layers[0].linear1.bias.has_value());
  EXPECT_FALSE(enc.layers[0].self_attn.in_proj_bias.has_value());
}

TYPED_TEST(SeqTransformerTest, BadInputThrows) {
  using B = TypeParam;
  const auto d = dev<B>();
  nn::TransformerEncoderConfig ecfg{.d_model = 8, .d_ff = 16, .n_heads = 2, .n_layers = 1};
  auto enc = ecfg.template init<B>(d);
  auto layer = ecfg.template init_layer<B>(d);
  auto bad = Tensor<B, 3>::ones(Shape{2, 3, 6}, d);
  auto x = Tensor<B, 3>::ones(Shape{2, 3, 8}, d);
  EMBER_EXPECT_THROW_MSG(enc.forward(nn::TransformerEncoderInput<B>{bad}), ShapeError,
                         "[TransformerEncoder]");
  EMBER_EXPECT_THROW_MSG(layer.forward(nn::TransformerEncoderInput<B>{bad}), ShapeError,
                         "[TransformerEncoderLayer]");
  EMBER_EXPECT_THROW_MSG(enc.forward(nn::TransformerEncoderInput<B>{x}.with_mask_pad(
                             Tensor<B, 2, Bool>::full(Shape{2, 5}, 0.0, d))),
                         ShapeError, "mask_pad");
  nn::TransformerDecoderConfig dcfg{.d_model = 8, .d_ff = 16, .n_heads = 2, .n_layers = 1};
  auto dec = dcfg.template init<B>(d);
  EMBER_EXPECT_THROW_MSG(dec.forward(nn::TransformerDecoderInput<B>{bad, x}), ShapeError,
                         "[TransformerDecoder]");
  EMBER_EXPECT_THROW_MSG(dec.forward(nn::TransformerDecoderInput<B>{x, bad}), ShapeError,
                         "[TransformerDecoderLayer]");
  auto pw = nn::PositionWiseFeedForwardConfig{.d_model = 8, .d_ff = 4}.template init<B>(d);
  EMBER_EXPECT_THROW_MSG(pw.forward(bad), ShapeError, "[PositionWiseFeedForward]");
  auto cache = dec.new_cache();
  cache.layers.clear();
  EMBER_EXPECT_THROW_MSG(dec.forward_cache(nn::TransformerDecoderInput<B>{x, x}, cache), ValueError,
                         "new_cache");
  EMBER_EXPECT_THROW_MSG(
      (nn::TransformerEncoderConfig{.d_model = 8, .d_ff = 16, .n_heads = 3, .n_layers = 1}
           .template init<B>(d)),
      ValueError, "[TransformerEncoderConfig]");
  EMBER_EXPECT_THROW_MSG(
      (nn::PositionWiseFeedForwardConfig{.d_model = 8, .d_ff = 4, .dropout = -0.1}.template init<B>(
          d)),
      ValueError, "[PositionWiseFeedForwardConfig]");
}

}  // namespace

namespace {

TEST(SeqTransformerConfig, JsonRoundTrip) {
  nn::TransformerDecoderConfig cfg{.d_model = 8,
                                   .d_ff = 16,
                                   .n_heads = 2,
                                   .n_layers = 3,
                                   .norm_first = true,
                                   .activation = nn::TransformerActivation::Relu,
                                   .layer_norm_eps = 1e-6,
                                   .final_norm = true};
  const auto j = nn::config_to_json(cfg);
  EXPECT_EQ(j.at("activation"), "relu");
  const auto back = nn::config_from_json<nn::TransformerDecoderConfig>(j);
  EXPECT_EQ(back.n_layers, 3);
  EXPECT_TRUE(back.norm_first);
  EXPECT_TRUE(back.final_norm);
  EXPECT_EQ(back.activation, nn::TransformerActivation::Relu);
  EXPECT_DOUBLE_EQ(back.layer_norm_eps, 1e-6);
  EXPECT_EQ(nn::config_to_json(back), j);
  const auto enc = nn::config_from_json<nn::TransformerEncoderConfig>(
      nlohmann::json{{"d_model", 4}, {"activation", "gelu"}});
  EXPECT_EQ(enc.activation, nn::TransformerActivation::Gelu);
  EXPECT_DOUBLE_EQ(enc.dropout, 0.1);
  EXPECT_FALSE(enc.norm_first);
  EXPECT_DOUBLE_EQ(enc.layer_norm_eps, 1e-5);
  const auto pw = nn::config_from_json<nn::PositionWiseFeedForwardConfig>(nn::config_to_json(
      nn::PositionWiseFeedForwardConfig{.d_model = 4, .d_ff = 8, .dropout = 0.0}));
  EXPECT_EQ(pw.d_ff, 8);
  EXPECT_EQ(pw.dropout, 0.0);
  EXPECT_EQ(pw.activation, nn::TransformerActivation::Gelu);
}

// A whole torch TransformerEncoder state dict loads through load_state_dict; wrong shapes
// are reported and leave the model unchanged.
TYPED_TEST(SeqTransformerTest, LoadStateDict) {
  using B = TypeParam;
  const auto c = case_named("encoder_post_norm");
  auto m = cfg_from<nn::TransformerEncoderConfig>(c).template init<B>(dev<B>());
  std::map<std::string, TensorData> sd;
  for (const auto& k : keys_with(c, "p.")) sd[k] = c.tensor("p." + k);
  auto bad = sd;
  bad["layers.1.linear1.weight"] = c.tensor("p.layers.1.linear2.weight");
  const auto before = m.layers[0].norm1.weight.val().into_data();
  EXPECT_THROW(m.load_state_dict(bad), nn::LoadError);
  ember::test::expect_eq(m.layers[0].norm1.weight.val().into_data(), before);
  EXPECT_EQ(m.load_state_dict(sd).loaded.size(), sd.size());
  m.eval();
  expect_approx(m.forward(enc_input<B>(c, ten<B, 3>(c, "x"))).into_data(), c.tensor("out"), tol());
}

}  // namespace

namespace {

// valid() rebuilds the decoder stack (vector of layers, optional final norm) without
// autodiff, in eval mode, with torch's output.
TYPED_TEST(SeqTransformerTest, ValidDecoder) {
  using B = TypeParam;
  const auto c = case_named("decoder_post_norm");
  auto m = cfg_from<nn::TransformerDecoderConfig>(c).template init<B>(dev<B>());
  load_params(m, c);
  auto v = m.valid();
  EXPECT_FALSE(v.is_training());
  EXPECT_TRUE(v.norm.has_value());
  const auto vd = v.layers[0].linear1.weight.val().device();
  using VB = typename std::remove_cvref_t<decltype(v.layers[0].linear1.weight.val())>::Backend;
  static_assert(!AutodiffBackend<VB> || std::is_same_v<VB, Dispatch>);
  nn::TransformerDecoderInput<VB> in{Tensor<VB, 3>::from_data(c.tensor("x"), vd),
                                     Tensor<VB, 3>::from_data(c.tensor("memory"), vd)};
  in = in.with_target_mask_attn(Tensor<VB, 2, Bool>::from_data(c.tensor("tgt_mask"), vd))
           .with_memory_mask_pad(
               Tensor<VB, 2, Bool>::from_data(c.tensor("memory_key_padding_mask"), vd));
  expect_approx(v.forward(in).into_data(), c.tensor("out"), tol());
}

}  // namespace
