// CPU backend: element-wise activations, prelu, glu and the softmax family.
#include <cmath>
#include <cstring>
#include <limits>

#include "ember/cpu/ops_activation.hpp"
#include "kernel.hpp"

namespace ember::cpu {

// The f32 kernels, compiled for AVX-512, AVX2+FMA and baseline x86-64; chosen at run time.
// Off x86 (WebAssembly) only the baseline, vectorised from the compiler flags.
#if EMBER_CPU_X86
namespace simd_avx512 {
#pragma GCC push_options
#pragma GCC target("avx512f,avx512dq,avx512vl,avx2,fma")
#include "activation_simd.inc"
#pragma GCC pop_options
}  // namespace simd_avx512
namespace simd_avx2 {
#pragma GCC push_options
#pragma GCC target("avx2,fma")
#include "activation_simd.inc"
#pragma GCC pop_options
}  // namespace simd_avx2
#endif
namespace simd_base {
#include "activation_simd.inc"
}  // namespace simd_base

namespace {

enum class Isa { Base, Avx2, Avx512 };
Isa isa() {
#if !EMBER_CPU_X86
  return Isa::Base;
#else
  static const Isa v = [] {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512vl"))
      return Isa::Avx512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return Isa::Avx2;
    return Isa::Base;
  }();
  return v;
#endif
}

bool unary_f32(Act act, const float* x, float* y, std::int64_t n, float a, float b) {
  switch (isa()) {
#if EMBER_CPU_X86
    case Isa::Avx512:
      return simd_avx512::unary_f32(act, x, y, n, a, b);
    case Isa::Avx2:
      return simd_avx2::unary_f32(act, x, y, n, a, b);
#endif
    default:
      return simd_base::unary_f32(act, x, y, n, a, b);
  }
}
void softmax_rows_f32(const float* x, float* y, std::int64_t rows, std::int64_t n, SoftmaxKind k) {
  switch (isa()) {
#if EMBER_CPU_X86
    case Isa::Avx512:
      return simd_avx512::softmax_rows_f32(x, y, rows, n, k);
    case Isa::Avx2:
      return simd_avx2::softmax_rows_f32(x, y, rows, n, k);
#endif
    default:
      return simd_base::softmax_rows_f32(x, y, rows, n, k);
  }
}
void softmax_cols_f32(const float* x, float* y, std::int64_t n, std::int64_t inner, std::int64_t c0,
                      std::int64_t w, SoftmaxKind k) {
  switch (isa()) {
#if EMBER_CPU_X86
    case Isa::Avx512:
      return simd_avx512::softmax_cols_f32(x, y, n, inner, c0, w, k);
    case Isa::Avx2:
      return simd_avx2::softmax_cols_f32(x, y, n, inner, c0, w, k);
#endif
    default:
      return simd_base::softmax_cols_f32(x, y, n, inner, c0, w, k);
  }
}

constexpr double kSeluAlpha = 1.6732632423543772848170429916717;
constexpr double kSeluScale = 1.0507009873554804934193349852946;

/// Scalar definition of every activation (the reference; f32 fast paths must agree).
template <class C>
C act_scalar(Act act, C x, C a, C b) {
  using std::exp;
  switch (act) {
    case Act::Relu:
      return x < C(0) ? C(0) : x;
    case Act::Relu6:
      return x < C(0) ? C(0) : (x > C(6) ? C(6) : x);
    case Act::LeakyRelu:
      return x < C(0) ? x * a : x;
    case Act::Gelu:
      return C(0.5) * x * (C(1) + std::erf(x * C(0.70710678118654752440)));
    case Act::GeluTanh: {
      const C k = C(0.79788456080286535588);  // sqrt(2 / pi)
      return C(0.5) * x * (C(1) + std::tanh(k * (x + C(0.044715) * x * x * x)));
    }
    case Act::Silu:
      return x / (C(1) + exp(-x));
    case Act::Mish: {
      const C sp = x > C(20) ? x : std::log1p(exp(x));
      return x * std::tanh(sp);
    }
    case Act::Sigmoid:
      return C(1) / (C(1) + exp(-x));
    case Act::HardSigmoid: {
      const C v = a * x + b;
      return v < C(0) ? C(0) : (v > C(1) ? C(1) : v);
    }
    case Act::HardSwish: {
      const C v = x + C(3);
      return x * (v < C(0) ? C(0) : (v > C(6) ? C(6) : v)) / C(6);
    }
    case Act::LogSigmoid:
      return (x < C(0) ? x : C(0)) - std::log1p(exp(-std::abs(x)));
    case Act::Softplus: {
      const C bx = a * x;
      return bx > b ? x : std::log1p(exp(bx)) / a;
    }
    case Act::Softsign:
      return x / (C(1) + std::abs(x));
    case Act::Elu:
      return x > C(0) ? x : a * std::expm1(x);
    case Act::Celu:
      return x > C(0) ? x : a * std::expm1(x / a);
    case Act::Selu:
      return C(kSeluScale) * (x > C(0) ? x : C(kSeluAlpha) * std::expm1(x));
    case Act::Tanhshrink:
      return x - std::tanh(x);
    case Act::HardShrink:
      return (x >= -a && x <= a) ? C(0) : x;  // NaN propagates
    case Act::SoftShrink:
      return x > a ? x - a : (x < -a ? x + a : (x != x ? x : C(0)));
  }
  return x;
}

/// A contiguous source and an output buffer (the source itself when reusable).
std::pair<CpuTensor, CpuTensor> src_and_out(CpuTensor x) {
  CpuTensor src = x.is_contiguous() ? std::move(x) : contiguous(x);
  if (src.can_reuse()) {
    CpuTensor out = src;
    return {std::move(src), std::move(out)};
  }
  CpuTensor out = alloc(src.shape, src.dtype);
  return {std::move(src), std::move(out)};
}

/// outer, size, inner of `shape` around `dim`.
struct Split3 {
  std::int64_t outer = 1, n = 1, inner = 1;
};
Split3 split3(const Shape& s, std::size_t dim) {
  Split3 r;
  for (std::size_t i = 0; i < dim; ++i) r.outer *= s[i];
  r.n = s[dim];
  for (std::size_t i = dim + 1; i < s.rank(); ++i) r.inner *= s[i];
  return r;
}

}  // namespace

CpuTensor ActivationOps::unary_activation(CpuTensor x, Act act, double a, double b) {
  // Named variables, not a structured binding: clang 14 (emscripten) cannot capture those.
  auto [src_, out_] = src_and_out(std::move(x));
  CpuTensor src = std::move(src_), out = std::move(out_);
  const std::int64_t n = src.numel();
  visit_dtype(src.dtype, [&]<class T>() {
    if constexpr (is_float(dtype_of<T>())) {
      using C = compute_t<T>;
      const T* xs = src.data<T>();
      T* ys = out.data<T>();
      parallel_for(n, kParallelGrain / 4, [&](std::int64_t b0, std::int64_t e0) {
        if constexpr (std::is_same_v<T, float>) {
          if (unary_f32(act, xs + b0, ys + b0, e0 - b0, static_cast<float>(a),
                        static_cast<float>(b)))
            return;
        }
        for (std::int64_t i = b0; i < e0; ++i) {
          ys[i] = static_cast<T>(
              act_scalar<C>(act, static_cast<C>(xs[i]), static_cast<C>(a), static_cast<C>(b)));
        }
      });
    }
  });
  return out;
}

CpuTensor ActivationOps::float_prelu(const CpuTensor& x, const CpuTensor& weight) {
  const CpuTensor src = contiguous(x);
  const CpuTensor w = contiguous(weight);  // the front end casts it to x's dtype
  CpuTensor out = alloc(src.shape, src.dtype);
  const std::int64_t channels =
      src.shape.rank() >= 2 ? src.shape[1] : (src.shape.rank() == 1 ? src.shape[0] : 1);
  const std::int64_t inner =
      src.shape.rank() >= 2 ? src.numel() / std::max<std::int64_t>(1, src.shape[0] * src.shape[1])
                            : 1;
  const bool single = w.numel() == 1;
  visit_dtype(src.dtype, [&]<class T>() {
    if constexpr (is_float(dtype_of<T>())) {
      using C = compute_t<T>;
      const T* xs = src.data<T>();
      const T* ws = w.data<T>();
      T* ys = out.data<T>();
      parallel_for(src.numel(), kParallelGrain, [&](std::int64_t b0, std::int64_t e0) {
        for (std::int64_t i = b0; i < e0; ++i) {
          const std::int64_t c = single ? 0 : (i / inner) % channels;
          const C v = static_cast<C>(xs[i]);
          ys[i] = static_cast<T>(v < C(0) ? static_cast<C>(ws[c]) * v : v);
        }
      });
    }
  });
  return out;
}

CpuTensor ActivationOps::float_glu(const CpuTensor& x, std::size_t dim) {
  const CpuTensor src = contiguous(x);
  Shape os = src.shape;
  os[dim] /= 2;
  CpuTensor out = alloc(os, src.dtype);
  const Split3 s = split3(src.shape, dim);
  const std::int64_t h = s.n / 2;
  visit_dtype(src.dtype, [&]<class T>() {
    if constexpr (is_float(dtype_of<T>())) {
      using C = compute_t<T>;
      const T* xs = src.data<T>();
      T* ys = out.data<T>();
      parallel_for(out.numel(), kParallelGrain, [&](std::int64_t b0, std::int64_t e0) {
        for (std::int64_t i = b0; i < e0; ++i) {
          const std::int64_t in = i % s.inner, j = (i / s.inner) % h, o = i / (s.inner * h);
          const std::int64_t ia = (o * s.n + j) * s.inner + in, ib = ia + h * s.inner;
          const C g = static_cast<C>(xs[ib]);
          ys[i] = static_cast<T>(static_cast<C>(xs[ia]) / (C(1) + std::exp(-g)));
        }
      });
    }
  });
  return out;
}

CpuTensor ActivationOps::softmax_family(const CpuTensor& x, std::size_t dim, SoftmaxKind kind) {
  auto [src_, out_] = src_and_out(x);
  CpuTensor src = std::move(src_), out = std::move(out_);
  const Split3 s = split3(src.shape, dim);
  if (src.numel() == 0) return out;
  visit_dtype(src.dtype, [&]<class T>() {
    if constexpr (is_float(dtype_of<T>())) {
      const T* xs = src.data<T>();
      T* ys = out.data<T>();
      if constexpr (std::is_same_v<T, float>) {
        if (s.inner == 1) {
          parallel_for(s.outer, std::max<std::int64_t>(1, kParallelGrain / s.n),
                       [&](std::int64_t b0, std::int64_t e0) {
                         softmax_rows_f32(xs + b0 * s.n, ys + b0 * s.n, e0 - b0, s.n, kind);
                       });
        } else {
          const std::int64_t nblk = (s.inner + 255) / 256;
          const std::int64_t per_task = s.n * std::min<std::int64_t>(256, s.inner);
          parallel_for(s.outer * nblk, std::max<std::int64_t>(1, kParallelGrain / per_task),
                       [&](std::int64_t b0, std::int64_t e0) {
                         for (std::int64_t t = b0; t < e0; ++t) {
                           const std::int64_t o = t / nblk, c0 = (t % nblk) * 256;
                           softmax_cols_f32(xs + o * s.n * s.inner, ys + o * s.n * s.inner, s.n,
                                            s.inner, c0, std::min<std::int64_t>(256, s.inner - c0),
                                            kind);
                         }
                       });
        }
        return;
      }
      // f64, f16, bf16: scalar path in the compute type.
      using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
      const C sg = kind == SoftmaxKind::Softmin ? C(-1) : C(1);
      parallel_for(s.outer * s.inner, std::max<std::int64_t>(1, kParallelGrain / s.n),
                   [&](std::int64_t b0, std::int64_t e0) {
                     for (std::int64_t t = b0; t < e0; ++t) {
                       const std::int64_t base = (t / s.inner) * s.n * s.inner + t % s.inner;
                       C m = -std::numeric_limits<C>::infinity();
                       for (std::int64_t j = 0; j < s.n; ++j) {
                         const C v = sg * static_cast<C>(xs[base + j * s.inner]);
                         m = (v > m || v != v) ? v : m;
                       }
                       C sum = 0;
                       for (std::int64_t j = 0; j < s.n; ++j)
                         sum += std::exp(sg * static_cast<C>(xs[base + j * s.inner]) - m);
                       for (std::int64_t j = 0; j < s.n; ++j) {
                         const std::int64_t k = base + j * s.inner;
                         const C v = sg * static_cast<C>(xs[k]);
                         C r;
                         switch (kind) {
                           case SoftmaxKind::LogSoftmax:
                             r = v - m - std::log(sum);
                             break;
                           case SoftmaxKind::QuietSoftmax:
                             r = std::exp(v - m) / (sum + std::exp(-m));
                             break;
                           default:
                             r = std::exp(v - m) / sum;
                         }
                         ys[k] = static_cast<T>(r);
                       }
                     }
                   });
    }
  });
  return out;
}

}  // namespace ember::cpu
