// Layout ops on backend primitives, dispatched by kind: the building blocks of the layout
// front end (ops/layout.hpp) and of composite ops in other families. No checks here: the
// callers have validated every argument (see ember/backend/layout.hpp for the contract).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include "ember/backend/layout.hpp"
#include "ember/core/slice.hpp"

// Calls B::<kind>_<fn>(args...) for the kind K of the enclosing template.
#define EMBER_LAYOUT_CALL(fn, ...)             \
  do {                                         \
    if constexpr (std::is_same_v<K, Float>)    \
      return B::float_##fn(__VA_ARGS__);       \
    else if constexpr (std::is_same_v<K, Int>) \
      return B::int_##fn(__VA_ARGS__);         \
    else                                       \
      return B::bool_##fn(__VA_ARGS__);        \
  } while (0)

// Returns B::<kind>_<fn>(args...) when the backend defines it (an optional override).
#define EMBER_LAYOUT_TRY(fn, ...)                                                                \
  do {                                                                                           \
    if constexpr (std::is_same_v<K, Float>) {                                                    \
      if constexpr (requires { B::float_##fn(__VA_ARGS__); }) return B::float_##fn(__VA_ARGS__); \
    } else if constexpr (std::is_same_v<K, Int>) {                                               \
      if constexpr (requires { B::int_##fn(__VA_ARGS__); }) return B::int_##fn(__VA_ARGS__);     \
    } else {                                                                                     \
      if constexpr (requires { B::bool_##fn(__VA_ARGS__); }) return B::bool_##fn(__VA_ARGS__);   \
    }                                                                                            \
  } while (0)

namespace ember::detail {

template <class B, class K>
struct LayoutPrim {
  using P = PrimitiveOf<B, K>;
  using Dev = typename B::Device;
  using Pairs = std::vector<std::pair<std::int64_t, std::int64_t>>;

  static Shape shape(const P& p) { EMBER_LAYOUT_CALL(shape, p); }
  static DType dtype(const P& p) { EMBER_LAYOUT_CALL(dtype, p); }
  static Dev device(const P& p) { EMBER_LAYOUT_CALL(device, p); }
  static P reshape(P p, const Shape& s) { EMBER_LAYOUT_CALL(reshape, std::move(p), s); }
  static P full(const Shape& s, double v, const Dev& dev, DType dt) {
    EMBER_LAYOUT_CALL(full, s, v, dev, dt);
  }
  static P cast(P p, DType dt) {
    if constexpr (std::is_same_v<K, Float>)
      return B::float_cast(std::move(p), dt);
    else if constexpr (std::is_same_v<K, Int>)
      return B::int_cast(std::move(p), dt);
    else
      return p;
  }

  // ---- required ---------------------------------------------------------------------
  static P permute(P p, const std::vector<std::size_t>& axes) {
    EMBER_LAYOUT_CALL(permute, std::move(p), axes);
  }
  static P expand(P p, const Shape& s) { EMBER_LAYOUT_CALL(expand, std::move(p), s); }
  static P slice(P p, const std::vector<SliceRange>& r) {
    EMBER_LAYOUT_CALL(slice, std::move(p), r);
  }
  static P flip(P p, const std::vector<std::size_t>& axes) {
    EMBER_LAYOUT_CALL(flip, std::move(p), axes);
  }
  static P cat(const std::vector<P>& ps, std::size_t dim) { EMBER_LAYOUT_CALL(cat, ps, dim); }

  // ---- composites (a backend may override) --------------------------------------------
  /// `length` indices from `start` along `dim` (a view where the backend's slice is).
  static P narrow(P p, std::size_t dim, std::int64_t start, std::int64_t length) {
    const Shape s = shape(p);
    std::vector<SliceRange> r(s.rank());
    for (std::size_t d = 0; d < s.rank(); ++d) r[d] = {0, s[d], 1};
    r[dim] = {start, length, 1};
    return slice(std::move(p), r);
  }

  static P squeeze_dims(P p, const std::vector<std::size_t>& dims) {
    EMBER_LAYOUT_TRY(squeeze_dims, p, dims);
    const Shape s = shape(p);
    Shape out;
    std::size_t k = 0;
    for (std::size_t d = 0; d < s.rank(); ++d) {
      if (k < dims.size() && dims[k] == d) {
        ++k;
        continue;
      }
      out.dims.push_back(s[d]);
    }
    return reshape(std::move(p), out);
  }

  static P unsqueeze_dims(P p, const std::vector<std::size_t>& dims) {
    EMBER_LAYOUT_TRY(unsqueeze_dims, p, dims);
    const Shape s = shape(p);
    Shape out;
    std::size_t k = 0, src = 0;
    for (std::size_t d = 0; d < s.rank() + dims.size(); ++d) {
      if (k < dims.size() && dims[k] == d) {
        ++k;
        out.dims.push_back(1);
      } else {
        out.dims.push_back(s[src++]);
      }
    }
    return reshape(std::move(p), out);
  }

  static P unfold(P p, std::size_t dim, std::int64_t size, std::int64_t step) {
    EMBER_LAYOUT_TRY(unfold, p, dim, size, step);
    const Shape s = shape(p);
    const std::size_t r = s.rank();
    const std::int64_t windows = (s[dim] - size) / step + 1;
    std::vector<std::size_t> axes;  // moves `dim` to the end
    for (std::size_t d = 0; d < r; ++d)
      if (d != dim) axes.push_back(d);
    axes.push_back(dim);
    std::vector<P> parts;
    parts.reserve(static_cast<std::size_t>(windows));
    for (std::int64_t w = 0; w < windows; ++w) {
      P win = permute(narrow(p, dim, w * step, size), axes);
      parts.push_back(unsqueeze_dims(std::move(win), {dim}));
    }
    return cat(parts, dim);
  }

  /// torch.Tensor.repeat with one count per dim: expand + reshape.
  static P repeat(P p, const std::vector<std::int64_t>& times) {
    EMBER_LAYOUT_TRY(repeat, p, times);
    const Shape s = shape(p);
    const std::size_t r = s.rank();
    std::vector<std::size_t> ins;
    Shape big, out;
    for (std::size_t d = 0; d < r; ++d) {
      ins.push_back(2 * d);
      big.dims.push_back(times[d]);
      big.dims.push_back(s[d]);
      out.dims.push_back(times[d] * s[d]);
    }
    return reshape(expand(unsqueeze_dims(std::move(p), ins), big), out);
  }

  /// Rolls each listed dim by its shift (elements leaving the end re-enter at the front).
  static P roll(P p, const std::vector<std::int64_t>& shifts,
                const std::vector<std::size_t>& dims) {
    for (std::size_t k = 0; k < dims.size(); ++k) {
      const std::size_t d = dims[k];
      const std::int64_t n = shape(p)[d];
      if (n == 0) continue;
      const std::int64_t sh = ((shifts[k] % n) + n) % n;
      if (sh == 0) continue;
      P tail = narrow(p, d, n - sh, sh);
      P head = narrow(p, d, 0, n - sh);
      p = cat({std::move(tail), std::move(head)}, d);
    }
    return p;
  }

  /// One (before, after) pair per dim, outermost first; negative values crop. Positive
  /// pads are taken from the uncropped input, then crops apply (torch's order).
  static P pad(P p, const Pairs& pads, PadMode mode, double value) {
    EMBER_LAYOUT_TRY(pad, p, pads, mode, value);
    for (std::size_t d = pads.size(); d-- > 0;) {
      const auto [before, after] = pads[d];
      if (before == 0 && after == 0) continue;
      const Shape s = shape(p);
      const std::int64_t n = s[d];
      std::vector<P> parts;
      auto edge_part = [&](std::int64_t count, bool left) {
        Shape ps = s;
        ps[d] = count;
        if (mode == PadMode::Constant) return full(ps, value, device(p), dtype(p));
        if (mode == PadMode::Edge) return expand(narrow(p, d, left ? 0 : n - 1, 1), ps);
        std::vector<SliceRange> r(s.rank());
        for (std::size_t k = 0; k < s.rank(); ++k) r[k] = {0, s[k], 1};
        r[d] = {left ? count : n - 2, count, -1};  // reflect: mirror without the edge
        return slice(p, r);
      };
      if (before > 0) parts.push_back(edge_part(before, true));
      parts.push_back(p);
      if (after > 0) parts.push_back(edge_part(after, false));
      if (parts.size() > 1) p = cat(parts, d);
      if (before < 0 || after < 0) {
        const std::int64_t len = shape(p)[d];
        const std::int64_t a = std::max<std::int64_t>(0, -before);
        const std::int64_t b = std::max<std::int64_t>(0, -after);
        p = narrow(std::move(p), d, a, len - a - b);
      }
    }
    return p;
  }
};

}  // namespace ember::detail
