// Tensor front end: layout methods, mixed into Tensor<B, D, K>.
//
// Views where the backend makes them (the CPU backend does for permute, transpose,
// swap_dims, movedim, flip, expand, slice, narrow, chunk, split, squeeze, unsqueeze and
// unfold); copies for cat, stack, repeat, roll and pad. Every method works for Float, Int
// and Bool tensors. Dims may be negative (counted from the end). Checks throw ShapeError
// (shapes, dims) or ValueError (counts and sizes out of their domain) with messages starting
// with "[op]".
//
// Reference semantics: Burn's Tensor API (names, rank rules), PyTorch for values
// (torch.permute, torch.flip, torch.Tensor.expand, torch.Tensor.repeat, torch.roll,
// torch.Tensor.unfold, torch.narrow, torch.chunk, torch.split, torch.cat, torch.stack,
// torch.nn.functional.pad).
#pragma once

#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "ember/core/slice.hpp"
#include "ember/ir/layout.hpp"
#include "ember/tensor/fwd.hpp"
#include "ember/tensor/infer.hpp"
#include "ember/tensor/ops/layout_prim.hpp"

namespace ember::detail {

/// "[1, -2, 0]" for error messages.
inline Shape dims_list(std::span<const std::int64_t> dims) {
  return Shape(std::vector<std::int64_t>(dims.begin(), dims.end()));
}

/// Normalises every dim of `dims` against `rank`; throws ShapeError for an out-of-range
/// dim or (unless `allow_dup`) a dim listed twice.
inline std::vector<std::size_t> normalize_dims(const char* op, std::span<const std::int64_t> dims,
                                               std::size_t rank, bool allow_dup = false) {
  std::vector<std::size_t> out;
  out.reserve(dims.size());
  std::vector<bool> seen(rank, false);
  for (std::int64_t d : dims) {
    const std::size_t n = normalize_dim(op, d, rank);
    if (seen[n] && !allow_dup) {
      fail<ShapeError>(op, "dim ", d, " appears more than once in ", dims_list(dims));
    }
    seen[n] = true;
    out.push_back(n);
  }
  return out;
}

template <class B, std::size_t D, class K>
class LayoutApi {
  using Prim = LayoutPrim<B, K>;
  using P = PrimitiveOf<B, K>;
  using Self = Tensor<B, D, K>;
  using Dims = std::vector<std::int64_t>;

 public:
  // ---- permutations (views) -----------------------------------------------------------

  /// Reorders the dims: out.shape[i] = shape[dims[i]] (torch.permute). `dims` lists every
  /// dim once (negative allowed). Throws ShapeError if dims.size() != D, a dim is out of
  /// range or repeated.
  Self permute(const Dims& dims) const {
    if (dims.size() != D) {
      fail<ShapeError>("permute", "expected ", D, " dims, got ", dims.size(), " (", dims_list(dims),
                       ") for a tensor of shape ", self().shape());
    }
    return Self(Prim::permute(self().primitive(), normalize_dims("permute", dims, D)));
  }

  /// Swaps dims a and b. Throws ShapeError if either is out of range.
  Self swap_dims(std::int64_t a, std::int64_t b) const {
    const std::size_t x = normalize_dim("swap_dims", a, D), y = normalize_dim("swap_dims", b, D);
    std::vector<std::size_t> axes(D);
    for (std::size_t i = 0; i < D; ++i) axes[i] = i;
    std::swap(axes[x], axes[y]);
    return Self(Prim::permute(self().primitive(), axes));
  }

  /// Swaps the last two dims ([.., m, n] -> [.., n, m]); Burn's transpose.
  Self transpose() const requires(D >= 2) { return swap_dims(-2, -1); }

  /// Moves dim `src` to position `dst`, the other dims keep their order (torch.movedim).
  /// Throws ShapeError if either is out of range.
  Self movedim(std::int64_t src, std::int64_t dst) const { return movedim(Dims{src}, Dims{dst}); }

  /// Moves each dim src[k] to position dst[k] (torch.movedim). Throws ShapeError if the
  /// lists differ in length, a dim is out of range or repeated within a list.
  Self movedim(const Dims& src, const Dims& dst) const {
    if (src.size() != dst.size()) {
      fail<ShapeError>("movedim", "source ", dims_list(src), " and destination ", dims_list(dst),
                       " have different lengths");
    }
    const auto s = normalize_dims("movedim", src, D), t = normalize_dims("movedim", dst, D);
    std::vector<std::size_t> axes(D, D);
    std::vector<bool> used(D, false);
    for (std::size_t k = 0; k < s.size(); ++k) {
      axes[t[k]] = s[k];
      used[s[k]] = true;
    }
    std::size_t next = 0;
    for (std::size_t i = 0; i < D; ++i) {
      if (axes[i] != D) continue;
      while (used[next]) ++next;
      axes[i] = next++;
    }
    return Self(Prim::permute(self().primitive(), axes));
  }

  /// Reverses the order of elements along each listed dim (torch.flip); an empty list is
  /// the identity. Throws ShapeError if a dim is out of range or repeated.
  Self flip(const Dims& dims) const {
    return Self(Prim::flip(self().primitive(), normalize_dims("flip", dims, D)));
  }

  // ---- reshaping ----------------------------------------------------------------------

  /// Merges dims start..end (inclusive) into one: rank D2 = D - (end - start).
  /// Throws ShapeError if start > end (after normalising) or D2 does not match.
  template <std::size_t D2>
  Tensor<B, D2, K> flatten(std::int64_t start, std::int64_t end) const {
    const std::size_t a = normalize_dim("flatten", start, D), b = normalize_dim("flatten", end, D);
    const Shape s = self().shape();
    if (a > b)
      fail<ShapeError>("flatten", "start dim ", start, " comes after end dim ", end, " for shape ",
                       s);
    if (D - (b - a) != D2) {
      fail<ShapeError>("flatten", "flattening dims ", a, "..", b, " of shape ", s, " gives rank ",
                       D - (b - a), ", not ", D2);
    }
    Shape out;
    for (std::size_t d = 0; d < a; ++d) out.dims.push_back(s[d]);
    std::int64_t m = 1;
    for (std::size_t d = a; d <= b; ++d) m *= s[d];
    out.dims.push_back(m);
    for (std::size_t d = b + 1; d < D; ++d) out.dims.push_back(s[d]);
    return Tensor<B, D2, K>(Prim::reshape(self().primitive(), out));
  }

  /// Removes every size-1 dim (Burn's squeeze). Throws ShapeError if that does not leave
  /// rank D2.
  template <std::size_t D2>
  Tensor<B, D2, K> squeeze() const {
    const Shape s = self().shape();
    std::vector<std::size_t> dims;
    for (std::size_t d = 0; d < D; ++d)
      if (s[d] == 1) dims.push_back(d);
    if (D - dims.size() != D2) {
      fail<ShapeError>("squeeze", "shape ", s, " has ", dims.size(),
                       " size-1 dims; removing them gives rank ", D - dims.size(), ", not ", D2);
    }
    return Tensor<B, D2, K>(Prim::squeeze_dims(self().primitive(), dims));
  }

  /// Removes dim `dim`, which must have size 1 (Burn's squeeze_dim; unlike torch, a dim of
  /// another size is an error). Throws ShapeError.
  template <std::size_t D2 = D - 1>
  requires(D2 + 1 == D) Tensor<B, D2, K> squeeze_dim(std::int64_t dim)
  const { return squeeze_dims<D2>(Dims{dim}); }

  /// Removes the listed dims, each of size 1 (an empty list removes every size-1 dim, as
  /// Burn's squeeze_dims). Throws ShapeError if a dim is out of range, repeated, not of
  /// size 1, or the result's rank is not D2.
  template <std::size_t D2>
  Tensor<B, D2, K> squeeze_dims(const Dims& dims) const {
    if (dims.empty()) return squeeze<D2>();
    const Shape s = self().shape();
    const char* op = dims.size() == 1 ? "squeeze_dim" : "squeeze_dims";
    auto nd = normalize_dims(op, dims, D);
    for (std::size_t k = 0; k < nd.size(); ++k) {
      if (s[nd[k]] != 1) {
        fail<ShapeError>(op, "dim ", dims[k], " of shape ", s, " has size ", s[nd[k]], ", not 1");
      }
    }
    if (D - nd.size() != D2) {
      fail<ShapeError>(op, "removing ", nd.size(), " dims of shape ", s, " gives rank ",
                       D - nd.size(), ", not ", D2);
    }
    std::sort(nd.begin(), nd.end());
    return Tensor<B, D2, K>(Prim::squeeze_dims(self().primitive(), nd));
  }

  /// Prepends size-1 dims up to rank D2 (Burn's unsqueeze): [3] -> [1, 1, 3].
  template <std::size_t D2>
  requires(D2 >= D) Tensor<B, D2, K> unsqueeze()
  const {
    std::vector<std::size_t> dims;
    for (std::size_t d = 0; d < D2 - D; ++d) dims.push_back(d);
    return Tensor<B, D2, K>(Prim::unsqueeze_dims(self().primitive(), dims));
  }

  /// Inserts a size-1 dim at position `dim` of the output (torch.unsqueeze; dim in
  /// [-(D+1), D]). Throws ShapeError if out of range.
  template <std::size_t D2 = D + 1>
  requires(D2 == D + 1) Tensor<B, D2, K> unsqueeze_dim(std::int64_t dim)
  const {
    const std::size_t d = normalize_dim("unsqueeze_dim", dim, D2);
    return Tensor<B, D2, K>(Prim::unsqueeze_dims(self().primitive(), {d}));
  }

  /// Inserts size-1 dims so that they sit at the listed positions of the rank-D2 output
  /// (numpy.expand_dims; negative positions count from the output's end). Throws ShapeError
  /// if dims.size() != D2 - D, or a position is out of range or repeated.
  template <std::size_t D2>
  requires(D2 >= D) Tensor<B, D2, K> unsqueeze_dims(const Dims& dims)
  const {
    if (dims.size() != D2 - D) {
      fail<ShapeError>("unsqueeze_dims", dims.size(), " dims ", dims_list(dims),
                       " given to go from rank ", D, " to rank ", D2, " (expected ", D2 - D, ")");
    }
    auto nd = normalize_dims("unsqueeze_dims", dims, D2);
    std::sort(nd.begin(), nd.end());
    return Tensor<B, D2, K>(Prim::unsqueeze_dims(self().primitive(), nd));
  }

  // ---- broadcasting and tiling ----------------------------------------------------------

  /// Broadcasts to `shape` of rank D2 >= D without copying (torch.Tensor.expand): input
  /// dims align to the right, new leading dims are prepended; -1 keeps an existing dim;
  /// only size-1 dims may change size. Throws ShapeError otherwise.
  template <std::size_t D2>
  requires(D2 >= D) Tensor<B, D2, K> expand(const std::int64_t (&shape)[D2])
  const { return expand_impl<D2>(std::span<const std::int64_t>(shape, D2)); }
  template <std::size_t D2>
  requires(D2 >= D) Tensor<B, D2, K> expand(const std::array<std::int64_t, D2>& shape)
  const { return expand_impl<D2>(std::span<const std::int64_t>(shape)); }
  template <std::size_t D2>
  requires(D2 >= D) Tensor<B, D2, K> expand(const Shape& shape)
  const {
    if (shape.rank() != D2) {
      fail<ShapeError>("expand", "target shape ", shape, " has rank ", shape.rank(), ", expected ",
                       D2);
    }
    return expand_impl<D2>(std::span<const std::int64_t>(shape.dims));
  }

  /// Tiles the tensor sizes[d] times along each dim d (torch.Tensor.repeat with one count
  /// per dim; Burn's repeat): [a, b].repeat({2, 3}) -> [2a, 3b]. Throws ShapeError if
  /// sizes.size() != D, ValueError for a negative count.
  Self repeat(const Dims& sizes) const {
    if (sizes.size() != D) {
      fail<ShapeError>("repeat", "expected ", D, " repeat counts, got ", sizes.size(), " (",
                       dims_list(sizes), ") for a tensor of shape ", self().shape());
    }
    bool identity = true;
    for (auto v : sizes) {
      if (v < 0) fail<ValueError>("repeat", "repeat counts must be >= 0, got ", dims_list(sizes));
      identity = identity && v == 1;
    }
    if (identity) return self();
    return Self(Prim::repeat(self().primitive(), sizes));
  }

  /// Tiles the tensor `times` times along `dim`. Throws ShapeError for a bad dim,
  /// ValueError for times < 0.
  Self repeat_dim(std::int64_t dim, std::int64_t times) const {
    const std::size_t d = normalize_dim("repeat_dim", dim, D);
    if (times < 0) fail<ValueError>("repeat_dim", "times must be >= 0, got ", times);
    Dims sizes(D, 1);
    sizes[d] = times;
    return repeat(sizes);
  }

  /// Rolls elements along each dims[k] by shifts[k] (torch.roll): out[i] = x[i - shift]
  /// modulo the dim size. A dim may be listed twice (shifts add). Throws ShapeError if the
  /// lists are empty or of different lengths, or a dim is out of range.
  Self roll(const Dims& shifts, const Dims& dims) const {
    if (shifts.empty() || shifts.size() != dims.size()) {
      fail<ShapeError>("roll", "shifts ", dims_list(shifts), " and dims ", dims_list(dims),
                       " must be non-empty and of equal length");
    }
    return Self(Prim::roll(self().primitive(), shifts, normalize_dims("roll", dims, D, true)));
  }
  /// Rolls elements along one dim (torch.roll). Throws ShapeError for a bad dim.
  Self roll_dim(std::int64_t shift, std::int64_t dim) const { return roll(Dims{shift}, Dims{dim}); }

  /// Sliding windows of `size` elements every `step` along `dim` (torch.Tensor.unfold):
  /// dim becomes (n - size) / step + 1 and a new last dim of length `size` holds each
  /// window: [n] unfold(0, 2, 1) -> [n - 1, 2]. A view on the CPU backend. Throws ShapeError
  /// for a bad dim or size > n, ValueError for size < 0 or step <= 0.
  Tensor<B, D + 1, K> unfold(std::int64_t dim, std::int64_t size, std::int64_t step) const {
    const std::size_t d = normalize_dim("unfold", dim, D);
    const Shape s = self().shape();
    if (size < 0) fail<ValueError>("unfold", "window size must be >= 0, got ", size);
    if (step <= 0) fail<ValueError>("unfold", "step must be > 0, got ", step);
    if (size > s[d]) {
      fail<ShapeError>("unfold", "window size ", size, " exceeds dim ", dim, " of size ", s[d],
                       " (shape ", s, ")");
    }
    return Tensor<B, D + 1, K>(Prim::unfold(self().primitive(), d, size, step));
  }

  // ---- sub-ranges (views) ---------------------------------------------------------------

  /// `length` elements of `dim` from `start` (torch.narrow; start may be negative, counted
  /// from the end). Throws ShapeError if start is out of [-n, n] or start + length > n,
  /// ValueError for length < 0.
  Self narrow(std::int64_t dim, std::int64_t start, std::int64_t length) const {
    const std::size_t d = normalize_dim("narrow", dim, D);
    const Shape s = self().shape();
    const std::int64_t n = s[d];
    if (length < 0) fail<ValueError>("narrow", "length must be >= 0, got ", length);
    if (start < -n || start > n) {
      fail<ShapeError>("narrow", "start ", start, " is out of range for dim ", dim, " of size ", n,
                       " (shape ", s, ")");
    }
    const std::int64_t a = start < 0 ? start + n : start;
    if (length > n - a) {
      fail<ShapeError>("narrow", "start ", start, " + length ", length, " exceeds dim ", dim,
                       " of size ", n, " (shape ", s, ")");
    }
    return Self(Prim::narrow(self().primitive(), d, a, length));
  }

  /// Splits into pieces of ceil(n / chunks) along `dim`, the last one smaller
  /// (torch.chunk: may return fewer than `chunks` pieces; an empty dim gives `chunks` empty
  /// pieces). Views. Throws ValueError for chunks <= 0, ShapeError for a bad dim.
  std::vector<Self> chunk(std::int64_t chunks, std::int64_t dim) const {
    const std::size_t d = normalize_dim("chunk", dim, D);
    if (chunks <= 0) fail<ValueError>("chunk", "number of chunks must be > 0, got ", chunks);
    const std::int64_t n = self().shape()[d];
    if (n == 0) return std::vector<Self>(static_cast<std::size_t>(chunks), self());
    return split_impl(d, (n + chunks - 1) / chunks);
  }

  /// Splits into pieces of `size` along `dim`, the last one smaller (torch.split). Views.
  /// Throws ValueError for size <= 0, ShapeError for a bad dim.
  std::vector<Self> split(std::int64_t size, std::int64_t dim) const {
    const std::size_t d = normalize_dim("split", dim, D);
    if (size <= 0) fail<ValueError>("split", "split size must be > 0, got ", size);
    return split_impl(d, size);
  }

  /// Splits into pieces of the given sizes along `dim` (torch.split with a list). Views.
  /// Throws ValueError for a negative size, ShapeError if they do not sum to the dim size.
  std::vector<Self> split_with_sizes(const Dims& sizes, std::int64_t dim) const {
    const std::size_t d = normalize_dim("split_with_sizes", dim, D);
    const Shape s = self().shape();
    std::int64_t sum = 0;
    for (auto v : sizes) {
      if (v < 0) fail<ValueError>("split_with_sizes", "sizes must be >= 0, got ", dims_list(sizes));
      sum += v;
    }
    if (sum != s[d]) {
      fail<ShapeError>("split_with_sizes", "sizes ", dims_list(sizes), " sum to ", sum, " but dim ",
                       dim, " of shape ", s, " has size ", s[d]);
    }
    std::vector<Self> out;
    std::int64_t at = 0;
    for (auto v : sizes) {
      out.push_back(Self(Prim::narrow(self().primitive(), d, at, v)));
      at += v;
    }
    return out;
  }

  /// Sub-tensor from one slice per leading dim (Burn's slice with s(...) specs; missing
  /// trailing dims are kept whole; negative steps walk backwards). A view on the CPU
  /// backend. Throws ShapeError for more slices than dims, a zero step or an out-of-range
  /// single index.
  Self slice(const std::vector<Slice>& slices) const {
    return Self(Prim::slice(self().primitive(), resolve_slices("slice", slices, self().shape())));
  }

  // ---- joining (copies) ---------------------------------------------------------------

  /// Joins tensors along `dim` (torch.cat): every dim but `dim` must agree; tensors of
  /// size 0 along `dim` are allowed. Dtypes of the kind promote (promote_types). Throws
  /// ValueError for an empty list, ShapeError for mismatched shapes or a bad dim,
  /// DeviceError for tensors on different devices.
  static Self cat(const std::vector<Self>& tensors, std::int64_t dim) {
    if (tensors.empty()) fail<ValueError>("cat", "expected a non-empty list of tensors");
    const std::size_t d = normalize_dim("cat", dim, D);
    DType dt = tensors[0].dtype();
    for (const auto& t : tensors) dt = promote_types(dt, t.dtype());
    std::vector<ir::TensorType> types;
    types.reserve(tensors.size());
    for (const auto& t : tensors) types.push_back(ir_type_as(t, dt));
    ir::Cat{d}.infer(types);
    for (std::size_t i = 1; i < tensors.size(); ++i)
      check_same_device("cat", tensors[0], tensors[i], i);
    if (tensors.size() == 1) return tensors[0];
    std::vector<P> ps;
    ps.reserve(tensors.size());
    for (const auto& t : tensors) {
      ps.push_back(t.dtype() == dt ? t.primitive() : Prim::cast(t.primitive(), dt));
    }
    return Self(Prim::cat(ps, d));
  }

  /// Joins tensors of equal shape along a new dim `dim` of the rank-(D+1) output
  /// (torch.stack; dim in [-(D+1), D]). Throws ValueError for an empty list, ShapeError for
  /// different shapes or a bad dim, DeviceError for tensors on different devices.
  template <std::size_t D2 = D + 1>
  requires(D2 == D + 1) static Tensor<B, D2, K> stack(const std::vector<Self>& tensors,
                                                      std::int64_t dim) {
    if (tensors.empty()) fail<ValueError>("stack", "expected a non-empty list of tensors");
    const std::size_t d = normalize_dim("stack", dim, D2);
    const Shape s0 = tensors[0].shape();
    for (std::size_t i = 1; i < tensors.size(); ++i) {
      if (tensors[i].shape() != s0) {
        fail<ShapeError>("stack", "tensor ", i, " has shape ", tensors[i].shape(),
                         " but tensor 0 has shape ", s0, " (all shapes must be equal)");
      }
    }
    std::vector<Tensor<B, D2, K>> parts;
    parts.reserve(tensors.size());
    for (const auto& t : tensors) {
      parts.push_back(Tensor<B, D2, K>(Prim::unsqueeze_dims(t.primitive(), {d})));
    }
    return Tensor<B, D2, K>::cat(parts, static_cast<std::int64_t>(d));
  }

  /// Pads (or, with negative values, crops) the last dims (torch.nn.functional.pad):
  /// `pads` = (left, right) pairs starting with the last dim, so {1, 2} pads the last dim
  /// by 1 before and 2 after, {1, 2, 3, 4} also the second-to-last by 3 and 4.
  /// Constant fills with `value`; Reflect mirrors without repeating the edge (pad < dim
  /// size); Edge repeats the edge element (torch's "replicate"). Positive pads are taken
  /// from the uncropped input. Throws ShapeError for an odd or too long `pads`, a reflect
  /// pad >= the dim size, an edge pad of an empty dim, or crops larger than the dim.
  Self pad(const Dims& pads, PadMode mode = PadMode::Constant, double value = 0.0) const {
    const Shape s = self().shape();
    if (pads.size() % 2 != 0 || pads.size() > 2 * D) {
      fail<ShapeError>("pad", "pads ", dims_list(pads),
                       " must hold (left, right) pairs for at most ", D, " dims of shape ", s);
    }
    typename Prim::Pairs pairs(D, {0, 0});
    for (std::size_t k = 0; k < pads.size() / 2; ++k)
      pairs[D - 1 - k] = {pads[2 * k], pads[2 * k + 1]};
    ir_infer(ir::Pad{pairs, mode, value}, self());
    return Self(Prim::pad(self().primitive(), pairs, mode, value));
  }

 protected:
  const Self& self() const { return static_cast<const Self&>(*this); }
  Self& self() { return static_cast<Self&>(*this); }

 private:
  template <std::size_t D2>
  Tensor<B, D2, K> expand_impl(std::span<const std::int64_t> target) const {
    const Shape s = self().shape();
    Shape out(std::vector<std::int64_t>(target.begin(), target.end()));
    const std::size_t lead = D2 - D;
    for (std::size_t i = 0; i < D2; ++i) {
      const std::int64_t v = target[i];
      if (i < lead) {
        if (v < 0) {
          fail<ShapeError>("expand", "size ", v, " is not allowed for new leading dim ", i,
                           " of target ", dims_list(target), " (shape ", s, ")");
        }
        continue;
      }
      const std::int64_t have = s[i - lead];
      if (v == -1) {
        out[i] = have;
      } else if (v < 0) {
        fail<ShapeError>("expand", "invalid size ", v, " in target ", dims_list(target));
      } else if (v != have && have != 1) {
        fail<ShapeError>("expand", "cannot expand shape ", s, " to ", dims_list(target), ": dim ",
                         i - lead, " has size ", have, " (only size-1 dims can be expanded)");
      }
    }
    checked_numel("expand", out);
    return Tensor<B, D2, K>(Prim::expand(self().primitive(), out));
  }

  std::vector<Self> split_impl(std::size_t d, std::int64_t size) const {
    const std::int64_t n = self().shape()[d];
    std::vector<Self> out;
    if (n == 0) {
      out.push_back(self());
      return out;
    }
    for (std::int64_t at = 0; at < n; at += size) {
      out.push_back(Self(Prim::narrow(self().primitive(), d, at, std::min(size, n - at))));
    }
    return out;
  }

  static void check_same_device(const char* op, const Self& a, const Self& b, std::size_t i) {
    using Dev = typename B::Device;
    if constexpr (std::equality_comparable<Dev>) {
      if (!(a.device() == b.device())) {
        fail<DeviceError>(op, "tensor ", i, " is on device ", B::device_name(b.device()),
                          " but tensor 0 is on ", B::device_name(a.device()));
      }
    }
  }
};

}  // namespace ember::detail
