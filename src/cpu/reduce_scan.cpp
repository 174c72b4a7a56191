// CPU backend: scans along a dim (cumsum, cumprod, cummax, cummin). Each line of the input
// (any strides) is scanned into the matching line of a contiguous output; floats accumulate
// in double, ints in int64 (as torch's CPU acc types). cummax/cummin propagate NaN.
#include <cmath>
#include <type_traits>

#include "ember/cpu/cpu.hpp"
#include "reduce_common.hpp"

namespace ember::cpu {

using rd::i64;

namespace {

template <class T>
using acc_t = std::conditional_t<rd::is_fp<T>, double, i64>;

template <class T>
inline acc_t<T> to_acc(T v) {
  if constexpr (rd::is_fp<T>)
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

enum class Scan { Sum, Prod, Max, Min };

template <Scan S>
CpuTensor scan(const CpuTensor& x, i64 dim) {
  CpuTensor out = alloc(x.shape, x.dtype);
  if (x.numel() == 0) return out;
  rd::visit_numeric(x.dtype, [&]<class T>() {
    const rd::Lines L = rd::make_lines(x, dim);
    T* o = out.data<T>();
    rd::for_lines<T>(x, L, [&](i64 j, const T* p, i64 s, i64 n) {
      T* q = o + L.out_base(j);
      const i64 os = L.inner;
      if constexpr (S == Scan::Sum || S == Scan::Prod) {
        acc_t<T> a = S == Scan::Sum ? 0 : 1;
        for (i64 k = 0; k < n; ++k) {
          if constexpr (S == Scan::Sum)
            a += to_acc(p[k * s]);
          else
            a *= to_acc(p[k * s]);
          q[k * os] = from_acc<T>(a);
        }
      } else {
        using C = compute_t<T>;
        C best = static_cast<C>(p[0]);
        q[0] = p[0];
        for (i64 k = 1; k < n; ++k) {
          const C v = static_cast<C>(p[k * s]);
          bool take;
          if constexpr (rd::is_fp<T>) {
            // once a NaN is seen it stays (torch.cummax/cummin)
            take = best == best && ((S == Scan::Max ? v >= best : v <= best) || v != v);
          } else {
            take = S == Scan::Max ? v >= best : v <= best;
          }
          if (take) best = v;
          q[k * os] = from_acc<T>(best);
        }
      }
    });
  });
  return out;
}

/// Running max / min along dim with the index it came from (PyTorch's cummax_cummin_helper:
/// an element replaces the running value when it is NaN, or when the running value is not NaN
/// and the element is >= (<=) it, so ties and NaN take the later index).
template <bool Max>
std::pair<CpuTensor, CpuTensor> scan_with_indices(const CpuTensor& x, i64 dim) {
  CpuTensor out = alloc(x.shape, x.dtype);
  CpuTensor idx = alloc(x.shape, DType::I64);
  if (x.numel() == 0) return {out, idx};
  rd::visit_numeric(x.dtype, [&]<class T>() {
    using C = compute_t<T>;
    const rd::Lines L = rd::make_lines(x, dim);
    T* o = out.data<T>();
    i64* ix = idx.data<i64>();
    rd::for_lines<T>(x, L, [&](i64 j, const T* p, i64 s, i64 n) {
      T* q = o + L.out_base(j);
      i64* qi = ix + L.out_base(j);
      const i64 os = L.inner;
      C best = static_cast<C>(p[0]);
      i64 at = 0;
      for (i64 k = 0; k < n; ++k) {
        const C v = static_cast<C>(p[k * s]);
        bool take = Max ? v >= best : v <= best;
        if constexpr (rd::is_fp<T>) take = v != v || (best == best && take);
        if (take) {
          best = v;
          at = k;
        }
        q[k * os] = from_acc<T>(best);
        qi[k * os] = at;
      }
    });
  });
  return {std::move(out), std::move(idx)};
}

}  // namespace

std::pair<CpuTensor, CpuTensor> Ops::float_cummax_with_indices(const F& x, i64 dim) {
  return scan_with_indices<true>(x, dim);
}
std::pair<CpuTensor, CpuTensor> Ops::int_cummax_with_indices(const I& x, i64 dim) {
  return scan_with_indices<true>(x, dim);
}
std::pair<CpuTensor, CpuTensor> Ops::float_cummin_with_indices(const F& x, i64 dim) {
  return scan_with_indices<false>(x, dim);
}
std::pair<CpuTensor, CpuTensor> Ops::int_cummin_with_indices(const I& x, i64 dim) {
  return scan_with_indices<false>(x, dim);
}

CpuTensor ReduceOps::cumsum(const CpuTensor& x, i64 dim) {
  return scan<Scan::Sum>(x, dim);
}
CpuTensor ReduceOps::cumprod(const CpuTensor& x, i64 dim) {
  return scan<Scan::Prod>(x, dim);
}
CpuTensor ReduceOps::cummax(const CpuTensor& x, i64 dim) {
  return scan<Scan::Max>(x, dim);
}
CpuTensor ReduceOps::cummin(const CpuTensor& x, i64 dim) {
  return scan<Scan::Min>(x, dim);
}

}  // namespace ember::cpu
