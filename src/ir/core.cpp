// infer of the core and layout descriptions (ember/ir/core.hpp, layout.hpp).
#include "ember/ir/core.hpp"

#include <algorithm>
#include <limits>

#include "ember/ir/layout.hpp"

namespace ember::ir {

using ember::detail::fail;

TensorType FromData::infer() const {
  return {data.shape(), data.dtype()};
}
TensorType Empty::infer() const {
  checked_numel(name, shape);
  return {shape, dtype};
}
TensorType Full::infer() const {
  checked_numel(name, shape);
  return {shape, dtype};
}
TensorType Random::infer() const {
  checked_numel(name, shape);
  if (!is_float(dtype)) fail<DTypeError>(name, "dtype ", dtype, " is not a float dtype");
  return {shape, dtype};
}
TensorType Arange::infer() const {
  if (step == 0) fail<ValueError>(name, "step must be non-zero");
  const __int128 span = static_cast<__int128>(end) - start;
  __int128 n = 0;
  if ((span > 0 && step > 0) || (span < 0 && step < 0)) {
    const __int128 s = step;
    n = (span + s + (step > 0 ? -1 : 1)) / s;
  }
  if (n > static_cast<__int128>(std::numeric_limits<std::int64_t>::max()))
    fail<ValueError>(name, "[", start, ", ", end, ") with step ", step,
                     " has more than 2^63 - 1 values");
  return {Shape{static_cast<std::int64_t>(n)}, dtype};
}
TensorType Reshape::infer(const TensorType& x) const {
  if (checked_numel(name, shape) != x.shape.numel())
    fail<ShapeError>(name, "cannot reshape ", x.shape, " (", x.shape.numel(), " elements) into ",
                     shape, " (", shape.numel(), " elements)");
  return {shape, x.dtype};
}

// ---- layout -------------------------------------------------------------------------------------

TensorType Permute::infer(const TensorType& x) const {
  const std::size_t r = x.shape.rank();
  if (axes.size() != r)
    fail<ShapeError>(name, "got ", axes.size(), " axes for a tensor of rank ", r);
  std::vector<bool> seen(r, false);
  Shape out;
  for (std::size_t a : axes) {
    if (a >= r || seen[a]) fail<ShapeError>(name, "axes are not a permutation of 0..", r - 1);
    seen[a] = true;
    out.dims.push_back(x.shape[a]);
  }
  return {out, x.dtype};
}
TensorType Expand::infer(const TensorType& x) const {
  const std::size_t r = x.shape.rank(), t = shape.rank();
  if (t < r) fail<ShapeError>(name, "cannot expand ", x.shape, " to the lower rank ", shape);
  for (std::size_t i = 0; i < r; ++i) {
    const std::int64_t from = x.shape[i], to = shape[t - r + i];
    if (from != to && from != 1)
      fail<ShapeError>(name, "cannot expand ", x.shape, " to ", shape, " (dim ", i, ": ", from,
                       " vs ", to, ")");
  }
  checked_numel(name, shape);
  return {shape, x.dtype};
}
namespace {
Shape sliced(const char* op, const Shape& s, const Ranges& ranges) {
  if (ranges.size() != s.rank())
    fail<ShapeError>(op, "got ", ranges.size(), " ranges for a tensor of shape ", s);
  Shape out = s;
  for (std::size_t d = 0; d < ranges.size(); ++d) {
    const SliceRange& r = ranges[d];
    if (r.count < 0 || r.step == 0) fail<ShapeError>(op, "invalid range on dim ", d);
    if (r.count > 0) {
      const std::int64_t last = r.start + (r.count - 1) * r.step;
      if (r.start < 0 || r.start >= s[d] || last < 0 || last >= s[d])
        fail<ShapeError>(op, "range [", r.start, ", step ", r.step, ", ", r.count,
                         " values) is out of bounds for dim ", d, " of size ", s[d]);
    }
    out[d] = r.count;
  }
  return out;
}
}  // namespace
TensorType Slice::infer(const TensorType& x) const {
  return {sliced(name, x.shape, ranges), x.dtype};
}
TensorType Flip::infer(const TensorType& x) const {
  std::vector<bool> seen(x.shape.rank(), false);
  for (std::size_t a : axes) {
    if (a >= x.shape.rank() || seen[a])
      fail<ShapeError>(name, "axes must be distinct dims of ", x.shape);
    seen[a] = true;
  }
  return x;
}
TensorType Cat::infer(const std::vector<TensorType>& xs) const {
  if (xs.empty()) fail<ValueError>(name, "expected a non-empty list of tensors");
  TensorType out = xs[0];
  const Shape& s0 = xs[0].shape;
  check::dim(name, static_cast<std::int64_t>(dim), s0.rank());
  for (std::size_t i = 1; i < xs.size(); ++i) {
    const Shape& si = xs[i].shape;
    if (si.rank() != s0.rank())
      fail<ShapeError>(name, "tensor ", i, " has shape ", si, " but tensor 0 has shape ", s0,
                       " (ranks differ)");
    for (std::size_t k = 0; k < si.rank(); ++k)
      if (k != dim && si[k] != s0[k])
        fail<ShapeError>(name, "tensor ", i, " has shape ", si, " but tensor 0 has shape ", s0,
                         " (dim ", k, " differs; only dim ", dim, " may)");
    check::same_dtype(name, xs[0], xs[i]);
    out.shape[dim] += si[dim];
  }
  checked_numel(name, out.shape);
  return out;
}
TensorType Unfold::infer(const TensorType& x) const {
  check::dim(name, static_cast<std::int64_t>(dim), x.shape.rank());
  const std::int64_t n = x.shape[dim];
  if (size < 0 || size > n || step <= 0)
    fail<ShapeError>(name, "window ", size, " with step ", step, " on dim ", dim, " of size ", n);
  TensorType out = x;
  out.shape[dim] = (n - size) / step + 1;
  out.shape.dims.push_back(size);
  return out;
}
TensorType SqueezeDims::infer(const TensorType& x) const {
  Shape out;
  for (std::size_t d = 0; d < x.shape.rank(); ++d) {
    if (std::find(dims.begin(), dims.end(), d) != dims.end()) {
      if (x.shape[d] != 1) fail<ShapeError>(name, "dim ", d, " of ", x.shape, " is not 1");
      continue;
    }
    out.dims.push_back(x.shape[d]);
  }
  if (out.rank() + dims.size() != x.shape.rank())
    fail<ShapeError>(name, "dims must be distinct dims of ", x.shape);
  return {out, x.dtype};
}
TensorType UnsqueezeDims::infer(const TensorType& x) const {
  const std::size_t r = x.shape.rank() + dims.size();
  Shape out;
  std::size_t src = 0;
  for (std::size_t d = 0; d < r; ++d) {
    if (std::find(dims.begin(), dims.end(), d) != dims.end())
      out.dims.push_back(1);
    else if (src < x.shape.rank())
      out.dims.push_back(x.shape[src++]);
  }
  if (out.rank() != r || src != x.shape.rank())
    fail<ShapeError>(name, "positions must be distinct and below ", r);
  return {out, x.dtype};
}
TensorType Repeat::infer(const TensorType& x) const {
  if (times.size() != x.shape.rank())
    fail<ShapeError>(name, "got ", times.size(), " counts for a tensor of shape ", x.shape);
  TensorType out = x;
  for (std::size_t d = 0; d < times.size(); ++d) {
    if (times[d] < 0) fail<ShapeError>(name, "negative count ", times[d], " on dim ", d);
    out.shape[d] *= times[d];
  }
  checked_numel(name, out.shape);
  return out;
}
TensorType Pad::infer(const TensorType& x) const {
  const Shape& s = x.shape;
  if (pads.size() != s.rank())
    fail<ShapeError>(name, "got ", pads.size(), " (left, right) pairs for a tensor of shape ", s);
  TensorType out = x;
  for (std::size_t k = 0; k < s.rank(); ++k) {  // last dim first, as the front end lists pads
    const std::size_t d = s.rank() - 1 - k;
    const auto [a, b] = pads[d];
    const std::int64_t n = s[d];
    if (mode == PadMode::Reflect && (a >= n || b >= n))
      fail<ShapeError>(name, "reflect padding (", a, ", ", b, ") of dim ", d,
                       " must be less than its size ", n, " (shape ", s, ")");
    if (mode == PadMode::Edge && n == 0 && (a > 0 || b > 0))
      fail<ShapeError>(name, "edge padding of dim ", d, " needs a non-empty dim (shape ", s, ")");
    // Crops (negative pads) are taken first, as torch.nn.functional.pad does: together they
    // may remove at most the whole dim, whatever the other side adds back.
    const std::int64_t crop_a = a < 0 ? a : 0, crop_b = b < 0 ? b : 0;
    if (crop_a < -n || crop_b < -n || crop_a + crop_b < -n)
      fail<ShapeError>(name, "pads (", a, ", ", b, ") crop more than dim ", d, " of size ", n,
                       " (shape ", s, ")");
    std::int64_t size = 0;
    if (__builtin_add_overflow(n, a, &size) || __builtin_add_overflow(size, b, &size))
      fail<ShapeError>(name, "pads (", a, ", ", b, ") of dim ", d, " of size ", n,
                       " overflow a 64-bit size (shape ", s, ")");
    out.shape[d] = size;
  }
  checked_numel(name, out.shape);
  return out;
}

// ---- indexing
// -------------------------------------------------------------------------------------

TensorType SliceAssign::infer(const TensorType& t, const TensorType& values) const {
  const Shape region = sliced(name, t.shape, ranges);
  if (values.shape != region)
    fail<ShapeError>(name, "values of shape ", values.shape, " do not match the slice shape ",
                     region, " of the tensor of shape ", t.shape);
  check::same_dtype(name, t, values);
  return t;
}
TensorType Select::infer(const TensorType& t, const TensorType& indices) const {
  check::dim(name, static_cast<std::int64_t>(dim), t.shape.rank());
  check::rank(name, indices, 1, "index tensor");
  check::int_dtype(name, indices, "indices");
  TensorType out = t;
  out.shape[dim] = indices.shape[0];
  return out;
}
namespace {
/// IndexUpdate::Add needs a numeric tensor.
void check_update(const char* op, const TensorType& t, IndexUpdate update) {
  if (is_bool(t.dtype) && update == IndexUpdate::Add)
    fail<UnsupportedError>(op, "IndexUpdate::Add is not supported for Bool tensors");
}
}  // namespace
TensorType SelectAssign::infer(const TensorType& t, const TensorType& indices,
                               const TensorType& values) const {
  check::dim(name, static_cast<std::int64_t>(dim), t.shape.rank());
  check_update(name, t, update);
  check::rank(name, indices, 1, "index tensor");
  check::int_dtype(name, indices, "indices");
  Shape want = t.shape;
  want[dim] = indices.shape[0];
  if (values.shape != want)
    fail<ShapeError>(name, "values of shape ", values.shape, " do not match ", want,
                     " (the tensor of shape ", t.shape, " with dim ", dim, " of size ",
                     indices.shape[0], ")");
  check::same_dtype(name, t, values);
  return t;
}
namespace {
/// index.size(k) <= other.size(k); ShapeError naming `what` otherwise.
void check_within(const char* op, const Shape& is, const Shape& other, const char* what,
                  std::size_t k) {
  if (is[k] > other[k])
    fail<ShapeError>(op, "index of shape ", is, " is larger than ", what, " of shape ", other,
                     " in dim ", k, " (", is[k], " > ", other[k], ")");
}
}  // namespace
TensorType Gather::infer(const TensorType& t, const TensorType& indices) const {
  check::dim(name, static_cast<std::int64_t>(dim), t.shape.rank());
  check::int_dtype(name, indices, "indices");
  if (indices.shape.rank() != t.shape.rank())
    fail<ShapeError>(name, "index of shape ", indices.shape, " for a tensor of shape ", t.shape,
                     ": ranks differ");
  for (std::size_t k = 0; k < t.shape.rank(); ++k)
    if (k != dim) check_within(name, indices.shape, t.shape, "the tensor", k);
  return {indices.shape, t.dtype};
}
TensorType Scatter::infer(const TensorType& t, const TensorType& indices,
                          const TensorType& values) const {
  check::dim(name, static_cast<std::int64_t>(dim), t.shape.rank());
  check_update(name, t, update);
  check::int_dtype(name, indices, "indices");
  if (indices.shape.rank() != t.shape.rank() || values.shape.rank() != t.shape.rank())
    fail<ShapeError>(name, "tensor ", t.shape, ", index ", indices.shape, " and values ",
                     values.shape, " must have one rank");
  for (std::size_t k = 0; k < t.shape.rank(); ++k) {
    check_within(name, indices.shape, values.shape, "values", k);
    if (k != dim) check_within(name, indices.shape, t.shape, "the tensor", k);
  }
  check::same_dtype(name, t, values);
  return t;
}
TensorType MaskWhere::infer(const TensorType& t, const TensorType& mask,
                            const TensorType& values) const {
  check::broadcast_to(name, "mask", mask.shape, t.shape);
  check::broadcast_to(name, "values", values.shape, t.shape);
  check::bool_dtype(name, mask, "mask");
  check::same_dtype(name, t, values);
  return t;
}
TensorType MaskFill::infer(const TensorType& t, const TensorType& mask) const {
  check::broadcast_to(name, "mask", mask.shape, t.shape);
  check::bool_dtype(name, mask, "mask");
  return t;
}
TensorType Argwhere::infer(const TensorType& mask) const {
  check::bool_dtype(name, mask, "mask");
  if (!is_int(index_dtype))
    fail<DTypeError>(name, "index dtype ", index_dtype, " is not an int dtype");
  return {Shape{kDynamicDim, static_cast<std::int64_t>(mask.shape.rank())}, index_dtype};
}

}  // namespace ember::ir
