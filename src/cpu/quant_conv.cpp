// CPU backend: the statically quantized conv2d (ember/cpu/ops_quant.hpp, ir::QuantizedConv2d).
//
// The input is quantized to u8 by the layer's calibrated scale and zero point into a buffer
// that already holds the convolution's padding, filled with the zero point (the u8 value of
// 0.0), so every window sums over (qx - zx) qw with nothing position dependent; then
//   y[n, o, i, j] = f32(sum (qx - zx) qw) * (sx * sw[o]) + b[o].
// With oneDNN (EMBER_HAVE_DNNL): its int8 convolution (u8 x s8, AMX-INT8 / AVX512-VNNI
// kernels) with the zero point and the per-channel output scales baked into a cached
// primitive (oneDNN 2.6 has no run-time scales for it; the parameters are fixed per layer
// under static quantization) and the bias as a binary post-op after the scales. Without it:
// a direct loop over the same integers (exact i32 sums, then the same f32 epilogue).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "ember/cpu/ops_core.hpp"
#include "ember/cpu/ops_quant.hpp"
#include "kernel.hpp"

#ifdef EMBER_HAVE_DNNL
#include <oneapi/dnnl/dnnl.hpp>

#include "dnnl_cache.hpp"
#endif

namespace ember::cpu {

namespace {

/// The sizes of one quantized conv2d.
struct QConv {
  std::int64_t n, c, h, w;      // input
  std::int64_t o, g, kh, kw;    // output channels, groups, kernel
  std::int64_t hp, wp, oh, ow;  // padded input, output
  ConvOptions<2> opt;
  std::int64_t cg() const { return c / g; }
  std::int64_t og() const { return o / g; }
  std::int64_t taps() const { return cg() * kh * kw; }
};

QConv dims_of(const Shape& x, const Shape& weight, const Shape& y, const ConvOptions<2>& opt) {
  return {x[0],
          x[1],
          x[2],
          x[3],
          weight[0],
          opt.groups,
          weight[2],
          weight[3],
          x[2] + 2 * opt.padding[0],
          x[3] + 2 * opt.padding[1],
          y[2],
          y[3],
          opt};
}

/// x [N, C, H, W] f32 quantized by `a` into [N, C, H + 2 ph, W + 2 pw] u8, the border set to
/// the zero point.
std::vector<std::uint8_t> quantize_padded(const float* x, const QConv& d,
                                          const ActivationQuant& a) {
  std::vector<std::uint8_t> q(static_cast<std::size_t>(d.n * d.c * d.hp * d.wp),
                              static_cast<std::uint8_t>(a.zero_point));
  const float inv = 1.0f / a.scale, z = static_cast<float>(a.zero_point);
  const std::int64_t ph = d.opt.padding[0], pw = d.opt.padding[1];
  parallel_for(d.n * d.c,
               std::max<std::int64_t>(1, kParallelGrain / std::max<std::int64_t>(1, d.h * d.w)),
               [&](std::int64_t b, std::int64_t e) {
                 for (std::int64_t p = b; p < e; ++p) {
                   const float* src = x + p * d.h * d.w;
                   std::uint8_t* dst = q.data() + p * d.hp * d.wp;
                   for (std::int64_t i = 0; i < d.h; ++i) {
                     std::uint8_t* row = dst + (i + ph) * d.wp + pw;
                     for (std::int64_t j = 0; j < d.w; ++j) {
                       const float r = std::nearbyint(src[i * d.w + j] * inv) + z;
                       row[j] = static_cast<std::uint8_t>(std::min(std::max(r, 0.0f), 255.0f));
                     }
                   }
                 }
               });
  return q;
}

/// The per-output-channel factors sx * sw[o] (f32) and the bias (zeros without one).
struct Epilogue {
  std::vector<float> scale, bias;
};

Epilogue epilogue(const CpuTensor& scales, const std::optional<CpuTensor>& bias, std::int64_t o,
                  const ActivationQuant& a) {
  const CpuTensor s = contiguous(scales);
  Epilogue e{std::vector<float>(static_cast<std::size_t>(o)),
             std::vector<float>(static_cast<std::size_t>(o), 0.0f)};
  for (std::int64_t k = 0; k < o; ++k) {
    e.scale[static_cast<std::size_t>(k)] = a.scale * s.data<float>()[s.numel() == 1 ? 0 : k];
  }
  if (bias) {
    const CpuTensor b = contiguous(*bias);
    std::memcpy(e.bias.data(), b.data<float>(), e.bias.size() * sizeof(float));
  }
  return e;
}

/// The direct loop: exact i32 sums of (qx - zx) qw, then the epilogue.
void conv_direct(const std::uint8_t* q, const std::int8_t* w, const QConv& d,
                 const ActivationQuant& a, const Epilogue& e, float* y) {
  std::vector<std::int32_t> wsum(static_cast<std::size_t>(d.o), 0);
  for (std::int64_t o = 0; o < d.o; ++o)
    for (std::int64_t t = 0; t < d.taps(); ++t)
      wsum[static_cast<std::size_t>(o)] += w[o * d.taps() + t];
  // Plain copies (clang 14 cannot capture structured bindings in the lambda below).
  const std::int64_t sh = d.opt.stride[0], sw = d.opt.stride[1];
  const std::int64_t dh = d.opt.dilation[0], dw = d.opt.dilation[1];
  parallel_for(d.n * d.o, 1, [&](std::int64_t b, std::int64_t end) {
    for (std::int64_t p = b; p < end; ++p) {
      const std::int64_t n = p / d.o, o = p % d.o, g = o / d.og();
      const std::int8_t* wo = w + o * d.taps();
      float* yo = y + p * d.oh * d.ow;
      for (std::int64_t i = 0; i < d.oh; ++i) {
        for (std::int64_t j = 0; j < d.ow; ++j) {
          std::int32_t acc = 0;
          for (std::int64_t c = 0; c < d.cg(); ++c) {
            const std::uint8_t* qc = q + ((n * d.c + g * d.cg() + c) * d.hp) * d.wp;
            for (std::int64_t u = 0; u < d.kh; ++u)
              for (std::int64_t v = 0; v < d.kw; ++v)
                acc += static_cast<std::int32_t>(qc[(i * sh + u * dh) * d.wp + j * sw + v * dw]) *
                       wo[(c * d.kh + u) * d.kw + v];
          }
          const std::int32_t exact = acc - a.zero_point * wsum[static_cast<std::size_t>(o)];
          yo[i * d.ow + j] = static_cast<float>(exact) * e.scale[static_cast<std::size_t>(o)] +
                             e.bias[static_cast<std::size_t>(o)];
        }
      }
    }
  });
}

#ifdef EMBER_HAVE_DNNL
using dnnl::memory;
using dnnl_util::engine;

/// A cached primitive with its plain (user) and kernel layouts.
struct QEntry {
  dnnl::convolution_forward prim;
  memory::desc src_user, src_kern, w_user, w_kern, dst_user, dst_kern, bias_md;
};

/// The primitive for `d` with the zero point and output scales baked in; a bounded cache
/// keyed by the sizes and the parameters' bits.
std::shared_ptr<QEntry> primitive(const QConv& d, const ActivationQuant& a, const Epilogue& e) {
  std::string key;
  const auto put = [&](const void* p, std::size_t n) {
    key.append(static_cast<const char*>(p), n);
  };
  const std::int64_t sizes[] = {d.n,
                                d.c,
                                d.h,
                                d.w,
                                d.o,
                                d.g,
                                d.kh,
                                d.kw,
                                d.opt.stride[0],
                                d.opt.stride[1],
                                d.opt.padding[0],
                                d.opt.padding[1],
                                d.opt.dilation[0],
                                d.opt.dilation[1]};
  put(sizes, sizeof(sizes));
  put(&a.zero_point, sizeof(a.zero_point));
  put(e.scale.data(), e.scale.size() * sizeof(float));
  static dnnl_util::LruCache<QEntry, 64> cache;
  if (auto hit = cache.get(key)) return hit;
  using dt = memory::data_type;
  using ft = memory::format_tag;
  const memory::dims src{d.n, d.c, d.hp, d.wp}, dst{d.n, d.o, d.oh, d.ow};
  const memory::dims wts =
      d.g == 1 ? memory::dims{d.o, d.c, d.kh, d.kw} : memory::dims{d.g, d.og(), d.cg(), d.kh, d.kw};
  auto entry = std::make_shared<QEntry>();
  entry->src_user = memory::desc(src, dt::u8, ft::nchw);
  entry->w_user = memory::desc(wts, dt::s8, d.g == 1 ? ft::oihw : ft::goihw);
  entry->dst_user = memory::desc(dst, dt::f32, ft::nchw);
  entry->bias_md = memory::desc({1, d.o, 1, 1}, dt::f32, ft::nchw);
  dnnl::primitive_attr attr;
  attr.set_output_scales(1 << 1, e.scale);
  attr.set_zero_points(DNNL_ARG_SRC, 0, {a.zero_point});
  dnnl::post_ops po;
  po.append_binary(dnnl::algorithm::binary_add, entry->bias_md);
  attr.set_post_ops(po);
  const dnnl::convolution_forward::desc desc(
      dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
      memory::desc(src, dt::u8, ft::any), memory::desc(wts, dt::s8, ft::any),
      memory::desc(dst, dt::f32, ft::any), {d.opt.stride[0], d.opt.stride[1]},
      {d.opt.dilation[0] - 1, d.opt.dilation[1] - 1}, {0, 0}, {0, 0});
  const dnnl::convolution_forward::primitive_desc pd(desc, attr, engine());
  entry->prim = dnnl::convolution_forward(pd);
  entry->src_kern = pd.src_desc();
  entry->w_kern = pd.weights_desc();
  entry->dst_kern = pd.dst_desc();
  cache.put(key, entry);
  return entry;
}

/// Whether oneDNN's int8 convolutions sum u8 x s8 products exactly on this CPU: with VNNI
/// (AVX-512 VNNI, AVX-VNNI; AMX CPUs have it too). Without it (AVX2, e.g. AMD Zen 3) they
/// add pairs of products in saturating 16-bit lanes (vpmaddubsw), which overflows for
/// full-range int8 weights and u8 inputs (oneDNN's "int8 computation" notes); the direct
/// loop is exact, so it runs there instead.
bool dnnl_int8_exact() {
#if defined(__x86_64__) || defined(__i386__)
  static const bool v = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512vnni") || __builtin_cpu_supports("avxvnni");
  }();
  return v;
#else
  return false;
#endif
}

/// The oneDNN path; false when oneDNN has no kernel for the case (the caller loops).
bool conv_dnnl(std::vector<std::uint8_t>& q, const std::int8_t* w, const QConv& d,
               const ActivationQuant& a, Epilogue& e, float* y) {
  std::shared_ptr<QEntry> p;
  try {
    p = primitive(d, a, e);
  } catch (const dnnl::error&) {
    return false;
  }
  auto& eng = engine();
  dnnl::stream st(eng);
  memory src_u(p->src_user, eng, q.data());
  memory w_u(p->w_user, eng, const_cast<std::int8_t*>(w));
  memory dst_u(p->dst_user, eng, y);
  memory bias(p->bias_md, eng, e.bias.data());
  memory src_k = src_u, w_k = w_u, dst_k = dst_u;
  if (p->src_kern != p->src_user) {
    src_k = memory(p->src_kern, eng);
    dnnl::reorder(src_u, src_k).execute(st, src_u, src_k);
  }
  if (p->w_kern != p->w_user) {
    w_k = memory(p->w_kern, eng);
    dnnl::reorder(w_u, w_k).execute(st, w_u, w_k);
  }
  if (p->dst_kern != p->dst_user) dst_k = memory(p->dst_kern, eng);
  p->prim.execute(st, {{DNNL_ARG_SRC, src_k},
                       {DNNL_ARG_WEIGHTS, w_k},
                       {DNNL_ARG_DST, dst_k},
                       {DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, bias}});
  if (p->dst_kern != p->dst_user) dnnl::reorder(dst_k, dst_u).execute(st, dst_k, dst_u);
  st.wait();
  return true;
}
#endif

}  // namespace

CpuTensor QuantOps::float_quantized_conv2d(const CpuTensor& x, const CpuTensor& values,
                                           const CpuTensor& scales,
                                           const std::optional<CpuTensor>& bias,
                                           const QuantScheme& /*scheme*/, const Shape& weight,
                                           const ConvOptions<2>& options,
                                           const ActivationQuant& input) {
  // The shapes were checked by ir::QuantizedConv2d (the front end, Dispatch).
  const auto out = [&](std::size_t i) {
    return (x.shape[2 + i] + 2 * options.padding[i] - options.dilation[i] * (weight[2 + i] - 1) -
            1) /
               options.stride[i] +
           1;
  };
  const Shape ys{x.shape[0], weight[0], out(0), out(1)};
  CpuTensor y = alloc(ys, DType::F32);
  if (ys.numel() == 0) return y;
  const QConv d = dims_of(x.shape, weight, ys, options);
  const CpuTensor xc = contiguous(x), wc = contiguous(values);
  std::vector<std::uint8_t> q = quantize_padded(xc.data<float>(), d, input);
  Epilogue e = epilogue(scales, bias, d.o, input);
#ifdef EMBER_HAVE_DNNL
  if (std::getenv("EMBER_QUANT_CONV_DIRECT") == nullptr && dnnl_int8_exact() &&
      conv_dnnl(q, wc.data<std::int8_t>(), d, input, e, y.data<float>())) {
    return y;
  }
#endif
  conv_direct(q.data(), wc.data<std::int8_t>(), d, input, e, y.data<float>());
  return y;
}

}  // namespace ember::cpu
