// Recurrent layers and position encodings against PyTorch (tests/fixtures/gen_nn_seq.py ->
// nn/seq_misc.json): Rnn (tanh, relu), Lstm and Gru, uni- and bidirectional, with and
// without bias and initial states, loaded from torch.nn.RNN/LSTM/GRU state dicts; sinusoidal
// PositionalEncoding and RotaryEncoding against their formulas. Outputs, final states and
// gradients of sum(out * w) + sum(h_n * w2) (+ sum(c_n * w3)) wrt the input, the initial
// states and every parameter, within rel 1e-4 / abs 1e-5, on Autodiff<Cpu> and Dispatch
// (cpu+autodiff). Also Burn's reference values, initialisation, GRU reset_after=false and
// errors.
#include <gtest/gtest.h>

#include <cmath>

#include "ember/nn/pos_encoding.hpp"
#include "ember/nn/rnn.hpp"
#include "seq_support.hpp"

namespace {

using namespace ember;
using namespace ember::test;
using namespace ember::test::seq;

const char* kFile = "nn/seq_misc";

template <class Cfg>
Cfg rcfg(const FixtureCase& c) {
  Cfg cfg;
  cfg.d_input = c.param<std::int64_t>("d_input");
  cfg.d_hidden = c.param<std::int64_t>("d_hidden");
  cfg.bias = c.param<bool>("bias");
  cfg.bidirectional = c.param<bool>("bidirectional");
  return cfg;
}

template <class B, class Grads>
void check_input_grads(const FixtureCase& c, const Grads& grads, const Tensor<B, 3>& x,
                       const std::optional<Tensor<B, 3>>& h0,
                       const std::optional<Tensor<B, 3>>& c0) {
  expect_approx(x.grad(grads)->into_data(), c.tensor("gx"), tol());
  if (h0) expect_approx(h0->grad(grads)->into_data(), c.tensor("gh0"), tol());
  if (c0) expect_approx(c0->grad(grads)->into_data(), c.tensor("gc0"), tol());
}

template <class B>
std::optional<Tensor<B, 3>> opt_leaf(const FixtureCase& c, const char* key) {
  if (!c.has(key)) return std::nullopt;
  return ten<B, 3>(c, key).require_grad();
}

/// Rnn or Gru `m` (one hidden state) against the case: loads its parameters, then checks
/// the output, the final hidden state and every gradient.
template <class B, class M>
void check_hidden_state_layer(M m, const FixtureCase& c) {
  load_params(m, c);
  auto x = ten<B, 3>(c, "x").require_grad();
  auto h0 = opt_leaf<B>(c, "h0");
  auto out = m.forward(x, h0);
  expect_approx(out.output.into_data(), c.tensor("out"), tol());
  expect_approx(out.hidden.into_data(), c.tensor("out2"), tol());
  auto grads = weighted(out.output, c, "w").add(weighted(out.hidden, c, "w2")).backward();
  check_input_grads<B>(c, grads, x, h0, std::nullopt);
  check_param_grads(m, grads, c);
}

template <class B>
struct RunRnn {
  void operator()(const FixtureCase& c) {
    auto cfg = rcfg<nn::RnnConfig>(c);
    cfg.nonlinearity = c.param<std::string>("nonlinearity") == "relu" ? nn::RnnNonlinearity::Relu
                                                                      : nn::RnnNonlinearity::Tanh;
    check_hidden_state_layer<B>(cfg.template init<B>(dev<B>()), c);
  }
};

template <class B>
struct RunGru {
  void operator()(const FixtureCase& c) {
    check_hidden_state_layer<B>(rcfg<nn::GruConfig>(c).template init<B>(dev<B>()), c);
  }
};

template <class B>
struct RunLstm {
  void operator()(const FixtureCase& c) {
    auto m = rcfg<nn::LstmConfig>(c).template init<B>(dev<B>());
    load_params(m, c);
    auto x = ten<B, 3>(c, "x").require_grad();
    auto h0 = opt_leaf<B>(c, "h0");
    auto c0 = opt_leaf<B>(c, "c0");
    std::optional<nn::LstmState<B>> s0;
    if (h0) s0 = nn::LstmState<B>{*c0, *h0};
    auto out = m.forward(x, s0);
    expect_approx(out.output.into_data(), c.tensor("out"), tol());
    expect_approx(out.state.hidden.into_data(), c.tensor("out2"), tol());
    expect_approx(out.state.cell.into_data(), c.tensor("out3"), tol());
    auto grads = weighted(out.output, c, "w")
                     .add(weighted(out.state.hidden, c, "w2"))
                     .add(weighted(out.state.cell, c, "w3"))
                     .backward();
    check_input_grads<B>(c, grads, x, h0, c0);
    check_param_grads(m, grads, c);
  }
};

template <class B>
struct RunPosEncoding {
  void operator()(const FixtureCase& c) {
    auto m = nn::PositionalEncodingConfig{.max_sequence_size =
                                              c.param<std::int64_t>("max_sequence_size"),
                                          .d_model = c.param<std::int64_t>("d_model"),
                                          .max_timescale = c.param<std::int64_t>("max_timescale")}
                 .template init<B>(dev<B>());
    auto x = ten<B, 3>(c, "x").require_grad();
    auto out = m.forward(x);
    expect_approx(out.into_data(), c.tensor("out"), tol());
    auto grads = weighted(out, c, "w").backward();
    expect_approx(x.grad(grads)->into_data(), c.tensor("gx"), tol());
    EXPECT_EQ(nn::num_params(m), 0);
  }
};

template <class B, std::size_t D>
void run_rotary(const FixtureCase& c) {
  auto m =
      nn::RotaryEncodingConfig{.max_sequence_length = c.param<std::int64_t>("max_sequence_length"),
                               .d_model = c.param<std::int64_t>("d_model"),
                               .theta = c.param<double>("theta")}
          .template init<B>(dev<B>());
  auto x = ten<B, D>(c, "x").require_grad();
  const auto start = c.param<std::int64_t>("start");
  auto out = start == 0 ? m.forward(x) : m.apply(x, start);
  expect_approx(out.into_data(), c.tensor("out"), tol());
  auto grads = weighted(out, c, "w").backward();
  expect_approx(x.grad(grads)->into_data(), c.tensor("gx"), tol());
}

template <class B>
struct RunRotary {
  void operator()(const FixtureCase& c) {
    if (c.tensor("x").shape().rank() == 4)
      run_rotary<B, 4>(c);
    else
      run_rotary<B, 3>(c);
  }
};

const Registrar<RunRnn> reg_rnn("SeqRnn", kFile, "rnn");
const Registrar<RunLstm> reg_lstm("SeqLstm", kFile, "lstm");
const Registrar<RunGru> reg_gru("SeqGru", kFile, "gru");
const Registrar<RunPosEncoding> reg_pe("SeqPositionalEncoding", kFile, "pos_encoding");
const Registrar<RunRotary> reg_rope("SeqRotary", kFile, "rotary");

template <class B>
class SeqRecurrentTest : public ::testing::Test {};
using Backends = ::testing::Types<AdCpu, Dispatch>;
TYPED_TEST_SUITE(SeqRecurrentTest, Backends);

// Burn's sinusoid table (pos_encoding.rs test values, d_model 6).
TYPED_TEST(SeqRecurrentTest, SinusoidsBurnValues) {
  using B = TypeParam;
  auto s = nn::generate_sinusoids<B>(3, 6, 10000, dev<B>());
  auto expected =
      Tensor<B, 2>::from_floats({{0.00000, 1.00000, 0.00000, 1.00000, 0.00000, 1.00000},
                                 {0.84147, 0.54030, 0.04640, 0.99892, 0.00215, 1.00000},
                                 {0.90930, -0.41615, 0.09270, 0.99569, 0.00431, 0.99999}},
                                dev<B>());
  expect_approx(s.into_data(), expected.into_data(), Tolerance::rel_abs(0, 1e-5));
  // The offset continues the table: positions 1..2 are rows 1..2.
  auto tail = nn::generate_sinusoids<B>(2, 6, 10000, dev<B>(), 1);
  expect_approx(tail.into_data(), s.narrow(0, 1, 2).into_data(), Tolerance::rel_abs(0, 1e-7));
}

// Burn's rotary test values ([[1, 2, 3, 4], [5, 6, 7, 8]] at positions 0, 1, d_model 4), and
// apply(x, start) on a slice equals the rows of the full forward (the KV-cache use).
TYPED_TEST(SeqRecurrentTest, RotaryBurnValuesAndOffset) {
  using B = TypeParam;
  auto rope =
      nn::RotaryEncodingConfig{.max_sequence_length = 10, .d_model = 4}.template init<B>(dev<B>());
  auto x = Tensor<B, 3>::from_floats({{{1, 2, 3, 4}, {5, 6, 7, 8}}}, dev<B>());
  auto expected = Tensor<B, 3>::from_floats(
      {{{1.0, 2.0, 3.0, 4.0}, {-2.3473, 7.4492, 6.9197, 8.0696}}}, dev<B>());
  expect_approx(rope.forward(x).into_data(), expected.into_data(), Tolerance::rel_abs(0, 1e-4));
  auto seq = Tensor<B, 4>::random(Shape{2, 3, 6, 4}, Distribution::default_(), dev<B>());
  auto full = rope.forward(seq);
  expect_approx(rope.apply(seq.narrow(2, 4, 2), 4).into_data(), full.narrow(2, 4, 2).into_data(),
                Tolerance::rel_abs(1e-6, 1e-6));
}

// PositionalEncoding's start offset continues the sequence.
TYPED_TEST(SeqRecurrentTest, PositionalEncodingOffset) {
  using B = TypeParam;
  auto pe =
      nn::PositionalEncodingConfig{.max_sequence_size = 8, .d_model = 4}.template init<B>(dev<B>());
  auto x = Tensor<B, 3>::random(Shape{2, 6, 4}, Distribution::default_(), dev<B>());
  auto full = pe.forward(x);
  expect_approx(pe.forward(x.narrow(1, 3, 3), 3).into_data(), full.narrow(1, 3, 3).into_data(),
                Tolerance::rel_abs(1e-6, 1e-6));
}

// GRU with the reset gate before the product (Cho et al. v3, Burn's reset_after = false),
// checked against the formula evaluated step by step with tensor ops.
TYPED_TEST(SeqRecurrentTest, GruResetBefore) {
  using B = TypeParam;
  const auto d = dev<B>();
  auto m = nn::GruConfig{.d_input = 3, .d_hidden = 4, .reset_after = false}.template init<B>(d);
  auto x = Tensor<B, 3>::random(Shape{2, 3, 3}, Distribution::uniform(-1, 1), d);
  auto out = m.forward(x);
  const auto wi = m.weight_ih_l0.val(), wh = m.weight_hh_l0.val();
  const auto bi = m.bias_ih_l0->val(), bh = m.bias_hh_l0->val();
  auto lin = [](const Tensor<B, 2>& v, const Tensor<B, 2>& w, const Tensor<B, 1>& b,
                std::int64_t at, std::int64_t n) {
    return ember::module::linear(v, w.narrow(0, at, n), std::optional(b.narrow(0, at, n)));
  };
  auto h = Tensor<B, 2>::zeros(Shape{2, 4}, d);
  for (std::int64_t t = 0; t < 3; ++t) {
    auto xt = x.narrow(1, t, 1).template reshape<2>(std::array<std::int64_t, 2>{2, 3});
    auto r = ember::activation::sigmoid(lin(xt, wi, bi, 0, 4).add(lin(h, wh, bh, 0, 4)));
    auto z = ember::activation::sigmoid(lin(xt, wi, bi, 4, 4).add(lin(h, wh, bh, 4, 4)));
    auto n = lin(xt, wi, bi, 8, 4).add(lin(r.mul(h), wh, bh, 8, 4)).tanh();
    h = z.neg().add_scalar(1.0).mul(n).add(z.mul(h));
    expect_approx(out.output.narrow(1, t, 1)
                      .template reshape<2>(std::array<std::int64_t, 2>{2, 4})
                      .into_data(),
                  h.into_data(), Tolerance::rel_abs(1e-5, 1e-6));
  }
  expect_approx(out.hidden.into_data(), h.template unsqueeze_dim<3>(0).into_data(),
                Tolerance::rel_abs(1e-5, 1e-6));
}

// Burn's default init (Xavier normal per gate) with torch's names, layouts and order.
TYPED_TEST(SeqRecurrentTest, InitStructure) {
  using B = TypeParam;
  auto m =
      nn::LstmConfig{.d_input = 3, .d_hidden = 5, .bidirectional = true}.template init<B>(dev<B>());
  std::vector<std::string> names;
  std::vector<Shape> shapes;
  for (const auto& [k, v] : nn::state_dict(m)) {
    names.push_back(k);
    shapes.push_back(v.shape());
  }
  EXPECT_EQ(names,
            (std::vector<std::string>{"weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0",
                                      "weight_ih_l0_reverse", "weight_hh_l0_reverse",
                                      "bias_ih_l0_reverse", "bias_hh_l0_reverse"}));
  EXPECT_EQ(shapes[0], (Shape{20, 3}));
  EXPECT_EQ(shapes[1], (Shape{20, 5}));
  EXPECT_EQ(shapes[2], (Shape{20}));
  auto g = nn::GruConfig{.d_input = 3, .d_hidden = 5, .bias = false}.template init<B>(dev<B>());
  EXPECT_EQ(nn::num_params(g), 15 * 3 + 15 * 5);
  auto r = nn::RnnConfig{.d_input = 3, .d_hidden = 5}.template init<B>(dev<B>());
  EXPECT_EQ(nn::num_params(r), 5 * 3 + 5 * 5 + 10);
  // An empty sequence returns the initial state.
  auto out = m.forward(Tensor<B, 3>::zeros(Shape{2, 0, 3}, dev<B>()));
  EXPECT_EQ(out.output.shape(), (Shape{2, 0, 10}));
  EXPECT_EQ(out.state.hidden.shape(), (Shape{2, 2, 5}));
}

TYPED_TEST(SeqRecurrentTest, BadInputThrows) {
  using B = TypeParam;
  const auto d = dev<B>();
  auto x = Tensor<B, 3>::ones(Shape{2, 3, 4}, d);
  auto lstm = nn::LstmConfig{.d_input = 3, .d_hidden = 5}.template init<B>(d);
  EMBER_EXPECT_THROW_MSG(lstm.forward(x), ShapeError, "[Lstm]");
  auto gru = nn::GruConfig{.d_input = 4, .d_hidden = 5, .bidirectional = true}.template init<B>(d);
  EMBER_EXPECT_THROW_MSG(gru.forward(x, Tensor<B, 3>::zeros(Shape{1, 2, 5}, d)), ShapeError,
                         "[Gru]");
  auto rnn = nn::RnnConfig{.d_input = 4, .d_hidden = 5}.template init<B>(d);
  EMBER_EXPECT_THROW_MSG(rnn.forward(x, Tensor<B, 3>::zeros(Shape{1, 3, 5}, d)), ShapeError,
                         "[Rnn]");
  auto lstm4 = nn::LstmConfig{.d_input = 4, .d_hidden = 5}.template init<B>(d);
  EMBER_EXPECT_THROW_MSG(lstm4.forward(x, nn::LstmState<B>{Tensor<B, 3>::zeros(Shape{1, 2, 4}, d),
                                                           Tensor<B, 3>::zeros(Shape{1, 2, 5}, d)}),
                         ShapeError, "cell state");
  EMBER_EXPECT_THROW_MSG((nn::RnnConfig{.d_input = 0, .d_hidden = 5}.template init<B>(d)),
                         ValueError, "d_input");

  auto pe = nn::PositionalEncodingConfig{.max_sequence_size = 2, .d_model = 4}.template init<B>(d);
  EMBER_EXPECT_THROW_MSG(pe.forward(x), ShapeError, "[PositionalEncoding]");
  auto pe6 = nn::PositionalEncodingConfig{.max_sequence_size = 2, .d_model = 6}.template init<B>(d);
  EMBER_EXPECT_THROW_MSG(pe6.forward(x), ShapeError, "d_model");
  EMBER_EXPECT_THROW_MSG((nn::PositionalEncodingConfig{.d_model = 5}.template init<B>(d)),
                         ValueError, "even");
  auto rope = nn::RotaryEncodingConfig{.max_sequence_length = 4, .d_model = 4}.template init<B>(d);
  EMBER_EXPECT_THROW_MSG(rope.apply(x, 2), ShapeError, "max_sequence_length");
  EMBER_EXPECT_THROW_MSG(rope.forward(Tensor<B, 3>::ones(Shape{2, 3, 6}, d)), ShapeError,
                         "[RotaryEncoding]");
  EMBER_EXPECT_THROW_MSG(
      (nn::RotaryEncodingConfig{.max_sequence_length = 4, .d_model = 3}.template init<B>(d)),
      ValueError, "even");
}

}  // namespace

namespace {

TEST(SeqRecurrentConfig, JsonRoundTrip) {
  nn::RnnConfig rc{.d_input = 3,
                   .d_hidden = 4,
                   .bidirectional = true,
                   .nonlinearity = nn::RnnNonlinearity::Relu};
  auto j = nn::config_to_json(rc);
  EXPECT_EQ(j.at("nonlinearity"), "relu");
  auto r = nn::config_from_json<nn::RnnConfig>(j);
  EXPECT_EQ(r.nonlinearity, nn::RnnNonlinearity::Relu);
  EXPECT_TRUE(r.bidirectional);
  EXPECT_EQ(r.d_hidden, 4);
  auto g = nn::config_from_json<nn::GruConfig>(
      nn::config_to_json(nn::GruConfig{.d_input = 2, .d_hidden = 5, .reset_after = false}));
  EXPECT_FALSE(g.reset_after);
  EXPECT_TRUE(g.bias);
  auto l = nn::config_from_json<nn::LstmConfig>(nlohmann::json{{"d_input", 7}});
  EXPECT_EQ(l.d_input, 7);
  EXPECT_EQ(nn::config_to_json(l.initializer),
            nn::config_to_json(nn::Initializer::xavier_normal(1.0)));
  auto pe = nn::config_from_json<nn::PositionalEncodingConfig>(nlohmann::json{{"d_model", 6}});
  EXPECT_EQ(pe.max_sequence_size, 5000);
  EXPECT_EQ(pe.max_timescale, 10000);
  auto rope = nn::config_from_json<nn::RotaryEncodingConfig>(
      nn::config_to_json(nn::RotaryEncodingConfig{.max_sequence_length = 9, .d_model = 4}));
  EXPECT_EQ(rope.max_sequence_length, 9);
  EXPECT_DOUBLE_EQ(rope.theta, 10000.0);
  EXPECT_THROW(nn::config_from_json<nn::RnnConfig>(nlohmann::json{{"d_input", "three"}}),
               ValueError);
}

}  // namespace
