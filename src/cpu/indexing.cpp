// CPU backend: indexing kernels (slice_assign, select, select_assign, gather, scatter,
// mask_where, mask_fill, argwhere). See ember/cpu/ops_indexing.hpp.
#include <cstring>

#include "ember/core/data.hpp"
#include "ember/cpu/ops_indexing.hpp"
#include "kernel.hpp"
#include "reduce_simd.hpp"

namespace ember::cpu {

namespace {

/// Storage type of dtype T in kernels (bool is one byte).
template <class T>
using store_t = std::conditional_t<std::is_same_v<T, bool>, std::uint8_t, T>;

/// `t` itself when it may be written in place, else a contiguous copy.
CpuTensor owned(CpuTensor t) {
  if (t.can_reuse()) return t;
  CpuTensor out = alloc(t.shape, t.dtype);
  strided_copy(t, out);
  return out;
}

/// Index values of an Int tensor as int64, row-major (contiguous i64 input is not copied).
struct IndexValues {
  const std::int64_t* p = nullptr;
  std::vector<std::int64_t> buf;
  CpuTensor keep;
  std::int64_t operator[](std::int64_t i) const { return p[i]; }
};

IndexValues index_values(const CpuTensor& idx) {
  IndexValues v;
  if (idx.dtype == DType::I64 && idx.is_contiguous()) {
    v.keep = idx;
    v.p = idx.data<std::int64_t>();
    return v;
  }
  v.buf.resize(static_cast<std::size_t>(idx.numel()));
  visit_dtype(idx.dtype, [&]<class T>() {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      const T* base = reinterpret_cast<const T*>(idx.storage->data());
      std::size_t k = 0;
      for_each_offset(idx.shape, idx.strides, idx.offset,
                      [&](std::int64_t o) { v.buf[k++] = static_cast<std::int64_t>(base[o]); });
    }
  });
  v.p = v.buf.data();
  return v;
}

/// a (op)= b for IndexUpdate.
template <class U>
inline void update(U& a, U b, IndexUpdate up) {
  if (up == IndexUpdate::Assign) {
    a = b;
  } else if constexpr (std::is_same_v<U, std::uint8_t>) {
    a = static_cast<std::uint8_t>(a | b);  // only reached for bool (logical or)
  } else {
    using C = compute_t<U>;
    a = U(static_cast<C>(static_cast<C>(a) + static_cast<C>(b)));
  }
}

/// Strides of `t` broadcast to `shape` (same rank; size-1 dims of t get stride 0).
std::vector<std::int64_t> broadcast_strides(const CpuTensor& t, const Shape& shape) {
  std::vector<std::int64_t> s = t.strides;
  for (std::size_t d = 0; d < shape.rank(); ++d) {
    if (t.shape[d] != shape[d]) s[d] = 0;
  }
  return s;
}

/// o[i] = fill where m[i] != 0, for i < n (contiguous mask and output). Compiled per ISA:
/// AVX2 / AVX-512 vectorise the conditional store with masked stores (a relu mask is random,
/// so a branch per element would mispredict half the time).
template <class U>
EMBER_RD_INLINE void mask_fill_run_impl(U* __restrict o, const std::uint8_t* __restrict m, U fill,
                                        std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) {
    if (m[i]) o[i] = fill;
  }
}
EMBER_RD_MULTIVERSION(mask_fill_run, mask_fill_run_impl)

/// Calls f(i, off_a, off_b) for the row-major elements i in [b, e) of `shape`, with the
/// element offsets under strides sa (base oa) and sb (base ob). Runs along the last dim are
/// plain loops (offsets advance by that dim's strides), so f inlines into a tight loop.
template <class F>
void walk2(const Shape& shape, const std::vector<std::int64_t>& sa, std::int64_t oa,
           const std::vector<std::int64_t>& sb, std::int64_t ob, std::int64_t b, std::int64_t e,
           F&& f) {
  const std::size_t r = shape.rank();
  if (b >= e) return;
  if (r == 0) {
    f(b, oa, ob);
    return;
  }
  std::vector<std::int64_t> c(r, 0);
  std::int64_t rem = b;
  for (std::size_t d = r; d-- > 0;) {
    c[d] = rem % shape[d];
    rem /= shape[d];
    oa += c[d] * sa[d];
    ob += c[d] * sb[d];
  }
  const std::int64_t n = shape[r - 1], ia = sa[r - 1], ib = sb[r - 1];
  for (std::int64_t i = b;;) {
    const std::int64_t run = std::min(n - c[r - 1], e - i);
    for (std::int64_t k = 0; k < run; ++k) f(i + k, oa + k * ia, ob + k * ib);
    i += run;
    if (i >= e) return;
    // The row is done: back to its start, then carry into the outer dims.
    oa -= c[r - 1] * ia;
    ob -= c[r - 1] * ib;
    c[r - 1] = 0;
    for (std::size_t d = r - 1; d-- > 0;) {
      ++c[d];
      oa += sa[d];
      ob += sb[d];
      if (c[d] < shape[d]) break;
      oa -= c[d] * sa[d];
      ob -= c[d] * sb[d];
      c[d] = 0;
    }
  }
}

/// Shape `s` without dim `dim`, and the strides `st` without dim `dim`.
Shape drop_dim(const Shape& s, std::size_t dim) {
  Shape out = s;
  out.dims.erase(out.dims.begin() + static_cast<std::ptrdiff_t>(dim));
  return out;
}
std::vector<std::int64_t> drop_dim(std::vector<std::int64_t> st, std::size_t dim) {
  st.erase(st.begin() + static_cast<std::ptrdiff_t>(dim));
  return st;
}

/// Offset of line `l` (row-major over `lines`) under strides `st`.
inline std::int64_t line_offset(std::int64_t l, const Shape& lines,
                                const std::vector<std::int64_t>& st) {
  std::int64_t off = 0;
  for (std::size_t d = lines.rank(); d-- > 0;) {
    off += (l % lines[d]) * st[d];
    l /= lines[d];
  }
  return off;
}

}  // namespace

// ---- slice_assign ------------------------------------------------------------------------

CpuTensor IndexingOps::slice_assign(CpuTensor t, const std::vector<SliceRange>& ranges,
                                    const CpuTensor& values) {
  CpuTensor out = owned(std::move(t));
  CpuTensor view = out;
  for (std::size_t d = 0; d < ranges.size(); ++d) {
    view.offset += ranges[d].start * out.strides[d];
    view.strides[d] = out.strides[d] * ranges[d].step;
    view.shape[d] = ranges[d].count;
  }
  if (view.numel() > 0) strided_copy(values, view);
  return out;
}

// ---- select / select_assign ------------------------------------------------------------

CpuTensor IndexingOps::select(const CpuTensor& t, std::size_t dim, const CpuTensor& indices) {
  const CpuTensor src = contiguous(t);
  const IndexValues idx = index_values(indices);
  const std::int64_t n = indices.numel();
  Shape oshape = t.shape;
  oshape[dim] = n;
  CpuTensor out = alloc(oshape, t.dtype);
  std::int64_t outer = 1, inner = 1;
  for (std::size_t d = 0; d < dim; ++d) outer *= t.shape[d];
  for (std::size_t d = dim + 1; d < t.shape.rank(); ++d) inner *= t.shape[d];
  const std::int64_t size = t.shape[dim];
  const std::size_t es = dtype_size(t.dtype);
  const auto* s = static_cast<const char*>(src.raw());
  auto* o = static_cast<char*>(out.raw());
  const std::int64_t rows = outer * n;
  const std::int64_t grain =
      std::max<std::int64_t>(1, kParallelGrain / std::max<std::int64_t>(inner, 1));
  parallel_for(rows, grain, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t r = b; r < e; ++r) {
      const std::int64_t oi = r / n, j = r % n;
      std::memcpy(o + static_cast<std::size_t>(r * inner) * es,
                  s + static_cast<std::size_t>((oi * size + idx[j]) * inner) * es,
                  static_cast<std::size_t>(inner) * es);
    }
  });
  return out;
}

CpuTensor IndexingOps::select_assign(CpuTensor t, std::size_t dim, const CpuTensor& indices,
                                     const CpuTensor& values, IndexUpdate up) {
  CpuTensor out = owned(std::move(t));
  const CpuTensor val = contiguous(values);
  const IndexValues idx = index_values(indices);
  const std::int64_t n = indices.numel();
  std::int64_t outer = 1, inner = 1;
  for (std::size_t d = 0; d < dim; ++d) outer *= out.shape[d];
  for (std::size_t d = dim + 1; d < out.shape.rank(); ++d) inner *= out.shape[d];
  const std::int64_t size = out.shape[dim];
  if (n == 0 || outer * inner == 0) return out;
  constexpr std::int64_t kBlock = 1024;
  const std::int64_t blocks = (inner + kBlock - 1) / kBlock;
  const std::int64_t units = outer * blocks;
  const std::int64_t grain = std::max<std::int64_t>(
      1, kParallelGrain / std::max<std::int64_t>(n * std::min(inner, kBlock), 1));
  visit_dtype(out.dtype, [&]<class T>() {
    using U = store_t<T>;
    U* o = out.data<U>();
    const U* v = val.data<U>();
    parallel_for(units, grain, [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t u = b; u < e; ++u) {
        const std::int64_t oi = u / blocks, i0 = (u % blocks) * kBlock;
        const std::int64_t i1 = std::min(inner, i0 + kBlock);
        for (std::int64_t j = 0; j < n; ++j) {
          U* dst = o + (oi * size + idx[j]) * inner;
          const U* srcp = v + (oi * n + j) * inner;
          if (up == IndexUpdate::Assign) {
            std::memcpy(dst + i0, srcp + i0, static_cast<std::size_t>(i1 - i0) * sizeof(U));
          } else {
            for (std::int64_t i = i0; i < i1; ++i) update(dst[i], srcp[i], up);
          }
        }
      }
    });
  });
  return out;
}

// ---- gather / scatter ------------------------------------------------------------------

CpuTensor IndexingOps::gather(std::size_t dim, const CpuTensor& t, const CpuTensor& indices) {
  CpuTensor out = alloc(indices.shape, t.dtype);
  if (out.numel() == 0) return out;
  const IndexValues idx = index_values(indices);
  const Shape lines = drop_dim(indices.shape, dim);
  const std::int64_t nl = lines.numel(), len = indices.shape[dim];
  const auto ist = drop_dim(indices.shape.contiguous_strides(), dim);
  const std::int64_t istep = indices.shape.contiguous_strides()[dim];
  const auto tst = drop_dim(t.strides, dim);
  const std::int64_t tstep = t.strides[dim];
  visit_dtype(t.dtype, [&]<class T>() {
    using U = store_t<T>;
    const U* s = reinterpret_cast<const U*>(t.storage->data());
    U* o = out.data<U>();
    parallel_for(
        nl, std::max<std::int64_t>(1, kParallelGrain / len), [&](std::int64_t b, std::int64_t e) {
          for (std::int64_t l = b; l < e; ++l) {
            const std::int64_t ib = line_offset(l, lines, ist);  // same for out (contiguous)
            const std::int64_t tb = t.offset + line_offset(l, lines, tst);
            for (std::int64_t k = 0; k < len; ++k) {
              o[ib + k * istep] = s[tb + idx[ib + k * istep] * tstep];
            }
          }
        });
  });
  return out;
}

CpuTensor IndexingOps::scatter(std::size_t dim, CpuTensor t, const CpuTensor& indices,
                               const CpuTensor& values, IndexUpdate up) {
  CpuTensor out = owned(std::move(t));
  if (indices.numel() == 0) return out;
  const IndexValues idx = index_values(indices);
  const Shape lines = drop_dim(indices.shape, dim);
  const std::int64_t nl = lines.numel(), len = indices.shape[dim];
  const auto ist = drop_dim(indices.shape.contiguous_strides(), dim);
  const std::int64_t istep = indices.shape.contiguous_strides()[dim];
  const auto ost = drop_dim(out.strides, dim);
  const std::int64_t ostep = out.strides[dim];
  const auto vst = drop_dim(values.strides, dim);
  const std::int64_t vstep = values.strides[dim];
  visit_dtype(out.dtype, [&]<class T>() {
    using U = store_t<T>;
    const U* v = reinterpret_cast<const U*>(values.storage->data());
    U* o = out.data<U>();
    // Lines (all dims but `dim`) write disjoint outputs, so they run in parallel; within a
    // line the updates run in index order (the last duplicate wins for Assign).
    parallel_for(nl, std::max<std::int64_t>(1, kParallelGrain / len),
                 [&](std::int64_t b, std::int64_t e) {
                   for (std::int64_t l = b; l < e; ++l) {
                     const std::int64_t ib = line_offset(l, lines, ist);
                     const std::int64_t ob = line_offset(l, lines, ost);
                     const std::int64_t vb = values.offset + line_offset(l, lines, vst);
                     for (std::int64_t k = 0; k < len; ++k) {
                       update(o[ob + idx[ib + k * istep] * ostep], v[vb + k * vstep], up);
                     }
                   }
                 });
  });
  return out;
}

// ---- masks -----------------------------------------------------------------------------

CpuTensor IndexingOps::mask_where(CpuTensor t, const CpuTensor& mask, const CpuTensor& values) {
  CpuTensor out = owned(std::move(t));
  const Shape& shape = out.shape;
  const auto ms = broadcast_strides(mask, shape);
  const auto vs = broadcast_strides(values, shape);
  const auto* m = reinterpret_cast<const std::uint8_t*>(mask.storage->data());
  visit_dtype(out.dtype, [&]<class T>() {
    using U = store_t<T>;
    const U* v = reinterpret_cast<const U*>(values.storage->data());
    U* o = out.data<U>();
    parallel_for(out.numel(), kParallelGrain, [&](std::int64_t b, std::int64_t e) {
      walk2(shape, ms, mask.offset, vs, values.offset, b, e,
            [&](std::int64_t i, std::int64_t mo, std::int64_t vo) {
              if (m[mo]) o[i] = v[vo];
            });
    });
  });
  return out;
}

CpuTensor IndexingOps::mask_fill(CpuTensor t, const CpuTensor& mask, double value) {
  CpuTensor out = owned(std::move(t));
  const Shape& shape = out.shape;
  const auto ms = broadcast_strides(mask, shape);
  const auto* m = reinterpret_cast<const std::uint8_t*>(mask.storage->data());
  visit_dtype(out.dtype, [&]<class T>() {
    using U = store_t<T>;
    const U fill = std::is_same_v<T, bool> ? U(value != 0.0) : detail::convert_value<U>(value);
    U* o = out.data<U>();
    if (mask.shape == shape && mask.is_contiguous()) {
      // Same shape, contiguous: a plain loop per thread, vectorised (mask_fill_run).
      const std::uint8_t* mc = m + mask.offset;
      parallel_for(out.numel(), kParallelGrain, [o, mc, fill](std::int64_t b, std::int64_t e) {
        mask_fill_run<U>(o + b, mc + b, fill, e - b);
      });
      return;
    }
    parallel_for(out.numel(), kParallelGrain, [&](std::int64_t b, std::int64_t e) {
      walk2(shape, ms, mask.offset, ms, mask.offset, b, e,
            [&](std::int64_t i, std::int64_t mo, std::int64_t) {
              if (m[mo]) o[i] = fill;
            });
    });
  });
  return out;
}

CpuTensor IndexingOps::argwhere(const CpuTensor& mask, DType index_dtype) {
  const CpuTensor m = contiguous(mask);
  const std::int64_t n = m.numel();
  const std::size_t r = m.shape.rank();
  const std::uint8_t* p = m.data<std::uint8_t>();
  // Parallel count per chunk, then each chunk writes its rows at its prefix offset.
  const int nt = n >= kParallelGrain ? threads() : 1;
  std::vector<std::int64_t> counts(static_cast<std::size_t>(nt) + 1, 0);
  auto chunk = [&](int c, std::int64_t& b, std::int64_t& e) {
    b = n * c / nt;
    e = n * (c + 1) / nt;
  };
  parallel_tasks(nt, nt, Schedule::Static, [&](std::int64_t ci) {
    const int c = static_cast<int>(ci);
    std::int64_t b, e, k = 0;
    chunk(c, b, e);
    for (std::int64_t i = b; i < e; ++i) k += p[i] != 0;
    counts[static_cast<std::size_t>(c) + 1] = k;
  });
  for (int c = 0; c < nt; ++c) counts[c + 1] += counts[c];
  const std::int64_t total = counts[static_cast<std::size_t>(nt)];
  CpuTensor out = alloc(Shape{total, static_cast<std::int64_t>(r)}, index_dtype);
  visit_dtype(index_dtype, [&]<class T>() {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      T* o = out.data<T>();
      parallel_tasks(nt, nt, Schedule::Static, [&](std::int64_t ci) {
        const int c = static_cast<int>(ci);
        std::int64_t b, e;
        chunk(c, b, e);
        std::int64_t row = counts[static_cast<std::size_t>(c)];
        for (std::int64_t i = b; i < e; ++i) {
          if (!p[i]) continue;
          std::int64_t rem = i;
          for (std::size_t d = r; d-- > 0;) {
            o[row * static_cast<std::int64_t>(r) + static_cast<std::int64_t>(d)] =
                static_cast<T>(rem % m.shape[d]);
            rem /= m.shape[d];
          }
          ++row;
        }
      });
    }
  });
  return out;
}

}  // namespace ember::cpu
