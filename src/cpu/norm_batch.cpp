// CPU backend: training-mode batch norm and its gradients (float_batch_norm_train,
// float_batch_norm_train_backward; ember/backend/activation.hpp).
//
// x [N, C, S...] is read as N rows of S contiguous values per channel. Each thread takes a
// range of channels and makes two passes over a channel's rows (statistics, then the output),
// so a channel's data (N * S values) stays in cache between them for the CNN sizes. Sums run
// in 16 f32 lanes over blocks of at most kBlock values with f64 totals; f64 inputs stay f64.
// f16/bf16 compute through f32. The per-channel loops are compiled for AVX-512, AVX2 and the
// baseline and picked at run time (reduce_simd.hpp's EMBER_RD_MULTIVERSION).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>

#include "ember/cpu/ops_activation.hpp"
#include "ember/cpu/ops_core.hpp"
#include "kernel.hpp"
#include "reduce_simd.hpp"

namespace ember::cpu {

namespace {

using i64 = std::int64_t;

constexpr i64 kBlock = 8192;  // values summed in lanes before the f64 total
constexpr int kLanes = 16;    // independent accumulators (vectorised; hides the add latency)

/// Sizes of x [N, C, S...] as rows.
struct Rows {
  i64 N, C, S;
  explicit Rows(const Shape& s) : N(s[0]), C(s[1]), S(1) {
    for (std::size_t d = 2; d < s.rank(); ++d) S *= s[d];
  }
  i64 count() const { return N * S; }
  /// Offset of row (n, c).
  i64 at(i64 n, i64 c) const { return (n * C + c) * S; }
};

/// Over the rows of channel c: sum f(k) and sum g(k) for every flat index k of the channel's
/// values, in kLanes lanes of T (rows run on without reducing the lanes), added to the f64
/// totals tf, tg every kBlock values.
template <class T, class F, class G>
EMBER_RD_INLINE void channel_sums(const Rows& r, i64 c, F&& f, G&& g, double& tf, double& tg) {
  T af[kLanes] = {}, ag[kLanes] = {};
  i64 pending = 0;
  const auto flush = [&] {
    for (int w = kLanes / 2; w >= 1; w /= 2) {
      for (int j = 0; j < w; ++j) {
        af[j] += af[j + w];
        ag[j] += ag[j + w];
      }
    }
    tf += static_cast<double>(af[0]);
    tg += static_cast<double>(ag[0]);
    for (int j = 0; j < kLanes; ++j) af[j] = ag[j] = T(0);
    pending = 0;
  };
  for (i64 n = 0; n < r.N; ++n) {
    const i64 off = r.at(n, c);
    i64 i = 0;
    for (; i + kLanes <= r.S; i += kLanes) {
      for (int j = 0; j < kLanes; ++j) {
        af[j] += f(off + i + j);
        ag[j] += g(off + i + j);
      }
    }
    for (; i < r.S; ++i) {
      af[i % kLanes] += f(off + i);
      ag[i % kLanes] += g(off + i);
    }
    pending += r.S;
    if (pending >= kBlock) flush();
  }
  flush();
}

DType compute_dtype(DType d) {
  return d == DType::F64 ? DType::F64 : DType::F32;
}
CpuTensor prepare(const CpuTensor& t, DType dt) {
  return t.dtype == dt ? contiguous(t) : CoreOps::cast(t, dt);
}
CpuTensor finish(CpuTensor t, DType dt) {
  return t.dtype == dt ? t : CoreOps::cast(std::move(t), dt);
}

/// Channels per parallel chunk: at least one, about kParallelGrain values per chunk.
i64 channel_grain(const Rows& r) {
  return std::max<i64>(1, kParallelGrain / std::max<i64>(r.count(), 1));
}

/// Channel c of the forward: statistics, then y; stats[c] = mean, stats[C + c] = var.
template <class T>
EMBER_RD_INLINE void bn_forward_channel_impl(const T* x, const T* w, const T* b, T* y, T* stats,
                                             Rows r, i64 c, double eps) {
  const i64 M = r.count();
  const auto zero = [](i64) { return T(0); };
  double sum = 0.0, sq = 0.0, unused = 0.0;
  channel_sums<T>(
      r, c, [x](i64 k) { return x[k]; }, zero, sum, unused);
  const double mean = M ? sum / static_cast<double>(M) : 0.0;
  const T m = static_cast<T>(mean);
  channel_sums<T>(
      r, c, [x, m](i64 k) { return (x[k] - m) * (x[k] - m); }, zero, sq, unused);
  const double var = M ? sq / static_cast<double>(M) : 0.0;
  const double invstd = 1.0 / std::sqrt(var + eps);
  const double sc = (w ? static_cast<double>(w[c]) : 1.0) * invstd;
  const T scale = static_cast<T>(sc);
  const T shift = static_cast<T>((b ? static_cast<double>(b[c]) : 0.0) - mean * sc);
  for (i64 n = 0; n < r.N; ++n) {
    const T* xr = x + r.at(n, c);
    T* yr = y + r.at(n, c);
    for (i64 i = 0; i < r.S; ++i) yr[i] = xr[i] * scale + shift;
  }
  stats[c] = m;
  stats[r.C + c] = static_cast<T>(var);
}
EMBER_RD_MULTIVERSION(bn_forward_channel, bn_forward_channel_impl)

/// Channel c of the backward: sum dy and sum dy (x - mean) in one sweep, then dx.
template <class T>
EMBER_RD_INLINE void bn_backward_channel_impl(const T* x, const T* dy, const T* stats, const T* w,
                                              T* dx, T* dparams, Rows r, i64 c, double eps) {
  const i64 M = r.count();
  const T m = stats[c];
  const double invstd = 1.0 / std::sqrt(static_cast<double>(stats[r.C + c]) + eps);
  double sdy = 0.0, sdyx = 0.0;
  channel_sums<T>(
      r, c, [dy](i64 k) { return dy[k]; }, [x, dy, m](i64 k) { return dy[k] * (x[k] - m); }, sdy,
      sdyx);
  dparams[c] = static_cast<T>(sdyx * invstd);
  dparams[r.C + c] = static_cast<T>(sdy);
  // dx = k (dy - a - (x - mean) bc), k = w invstd, a = sum dy / M,
  // bc = invstd^2 sum dy (x - mean) / M.
  const double Md = static_cast<double>(std::max<i64>(M, 1));
  const T k = static_cast<T>((w ? static_cast<double>(w[c]) : 1.0) * invstd);
  const T a = static_cast<T>(sdy / Md);
  const T bc = static_cast<T>(invstd * invstd * sdyx / Md);
  for (i64 n = 0; n < r.N; ++n) {
    const T* xr = x + r.at(n, c);
    const T* gr = dy + r.at(n, c);
    T* dr = dx + r.at(n, c);
    for (i64 i = 0; i < r.S; ++i) dr[i] = k * (gr[i] - a - (xr[i] - m) * bc);
  }
}
EMBER_RD_MULTIVERSION(bn_backward_channel, bn_backward_channel_impl)

template <class T>
void bn_forward(const T* x, const T* w, const T* b, T* y, T* stats, const Rows& r, double eps) {
  parallel_for(r.C, channel_grain(r), [&](i64 c0, i64 c1) {
    for (i64 c = c0; c < c1; ++c) bn_forward_channel<T>(x, w, b, y, stats, r, c, eps);
  });
}

template <class T>
void bn_backward(const T* x, const T* dy, const T* stats, const T* w, T* dx, T* dparams,
                 const Rows& r, double eps) {
  parallel_for(r.C, channel_grain(r), [&](i64 c0, i64 c1) {
    for (i64 c = c0; c < c1; ++c) bn_backward_channel<T>(x, dy, stats, w, dx, dparams, r, c, eps);
  });
}

template <class F>
void visit_compute(DType dt, F&& f) {
  if (dt == DType::F64)
    f.template operator()<double>();
  else
    f.template operator()<float>();
}

}  // namespace

std::pair<CpuTensor, CpuTensor> ActivationOps::float_batch_norm_train(const CpuTensor& x0,
                                                                      const OptP& w0,
                                                                      const OptP& b0, double eps) {
  const DType dt = x0.dtype, ct = compute_dtype(dt);
  const CpuTensor x = prepare(x0, ct);
  std::optional<CpuTensor> w, b;
  if (w0) w = prepare(*w0, ct);
  if (b0) b = prepare(*b0, ct);
  const Rows r(x.shape);
  CpuTensor y = alloc(x.shape, ct), stats = alloc(Shape{2, r.C}, ct);
  visit_compute(ct, [&]<class T>() {
    bn_forward<T>(x.data<T>(), w ? w->data<T>() : nullptr, b ? b->data<T>() : nullptr, y.data<T>(),
                  stats.data<T>(), r, eps);
  });
  return {finish(std::move(y), dt), finish(std::move(stats), dt)};
}

std::pair<CpuTensor, CpuTensor> ActivationOps::float_batch_norm_train_backward(
    const CpuTensor& x0, const CpuTensor& dy0, const CpuTensor& stats0, const OptP& w0,
    double eps) {
  const DType dt = x0.dtype, ct = compute_dtype(dt);
  const CpuTensor x = prepare(x0, ct), dy = prepare(dy0, ct), stats = prepare(stats0, ct);
  std::optional<CpuTensor> w;
  if (w0) w = prepare(*w0, ct);
  const Rows r(x.shape);
  CpuTensor dx = alloc(x.shape, ct), dparams = alloc(Shape{2, r.C}, ct);
  visit_compute(ct, [&]<class T>() {
    bn_backward<T>(x.data<T>(), dy.data<T>(), stats.data<T>(), w ? w->data<T>() : nullptr,
                   dx.data<T>(), dparams.data<T>(), r, eps);
  });
  return {finish(std::move(dx), dt), finish(std::move(dparams), dt)};
}

}  // namespace ember::cpu
