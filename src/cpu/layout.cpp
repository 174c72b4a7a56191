// CPU backend: layout views (permute, expand, slice, flip, unfold, squeeze, unsqueeze)
// and cat. Views share the input's storage and only rewrite shape/strides/offset.
#include <cstring>

#include "ember/cpu/ops_layout.hpp"
#include "kernel.hpp"

namespace ember::cpu {

CpuTensor permute_view(CpuTensor t, const std::vector<std::size_t>& axes) {
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

CpuTensor expand_view(CpuTensor t, const Shape& shape) {
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

CpuTensor slice_view(CpuTensor t, const std::vector<SliceRange>& ranges) {
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

CpuTensor flip_view(CpuTensor t, const std::vector<std::size_t>& axes) {
  for (std::size_t a : axes) {
    if (t.shape[a] > 1) t.offset += (t.shape[a] - 1) * t.strides[a];
    t.strides[a] = -t.strides[a];
  }
  return t;
}

CpuTensor unfold_view(CpuTensor t, std::size_t dim, std::int64_t size, std::int64_t step) {
  const std::int64_t n = t.shape[dim];
  const std::int64_t stride = t.strides[dim];
  t.shape[dim] = (n - size) / step + 1;
  t.strides[dim] = stride * step;
  t.shape.dims.push_back(size);
  t.strides.push_back(stride);
  return t;
}

CpuTensor squeeze_view(CpuTensor t, const std::vector<std::size_t>& dims) {
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

CpuTensor unsqueeze_view(CpuTensor t, const std::vector<std::size_t>& dims) {
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

CpuTensor cat_copy(const std::vector<CpuTensor>& ts, std::size_t dim) {
  Shape shape = ts[0].shape;
  std::int64_t total = 0;
  for (const auto& t : ts) total += t.shape[dim];
  shape[dim] = total;
  CpuTensor out = alloc(shape, ts[0].dtype);
  if (out.numel() == 0) return out;
  std::int64_t outer = 1, inner = 1;
  for (std::size_t d = 0; d < dim; ++d) outer *= shape[d];
  for (std::size_t d = dim + 1; d < shape.rank(); ++d) inner *= shape[d];
  const std::size_t es = dtype_size(out.dtype);
  char* dst = static_cast<char*>(out.raw());
  const std::int64_t out_row = total * inner;  // elements per outer index in the output
  std::int64_t acc = 0;
  for (const auto& t : ts) {
    const std::int64_t rows = t.shape[dim] * inner;  // elements per outer index in t
    if (rows == 0) continue;
    const CpuTensor c = contiguous(t);
    const char* src = static_cast<const char*>(c.raw());
    const std::int64_t grain = std::max<std::int64_t>(1, kParallelGrain / rows);
    const std::int64_t at = acc * inner;
    parallel_for(outer, grain, [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t o = b; o < e; ++o) {
        std::memcpy(dst + static_cast<std::size_t>(o * out_row + at) * es,
                    src + static_cast<std::size_t>(o * rows) * es,
                    static_cast<std::size_t>(rows) * es);
      }
    });
    acc += t.shape[dim];
  }
  return out;
}

}  // namespace ember::cpu
