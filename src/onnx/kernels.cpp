// Shared kernel helpers: casts between element types, axes, host value builders.
#include "kernels.hpp"

#include <charconv>
#include <cstdlib>

namespace ember::onnx::detail {

Value value_from_doubles(const std::vector<double>& vals, const Dims& shape, ElemType type,
                         const Device& dev) {
  TensorData d(vals, Shape(shape));
  return Value::from_data(d.convert(storage_dtype(type)), dev, type);
}

Value value_from_int64s(const std::vector<std::int64_t>& vals, const Dims& shape, ElemType type,
                        const Device& dev) {
  TensorData d(vals, Shape(shape));
  return Value::from_data(d.convert(storage_dtype(type)), dev, type);
}

namespace {

std::string number_to_string(double v, ElemType from) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "INF" : "-INF";
  char buf[64];
  std::to_chars_result r;
  if (from == ElemType::Double) {
    r = std::to_chars(buf, buf + sizeof buf, v);
  } else if (is_float_type(from)) {
    r = std::to_chars(buf, buf + sizeof buf, static_cast<float>(v));
  } else {
    r = std::to_chars(buf, buf + sizeof buf, static_cast<long long>(v));
  }
  return std::string(buf, r.ptr);
}

double string_to_number(const OpContext& ctx, const std::string& s) {
  std::string t;
  for (char c : s) t.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  if (t == "nan" || t == "+nan" || t == "-nan") return std::numeric_limits<double>::quiet_NaN();
  if (t == "inf" || t == "+inf" || t == "infinity" || t == "+infinity")
    return std::numeric_limits<double>::infinity();
  if (t == "-inf" || t == "-infinity") return -std::numeric_limits<double>::infinity();
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end == s.c_str()) ctx.fail("cannot convert the string \"", s, "\" to a number");
  return v;
}

std::int64_t int_min(ElemType t) {
  switch (t) {
    case ElemType::Int4:
      return -8;
    case ElemType::Int2:
      return -2;
    default:
      return 0;
  }
}
std::int64_t int_max(ElemType t) {
  switch (t) {
    case ElemType::Int4:
      return 7;
    case ElemType::UInt4:
      return 15;
    case ElemType::Int2:
      return 1;
    case ElemType::UInt2:
      return 3;
    default:
      return 0;
  }
}

}  // namespace

Value cast_value(const OpContext& ctx, const Value& v, ElemType to, bool saturate, int round_mode) {
  if (!v.is_tensor()) ctx.fail("Cast expects a tensor, got ", v.describe());
  if (v.type() == to) return v;
  const Device dev = v.device();
  if (to == ElemType::String) {
    const auto vals = v.to_doubles();
    std::vector<std::string> out;
    out.reserve(vals.size());
    for (double d : vals)
      out.push_back(v.type() == ElemType::Bool ? (d != 0 ? "True" : "False")
                                               : number_to_string(d, v.type()));
    return Value::strings(v.shape(), std::move(out));
  }
  if (v.type() == ElemType::String) {
    std::vector<double> vals;
    for (const auto& s : v.string_values()) vals.push_back(string_to_number(ctx, s));
    Value f = value_from_doubles(vals, v.shape(), ElemType::Double, ctx.device);
    return cast_value(ctx, f, to, saturate, round_mode);
  }
  const DType sd = storage_dtype(to);
  if (is_small_float(to)) {
    // Round every value to the format on the host (table lookup).
    std::vector<float> vals;
    for (double d : v.to_doubles()) vals.push_back(static_cast<float>(d));
    for (auto& f : vals)
      f = small_float_decode(to, small_float_encode(to, f, saturate, round_mode));
    return Value::from_data(TensorData(vals, Shape(v.shape())), dev, to);
  }
  if (to == ElemType::Int4 || to == ElemType::UInt4 || to == ElemType::Int2 ||
      to == ElemType::UInt2) {
    // Values wrap into the type's range as the reference's astype does.
    const auto vals =
        v.is_float_store() ? v.floats().cast(DType::F64).round().int_().into_data() : v.to_data();
    std::vector<std::int64_t> iv = vals.to_vec<std::int64_t>();
    const std::int64_t lo = int_min(to), hi = int_max(to), span = hi - lo + 1;
    for (auto& x : iv) {
      std::int64_t m = (x - lo) % span;
      if (m < 0) m += span;
      x = m + lo;
    }
    return value_from_int64s(iv, v.shape(), to, dev);
  }
  if (to == ElemType::Bool) {
    if (v.is_float_store()) return Value::tensor(to, v.shape(), v.floats().bool_());
    if (v.is_int_store()) return Value::tensor(to, v.shape(), v.ints().bool_());
    return Value::tensor(to, v.shape(), v.bools());
  }
  if (is_float(sd)) {
    if (v.is_float_store()) return Value::tensor(to, v.shape(), v.floats().cast(sd));
    if (v.is_int_store()) {
      if (v.type() == ElemType::UInt64) {
        // Values >= 2^63 are stored negative: add 2^64 on the way.
        FloatStore f = v.ints().float_(DType::F64);
        f = f.add(f.lower_elem(0).float_(DType::F64).mul_scalar(18446744073709551616.0));
        return Value::tensor(to, v.shape(), f.cast(sd));
      }
      return Value::tensor(to, v.shape(), v.ints().float_(sd));
    }
    return Value::tensor(to, v.shape(), v.bools().float_(sd));
  }
  // integer targets
  const IntStore out = [&]() -> IntStore {
    if (v.is_float_store()) {
      const FloatStore& f = v.floats();
      if (to == ElemType::UInt32 || to == ElemType::UInt64 || to == ElemType::UInt16 ||
          to == ElemType::UInt8)
        return f.cast(DType::F64).int_(DType::I64);  // then wrap, as C conversions do
      return f.int_(sd);
    }
    if (v.is_int_store()) return v.ints();
    return v.bools().int_(DType::I64);
  }();
  if (to == ElemType::UInt16)
    return Value::tensor(to, v.shape(), out.cast(DType::I64).bitwise_and_scalar(0xffff).cast(sd));
  if (to == ElemType::UInt32)
    return Value::tensor(to, v.shape(), out.cast(DType::I64).bitwise_and_scalar(0xffffffffLL));
  if (to == ElemType::UInt8 && out.dtype() != DType::U8)
    return Value::tensor(to, v.shape(), out.cast(DType::I64).bitwise_and_scalar(0xff).cast(sd));
  return Value::tensor(to, v.shape(), out.cast(sd));
}

Value cat_values(const OpContext& ctx, const std::vector<Value>& parts, const Dims& out,
                 std::int64_t pax_) {
  if (parts.empty()) ctx.fail("nothing to concatenate");
  return map_any(ctx, parts[0], out, [&](const auto& s0) {
    using S = std::decay_t<decltype(s0)>;
    std::vector<S> ss;
    for (const auto& p : parts) {
      if (p.type() != parts[0].type())
        ctx.fail<DTypeError>("cannot join ", p.describe(), " and ", parts[0].describe());
      if constexpr (std::is_same_v<S, FloatStore>)
        ss.push_back(p.floats());
      else if constexpr (std::is_same_v<S, IntStore>)
        ss.push_back(p.ints());
      else
        ss.push_back(p.bools());
    }
    return S::cat(ss, pax_);
  });
}

Dims axes_from(const OpContext& ctx, std::size_t input_index, std::size_t rank, bool* given) {
  Dims axes;
  bool have = false;
  if (ctx.has(input_index)) {
    axes = host_ints(ctx.tensor(input_index));
    have = true;
  } else if (ctx.attr("axes")) {
    axes = ctx.attr_ints("axes");
    have = true;
  }
  for (auto& a : axes) a = norm_axis(ctx, a, rank);
  if (given) *given = have;
  return axes;
}

}  // namespace ember::onnx::detail
