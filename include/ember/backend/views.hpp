// Strided views shared by the backends whose primitives are strided views over a buffer (the
// CPU backend's CpuTensor, the GPU backends' GpuTensor): a view only rewrites the shape,
// strides (elements, 0 for expanded dims, negative for flipped ones) and offset of `t`, which
// needs members `shape`, `strides` and `offset`. The arguments are valid (the front end
// checked them against the op's description, ember/ir/layout.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ember/core/shape.hpp"
#include "ember/core/slice.hpp"

namespace ember::views {

/// Row-major contiguous: the strides of `shape` without gaps (size-1 dims may have any
/// stride).
inline bool is_contiguous(const Shape& shape, const std::vector<std::int64_t>& strides) {
  std::int64_t expect = 1;
  for (std::size_t d = shape.dims.size(); d-- > 0;) {
    if (shape.dims[d] == 1) continue;
    if (strides[d] != expect) return false;
    expect *= shape.dims[d];
  }
  return true;
}

template <class T>
T permute(T t, const std::vector<std::size_t>& axes) {
  Shape shape;
  std::vector<std::int64_t> strides;
  shape.dims.reserve(axes.size());
  strides.reserve(axes.size());
  for (std::size_t a : axes) {
    shape.dims.push_back(t.shape[a]);
    strides.push_back(t.strides[a]);
  }
  t.shape = std::move(shape);
  t.strides = std::move(strides);
  return t;
}

template <class T>
T expand(T t, const Shape& shape) {
  const std::size_t r = shape.rank(), lead = r - t.shape.rank();
  std::vector<std::int64_t> strides(r, 0);
  for (std::size_t i = lead; i < r; ++i) {
    const std::size_t j = i - lead;
    strides[i] = (t.shape[j] == shape[i]) ? t.strides[j] : 0;
  }
  t.shape = shape;
  t.strides = std::move(strides);
  return t;
}

template <class T>
T slice(T t, const std::vector<SliceRange>& ranges) {
  bool empty = false;
  for (const auto& r : ranges) empty = empty || r.count == 0;
  for (std::size_t d = 0; d < ranges.size(); ++d) {
    const SliceRange& r = ranges[d];
    // an empty view never reads: keep its offset inside the buffer
    if (!empty) t.offset += r.start * t.strides[d];
    t.strides[d] *= r.step;
    t.shape[d] = r.count;
  }
  return t;
}

template <class T>
T flip(T t, const std::vector<std::size_t>& axes) {
  for (std::size_t a : axes) {
    if (t.shape[a] > 1) t.offset += (t.shape[a] - 1) * t.strides[a];
    t.strides[a] = -t.strides[a];
  }
  return t;
}

template <class T>
T unfold(T t, std::size_t dim, std::int64_t size, std::int64_t step) {
  const std::int64_t n = t.shape[dim];
  const std::int64_t stride = t.strides[dim];
  t.shape[dim] = (n - size) / step + 1;
  t.strides[dim] = stride * step;
  t.shape.dims.push_back(size);
  t.strides.push_back(stride);
  return t;
}

template <class T>
T squeeze(T t, const std::vector<std::size_t>& dims) {
  Shape shape;
  std::vector<std::int64_t> strides;
  std::size_t k = 0;
  for (std::size_t d = 0; d < t.shape.rank(); ++d) {
    if (k < dims.size() && dims[k] == d) {
      ++k;
      continue;
    }
    shape.dims.push_back(t.shape[d]);
    strides.push_back(t.strides[d]);
  }
  t.shape = std::move(shape);
  t.strides = std::move(strides);
  return t;
}

template <class T>
T unsqueeze(T t, const std::vector<std::size_t>& dims) {
  const std::size_t r = t.shape.rank() + dims.size();
  Shape shape;
  std::vector<std::int64_t> strides;
  std::size_t k = 0, src = 0;
  for (std::size_t d = 0; d < r; ++d) {
    if (k < dims.size() && dims[k] == d) {
      ++k;
      shape.dims.push_back(1);
      // stride of a size-1 dim is never used to step; pick the contiguous-looking one
      strides.push_back(src < t.shape.rank() ? t.strides[src] * t.shape[src] : 1);
      continue;
    }
    shape.dims.push_back(t.shape[src]);
    strides.push_back(t.strides[src]);
    ++src;
  }
  t.shape = std::move(shape);
  t.strides = std::move(strides);
  return t;
}

}  // namespace ember::views
