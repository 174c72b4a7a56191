// CPU backend: layout views (permute, expand, slice, flip, unfold, squeeze, unsqueeze)
// (ember/backend/views.hpp, shared with the GPU backends) and cat.
#include <cstring>

#include "ember/backend/views.hpp"
#include "ember/cpu/ops_layout.hpp"
#include "kernel.hpp"

namespace ember::cpu {

CpuTensor permute_view(CpuTensor t, const std::vector<std::size_t>& axes) {
  return views::permute(std::move(t), axes);
}
CpuTensor expand_view(CpuTensor t, const Shape& shape) {
  return views::expand(std::move(t), shape);
}
CpuTensor slice_view(CpuTensor t, const std::vector<SliceRange>& ranges) {
  return views::slice(std::move(t), ranges);
}
CpuTensor flip_view(CpuTensor t, const std::vector<std::size_t>& axes) {
  return views::flip(std::move(t), axes);
}
CpuTensor unfold_view(CpuTensor t, std::size_t dim, std::int64_t size, std::int64_t step) {
  return views::unfold(std::move(t), dim, size, step);
}
CpuTensor squeeze_view(CpuTensor t, const std::vector<std::size_t>& dims) {
  return views::squeeze(std::move(t), dims);
}
CpuTensor unsqueeze_view(CpuTensor t, const std::vector<std::size_t>& dims) {
  return views::unsqueeze(std::move(t), dims);
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
