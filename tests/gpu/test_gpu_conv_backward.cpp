// The convolution gradients on the device (src/gpu/conv_backward.cpp: implicit matrix
// products): conv_x_backward, conv_weight_backward and the transposed convolution against the
// CPU backend for 1-3 spatial dims, strides, padding, dilation, groups, output padding,
// strided views, f16/bf16/f64 and empty tensors, with no call through the host.
#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "ember/tensor/tensor.hpp"
#include "fixtures.hpp"
#include "gpu_backends.hpp"
#include "gpu_test_util.hpp"

using namespace ember;
using ember::test::expect_approx;
using ember::test::host_calls;
using ember::test::spread;

template <class B>
class GpuConvTest : public ::testing::Test {};
TYPED_TEST_SUITE(GpuConvTest, ember::test::GpuConformanceBackends, ember::test::GpuNames);

namespace {

/// f32: sums of up to a few thousand products of values below 2 (gpu_test_util.hpp).
Tolerance tolerance(DType dt) {
  return ember::test::sum_tolerance(dt);
}

/// Values of `shape` spread over [lo, hi] in dtype dt, on backend B; with `view`, a strided
/// view (the last two dims stored swapped) holding the same values on every backend.
template <class B, std::size_t D>
typename B::FloatTensor make(const Shape& shape, float lo, float hi, DType dt, bool view) {
  Shape stored = shape;
  if constexpr (D >= 2)
    if (view) std::swap(stored.dims[D - 2], stored.dims[D - 1]);
  const TensorData d =
      TensorData(spread(static_cast<std::size_t>(shape.numel()), lo, hi), stored).convert(dt);
  auto t = Tensor<B, D>::from_data(d);
  if constexpr (D >= 2)
    if (view) return t.swap_dims(D - 2, D - 1).primitive();
  return t.primitive();
}

/// Expects B's conv_x_backward and conv_weight_backward of a convolution of x (x_shape) with
/// a weight (w_shape) to give the CPU backend's values, within `tol` of the dtype.
template <class B, std::size_t N>
void expect_grads_like_cpu(const Shape& xs, const Shape& ws, const ConvOptions<N>& o, DType dt,
                           bool views = false) {
  constexpr std::size_t D = N + 2;
  const auto cx = make<Cpu, D>(xs, -2, 2, dt, views), cw = make<Cpu, D>(ws, -1, 1, dt, false);
  const auto gx = make<B, D>(xs, -2, 2, dt, views), gw = make<B, D>(ws, -1, 1, dt, false);
  const Shape ys = Cpu::float_shape(Cpu::template conv<N>(cx, cw, std::nullopt, o));
  const auto cdy = make<Cpu, D>(ys, -1, 1, dt, views);
  const auto gdy = make<B, D>(ys, -1, 1, dt, views);
  const Tolerance tol = tolerance(dt);
  const TensorData dx = B::float_into_data(B::template conv_x_backward<N>(gdy, gw, xs, o));
  expect_approx(dx, Cpu::float_into_data(Cpu::template conv_x_backward<N>(cdy, cw, xs, o)), tol);
  EXPECT_EQ(dx.dtype(), dt);
  const TensorData dw = B::float_into_data(B::template conv_weight_backward<N>(gx, gdy, ws, o));
  expect_approx(dw, Cpu::float_into_data(Cpu::template conv_weight_backward<N>(cx, cdy, ws, o)),
                tol);
  EXPECT_EQ(dw.dtype(), dt);
  EXPECT_EQ(dw.shape(), ws);
}

template <std::size_t N>
ConvOptions<N> options(std::array<std::int64_t, N> s, std::array<std::int64_t, N> p,
                       std::array<std::int64_t, N> d, std::int64_t groups) {
  ConvOptions<N> o;
  o.stride = s;
  o.padding = p;
  o.dilation = d;
  o.groups = groups;
  return o;
}

bool device_has(DType dt, const GpuTensor& t) {
  return gpu::native_dtype(dt, t.compute());
}

}  // namespace

// A 1-d case worked by hand: x = [1, 2, 3], w = [1, 1] (one channel), dy = [1, 1]:
// dx[i] = sum_o dy[o] w[i - o] = [1, 2, 1]; dw[k] = sum_o dy[o] x[o + k] = [3, 5].
TYPED_TEST(GpuConvTest, GradientsOfASmallConvolutionByHand) {
  using B = TypeParam;
  const auto x = Tensor<B, 3>::from_data(TensorData(std::vector<float>{1, 2, 3}, Shape{1, 1, 3}));
  const auto w = Tensor<B, 3>::from_data(TensorData(std::vector<float>{1, 1}, Shape{1, 1, 2}));
  const auto dy = Tensor<B, 3>::from_data(TensorData(std::vector<float>{1, 1}, Shape{1, 1, 2}));
  const std::uint64_t before = host_calls();
  const ConvOptions<1> o;
  EXPECT_EQ(B::float_into_data(
                B::template conv_x_backward<1>(dy.primitive(), w.primitive(), Shape{1, 1, 3}, o))
                .template to_vec<float>(),
            (std::vector<float>{1, 2, 1}));
  EXPECT_EQ(B::float_into_data(B::template conv_weight_backward<1>(x.primitive(), dy.primitive(),
                                                                   Shape{1, 1, 2}, o))
                .template to_vec<float>(),
            (std::vector<float>{3, 5}));
  EXPECT_EQ(host_calls(), before);
}

// 1-d, 2-d and 3-d gradients with strides, padding, dilation and groups (depthwise included),
// tiles of every width (4, 2 and 1 results per thread along each side), in f32.
TYPED_TEST(GpuConvTest, GradientsMatchTheCpuInEveryRank) {
  using B = TypeParam;
  const std::uint64_t before = host_calls();
  const DType f = DType::F32;
  {
    SCOPED_TRACE("1d");
    expect_grads_like_cpu<B, 1>(Shape{2, 6, 11}, Shape{4, 3, 3}, options<1>({2}, {1}, {2}, 2), f);
    expect_grads_like_cpu<B, 1>(Shape{3, 5, 20}, Shape{7, 5, 4}, options<1>({1}, {0}, {1}, 1), f);
    expect_grads_like_cpu<B, 1>(Shape{2, 4, 9}, Shape{4, 1, 5}, options<1>({3}, {4}, {1}, 4), f);
  }
  {
    SCOPED_TRACE("2d");
    expect_grads_like_cpu<B, 2>(Shape{2, 4, 9, 7}, Shape{6, 2, 3, 2},
                                options<2>({2, 1}, {1, 0}, {1, 2}, 2), f);
    // 70 input and 66 output channels: 64-wide tiles, several tiles along each side.
    expect_grads_like_cpu<B, 2>(Shape{2, 70, 10, 9}, Shape{66, 70, 3, 3},
                                options<2>({1, 1}, {1, 1}, {1, 1}, 1), f);
    expect_grads_like_cpu<B, 2>(Shape{3, 40, 6, 5}, Shape{36, 20, 2, 3},
                                options<2>({1, 2}, {0, 1}, {2, 1}, 2), f);
    expect_grads_like_cpu<B, 2>(Shape{2, 8, 6, 6}, Shape{8, 1, 3, 3},
                                options<2>({2, 2}, {1, 1}, {1, 1}, 8), f);  // depthwise
    // A kernel larger than the padded input along one dim's stride: taps that reach nothing.
    expect_grads_like_cpu<B, 2>(Shape{1, 3, 5, 4}, Shape{2, 3, 4, 1},
                                options<2>({3, 4}, {2, 0}, {1, 1}, 1), f);
  }
  {
    SCOPED_TRACE("3d");
    expect_grads_like_cpu<B, 3>(Shape{2, 4, 5, 6, 7}, Shape{6, 2, 2, 3, 2},
                                options<3>({1, 2, 2}, {1, 0, 1}, {2, 1, 1}, 2), f);
    expect_grads_like_cpu<B, 3>(Shape{1, 3, 4, 5, 6}, Shape{2, 3, 3, 3, 3},
                                options<3>({1, 1, 1}, {1, 1, 1}, {1, 1, 1}, 1), f);
  }
  EXPECT_EQ(host_calls(), before);
}

// Strided views as inputs (the last two dims stored swapped), f16/bf16 (f32 accumulation,
// one rounding) and f64, and the weight gradient over a long reduction (80,000 output
// positions: several slices on every device, llvmpipe's loop limit included).
TYPED_TEST(GpuConvTest, GradientsOfViewsHalfDoubleAndLongReductions) {
  using B = TypeParam;
  const std::uint64_t before = host_calls();
  expect_grads_like_cpu<B, 2>(Shape{2, 6, 7, 5}, Shape{4, 3, 3, 3},
                              options<2>({2, 1}, {1, 1}, {1, 2}, 2), DType::F32, true);
  expect_grads_like_cpu<B, 1>(Shape{2, 6, 9}, Shape{4, 6, 3}, options<1>({1}, {1}, {1}, 1),
                              DType::F32, true);
  const auto probe = Tensor<B, 1>::from_data(TensorData(std::vector<float>{0}, Shape{1}));
  for (DType dt : {DType::F16, DType::BF16, DType::F64}) {
    if (!device_has(dt, probe.primitive())) continue;  // the host path serves it
    SCOPED_TRACE(dtype_name(dt));
    expect_grads_like_cpu<B, 2>(Shape{2, 4, 9, 7}, Shape{6, 2, 3, 2},
                                options<2>({2, 1}, {1, 0}, {1, 2}, 2), dt);
    expect_grads_like_cpu<B, 3>(Shape{1, 2, 4, 5, 3}, Shape{3, 2, 2, 2, 2},
                                options<3>({1, 2, 1}, {0, 1, 1}, {1, 1, 2}, 1), dt, true);
  }
  {
    SCOPED_TRACE("long reduction");
    const Shape xs{2, 2, 200, 200}, ws{2, 2, 3, 3};
    const ConvOptions<2> o = options<2>({1, 1}, {1, 1}, {1, 1}, 1);
    const Shape ys{2, 2, 200, 200};
    const auto gx = make<B, 4>(xs, -1, 1, DType::F32, false);
    const auto gdy = make<B, 4>(ys, -1, 1, DType::F32, false);
    // Sums of 80,000 products of values below 1, reaching 2.7e4 (x and dy hold the same
    // values): against the CPU's f64 gradient of the same (exactly widened) values, within
    // f32 summation error (bounded by 80,000 x 6e-8 = 5e-3 relative; llvmpipe's few slices
    // measure 1.2e-4, and the CPU's own f32 result is 1.1e-4 off).
    const TensorData ref = Cpu::float_into_data(
        Cpu::template conv_weight_backward<2>(make<Cpu, 4>(xs, -1, 1, DType::F64, false),
                                              make<Cpu, 4>(ys, -1, 1, DType::F64, false), ws, o));
    expect_approx(B::float_into_data(B::template conv_weight_backward<2>(gx, gdy, ws, o)),
                  ref.convert(DType::F32), Tolerance::rel_abs(5e-4, 1e-2));
    for (DType dt : {DType::F16, DType::F64}) {
      if (!device_has(dt, probe.primitive())) continue;
      const auto cx2 = make<Cpu, 4>(xs, -1, 1, dt, false), gx2 = make<B, 4>(xs, -1, 1, dt, false);
      const auto cdy2 = make<Cpu, 4>(ys, -1, 1, dt, false);
      const auto gdy2 = make<B, 4>(ys, -1, 1, dt, false);
      expect_approx(
          B::float_into_data(B::template conv_weight_backward<2>(gx2, gdy2, ws, o)),
          Cpu::float_into_data(Cpu::template conv_weight_backward<2>(cx2, cdy2, ws, o)),
          dt == DType::F64 ? Tolerance::rel_abs(1e-10, 1e-10) : Tolerance::rel_abs(1e-2, 1e-1));
    }
  }
  EXPECT_EQ(host_calls(), before);
}

// The transposed convolution (the input gradient's kernel) with output padding, groups,
// dilation and a bias, in 1-3 spatial dims.
TYPED_TEST(GpuConvTest, TransposedConvolutionsMatchTheCpu) {
  using B = TypeParam;
  const std::uint64_t before = host_calls();
  const auto check = [](auto n_tag, const Shape& xs, const Shape& ws, auto o) {
    constexpr std::size_t N = decltype(n_tag)::value;
    const auto cx = make<Cpu, N + 2>(xs, -2, 2, DType::F32, false);
    const auto gx = make<B, N + 2>(xs, -2, 2, DType::F32, false);
    const auto cw = make<Cpu, N + 2>(ws, -1, 1, DType::F32, false);
    const auto gw = make<B, N + 2>(ws, -1, 1, DType::F32, false);
    const Shape bs(std::vector<std::int64_t>{ws.dims[1] * o.groups});
    const auto cb = make<Cpu, 1>(bs, -0.5, 0.5, DType::F32, false);
    const auto gb = make<B, 1>(bs, -0.5, 0.5, DType::F32, false);
    expect_approx(B::float_into_data(B::template conv_transpose<N>(gx, gw, gb, o)),
                  Cpu::float_into_data(Cpu::template conv_transpose<N>(cx, cw, cb, o)),
                  Tolerance::rel_abs(1e-4, 1e-4));
  };
  ConvTransposeOptions<1> t1;
  t1.stride = {3};
  t1.padding = {1};
  t1.padding_out = {2};
  t1.dilation = {2};
  t1.groups = 2;
  check(std::integral_constant<std::size_t, 1>{}, Shape{2, 4, 6}, Shape{4, 3, 3}, t1);
  ConvTransposeOptions<2> t2;
  t2.stride = {2, 1};
  t2.padding = {1, 0};
  t2.padding_out = {1, 0};
  t2.dilation = {1, 2};
  t2.groups = 1;
  check(std::integral_constant<std::size_t, 2>{}, Shape{2, 5, 4, 3}, Shape{5, 3, 3, 2}, t2);
  ConvTransposeOptions<3> t3;
  t3.stride = {2, 2, 1};
  t3.padding = {0, 1, 1};
  t3.padding_out = {1, 0, 0};
  t3.groups = 3;
  check(std::integral_constant<std::size_t, 3>{}, Shape{1, 6, 3, 4, 2}, Shape{6, 2, 2, 3, 3}, t3);
  EXPECT_EQ(host_calls(), before);
}

// Empty tensors: an empty batch gives an empty input gradient and a zero weight gradient.
TYPED_TEST(GpuConvTest, GradientsOfEmptyTensors) {
  using B = TypeParam;
  const std::uint64_t before = host_calls();
  const ConvOptions<2> o = options<2>({1, 1}, {1, 1}, {1, 1}, 2);
  const auto gx = Tensor<B, 4>::from_data(TensorData(std::vector<float>{}, Shape{0, 4, 5, 5}));
  const auto gdy = Tensor<B, 4>::from_data(TensorData(std::vector<float>{}, Shape{0, 6, 5, 5}));
  const auto gw = make<B, 4>(Shape{6, 2, 3, 3}, -1, 1, DType::F32, false);
  const TensorData dx =
      B::float_into_data(B::template conv_x_backward<2>(gdy.primitive(), gw, Shape{0, 4, 5, 5}, o));
  EXPECT_EQ(dx.shape(), (Shape{0, 4, 5, 5}));
  const TensorData dw = B::float_into_data(
      B::template conv_weight_backward<2>(gx.primitive(), gdy.primitive(), Shape{6, 2, 3, 3}, o));
  EXPECT_EQ(dw.shape(), (Shape{6, 2, 3, 3}));
  EXPECT_EQ(dw.template to_vec<float>(), std::vector<float>(6 * 2 * 9, 0.0f));
  EXPECT_EQ(host_calls(), before);
}
