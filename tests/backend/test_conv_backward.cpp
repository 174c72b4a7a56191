// The CPU backend's optional conv gradient functions (convKd_x_backward,
// convKd_weight_backward; ember/backend/conv.hpp) against a direct f64 evaluation of the
// formulas, over a grid of options (stride, padding, dilation, groups; sizes where the
// stride does not divide, so rows of x past the last window get no gradient), for 1d, 2d
// and 3d, f32 (oneDNN's backward-data / backward-weights primitives), f64 (GEMM + col2im /
// im2col + GEMM), bf16 (through f32) and a non-contiguous input. Also checks that
// Autodiff<Cpu> uses them: the gradients of a backward pass match those of the composite
// rules (run under create_graph).
//
// Tolerances (|a - b| <= abs + rel |b|): f64 rel 1e-12 / abs 1e-12; f32 rel 1e-5 / abs 1e-4
// (values and weights in [-1, 1], up to ~1000 products per sum: partial sums reach ~10 and
// cancel, so the absolute error is a few f32 ulps of 10); bf16 rel 1e-2 / abs 2e-2 (8-bit
// mantissa of the result).
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "ember/autodiff/cpu.hpp"
#include "ember/cpu/cpu.hpp"
#include "ember/tensor/module/conv.hpp"
#include "fixtures.hpp"

using namespace ember;
using ember::test::expect_approx;

namespace {

using i64 = std::int64_t;

static_assert(HasConvBackward<Cpu, 1> && HasConvBackward<Cpu, 2> && HasConvBackward<Cpu, 3>);

/// Deterministic values in [-1, 1].
std::vector<double> values(i64 n, std::uint64_t seed) {
  std::vector<double> v(static_cast<std::size_t>(n));
  std::uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  for (auto& x : v) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    x = static_cast<double>(s >> 11) / static_cast<double>(1ull << 53) * 2.0 - 1.0;
  }
  return v;
}

/// One conv case: x [N, Ci, *S], w [Co, Ci/G, *k], options; dy [N, Co, *So].
template <std::size_t K>
struct Case {
  Shape xs, ws;
  ConvOptions<K> o;

  Shape ys() const {
    Shape s{xs[0], ws[0]};
    for (std::size_t i = 0; i < K; ++i) {
      const i64 ker = o.dilation[i] * (ws[2 + i] - 1) + 1;
      s.dims.push_back((xs[2 + i] + 2 * o.padding[i] - ker) / o.stride[i] + 1);
    }
    return s;
  }
  std::string name() const {
    std::string r = "x" + xs.to_string() + " w" + ws.to_string() + " s";
    for (auto v : o.stride) r += std::to_string(v);
    r += " p";
    for (auto v : o.padding) r += std::to_string(v);
    r += " d";
    for (auto v : o.dilation) r += std::to_string(v);
    return r + " g" + std::to_string(o.groups);
  }
};

/// Calls f(n, co, ci, flat x index, flat y index, flat w index) for every term of the conv
/// sum y[n, co, o] += w[co, ci', k] x[n, ci, o*s + k*d - p] that lies inside x.
template <std::size_t K, class F>
void for_each_term(const Case<K>& c, F&& f) {
  const Shape xs = c.xs, ws = c.ws, ys = c.ys();
  const i64 N = xs[0], Ci = xs[1], Co = ws[0], G = c.o.groups, cig = Ci / G, cog = Co / G;
  std::array<i64, 3> S{1, 1, 1}, So{1, 1, 1}, Kk{1, 1, 1}, st{1, 1, 1}, pd{0, 0, 0}, dl{1, 1, 1};
  for (std::size_t i = 0; i < K; ++i) {
    const std::size_t j = 3 - K + i;
    S[j] = xs[2 + i], So[j] = ys[2 + i], Kk[j] = ws[2 + i];
    st[j] = c.o.stride[i], pd[j] = c.o.padding[i], dl[j] = c.o.dilation[i];
  }
  for (i64 n = 0; n < N; ++n)
    for (i64 co = 0; co < Co; ++co)
      for (i64 cl = 0; cl < cig; ++cl) {
        const i64 ci = (co / cog) * cig + cl;
        for (i64 o0 = 0; o0 < So[0]; ++o0)
          for (i64 o1 = 0; o1 < So[1]; ++o1)
            for (i64 o2 = 0; o2 < So[2]; ++o2)
              for (i64 k0 = 0; k0 < Kk[0]; ++k0)
                for (i64 k1 = 0; k1 < Kk[1]; ++k1)
                  for (i64 k2 = 0; k2 < Kk[2]; ++k2) {
                    const i64 i0 = o0 * st[0] + k0 * dl[0] - pd[0];
                    const i64 i1 = o1 * st[1] + k1 * dl[1] - pd[1];
                    const i64 i2 = o2 * st[2] + k2 * dl[2] - pd[2];
                    if (i0 < 0 || i0 >= S[0] || i1 < 0 || i1 >= S[1] || i2 < 0 || i2 >= S[2])
                      continue;
                    const i64 xi = (((n * Ci + ci) * S[0] + i0) * S[1] + i1) * S[2] + i2;
                    const i64 yi = (((n * Co + co) * So[0] + o0) * So[1] + o1) * So[2] + o2;
                    const i64 wi = (((co * cig + cl) * Kk[0] + k0) * Kk[1] + k1) * Kk[2] + k2;
                    f(xi, yi, wi);
                  }
      }
}

template <std::size_t K>
CpuTensor x_backward(const CpuTensor& dy, const CpuTensor& w, const Shape& xs,
                     const ConvOptions<K>& o) {
  if constexpr (K == 1)
    return Cpu::conv_x_backward<1>(dy, w, xs, o);
  else if constexpr (K == 2)
    return Cpu::conv_x_backward<2>(dy, w, xs, o);
  else
    return Cpu::conv_x_backward<3>(dy, w, xs, o);
}
template <std::size_t K>
CpuTensor weight_backward(const CpuTensor& x, const CpuTensor& dy, const Shape& ws,
                          const ConvOptions<K>& o) {
  if constexpr (K == 1)
    return Cpu::conv_weight_backward<1>(x, dy, ws, o);
  else if constexpr (K == 2)
    return Cpu::conv_weight_backward<2>(x, dy, ws, o);
  else
    return Cpu::conv_weight_backward<3>(x, dy, ws, o);
}

/// Runs both functions for case `c` in dtype `dt` and compares with the f64 formulas.
template <std::size_t K>
void check_case(const Case<K>& c, DType dt, Tolerance tol, std::uint64_t seed) {
  SCOPED_TRACE(c.name() + " " + std::string(dtype_name(dt)));
  const Shape ys = c.ys();
  const auto xv = values(c.xs.numel(), seed), wv = values(c.ws.numel(), seed + 1),
             gv = values(ys.numel(), seed + 2);
  std::vector<double> dx(xv.size(), 0.0), dw(wv.size(), 0.0);
  for_each_term<K>(c, [&](i64 xi, i64 yi, i64 wi) {
    dx[static_cast<std::size_t>(xi)] +=
        gv[static_cast<std::size_t>(yi)] * wv[static_cast<std::size_t>(wi)];
    dw[static_cast<std::size_t>(wi)] +=
        gv[static_cast<std::size_t>(yi)] * xv[static_cast<std::size_t>(xi)];
  });
  const auto make = [&](const std::vector<double>& v, const Shape& s) {
    return Cpu::float_from_data(TensorData(v, s).convert(dt), {});
  };
  const CpuTensor x = make(xv, c.xs), w = make(wv, c.ws), dy = make(gv, ys);
  const CpuTensor gx = x_backward<K>(dy, w, c.xs, c.o);
  const CpuTensor gw = weight_backward<K>(x, dy, c.ws, c.o);
  ASSERT_EQ(gx.dtype, dt);
  ASSERT_EQ(gw.dtype, dt);
  expect_approx(Cpu::float_into_data(gx).convert(DType::F64), TensorData(dx, c.xs), tol);
  expect_approx(Cpu::float_into_data(gw).convert(DType::F64), TensorData(dw, c.ws), tol);
}

template <std::size_t K>
ConvOptions<K> opts(i64 s, i64 p, i64 d, i64 g) {
  ConvOptions<K> o;
  o.stride.fill(s);
  o.padding.fill(p);
  o.dilation.fill(d);
  o.groups = g;
  return o;
}

/// The option grid of one rank: x spatial size 7 (stride 2 and 3 do not divide), kernel 3.
template <std::size_t K>
std::vector<Case<K>> grid() {
  std::vector<Case<K>> cases;
  const auto shape = [](i64 n, i64 c, i64 size) {
    Shape s{n, c};
    for (std::size_t i = 0; i < K; ++i) s.dims.push_back(size);
    return s;
  };
  for (i64 s : {1, 2, 3})
    for (i64 p : {0, 1})
      for (i64 d : {1, 2})
        for (i64 g : {1, 2}) {
          const i64 size = K == 3 ? 6 : 7;
          if (size + 2 * p < d * 2 + 1) continue;
          cases.push_back({shape(3, 4, size), shape(6, 4 / g, 3), opts<K>(s, p, d, g)});
        }
  // A 1x1 kernel (pointwise path), a single input channel (the CNN's first layer) and a
  // depthwise conv (oneDNN declines it: the GEMM path in f32 too).
  cases.push_back({shape(2, 3, 5), shape(4, 3, 1), opts<K>(1, 0, 1, 1)});
  cases.push_back({shape(5, 1, 6), shape(8, 1, 3), opts<K>(1, 1, 1, 1)});
  cases.push_back({shape(2, 4, 6), shape(4, 1, 3), opts<K>(1, 1, 1, 4)});
  return cases;
}

template <std::size_t K>
void check_grid(DType dt, Tolerance tol) {
  std::uint64_t seed = 1;
  for (const auto& c : grid<K>()) check_case<K>(c, dt, tol, seed += 3);
}

const Tolerance kF64 = Tolerance::rel_abs(1e-12, 1e-12);
const Tolerance kF32 = Tolerance::rel_abs(1e-5, 1e-4);
const Tolerance kBF16 = Tolerance::rel_abs(1e-2, 2e-2);

}  // namespace

TEST(ConvBackward, Conv1dF32) {
  check_grid<1>(DType::F32, kF32);
}
TEST(ConvBackward, Conv2dF32) {
  check_grid<2>(DType::F32, kF32);
}
TEST(ConvBackward, Conv3dF32) {
  check_grid<3>(DType::F32, kF32);
}
TEST(ConvBackward, Conv1dF64) {
  check_grid<1>(DType::F64, kF64);
}
TEST(ConvBackward, Conv2dF64) {
  check_grid<2>(DType::F64, kF64);
}
TEST(ConvBackward, Conv3dF64) {
  check_grid<3>(DType::F64, kF64);
}
TEST(ConvBackward, Conv2dBF16) {
  check_case<2>({Shape{2, 4, 7, 7}, Shape{6, 2, 3, 3}, opts<2>(2, 1, 1, 2)}, DType::BF16, kBF16, 7);
}

// The CNN's second layer at a small batch: enough work for the threaded paths.
TEST(ConvBackward, CnnLayerShapes) {
  check_case<2>({Shape{8, 32, 14, 14}, Shape{64, 32, 3, 3}, opts<2>(1, 1, 1, 1)}, DType::F32,
                Tolerance::rel_abs(1e-4, 1e-4), 11);
  check_case<2>({Shape{8, 32, 14, 14}, Shape{64, 32, 3, 3}, opts<2>(1, 1, 1, 1)}, DType::F64, kF64,
                12);
}

TEST(ConvBackward, EmptyBatch) {
  const auto o = opts<2>(1, 1, 1, 1);
  const CpuTensor x = Cpu::float_full(Shape{0, 2, 5, 5}, 0.0, {}, DType::F32);
  const CpuTensor dy = Cpu::float_full(Shape{0, 3, 5, 5}, 0.0, {}, DType::F32);
  const CpuTensor w = Cpu::float_full(Shape{3, 2, 3, 3}, 1.0, {}, DType::F32);
  EXPECT_EQ(Cpu::conv_x_backward<2>(dy, w, Shape{0, 2, 5, 5}, o).shape, (Shape{0, 2, 5, 5}));
  const CpuTensor gw = Cpu::conv_weight_backward<2>(x, dy, Shape{3, 2, 3, 3}, o);
  expect_approx(Cpu::float_into_data(gw),
                TensorData(std::vector<float>(54, 0.0f), Shape{3, 2, 3, 3}));
}

// A permuted (channels-last) view as x and a transposed view as dy.
TEST(ConvBackward, NonContiguousInputs) {
  const Case<2> c{Shape{2, 3, 5, 6}, Shape{4, 3, 3, 3}, opts<2>(1, 1, 1, 1)};
  const Shape ys = c.ys();
  const auto xv = values(c.xs.numel(), 21), gv = values(ys.numel(), 22);
  const CpuTensor x = Cpu::float_from_data(TensorData(xv, c.xs).convert(DType::F32), {});
  const CpuTensor dy = Cpu::float_from_data(TensorData(gv, ys).convert(DType::F32), {});
  const CpuTensor w =
      Cpu::float_from_data(TensorData(values(c.ws.numel(), 23), c.ws).convert(DType::F32), {});
  // Same values, stored [N, H, W, C] / [N, C, W, H] and viewed as NCHW.
  const auto stored_as = [](const CpuTensor& t, const std::vector<std::size_t>& perm,
                            const std::vector<std::size_t>& back) {
    return Cpu::float_permute(
        Cpu::float_from_data(Cpu::float_into_data(Cpu::float_permute(t, perm)), {}), back);
  };
  const CpuTensor x_nhwc = stored_as(x, {0, 2, 3, 1}, {0, 3, 1, 2});
  const CpuTensor dy_t = stored_as(dy, {0, 1, 3, 2}, {0, 1, 3, 2});
  ASSERT_FALSE(x_nhwc.is_contiguous());
  ASSERT_FALSE(dy_t.is_contiguous());
  expect_approx(Cpu::float_into_data(Cpu::conv_weight_backward<2>(x_nhwc, dy_t, c.ws, c.o)),
                Cpu::float_into_data(Cpu::conv_weight_backward<2>(x, dy, c.ws, c.o)), kF32);
  expect_approx(Cpu::float_into_data(Cpu::conv_x_backward<2>(dy_t, w, c.xs, c.o)),
                Cpu::float_into_data(Cpu::conv_x_backward<2>(dy, w, c.xs, c.o)), kF32);
}

// Autodiff<Cpu>'s conv and transposed-conv rules: a plain backward pass (the backend's
// gradient functions) against a create_graph pass (the composite rules), f32.
TEST(ConvBackward, AutodiffUsesThemAndAgreesWithComposite) {
  using AD = Autodiff<Cpu>;
  const auto t = [](const Shape& s, std::uint64_t seed) {
    return Tensor<AD, 4>::from_data(TensorData(values(s.numel(), seed), s).convert(DType::F32));
  };
  const auto x = t(Shape{3, 4, 9, 8}, 31).require_grad();
  const auto w = t(Shape{6, 2, 3, 3}, 32).require_grad();
  const auto wt = t(Shape{4, 3, 3, 3}, 33).require_grad();
  const auto b = Tensor<AD, 1>::from_data(TensorData(values(6, 34), Shape{6}).convert(DType::F32))
                     .require_grad();
  const ConvOptions<2> o{{2, 1}, {1, 0}, {1, 2}, 2};
  const ConvTransposeOptions<2> ot{{2, 2}, {1, 1}, {1, 0}, {1, 1}, 1};
  const auto loss = [&] {
    auto y = module::conv2d(x, w, b, o);
    auto z = module::conv_transpose2d(x, wt, std::nullopt, ot);
    return y.mul(y).sum().add(z.mul(z).sum());
  };
  const auto fast = loss().backward();
  const auto composite = loss().backward(/*create_graph=*/true);
  for (const auto* p : {&x, &w, &wt}) {
    expect_approx(p->grad(fast)->into_data(), p->grad(composite)->into_data(),
                  Tolerance::rel_abs(1e-5, 1e-4));
  }
  expect_approx(b.grad(fast)->into_data(), b.grad(composite)->into_data(),
                Tolerance::rel_abs(1e-5, 1e-4));
}
