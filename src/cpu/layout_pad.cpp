// CPU backend: pad in one pass. Each output element maps to one input element (or to the
// constant): j = i - before along every dim, then out-of-range j is mirrored (Reflect,
// without repeating the edge), clamped (Edge) or replaced by the value (Constant). Negative
// `before`/`after` crop, so the mapping is also torch's "pad, then crop" order.
#include <algorithm>
#include <utility>

#include "ember/cpu/ops_layout.hpp"
#include "kernel.hpp"

namespace ember::cpu {

namespace {

/// Input index of output index `o` along a dim of size n padded by `before`; -1 = constant.
inline std::int64_t map_index(std::int64_t o, std::int64_t before, std::int64_t n, PadMode mode) {
  std::int64_t j = o - before;
  if (j >= 0 && j < n) return j;
  switch (mode) {
    case PadMode::Constant:
      return -1;
    case PadMode::Reflect:
      if (j < 0) j = -j;
      if (j >= n) j = 2 * (n - 1) - j;
      return j;
    case PadMode::Edge:
      return std::clamp<std::int64_t>(j, 0, n - 1);
  }
  return -1;
}

}  // namespace

CpuTensor pad_copy(const CpuTensor& t,
                   const std::vector<std::pair<std::int64_t, std::int64_t>>& pads, PadMode mode,
                   double value) {
  const std::size_t r = t.shape.rank();
  Shape shape = t.shape;
  for (std::size_t d = 0; d < r; ++d) shape[d] += pads[d].first + pads[d].second;
  CpuTensor out = alloc(shape, t.dtype);
  const std::int64_t numel = out.numel();
  if (numel == 0) return out;
  const std::int64_t inner = shape[r - 1];
  const std::int64_t rows = numel / inner;
  // source index of every output column of the last dim (-1 = constant)
  std::vector<std::int64_t> col(static_cast<std::size_t>(inner));
  for (std::int64_t k = 0; k < inner; ++k)
    col[k] = map_index(k, pads[r - 1].first, t.shape[r - 1], mode);
  const std::int64_t last_stride = t.strides[r - 1];
  visit_dtype(t.dtype, [&]<class T>() {
    using U = std::conditional_t<std::is_same_v<T, bool>, std::uint8_t, T>;
    const U fill = std::is_same_v<T, bool> ? U(value != 0.0) : detail::convert_value<U>(value);
    const U* src = reinterpret_cast<const U*>(t.storage->data());
    U* dst = out.data<U>();
    const std::int64_t grain = std::max<std::int64_t>(1, kParallelGrain / inner);
    parallel_for(rows, grain, [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t row = b; row < e; ++row) {
        U* o = dst + row * inner;
        // map the outer dims of this row
        std::int64_t rem = row, off = t.offset;
        bool constant = false;
        for (std::size_t d = r - 1; d-- > 0;) {
          const std::int64_t i = rem % shape[d];
          rem /= shape[d];
          const std::int64_t j = map_index(i, pads[d].first, t.shape[d], mode);
          if (j < 0) {
            constant = true;
            break;
          }
          off += j * t.strides[d];
        }
        if (constant) {
          std::fill(o, o + inner, fill);
          continue;
        }
        for (std::int64_t k = 0; k < inner; ++k) {
          const std::int64_t j = col[static_cast<std::size_t>(k)];
          o[k] = j < 0 ? fill : src[off + j * last_stride];
        }
      }
    });
  });
  return out;
}

}  // namespace ember::cpu
