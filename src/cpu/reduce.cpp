// CPU backend: reductions (sum, prod, mean, max/min, argmax/argmin, max_abs, var_mean,
// any/all). Contiguous inputs take SIMD fast paths: reducing the innermost dim sums rows
// with vector lanes; reducing an outer dim vectorises across the kept inner dims. Other
// layouts walk each output's line with its stride (stride-1 lines still use the row
// kernels, e.g. a transposed view).
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "ember/cpu/ops_reduce.hpp"
#include "reduce_common.hpp"
#include "reduce_simd.hpp"

namespace ember::cpu {

namespace rd {
namespace {

EMBER_RD_MULTIVERSION(row_sum, row_sum_impl)
EMBER_RD_MULTIVERSION(col_sum, col_sum_impl)
EMBER_RD_MULTIVERSION(row_ext, row_ext_impl)
EMBER_RD_MULTIVERSION(col_ext, col_ext_impl)
EMBER_RD_MULTIVERSION(col_arg, col_arg_impl)
EMBER_RD_MULTIVERSION(row_arg, row_arg_impl)

template <class T>
using acc_t = std::conditional_t<is_fp<T>, double, i64>;

template <class T>
inline acc_t<T> to_acc(T v) {
  if constexpr (is_fp<T>)
    return static_cast<double>(static_cast<compute_t<T>>(v));
  else
    return static_cast<i64>(v);
}

template <class T, class A>
inline T from_acc(A a) {
  if constexpr (std::is_same_v<T, f16> || std::is_same_v<T, bf16>)
    return T(static_cast<float>(a));
  else
    return static_cast<T>(a);
}

/// Column tasks of the contiguous outer-dim path: (outer, column chunk) pairs.
struct ColTasks {
  i64 outer, chunks;
  i64 count() const { return outer * chunks; }
};

/// Per-line sums into acc (one per output), in the accumulator type.
template <class T>
std::vector<acc_t<T>> line_sums(const CpuTensor& x, i64 dim) {
  const Lines L = make_lines(x, dim);
  std::vector<acc_t<T>> acc(static_cast<std::size_t>(L.count));
  if (L.count == 0) return acc;
  if constexpr (simd_type<T>) {
    if (L.contiguous && L.inner > 1) {
      const T* base = x.data<T>();
      const ColTasks ct{L.count / L.inner, (L.inner + kColChunk - 1) / kColChunk};
      parallel_for(ct.count(), std::max<i64>(1, kParallelGrain / std::max<i64>(1, L.n * kColChunk)),
                   [&](i64 b, i64 e) {
                     for (i64 t = b; t < e; ++t) {
                       const i64 o = t / ct.chunks, c0 = (t % ct.chunks) * kColChunk;
                       const i64 cols = std::min(kColChunk, L.inner - c0);
                       if (L.n == 0) {
                         for (i64 i = 0; i < cols; ++i) acc[o * L.inner + c0 + i] = 0;
                         continue;
                       }
                       col_sum(base + o * L.n * L.inner + c0, L.n, L.inner, cols,
                               acc.data() + o * L.inner + c0);
                     }
                   });
      return acc;
    }
  }
  for_lines<T>(x, L, [&](i64 j, const T* p, i64 s, i64 n) {
    if constexpr (simd_type<T>) {
      if (s == 1) {
        acc[j] = row_sum(p, n);
        return;
      }
    }
    acc_t<T> t = 0;
    for (i64 k = 0; k < n; ++k) t += to_acc(p[k * s]);
    acc[j] = t;
  });
  return acc;
}

/// Max (M = true_type) / min values along dim, NaN propagating; n >= 1.
template <class M, class T>
void ext_values(const CpuTensor& x, i64 dim, T* out) {
  const Lines L = make_lines(x, dim);
  if constexpr (simd_type<T>) {
    if (L.contiguous && L.inner > 1) {
      const T* base = x.data<T>();
      const ColTasks ct{L.count / L.inner, (L.inner + kColChunk - 1) / kColChunk};
      parallel_for(ct.count(), std::max<i64>(1, kParallelGrain / std::max<i64>(1, L.n * kColChunk)),
                   [&](i64 b, i64 e) {
                     for (i64 t = b; t < e; ++t) {
                       const i64 o = t / ct.chunks, c0 = (t % ct.chunks) * kColChunk;
                       col_ext<M>(base + o * L.n * L.inner + c0, L.n, L.inner,
                                  std::min(kColChunk, L.inner - c0), out + o * L.inner + c0);
                     }
                   });
      return;
    }
  }
  for_lines<T>(x, L, [&](i64 j, const T* p, i64 s, i64 n) {
    if constexpr (simd_type<T>) {
      if (s == 1) {
        out[j] = row_ext<M>(p, n);
        return;
      }
    }
    using C = compute_t<T>;
    C best = static_cast<C>(p[0]);
    for (i64 k = 1; k < n; ++k) {
      const C v = static_cast<C>(p[k * s]);
      if (beats<M::value>(v, best)) best = v;
    }
    out[j] = from_acc<T>(best);
  });
}

/// First index of the max (M = true_type) / min along dim (ties -> lowest, NaN wins);
/// values written too when `vals` is not null. n >= 1.
template <class M, class T>
void arg_values(const CpuTensor& x, i64 dim, T* vals, i64* idx) {
  const Lines L = make_lines(x, dim);
  if constexpr (simd_type<T>) {
    if (L.contiguous && L.inner > 1) {
      const T* base = x.data<T>();
      const ColTasks ct{L.count / L.inner, (L.inner + kColChunk - 1) / kColChunk};
      parallel_for(ct.count(), std::max<i64>(1, kParallelGrain / std::max<i64>(1, L.n * kColChunk)),
                   [&](i64 b, i64 e) {
                     T tmp[kColChunk];
                     for (i64 t = b; t < e; ++t) {
                       const i64 o = t / ct.chunks, c0 = (t % ct.chunks) * kColChunk;
                       const i64 cols = std::min(kColChunk, L.inner - c0);
                       T* v = vals ? vals + o * L.inner + c0 : tmp;
                       col_arg<M>(base + o * L.n * L.inner + c0, L.n, L.inner, cols, v,
                                  idx + o * L.inner + c0);
                     }
                   });
      return;
    }
  }
  for_lines<T>(x, L, [&](i64 j, const T* p, i64 s, i64 n) {
    if constexpr (simd_type<T>) {
      if (s == 1) {
        const i64 k = row_arg<M>(p, n);
        idx[j] = k;
        if (vals) vals[j] = p[k];
        return;
      }
    }
    using C = compute_t<T>;
    C best = static_cast<C>(p[0]);
    i64 bi = 0;
    for (i64 k = 1; k < n; ++k) {
      const C v = static_cast<C>(p[k * s]);
      bool take;
      if constexpr (is_fp<T>)
        take = (M::value ? v > best : v < best) || (v != v && best == best);
      else
        take = M::value ? v > best : v < best;
      if (take) {
        best = v;
        bi = k;
      }
    }
    idx[j] = bi;
    if (vals) vals[j] = from_acc<T>(best);
  });
}

}  // namespace
}  // namespace rd

using rd::i64;

CpuTensor ReduceOps::sum_all(const CpuTensor& x0) {
  const CpuTensor x = contiguous(x0);
  CpuTensor out = alloc(Shape{1}, x.dtype);
  rd::visit_numeric(x.dtype, [&]<class T>() {
    const i64 n = x.numel();
    const T* p = x.data<T>();
    rd::acc_t<T> total = 0;
    constexpr i64 kBlock = 1 << 16;
    const i64 blocks = (n + kBlock - 1) / kBlock;
    std::vector<rd::acc_t<T>> part(static_cast<std::size_t>(blocks));
    // fixed blocks -> the result does not depend on the thread count
    parallel_for(blocks, n >= kParallelGrain ? 1 : blocks + 1, [&](i64 b, i64 e) {
      for (i64 k = b; k < e; ++k) {
        const i64 s = k * kBlock, m = std::min(kBlock, n - s);
        if constexpr (rd::simd_type<T>) {
          part[k] = rd::row_sum(p + s, m);
        } else {
          rd::acc_t<T> t = 0;
          for (i64 i = 0; i < m; ++i) t += rd::to_acc(p[s + i]);
          part[k] = t;
        }
      }
    });
    for (auto v : part) total += v;
    out.data<T>()[0] = rd::from_acc<T>(total);
  });
  return out;
}

CpuTensor ReduceOps::sum_dim(const CpuTensor& x, i64 dim) {
  CpuTensor out = alloc(rd::keep_dim(x.shape, dim), x.dtype);
  rd::visit_numeric(x.dtype, [&]<class T>() {
    const auto acc = rd::line_sums<T>(x, dim);
    T* o = out.data<T>();
    for (std::size_t j = 0; j < acc.size(); ++j) o[j] = rd::from_acc<T>(acc[j]);
  });
  return out;
}

CpuTensor ReduceOps::mean_dim(const CpuTensor& x, i64 dim) {
  CpuTensor out = alloc(rd::keep_dim(x.shape, dim), x.dtype);
  const i64 n = x.shape[static_cast<std::size_t>(dim)];
  rd::visit_numeric(x.dtype, [&]<class T>() {
    const auto acc = rd::line_sums<T>(x, dim);
    T* o = out.data<T>();
    for (std::size_t j = 0; j < acc.size(); ++j) {
      if constexpr (rd::is_fp<T>) {
        o[j] = rd::from_acc<T>(acc[j] / static_cast<double>(n));
      } else {
        // floor division, as Ember's int div
        i64 q = 0;
        if (n > 0) {
          q = acc[j] / n;
          if ((acc[j] % n != 0) && ((acc[j] < 0) != (n < 0))) --q;
        }
        o[j] = static_cast<T>(q);
      }
    }
  });
  return out;
}

CpuTensor ReduceOps::prod_dim(const CpuTensor& x, i64 dim) {
  CpuTensor out = alloc(rd::keep_dim(x.shape, dim), x.dtype);
  rd::visit_numeric(x.dtype, [&]<class T>() {
    const rd::Lines L = rd::make_lines(x, dim);
    T* o = out.data<T>();
    rd::for_lines<T>(x, L, [&](i64 j, const T* p, i64 s, i64 n) {
      rd::acc_t<T> t = 1;
      for (i64 k = 0; k < n; ++k) t *= rd::to_acc(p[k * s]);
      o[j] = rd::from_acc<T>(t);
    });
  });
  return out;
}

CpuTensor ReduceOps::max_dim(const CpuTensor& x, i64 dim) {
  CpuTensor out = alloc(rd::keep_dim(x.shape, dim), x.dtype);
  rd::visit_numeric(x.dtype,
                    [&]<class T>() { rd::ext_values<std::true_type, T>(x, dim, out.data<T>()); });
  return out;
}

CpuTensor ReduceOps::min_dim(const CpuTensor& x, i64 dim) {
  CpuTensor out = alloc(rd::keep_dim(x.shape, dim), x.dtype);
  rd::visit_numeric(x.dtype,
                    [&]<class T>() { rd::ext_values<std::false_type, T>(x, dim, out.data<T>()); });
  return out;
}

CpuTensor ReduceOps::max_abs_dim(const CpuTensor& x, i64 dim) {
  CpuTensor out = alloc(rd::keep_dim(x.shape, dim), x.dtype);
  rd::visit_numeric(x.dtype, [&]<class T>() {
    const rd::Lines L = rd::make_lines(x, dim);
    T* o = out.data<T>();
    rd::for_lines<T>(x, L, [&](i64 j, const T* p, i64 s, i64 n) {
      using C = compute_t<T>;
      C best = 0;
      for (i64 k = 0; k < n; ++k) {
        C v = static_cast<C>(p[k * s]);
        if constexpr (std::is_signed_v<C>) v = v < 0 ? C(-v) : v;
        if (rd::beats<true>(v, best)) best = v;
      }
      o[j] = rd::from_acc<T>(best);
    });
  });
  return out;
}

CpuTensor ReduceOps::argmax(const CpuTensor& x, i64 dim) {
  CpuTensor idx = alloc(rd::keep_dim(x.shape, dim), DType::I64);
  rd::visit_numeric(x.dtype, [&]<class T>() {
    rd::arg_values<std::true_type, T>(x, dim, nullptr, idx.data<i64>());
  });
  return idx;
}

CpuTensor ReduceOps::argmin(const CpuTensor& x, i64 dim) {
  CpuTensor idx = alloc(rd::keep_dim(x.shape, dim), DType::I64);
  rd::visit_numeric(x.dtype, [&]<class T>() {
    rd::arg_values<std::false_type, T>(x, dim, nullptr, idx.data<i64>());
  });
  return idx;
}

ReduceOps::Pair ReduceOps::max_dim_with_indices(const CpuTensor& x, i64 dim) {
  CpuTensor val = alloc(rd::keep_dim(x.shape, dim), x.dtype);
  CpuTensor idx = alloc(val.shape, DType::I64);
  rd::visit_numeric(x.dtype, [&]<class T>() {
    rd::arg_values<std::true_type, T>(x, dim, val.data<T>(), idx.data<i64>());
  });
  return {val, idx};
}

ReduceOps::Pair ReduceOps::min_dim_with_indices(const CpuTensor& x, i64 dim) {
  CpuTensor val = alloc(rd::keep_dim(x.shape, dim), x.dtype);
  CpuTensor idx = alloc(val.shape, DType::I64);
  rd::visit_numeric(x.dtype, [&]<class T>() {
    rd::arg_values<std::false_type, T>(x, dim, val.data<T>(), idx.data<i64>());
  });
  return {val, idx};
}

ReduceOps::Pair ReduceOps::var_mean(const CpuTensor& x, i64 dim, i64 correction) {
  CpuTensor var = alloc(rd::keep_dim(x.shape, dim), x.dtype);
  CpuTensor mean = alloc(var.shape, x.dtype);
  rd::visit_numeric(x.dtype, [&]<class T>() {
    if constexpr (rd::is_fp<T>) {
      const rd::Lines L = rd::make_lines(x, dim);
      T* vo = var.data<T>();
      T* mo = mean.data<T>();
      rd::for_lines<T>(x, L, [&](i64 j, const T* p, i64 s, i64 n) {
        double sum = 0;
        for (i64 k = 0; k < n; ++k) sum += rd::to_acc(p[k * s]);
        const double m = sum / static_cast<double>(n);
        double ss = 0;
        for (i64 k = 0; k < n; ++k) {
          const double d = rd::to_acc(p[k * s]) - m;
          ss += d * d;
        }
        const double dof = std::max<double>(0.0, static_cast<double>(n - correction));
        vo[j] = rd::from_acc<T>(ss / dof);
        mo[j] = rd::from_acc<T>(m);
      });
    }
  });
  return {var, mean};
}

namespace {
template <bool Any>
CpuTensor any_all(const CpuTensor& x, i64 dim) {
  CpuTensor out = alloc(rd::keep_dim(x.shape, dim), DType::Bool);
  std::uint8_t* o = out.data<std::uint8_t>();
  visit_dtype(x.dtype, [&]<class T>() {
    using S = rd::store_t<T>;
    const rd::Lines L = rd::make_lines(x, dim);
    rd::for_lines<S>(x, L, [&](i64 j, const S* p, i64 s, i64 n) {
      bool r = !Any;
      for (i64 k = 0; k < n; ++k) {
        const bool nz = static_cast<compute_t<S>>(p[k * s]) != 0 || rd::isnan_v(p[k * s]);
        if (nz == Any) {
          r = Any;
          break;
        }
      }
      o[j] = r ? 1 : 0;
    });
  });
  return out;
}
}  // namespace

CpuTensor ReduceOps::any_dim(const CpuTensor& x, i64 dim) {
  return any_all<true>(x, dim);
}
CpuTensor ReduceOps::all_dim(const CpuTensor& x, i64 dim) {
  return any_all<false>(x, dim);
}

}  // namespace ember::cpu
