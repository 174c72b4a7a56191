// infer of the core and layout descriptions (ember/ir/core.hpp, layout.hpp).
#include <algorithm>
#include <limits>

#include "ember/ir/core.hpp"
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
    fail<ValueError>(name, "[", start, ", ", end, ") with step ", step, " has more than 2^63 - 1 values");
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
  if (xs.empty()) fail<ShapeError>(name, "needs at least one tensor");
  TensorType out = xs[0];
  check::dim(name, static_cast<std::int64_t>(dim), out.shape.rank());
  for (std::size_t i = 1; i < xs.size(); ++i) {
    const TensorType& t = xs[i];
    check::same_dtype(name, xs[0], t);
    if (t.shape.rank() != out.shape.rank())
      fail<ShapeError>(name, "tensors of ranks ", out.shape.rank(), " and ", t.shape.rank());
    for (std::size_t d = 0; d < t.shape.rank(); ++d) {
      if (d != dim && t.shape[d] != xs[0].shape[d])
        fail<ShapeError>(name, "shapes ", xs[0].shape, " and ", t.shape,
                         " differ outside dim ", dim);
    }
    out.shape[dim] += t.shape[dim];
  }
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
  if (pads.size() != x.shape.rank())
    fail<ShapeError>(name, "got ", pads.size(), " pairs for a tensor of shape ", x.shape);
  TensorType out = x;
  for (std::size_t d = 0; d < pads.size(); ++d) {
    out.shape[d] += pads[d].first + pads[d].second;
    if (out.shape[d] < 0) fail<ShapeError>(name, "dim ", d, " of ", x.shape, " cropped below 0");
  }
  return out;
}

// ---- indexing -------------------------------------------------------------------------------------

TensorType SliceAssign::infer(const TensorType& t, const TensorType& values) const {
  const Shape s = sliced(name, t.shape, ranges);
  if (values.shape != s)
    fail<ShapeError>(name, "values of shape ", values.shape, " for a slice of shape ", s);
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
TensorType SelectAssign::infer(const TensorType& t, const TensorType& indices,
                               const TensorType& values) const {
  Select sel{dim};
  const TensorType want = sel.infer(t, indices);
  if (values.shape != want.shape)
    fail<ShapeError>(name, "values of shape ", values.shape, ", expected ", want.shape);
  check::same_dtype(name, t, values);
  return t;
}
TensorType Gather::infer(const TensorType& t, const TensorType& indices) const {
  check::dim(name, static_cast<std::int64_t>(dim), t.shape.rank());
  check::int_dtype(name, indices, "indices");
  if (indices.shape.rank() != t.shape.rank())
    fail<ShapeError>(name, "indices of shape ", indices.shape, " for a tensor of shape ", t.shape);
  return {indices.shape, t.dtype};
}
TensorType Scatter::infer(const TensorType& t, const TensorType& indices,
                          const TensorType& values) const {
  check::dim(name, static_cast<std::int64_t>(dim), t.shape.rank());
  check::int_dtype(name, indices, "indices");
  if (indices.shape.rank() != t.shape.rank() || values.shape.rank() != t.shape.rank())
    fail<ShapeError>(name, "tensor ", t.shape, ", indices ", indices.shape, " and values ",
                     values.shape, " must have one rank");
  check::same_dtype(name, t, values);
  return t;
}
namespace {
void check_broadcast_to(const char* op, const Shape& s, const Shape& target, const char* what) {
  if (s.rank() != target.rank())
    fail<ShapeError>(op, what, " of shape ", s, " for a tensor of shape ", target);
  for (std::size_t d = 0; d < s.rank(); ++d)
    if (s[d] != target[d] && s[d] != 1)
      fail<ShapeError>(op, what, " of shape ", s, " does not broadcast to ", target);
}
}  // namespace
TensorType MaskWhere::infer(const TensorType& t, const TensorType& mask,
                            const TensorType& values) const {
  check::bool_dtype(name, mask, "mask");
  check_broadcast_to(name, mask.shape, t.shape, "mask");
  check_broadcast_to(name, values.shape, t.shape, "values");
  check::same_dtype(name, t, values);
  return t;
}
TensorType MaskFill::infer(const TensorType& t, const TensorType& mask) const {
  check::bool_dtype(name, mask, "mask");
  check_broadcast_to(name, mask.shape, t.shape, "mask");
  return t;
}
TensorType Argwhere::infer(const TensorType& mask) const {
  check::bool_dtype(name, mask, "mask");
  if (!is_int(index_dtype)) fail<DTypeError>(name, "index dtype ", index_dtype, " is not an int dtype");
  return {Shape{kDynamicDim, static_cast<std::int64_t>(mask.shape.rank())}, index_dtype};
}

}  // namespace ember::ir
