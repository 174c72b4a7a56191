// Losses and other operators: NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss, Einsum,
// Det, BitCast, ReverseSequence, Unique, NonMaxSuppression, MaxUnpool, Col2Im.
#include <cstring>
#include <map>
#include <numeric>

#include "ember/tensor/module/nn.hpp"
#include "kernels.hpp"

namespace ember::onnx::detail {

namespace {

/// NLL over input [N, C, d...] (log-probabilities) and int targets [N, d...].
std::pair<Value, Value> nll(const OpContext& ctx, const Value& input, const Value& target,
                            const Value* weight) {
  const std::size_t r = input.rank();
  if (r < 2 || target.rank() != r - 1)
    ctx.fail<ShapeError>("input ", input.describe(), " must be [N, C, ...] and target ",
                         target.describe(), " [N, ...]");
  const std::int64_t c = input.shape()[1];
  const bool has_ignore = ctx.attr("ignore_index") != nullptr;
  const std::int64_t ignore = ctx.attr_int("ignore_index", 0);
  const std::string reduction = ctx.attr_string("reduction", "mean");
  const auto tv = target.to_int64s();
  for (auto t : tv)
    if ((t < 0 || t >= c) && !(has_ignore && t == ignore))
      ctx.fail<ShapeError>("target ", t, " is outside [0, ", c, ")");
  const IntStore t8 = target.ints().cast(DType::I64);
  const BoolStore ignored =
      has_ignore ? t8.equal_elem(ignore) : t8.equal_elem(std::numeric_limits<std::int64_t>::min());
  const IntStore safe = t8.mask_fill(ignored, 0.0);
  // gather along C: target as [N, 1, d...]
  Dims ts = target.shape();
  ts.insert(ts.begin() + 1, 1);
  const IntStore idx = reshaped(Value::tensor(ElemType::Int64, target.shape(), safe), ts).ints();
  const FloatStore& in = input.floats();
  FloatStore picked = in.gather(pax(1, r), idx).neg();  // [N, 1, d...]
  FloatStore w = FloatStore::ones(P(ts), ctx.device, in.dtype());
  if (weight) {
    const auto flat = safe.template reshape<1>(Shape{target.numel()});
    const FloatStore wv = reshaped(*weight, {c}).floats().cast(in.dtype());
    w = wv.template reshape<1>(Shape{c}).select(0, flat).template reshape<R>(P(ts));
  }
  const BoolStore ign =
      reshaped(Value::tensor(ElemType::Bool, target.shape(), ignored), ts).bools();
  w = w.mask_fill(ign, 0.0);
  FloatStore loss = picked.mul(w);
  const Value lv = reshaped(Value::tensor(input.type(), ts, loss), target.shape());
  if (reduction == "none") return {lv, Value()};
  const FloatStore total = loss.sum().template reshape<R>(P({}));
  if (reduction == "sum") return {Value::tensor(input.type(), {}, total), Value()};
  if (reduction != "mean") ctx.fail("unknown reduction \"", reduction, "\"");
  const FloatStore denom = w.sum().template reshape<R>(P({}));
  return {Value::tensor(input.type(), {}, total.div(denom)), Value()};
}

void op_NegativeLogLikelihoodLoss(OpContext& ctx) {
  const Value* w = ctx.has(2) ? &ctx.tensor(2) : nullptr;
  ctx.set(0, nll(ctx, ctx.tensor(0), ctx.tensor(1), w).first);
}

void op_SoftmaxCrossEntropyLoss(OpContext& ctx) {
  const Value& x = ctx.tensor(0);
  if (x.rank() < 2) ctx.fail<ShapeError>("scores must be [N, C, ...], got ", x.describe());
  const FloatStore lp = activation::log_softmax(x.floats(), pax(1, x.rank()));
  const Value logp = Value::tensor(x.type(), x.shape(), lp);
  const Value* w = ctx.has(2) ? &ctx.tensor(2) : nullptr;
  ctx.set(0, nll(ctx, logp, ctx.tensor(1), w).first);
  if (ctx.wants(1)) ctx.set(1, logp);
}

// ---- Einsum ---------------------------------------------------------------------------------

/// Einsum by permuting every operand to the full index set, broadcasting, multiplying, and
/// summing the indices that are not in the output (small operands, as in the node tests).
void op_Einsum(OpContext& ctx) {
  std::string eq = ctx.attr_string("equation", "");
  eq.erase(std::remove(eq.begin(), eq.end(), ' '), eq.end());
  const auto arrow = eq.find("->");
  std::string lhs = arrow == std::string::npos ? eq : eq.substr(0, arrow);
  std::vector<std::string> terms;
  for (std::size_t p = 0;;) {
    const auto c = lhs.find(',', p);
    terms.push_back(lhs.substr(p, c == std::string::npos ? std::string::npos : c - p));
    if (c == std::string::npos) break;
    p = c + 1;
  }
  if (terms.size() != ctx.num_inputs())
    ctx.fail("equation \"", eq, "\" has ", terms.size(), " operands, got ", ctx.num_inputs(),
             " inputs");
  // Expand "..." into distinct capital letters per operand rank.
  std::size_t ell = 0;
  for (std::size_t i = 0; i < terms.size(); ++i) {
    const auto d = terms[i].find("...");
    if (d != std::string::npos) {
      const std::size_t named = terms[i].size() - 3;
      ell = std::max(ell, ctx.tensor(i).rank() - named);
    }
  }
  std::string ell_letters;
  for (std::size_t k = 0; k < ell; ++k) ell_letters.push_back(static_cast<char>('A' + k));
  for (std::size_t i = 0; i < terms.size(); ++i) {
    const auto d = terms[i].find("...");
    if (d != std::string::npos) {
      const std::size_t n = ctx.tensor(i).rank() - (terms[i].size() - 3);
      terms[i] = terms[i].substr(0, d) + ell_letters.substr(ell - n) + terms[i].substr(d + 3);
    }
  }
  std::string out;
  if (arrow != std::string::npos) {
    out = eq.substr(arrow + 2);
    const auto d = out.find("...");
    if (d != std::string::npos) out = out.substr(0, d) + ell_letters + out.substr(d + 3);
  } else {
    std::map<char, int> cnt;
    for (const auto& t : terms)
      for (char c : t) ++cnt[c];
    out = ell_letters;
    for (const auto& [c, n] : cnt)
      if (n == 1 && !(c >= 'A' && c <= 'Z' && ell_letters.find(c) != std::string::npos))
        out.push_back(c);
  }
  std::string all = out;
  for (const auto& t : terms)
    for (char c : t)
      if (all.find(c) == std::string::npos) all.push_back(c);
  if (all.size() > R) ctx.fail<UnsupportedError>("more than ", R, " distinct indices");
  std::map<char, std::int64_t> size;
  std::optional<Value> prod;
  for (std::size_t i = 0; i < terms.size(); ++i) {
    Value v = ctx.tensor(i);
    if (!v.is_float_store()) v = cast_value(ctx, v, ElemType::Double);
    const std::string& t = terms[i];
    if (t.size() != v.rank())
      ctx.fail<ShapeError>("operand ", i, " ", v.describe(), " does not match \"", t, "\"");
    const std::string tt = t;
    for (std::size_t a = 0; a < tt.size(); ++a)
      if (tt.find(tt[a], a + 1) != std::string::npos)
        ctx.fail<UnsupportedError>("repeated index '", tt[a], "' (a diagonal) in \"", eq, "\"");
    for (std::size_t k = 0; k < tt.size(); ++k) size[tt[k]] = v.shape()[k];
    // permute into `all` order, inserting size-1 dims for missing letters
    Dims perm;
    for (char c : all)
      if (tt.find(c) != std::string::npos) perm.push_back(static_cast<std::int64_t>(tt.find(c)));
    Dims ps;
    for (auto p : perm) ps.push_back(v.shape()[static_cast<std::size_t>(p)]);
    const auto pp = padded_perm(perm);
    v = map_any(ctx, v, ps, [&](const auto& s) { return s.permute(pp); });
    Dims full;
    std::size_t k = 0;
    for (char c : all) full.push_back(tt.find(c) != std::string::npos ? ps[k++] : 1);
    v = reshaped(v, full);
    prod =
        prod ? binary_numeric(ctx, *prod, v, [](const auto& x, const auto& y) { return x.mul(y); })
             : v;
  }
  Value res = *prod;
  for (std::size_t k = out.size(); k < all.size(); ++k) {
    Dims rs = res.shape();
    rs[k] = 1;
    res = Value::tensor(res.type(), rs,
                        res.floats().sum_dim(pax(static_cast<std::int64_t>(k), all.size())));
  }
  if (ctx.tensor(0).is_int_store()) res = cast_value(ctx, res, ctx.tensor(0).type());
  const Dims kept(res.shape().begin(),
                  res.shape().begin() + static_cast<std::ptrdiff_t>(out.size()));
  ctx.set(0, reshaped(res, kept));
}

void op_Det(OpContext& ctx) {
  const Value& x = ctx.tensor(0);
  if (x.rank() < 2 || x.shape()[x.rank() - 1] != x.shape()[x.rank() - 2])
    ctx.fail<ShapeError>("input must be [..., n, n], got ", x.describe());
  const std::int64_t n = x.shape().back();
  const auto v = x.to_doubles();
  const std::int64_t batches = n ? x.numel() / (n * n) : 1;
  std::vector<double> out;
  for (std::int64_t b = 0; b < batches; ++b) {
    std::vector<double> m(v.begin() + b * n * n, v.begin() + (b + 1) * n * n);
    double det = 1;
    for (std::int64_t c = 0; c < n; ++c) {  // Gaussian elimination with partial pivoting
      std::int64_t piv = c;
      for (std::int64_t r = c + 1; r < n; ++r)
        if (std::fabs(m[r * n + c]) > std::fabs(m[piv * n + c])) piv = r;
      if (m[piv * n + c] == 0) {
        det = 0;
        break;
      }
      if (piv != c) {
        for (std::int64_t k = 0; k < n; ++k) std::swap(m[c * n + k], m[piv * n + k]);
        det = -det;
      }
      det *= m[c * n + c];
      for (std::int64_t r = c + 1; r < n; ++r) {
        const double f = m[r * n + c] / m[c * n + c];
        for (std::int64_t k = c; k < n; ++k) m[r * n + k] -= f * m[c * n + k];
      }
    }
    out.push_back(det);
  }
  ctx.set(0, value_from_doubles(out, Dims(x.shape().begin(), x.shape().end() - 2), x.type(),
                                ctx.device));
}

void op_ReverseSequence(OpContext& ctx) {
  const Value& x = ctx.tensor(0);
  const auto lens = host_ints(ctx.tensor(1));
  if (x.rank() < 2) ctx.fail<ShapeError>("input must have rank >= 2");
  const std::int64_t ba = norm_axis(ctx, ctx.attr_int("batch_axis", 1), x.rank());
  const std::int64_t ta = norm_axis(ctx, ctx.attr_int("time_axis", 0), x.rank());
  if (ba == ta) ctx.fail("batch_axis and time_axis must differ");
  const std::int64_t nb = x.shape()[static_cast<std::size_t>(ba)],
                     nt = x.shape()[static_cast<std::size_t>(ta)];
  if (static_cast<std::int64_t>(lens.size()) != nb)
    ctx.fail<ShapeError>("sequence_lens has ", lens.size(), " entries for batch ", nb);
  std::vector<Value> parts;
  for (std::int64_t b = 0; b < nb; ++b) {
    const Value sl = narrow_along(ctx, x, ba, b, 1);
    const std::int64_t l = std::clamp<std::int64_t>(lens[static_cast<std::size_t>(b)], 0, nt);
    std::vector<std::int64_t> order;
    for (std::int64_t t = 0; t < nt; ++t) order.push_back(t < l ? l - 1 - t : t);
    const auto idx = DTensor<1, Int>::from_data(TensorData(order, Shape{nt}), ctx.device);
    parts.push_back(map_any(ctx, sl, sl.shape(),
                            [&](const auto& s) { return s.select(pax(ta, x.rank()), idx); }));
  }
  ctx.set(0, cat_values(ctx, parts, x.shape(), pax(ba, x.rank())));
}

/// Hann (0), Hamming (1) and Blackman (2) windows of `size` samples (periodic: the
/// denominator is size, else size - 1), in output_datatype (float by default).
template <int Kind>
void op_window(OpContext& ctx) {
  const std::int64_t n = host_ints(ctx.tensor(0)).at(0);
  if (n < 0) ctx.fail("size must be >= 0, got ", n);
  const bool periodic = ctx.attr_int("periodic", 1) != 0;
  const auto type = static_cast<ElemType>(ctx.attr_int("output_datatype", 1));
  const double d = periodic ? static_cast<double>(n) : static_cast<double>(n - 1);
  const double pi = 3.14159265358979323846;
  std::vector<double> w(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    const double x = d > 0 ? 2 * pi * static_cast<double>(i) / d : 0.0;
    double v;
    if (Kind == 0)
      v = 0.5 - 0.5 * std::cos(x);
    else if (Kind == 1)
      v = 25.0 / 46.0 - (1 - 25.0 / 46.0) * std::cos(x);
    else
      v = 0.42 - 0.5 * std::cos(x) + 0.08 * std::cos(2 * x);
    w[static_cast<std::size_t>(i)] = v;
  }
  ctx.set(0, value_from_doubles(w, {n}, type, ctx.device));
}

}  // namespace

void register_misc(OpRegistry& r) {
  r.add("HannWindow", op_window<0>);
  r.add("HammingWindow", op_window<1>);
  r.add("BlackmanWindow", op_window<2>);
  r.add("NegativeLogLikelihoodLoss", op_NegativeLogLikelihoodLoss);
  r.add("SoftmaxCrossEntropyLoss", op_SoftmaxCrossEntropyLoss);
  r.add("Einsum", op_Einsum);
  r.add("Det", op_Det);
  r.add("ReverseSequence", op_ReverseSequence);
}

}  // namespace ember::onnx::detail
