// Host-side operators: string tensors (StringConcat, StringSplit, StringNormalizer,
// RegexFullMatch with ECMAScript regexes), BitCast and Unique. They read their inputs back
// to the host (a device sync) by nature.
#include <algorithm>
#include <cstring>
#include <map>
#include <regex>

#include "kernels.hpp"

namespace ember::onnx::detail {

namespace {

/// Row-major offset into a tensor of shape `s` for the broadcast index `idx` of rank r.
std::int64_t bcast_offset(const Dims& s, const Dims& idx) {
  const std::size_t r = idx.size();
  std::int64_t off = 0;
  for (std::size_t k = 0; k < s.size(); ++k) {
    const std::size_t d = k + r - s.size();
    off = off * s[k] + (s[k] == 1 ? 0 : idx[d]);
  }
  return off;
}

void op_StringConcat(OpContext& ctx) {
  const Value& a = ctx.tensor(0);
  const Value& b = ctx.tensor(1);
  const Dims shape = broadcast_dims(ctx, a.shape(), b.shape());
  const auto& sa = a.string_values();
  const auto& sb = b.string_values();
  std::vector<std::string> out(static_cast<std::size_t>(numel_of(shape)));
  Dims idx(shape.size(), 0);
  for (auto& o : out) {
    o = sa[static_cast<std::size_t>(bcast_offset(a.shape(), idx))] +
        sb[static_cast<std::size_t>(bcast_offset(b.shape(), idx))];
    for (std::size_t d = idx.size(); d-- > 0;) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
  ctx.set(0, Value::strings(shape, std::move(out)));
}

void op_StringSplit(OpContext& ctx) {
  const Value& x = ctx.tensor(0);
  const std::string delim = ctx.attr_string("delimiter", "");
  const std::int64_t maxsplit = ctx.attr_int("maxsplit", std::numeric_limits<std::int64_t>::max());
  std::vector<std::vector<std::string>> parts;
  std::size_t width = 0;
  for (const auto& s : x.string_values()) {
    std::vector<std::string> p;
    if (delim.empty()) {  // runs of whitespace, leading/trailing ignored
      std::size_t i = 0;
      std::int64_t splits = 0;
      while (i < s.size()) {
        while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
        if (i >= s.size()) break;
        if (splits >= maxsplit) {
          std::size_t e = s.size();
          while (e > i && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
          p.push_back(s.substr(i, e - i));
          break;
        }
        std::size_t j = i;
        while (j < s.size() && !std::isspace(static_cast<unsigned char>(s[j]))) ++j;
        p.push_back(s.substr(i, j - i));
        ++splits;
        i = j;
      }
    } else {
      std::size_t start = 0;
      std::int64_t splits = 0;
      while (true) {
        const std::size_t f = splits < maxsplit ? s.find(delim, start) : std::string::npos;
        if (f == std::string::npos) {
          p.push_back(s.substr(start));
          break;
        }
        p.push_back(s.substr(start, f - start));
        start = f + delim.size();
        ++splits;
      }
    }
    width = std::max(width, p.size());
    parts.push_back(std::move(p));
  }
  std::vector<std::string> out;
  std::vector<std::int64_t> counts;
  for (auto& p : parts) {
    counts.push_back(static_cast<std::int64_t>(p.size()));
    p.resize(width);
    out.insert(out.end(), p.begin(), p.end());
  }
  Dims ys = x.shape();
  ys.push_back(static_cast<std::int64_t>(width));
  ctx.set(0, Value::strings(ys, std::move(out)));
  ctx.set(1, value_from_int64s(counts, x.shape(), ElemType::Int64, ctx.device));
}

std::string change_case(std::string s, const std::string& action) {
  for (auto& c : s) {
    if (action == "LOWER") c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (action == "UPPER") c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  return s;
}

void op_StringNormalizer(OpContext& ctx) {
  const Value& x = ctx.tensor(0);
  const std::string action = ctx.attr_string("case_change_action", "NONE");
  const bool sensitive = ctx.attr_int("is_case_sensitive", 0) != 0;
  const auto stop = ctx.attr_strings("stopwords");
  std::vector<std::string> out;
  for (const auto& s : x.string_values()) {
    bool drop = false;
    for (const auto& w : stop)
      drop = drop || (sensitive ? s == w : change_case(s, "LOWER") == change_case(w, "LOWER"));
    if (!drop) out.push_back(change_case(s, action));
  }
  Dims shape = x.rank() == 2 ? Dims{1, static_cast<std::int64_t>(out.size())}
                             : Dims{static_cast<std::int64_t>(out.size())};
  if (out.empty()) {
    out.push_back("");
    shape = x.rank() == 2 ? Dims{1, 1} : Dims{1};
  }
  ctx.set(0, Value::strings(shape, std::move(out)));
}

void op_RegexFullMatch(OpContext& ctx) {
  const Value& x = ctx.tensor(0);
  std::regex re;
  try {
    re = std::regex(ctx.attr_string("pattern", ""), std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    ctx.fail("invalid pattern: ", e.what());
  }
  std::vector<bool> out;
  for (const auto& s : x.string_values()) out.push_back(std::regex_match(s, re));
  ctx.set(0, Value::from_data(TensorData(out, Shape(x.shape())), ctx.device, ElemType::Bool));
}

// ---- BitCast ------------------------------------------------------------------------------------

std::size_t type_bits(ElemType t) {
  switch (t) {
    case ElemType::Double:
    case ElemType::Int64:
    case ElemType::UInt64:
      return 64;
    case ElemType::Float:
    case ElemType::Int32:
    case ElemType::UInt32:
      return 32;
    case ElemType::Float16:
    case ElemType::BFloat16:
    case ElemType::Int16:
    case ElemType::UInt16:
      return 16;
    case ElemType::Int4:
    case ElemType::UInt4:
    case ElemType::Float4E2M1:
      return 4;
    case ElemType::Int2:
    case ElemType::UInt2:
      return 2;
    default:
      return 8;
  }
}

/// Each element's bit pattern (ONNX's width, little-endian) as uint64.
std::vector<std::uint64_t> bits_of(const Value& v) {
  const TensorData d = v.to_data();
  const ElemType t = v.type();
  std::vector<std::uint64_t> out(static_cast<std::size_t>(d.numel()));
  const std::size_t es = dtype_size(d.dtype());
  const std::uint64_t mask = type_bits(t) == 64 ? ~0ULL : ((1ULL << type_bits(t)) - 1);
  for (std::size_t i = 0; i < out.size(); ++i) {
    std::uint64_t b = 0;
    if (is_small_float(t)) {
      float f;
      std::memcpy(&f, d.bytes().data() + i * 4, 4);
      b = small_float_encode(t, f, false);
    } else {
      std::memcpy(&b, d.bytes().data() + i * es, es);
    }
    out[i] = b & mask;
  }
  return out;
}

void op_BitCast(OpContext& ctx) {
  const Value& x = ctx.tensor(0);
  const auto to = static_cast<ElemType>(ctx.attr_int("to", 0));
  if (x.type() == ElemType::String || to == ElemType::String)
    ctx.fail("strings cannot be bit-cast");
  if (type_bits(x.type()) != type_bits(to))
    ctx.fail("cannot bit-cast ", elem_type_name(x.type()), " to ", elem_type_name(to),
             " (different widths)");
  const auto bits = bits_of(x);
  const DType sd = storage_dtype(to);
  const std::size_t es = dtype_size(sd), w = type_bits(to);
  std::vector<std::uint8_t> bytes(bits.size() * es);
  for (std::size_t i = 0; i < bits.size(); ++i) {
    std::uint64_t b = bits[i];
    if (is_small_float(to)) {
      const float f = small_float_decode(to, static_cast<std::uint32_t>(b));
      std::memcpy(bytes.data() + i * 4, &f, 4);
      continue;
    }
    if (to == ElemType::Bool) b = b != 0;
    if (is_signed_int_type(to) && w < 64 && es * 8 > w && (b >> (w - 1)) & 1)
      b |= ~0ULL << w;  // sign-extend
    std::memcpy(bytes.data() + i * es, &b, es);
  }
  ctx.set(0, Value::from_data(TensorData::from_bytes(std::move(bytes), Shape(x.shape()), sd),
                              ctx.device, to));
}

// ---- Unique
// --------------------------------------------------------------------------------------

void op_Unique(OpContext& ctx) {
  const Value& x = ctx.tensor(0);
  const bool sorted = ctx.attr_int("sorted", 1) != 0;
  const bool has_axis = ctx.attr("axis") != nullptr;
  const std::int64_t axis = has_axis ? norm_axis(ctx, ctx.attr_int("axis", 0), x.rank()) : 0;
  const Value src = has_axis ? x : reshaped(x, {x.numel()});
  const auto vals = src.to_doubles();
  const std::int64_t n = src.shape()[static_cast<std::size_t>(axis)];
  std::int64_t outer = 1, inner = 1;
  for (std::int64_t d = 0; d < axis; ++d) outer *= src.shape()[static_cast<std::size_t>(d)];
  for (std::size_t d = static_cast<std::size_t>(axis) + 1; d < src.rank(); ++d)
    inner *= src.shape()[d];
  auto slice_of = [&](std::int64_t i) {
    std::vector<double> s;
    for (std::int64_t o = 0; o < outer; ++o)
      for (std::int64_t k = 0; k < inner; ++k)
        s.push_back(vals[static_cast<std::size_t>((o * n + i) * inner + k)]);
    return s;
  };
  std::vector<std::vector<double>> uniq;
  std::vector<std::int64_t> first, inverse(static_cast<std::size_t>(n)), counts;
  for (std::int64_t i = 0; i < n; ++i) {
    const auto s = slice_of(i);
    auto it = std::find(uniq.begin(), uniq.end(), s);
    if (it == uniq.end()) {
      uniq.push_back(s);
      first.push_back(i);
      counts.push_back(0);
      it = uniq.end() - 1;
    }
    const auto u = it - uniq.begin();
    inverse[static_cast<std::size_t>(i)] = u;
    ++counts[static_cast<std::size_t>(u)];
  }
  std::vector<std::size_t> order(uniq.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  if (sorted)
    std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return uniq[a] < uniq[b]; });
  std::vector<std::int64_t> rank(order.size());
  for (std::size_t i = 0; i < order.size(); ++i) rank[order[i]] = static_cast<std::int64_t>(i);
  const auto m = static_cast<std::int64_t>(uniq.size());
  std::vector<double> y(static_cast<std::size_t>(outer * m * inner));
  std::vector<std::int64_t> idx, cnt;
  for (std::size_t j = 0; j < order.size(); ++j) {
    const auto& s = uniq[order[j]];
    for (std::int64_t o = 0; o < outer; ++o)
      for (std::int64_t k = 0; k < inner; ++k)
        y[static_cast<std::size_t>((o * m + static_cast<std::int64_t>(j)) * inner + k)] =
            s[static_cast<std::size_t>(o * inner + k)];
    idx.push_back(first[order[j]]);
    cnt.push_back(counts[order[j]]);
  }
  for (auto& v : inverse) v = rank[static_cast<std::size_t>(v)];
  Dims ys = src.shape();
  ys[static_cast<std::size_t>(axis)] = m;
  ctx.set(0, value_from_doubles(y, ys, x.type(), ctx.device));
  ctx.set(1, value_from_int64s(idx, {m}, ElemType::Int64, ctx.device));
  ctx.set(2, value_from_int64s(inverse, {n}, ElemType::Int64, ctx.device));
  ctx.set(3, value_from_int64s(cnt, {m}, ElemType::Int64, ctx.device));
}

}  // namespace

void register_string(OpRegistry& r) {
  r.add("StringConcat", op_StringConcat);
  r.add("StringSplit", op_StringSplit);
  r.add("StringNormalizer", op_StringNormalizer);
  r.add("RegexFullMatch", op_RegexFullMatch);
  r.add("BitCast", op_BitCast);
  r.add("Unique", op_Unique);
}

}  // namespace ember::onnx::detail
