// Shape: the run-time dims of a tensor, and helpers shared by the front end and backends.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <string>
#include <vector>

#include "ember/core/error.hpp"

namespace ember {

/// Dims of a tensor, outermost first. A rank-0 shape has numel 1.
struct Shape {
  std::vector<std::int64_t> dims;

  Shape() = default;
  Shape(std::initializer_list<std::int64_t> d) : dims(d) {}
  explicit Shape(std::vector<std::int64_t> d) : dims(std::move(d)) {}

  std::size_t rank() const { return dims.size(); }
  /// Product of the dims (1 for rank 0).
  std::int64_t numel() const {
    std::int64_t n = 1;
    for (auto v : dims) n *= v;
    return n;
  }
  std::int64_t operator[](std::size_t i) const { return dims[i]; }
  std::int64_t& operator[](std::size_t i) { return dims[i]; }
  bool operator==(const Shape&) const = default;
  /// "[2, 3, 4]"
  std::string to_string() const;
  /// Row-major (C-contiguous) strides in elements.
  std::vector<std::int64_t> contiguous_strides() const;
};

inline std::ostream& operator<<(std::ostream& os, const Shape& s) {
  return os << s.to_string();
}

/// Normalises a possibly negative `dim` for a tensor of rank `rank` (valid range
/// [-rank, rank-1]); throws ShapeError naming `op` otherwise.
std::size_t normalize_dim(std::string_view op, std::int64_t dim, std::size_t rank);

/// numel of `shape`, checking that every dim is >= 0 and that the product fits in int64;
/// throws ShapeError naming `op` otherwise.
std::int64_t checked_numel(std::string_view op, const Shape& shape);

/// Broadcast shape of two shapes of equal rank (size-1 dims stretch).
/// Throws ShapeError "[op] shapes A and B are not broadcast-compatible (dim i: x vs y)".
Shape broadcast_shapes(std::string_view op, const Shape& a, const Shape& b);

}  // namespace ember
