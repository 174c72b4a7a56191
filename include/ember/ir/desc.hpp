// Shared pieces of the op descriptions (ember/ir/<family>.hpp).
//
// An op description (Burn's burn-ir `...OpIr`) is a plain struct with
//   name       the op's name ("sum_dim"), as in error messages
//   bound      Bound::Memory or Bound::Compute
//   fields     its parameters (not its tensor operands), exposed by EMBER_IR_FIELDS as
//              `tie()`, which gives equality, hashing and serialisation (ember/ir/serialize.hpp)
//   infer(...) the one place that computes the output type(s) from the operands' types and
//              throws the "[name] ..." errors: ShapeError, DTypeError, ValueError.
// The backend function of a registry row takes the operands and the description's fields in
// one order; the fields are the row's non-tensor, non-device parameters, in order.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "ember/core/error.hpp"
#include "ember/ir/type.hpp"

/// Declares a description's fields: `EMBER_IR_FIELDS(dim, keepdim)`.
#define EMBER_IR_FIELDS(...)      \
  auto tie() {                    \
    return std::tie(__VA_ARGS__); \
  }                               \
  auto tie() const {              \
    return std::tie(__VA_ARGS__); \
  }
/// A description without fields.
#define EMBER_IR_NO_FIELDS   \
  std::tuple<> tie() {       \
    return {};               \
  }                          \
  std::tuple<> tie() const { \
    return {};               \
  }

namespace ember::ir {

/// Per-dim sizes of N spatial dims.
template <std::size_t N>
using Dims = std::array<std::int64_t, N>;

/// Whether two descriptions of one op have equal fields.
template <class D>
bool equal(const D& a, const D& b) {
  return a.tie() == b.tie();
}

/// The output types of an op with two outputs (values and indices, variance and mean, ...).
using TensorTypes2 = std::pair<TensorType, TensorType>;

/// The output type of an op whose size along some dims depends on the data (argwhere): those
/// dims are -1 in `shape`.
inline constexpr std::int64_t kDynamicDim = -1;

namespace check {
// Checks used by the infer functions; each throws with the op's name.

/// `dim` in [0, rank); ShapeError otherwise.
void dim(const char* op, std::int64_t dim, std::size_t rank);
/// rank == want; ShapeError otherwise ("[op] expected a rank-R <what>, got shape S").
void rank(const char* op, const TensorType& t, std::size_t want, const char* what);
/// Same dtype; DTypeError otherwise.
void same_dtype(const char* op, const TensorType& a, const TensorType& b);
/// dtype of kind float; DTypeError otherwise.
void float_dtype(const char* op, const TensorType& t, const char* what);
/// dtype of kind int; DTypeError otherwise.
void int_dtype(const char* op, const TensorType& t, const char* what);
/// dtype bool; DTypeError otherwise.
void bool_dtype(const char* op, const TensorType& t, const char* what);
/// Every dim of `s` equals `target`'s or is 1 (same rank); ShapeError naming `what`
/// ("[op] mask of shape S cannot be broadcast to the tensor's shape T (dim d: a vs b)").
void broadcast_to(const char* op, const char* what, const Shape& s, const Shape& target);
/// The broadcast of the leading `n` (batch) dims of `a` and `b`; ShapeError otherwise
/// ("[op] batch dims of A and B are not broadcast-compatible (dim i: x vs y)").
Shape batch_broadcast(const char* op, const Shape& a, const Shape& b, std::size_t n);
/// The broadcast of two shapes of equal rank; ShapeError otherwise.
Shape broadcast(const char* op, const Shape& a, const Shape& b);

}  // namespace check

}  // namespace ember::ir
