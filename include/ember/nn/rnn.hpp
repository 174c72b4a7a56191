// Recurrent layers: Rnn (Elman, tanh or relu), Lstm (Hochreiter & Schmidhuber 1997), Gru
// (Cho et al. 2014). Single-layer modules as Burn's, with PyTorch's parameters and formulas
// (torch.nn.RNN / LSTM / GRU with num_layers=1, batch_first=True):
//
//   auto lstm = nn::LstmConfig{.d_input = 16, .d_hidden = 32, .bidirectional = true}.init<B>();
//   auto [output, state] = lstm.forward(x);   // x [batch, seq, 16]
//   // output [batch, seq, 64], state.hidden / state.cell [2, batch, 32]
//
// Parameters (torch's keys and layouts): `weight_ih_l0 [G*H, d_input]`, `weight_hh_l0
// [G*H, H]`, `bias_ih_l0 [G*H]`, `bias_hh_l0 [G*H]` (when `bias`), and the same with the
// suffix `_reverse` for the backward direction when `bidirectional`. G stacks the gates in
// torch's order: Rnn 1, Lstm 4 (input i, forget f, cell g, output o), Gru 3 (reset r,
// update z, new n).
//
// States use torch's layout [dirs, batch, H] (dirs = 2 when bidirectional; index 0 is the
// forward direction, 1 the backward one). The output concatenates the directions' hidden
// states along the last dim: [batch, seq, H * dirs]; the backward direction reads the
// sequence from its end, so its final state belongs to time step 0.
#pragma once

#include <array>
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <utility>
#include <vector>

#include "ember/dispatch/dispatch.hpp"
#include "ember/module/config_fwd.hpp"
#include "ember/module/initializer.hpp"
#include "ember/module/module.hpp"
#include "ember/tensor/activation.hpp"
#include "ember/tensor/module/nn.hpp"

namespace ember::nn {

/// Non-linearity of Rnn (torch's `nonlinearity`).
enum class RnnNonlinearity { Tanh, Relu };

EMBER_CONFIG_ENUM(RnnNonlinearity, {RnnNonlinearity::Tanh, "tanh"}, {RnnNonlinearity::Relu, "relu"})

namespace detail {

/// The parameters of one direction, as plain tensors.
template <Backend B>
struct RecurrentWeights {
  Tensor<B, 2> w_ih;
  Tensor<B, 2> w_hh;
  std::optional<Tensor<B, 1>> b_ih;
  std::optional<Tensor<B, 1>> b_hh;
};

/// `gates` gate blocks [H, in] stacked into [gates * H, in], each drawn from `init` with
/// fan_in = in and fan_out = H (Burn's GateController: one Linear per gate).
template <Backend B>
Tensor<B, 2> init_gates(const Initializer& init, std::int64_t gates, std::int64_t h,
                        std::int64_t in, const typename B::Device& device) {
  std::vector<Tensor<B, 2>> parts;
  for (std::int64_t g = 0; g < gates; ++g) {
    parts.push_back(init.template init<B, 2>(Shape{h, in}, device, in, h));
  }
  return Tensor<B, 2>::cat(parts, 0);
}
template <Backend B>
Tensor<B, 1> init_gate_bias(const Initializer& init, std::int64_t gates, std::int64_t h,
                            std::int64_t in, const typename B::Device& device) {
  std::vector<Tensor<B, 1>> parts;
  for (std::int64_t g = 0; g < gates; ++g) {
    parts.push_back(init.template init<B, 1>(Shape{h}, device, in, h));
  }
  return Tensor<B, 1>::cat(parts, 0);
}

/// Checks a recurrent input [batch, seq, d_input] and an optional state [dirs, batch, H].
template <Backend B>
void check_recurrent(const char* op, const Tensor<B, 3>& x, std::int64_t d_input,
                     const Tensor<B, 3>* state, const char* state_name, std::int64_t dirs,
                     std::int64_t h) {
  const Shape xs = x.shape();
  if (xs[2] != d_input) {
    ember::detail::fail<ShapeError>(op, "input of shape ", xs, " does not end with d_input ",
                                    d_input, " ([batch, seq, d_input])");
  }
  if (state) {
    const Shape ss = state->shape();
    if (ss[0] != dirs || ss[1] != xs[0] || ss[2] != h) {
      ember::detail::fail<ShapeError>(op, "initial ", state_name, " of shape ", ss,
                                      " must be [dirs, batch, d_hidden] = [", dirs, ", ", xs[0],
                                      ", ", h, "]");
    }
  }
}

/// Direction `d` of a state [dirs, batch, H] as [batch, H], or zeros.
template <Backend B>
Tensor<B, 2> initial_state(const std::optional<Tensor<B, 3>>& s, std::int64_t d, std::int64_t batch,
                           std::int64_t h, const Tensor<B, 3>& like) {
  if (!s) return Tensor<B, 2>::zeros(Shape{batch, h}, like.device(), like.dtype());
  return s->narrow(0, d, 1).template reshape<2>(std::array<std::int64_t, 2>{batch, h});
}

/// Runs `step(gi_t, state) -> state` over the time steps of one direction, where gi_t
/// [batch, G*H] is the input projection x_t W_ih^T + b_ih of step t, and returns the hidden
/// states [batch, seq, H] (in time order) and the final state. `hidden(state)` is the
/// [batch, H] output of a state.
template <class B, class State, class Step, class Hidden>
std::pair<Tensor<B, 3>, State> run_direction(const Tensor<B, 3>& gi, bool reverse, State state,
                                             std::int64_t h, Step step, Hidden hidden) {
  const std::int64_t batch = gi.dim(0), seq = gi.dim(1), g = gi.dim(2);
  std::vector<std::optional<Tensor<B, 2>>> steps(static_cast<std::size_t>(seq));
  for (std::int64_t i = 0; i < seq; ++i) {
    const std::int64_t t = reverse ? seq - 1 - i : i;
    auto gt = gi.narrow(1, t, 1).template reshape<2>(std::array<std::int64_t, 2>{batch, g});
    state = step(gt, state);
    steps[static_cast<std::size_t>(t)] = hidden(state);
  }
  if (seq == 0) return {Tensor<B, 3>::zeros(Shape{batch, 0, h}, gi.device(), gi.dtype()), state};
  std::vector<Tensor<B, 2>> outs;
  outs.reserve(steps.size());
  for (auto& s : steps) outs.push_back(std::move(*s));
  return {Tensor<B, 2>::template stack<3>(outs, 1), state};
}

/// x W_ih^T + b_ih for every time step: [batch, seq, in] -> [batch, seq, G*H].
template <Backend B>
Tensor<B, 3> input_projection(const Tensor<B, 3>& x, const RecurrentWeights<B>& w) {
  if (x.dim(1) == 0) {  // empty sequence: no product (linear's reshape cannot express [0, in])
    return Tensor<B, 3>::zeros(Shape{x.dim(0), 0, w.w_ih.dim(0)}, x.device(), x.dtype());
  }
  return ember::module::linear(x, w.w_ih, w.b_ih);
}

/// h W_hh^T + b_hh: [batch, H] -> [batch, G*H].
template <Backend B>
Tensor<B, 2> hidden_projection(const Tensor<B, 2>& h, const RecurrentWeights<B>& w) {
  return ember::module::linear(h, w.w_hh, w.b_hh);
}

template <class P>
auto opt_val(const std::optional<P>& p) {
  using T = typename P::Value;
  return p ? std::optional<T>(p->val()) : std::optional<T>();
}

}  // namespace detail

// The parameter fields shared by the three layers (torch's names, in torch's order).
#define EMBER_RECURRENT_PARAMS                                                         \
  Param<Tensor<B, 2>> weight_ih_l0;                                                    \
  Param<Tensor<B, 2>> weight_hh_l0;                                                    \
  std::optional<Param<Tensor<B, 1>>> bias_ih_l0;                                       \
  std::optional<Param<Tensor<B, 1>>> bias_hh_l0;                                       \
  std::optional<Param<Tensor<B, 2>>> weight_ih_l0_reverse;                             \
  std::optional<Param<Tensor<B, 2>>> weight_hh_l0_reverse;                             \
  std::optional<Param<Tensor<B, 1>>> bias_ih_l0_reverse;                               \
  std::optional<Param<Tensor<B, 1>>> bias_hh_l0_reverse;                               \
  std::int64_t d_input = 0;                                                            \
  std::int64_t d_hidden = 0;                                                           \
  bool bias = true;                                                                    \
  bool bidirectional = false;                                                          \
  /** Number of directions (1 or 2). */                                                \
  std::int64_t num_directions() const {                                                \
    return bidirectional ? 2 : 1;                                                      \
  }                                                                                    \
  /** The parameters of direction d (0 forward, 1 backward). */                        \
  detail::RecurrentWeights<B> weights(std::int64_t d) const {                          \
    if (d == 0)                                                                        \
      return {weight_ih_l0.val(), weight_hh_l0.val(), detail::opt_val(bias_ih_l0),     \
              detail::opt_val(bias_hh_l0)};                                            \
    return {weight_ih_l0_reverse->val(), weight_hh_l0_reverse->val(),                  \
            detail::opt_val(bias_ih_l0_reverse), detail::opt_val(bias_hh_l0_reverse)}; \
  }

namespace detail {
/// Fills the parameters of a recurrent module with `gates` gates.
template <class B, class M>
void init_recurrent(M& m, const Initializer& init, std::int64_t gates, std::int64_t d_input,
                    std::int64_t h, bool bias, bool bidirectional,
                    const typename B::Device& device) {
  if (d_input <= 0 || h <= 0) {
    ember::detail::fail<ValueError>("RecurrentConfig", "d_input ", d_input, " and d_hidden ", h,
                                    " must be positive");
  }
  m.d_input = d_input;
  m.d_hidden = h;
  m.bias = bias;
  m.bidirectional = bidirectional;
  m.weight_ih_l0 = Param<Tensor<B, 2>>(init_gates<B>(init, gates, h, d_input, device));
  m.weight_hh_l0 = Param<Tensor<B, 2>>(init_gates<B>(init, gates, h, h, device));
  if (bias) {
    m.bias_ih_l0 = Param<Tensor<B, 1>>(init_gate_bias<B>(init, gates, h, d_input, device));
    m.bias_hh_l0 = Param<Tensor<B, 1>>(init_gate_bias<B>(init, gates, h, h, device));
  }
  if (bidirectional) {
    m.weight_ih_l0_reverse = Param<Tensor<B, 2>>(init_gates<B>(init, gates, h, d_input, device));
    m.weight_hh_l0_reverse = Param<Tensor<B, 2>>(init_gates<B>(init, gates, h, h, device));
    if (bias) {
      m.bias_ih_l0_reverse =
          Param<Tensor<B, 1>>(init_gate_bias<B>(init, gates, h, d_input, device));
      m.bias_hh_l0_reverse = Param<Tensor<B, 1>>(init_gate_bias<B>(init, gates, h, h, device));
    }
  }
}
}  // namespace detail

/// Output of Rnn and Gru.
template <Backend B>
struct RnnOutput {
  /// [batch, seq, d_hidden * dirs]: the hidden state of every step (directions concatenated).
  Tensor<B, 3> output;
  /// [dirs, batch, d_hidden]: the final hidden state of each direction (torch's h_n).
  Tensor<B, 3> hidden;
};

// ---- Rnn ------------------------------------------------------------------------------

template <Backend B>
struct Rnn;

/// Configuration of Rnn (Elman network, torch.nn.RNN with one layer).
struct RnnConfig {
  std::int64_t d_input = 0;
  std::int64_t d_hidden = 0;
  /// bias_ih_l0 and bias_hh_l0.
  bool bias = true;
  bool bidirectional = false;
  /// h' = act(x W_ih^T + b_ih + h W_hh^T + b_hh).
  RnnNonlinearity nonlinearity = RnnNonlinearity::Tanh;
  /// Per gate block with its fans (Burn's recurrent default: Xavier normal, gain 1).
  Initializer initializer = Initializer::xavier_normal(1.0);

  /// Throws ValueError for a non-positive size.
  template <Backend B = Dispatch>
  Rnn<B> init(const typename B::Device& device = {}) const;
};

/// Elman recurrent layer: h_t = act(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh), act tanh or
/// relu. Build with RnnConfig.
template <Backend B = Dispatch>
struct Rnn {
  EMBER_RECURRENT_PARAMS
  RnnNonlinearity nonlinearity = RnnNonlinearity::Tanh;

  EMBER_MODULE(weight_ih_l0, weight_hh_l0, bias_ih_l0, bias_hh_l0, weight_ih_l0_reverse,
               weight_hh_l0_reverse, bias_ih_l0_reverse, bias_hh_l0_reverse, d_input, d_hidden,
               bias, bidirectional, nonlinearity)

  /// input [batch, seq, d_input], optional initial hidden state [dirs, batch, d_hidden]
  /// (zeros when absent) -> output [batch, seq, d_hidden * dirs], final hidden
  /// [dirs, batch, d_hidden]. Throws ShapeError (naming Rnn) for wrong shapes.
  RnnOutput<B> forward(const Tensor<B, 3>& input,
                       const std::optional<Tensor<B, 3>>& state = std::nullopt) const {
    detail::check_recurrent<B>("Rnn", input, d_input, state ? &*state : nullptr, "hidden state",
                               num_directions(), d_hidden);
    const std::int64_t batch = input.dim(0);
    std::vector<Tensor<B, 3>> outs;
    std::vector<Tensor<B, 2>> finals;
    for (std::int64_t d = 0; d < num_directions(); ++d) {
      const auto w = weights(d);
      auto step = [&](const Tensor<B, 2>& gi, const Tensor<B, 2>& h) {
        auto pre = gi.add(detail::hidden_projection(h, w));
        return nonlinearity == RnnNonlinearity::Tanh ? pre.tanh() : ember::activation::relu(pre);
      };
      auto [out, hn] =
          detail::run_direction<B>(detail::input_projection(input, w), d == 1,
                                   detail::initial_state<B>(state, d, batch, d_hidden, input),
                                   d_hidden, step, [](const Tensor<B, 2>& h) { return h; });
      outs.push_back(out);
      finals.push_back(hn);
    }
    return {Tensor<B, 3>::cat(outs, 2), Tensor<B, 2>::template stack<3>(finals, 0)};
  }
};

template <Backend B>
Rnn<B> RnnConfig::init(const typename B::Device& device) const {
  Rnn<B> m;
  detail::init_recurrent<B>(m, initializer, 1, d_input, d_hidden, bias, bidirectional, device);
  m.nonlinearity = nonlinearity;
  return m;
}

// ---- Lstm -----------------------------------------------------------------------------

/// State of Lstm, each [dirs, batch, d_hidden] (torch's (h_n, c_n); Burn's LstmState).
template <Backend B>
struct LstmState {
  Tensor<B, 3> cell;
  Tensor<B, 3> hidden;
};

/// Output of Lstm.
template <Backend B>
struct LstmOutput {
  /// [batch, seq, d_hidden * dirs]
  Tensor<B, 3> output;
  /// Final cell and hidden states.
  LstmState<B> state;
};

template <Backend B>
struct Lstm;

/// Configuration of Lstm (Burn's LstmConfig; torch.nn.LSTM with one layer).
struct LstmConfig {
  std::int64_t d_input = 0;
  std::int64_t d_hidden = 0;
  bool bias = true;
  bool bidirectional = false;
  /// Per gate block with its fans (Burn's default: Xavier normal, gain 1).
  Initializer initializer = Initializer::xavier_normal(1.0);

  /// Throws ValueError for a non-positive size.
  template <Backend B = Dispatch>
  Lstm<B> init(const typename B::Device& device = {}) const;
};

/// Long short-term memory layer (torch's formulas, gates i, f, g, o):
/// i = sigmoid(.), f = sigmoid(.), g = tanh(.), o = sigmoid(.) of x W_ih^T + b_ih + h W_hh^T
/// + b_hh; c' = f * c + i * g; h' = o * tanh(c'). Build with LstmConfig.
template <Backend B = Dispatch>
struct Lstm {
  EMBER_RECURRENT_PARAMS

  EMBER_MODULE(weight_ih_l0, weight_hh_l0, bias_ih_l0, bias_hh_l0, weight_ih_l0_reverse,
               weight_hh_l0_reverse, bias_ih_l0_reverse, bias_hh_l0_reverse, d_input, d_hidden,
               bias, bidirectional)

  /// input [batch, seq, d_input], optional initial state (cell and hidden, each [dirs, batch,
  /// d_hidden]; zeros when absent) -> output [batch, seq, d_hidden * dirs] and the final
  /// state. Throws ShapeError (naming Lstm) for wrong shapes.
  LstmOutput<B> forward(const Tensor<B, 3>& input,
                        const std::optional<LstmState<B>>& state = std::nullopt) const {
    const std::int64_t dirs = num_directions(), h = d_hidden, batch = input.dim(0);
    detail::check_recurrent<B>("Lstm", input, d_input, state ? &state->hidden : nullptr,
                               "hidden state", dirs, h);
    detail::check_recurrent<B>("Lstm", input, d_input, state ? &state->cell : nullptr, "cell state",
                               dirs, h);
    std::optional<Tensor<B, 3>> h0, c0;
    if (state) {
      h0 = state->hidden;
      c0 = state->cell;
    }
    using S = std::pair<Tensor<B, 2>, Tensor<B, 2>>;  // (h, c)
    std::vector<Tensor<B, 3>> outs;
    std::vector<Tensor<B, 2>> hs, cs;
    for (std::int64_t d = 0; d < dirs; ++d) {
      const auto w = weights(d);
      auto step = [&](const Tensor<B, 2>& gi, const S& s) {
        auto gates = gi.add(detail::hidden_projection(s.first, w));
        auto i = ember::activation::sigmoid(gates.narrow(1, 0, h));
        auto f = ember::activation::sigmoid(gates.narrow(1, h, h));
        auto g = gates.narrow(1, 2 * h, h).tanh();
        auto o = ember::activation::sigmoid(gates.narrow(1, 3 * h, h));
        auto c = f.mul(s.second).add(i.mul(g));
        return S{o.mul(c.tanh()), c};
      };
      S s0{detail::initial_state<B>(h0, d, batch, h, input),
           detail::initial_state<B>(c0, d, batch, h, input)};
      auto [out, sn] = detail::run_direction<B>(detail::input_projection(input, w), d == 1, s0, h,
                                                step, [](const S& s) { return s.first; });
      outs.push_back(out);
      hs.push_back(sn.first);
      cs.push_back(sn.second);
    }
    return {Tensor<B, 3>::cat(outs, 2), LstmState<B>{Tensor<B, 2>::template stack<3>(cs, 0),
                                                     Tensor<B, 2>::template stack<3>(hs, 0)}};
  }
};

template <Backend B>
Lstm<B> LstmConfig::init(const typename B::Device& device) const {
  Lstm<B> m;
  detail::init_recurrent<B>(m, initializer, 4, d_input, d_hidden, bias, bidirectional, device);
  return m;
}

// ---- Gru ------------------------------------------------------------------------------

template <Backend B>
struct Gru;

/// Configuration of Gru (Burn's GruConfig; torch.nn.GRU with one layer).
struct GruConfig {
  std::int64_t d_input = 0;
  std::int64_t d_hidden = 0;
  bool bias = true;
  bool bidirectional = false;
  /// true (default, torch): n = tanh(x W_in^T + b_in + r * (h W_hn^T + b_hn)); false: the
  /// reset gate applies before the product, n = tanh(x W_in^T + b_in + (r * h) W_hn^T +
  /// b_hn) (Cho et al. v3; Burn's reset_after).
  bool reset_after = true;
  /// Per gate block with its fans (Burn's default: Xavier normal, gain 1).
  Initializer initializer = Initializer::xavier_normal(1.0);

  /// Throws ValueError for a non-positive size.
  template <Backend B = Dispatch>
  Gru<B> init(const typename B::Device& device = {}) const;
};

/// Gated recurrent unit (torch's formulas, gates r, z, n): r = sigmoid(x W_ir^T + b_ir +
/// h W_hr^T + b_hr), z likewise, n = tanh(x W_in^T + b_in + r * (h W_hn^T + b_hn)),
/// h' = (1 - z) * n + z * h. Build with GruConfig.
template <Backend B = Dispatch>
struct Gru {
  EMBER_RECURRENT_PARAMS
  bool reset_after = true;

  EMBER_MODULE(weight_ih_l0, weight_hh_l0, bias_ih_l0, bias_hh_l0, weight_ih_l0_reverse,
               weight_hh_l0_reverse, bias_ih_l0_reverse, bias_hh_l0_reverse, d_input, d_hidden,
               bias, bidirectional, reset_after)

  /// input [batch, seq, d_input], optional initial hidden state [dirs, batch, d_hidden]
  /// (zeros when absent) -> output [batch, seq, d_hidden * dirs], final hidden
  /// [dirs, batch, d_hidden]. Throws ShapeError (naming Gru) for wrong shapes.
  RnnOutput<B> forward(const Tensor<B, 3>& input,
                       const std::optional<Tensor<B, 3>>& state = std::nullopt) const {
    const std::int64_t h = d_hidden, batch = input.dim(0);
    detail::check_recurrent<B>("Gru", input, d_input, state ? &*state : nullptr, "hidden state",
                               num_directions(), h);
    std::vector<Tensor<B, 3>> outs;
    std::vector<Tensor<B, 2>> finals;
    for (std::int64_t d = 0; d < num_directions(); ++d) {
      const auto w = weights(d);
      auto step = [&](const Tensor<B, 2>& gi, const Tensor<B, 2>& hp) {
        Tensor<B, 2> r = gi, z = gi, n = gi;
        if (reset_after) {
          auto gh = detail::hidden_projection(hp, w);
          r = ember::activation::sigmoid(gi.narrow(1, 0, h).add(gh.narrow(1, 0, h)));
          z = ember::activation::sigmoid(gi.narrow(1, h, h).add(gh.narrow(1, h, h)));
          n = gi.narrow(1, 2 * h, h).add(r.mul(gh.narrow(1, 2 * h, h))).tanh();
        } else {
          auto rz_w = w.w_hh.narrow(0, 0, 2 * h);
          std::optional<Tensor<B, 1>> rz_b, n_b;
          if (w.b_hh) {
            rz_b = w.b_hh->narrow(0, 0, 2 * h);
            n_b = w.b_hh->narrow(0, 2 * h, h);
          }
          auto gh = ember::module::linear(hp, rz_w, rz_b);
          r = ember::activation::sigmoid(gi.narrow(1, 0, h).add(gh.narrow(1, 0, h)));
          z = ember::activation::sigmoid(gi.narrow(1, h, h).add(gh.narrow(1, h, h)));
          auto hn = ember::module::linear(r.mul(hp), w.w_hh.narrow(0, 2 * h, h), n_b);
          n = gi.narrow(1, 2 * h, h).add(hn).tanh();
        }
        // h' = (1 - z) * n + z * h = n + z * (h - n)
        return n.add(z.mul(hp.sub(n)));
      };
      auto [out, hn] = detail::run_direction<B>(detail::input_projection(input, w), d == 1,
                                                detail::initial_state<B>(state, d, batch, h, input),
                                                h, step, [](const Tensor<B, 2>& s) { return s; });
      outs.push_back(out);
      finals.push_back(hn);
    }
    return {Tensor<B, 3>::cat(outs, 2), Tensor<B, 2>::template stack<3>(finals, 0)};
  }
};

template <Backend B>
Gru<B> GruConfig::init(const typename B::Device& device) const {
  Gru<B> m;
  detail::init_recurrent<B>(m, initializer, 3, d_input, d_hidden, bias, bidirectional, device);
  m.reset_after = reset_after;
  return m;
}

#undef EMBER_RECURRENT_PARAMS

EMBER_CONFIG(RnnConfig, d_input, d_hidden, bias, bidirectional, nonlinearity, initializer)
EMBER_CONFIG(LstmConfig, d_input, d_hidden, bias, bidirectional, initializer)
EMBER_CONFIG(GruConfig, d_input, d_hidden, bias, bidirectional, reset_after, initializer)

}  // namespace ember::nn
