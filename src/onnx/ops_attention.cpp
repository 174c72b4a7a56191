// Attention (opset 23/24: MHA, GQA, MQA, KV cache, masks, causal with offset, softcap,
// qk_matmul_output modes) and RotaryEmbedding, composed of front-end tensor ops.
#include "kernels.hpp"

namespace ember::onnx::detail {

namespace {

/// [B, S, H*D] -> [B, H, S, D] (logical rank 4).
Value split_heads(const OpContext& ctx, const Value& x, std::int64_t heads) {
  const auto& s = x.shape();
  if (heads <= 0 || s[2] % heads != 0)
    ctx.fail<ShapeError>("hidden size ", s[2], " of ", x.describe(), " is not divisible by ", heads,
                         " heads");
  const Value r = reshaped(x, {s[0], s[1], heads, s[2] / heads});
  return map_any(ctx, r, {s[0], heads, s[1], s[2] / heads}, [&](const auto& st) {
    return st.permute(padded_perm({0, 2, 1, 3}));
  });
}

void op_Attention(OpContext& ctx) {
  const Value& q0 = ctx.tensor(0);
  const bool three_d = q0.rank() == 3;
  Value q = q0, k = ctx.tensor(1), v = ctx.tensor(2);
  if (k.rank() != q0.rank() || v.rank() != q0.rank())
    ctx.fail<ShapeError>("Q, K and V must have the same rank: ", q0.describe(), ", ", k.describe(),
                         ", ", v.describe());
  if (three_d) {
    const std::int64_t qh = ctx.attr_int("q_num_heads", 0), kvh = ctx.attr_int("kv_num_heads", 0);
    if (qh <= 0 || kvh <= 0)
      ctx.fail("3-d inputs need the q_num_heads and kv_num_heads attributes");
    q = split_heads(ctx, q, qh);
    k = split_heads(ctx, k, kvh);
    v = split_heads(ctx, v, kvh);
  }
  if (q.rank() != 4 || k.rank() != 4 || v.rank() != 4)
    ctx.fail<ShapeError>("Q, K, V must be 3-d or 4-d: ", q0.describe(), ", ",
                         ctx.tensor(1).describe(), ", ", ctx.tensor(2).describe());
  if (ctx.has(4) != ctx.has(5)) ctx.fail("past_key and past_value must be given together");
  if (ctx.has(4) && (ctx.tensor(4).rank() != 4 || ctx.tensor(5).rank() != 4))
    ctx.fail<ShapeError>("past_key and past_value must be 4-d");
  const std::int64_t past = ctx.has(4) ? ctx.tensor(4).shape()[2] : 0;
  if (ctx.has(4)) {
    k = Value::tensor(k.type(), {k.shape()[0], k.shape()[1], past + k.shape()[2], k.shape()[3]},
                      FloatStore::cat({ctx.tensor(4).floats(), k.floats()}, R - 2));
    v = Value::tensor(v.type(), {v.shape()[0], v.shape()[1], past + v.shape()[2], v.shape()[3]},
                      FloatStore::cat({ctx.tensor(5).floats(), v.floats()}, R - 2));
  }
  if (ctx.wants(1)) ctx.set(1, k);
  if (ctx.wants(2)) ctx.set(2, v);
  const std::int64_t B = q.shape()[0], H = q.shape()[1], Sq = q.shape()[2], D = q.shape()[3];
  const std::int64_t KH = k.shape()[1], T = k.shape()[2], Dv = v.shape()[3];
  if (KH <= 0 || H % KH != 0)
    ctx.fail<ShapeError>(H, " query heads are not a multiple of ", KH, " key/value heads");
  if (KH != H) {  // grouped-query: each key/value head serves H / KH consecutive query heads
    const std::int64_t g = H / KH;
    auto rep = [&](const Value& x) {
      const auto& s = x.shape();
      const Value e =
          expand_to(reshaped(x, {s[0], s[1], 1, s[2], s[3]}), {s[0], s[1], g, s[2], s[3]});
      return reshaped(Value::tensor(e.type(), e.shape(), e.floats().add_scalar(0.0)),
                      {s[0], s[1] * g, s[2], s[3]});
    };
    k = rep(k);
    v = rep(v);
  }
  const double scale = ctx.attr_float("scale", 1.0 / std::sqrt(static_cast<double>(D)));
  const double rs = std::sqrt(scale);
  const FloatStore qs = q.floats().mul_scalar(rs), ks = k.floats().mul_scalar(rs);
  FloatStore scores = qs.matmul(ks.swap_dims(-2, -1));  // [B, H, Sq, T]
  const std::int64_t mode = ctx.attr_int("qk_matmul_output_mode", 0);
  auto emit = [&](std::int64_t m, const FloatStore& s) {
    if (ctx.wants(3) && mode == m) ctx.set(3, Value::tensor(q.type(), {B, H, Sq, T}, s));
  };
  emit(0, scores);
  const double softcap = ctx.attr_float("softcap", 0.0);
  if (softcap > 0) scores = scores.div_scalar(softcap).tanh().mul_scalar(softcap);
  emit(1, scores);
  // Allowed keys: the mask (bool) / bias (float), causal, nonpad_kv_seqlen.
  std::optional<BoolStore> allowed;
  if (ctx.has(3)) {
    Value m = ctx.tensor(3);
    if (m.rank() < 1 || m.rank() > 4)
      ctx.fail<ShapeError>("attn_mask must have rank 1 to 4, got ", m.describe());
    const std::int64_t mt = m.shape().back();
    if (mt < T) {  // shorter last dim: padded with "not allowed"
      Dims ms = m.shape();
      ms.back() = T;
      Dims pads(2 * R, 0);
      pads[1] = T - mt;
      if (m.is_bool_store())
        m = Value::tensor(m.type(), ms, m.bools().pad(pads, PadMode::Constant, 0.0));
      else
        m = Value::tensor(
            m.type(), ms,
            m.floats().pad(pads, PadMode::Constant, -std::numeric_limits<double>::infinity()));
    }
    if (m.is_bool_store())
      allowed = m.bools();
    else
      scores = scores.add(m.floats().cast(scores.dtype()));
  }
  const bool causal = ctx.attr_int("is_causal", 0) != 0;
  std::vector<std::int64_t> nonpad;
  if (ctx.has(6)) nonpad = host_ints(ctx.tensor(6));
  if (!nonpad.empty() && static_cast<std::int64_t>(nonpad.size()) != B)
    ctx.fail<ShapeError>("nonpad_kv_seqlen has ", nonpad.size(), " entries for batch ", B);
  if (causal || !nonpad.empty()) {
    std::vector<bool> ok(static_cast<std::size_t>(B * Sq * T), true);
    for (std::int64_t b = 0; b < B; ++b) {
      const std::int64_t valid = nonpad.empty() ? T : nonpad[static_cast<std::size_t>(b)];
      const std::int64_t offset = ctx.has(4) ? past : !nonpad.empty() ? valid - Sq : 0;
      for (std::int64_t i = 0; i < Sq; ++i)
        for (std::int64_t j = 0; j < T; ++j) {
          bool a = j < valid;
          if (causal) a = a && j <= i + offset;
          ok[static_cast<std::size_t>((b * Sq + i) * T + j)] = a;
        }
    }
    const BoolStore c = BoolStore::from_data(TensorData(ok, P({B, 1, Sq, T})), ctx.device);
    allowed = allowed ? allowed->bool_and(c) : c;
  }
  if (allowed)
    scores = scores.mask_fill(allowed->bool_not(), -std::numeric_limits<double>::infinity());
  emit(2, scores);
  DType sdt = scores.dtype();
  if (ctx.attr("softmax_precision"))
    sdt = storage_dtype(static_cast<ElemType>(ctx.attr_int("softmax_precision", 1)));
  FloatStore probs = activation::softmax(scores.cast(sdt), R - 1);
  // Fully masked rows are zeros, not NaN.
  const BoolStore dead = scores.is_inf().bool_and(scores.lower_elem(0)).all_dim(R - 1);
  probs = probs.mask_fill(dead, 0.0).cast(q.floats().dtype());
  emit(3, probs);
  FloatStore y = probs.matmul(v.floats());  // [B, H, Sq, Dv]
  if (three_d) {
    const Value y4 = Value::tensor(q0.type(), {B, H, Sq, Dv}, y);
    const Value t = map_any(ctx, y4, {B, Sq, H, Dv}, [&](const auto& st) {
      return st.permute(padded_perm({0, 2, 1, 3}));
    });
    ctx.set(0, reshaped(Value::tensor(t.type(), t.shape(), t.floats().add_scalar(0.0)),
                        {B, Sq, H * Dv}));
  } else {
    ctx.set(0, Value::tensor(q0.type(), {B, H, Sq, Dv}, y));
  }
}

void op_RotaryEmbedding(OpContext& ctx) {
  const Value& x0 = ctx.tensor(0);
  const bool interleaved = ctx.attr_int("interleaved", 0) != 0;
  const std::int64_t nh = ctx.attr_int("num_heads", 0);
  Value x = x0;
  if (x0.rank() == 3) {
    if (nh <= 0) ctx.fail("3-d input needs the num_heads attribute");
    const auto& s = x0.shape();
    x = reshaped(x0, {s[0], s[1], nh, s[2] / nh});  // [B, S, H, D]
  } else if (x0.rank() == 4) {
    x = map_any(ctx, x0, {x0.shape()[0], x0.shape()[2], x0.shape()[1], x0.shape()[3]},
                [&](const auto& st) {
                  return st.permute(padded_perm({0, 2, 1, 3}));
                });
  } else {
    ctx.fail<ShapeError>("input must be 3-d or 4-d, got ", x0.describe());
  }
  const std::int64_t B = x.shape()[0], S = x.shape()[1], H = x.shape()[2], D = x.shape()[3];
  const std::int64_t rd =
      ctx.attr_int("rotary_embedding_dim", 0) > 0 ? ctx.attr_int("rotary_embedding_dim", 0) : D;
  Value cosv = ctx.tensor(1), sinv = ctx.tensor(2);
  if (cosv.rank() < 2 || cosv.rank() > 3 || sinv.shape() != cosv.shape())
    ctx.fail<ShapeError>("cos_cache ", cosv.describe(), " and sin_cache ", sinv.describe(),
                         " must have one shape of rank 2 or 3");
  if (ctx.has(3) && (ctx.tensor(3).rank() != 2 || cosv.rank() != 2))
    ctx.fail<ShapeError>("position_ids must be [batch, seq] with 2-d caches");
  if (ctx.has(3)) {  // gather the cache rows of each position: [B, S, rd/2]
    const Value& pos = ctx.tensor(3);
    const auto flat = pos.ints().template reshape<1>(Shape{pos.numel()});
    auto pick = [&](const Value& c) {
      return Value::tensor(c.type(), {pos.shape()[0], pos.shape()[1], c.shape()[1]},
                           c.floats().select(R - 2, flat));
    };
    cosv = pick(cosv);
    sinv = pick(sinv);
  }
  const std::int64_t half = rd / 2;
  // cos/sin [B, S, half] -> [B, S, 1, half]
  const FloatStore c = reshaped(cosv, {cosv.shape()[0], S, 1, half}).floats();
  const FloatStore sn = reshaped(sinv, {sinv.shape()[0], S, 1, half}).floats();
  const FloatStore xf = x.floats();
  const FloatStore rot = xf.narrow(R - 1, 0, rd), rest = xf.narrow(R - 1, rd, D - rd);
  const FloatStore rotated = [&]() -> FloatStore {
    if (!interleaved) {
      const FloatStore a = rot.narrow(R - 1, 0, half), b = rot.narrow(R - 1, half, half);
      return FloatStore::cat({a.mul(c).sub(b.mul(sn)), b.mul(c).add(a.mul(sn))}, R - 1);
    }
    // pairs (x[2i], x[2i+1]) rotate together
    const Value rv = reshaped(Value::tensor(x.type(), {B, S, H, rd}, rot), {B, S, H, half, 2});
    const FloatStore x1 = rv.floats().narrow(R - 1, 0, 1), x2 = rv.floats().narrow(R - 1, 1, 1);
    const FloatStore c5 = reshaped(Value::tensor(cosv.type(), {cosv.shape()[0], S, 1, half}, c),
                                   {cosv.shape()[0], S, 1, half, 1})
                              .floats();
    const FloatStore s5 = reshaped(Value::tensor(sinv.type(), {sinv.shape()[0], S, 1, half}, sn),
                                   {sinv.shape()[0], S, 1, half, 1})
                              .floats();
    const FloatStore o1 = x1.mul(c5).sub(x2.mul(s5)), o2 = x2.mul(c5).add(x1.mul(s5));
    return reshaped(Value::tensor(x.type(), {B, S, H, half, 2}, FloatStore::cat({o1, o2}, R - 1)),
                    {B, S, H, rd})
        .floats();
  }();
  const FloatStore outf = rd < D ? FloatStore::cat({rotated, rest}, R - 1) : rotated;
  Value out = Value::tensor(x.type(), {B, S, H, D}, outf);
  if (x0.rank() == 3) {
    ctx.set(0, reshaped(Value::tensor(out.type(), out.shape(), out.floats().add_scalar(0.0)),
                        x0.shape()));
  } else {
    ctx.set(0, map_any(ctx, out, x0.shape(), [&](const auto& st) {
              return st.permute(padded_perm({0, 2, 1, 3}));
            }));
  }
}

}  // namespace

void register_attention(OpRegistry& r) {
  r.add("Attention", op_Attention);
  r.add("RotaryEmbedding", op_RotaryEmbedding);
}

}  // namespace ember::onnx::detail
