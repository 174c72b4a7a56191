// Checks shared by the infer functions of the spatial ops (convolution, pooling, resampling).
#pragma once

#include <array>
#include <cstdint>
#include <sstream>
#include <string>

#include "ember/core/error.hpp"
#include "ember/ir/desc.hpp"

namespace ember::ir::spatial {

/// "[1, 2]" for messages.
template <std::size_t N>
std::string arr_str(const std::array<std::int64_t, N>& a) {
  std::ostringstream os;
  os << "[";
  for (std::size_t i = 0; i < N; ++i) os << (i ? ", " : "") << a[i];
  os << "]";
  return os.str();
}

/// x is [B, C, *S] with N spatial dims; ShapeError naming `what` otherwise.
template <std::size_t N>
void check_rank(const char* op, const TensorType& x, const char* what) {
  if (x.shape.rank() != N + 2)
    ember::detail::fail<ShapeError>(op, "expected a rank-", N + 2, " ", what, ", got shape ",
                                    x.shape);
}

/// stride >= 1, padding >= 0, dilation >= 1 in every dim; ValueError otherwise.
template <std::size_t N>
void check_options(const char* op, const std::array<std::int64_t, N>& stride,
                   const std::array<std::int64_t, N>& padding,
                   const std::array<std::int64_t, N>& dilation) {
  for (std::size_t i = 0; i < N; ++i) {
    if (stride[i] < 1)
      ember::detail::fail<ValueError>(op, "stride ", arr_str(stride), " must be >= 1");
    if (padding[i] < 0)
      ember::detail::fail<ValueError>(op, "padding ", arr_str(padding), " must be >= 0");
    if (dilation[i] < 1)
      ember::detail::fail<ValueError>(op, "dilation ", arr_str(dilation), " must be >= 1");
  }
}

}  // namespace ember::ir::spatial
