// Indexing operators: Gather, GatherElements, GatherND, ScatterElements (Scatter),
// ScatterND, OneHot, Compress, NonZero.
#include <cstring>

#include "kernels.hpp"

namespace ember::onnx::detail {

namespace {

/// Index store with negative entries moved into range: idx + n * (idx < 0).
IntStore normalize_indices(const IntStore& idx, std::int64_t n) {
  const IntStore i64 = idx.cast(DType::I64);
  return i64.add(i64.lower_elem(0).int_(DType::I64).mul_scalar(n));
}

/// Throws ShapeError naming the node for an index outside [-n, n).
void check_range(const OpContext& ctx, const Value& idx, std::int64_t n, const char* what) {
  for (auto v : idx.to_int64s())
    if (v < -n || v >= n)
      ctx.fail<ShapeError>(what, " index ", v, " is out of range for a dim of size ", n);
}

void op_Gather(OpContext& ctx) {
  const Value& x = ctx.tensor(0);
  const Value& idx = ctx.tensor(1);
  const std::size_t r = x.rank();
  if (r == 0) ctx.fail<ShapeError>("data must have rank >= 1");
  const std::int64_t axis = norm_axis(ctx, ctx.attr_int("axis", 0), r);
  const std::int64_t n = x.shape()[static_cast<std::size_t>(axis)];
  check_range(ctx, idx, n, "Gather");
  Dims out(x.shape().begin(), x.shape().begin() + axis);
  out.insert(out.end(), idx.shape().begin(), idx.shape().end());
  out.insert(out.end(), x.shape().begin() + axis + 1, x.shape().end());
  const auto flat = normalize_indices(idx.ints(), n).template reshape<1>(Shape{idx.numel()});
  if (x.type() == ElemType::String) {
    const auto iv = flat.to_vec<std::int64_t>();
    std::int64_t outer = 1, inner = 1;
    for (std::int64_t d = 0; d < axis; ++d) outer *= x.shape()[static_cast<std::size_t>(d)];
    for (std::size_t d = static_cast<std::size_t>(axis) + 1; d < r; ++d) inner *= x.shape()[d];
    std::vector<std::string> res;
    for (std::int64_t o = 0; o < outer; ++o)
      for (auto i : iv)
        for (std::int64_t k = 0; k < inner; ++k)
          res.push_back(x.string_values()[static_cast<std::size_t>((o * n + i) * inner + k)]);
    ctx.set(0, Value::strings(out, std::move(res)));
    return;
  }
  const std::int64_t pa = pax(axis, r);
  // select keeps rank 8: [.., n, ..] -> [.., k, ..], then reshape to the logical shape.
  ctx.set(0, map_any(ctx, x, out, [&](const auto& s) { return s.select(pa, flat); }));
}

void op_GatherElements(OpContext& ctx) {
  const Value& x = ctx.tensor(0);
  const Value& idx = ctx.tensor(1);
  const std::size_t r = x.rank();
  if (idx.rank() != r)
    ctx.fail<ShapeError>("indices ", idx.describe(), " and data ", x.describe(), " differ in rank");
  const std::int64_t axis = norm_axis(ctx, ctx.attr_int("axis", 0), r);
  const std::int64_t n = x.shape()[static_cast<std::size_t>(axis)];
  check_range(ctx, idx, n, "GatherElements");
  const IntStore i = normalize_indices(idx.ints(), n);
  ctx.set(0,
          map_any(ctx, x, idx.shape(), [&](const auto& s) { return s.gather(pax(axis, r), i); }));
}

void op_GatherND(OpContext& ctx) {
  const Value& x = ctx.tensor(0);
  const Value& idx = ctx.tensor(1);
  const auto b = static_cast<std::size_t>(ctx.attr_int("batch_dims", 0));
  const std::size_t r = x.rank(), q = idx.rank();
  if (q < 1) ctx.fail<ShapeError>("indices must have rank >= 1");
  const auto k = static_cast<std::size_t>(idx.shape().back());
  if (b + k > r)
    ctx.fail<ShapeError>("indices last dim ", k, " + batch_dims ", b, " exceeds the data rank ", r);
  if (b >= q) ctx.fail<ShapeError>("batch_dims ", b, " must be smaller than the indices rank ", q);
  for (std::size_t d = 0; d < b; ++d)
    if (idx.shape()[d] != x.shape()[d])
      ctx.fail<ShapeError>("batch dims of indices ", idx.describe(), " and data ", x.describe(),
                           " differ");
  Dims out(idx.shape().begin(), idx.shape().end() - 1);
  for (std::size_t d = b + k; d < r; ++d) out.push_back(x.shape()[d]);
  std::int64_t bn = 1, nq = 1, rest = 1;
  for (std::size_t d = 0; d < b; ++d) bn *= x.shape()[d];
  for (std::size_t d = b; d < b + k; ++d) nq *= x.shape()[d];
  for (std::size_t d = b + k; d < r; ++d) rest *= x.shape()[d];
  // Linear index per (batch, lookup) on the host: small index tensors.
  const auto iv = idx.to_int64s();
  const std::int64_t per_batch =
      idx.numel() /
      std::max<std::int64_t>(bn * std::max<std::int64_t>(static_cast<std::int64_t>(k), 1), 1);
  std::vector<std::int64_t> lin;
  lin.reserve(static_cast<std::size_t>(bn * per_batch));
  for (std::int64_t bi = 0; bi < bn; ++bi)
    for (std::int64_t m = 0; m < per_batch; ++m) {
      std::int64_t l = 0;
      for (std::size_t j = 0; j < k; ++j) {
        const std::int64_t dim = x.shape()[b + j];
        std::int64_t v = iv[static_cast<std::size_t>(
            (bi * per_batch + m) * static_cast<std::int64_t>(k) + static_cast<std::int64_t>(j))];
        if (v < -dim || v >= dim)
          ctx.fail<ShapeError>("GatherND index ", v, " is out of range for a dim of size ", dim);
        if (v < 0) v += dim;
        l = l * dim + v;
      }
      lin.push_back(bi * nq + l);
    }
  const Value li = Value::int64s(lin, ctx.device);
  const auto flat = li.ints().template reshape<1>(Shape{static_cast<std::int64_t>(lin.size())});
  const Value x2 = reshaped(x, {bn * nq, rest});
  ctx.set(0, map_any(ctx, x2, out, [&](const auto& s) { return s.select(R - 2, flat); }));
}

/// Host scatter over element indices: data[target(k)] (op)= updates[k].
Value host_scatter(const OpContext& ctx, const Value& data,
                   const std::vector<std::int64_t>& targets, const Value& updates,
                   const std::string& reduction) {
  TensorData d = data.to_data();
  const TensorData u = updates.to_data();
  if (reduction == "none") {
    const std::size_t es = dtype_size(d.dtype());
    auto& bytes = d.bytes_mut();
    for (std::size_t k = 0; k < targets.size(); ++k)
      std::memcpy(bytes.data() + static_cast<std::size_t>(targets[k]) * es,
                  u.bytes().data() + k * es, es);
    return Value::from_data(d, ctx.device, data.type());
  }
  auto dv = d.to_vec<double>();
  const auto uv = u.to_vec<double>();
  for (std::size_t k = 0; k < targets.size(); ++k) {
    double& t = dv[static_cast<std::size_t>(targets[k])];
    if (reduction == "add")
      t += uv[k];
    else if (reduction == "mul")
      t *= uv[k];
    else if (reduction == "max")
      t = std::max(t, uv[k]);
    else if (reduction == "min")
      t = std::min(t, uv[k]);
    else
      ctx.fail("unknown reduction \"", reduction, "\"");
  }
  return value_from_doubles(dv, data.shape(), data.type(), ctx.device);
}

void op_ScatterElements(OpContext& ctx) {
  const Value& x = ctx.tensor(0);
  const Value& idx = ctx.tensor(1);
  const Value& upd = ctx.tensor(2);
  const std::size_t r = x.rank();
  const std::int64_t axis = norm_axis(ctx, ctx.attr_int("axis", 0), r);
  const std::string reduction = ctx.attr_string("reduction", "none");
  if (idx.shape() != upd.shape())
    ctx.fail<ShapeError>("indices ", idx.describe(), " and updates ", upd.describe(),
                         " differ in shape");
  if (idx.rank() != r) ctx.fail<ShapeError>("indices and data differ in rank");
  const auto iv = idx.to_int64s();
  std::vector<std::int64_t> targets(iv.size());
  Dims strides(r, 1);
  for (std::size_t d = r; d-- > 1;) strides[d - 1] = strides[d] * x.shape()[d];
  Dims pos(r, 0);
  for (std::size_t k = 0; k < iv.size(); ++k) {
    std::int64_t off = 0;
    for (std::size_t d = 0; d < r; ++d) {
      std::int64_t v = pos[d];
      if (static_cast<std::int64_t>(d) == axis) {
        const std::int64_t n = x.shape()[d];
        v = iv[k];
        if (v < -n || v >= n)
          ctx.fail<ShapeError>("index ", v, " is out of range for axis ", axis, " of size ", n);
        if (v < 0) v += n;
      } else if (v >= x.shape()[d]) {
        ctx.fail<ShapeError>("indices ", idx.describe(), " exceed data ", x.describe());
      }
      off += v * strides[d];
    }
    targets[k] = off;
    for (std::size_t d = r; d-- > 0;) {
      if (++pos[d] < idx.shape()[d]) break;
      pos[d] = 0;
    }
  }
  ctx.set(0, host_scatter(ctx, x, targets, upd, reduction));
}

void op_ScatterND(OpContext& ctx) {
  const Value& x = ctx.tensor(0);
  const Value& idx = ctx.tensor(1);
  const Value& upd = ctx.tensor(2);
  const std::string reduction = ctx.attr_string("reduction", "none");
  const std::size_t r = x.rank();
  if (idx.rank() < 1) ctx.fail<ShapeError>("indices must have rank >= 1");
  const auto k = static_cast<std::size_t>(idx.shape().back());
  if (k > r) ctx.fail<ShapeError>("indices last dim ", k, " exceeds the data rank ", r);
  std::int64_t slice = 1;
  for (std::size_t d = k; d < r; ++d) slice *= x.shape()[d];
  const auto iv = idx.to_int64s();
  const std::int64_t m = k ? static_cast<std::int64_t>(iv.size() / k) : 1;
  if (upd.numel() != m * slice)
    ctx.fail<ShapeError>("updates ", upd.describe(), " do not match indices ", idx.describe(),
                         " and data ", x.describe());
  std::vector<std::int64_t> targets;
  targets.reserve(static_cast<std::size_t>(m * slice));
  for (std::int64_t j = 0; j < m; ++j) {
    std::int64_t base = 0;
    for (std::size_t d = 0; d < k; ++d) {
      const std::int64_t n = x.shape()[d];
      std::int64_t v = iv[static_cast<std::size_t>(j) * k + d];
      if (v < -n || v >= n)
        ctx.fail<ShapeError>("index ", v, " is out of range for dim ", d, " of size ", n);
      if (v < 0) v += n;
      base = base * n + v;
    }
    for (std::int64_t s = 0; s < slice; ++s) targets.push_back(base * slice + s);
  }
  ctx.set(0, host_scatter(ctx, x, targets, upd, reduction));
}

void op_OneHot(OpContext& ctx) {
  const Value& idx = ctx.tensor(0);
  const std::int64_t depth = static_cast<std::int64_t>(host_scalar(ctx.tensor(1)));
  const Value& values = ctx.tensor(2);
  if (depth <= 0) ctx.fail("depth must be positive, got ", depth);
  const std::size_t r = idx.rank() + 1;
  const std::int64_t axis = norm_axis(ctx, ctx.attr_int("axis", -1), r);
  Dims out = idx.shape();
  out.insert(out.begin() + axis, depth);
  // Host: one_hot over small index tensors.
  const auto iv = idx.to_doubles();
  const auto vv = values.to_doubles();
  if (vv.size() != 2) ctx.fail<ShapeError>("values must hold [off, on], got ", values.describe());
  std::int64_t outer = 1, inner = 1;
  for (std::int64_t d = 0; d < axis; ++d) outer *= idx.shape()[static_cast<std::size_t>(d)];
  for (std::size_t d = static_cast<std::size_t>(axis); d < idx.rank(); ++d) inner *= idx.shape()[d];
  std::vector<double> res(static_cast<std::size_t>(outer * depth * inner), vv[0]);
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t i = 0; i < inner; ++i) {
      auto c = static_cast<std::int64_t>(iv[static_cast<std::size_t>(o * inner + i)]);
      if (c < 0) c += depth;
      if (c < 0 || c >= depth) continue;
      res[static_cast<std::size_t>((o * depth + c) * inner + i)] = vv[1];
    }
  ctx.set(0, value_from_doubles(res, out, values.type(), ctx.device));
}

void op_Compress(OpContext& ctx) {
  const Value& x = ctx.tensor(0);
  const auto cond = ctx.tensor(1).to_int64s();
  const bool has_axis = ctx.attr("axis") != nullptr;
  Value src = has_axis ? x : reshaped(x, {x.numel()});
  const std::int64_t axis = has_axis ? norm_axis(ctx, ctx.attr_int("axis", 0), x.rank()) : 0;
  const std::int64_t n = src.shape()[static_cast<std::size_t>(axis)];
  std::vector<std::int64_t> keep;
  for (std::size_t i = 0; i < cond.size() && static_cast<std::int64_t>(i) < n; ++i)
    if (cond[i]) keep.push_back(static_cast<std::int64_t>(i));
  if (static_cast<std::int64_t>(cond.size()) > n)
    ctx.fail<ShapeError>("condition has ", cond.size(), " entries for a dim of size ", n);
  Dims out = src.shape();
  out[static_cast<std::size_t>(axis)] = static_cast<std::int64_t>(keep.size());
  const Value ki = Value::int64s(keep, ctx.device);
  const auto flat = ki.ints().template reshape<1>(Shape{static_cast<std::int64_t>(keep.size())});
  const std::int64_t pa = pax(axis, src.rank());
  ctx.set(0, map_any(ctx, src, out, [&](const auto& s) { return s.select(pa, flat); }));
}

void op_NonZero(OpContext& ctx) {
  const Value& x = ctx.tensor(0);
  const std::size_t r = x.rank();
  const auto v = x.to_doubles();
  std::vector<std::int64_t> coords;
  std::vector<std::vector<std::int64_t>> cols(r);
  Dims pos(r, 0);
  std::int64_t count = 0;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (v[i] != 0) {
      for (std::size_t d = 0; d < r; ++d) cols[d].push_back(pos[d]);
      ++count;
    }
    for (std::size_t d = r; d-- > 0;) {
      if (++pos[d] < x.shape()[d]) break;
      pos[d] = 0;
    }
  }
  for (const auto& c : cols) coords.insert(coords.end(), c.begin(), c.end());
  ctx.set(0, value_from_int64s(coords, {static_cast<std::int64_t>(r), count}, ElemType::Int64,
                               ctx.device));
}

}  // namespace

void register_indexing(OpRegistry& r) {
#define REG(Name) r.add(#Name, op_##Name)
  REG(Gather);
  REG(GatherElements);
  REG(GatherND);
  REG(ScatterElements);
  REG(ScatterND);
  REG(OneHot);
  REG(Compress);
  REG(NonZero);
#undef REG
  r.add("Scatter", op_ScatterElements);
}

}  // namespace ember::onnx::detail
