// Layout ops on quantized tensors (issue 17): reshape, permute, narrow and cat move the stored
// integers, scales and zero points of a QTensor (ember/tensor/quant.hpp) without going
// through float values, so that, bit for bit,
//
//   quant::reshape<2>(q, s).dequantize()   == q.dequantize().reshape(s)
//   quant::permute(q, dims).dequantize()   == q.dequantize().permute(dims)
//   quant::narrow(q, d, a, n).dequantize() == q.dequantize().narrow(d, a, n)
//   quant::cat({p, q}, d).dequantize()     == Tensor::cat({p.dequantize(), q.dequantize()}, d)
//
// and the integers of the result are the same op on q's integers (quant::integers). The
// scheme follows the op: a channel axis moves with its dim; per-channel and per-block
// parameters are sliced or joined where they vary along the dim. A layout the scheme cannot
// describe (a reshape that splits the channel dim, a block level whose last dim moves or is
// cut inside a block) throws UnsupportedError: dequantize first for those.
//
// Packed int4 (two values a byte along the last dim, low nibble first): an op that keeps
// the last dim whole, or cuts it at even offsets, moves the bytes as they are; otherwise
// the nibbles are unpacked to i8 integers, moved, and packed again (the integers are kept
// exactly; a new padding nibble is 0).
//
// Every other op dequantizes, runs in float and, with Propagation::Propagate (Burn's
// QuantPropagation), quantizes its result again under the input's scheme: quant::apply.
//
//   QTensor<B, 2> w = x.quantize(QuantScheme::int4().per_channel(0));   // x [6, 8]
//   auto t = quant::transpose(w);                  // [8, 6], per-channel(axis=1)
//   auto h = quant::narrow(w, 0, 0, 3);            // rows 0..2 with their 3 scales
//   auto y = quant::apply(w, [](const Tensor<B, 2>& v) { return v.exp(); },
//                         quant::Propagation::Propagate);
//   QTensor<B, 2> e = y.quantized();               // exp(w) as int4 per-channel(axis=0)
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "ember/core/quant.hpp"
#include "ember/tensor/quant.hpp"
#include "ember/tensor/tensor.hpp"

// The helpers live in ember::detail::qlayout, not ember::quant::detail: a namespace
// ember::quant::detail would hide ember::detail from the other ember::quant headers.
namespace ember::detail::qlayout {

/// prod(shape[from:to]) (1 for an empty range).
inline std::int64_t prod(const Shape& shape, std::size_t from, std::size_t to) {
  std::int64_t n = 1;
  for (std::size_t k = from; k < to; ++k) n *= shape[k];
  return n;
}

/// The scheme with a channel axis counted from the front (schemes compare equal whether the
/// axis was given as -1 or rank - 1).
inline QuantScheme normalized(const QuantScheme& s, std::size_t rank) {
  QuantScheme n = s;
  if (n.level == QuantLevel::Channel) n.axis = static_cast<std::int64_t>(s.channel_dim(rank));
  return n;
}

/// Tensor::reshape's target resolution for a tensor of shape `in`: one -1 inferred, a 0
/// keeps the input dim at its position; ShapeError "[reshape] ..." otherwise.
inline Shape resolve_reshape(const Shape& in, const Shape& target) {
  Shape out = target;
  int infer = -1;
  std::int64_t known = 1;
  for (std::size_t i = 0; i < out.rank(); ++i) {
    if (out[i] == -1) {
      if (infer >= 0) fail<ShapeError>("reshape", "more than one -1 in target ", out);
      infer = static_cast<int>(i);
      continue;
    }
    if (out[i] == 0 && i < in.rank()) out[i] = in[i];
    if (out[i] < 0) fail<ShapeError>("reshape", "invalid dim ", out[i], " in target ", out);
    if (__builtin_mul_overflow(known, out[i], &known)) {
      fail<ShapeError>("reshape", "target ", out, " has more than 2^63 - 1 elements");
    }
  }
  if (infer >= 0) {
    if (known == 0 || in.numel() % known != 0) {
      fail<ShapeError>("reshape", "cannot reshape ", in, " into ", out);
    }
    out[static_cast<std::size_t>(infer)] = in.numel() / known;
  }
  if (checked_numel("reshape", out) != in.numel()) {
    fail<ShapeError>("reshape", "cannot reshape ", in, " (", in.numel(), " elements) into ", out,
                     " (", out.numel(), " elements)");
  }
  return out;
}

/// Packed int4 bytes [storage_shape(shape)] -> the integers [shape] in [-8, 7], as i8.
template <class B, std::size_t D>
Tensor<B, D, Int> unpack_int4(const Tensor<B, D, Int>& packed, const Shape& shape) {
  const std::int64_t w = shape[D - 1], w2 = (w + 1) / 2, rows = prod(shape, 0, D - 1);
  const Tensor<B, 3, Int> bytes =
      Tensor<B, 3, Int>(B::int_reshape(packed.primitive(), Shape{rows, w2, 1})).int_(DType::I32);
  // Byte j holds element 2j in its low nibble and 2j + 1 in its high one (two's complement).
  Tensor<B, 3, Int> nib =
      Tensor<B, 3, Int>::cat({bytes.remainder_scalar(16), bytes.div_scalar(16)}, 2);
  nib = nib - nib.greater_equal_elem(8).int_(DType::I32).mul_scalar(16);
  const Tensor<B, 2, Int> flat(B::int_reshape(nib.primitive(), Shape{rows, 2 * w2}));
  return Tensor<B, D, Int>(B::int_reshape(flat.narrow(1, 0, w).int_(DType::I8).primitive(), shape));
}

/// Integers [shape] in [-8, 7] (any int dtype, any strides) -> packed int4 bytes (u8) of
/// shape storage_shape(shape), an odd last dim padded with a 0 nibble.
template <class B, std::size_t D>
Tensor<B, D, Int> pack_int4(const Tensor<B, D, Int>& ints) {
  const Shape shape = ints.shape();
  const std::int64_t w = shape[D - 1], w2 = (w + 1) / 2, rows = prod(shape, 0, D - 1);
  Tensor<B, 2, Int> nib(B::int_reshape(ints.int_(DType::I32).primitive(), Shape{rows, w}));
  nib = nib.remainder_scalar(16);  // two's complement nibble, 0..15
  if (w % 2 == 1) {
    nib = Tensor<B, 2, Int>::cat(
        {nib, Tensor<B, 2, Int>::zeros(Shape{rows, 1}, ints.device(), DType::I32)}, 1);
  }
  const Tensor<B, 3, Int> pairs(B::int_reshape(nib.primitive(), Shape{rows, w2, 2}));
  const Tensor<B, 3, Int> bytes = pairs.narrow(2, 0, 1) + pairs.narrow(2, 1, 1).mul_scalar(16);
  Shape stored = shape;
  stored[D - 1] = w2;
  return Tensor<B, D, Int>(B::int_reshape(bytes.int_(DType::U8).primitive(), stored));
}

/// Integers [shape] -> the stored values under `s`: i8, or packed int4 bytes.
template <class B, std::size_t D>
Tensor<B, D, Int> store(const Tensor<B, D, Int>& ints, const QuantScheme& s) {
  return s.value == QuantValue::Int8 ? ints.int_(DType::I8) : pack_int4(ints);
}

/// permute / swap_dims / transpose on normalised axes (`op` names the errors).
template <class B, std::size_t D>
QTensor<B, D> permute(const char* op, const QTensor<B, D>& q,
                      const std::vector<std::size_t>& axes) {
  const Shape& in = q.shape();
  Shape out = in;
  std::vector<std::int64_t> dims(D);
  for (std::size_t i = 0; i < D; ++i) {
    out[i] = in[axes[i]];
    dims[i] = static_cast<std::int64_t>(axes[i]);
  }
  QuantScheme s = q.scheme();
  const bool last_stays = axes[D - 1] == D - 1;
  if (s.level == QuantLevel::Channel) {
    const std::size_t a = s.channel_dim(D);
    for (std::size_t i = 0; i < D; ++i) {
      if (axes[i] == a) s.axis = static_cast<std::int64_t>(i);
    }
  } else if (s.level == QuantLevel::Block && !last_stays) {
    fail<UnsupportedError>(op, "dims ", dims_list(dims), " move the last dim of a tensor of shape ",
                           in, " quantized as ", s.to_string(),
                           ": the per-block level needs the last dim to stay last "
                           "(dequantize first)");
  }
  const auto ints = [&] {
    if (s.value == QuantValue::Int8 || last_stays) return q.values().permute(dims);
    return pack_int4(unpack_int4(q.values(), in).permute(dims));
  }();
  std::optional<Tensor<B, D, Int>> zp;
  if (q.zero_points()) zp = q.zero_points()->permute(dims);
  return QTensor<B, D>(s, out, ints, q.scales().permute(dims), std::move(zp));
}

/// Whether T is Tensor<B, N, Float> for some N; `rank` is N.
template <class T, class B>
struct FloatTensorOf : std::false_type {};
template <class B, std::size_t N>
struct FloatTensorOf<Tensor<B, N, Float>, B> : std::true_type {
  static constexpr std::size_t rank = N;
};

}  // namespace ember::detail::qlayout

namespace ember::quant {

/// The integers of q, [q.shape()]: the int8 values as stored (i8), or the int4 nibbles
/// unpacked to i8 in [-8, 7]. The layout ops below give the same integers as the float op
/// on these.
template <class B, std::size_t D>
Tensor<B, D, Int> integers(const QTensor<B, D>& q) {
  if (q.scheme().value == QuantValue::Int8) return q.values();
  return detail::qlayout::unpack_int4(q.values(), q.shape());
}

// ---- reshape -------------------------------------------------------------------------------

/// q [s] reshaped to `shape` (rank D2) without dequantizing, as Tensor::reshape: same numel,
/// one dim may be -1 (inferred), a 0 keeps the input dim at its position. The scheme decides
/// which reshapes it can follow:
///   Tensor   any
///   Channel  the channel dim must survive: a dim a' of the result with shape[a'] ==
///            s[axis] and as many elements before it (prod(shape[:a']) == prod(s[:axis]),
///            so the same after it); the result's axis is a' (counted from the front; the
///            first such dim when size-1 dims make several fit)
///   Block    the last dim keeps its size (the blocks stay whole rows)
/// The scales and zero points are reshaped to the new params_shape. Packed int4 whose last
/// dim keeps its size reshapes the bytes; otherwise the nibbles are unpacked, reshaped and
/// packed again. Throws ShapeError for a target of the wrong rank, more than one -1, a
/// negative dim or another numel; UnsupportedError naming the rule for a reshape the
/// scheme cannot follow.
template <std::size_t D2, class B, std::size_t D>
QTensor<B, D2> reshape(const QTensor<B, D>& q, const Shape& shape) {
  static_assert(D2 >= 1, "a quantized tensor has rank >= 1");
  if (shape.rank() != D2) {
    detail::fail<ShapeError>("reshape", "target shape ", shape, " has rank ", shape.rank(),
                             ", expected rank ", D2);
  }
  using detail::qlayout::prod;
  const Shape& in = q.shape();
  const Shape out = detail::qlayout::resolve_reshape(in, shape);
  QuantScheme s = q.scheme();
  if (s.level == QuantLevel::Channel) {
    const std::size_t a = s.channel_dim(D);
    const std::int64_t before = prod(in, 0, a), after = prod(in, a + 1, D);
    std::optional<std::size_t> found;
    for (std::size_t i = 0; i < D2 && !found; ++i) {
      if (out[i] == in[a] && prod(out, 0, i) == before && prod(out, i + 1, D2) == after) found = i;
    }
    if (!found) {
      detail::fail<UnsupportedError>(
          "reshape", "cannot reshape ", in, " into ", out, " quantized as ", s.to_string(),
          ": the channel dim ", a, " (size ", in[a],
          ") must stay a dim of its own with as many elements before it (", before,
          ") (dequantize first)");
    }
    s.axis = static_cast<std::int64_t>(*found);
  } else if (s.level == QuantLevel::Block && out[D2 - 1] != in[D - 1]) {
    detail::fail<UnsupportedError>("reshape", "cannot reshape ", in, " into ", out,
                                   " quantized as ", s.to_string(),
                                   ": the per-block level needs the last dim to keep its size (",
                                   in[D - 1], ", blocks of ", s.block_size, ") (dequantize first)");
  }
  const Shape ps = s.params_shape(out);
  Tensor<B, D2, Int> values = [&] {
    if (s.value == QuantValue::Int8 || out[D2 - 1] == in[D - 1]) {
      return Tensor<B, D2, Int>(B::int_reshape(q.values().primitive(), s.storage_shape(out)));
    }
    const Tensor<B, D, Int> ints = integers(q);
    return detail::qlayout::pack_int4(Tensor<B, D2, Int>(B::int_reshape(ints.primitive(), out)));
  }();
  Tensor<B, D2> scales(B::float_reshape(q.scales().primitive(), ps));
  std::optional<Tensor<B, D2, Int>> zp;
  if (q.zero_points()) zp = Tensor<B, D2, Int>(B::int_reshape(q.zero_points()->primitive(), ps));
  return QTensor<B, D2>(s, out, std::move(values), std::move(scales), std::move(zp));
}

// ---- permute -------------------------------------------------------------------------------

/// q [s] with its dims reordered, out.shape[i] = s[dims[i]] (torch.permute; negative dims
/// count from the end), without dequantizing. Values, scales and zero points (same rank) are
/// permuted together; a channel axis follows its dim. Packed int4 keeping its last dim last
/// permutes the bytes; otherwise the nibbles are unpacked, permuted and packed again. Throws
/// ShapeError when dims does not list each of the D dims once; UnsupportedError for the
/// per-block level when the last dim moves.
template <class B, std::size_t D>
QTensor<B, D> permute(const QTensor<B, D>& q, const std::vector<std::int64_t>& dims) {
  if (dims.size() != D) {
    detail::fail<ShapeError>("permute", "expected ", D, " dims, got ", dims.size(), " (",
                             detail::dims_list(dims), ") for a tensor of shape ", q.shape());
  }
  return detail::qlayout::permute("permute", q, detail::normalize_dims("permute", dims, D));
}

/// q with dims a and b swapped (Tensor::swap_dims), as permute. ShapeError for a dim out of
/// range; UnsupportedError for the per-block level when one of them is the last dim (and
/// a != b).
template <class B, std::size_t D>
QTensor<B, D> swap_dims(const QTensor<B, D>& q, std::int64_t a, std::int64_t b) {
  const std::size_t x = normalize_dim("swap_dims", a, D), y = normalize_dim("swap_dims", b, D);
  std::vector<std::size_t> axes(D);
  for (std::size_t i = 0; i < D; ++i) axes[i] = i;
  std::swap(axes[x], axes[y]);
  return detail::qlayout::permute("swap_dims", q, axes);
}

/// q [.., m, n] -> [.., n, m] (Burn's transpose: the last two dims swapped), as permute. A
/// per-channel(axis=0) weight [out, in] becomes per-channel(axis=1) [in, out].
/// UnsupportedError for the per-block level (its last dim would move).
template <class B, std::size_t D>
requires(D >= 2) QTensor<B, D> transpose(const QTensor<B, D>& q) {
  std::vector<std::size_t> axes(D);
  for (std::size_t i = 0; i < D; ++i) axes[i] = i;
  std::swap(axes[D - 2], axes[D - 1]);
  return detail::qlayout::permute("transpose", q, axes);
}

// ---- narrow (slicing) ----------------------------------------------------------------------

/// `length` elements of `dim` from `start` (torch.narrow: start may be negative, counted
/// from the end) of q, without dequantizing. The scales and zero points are narrowed along
/// dim where they vary along it: the channel axis, any dim but the last for the per-block
/// level, and the last dim for the per-block level in whole blocks (start / block_size,
/// length / block_size). Packed int4 along the last dim narrows the bytes when start and
/// length are even; otherwise the nibbles are unpacked, narrowed and packed again. Throws
/// ShapeError for a dim out of range, start out of [-n, n] or start + length > n;
/// ValueError for length < 0; UnsupportedError for the per-block level along the last dim
/// when start or length is not a multiple of the block size.
template <class B, std::size_t D>
QTensor<B, D> narrow(const QTensor<B, D>& q, std::int64_t dim, std::int64_t start,
                     std::int64_t length) {
  const std::size_t d = normalize_dim("narrow", dim, D);
  const Shape& in = q.shape();
  const std::int64_t n = in[d];
  if (length < 0) detail::fail<ValueError>("narrow", "length must be >= 0, got ", length);
  if (start < -n || start > n) {
    detail::fail<ShapeError>("narrow", "start ", start, " is out of range for dim ", dim,
                             " of size ", n, " (shape ", in, ")");
  }
  const std::int64_t a = start < 0 ? start + n : start;
  if (length > n - a) {
    detail::fail<ShapeError>("narrow", "start ", start, " + length ", length, " exceeds dim ", dim,
                             " of size ", n, " (shape ", in, ")");
  }
  const QuantScheme& s = q.scheme();
  const bool last = d == D - 1;
  Shape out = in;
  out[d] = length;
  Tensor<B, D> scales = q.scales();
  std::optional<Tensor<B, D, Int>> zp = q.zero_points();
  const auto cut = [&](std::int64_t from, std::int64_t len) {
    scales = scales.narrow(static_cast<std::int64_t>(d), from, len);
    if (zp) zp = zp->narrow(static_cast<std::int64_t>(d), from, len);
  };
  if (s.level == QuantLevel::Channel && s.channel_dim(D) == d) {
    cut(a, length);
  } else if (s.level == QuantLevel::Block && !last) {
    cut(a, length);
  } else if (s.level == QuantLevel::Block) {
    const std::int64_t bs = s.block_size;
    if (a % bs != 0 || length % bs != 0) {
      detail::fail<UnsupportedError>("narrow", "start ", a, " and length ", length,
                                     " of the last dim of shape ", in,
                                     " must be multiples of the block size ", bs, " under ",
                                     s.to_string(), " (blocks cannot be cut; dequantize first)");
    }
    cut(a / bs, length / bs);
  }
  Tensor<B, D, Int> values = [&] {
    if (s.value == QuantValue::Int8 || !last) return q.values().narrow(dim, a, length);
    if (a % 2 == 0 && length % 2 == 0) return q.values().narrow(dim, a / 2, length / 2);
    return detail::qlayout::pack_int4(integers(q).narrow(dim, a, length));
  }();
  return QTensor<B, D>(s, out, std::move(values), std::move(scales), std::move(zp));
}

// ---- cat -----------------------------------------------------------------------------------

/// Joins quantized tensors along `dim` (torch.cat) without dequantizing: every dim but `dim`
/// must agree and every tensor must have the same scheme (a channel axis compared after
/// normalising, so -1 and D - 1 match; the result has qs[0]'s scheme). The parameters:
///   vary along dim (channel with axis == dim; per-block along any dim, along the last one
///   in whole blocks since each tensor's last dim is a multiple of block_size)
///     -> concatenated along dim
///   do not (per-tensor; channel with axis != dim)
///     -> must be equal, scales and zero points (torch.cat refuses quantized tensors with
///        different qparams), and are kept
/// Packed int4 along the last dim joins the bytes when every tensor but the last has an
/// even last dim; otherwise the nibbles are unpacked, joined and packed again. Throws
/// ValueError for an empty list, different schemes or different parameters that must be
/// equal (naming the tensor and the first differing group); ShapeError for a bad dim or
/// shapes that disagree outside dim; DeviceError for tensors on different devices.
template <class B, std::size_t D>
QTensor<B, D> cat(const std::vector<QTensor<B, D>>& qs, std::int64_t dim) {
  if (qs.empty()) detail::fail<ValueError>("cat", "expected a non-empty list of quantized tensors");
  const std::size_t d = normalize_dim("cat", dim, D);
  const QuantScheme s = qs[0].scheme();
  const QuantScheme s0 = detail::qlayout::normalized(s, D);
  Shape out = qs[0].shape();
  out[d] = 0;
  for (std::size_t i = 0; i < qs.size(); ++i) {
    if (detail::qlayout::normalized(qs[i].scheme(), D) != s0) {
      detail::fail<ValueError>("cat", "tensor ", i, " is quantized as ", qs[i].scheme().to_string(),
                               " but tensor 0 as ", s.to_string(),
                               "; quantized tensors must share the scheme to be joined "
                               "(dequantize first)");
    }
    for (std::size_t k = 0; k < D; ++k) {
      if (k != d && qs[i].shape()[k] != qs[0].shape()[k]) {
        detail::fail<ShapeError>("cat", "tensor ", i, " has shape ", qs[i].shape(),
                                 " but tensor 0 has shape ", qs[0].shape(), " (every dim but dim ",
                                 dim, " must agree)");
      }
    }
    out[d] += qs[i].shape()[d];
  }
  if (qs.size() == 1) return qs[0];
  const bool last = d == D - 1;
  const bool varies =
      s.level == QuantLevel::Block || (s.level == QuantLevel::Channel && s.channel_dim(D) == d);
  Tensor<B, D> scales = qs[0].scales();
  std::optional<Tensor<B, D, Int>> zp = qs[0].zero_points();
  if (varies) {
    std::vector<Tensor<B, D>> ss;
    std::vector<Tensor<B, D, Int>> zs;
    for (const auto& q : qs) {
      ss.push_back(q.scales());
      if (q.zero_points()) zs.push_back(*q.zero_points());
    }
    scales = Tensor<B, D>::cat(ss, static_cast<std::int64_t>(d));
    if (zp) zp = Tensor<B, D, Int>::cat(zs, static_cast<std::int64_t>(d));
  } else {
    // Compared on the host: the parameters that do not vary along dim are few.
    const auto same = [&](const char* what, std::size_t i, const TensorData& x,
                          const TensorData& x0) {
      const auto v = x.to_vec<double>(), v0 = x0.to_vec<double>();
      for (std::size_t g = 0; g < v.size(); ++g) {
        if (v[g] != v0[g]) {
          detail::fail<ValueError>(
              "cat", "the ", what, " of tensor ", i, " differ from tensor 0's (group ", g, ": ",
              v[g], " vs ", v0[g], ") under ", s.to_string(), "; they do not vary along dim ", dim,
              ", so they must be equal to join the tensors (as torch.cat); dequantize first");
        }
      }
    };
    const TensorData sc0 = qs[0].scales().into_data();
    const std::optional<TensorData> zp0 =
        zp ? std::optional<TensorData>(zp->into_data()) : std::nullopt;
    for (std::size_t i = 1; i < qs.size(); ++i) {
      same("scales", i, qs[i].scales().into_data(), sc0);
      if (zp0) same("zero points", i, qs[i].zero_points()->into_data(), *zp0);
    }
  }
  Tensor<B, D, Int> values = [&] {
    std::vector<Tensor<B, D, Int>> parts;
    bool bytes = s.value == QuantValue::Int8 || !last;
    if (!bytes) {  // int4 along the last dim: bytes join when no odd piece is followed by another
      bytes = true;
      for (std::size_t i = 0; i + 1 < qs.size(); ++i) bytes = bytes && qs[i].shape()[d] % 2 == 0;
    }
    for (const auto& q : qs) parts.push_back(bytes ? q.values() : integers(q));
    Tensor<B, D, Int> joined = Tensor<B, D, Int>::cat(parts, static_cast<std::int64_t>(d));
    return bytes ? joined : detail::qlayout::pack_int4(joined);
  }();
  return QTensor<B, D>(s, out, std::move(values), std::move(scales), std::move(zp));
}

// ---- other ops: dequantize, compute in float, maybe requantize -----------------------------

/// Whether an op on a quantized tensor returns a quantized result (Burn's QuantPropagation).
enum class Propagation {
  Propagate,  ///< the float result is quantized again under the input's scheme
  Inhibit,    ///< the float result is returned as it is
};

/// The result of apply: a float tensor (Propagation::Inhibit) or a quantized one
/// (Propagate). A handle, as the tensors it holds.
template <class B, std::size_t D>
class QuantOutput {
 public:
  explicit QuantOutput(Tensor<B, D> x) : v_(std::move(x)) {}
  explicit QuantOutput(QTensor<B, D> q) : v_(std::move(q)) {}

  /// Whether the result was quantized again (Propagate).
  bool is_quantized() const { return std::holds_alternative<QTensor<B, D>>(v_); }
  /// The quantized result; ValueError when the result is float (Inhibit).
  const QTensor<B, D>& quantized() const {
    if (!is_quantized()) {
      detail::fail<ValueError>("apply",
                               "the result is a float tensor (Propagation::Inhibit), "
                               "not a quantized one");
    }
    return std::get<QTensor<B, D>>(v_);
  }
  /// The float result; ValueError when the result is quantized (Propagate).
  const Tensor<B, D>& float_tensor() const {
    if (is_quantized()) {
      detail::fail<ValueError>("apply",
                               "the result is quantized (Propagation::Propagate); "
                               "use quantized() or dequantize()");
    }
    return std::get<Tensor<B, D>>(v_);
  }
  /// The values in float either way: the float result, or the quantized one dequantized (f32).
  Tensor<B, D> dequantize() const {
    return is_quantized() ? std::get<QTensor<B, D>>(v_).dequantize() : std::get<Tensor<B, D>>(v_);
  }

 private:
  std::variant<Tensor<B, D>, QTensor<B, D>> v_;
};

/// Runs a float op on a quantized tensor (the path of every op but the layout ones above):
/// y = f(q.dequantize()), f taking a Tensor<B, D> (f32, [q.shape()]) and returning a float
/// Tensor<B, D2>. With Propagation::Inhibit (the default, as Burn) the result holds y; with
/// Propagate it holds y.quantize(q.scheme()): the same scheme, parameters from y's values
/// (the MinMax rule), so its dequantized values are within one scale step of y (half a step
/// but for the rounding of f16 scales). One
/// function with a runtime setting (rather than two) because the setting is a runtime
/// choice in Burn too; read the result with is_quantized(), quantized(), float_tensor() or
/// dequantize(). Throws what f throws, and with Propagate quantize's errors: ShapeError when
/// the scheme does not fit y's shape (a channel axis out of range, a block size not dividing
/// its last dim), ValueError when y holds NaN or a scale overflows.
template <class B, std::size_t D, class F>
auto apply(const QTensor<B, D>& q, F&& f, Propagation p = Propagation::Inhibit) {
  using R = std::remove_cvref_t<std::invoke_result_t<F, Tensor<B, D>>>;
  using Of = detail::qlayout::FloatTensorOf<R, B>;
  static_assert(Of::value, "quant::apply: f must return a float Tensor<B, D2>");
  using Out = QuantOutput<B, Of::rank>;
  R y = std::invoke(std::forward<F>(f), q.dequantize());
  if (p == Propagation::Propagate) return Out(y.quantize(q.scheme()));
  return Out(std::move(y));
}

}  // namespace ember::quant
