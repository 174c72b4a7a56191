// Backend contract: layout functions. See core.hpp for the conventions.
//
// Required functions, for X in {float, int, bool} and P = X's primitive. The front end has
// validated every argument (dims in range and normalised, no duplicates, shapes compatible).
//
//   X_permute(P, const std::vector<std::size_t>& axes) -> P
//       out.shape[i] = in.shape[axes[i]]; axes is a permutation of 0..rank-1.
//   X_expand(P, const Shape& shape) -> P
//       Broadcast to `shape` (rank >= input rank; input dims align to the right, new
//       leading dims are prepended). Every input dim equals the target dim or is 1.
//   X_slice(P, const std::vector<SliceRange>& ranges) -> P
//       One range per dim: indices start, start + step, ..., `count` of them, all in
//       [0, dim); step != 0 and may be negative.
//   X_flip(P, const std::vector<std::size_t>& axes) -> P
//       Reverses the listed dims (distinct, may be empty).
//   X_cat(const std::vector<P>& tensors, std::size_t dim) -> P
//       Non-empty list of tensors of one dtype and rank whose dims other than `dim` agree
//       (some may have size 0 along `dim`).
//
// Optional functions, detected by the front end with a requires-expression (a default
// written with the required ones is used otherwise):
//
//   X_unfold(P, std::size_t dim, std::int64_t size, std::int64_t step) -> P
//       torch.Tensor.unfold: dim becomes (n - size) / step + 1 windows, a new last dim of
//       length `size` holds each window. size <= n, step > 0.
//   X_squeeze_dims(P, const std::vector<std::size_t>& dims) -> P
//       Removes the listed size-1 dims (sorted, distinct).
//   X_unsqueeze_dims(P, const std::vector<std::size_t>& dims) -> P
//       Inserts size-1 dims so that they sit at the listed output positions (sorted,
//       distinct, in [0, rank + dims.size())).
//   X_repeat(P, const std::vector<std::int64_t>& times) -> P
//       torch.Tensor.repeat with one count (>= 0) per dim.
//   X_pad(P, const std::vector<std::pair<std::int64_t, std::int64_t>>& pads, PadMode, double)
//       One (before, after) pair per dim (outermost first; may be negative = crop), see
//       Tensor::pad.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ember/backend/core.hpp"
#include "ember/core/slice.hpp"

namespace ember {}  // namespace ember
