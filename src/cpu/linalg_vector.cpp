// CPU backend: diag, cross, vector_norm, cosine_similarity.
#include <cmath>
#include <limits>
#include <vector>

#include "ember/core/data.hpp"
#include "ember/cpu/ops_linalg.hpp"
#include "kernel.hpp"

namespace ember::cpu {

namespace {

using i64 = std::int64_t;

/// Strides of `t` as seen from the broadcast shape `out` (0 along size-1 dims that stretch).
std::vector<i64> bcast_strides(const CpuTensor& t, const Shape& out) {
  std::vector<i64> s(out.rank());
  for (std::size_t i = 0; i < out.rank(); ++i) s[i] = t.shape[i] == 1 ? 0 : t.strides[i];
  return s;
}

/// Offsets (row-major order) of every position of `shape` with `dim` collapsed to one.
std::vector<i64> lane_offsets(const Shape& shape, const std::vector<i64>& strides, i64 offset,
                              std::size_t dim) {
  Shape s = shape;
  s[dim] = 1;
  std::vector<i64> offs;
  offs.reserve(static_cast<std::size_t>(s.numel()));
  for_each_offset(s, strides, offset, [&](i64 o) { offs.push_back(o); });
  return offs;
}

Shape broadcast(const Shape& a, const Shape& b) {
  Shape o = a;
  for (std::size_t i = 0; i < o.rank(); ++i) o[i] = a[i] == 1 ? b[i] : a[i];
  return o;
}

template <class T>
using acc_t = std::conditional_t<std::is_integral_v<T>, std::uint64_t, compute_t<T>>;

template <class T>
acc_t<T> to_acc(T v) {
  if constexpr (std::is_integral_v<T>)
    return static_cast<std::uint64_t>(static_cast<i64>(v));
  else
    return static_cast<compute_t<T>>(v);
}
template <class T>
T from_acc(acc_t<T> v) {
  if constexpr (std::is_integral_v<T>)
    return static_cast<T>(static_cast<i64>(v));
  else
    return static_cast<T>(v);
}

}  // namespace

CpuTensor LinalgOps::diag(const CpuTensor& t) {
  const std::size_t r = t.shape.rank();
  CpuTensor out = t;
  out.shape.dims.pop_back();
  out.shape[r - 2] = std::min(t.shape[r - 2], t.shape[r - 1]);
  out.strides.pop_back();
  out.strides[r - 2] = t.strides[r - 2] + t.strides[r - 1];
  return out;
}

CpuTensor LinalgOps::cross(const CpuTensor& lhs, const CpuTensor& rhs, std::size_t dim) {
  const Shape os = broadcast(lhs.shape, rhs.shape);
  CpuTensor out = alloc(os, lhs.dtype);
  if (out.numel() == 0) return out;
  const auto ls = bcast_strides(lhs, os), rs = bcast_strides(rhs, os);
  const auto lo = lane_offsets(os, ls, lhs.offset, dim), ro = lane_offsets(os, rs, rhs.offset, dim);
  const auto oo = lane_offsets(os, out.strides, 0, dim);
  const i64 sl = ls[dim], sr = rs[dim], so = out.strides[dim];
  visit_dtype(lhs.dtype, [&]<class T>() {
    if constexpr (!std::is_same_v<T, bool>) {
      const T* a = reinterpret_cast<const T*>(lhs.storage->data());
      const T* b = reinterpret_cast<const T*>(rhs.storage->data());
      T* c = out.data<T>();
      const i64 lanes = static_cast<i64>(lo.size());
      parallel_for(lanes, kParallelGrain / 3, [&](i64 begin, i64 end) {
        for (i64 q = begin; q < end; ++q) {
          const T* x = a + lo[q];
          const T* y = b + ro[q];
          const auto x0 = to_acc(x[0]), x1 = to_acc(x[sl]), x2 = to_acc(x[2 * sl]);
          const auto y0 = to_acc(y[0]), y1 = to_acc(y[sr]), y2 = to_acc(y[2 * sr]);
          T* z = c + oo[q];
          z[0] = from_acc<T>(x1 * y2 - x2 * y1);
          z[so] = from_acc<T>(x2 * y0 - x0 * y2);
          z[2 * so] = from_acc<T>(x0 * y1 - x1 * y0);
        }
      });
    }
  });
  return out;
}

CpuTensor LinalgOps::float_vector_norm(const CpuTensor& t, double p, std::size_t dim) {
  Shape os = t.shape;
  const i64 len = os[dim];
  os[dim] = 1;
  CpuTensor out = alloc(os, t.dtype);
  if (out.numel() == 0) return out;
  const auto offs = lane_offsets(t.shape, t.strides, t.offset, dim);
  const i64 st = t.strides[dim];
  const double inf = std::numeric_limits<double>::infinity();
  visit_dtype(t.dtype, [&]<class T>() {
    if constexpr (is_float(dtype_of<T>())) {
      const T* x = reinterpret_cast<const T*>(t.storage->data());
      T* y = out.data<T>();
      const i64 lanes = static_cast<i64>(offs.size());
      parallel_for(lanes, std::max<i64>(1, kParallelGrain / std::max<i64>(len, 1)),
                   [&](i64 b, i64 e) {
                     for (i64 q = b; q < e; ++q) {
                       const T* v = x + offs[q];
                       double r = 0;
                       if (p == 0) {
                         for (i64 j = 0; j < len; ++j)
                           r += static_cast<double>(v[j * st]) != 0.0 ? 1.0 : 0.0;
                       } else if (p == inf || p == -inf) {
                         r = p > 0 ? 0.0 : inf;
                         for (i64 j = 0; j < len; ++j) {
                           const double a = std::fabs(static_cast<double>(v[j * st]));
                           if (std::isnan(a)) {
                             r = a;
                             break;
                           }
                           r = p > 0 ? std::max(r, a) : std::min(r, a);
                         }
                       } else if (p == 1) {
                         for (i64 j = 0; j < len; ++j)
                           r += std::fabs(static_cast<double>(v[j * st]));
                       } else if (p == 2) {
                         for (i64 j = 0; j < len; ++j) {
                           const double a = static_cast<double>(v[j * st]);
                           r += a * a;
                         }
                         r = std::sqrt(r);
                       } else {
                         for (i64 j = 0; j < len; ++j)
                           r += std::pow(std::fabs(static_cast<double>(v[j * st])), p);
                         r = std::pow(r, 1.0 / p);
                       }
                       y[q] = detail::convert_value<T>(r);
                     }
                   });
    }
  });
  return out;
}

CpuTensor LinalgOps::float_cosine_similarity(const CpuTensor& lhs, const CpuTensor& rhs,
                                             std::size_t dim, double eps) {
  const Shape bs = broadcast(lhs.shape, rhs.shape);
  Shape os = bs;
  const i64 len = bs[dim];
  os[dim] = 1;
  CpuTensor out = alloc(os, lhs.dtype);
  if (out.numel() == 0) return out;
  const auto ls = bcast_strides(lhs, bs), rs = bcast_strides(rhs, bs);
  const auto lo = lane_offsets(bs, ls, lhs.offset, dim), ro = lane_offsets(bs, rs, rhs.offset, dim);
  const i64 sl = ls[dim], sr = rs[dim];
  visit_dtype(lhs.dtype, [&]<class T>() {
    if constexpr (is_float(dtype_of<T>())) {
      const T* a = reinterpret_cast<const T*>(lhs.storage->data());
      const T* b = reinterpret_cast<const T*>(rhs.storage->data());
      T* y = out.data<T>();
      const i64 lanes = static_cast<i64>(lo.size());
      parallel_for(lanes, std::max<i64>(1, kParallelGrain / std::max<i64>(len, 1)),
                   [&](i64 s, i64 e) {
                     for (i64 q = s; q < e; ++q) {
                       double xx = 0, yy = 0, xy = 0;
                       for (i64 j = 0; j < len; ++j) {
                         const double u = static_cast<double>(a[lo[q] + j * sl]);
                         const double v = static_cast<double>(b[ro[q] + j * sr]);
                         xx += u * u;
                         yy += v * v;
                         xy += u * v;
                       }
                       // torch clamps each norm at eps (ATen cosine_similarity), NaN propagates.
                       double n1 = std::sqrt(xx), n2 = std::sqrt(yy);
                       if (n1 < eps) n1 = eps;
                       if (n2 < eps) n2 = eps;
                       y[q] = detail::convert_value<T>(xy / (n1 * n2));
                     }
                   });
    }
  });
  return out;
}

}  // namespace ember::cpu
