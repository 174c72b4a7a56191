// Recurrent operators: LSTM, GRU, RNN (ONNX gate orders i-o-f-c and z-r-h, directions,
// sequence_lens, peepholes, clip, custom activations, layout 0 and 1).
#include "ember/tensor/module/nn.hpp"
#include "kernels.hpp"

namespace ember::onnx::detail {

namespace {

using T2 = DTensor<2>;

struct Act {
  std::string name;
  double alpha = 0, beta = 0;
  T2 operator()(const T2& x) const {
    if (name == "Sigmoid") return activation::sigmoid(x);
    if (name == "Tanh") return x.tanh();
    if (name == "Relu") return activation::relu(x);
    if (name == "Affine") return x.mul_scalar(alpha).add_scalar(beta);
    if (name == "LeakyRelu") return activation::leaky_relu(x, alpha);
    if (name == "ThresholdedRelu") return x.mask_fill(x.lower_equal_elem(alpha), 0.0);
    if (name == "ScaledTanh") return x.mul_scalar(beta).tanh().mul_scalar(alpha);
    if (name == "HardSigmoid") return activation::hard_sigmoid(x, alpha, beta);
    if (name == "Elu") return activation::elu(x, alpha);
    if (name == "Softsign") return activation::softsign(x);
    if (name == "Softplus") return activation::softplus(x);
    fail<UnsupportedError>("onnx", "unknown RNN activation '", name, "'");
  }
};

/// The activations of each direction (defaults given), with their alpha/beta.
std::vector<Act> activations(const OpContext& ctx, std::vector<std::string> defaults, int dirs) {
  std::vector<std::string> names = ctx.attr_strings("activations");
  const auto alphas = ctx.attr_floats("activation_alpha");
  const auto betas = ctx.attr_floats("activation_beta");
  const std::size_t per = defaults.size();
  if (names.empty()) {
    for (int d = 0; d < dirs; ++d) names.insert(names.end(), defaults.begin(), defaults.end());
  }
  if (names.size() != per * static_cast<std::size_t>(dirs))
    ctx.fail("expects ", per * static_cast<std::size_t>(dirs), " activations, got ", names.size());
  std::vector<Act> out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    Act a{names[i]};
    // Defaults of the parameterised activations (ONNX's).
    if (a.name == "LeakyRelu") a.alpha = 0.01;
    if (a.name == "ThresholdedRelu") a.alpha = 1.0;
    if (a.name == "HardSigmoid") a.alpha = 0.2, a.beta = 0.5;
    if (a.name == "Elu") a.alpha = 1.0;
    if (a.name == "Affine" || a.name == "ScaledTanh") a.alpha = 1.0, a.beta = 0.0;
    if (i < alphas.size()) a.alpha = alphas[i];
    if (i < betas.size()) a.beta = betas[i];
    out.push_back(a);
  }
  return out;
}

T2 clip(const T2& x, double c) {
  return c > 0 ? x.clamp(-c, c) : x;
}

enum class Kind { Rnn, Gru, Lstm };

template <Kind K>
void op_recurrent(OpContext& ctx) {
  const Value& xv = ctx.tensor(0);
  const Value& wv = ctx.tensor(1);
  const Value& rv = ctx.tensor(2);
  const int layout = static_cast<int>(ctx.attr_int("layout", 0));
  if (xv.rank() != 3) ctx.fail<ShapeError>("X must have rank 3, got ", xv.describe());
  const std::string direction = ctx.attr_string("direction", "forward");
  const int dirs = direction == "bidirectional" ? 2 : 1;
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional")
    ctx.fail("unknown direction \"", direction, "\"");
  const std::int64_t gates = K == Kind::Lstm ? 4 : K == Kind::Gru ? 3 : 1;
  if (wv.rank() != 3 || rv.rank() != 3)
    ctx.fail<ShapeError>("W ", wv.describe(), " and R ", rv.describe(), " must have rank 3");
  const std::int64_t H = ctx.attr_int("hidden_size", rv.shape().back());
  DTensor<3> X = xv.to_tensor<3>();
  if (layout == 1) X = X.swap_dims(0, 1);  // -> [seq, batch, input]
  const std::int64_t S = X.dim(0), Bn = X.dim(1), I = X.dim(2);
  if (wv.shape() != Dims{dirs, gates * H, I})
    ctx.fail<ShapeError>("W ", wv.describe(), " must be [", dirs, ", ", gates * H, ", ", I, "]");
  if (rv.shape() != Dims{dirs, gates * H, H})
    ctx.fail<ShapeError>("R ", rv.describe(), " must be [", dirs, ", ", gates * H, ", ", H, "]");
  const double clip_v = ctx.attr_float("clip", 0.0);
  const bool lbr = ctx.attr_int("linear_before_reset", 0) != 0;
  const bool input_forget = ctx.attr_int("input_forget", 0) != 0;
  const std::vector<std::string> defaults =
      K == Kind::Lstm  ? std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"}
      : K == Kind::Gru ? std::vector<std::string>{"Sigmoid", "Tanh"}
                       : std::vector<std::string>{"Tanh"};
  const auto acts = activations(ctx, defaults, dirs);
  const std::size_t per = defaults.size();
  const DTensor<3> W = wv.to_tensor<3>(), Rw = rv.to_tensor<3>();
  std::vector<std::int64_t> lens(static_cast<std::size_t>(Bn), S);
  if (ctx.has(4)) lens = host_ints(ctx.tensor(4));
  if (static_cast<std::int64_t>(lens.size()) != Bn)
    ctx.fail<ShapeError>("sequence_lens has ", lens.size(), " entries for batch ", Bn);
  bool full = true;
  for (auto l : lens) full = full && l == S;
  const Device dev = ctx.device;
  const DType dt = X.dtype();
  std::vector<DTensor<3>> ys;  // per direction [S, B, H]
  std::vector<T2> hs, cs;
  for (int d = 0; d < dirs; ++d) {
    const bool reverse = direction == "reverse" || d == 1;
    const T2 w = W.narrow(0, d, 1).template reshape<2>(Shape{gates * H, I});
    const T2 r = Rw.narrow(0, d, 1).template reshape<2>(Shape{gates * H, H});
    T2 wb = T2::zeros({1, gates * H}, dev, dt), rb = T2::zeros({1, gates * H}, dev, dt);
    if (ctx.has(3)) {
      const DTensor<2> b = ctx.tensor(3).to_tensor<2>();
      wb = b.narrow(0, d, 1).narrow(1, 0, gates * H);
      rb = b.narrow(0, d, 1).narrow(1, gates * H, gates * H);
    }
    T2 h = ctx.has(5)
               ? ctx.tensor(5).to_tensor<3>().narrow(0, d, 1).template reshape<2>(Shape{Bn, H})
               : T2::zeros({Bn, H}, dev, dt);
    T2 c = K == Kind::Lstm && ctx.has(6)
               ? ctx.tensor(6).to_tensor<3>().narrow(0, d, 1).template reshape<2>(Shape{Bn, H})
               : T2::zeros({Bn, H}, dev, dt);
    std::optional<T2> pi, po, pf;
    if (K == Kind::Lstm && ctx.has(7)) {
      const T2 p = ctx.tensor(7).to_tensor<2>().narrow(0, d, 1);
      pi = p.narrow(1, 0, H), po = p.narrow(1, H, H), pf = p.narrow(1, 2 * H, H);
    }
    // Input projections of every step at once: [S * B, I] x [I, G H].
    const T2 xw = X.template reshape<2>(Shape{S * Bn, I}).matmul(w.transpose()).add(wb);
    const auto& f = acts[static_cast<std::size_t>(d) * per];
    std::vector<std::optional<T2>> outs(static_cast<std::size_t>(S));
    for (std::int64_t step = 0; step < S; ++step) {
      const std::int64_t t = reverse ? S - 1 - step : step;
      const T2 gx = xw.narrow(0, t * Bn, Bn);
      T2 hn = h, cn = c;
      if constexpr (K == Kind::Lstm) {
        const T2 g = gx.add(h.matmul(r.transpose())).add(rb);
        const auto& gact = acts[static_cast<std::size_t>(d) * per + 1];
        const auto& hact = acts[static_cast<std::size_t>(d) * per + 2];
        T2 gi = g.narrow(1, 0, H), go = g.narrow(1, H, H), gf = g.narrow(1, 2 * H, H),
           gc = g.narrow(1, 3 * H, H);
        if (pi) gi = gi.add(pi->mul(c));
        if (pf) gf = gf.add(pf->mul(c));
        const T2 it = f(clip(gi, clip_v));
        const T2 ft = input_forget ? it.rsub_scalar(1.0) : f(clip(gf, clip_v));
        const T2 ct = gact(clip(gc, clip_v));
        cn = ft.mul(c).add(it.mul(ct));
        if (po) go = go.add(po->mul(cn));
        const T2 ot = f(clip(go, clip_v));
        hn = ot.mul(hact(cn));
      } else if constexpr (K == Kind::Gru) {
        const auto& gact = acts[static_cast<std::size_t>(d) * per + 1];
        const T2 rz = rb.narrow(1, 0, H), rr = rb.narrow(1, H, H), rh = rb.narrow(1, 2 * H, H);
        const T2 hr = h.matmul(r.transpose());
        const T2 z = f(clip(gx.narrow(1, 0, H).add(hr.narrow(1, 0, H)).add(rz), clip_v));
        const T2 rt = f(clip(gx.narrow(1, H, H).add(hr.narrow(1, H, H)).add(rr), clip_v));
        const T2 rh_w = r.narrow(0, 2 * H, H);
        const T2 hh = lbr ? gx.narrow(1, 2 * H, H).add(rt.mul(h.matmul(rh_w.transpose()).add(rh)))
                          : gx.narrow(1, 2 * H, H).add(rt.mul(h).matmul(rh_w.transpose())).add(rh);
        const T2 ht = gact(clip(hh, clip_v));
        hn = z.rsub_scalar(1.0).mul(ht).add(z.mul(h));
      } else {
        hn = f(clip(gx.add(h.matmul(r.transpose())).add(rb), clip_v));
      }
      T2 y = hn;
      if (!full) {
        // Batches whose sequence ended keep their state and output zeros.
        std::vector<bool> live(static_cast<std::size_t>(Bn));
        for (std::int64_t b = 0; b < Bn; ++b)
          live[static_cast<std::size_t>(b)] = t < lens[static_cast<std::size_t>(b)];
        const auto mask = DTensor<2, Bool>::from_data(TensorData(live, Shape{Bn, 1}), dev);
        hn = h.mask_where(mask, hn);
        cn = c.mask_where(mask, cn);
        y = T2::zeros({Bn, H}, dev, dt).mask_where(mask, y);
      }
      h = hn, c = cn;
      outs[static_cast<std::size_t>(t)] = y;
    }
    std::vector<T2> seq;
    for (auto& o : outs) seq.push_back(*o);
    ys.push_back(DTensor<2>::template stack<3>(seq, 0));
    hs.push_back(h);
    cs.push_back(c);
  }
  // Y [S, dirs, B, H] (layout 0) or [B, S, dirs, H] (layout 1).
  DTensor<4> y = DTensor<3>::template stack<4>(ys, 1);
  if (layout == 1) y = y.permute({2, 0, 1, 3});
  ctx.set(0, Value::from_tensor(y, xv.type()));
  DTensor<3> hy = DTensor<2>::template stack<3>(hs, 0), cy = DTensor<2>::template stack<3>(cs, 0);
  if (layout == 1) hy = hy.swap_dims(0, 1), cy = cy.swap_dims(0, 1);
  if (ctx.wants(1)) ctx.set(1, Value::from_tensor(hy, xv.type()));
  if (K == Kind::Lstm && ctx.wants(2)) ctx.set(2, Value::from_tensor(cy, xv.type()));
}

}  // namespace

void register_rnn(OpRegistry& r) {
  r.add("LSTM", op_recurrent<Kind::Lstm>);
  r.add("GRU", op_recurrent<Kind::Gru>);
  r.add("RNN", op_recurrent<Kind::Rnn>);
}

}  // namespace ember::onnx::detail
