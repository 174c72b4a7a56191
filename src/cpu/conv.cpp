// CPU conv1d/2d/3d, conv_transpose1d/2d/3d and the conv gradients (convKd_x_backward,
// convKd_weight_backward): one N-d implementation over up to three spatial dims, im2col
// (vol2col) + GEMM for the forward convolution and the weight gradient, GEMM + col2im for
// the transposed one and the input gradient; oneDNN first for f32 (conv_dnnl.cpp).
#include "ember/ir/conv.hpp"

#include <cstdlib>
#include <string>
#include <vector>

#include "conv_kernels.hpp"
#include "ember/cpu/ops_conv.hpp"

namespace ember::cpu {

namespace {

using conv::Geo;
using conv::i64;

ir::TensorType type_of(const CpuTensor& t) {
  return {t.shape, t.dtype};
}
std::optional<ir::TensorType> type_of(const std::optional<CpuTensor>& t) {
  if (!t) return std::nullopt;
  return type_of(*t);
}

/// Spatial parameters of an N-d op mapped to three dims (leading dims of size 1).
template <std::size_t N>
Geo make_geo(const Shape& in_spatial_of, std::size_t in_first, const Shape& w, std::size_t k_first,
             const std::array<i64, N>& s, const std::array<i64, N>& p,
             const std::array<i64, N>& d) {
  Geo g;
  for (std::size_t i = 0; i < N; ++i) {
    const std::size_t j = 3 - N + i;
    g.in[j] = in_spatial_of[in_first + i];
    g.k[j] = w[k_first + i];
    g.s[j] = s[i];
    g.p[j] = p[i];
    g.d[j] = d[i];
  }
  return g;
}

/// y[N, Cout, out] = conv(x[N, Cin, in], w[Cout, Cin/G, k]) (+ bias).
template <class T>
void conv_forward(const T* x, const T* w, const T* bias, T* y, i64 N, i64 Cin, i64 Cout, i64 G,
                  const Geo& geo) {
  const i64 Cin_g = Cin / G, Cout_g = Cout / G, K = geo.k_numel(), L = geo.out_numel();
  const i64 inS = geo.in_numel(), rowsK = Cin_g * K;
  const bool pointwise = geo.is_pointwise();
  Geo gg = geo;
  gg.C = Cin_g;
  const i64 work = Cout_g * L * rowsK;  // multiply-adds of one (image, group) GEMM
  auto one = [&](i64 n, i64 g, T* col) {
    const T* xg = x + (n * Cin + g * Cin_g) * inS;
    T* yg = y + (n * Cout + g * Cout_g) * L;
    T beta = T(0);
    if (bias) {
      for (i64 o = 0; o < Cout_g; ++o)
        std::fill(yg + o * L, yg + (o + 1) * L, bias[g * Cout_g + o]);
      beta = T(1);
    }
    const T* B = xg;
    if (!pointwise) {
      conv::im2col(xg, col, gg);
      B = col;
    }
    conv::gemm<T>(false, false, Cout_g, L, rowsK, T(1), w + g * Cout_g * rowsK, rowsK, B, L, beta,
                  yg, L);
  };
  const i64 col_size = pointwise ? 0 : rowsK * L;
  conv::run_jobs<T>(N * G, work, col_size, [&](i64 j, T* col) { one(j / G, j % G, col); });
}

/// y[N, Cout, out] = conv_transpose(x[N, Cin, in], w[Cin, Cout/G, k]) (+ bias); `geo`
/// describes the equivalent forward conv from y (geo.in) to x (geo.out).
template <class T>
void conv_transpose_forward(const T* x, const T* w, const T* bias, T* y, i64 N, i64 Cin, i64 Cout,
                            i64 G, const Geo& geo) {
  const i64 Cin_g = Cin / G, Cout_g = Cout / G, K = geo.k_numel(), Lx = geo.out_numel();
  const i64 Ly = geo.in_numel(), rowsK = Cout_g * K;
  Geo gg = geo;
  gg.C = Cout_g;
  std::fill(y, y + N * Cout * Ly, T(0));
  const i64 work = rowsK * Lx * Cin_g;
  auto one = [&](i64 n, i64 g, T* col) {
    const T* xg = x + (n * Cin + g * Cin_g) * Lx;
    T* yg = y + (n * Cout + g * Cout_g) * Ly;
    conv::gemm<T>(true, false, rowsK, Lx, Cin_g, T(1), w + g * Cin_g * rowsK, rowsK, xg, Lx, T(0),
                  col, Lx);
    conv::col2im(col, yg, gg);
    if (bias) {
      for (i64 o = 0; o < Cout_g; ++o) {
        const T b = bias[g * Cout_g + o];
        for (i64 i = 0; i < Ly; ++i) yg[o * Ly + i] += b;
      }
    }
  };
  const i64 col_size = rowsK * Lx;
  conv::run_jobs<T>(N * G, work, col_size, [&](i64 j, T* col) { one(j / G, j % G, col); });
}

/// dw[Cout, Cin/G, k] = sum_n dy[n] col(x[n])^T per group (im2col + GEMM). Images are split
/// into at most `threads()` contiguous ranges, each summed into its own buffer by one thread
/// with single-threaded BLAS; the buffers are added in range order, so the result does not
/// depend on scheduling.
template <class T>
void conv_weight_backward_gemm(const T* x, const T* dy, T* dw, i64 N, i64 Cin, i64 Cout, i64 G,
                               const Geo& geo) {
  const i64 Cin_g = Cin / G, Cout_g = Cout / G, K = geo.k_numel(), L = geo.out_numel();
  const i64 inS = geo.in_numel(), rowsK = Cin_g * K, wsize = Cout * rowsK;
  const bool pointwise = geo.is_pointwise();
  Geo gg = geo;
  gg.C = Cin_g;
  const int nt = threads();
  const i64 ranges = nt > 1 && N > 1 ? std::min<i64>(nt, N) : 1;
  std::vector<T> partial(static_cast<std::size_t>((ranges - 1) * wsize));
  auto sum_range = [&](i64 r) {
    T* acc = r == 0 ? dw : partial.data() + (r - 1) * wsize;
    std::fill(acc, acc + wsize, T(0));
    std::vector<T> col(static_cast<std::size_t>(pointwise ? 0 : rowsK * L));
    for (i64 n = N * r / ranges; n < N * (r + 1) / ranges; ++n) {
      for (i64 g = 0; g < G; ++g) {
        const T* xg = x + (n * Cin + g * Cin_g) * inS;
        const T* cols = xg;
        if (!pointwise) {
          conv::im2col(xg, col.data(), gg);
          cols = col.data();
        }
        // acc_g [Cout_g, rowsK] += dy[n, g] [Cout_g, L] * cols^T [L, rowsK]
        conv::gemm<T>(false, true, Cout_g, rowsK, L, T(1), dy + (n * Cout + g * Cout_g) * L, L,
                      cols, L, T(1), acc + g * Cout_g * rowsK, rowsK);
      }
    }
  };
  if (ranges == 1) {
    conv::BlasThreads guard(nt);
    sum_range(0);
    return;
  }
  {
    conv::BlasThreads guard(1);
    parallel_tasks(ranges, static_cast<int>(ranges), Schedule::Static, sum_range);
  }
  for (i64 r = 1; r < ranges; ++r) {
    const T* src = partial.data() + (r - 1) * wsize;
    for (i64 i = 0; i < wsize; ++i) dw[i] += src[i];
  }
}

/// oneDNN for f32 forward convolutions unless EMBER_CONV_IMPL=gemm (to compare or bisect).
bool use_dnnl() {
  static const bool on = [] {
    const char* v = std::getenv("EMBER_CONV_IMPL");
    return !(v && std::string(v) == "gemm");
  }();
  return on;
}

template <std::size_t N>
CpuTensor conv_nd(const CpuTensor& x0, const CpuTensor& w0, const std::optional<CpuTensor>& b0,
                  const ConvOptions<N>& opt) {
  const DType dt = x0.dtype, ct = conv::compute_dtype(dt);
  const CpuTensor x = conv::prepare(x0, ct), w = conv::prepare(w0, ct);
  const auto b = conv::prepare(b0, ct);
  // The output shape (and every check) is the description's (ember/ir/conv.hpp).
  const Shape out_shape = ir::Conv<N>{opt}.infer(type_of(x0), type_of(w0), type_of(b0)).shape;
  Geo geo = make_geo<N>(x.shape, 2, w.shape, 2, opt.stride, opt.padding, opt.dilation);
  for (std::size_t i = 0; i < N; ++i) geo.out[3 - N + i] = out_shape[2 + i];
  CpuTensor out = alloc(out_shape, ct);
  if (ct == DType::F32 && use_dnnl()) {
    const std::vector<i64> s(opt.stride.begin(), opt.stride.end()),
        p(opt.padding.begin(), opt.padding.end()), d(opt.dilation.begin(), opt.dilation.end());
    if (conv::dnnl_conv(x, w, b, out, s, p, d, opt.groups)) return conv::finish(std::move(out), dt);
  }
  conv::visit_compute(ct, [&]<class T>() {
    conv_forward<T>(x.data<T>(), w.data<T>(), b ? b->data<T>() : nullptr, out.data<T>(), x.shape[0],
                    x.shape[1], w.shape[0], opt.groups, geo);
  });
  return conv::finish(std::move(out), dt);
}

template <std::size_t N>
CpuTensor conv_transpose_nd(const CpuTensor& x0, const CpuTensor& w0,
                            const std::optional<CpuTensor>& b0,
                            const ConvTransposeOptions<N>& opt) {
  const DType dt = x0.dtype, ct = conv::compute_dtype(dt);
  const CpuTensor x = conv::prepare(x0, ct), w = conv::prepare(w0, ct);
  const auto b = conv::prepare(b0, ct);
  // The equivalent forward conv goes from y (geo.in) to x (geo.out).
  const Shape out_shape =
      ir::ConvTranspose<N>{opt}.infer(type_of(x0), type_of(w0), type_of(b0)).shape;
  Geo geo = make_geo<N>(x.shape, 2, w.shape, 2, opt.stride, opt.padding, opt.dilation);
  const i64 Cout = out_shape[1];
  for (std::size_t i = 0; i < N; ++i) {
    const std::size_t j = 3 - N + i;
    geo.out[j] = geo.in[j];
    geo.in[j] = out_shape[2 + i];
  }
  CpuTensor out = alloc(out_shape, ct);
  if (ct == DType::F32 && use_dnnl()) {
    const std::vector<i64> s(opt.stride.begin(), opt.stride.end()),
        p(opt.padding.begin(), opt.padding.end()), d(opt.dilation.begin(), opt.dilation.end());
    if (conv::dnnl_conv_transpose(x, w, b, out, s, p, d, opt.groups))
      return conv::finish(std::move(out), dt);
  }
  conv::visit_compute(ct, [&]<class T>() {
    conv_transpose_forward<T>(x.data<T>(), w.data<T>(), b ? b->data<T>() : nullptr, out.data<T>(),
                              x.shape[0], x.shape[1], Cout, opt.groups, geo);
  });
  return conv::finish(std::move(out), dt);
}

/// stride, padding and dilation of `opt` as the vectors conv_dnnl.cpp takes.
template <class O>
void dnnl_options(const O& opt, std::vector<i64>& s, std::vector<i64>& p, std::vector<i64>& d) {
  s.assign(opt.stride.begin(), opt.stride.end());
  p.assign(opt.padding.begin(), opt.padding.end());
  d.assign(opt.dilation.begin(), opt.dilation.end());
}

/// dx [x_shape] of y = conv(x, w): oneDNN backward-data, else a transposed conv of dy
/// (GEMM + col2im) with the forward conv's geometry (so rows of x past the last window get 0).
template <std::size_t N>
CpuTensor conv_x_backward_nd(const CpuTensor& dy0, const CpuTensor& w0, const Shape& xs,
                             const ConvOptions<N>& opt) {
  const DType dt = dy0.dtype, ct = conv::compute_dtype(dt);
  const CpuTensor dy = conv::prepare(dy0, ct), w = conv::prepare(w0, ct);
  Geo geo = make_geo<N>(xs, 2, w.shape, 2, opt.stride, opt.padding, opt.dilation);
  for (std::size_t i = 0; i < N; ++i) geo.out[3 - N + i] = dy.shape[2 + i];
  CpuTensor out = alloc(xs, ct);
  if (ct == DType::F32 && use_dnnl()) {
    std::vector<i64> s, p, d;
    dnnl_options(opt, s, p, d);
    if (conv::dnnl_conv_backward_data(dy, w, out, s, p, d, opt.groups))
      return conv::finish(std::move(out), dt);
  }
  conv::visit_compute(ct, [&]<class T>() {
    conv_transpose_forward<T>(dy.data<T>(), w.data<T>(), nullptr, out.data<T>(), xs[0], w.shape[0],
                              xs[1], opt.groups, geo);
  });
  return conv::finish(std::move(out), dt);
}

/// dw [w_shape] of y = conv(x, w): oneDNN backward-weights, else im2col + GEMM.
template <std::size_t N>
CpuTensor conv_weight_backward_nd(const CpuTensor& x0, const CpuTensor& dy0, const Shape& ws,
                                  const ConvOptions<N>& opt) {
  const DType dt = x0.dtype, ct = conv::compute_dtype(dt);
  const CpuTensor x = conv::prepare(x0, ct), dy = conv::prepare(dy0, ct);
  Geo geo = make_geo<N>(x.shape, 2, ws, 2, opt.stride, opt.padding, opt.dilation);
  for (std::size_t i = 0; i < N; ++i) geo.out[3 - N + i] = dy.shape[2 + i];
  CpuTensor out = alloc(ws, ct);
  if (ct == DType::F32 && use_dnnl()) {
    std::vector<i64> s, p, d;
    dnnl_options(opt, s, p, d);
    if (conv::dnnl_conv_backward_weights(x, dy, out, s, p, d, opt.groups))
      return conv::finish(std::move(out), dt);
  }
  conv::visit_compute(ct, [&]<class T>() {
    conv_weight_backward_gemm<T>(x.data<T>(), dy.data<T>(), out.data<T>(), x.shape[0], x.shape[1],
                                 dy.shape[1], opt.groups, geo);
  });
  return conv::finish(std::move(out), dt);
}

}  // namespace

CpuTensor ConvOps::conv1d(const P& x, const P& w, const OptP& b, const ConvOptions<1>& o) {
  return conv_nd<1>(x, w, b, o);
}
CpuTensor ConvOps::conv2d(const P& x, const P& w, const OptP& b, const ConvOptions<2>& o) {
  return conv_nd<2>(x, w, b, o);
}
CpuTensor ConvOps::conv3d(const P& x, const P& w, const OptP& b, const ConvOptions<3>& o) {
  return conv_nd<3>(x, w, b, o);
}
CpuTensor ConvOps::conv_transpose1d(const P& x, const P& w, const OptP& b,
                                    const ConvTransposeOptions<1>& o) {
  return conv_transpose_nd<1>(x, w, b, o);
}
CpuTensor ConvOps::conv_transpose2d(const P& x, const P& w, const OptP& b,
                                    const ConvTransposeOptions<2>& o) {
  return conv_transpose_nd<2>(x, w, b, o);
}
CpuTensor ConvOps::conv_transpose3d(const P& x, const P& w, const OptP& b,
                                    const ConvTransposeOptions<3>& o) {
  return conv_transpose_nd<3>(x, w, b, o);
}

CpuTensor ConvOps::conv1d_x_backward(const P& dy, const P& w, const Shape& xs,
                                     const ConvOptions<1>& o) {
  return conv_x_backward_nd<1>(dy, w, xs, o);
}
CpuTensor ConvOps::conv2d_x_backward(const P& dy, const P& w, const Shape& xs,
                                     const ConvOptions<2>& o) {
  return conv_x_backward_nd<2>(dy, w, xs, o);
}
CpuTensor ConvOps::conv3d_x_backward(const P& dy, const P& w, const Shape& xs,
                                     const ConvOptions<3>& o) {
  return conv_x_backward_nd<3>(dy, w, xs, o);
}
CpuTensor ConvOps::conv1d_weight_backward(const P& x, const P& dy, const Shape& ws,
                                          const ConvOptions<1>& o) {
  return conv_weight_backward_nd<1>(x, dy, ws, o);
}
CpuTensor ConvOps::conv2d_weight_backward(const P& x, const P& dy, const Shape& ws,
                                          const ConvOptions<2>& o) {
  return conv_weight_backward_nd<2>(x, dy, ws, o);
}
CpuTensor ConvOps::conv3d_weight_backward(const P& x, const P& dy, const Shape& ws,
                                          const ConvOptions<3>& o) {
  return conv_weight_backward_nd<3>(x, dy, ws, o);
}

// ---- unfold4d / fold4d ------------------------------------------------------------------

namespace {
Geo unfold_geo(i64 C, i64 H, i64 W, const std::array<i64, 2>& k, const UnfoldOptions& o) {
  Geo g;
  g.C = C;
  g.in = {1, H, W};
  g.k = {1, k[0], k[1]};
  g.s = {1, o.stride[0], o.stride[1]};
  g.p = {0, o.padding[0], o.padding[1]};
  g.d = {1, o.dilation[0], o.dilation[1]};
  for (int i = 1; i < 3; ++i)
    g.out[i] = (g.in[i] + 2 * g.p[i] - g.d[i] * (g.k[i] - 1) - 1) / g.s[i] + 1;
  return g;
}
}  // namespace

CpuTensor ConvOps::unfold4d(const P& x0, const std::array<i64, 2>& k, const UnfoldOptions& o) {
  const DType dt = x0.dtype, ct = conv::compute_dtype(dt);
  const CpuTensor x = conv::prepare(x0, ct);
  const i64 N = x.shape[0], C = x.shape[1];
  const Geo g = unfold_geo(C, x.shape[2], x.shape[3], k, o);
  const i64 rows = C * g.k_numel(), L = g.out_numel();
  CpuTensor out = alloc(Shape{N, rows, L}, ct);
  conv::visit_compute(ct, [&]<class T>() {
    // Parallel over images when there are enough, else inside im2col.
    const i64 grain = N >= threads() ? 1 : N + 1;
    parallel_for(
        N, std::max<i64>(grain, kParallelGrain / std::max<i64>(rows * L, 1)), [&](i64 b, i64 e) {
          for (i64 n = b; n < e; ++n)
            conv::im2col(x.data<T>() + n * C * g.in_numel(), out.data<T>() + n * rows * L, g);
        });
  });
  return conv::finish(std::move(out), dt);
}

CpuTensor ConvOps::fold4d(const P& x0, const std::array<i64, 2>& output_size,
                          const std::array<i64, 2>& k, const UnfoldOptions& o) {
  const DType dt = x0.dtype, ct = conv::compute_dtype(dt);
  const CpuTensor x = conv::prepare(x0, ct);
  const i64 N = x.shape[0], C = x.shape[1] / (k[0] * k[1]);
  const Geo g = unfold_geo(C, output_size[0], output_size[1], k, o);
  const i64 rows = x.shape[1], L = x.shape[2], S = g.in_numel();
  CpuTensor out = alloc(Shape{N, C, output_size[0], output_size[1]}, ct);
  conv::visit_compute(ct, [&]<class T>() {
    T* y = out.data<T>();
    std::fill(y, y + N * C * S, T(0));
    const i64 grain = N >= threads() ? 1 : N + 1;
    parallel_for(N, std::max<i64>(grain, kParallelGrain / std::max<i64>(rows * L, 1)),
                 [&](i64 b, i64 e) {
                   for (i64 n = b; n < e; ++n)
                     conv::col2im(x.data<T>() + n * rows * L, y + n * C * S, g);
                 });
  });
  return conv::finish(std::move(out), dt);
}

}  // namespace ember::cpu
