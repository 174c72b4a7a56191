// Element-wise operators: arithmetic, comparison, logic, bitwise, math functions, Cast.
#include "kernels.hpp"

namespace ember::onnx::detail {

namespace {

// ---- unary math ---------------------------------------------------------------------------

#define EMBER_ONNX_FLOAT_UNARY(Name, expr)                                                \
  void op_##Name(OpContext& ctx) {                                                        \
    ctx.set(0, map_float(ctx, ctx.tensor(0), [&](const FloatStore& x) { return expr; })); \
  }
EMBER_ONNX_FLOAT_UNARY(Sqrt, x.sqrt())
EMBER_ONNX_FLOAT_UNARY(Exp, x.exp())
EMBER_ONNX_FLOAT_UNARY(Log, x.log())
EMBER_ONNX_FLOAT_UNARY(Sin, x.sin())
EMBER_ONNX_FLOAT_UNARY(Cos, x.cos())
EMBER_ONNX_FLOAT_UNARY(Tan, x.tan())
EMBER_ONNX_FLOAT_UNARY(Asin, x.asin())
EMBER_ONNX_FLOAT_UNARY(Acos, x.acos())
EMBER_ONNX_FLOAT_UNARY(Atan, x.atan())
EMBER_ONNX_FLOAT_UNARY(Sinh, x.sinh())
EMBER_ONNX_FLOAT_UNARY(Cosh, x.cosh())
EMBER_ONNX_FLOAT_UNARY(Tanh, x.tanh())
EMBER_ONNX_FLOAT_UNARY(Asinh, x.asinh())
EMBER_ONNX_FLOAT_UNARY(Acosh, x.acosh())
EMBER_ONNX_FLOAT_UNARY(Atanh, x.atanh())
EMBER_ONNX_FLOAT_UNARY(Floor, x.floor())
EMBER_ONNX_FLOAT_UNARY(Ceil, x.ceil())
EMBER_ONNX_FLOAT_UNARY(Round, x.round())
EMBER_ONNX_FLOAT_UNARY(Erf, x.erf())
EMBER_ONNX_FLOAT_UNARY(Reciprocal, x.recip())
#undef EMBER_ONNX_FLOAT_UNARY

void op_Abs(OpContext& ctx) {
  ctx.set(0, map_numeric(ctx, ctx.tensor(0), [](const auto& x) { return x.abs(); }));
}
void op_Neg(OpContext& ctx) {
  ctx.set(0, map_numeric(ctx, ctx.tensor(0), [](const auto& x) { return x.neg(); }));
}
void op_Sign(OpContext& ctx) {
  ctx.set(0, map_numeric(ctx, ctx.tensor(0), [](const auto& x) { return x.sign(); }));
}
void op_Identity(OpContext& ctx) {
  ctx.set(0, ctx.in(0));
}

void op_IsNaN(OpContext& ctx) {
  const Value& x = ctx.tensor(0);
  ctx.set(0, Value::tensor(ElemType::Bool, x.shape(), x.floats().is_nan()));
}

void op_IsInf(OpContext& ctx) {
  const Value& x = ctx.tensor(0);
  const bool pos = ctx.attr_int("detect_positive", 1) != 0;
  const bool neg = ctx.attr_int("detect_negative", 1) != 0;
  const FloatStore& f = x.floats();
  BoolStore inf = f.is_inf();
  if (!pos) inf = inf.bool_and(f.lower_elem(0));
  if (!neg) inf = inf.bool_and(f.greater_elem(0));
  ctx.set(0, Value::tensor(ElemType::Bool, x.shape(), inf));
}

// ---- binary arithmetic ---------------------------------------------------------------------

/// Integer division truncating toward zero (C, ONNX) from Ember's floor division.
IntStore trunc_div(const IntStore& a, const IntStore& b) {
  IntStore q = a.div(b);
  const IntStore r = a.remainder(b);
  const BoolStore adjust = r.not_equal_elem(0).bool_and(a.lower_elem(0).bool_xor(b.lower_elem(0)));
  return q.add(adjust.int_(q.dtype()));
}

/// Wraps results of unsigned types stored widened (uint16 in i32, uint32 in i64).
Value wrap_unsigned(const Value& v) {
  if (v.type() == ElemType::UInt32)
    return Value::tensor(v.type(), v.shape(), v.ints().bitwise_and_scalar(0xffffffffLL));
  if (v.type() == ElemType::UInt16)
    return Value::tensor(v.type(), v.shape(), v.ints().bitwise_and_scalar(0xffff));
  return v;
}

/// a op b for float tensors where a, on its last use, may be overwritten (a's shape must
/// be the broadcast shape); other cases go through binary_numeric.
template <class F, class G>
void binary_take(OpContext& ctx, F&& f_float, G&& generic) {
  const Value& a0 = ctx.tensor(0);
  const Value& b = ctx.tensor(1);
  if (a0.is_float_store() && b.is_float_store() && a0.type() == b.type() &&
      broadcast_dims(ctx, a0.shape(), b.shape()) == a0.shape()) {
    Value a = ctx.take(0);
    const ElemType t = a.type();
    Dims shape = a.shape();
    ctx.set(0, Value::tensor(t, std::move(shape), f_float(std::move(a).into_floats(), b.floats())));
    return;
  }
  ctx.set(0, wrap_unsigned(binary_numeric(ctx, a0, b, generic)));
}

void op_Add(OpContext& ctx) {
  binary_take(
      ctx, [](FloatStore a, const FloatStore& b) { return std::move(a).add(b); },
      [](const auto& a, const auto& b) { return a.add(b); });
}
void op_Sub(OpContext& ctx) {
  ctx.set(0, wrap_unsigned(binary_numeric(ctx, ctx.tensor(0), ctx.tensor(1),
                                          [](const auto& a, const auto& b) { return a.sub(b); })));
}
void op_Mul(OpContext& ctx) {
  binary_take(
      ctx, [](FloatStore a, const FloatStore& b) { return std::move(a).mul(b); },
      [](const auto& a, const auto& b) { return a.mul(b); });
}
void op_Div(OpContext& ctx) {
  ctx.set(0, binary_numeric(ctx, ctx.tensor(0), ctx.tensor(1), [](const auto& a, const auto& b) {
            if constexpr (std::is_same_v<std::decay_t<decltype(a)>, IntStore>)
              return trunc_div(a, b);
            else
              return a.div(b);
          }));
}

void op_Mod(OpContext& ctx) {
  const bool fmod = ctx.attr_int("fmod", 0) != 0;
  const Value& a = ctx.tensor(0);
  if (a.is_float_store() && !fmod)
    ctx.fail("fmod must be 1 for floating-point inputs (", a.describe(), ")");
  ctx.set(0, binary_numeric(ctx, a, ctx.tensor(1), [&](const auto& x, const auto& y) {
            if constexpr (std::is_same_v<std::decay_t<decltype(x)>, IntStore>) {
              if (!fmod) return x.remainder(y);
              return x.sub(trunc_div(x, y).mul(y));
            } else {
              return x.fmod(y);
            }
          }));
}

void op_Pow(OpContext& ctx) {
  const Value& a = ctx.tensor(0);
  const Value& b = ctx.tensor(1);
  const Dims shape = broadcast_dims(ctx, a.shape(), b.shape());
  if (a.is_float_store()) {
    FloatStore base = a.floats();
    if (b.is_float_store()) {
      ctx.set(0, Value::tensor(a.type(), shape, base.powf(b.floats().cast(base.dtype()))));
    } else {
      ctx.set(0, Value::tensor(a.type(), shape, base.powi(b.ints())));
    }
    return;
  }
  if (b.is_int_store()) {
    // Integer powers; a negative exponent truncates like the reference (1/x^n -> int).
    ctx.set(0, Value::tensor(a.type(), shape, a.ints().powi(b.ints())));
    return;
  }
  const FloatStore r = a.ints().float_(DType::F64).powf(b.floats().cast(DType::F64));
  ctx.set(0, Value::tensor(a.type(), shape, r.int_(a.ints().dtype())));
}

/// Max / Min / Sum / Mean over 1..n inputs with broadcasting.
template <int Kind>
void op_variadic(OpContext& ctx) {
  if (ctx.num_inputs() == 0) ctx.fail("needs at least one input");
  Value acc = ctx.tensor(0);
  for (std::size_t i = 1; i < ctx.num_inputs(); ++i) {
    acc = binary_numeric(ctx, acc, ctx.tensor(i), [](const auto& x, const auto& y) {
      if constexpr (Kind == 0)
        return x.max_pair(y);
      else if constexpr (Kind == 1)
        return x.min_pair(y);
      else
        return x.add(y);
    });
  }
  if (Kind == 3) {
    const double n = static_cast<double>(ctx.num_inputs());
    acc = map_float(ctx, acc, [&](const FloatStore& x) { return x.div_scalar(n); });
  }
  if (ctx.num_inputs() == 1) acc = map_numeric(ctx, acc, [](const auto& x) { return x; });
  ctx.set(0, acc);
}

// ---- comparisons and logic ----------------------------------------------------------------

template <class F>
void compare(OpContext& ctx, F&& f) {
  const Value& a = ctx.tensor(0);
  const Value& b = ctx.tensor(1);
  const Dims shape = broadcast_dims(ctx, a.shape(), b.shape());
  if (a.type() == ElemType::String || b.type() == ElemType::String) {
    // Equal on strings (host).
    const auto& sa = a.string_values();
    const auto& sb = b.string_values();
    std::vector<bool> out(static_cast<std::size_t>(numel_of(shape)));
    // Index mapping through broadcasting on the host.
    const std::size_t r = shape.size();
    std::vector<std::int64_t> idx(r, 0);
    auto offset = [&](const Dims& s) {
      std::int64_t off = 0;
      for (std::size_t k = 0; k < s.size(); ++k) {
        const std::size_t d = k + r - s.size();
        off = off * s[k] + (s[k] == 1 ? 0 : idx[d]);
      }
      return off;
    };
    for (std::size_t i = 0; i < out.size(); ++i) {
      out[i] = sa[static_cast<std::size_t>(offset(a.shape()))] ==
               sb[static_cast<std::size_t>(offset(b.shape()))];
      for (std::size_t d = r; d-- > 0;) {
        if (++idx[d] < shape[d]) break;
        idx[d] = 0;
      }
    }
    ctx.set(0, Value::from_data(TensorData(out, Shape(shape)), ctx.device, ElemType::Bool));
    return;
  }
  auto res = [&]() -> BoolStore {
    if (a.is_float_store() && b.is_float_store()) return f(a.floats(), b.floats());
    if (a.is_int_store() && b.is_int_store()) return f(a.ints(), b.ints());
    if (a.is_bool_store() && b.is_bool_store()) return f(a.bools(), b.bools());
    ctx.fail<DTypeError>("operands must have one type, got ", a.describe(), " and ", b.describe());
  }();
  ctx.set(0, Value::tensor(ElemType::Bool, shape, std::move(res)));
}

void op_Equal(OpContext& ctx) {
  compare(ctx, [](const auto& a, const auto& b) { return a.equal(b); });
}
void op_Less(OpContext& ctx) {
  compare(ctx, [](const auto& a, const auto& b) { return a.lower(b); });
}
void op_LessOrEqual(OpContext& ctx) {
  compare(ctx, [](const auto& a, const auto& b) { return a.lower_equal(b); });
}
void op_Greater(OpContext& ctx) {
  compare(ctx, [](const auto& a, const auto& b) { return a.greater(b); });
}
void op_GreaterOrEqual(OpContext& ctx) {
  compare(ctx, [](const auto& a, const auto& b) { return a.greater_equal(b); });
}

template <class F>
void logic(OpContext& ctx, F&& f) {
  const Value& a = ctx.tensor(0);
  const Value& b = ctx.tensor(1);
  const Dims shape = broadcast_dims(ctx, a.shape(), b.shape());
  ctx.set(0, Value::tensor(ElemType::Bool, shape, f(a.bools(), b.bools())));
}
void op_And(OpContext& ctx) {
  logic(ctx, [](const BoolStore& a, const BoolStore& b) { return a.bool_and(b); });
}
void op_Or(OpContext& ctx) {
  logic(ctx, [](const BoolStore& a, const BoolStore& b) { return a.bool_or(b); });
}
void op_Xor(OpContext& ctx) {
  logic(ctx, [](const BoolStore& a, const BoolStore& b) { return a.bool_xor(b); });
}
void op_Not(OpContext& ctx) {
  const Value& a = ctx.tensor(0);
  ctx.set(0, Value::tensor(ElemType::Bool, a.shape(), a.bools().bool_not()));
}

// ---- bitwise ----------------------------------------------------------------------------------

/// The mask of the value bits of an unsigned type stored widened, 0 when none is needed.
std::int64_t unsigned_mask(ElemType t) {
  switch (t) {
    case ElemType::UInt16:
      return 0xffff;
    case ElemType::UInt32:
      return 0xffffffffLL;
    default:
      return 0;
  }
}

template <class F>
void bitwise(OpContext& ctx, F&& f) {
  const Value& a = ctx.tensor(0);
  const Value& b = ctx.tensor(1);
  const Dims shape = broadcast_dims(ctx, a.shape(), b.shape());
  IntStore r = f(a.ints(), b.ints());
  if (const auto m = unsigned_mask(a.type())) r = r.bitwise_and_scalar(m);
  ctx.set(0, Value::tensor(a.type(), shape, std::move(r)));
}
void op_BitwiseAnd(OpContext& ctx) {
  bitwise(ctx, [](const IntStore& a, const IntStore& b) { return a.bitwise_and(b); });
}
void op_BitwiseOr(OpContext& ctx) {
  bitwise(ctx, [](const IntStore& a, const IntStore& b) { return a.bitwise_or(b); });
}
void op_BitwiseXor(OpContext& ctx) {
  bitwise(ctx, [](const IntStore& a, const IntStore& b) { return a.bitwise_xor(b); });
}
void op_BitwiseNot(OpContext& ctx) {
  const Value& a = ctx.tensor(0);
  IntStore r = a.ints().bitwise_not();
  if (const auto m = unsigned_mask(a.type())) r = r.bitwise_and_scalar(m);
  ctx.set(0, Value::tensor(a.type(), a.shape(), std::move(r)));
}
void op_BitShift(OpContext& ctx) {
  const std::string dir = ctx.attr_string("direction", "");
  if (dir != "LEFT" && dir != "RIGHT")
    ctx.fail("direction must be \"LEFT\" or \"RIGHT\", got \"", dir, "\"");
  const Value& a = ctx.tensor(0);
  const Value& b = ctx.tensor(1);
  const Dims shape = broadcast_dims(ctx, a.shape(), b.shape());
  // Unsigned values stored in a wider signed type shift as unsigned; u8 is unsigned itself.
  IntStore r = dir == "LEFT" ? a.ints().bitwise_left_shift(b.ints())
                             : a.ints().bitwise_right_shift(b.ints());
  std::int64_t m = unsigned_mask(a.type());
  if (a.type() == ElemType::UInt64 && dir == "RIGHT") {
    // uint64 >> n of values >= 2^63: clear the copies of the sign bit, mask ~(-1 << (64 - n)).
    const IntStore n = b.ints().expand<R>(P(shape));
    const IntStore minus1 = IntStore::full(P(shape), -1, ctx.device);
    const IntStore mask = minus1.bitwise_left_shift(n.rsub_scalar(64)).bitwise_not();
    r = r.bitwise_and(mask.mask_where(n.equal_elem(0), minus1));
  }
  if (m) r = r.bitwise_and_scalar(m);
  ctx.set(0, Value::tensor(a.type(), shape, std::move(r)));
}

// ---- selection ------------------------------------------------------------------------------

void op_Where(OpContext& ctx) {
  const Value& c = ctx.tensor(0);
  const Value& x = ctx.tensor(1);
  const Value& y = ctx.tensor(2);
  Dims shape = broadcast_dims(ctx, c.shape(), x.shape());
  shape = broadcast_dims(ctx, shape, y.shape());
  const BoolStore& mask = c.bools();
  if (x.type() == ElemType::String) {
    const auto cv = c.to_data().to_vec<std::uint8_t>();
    if (c.shape() != shape || x.shape() != shape || y.shape() != shape)
      ctx.fail<UnsupportedError>("string Where needs equal shapes");
    std::vector<std::string> out(cv.size());
    for (std::size_t i = 0; i < cv.size(); ++i)
      out[i] = cv[i] ? x.string_values()[i] : y.string_values()[i];
    ctx.set(0, Value::strings(shape, std::move(out)));
    return;
  }
  const Value ye = expand_to(y, shape);
  if (ye.is_float_store()) {
    ctx.set(0, Value::tensor(x.type(), shape, ye.floats().mask_where(mask, x.floats())));
  } else if (ye.is_int_store()) {
    ctx.set(0, Value::tensor(x.type(), shape, ye.ints().mask_where(mask, x.ints())));
  } else {
    ctx.set(0, Value::tensor(x.type(), shape, ye.bools().mask_where(mask, x.bools())));
  }
}

void op_Clip(OpContext& ctx) {
  const Value& x = ctx.tensor(0);
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();
  if (ctx.opset < 11) {
    lo = ctx.attr_float("min", -3.402823466e38);
    hi = ctx.attr_float("max", 3.402823466e38);
  } else {
    if (ctx.has(1)) lo = host_scalar(ctx.tensor(1));
    if (ctx.has(2)) hi = host_scalar(ctx.tensor(2));
  }
  if (x.is_float_store()) {
    FloatStore f = x.floats();
    if (!std::isinf(lo) || lo > 0) f = f.clamp_min(lo);
    if (!std::isinf(hi) || hi < 0) f = f.clamp_max(hi);
    ctx.set(0, Value::tensor(x.type(), x.shape(), f));
    return;
  }
  IntStore i = x.ints();
  if (ctx.has(1)) i = i.clamp_min(static_cast<std::int64_t>(lo));
  if (ctx.has(2)) i = i.clamp_max(static_cast<std::int64_t>(hi));
  ctx.set(0, Value::tensor(x.type(), x.shape(), i));
}

// ---- casts ------------------------------------------------------------------------------------

void op_Cast(OpContext& ctx) {
  const auto to = static_cast<ElemType>(ctx.attr_int("to", 0));
  const bool sat = ctx.attr_int("saturate", 1) != 0;
  const std::string rm = ctx.attr_string("round_mode", "up");
  const int round = rm == "up" ? 0 : rm == "down" ? 1 : 2;
  ctx.set(0, cast_value(ctx, ctx.in(0), to, sat, round));
}
void op_CastLike(OpContext& ctx) {
  const bool sat = ctx.attr_int("saturate", 1) != 0;
  const std::string rm = ctx.attr_string("round_mode", "up");
  const int round = rm == "up" ? 0 : rm == "down" ? 1 : 2;
  ctx.set(0, cast_value(ctx, ctx.in(0), ctx.in(1).type(), sat, round));
}

}  // namespace

void register_elementwise(OpRegistry& r) {
#define REG(Name) r.add(#Name, op_##Name)
  REG(Sqrt);
  REG(Exp);
  REG(Log);
  REG(Sin);
  REG(Cos);
  REG(Tan);
  REG(Asin);
  REG(Acos);
  REG(Atan);
  REG(Sinh);
  REG(Cosh);
  REG(Tanh);
  REG(Asinh);
  REG(Acosh);
  REG(Atanh);
  REG(Floor);
  REG(Ceil);
  REG(Round);
  REG(Erf);
  REG(Reciprocal);
  REG(Abs);
  REG(Neg);
  REG(Sign);
  REG(Identity);
  REG(IsNaN);
  REG(IsInf);
  REG(Add);
  REG(Sub);
  REG(Mul);
  REG(Div);
  REG(Mod);
  REG(Pow);
  REG(Equal);
  REG(Less);
  REG(LessOrEqual);
  REG(Greater);
  REG(GreaterOrEqual);
  REG(And);
  REG(Or);
  REG(Xor);
  REG(Not);
  REG(BitwiseAnd);
  REG(BitwiseOr);
  REG(BitwiseXor);
  REG(BitwiseNot);
  REG(BitShift);
  REG(Where);
  REG(Clip);
  REG(Cast);
  REG(CastLike);
#undef REG
  r.add("Max", op_variadic<0>);
  r.add("Min", op_variadic<1>);
  r.add("Sum", op_variadic<2>);
  r.add("Mean", op_variadic<3>);
}

}  // namespace ember::onnx::detail
