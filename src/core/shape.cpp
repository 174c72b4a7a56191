#include "ember/core/shape.hpp"

#include <sstream>

namespace ember {

std::string Shape::to_string() const {
  std::ostringstream os;
  os << "[";
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (i) os << ", ";
    os << dims[i];
  }
  os << "]";
  return os.str();
}

std::vector<std::int64_t> Shape::contiguous_strides() const {
  std::vector<std::int64_t> s(dims.size());
  std::int64_t acc = 1;
  for (std::size_t i = dims.size(); i-- > 0;) {
    s[i] = acc;
    acc *= dims[i];
  }
  return s;
}

std::size_t normalize_dim(std::string_view op, std::int64_t dim, std::size_t rank) {
  const auto r = static_cast<std::int64_t>(rank);
  if (dim < -r || dim >= r) {
    detail::fail<ShapeError>(op, "dim ", dim, " is out of range for a tensor of rank ", rank,
                             " (valid: ", -r, " to ", r - 1, ")");
  }
  return static_cast<std::size_t>(dim < 0 ? dim + r : dim);
}

std::int64_t checked_numel(std::string_view op, const Shape& shape) {
  std::int64_t n = 1;
  bool overflow = false;
  for (auto d : shape.dims) {
    if (d < 0) detail::fail<ShapeError>(op, "shape ", shape, " has a negative dim");
    if (d == 0) return 0;
  }
  for (auto d : shape.dims) overflow = overflow || __builtin_mul_overflow(n, d, &n);
  if (overflow) {
    detail::fail<ShapeError>(op, "shape ", shape, " has more than 2^63 - 1 elements");
  }
  return n;
}

Shape broadcast_shapes(std::string_view op, const Shape& a, const Shape& b) {
  if (a.rank() != b.rank()) {
    detail::fail<ShapeError>(op, "shapes ", a, " and ", b, " have different ranks");
  }
  Shape out = a;
  for (std::size_t i = 0; i < a.rank(); ++i) {
    if (a[i] == b[i]) continue;
    if (a[i] == 1) {
      out[i] = b[i];
    } else if (b[i] != 1) {
      detail::fail<ShapeError>(op, "shapes ", a, " and ", b, " are not broadcast-compatible (dim ",
                               i, ": ", a[i], " vs ", b[i], ")");
    }
  }
  return out;
}

}  // namespace ember
