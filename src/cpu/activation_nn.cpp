// CPU backend: fused nn kernels: layer/rms/group/batch norm, linear, embedding,
// scaled dot-product attention and cross-entropy.
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "blas.hpp"
#include "ember/cpu/ops_activation.hpp"
#include "ember/cpu/ops_core.hpp"
#include "kernel.hpp"

namespace ember::cpu {

namespace {

/// Pointer to the contiguous values of an optional parameter (nullptr when absent).
template <class T>
const T* opt_data(const std::optional<CpuTensor>& p, std::optional<CpuTensor>& keep) {
  if (!p) return nullptr;
  keep = contiguous(*p);
  return keep->data<T>();
}

template <class F>
void visit_float(DType d, F&& f) {
  visit_dtype(d, [&]<class T>() {
    if constexpr (is_float(dtype_of<T>())) f.template operator()<T>();
  });
}

}  // namespace

CpuTensor ActivationOps::float_layer_norm(const CpuTensor& x, std::size_t k, const OptP& weight,
                                          const OptP& bias, double eps) {
  const CpuTensor src = contiguous(x);
  CpuTensor out = alloc(src.shape, src.dtype);
  std::int64_t n = 1;
  for (std::size_t i = src.shape.rank() - k; i < src.shape.rank(); ++i) n *= src.shape[i];
  const std::int64_t rows = n == 0 ? 0 : src.numel() / n;
  visit_float(src.dtype, [&]<class T>() {
    using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
    std::optional<CpuTensor> kw, kb;
    const T* w = opt_data<T>(weight, kw);
    const T* b = opt_data<T>(bias, kb);
    const T* xs = src.data<T>();
    T* ys = out.data<T>();
    parallel_for(rows, std::max<std::int64_t>(1, kParallelGrain / std::max<std::int64_t>(n, 1)),
                 [&](std::int64_t r0, std::int64_t r1) {
                   std::vector<C> tmp(std::is_same_v<T, C> ? 0 : static_cast<std::size_t>(n));
                   for (std::int64_t r = r0; r < r1; ++r) {
                     const C* xr;
                     if constexpr (std::is_same_v<T, C>) {
                       xr = xs + r * n;
                     } else {
                       for (std::int64_t i = 0; i < n; ++i) tmp[i] = static_cast<C>(xs[r * n + i]);
                       xr = tmp.data();
                     }
                     C sum = 0;
#pragma omp simd reduction(+ : sum)
                     for (std::int64_t i = 0; i < n; ++i) sum += xr[i];
                     const C mean = sum / C(n);
                     C sq = 0;
#pragma omp simd reduction(+ : sq)
                     for (std::int64_t i = 0; i < n; ++i) sq += (xr[i] - mean) * (xr[i] - mean);
                     const C rstd = C(1) / std::sqrt(sq / C(n) + C(eps));
                     T* yr = ys + r * n;
                     if (w && b) {
#pragma omp simd
                       for (std::int64_t i = 0; i < n; ++i)
                         yr[i] = static_cast<T>((xr[i] - mean) * rstd * static_cast<C>(w[i]) +
                                                static_cast<C>(b[i]));
                     } else {
                       for (std::int64_t i = 0; i < n; ++i) {
                         C v = (xr[i] - mean) * rstd;
                         if (w) v *= static_cast<C>(w[i]);
                         if (b) v += static_cast<C>(b[i]);
                         yr[i] = static_cast<T>(v);
                       }
                     }
                   }
                 });
  });
  return out;
}

CpuTensor ActivationOps::float_rms_norm(const CpuTensor& x, const OptP& weight, double eps) {
  const CpuTensor src = contiguous(x);
  CpuTensor out = alloc(src.shape, src.dtype);
  const std::int64_t n = src.shape[src.shape.rank() - 1];
  const std::int64_t rows = n == 0 ? 0 : src.numel() / n;
  visit_float(src.dtype, [&]<class T>() {
    using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
    std::optional<CpuTensor> kw;
    const T* w = opt_data<T>(weight, kw);
    const T* xs = src.data<T>();
    T* ys = out.data<T>();
    parallel_for(rows, std::max<std::int64_t>(1, kParallelGrain / std::max<std::int64_t>(n, 1)),
                 [&](std::int64_t r0, std::int64_t r1) {
                   for (std::int64_t r = r0; r < r1; ++r) {
                     const T* xr = xs + r * n;
                     T* yr = ys + r * n;
                     C sq = 0;
                     for (std::int64_t i = 0; i < n; ++i)
                       sq += static_cast<C>(xr[i]) * static_cast<C>(xr[i]);
                     const C rr = C(1) / std::sqrt(sq / C(n) + C(eps));
                     for (std::int64_t i = 0; i < n; ++i) {
                       C v = static_cast<C>(xr[i]) * rr;
                       if (w) v *= static_cast<C>(w[i]);
                       yr[i] = static_cast<T>(v);
                     }
                   }
                 });
  });
  return out;
}

CpuTensor ActivationOps::float_group_norm(const CpuTensor& x, std::int64_t num_groups,
                                          const OptP& weight, const OptP& bias, double eps) {
  const CpuTensor src = contiguous(x);
  CpuTensor out = alloc(src.shape, src.dtype);
  const std::int64_t N = src.shape[0], Ch = src.shape[1];
  const std::int64_t spatial = (N * Ch == 0) ? 0 : src.numel() / (N * Ch);
  const std::int64_t cpg = Ch / num_groups, gsize = cpg * spatial;
  visit_float(src.dtype, [&]<class T>() {
    using C = double;
    std::optional<CpuTensor> kw, kb;
    const T* w = opt_data<T>(weight, kw);
    const T* b = opt_data<T>(bias, kb);
    const T* xs = src.data<T>();
    T* ys = out.data<T>();
    parallel_for(N * num_groups,
                 std::max<std::int64_t>(1, kParallelGrain / std::max<std::int64_t>(gsize, 1)),
                 [&](std::int64_t g0, std::int64_t g1) {
                   for (std::int64_t g = g0; g < g1; ++g) {
                     const T* xr = xs + g * gsize;
                     T* yr = ys + g * gsize;
                     C sum = 0, sq = 0;
                     for (std::int64_t i = 0; i < gsize; ++i) sum += static_cast<C>(xr[i]);
                     const C mean = gsize ? sum / C(gsize) : C(0);
                     for (std::int64_t i = 0; i < gsize; ++i)
                       sq += (static_cast<C>(xr[i]) - mean) * (static_cast<C>(xr[i]) - mean);
                     const C rstd = C(1) / std::sqrt(sq / C(gsize) + C(eps));
                     const std::int64_t c0 = (g % num_groups) * cpg;
                     for (std::int64_t i = 0; i < gsize; ++i) {
                       const std::int64_t c = c0 + i / spatial;
                       C v = (static_cast<C>(xr[i]) - mean) * rstd;
                       if (w) v *= static_cast<C>(w[c]);
                       if (b) v += static_cast<C>(b[c]);
                       yr[i] = static_cast<T>(v);
                     }
                   }
                 });
  });
  return out;
}

CpuTensor ActivationOps::float_batch_norm(const CpuTensor& x, const CpuTensor& mean,
                                          const CpuTensor& var, const OptP& weight,
                                          const OptP& bias, double eps) {
  const CpuTensor src = contiguous(x);
  CpuTensor out = alloc(src.shape, src.dtype);
  const std::int64_t Ch = src.shape.rank() >= 2 ? src.shape[1] : src.shape[0];
  const std::int64_t N = src.shape.rank() >= 2 ? src.shape[0] : 1;
  const std::int64_t spatial = (N * Ch == 0) ? 0 : src.numel() / (N * Ch);
  visit_float(src.dtype, [&]<class T>() {
    using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
    std::optional<CpuTensor> kw, kb;
    const T* w = opt_data<T>(weight, kw);
    const T* b = opt_data<T>(bias, kb);
    const CpuTensor mc = contiguous(mean), vc = contiguous(var);
    const T* ms = mc.data<T>();
    const T* vs = vc.data<T>();
    std::vector<C> scale(static_cast<std::size_t>(Ch)), shift(static_cast<std::size_t>(Ch));
    for (std::int64_t c = 0; c < Ch; ++c) {
      const C s = (w ? static_cast<C>(w[c]) : C(1)) / std::sqrt(static_cast<C>(vs[c]) + C(eps));
      scale[c] = s;
      shift[c] = (b ? static_cast<C>(b[c]) : C(0)) - static_cast<C>(ms[c]) * s;
    }
    const T* xs = src.data<T>();
    T* ys = out.data<T>();
    parallel_for(src.numel(), kParallelGrain, [&](std::int64_t i0, std::int64_t i1) {
      for (std::int64_t i = i0; i < i1; ++i) {
        const std::int64_t c = (i / spatial) % Ch;
        ys[i] = static_cast<T>(static_cast<C>(xs[i]) * scale[c] + shift[c]);
      }
    });
  });
  return out;
}

CpuTensor ActivationOps::float_linear(const CpuTensor& x, const CpuTensor& weight,
                                      const OptP& bias) {
  const DType dt = x.dtype;
  const bool half = is_half(dt);
  const CpuTensor xc = contiguous(half ? CoreOps::cast(x, DType::F32) : x);
  const CpuTensor wc = contiguous(half ? CoreOps::cast(weight, DType::F32) : weight);
  const std::int64_t in = wc.shape[1], outf = wc.shape[0];
  Shape os = xc.shape;
  os[os.rank() - 1] = outf;
  std::int64_t rows = 1;
  for (std::size_t i = 0; i + 1 < os.rank(); ++i) rows *= os[i];
  CpuTensor out = alloc(os, xc.dtype);
  std::optional<CpuTensor> bc;
  if (bias) bc = contiguous(half ? CoreOps::cast(*bias, DType::F32) : *bias);
  visit_float(xc.dtype, [&]<class T>() {
    T* ys = out.data<T>();
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      if (rows > 0 && outf > 0) {
        if (in == 0) {
          std::fill(ys, ys + rows * outf, T(0));
        } else if constexpr (std::is_same_v<T, float>) {
          cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, outf, in, 1.0f,
                      xc.data<float>(), in, wc.data<float>(), in, 0.0f, ys, outf);
        } else {
          cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, outf, in, 1.0,
                      xc.data<double>(), in, wc.data<double>(), in, 0.0, ys, outf);
        }
        if (bc) {
          const T* bs = bc->data<T>();
          for (std::int64_t r = 0; r < rows; ++r)
            for (std::int64_t j = 0; j < outf; ++j) ys[r * outf + j] += bs[j];
        }
      }
    }
  });
  return half ? CoreOps::cast(out, dt) : out;
}

CpuTensor ActivationOps::float_embedding(const CpuTensor& weights, const CpuTensor& indices) {
  const CpuTensor w = contiguous(weights);
  const CpuTensor idx = CoreOps::cast(contiguous(indices), DType::I64);
  const std::int64_t d = w.shape[1];
  Shape os = idx.shape;
  os.dims.push_back(d);
  CpuTensor out = alloc(os, w.dtype);
  const std::int64_t* is = idx.data<std::int64_t>();
  const std::size_t es = dtype_size(w.dtype);
  const char* ws = static_cast<const char*>(w.raw());
  char* ys = static_cast<char*>(out.raw());
  parallel_for(
      idx.numel(), std::max<std::int64_t>(1, kParallelGrain / std::max<std::int64_t>(d, 1)),
      [&](std::int64_t b0, std::int64_t e0) {
        for (std::int64_t i = b0; i < e0; ++i)
          std::memcpy(ys + i * d * es, ws + is[i] * d * es, static_cast<std::size_t>(d) * es);
      });
  return out;
}

CpuTensor ActivationOps::float_scaled_dot_product_attention(const CpuTensor& q, const CpuTensor& k,
                                                            const CpuTensor& v, const OptP& mask,
                                                            const OptP& bias, bool is_causal,
                                                            double scale) {
  const std::size_t r = q.shape.rank();
  const std::int64_t L = q.shape[r - 2], E = q.shape[r - 1], S = k.shape[r - 2],
                     Ev = v.shape[r - 1];
  std::int64_t batch = 1;
  for (std::size_t i = 0; i + 2 < r; ++i) batch *= q.shape[i];
  const CpuTensor qc = contiguous(q), kc = contiguous(k), vc = contiguous(v);
  Shape os = q.shape;
  os[r - 1] = Ev;
  CpuTensor out = alloc(os, q.dtype);
  // Broadcast strides (0 on size-1 dims) of mask / bias, which have rank r.
  auto bstrides = [&](const CpuTensor& t) {
    std::vector<std::int64_t> s(r);
    for (std::size_t i = 0; i < r; ++i) s[i] = t.shape[i] == 1 ? 0 : t.strides[i];
    return s;
  };
  const std::vector<std::int64_t> ms = mask ? bstrides(*mask) : std::vector<std::int64_t>(r, 0);
  const std::vector<std::int64_t> bs = bias ? bstrides(*bias) : std::vector<std::int64_t>(r, 0);
  const std::uint8_t* mp = mask ? mask->data<std::uint8_t>() : nullptr;
  visit_float(q.dtype, [&]<class T>() {
    using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
    const T* bp = bias ? bias->data<T>() : nullptr;
    const T* qs = qc.data<T>();
    const T* ks = kc.data<T>();
    const T* vs = vc.data<T>();
    T* ys = out.data<T>();
    parallel_for(
        batch * L,
        std::max<std::int64_t>(1, kParallelGrain / std::max<std::int64_t>(1, S * (E + Ev))),
        [&](std::int64_t t0, std::int64_t t1) {
          std::vector<C> p(static_cast<std::size_t>(S)), acc(static_cast<std::size_t>(Ev));
          for (std::int64_t t = t0; t < t1; ++t) {
            const std::int64_t bi = t / L, l = t % L;
            std::int64_t moff = 0, boff = 0;
            for (std::int64_t rem = bi, i = static_cast<std::int64_t>(r) - 3; i >= 0; --i) {
              const std::int64_t ix = rem % q.shape[i];
              rem /= q.shape[i];
              moff += ix * ms[i];
              boff += ix * bs[i];
            }
            moff += l * ms[r - 2];
            boff += l * bs[r - 2];
            const T* qr = qs + t * E;
            C m = -std::numeric_limits<C>::infinity();
            bool all_masked = true;
            for (std::int64_t s = 0; s < S; ++s) {
              C sc;
              if ((is_causal && s > l) || (mp && !mp[moff + s * ms[r - 1]])) {
                sc = -std::numeric_limits<C>::infinity();
              } else {
                const T* kr = ks + (bi * S + s) * E;
                C dot = 0;
                for (std::int64_t e = 0; e < E; ++e)
                  dot += static_cast<C>(qr[e]) * static_cast<C>(kr[e]);
                sc = dot * C(scale);
                if (bp) sc += static_cast<C>(bp[boff + s * bs[r - 1]]);
              }
              p[s] = sc;
              m = sc > m ? sc : m;
              all_masked = all_masked && sc == -std::numeric_limits<C>::infinity();
            }
            std::fill(acc.begin(), acc.end(), C(0));
            C sum = 0;
            for (std::int64_t s = 0; s < S; ++s) {
              p[s] = std::exp(p[s] - m);
              sum += p[s];
            }
            // A fully masked row gives zeros, as torch's math reference (_safe_softmax).
            for (std::int64_t s = 0; s < S && !all_masked; ++s) {
              const C w = p[s] / sum;
              const T* vr = vs + (bi * S + s) * Ev;
              for (std::int64_t e = 0; e < Ev; ++e) acc[e] += w * static_cast<C>(vr[e]);
            }
            for (std::int64_t e = 0; e < Ev; ++e) ys[t * Ev + e] = static_cast<T>(acc[e]);
          }
        });
  });
  return out;
}

namespace {
template <class T>
double row_lse(const T* x, std::int64_t n) {
  double m = -std::numeric_limits<double>::infinity();
  for (std::int64_t c = 0; c < n; ++c) m = std::max(m, static_cast<double>(x[c]));
  double s = 0;
  for (std::int64_t c = 0; c < n; ++c) s += std::exp(static_cast<double>(x[c]) - m);
  return m + std::log(s);
}
}  // namespace

CpuTensor ActivationOps::float_cross_entropy_with_logits(const CpuTensor& logits,
                                                         const CpuTensor& targets) {
  const CpuTensor x = contiguous(logits), tg = contiguous(targets);
  const std::int64_t N = x.shape[0], Cn = x.shape[1];
  CpuTensor out = alloc(Shape{1}, x.dtype);
  visit_float(x.dtype, [&]<class T>() {
    const T* xs = x.data<T>();
    const T* ts = tg.data<T>();
    double total = 0;
    for (std::int64_t i = 0; i < N; ++i) {
      const double lse = row_lse(xs + i * Cn, Cn);
      for (std::int64_t c = 0; c < Cn; ++c)
        total += static_cast<double>(ts[i * Cn + c]) * (static_cast<double>(xs[i * Cn + c]) - lse);
    }
    out.data<T>()[0] = static_cast<T>(-total / static_cast<double>(N));
  });
  return out;
}

CpuTensor ActivationOps::float_cross_entropy_with_indices(const CpuTensor& logits,
                                                          const CpuTensor& targets) {
  const CpuTensor x = contiguous(logits);
  const CpuTensor tg = CoreOps::cast(contiguous(targets), DType::I64);
  const std::int64_t N = x.shape[0], Cn = x.shape[1];
  CpuTensor out = alloc(Shape{1}, x.dtype);
  visit_float(x.dtype, [&]<class T>() {
    const T* xs = x.data<T>();
    const std::int64_t* ts = tg.data<std::int64_t>();
    double total = 0;
    for (std::int64_t i = 0; i < N; ++i)
      total += static_cast<double>(xs[i * Cn + ts[i]]) - row_lse(xs + i * Cn, Cn);
    out.data<T>()[0] = static_cast<T>(-total / static_cast<double>(N));
  });
  return out;
}

}  // namespace ember::cpu
