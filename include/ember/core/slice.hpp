// Slice specifications for Tensor::slice / slice_assign / slice_fill (Burn's s![..]).
//
//   x.slice({s(0, 2), s(), s(-1)})     // rows 0..2, all columns, last index of dim 2
//   x.slice({s(1, end, 2)})            // every other element from 1 to the end
//   x.slice({s(0, 4, -1)})             // indices 3, 2, 1, 0 (Burn: the range, reversed)
//
// start/end may be negative (counting from the end) and are clamped to the dim, as
// Python slicing. A single index `s(i)` keeps the dim with size 1 (Burn's semantics).
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "ember/core/error.hpp"
#include "ember/core/shape.hpp"

namespace ember {

/// Marker for an open end: s(2, end).
struct EndT {};
inline constexpr EndT end{};

struct Slice {
  std::int64_t start = 0;
  std::int64_t stop = std::numeric_limits<std::int64_t>::max();  // max = to the end
  std::int64_t step = 1;
  bool single = false;  ///< s(i): one index, must be in range (IndexError-like ShapeError)
};

/// The whole dim.
inline Slice s() {
  return {};
}
/// A single index (dim kept, size 1); negative counts from the end.
inline Slice s(std::int64_t index) {
  return {index, index + 1, 1, true};
}
/// [start, stop) with an optional step (non-zero; negative walks the range backwards).
inline Slice s(std::int64_t start, std::int64_t stop, std::int64_t step = 1) {
  return {start, stop, step, false};
}
/// [start, end of dim) with an optional step.
inline Slice s(std::int64_t start, EndT, std::int64_t step = 1) {
  return {start, std::numeric_limits<std::int64_t>::max(), step, false};
}

/// A resolved slice of one dim, as backends receive it: `count` indices
/// start, start + step, ..., each in [0, dim). step != 0; count may be 0.
struct SliceRange {
  std::int64_t start = 0;
  std::int64_t count = 0;
  std::int64_t step = 1;
  bool operator==(const SliceRange&) const = default;
};

/// Resolves `sl` against a dim of size `size`. Throws ShapeError naming `op` for a
/// zero step or an out-of-range single index.
inline SliceRange resolve_slice(const char* op, const Slice& sl, std::int64_t size,
                                std::size_t dim) {
  if (sl.step == 0) detail::fail<ShapeError>(op, "slice step must be non-zero (dim ", dim, ")");
  if (sl.single) {
    const std::int64_t i = sl.start < 0 ? sl.start + size : sl.start;
    if (i < 0 || i >= size) {
      detail::fail<ShapeError>(op, "index ", sl.start, " is out of range for dim ", dim,
                               " of size ", size);
    }
    return {i, 1, 1};
  }
  auto clamp = [&](std::int64_t v) {
    if (v < 0) v += size;
    if (v < 0) v = 0;
    if (v > size) v = size;
    return v;
  };
  const std::int64_t a = clamp(sl.start);
  const std::int64_t b =
      sl.stop == std::numeric_limits<std::int64_t>::max() ? size : clamp(sl.stop);
  if (b <= a) return {a, 0, sl.step};
  // count = ceil(len / |step|), computed without overflow for any step (incl. INT64_MIN)
  const std::uint64_t len = static_cast<std::uint64_t>(b - a);
  const std::uint64_t mag = sl.step > 0 ? static_cast<std::uint64_t>(sl.step)
                                        : std::uint64_t{0} - static_cast<std::uint64_t>(sl.step);
  const auto count = static_cast<std::int64_t>(1 + (len - 1) / mag);
  return {sl.step > 0 ? a : b - 1, count, sl.step};
}

/// Resolves up to rank() slices; missing trailing dims take the whole dim.
/// Throws ShapeError if more slices than dims are given.
inline std::vector<SliceRange> resolve_slices(const char* op, const std::vector<Slice>& slices,
                                              const Shape& shape) {
  if (slices.size() > shape.rank()) {
    detail::fail<ShapeError>(op, slices.size(), " slices given for a tensor of shape ", shape);
  }
  std::vector<SliceRange> out(shape.rank());
  for (std::size_t d = 0; d < shape.rank(); ++d) {
    out[d] =
        d < slices.size() ? resolve_slice(op, slices[d], shape[d], d) : SliceRange{0, shape[d], 1};
  }
  return out;
}

}  // namespace ember
