// The GPU backends' own cases: device kernels against the CPU backend (broadcast, strided
// views, every native dtype), the host fallback, devices and errors. The conformance suite
// (ember_conformance_gpu) covers the whole contract.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <vector>

#include "ember/core/error.hpp"
#include "ember/tensor/activation.hpp"
#include "ember/tensor/tensor.hpp"
#include "fixtures.hpp"
#include "gpu_backends.hpp"
#include "gpu_test_util.hpp"

using namespace ember;
using ember::test::expect_approx;
using ember::test::expect_eq;
using ember::test::host_calls;
using ember::test::spread;

template <class B>
class GpuTest : public ::testing::Test {};
TYPED_TEST_SUITE(GpuTest, ember::test::GpuConformanceBackends, ember::test::GpuNames);

namespace {

template <class B, std::size_t D, class K = Float>
Tensor<B, D, K> on(const TensorData& d) {
  return Tensor<B, D, K>::from_data(d);
}

/// Expects B's 2-d convolution and the two gradients Autodiff uses (conv_x_backward,
/// conv_weight_backward) to give the CPU backend's values: the forward and the input gradient
/// within `tol`, the weight gradient (long sums) within `wtol`.
template <class B>
void expect_conv_like_cpu(const TensorData& xd, const TensorData& wd,
                          const std::optional<TensorData>& bd, const ConvOptions<2>& o,
                          Tolerance tol, Tolerance wtol) {
  const auto gx = on<B, 4>(xd).primitive(), gw = on<B, 4>(wd).primitive();
  const auto cx = on<Cpu, 4>(xd).primitive(), cw = on<Cpu, 4>(wd).primitive();
  std::optional<typename B::FloatTensor> gb;
  std::optional<CpuTensor> cb;
  if (bd) {
    gb = on<B, 1>(*bd).primitive();
    cb = on<Cpu, 1>(*bd).primitive();
  }
  const auto cy = Cpu::template conv<2>(cx, cw, cb, o);
  expect_approx(B::float_into_data(B::template conv<2>(gx, gw, gb, o)), Cpu::float_into_data(cy),
                tol);
  const Shape ys = Cpu::float_shape(cy);
  const TensorData dyd(spread(static_cast<std::size_t>(ys.numel()), -1, 1), ys);
  const auto gdy = on<B, 4>(dyd).primitive();
  const auto cdy = on<Cpu, 4>(dyd).primitive();
  expect_approx(B::float_into_data(B::template conv_x_backward<2>(gdy, gw, xd.shape(), o)),
                Cpu::float_into_data(Cpu::template conv_x_backward<2>(cdy, cw, xd.shape(), o)),
                tol);
  expect_approx(B::float_into_data(B::template conv_weight_backward<2>(gx, gdy, wd.shape(), o)),
                Cpu::float_into_data(Cpu::template conv_weight_backward<2>(cx, cdy, wd.shape(), o)),
                wtol);
}

}  // namespace

TYPED_TEST(GpuTest, DataRoundTripsInEveryDtype) {
  using B = TypeParam;
  for (DType dt : {DType::F32, DType::F16, DType::BF16, DType::F64}) {
    const TensorData d = TensorData(spread(24, -3, 3), Shape{2, 3, 4}).convert(dt);
    expect_eq(on<B, 3>(d).into_data(), d);
  }
  for (DType dt : {DType::I64, DType::I32, DType::I16, DType::I8, DType::U8}) {
    const TensorData d =
        TensorData(std::vector<std::int64_t>{1, 2, 3, 4, 5, 100}, Shape{2, 3}).convert(dt);
    expect_eq(on<B, 2, Int>(d).into_data(), d);
  }
  const TensorData b(std::vector<bool>{true, false, true, true}, Shape{4});
  expect_eq(on<B, 1, Bool>(b).into_data(), b);
  // An empty tensor has a device and no values.
  const TensorData e(std::vector<float>{}, Shape{0, 3});
  expect_eq(on<B, 2>(e).into_data(), e);
}

TYPED_TEST(GpuTest, ElementwiseKernelsMatchTheCpuBackend) {
  using B = TypeParam;
  const TensorData a(spread(60, -2, 2), Shape{3, 4, 5});
  const TensorData b(spread(5, 0.5, 3), Shape{1, 1, 5});  // broadcast along dims 0, 1
  const TensorData c(spread(12, -1, 1), Shape{3, 4, 1});  // broadcast along dim 2
  auto ga = on<B, 3>(a), gb = on<B, 3>(b), gc = on<B, 3>(c);
  auto ca = on<Cpu, 3>(a), cb = on<Cpu, 3>(b), cc = on<Cpu, 3>(c);
  // Vulkan allows 3 ulp for division and square root
  // (docs/gpu.md, "Numerics"); CUDA agrees with the CPU bit for bit.
  const Tolerance tol = Tolerance::rel_abs(1e-5, 1e-5);
  expect_approx(ga.exp().into_data(), ca.exp().into_data(), tol);
  expect_approx(ga.tanh().mul(gb).into_data(), ca.tanh().mul(cb).into_data(), tol);
  expect_approx(ga.div(gb).sub(gc).into_data(), ca.div(cb).sub(cc).into_data(), tol);
  expect_approx(gb.sqrt().add(ga.abs()).into_data(), cb.sqrt().add(ca.abs()).into_data(), tol);
  expect_approx(ga.add_scalar(0.25).mul_scalar(-3).into_data(),
                ca.add_scalar(0.25).mul_scalar(-3).into_data(), tol);
  expect_eq(ga.greater(gc).into_data(), ca.greater(cc).into_data());
  expect_eq(ga.lower_equal_elem(0.5).into_data(), ca.lower_equal_elem(0.5).into_data());
  // A transposed (strided) input.
  auto gt = ga.swap_dims(0, 2), ct = ca.swap_dims(0, 2);
  expect_approx(gt.neg().into_data(), ct.neg().into_data(), tol);
  expect_approx(gt.add(gt.exp()).into_data(), ct.add(ct.exp()).into_data(), tol);
  // A slice with negative steps (a contiguous copy: the kernels take no negative strides) as a
  // kernel's input.
  const std::vector<Slice> reversed{s(0, 3, -1), s(), s(1, 5, -2)}, head{s(), s(), s(0, 2)};
  auto gr = ga.slice(reversed), cr = ca.slice(reversed);
  expect_approx(gr.mul(gr).add(ga.slice(head)).into_data(),
                cr.mul(cr).add(ca.slice(head)).into_data(), tol);
  expect_eq(gr.into_data(), cr.into_data());
  // f16 computes in f32 with one rounding, as the CPU backend.
  auto ha = ga.cast(DType::F16), hb = gb.cast(DType::F16);
  expect_eq(ha.mul(hb).into_data(), ca.cast(DType::F16).mul(cb.cast(DType::F16)).into_data());
}

TYPED_TEST(GpuTest, IntegerAndBoolKernelsAreExact) {
  using B = TypeParam;
  const TensorData a(std::vector<std::int64_t>{-7, -3, 0, 5, 9, 2147483647}, Shape{2, 3});
  const TensorData b(std::vector<std::int64_t>{2, -2, 3, -4, 5, 1}, Shape{2, 3});
  for (DType dt : {DType::I64, DType::I32}) {
    auto ga = on<B, 2, Int>(a.convert(dt)), gb = on<B, 2, Int>(b.convert(dt));
    auto ca = on<Cpu, 2, Int>(a.convert(dt)), cb = on<Cpu, 2, Int>(b.convert(dt));
    expect_eq(ga.div(gb).into_data(), ca.div(cb).into_data());              // floor division
    expect_eq(ga.remainder(gb).into_data(), ca.remainder(cb).into_data());  // divisor's sign
    expect_eq(ga.add_scalar(1).into_data(), ca.add_scalar(1).into_data());  // wraps in i32
    expect_eq(ga.greater_elem(4).into_data(), ca.greater_elem(4).into_data());
  }
  const TensorData p(std::vector<bool>{true, false, true, false}, Shape{4});
  const TensorData q(std::vector<bool>{true, true, false, false}, Shape{4});
  auto gp = on<B, 1, Bool>(p), gq = on<B, 1, Bool>(q);
  expect_eq(gp.bool_and(gq).into_data(), TensorData(std::vector<bool>{1, 0, 0, 0}, Shape{4}));
  expect_eq(gp.bool_xor(gq).into_data(), TensorData(std::vector<bool>{0, 1, 1, 0}, Shape{4}));
  expect_eq(gp.bool_not().into_data(), TensorData(std::vector<bool>{0, 1, 0, 1}, Shape{4}));
}

TYPED_TEST(GpuTest, OpsWithoutKernelsRunOnTheHostAndAreCounted) {
  using B = TypeParam;
  const auto before = gpu::fallback_counts();
  const auto count = [](const std::map<std::string, std::uint64_t>& m, const char* k) {
    auto it = m.find(k);
    return it == m.end() ? std::uint64_t{0} : it->second;
  };
  auto a = Tensor<B, 2>::from_floats({{1, 2}, {3, 4}});
  auto b = Tensor<B, 2>::from_floats({{5, 6}, {7, 8}});
  expect_eq(a.diag().into_data(), TensorData(std::vector<float>{1, 4}, Shape{2}));
  expect_eq(a.add(b).into_data(), TensorData(std::vector<float>{6, 8, 10, 12}, Shape{2, 2}));
  const auto after = gpu::fallback_counts();
  EXPECT_GT(count(after, "float_diag"), count(before, "float_diag"));
  EXPECT_EQ(count(after, "float_binary"), count(before, "float_binary"));  // add has a kernel
  // i8 tensors live on the device; their ops run on the host.
  const TensorData i8 =
      TensorData(std::vector<std::int64_t>{-5, 3, 7}, Shape{3}).convert(DType::I8);
  expect_eq(on<B, 1, Int>(i8).add_scalar(2).into_data(),
            TensorData(std::vector<std::int64_t>{-3, 5, 9}, Shape{3}).convert(DType::I8));
}

TYPED_TEST(GpuTest, TheSameSeedGivesTheCpuValues) {
  using B = TypeParam;
  B::seed(42);
  auto g = Tensor<B, 2>::random(Shape{16, 16}, Distribution::normal(0, 1));
  Cpu::seed(42);
  auto c = Tensor<Cpu, 2>::random(Shape{16, 16}, Distribution::normal(0, 1));
  expect_eq(g.into_data(), c.into_data());
}

TYPED_TEST(GpuTest, DevicesAreNamedAndBadOnesRefused) {
  using B = TypeParam;
  auto t = Tensor<B, 1>::from_floats({1, 2, 3});
  EXPECT_EQ(t.device().index, 0);
  EXPECT_NE(B::device_name(t.device()).find(B::name() + ":0"), std::string::npos);
  EMBER_EXPECT_THROW_MSG((Tensor<B, 1>::from_floats({1}, typename B::Device{1000})), DeviceError,
                         "1000");
}

TYPED_TEST(GpuTest, ReductionKernelsMatchTheCpuBackend) {
  using B = TypeParam;
  // [3, 300, 5]: dims 0 and 1 reduce by a thread per output (inner > 1), dim 2 and the whole
  // tensor by a workgroup per row (the 256-thread tree, with rows longer than a workgroup).
  const TensorData a(spread(4500, -2, 2), Shape{3, 300, 5});
  auto g = on<B, 3>(a);
  auto c = on<Cpu, 3>(a);
  const Tolerance tol = Tolerance::rel_abs(1e-5, 1e-4);
  for (std::int64_t d = 0; d < 3; ++d) {
    expect_approx(g.sum_dim(d).into_data(), c.sum_dim(d).into_data(), tol);
    expect_approx(g.mean_dim(d).into_data(), c.mean_dim(d).into_data(), tol);
    expect_eq(g.max_dim(d).into_data(), c.max_dim(d).into_data());
    expect_eq(g.min_dim(d).into_data(), c.min_dim(d).into_data());
  }
  expect_approx(g.sum().into_data(), c.sum().into_data(), tol);
  auto small = on<B, 2>(TensorData(std::vector<float>{1.5f, -2, 0.5f, 4, 1, -1}, Shape{2, 3}));
  expect_approx(small.prod_dim(1).into_data(),
                TensorData(std::vector<float>{-1.5f, -4}, Shape{2, 1}));
  // NaN propagates through max (torch.amax).
  auto nan = on<B, 1>(TensorData(std::vector<float>{1, NAN, 3}, Shape{3}));
  EXPECT_TRUE(std::isnan(nan.max_dim(0).into_data().template to_vec<float>()[0]));
  // Integers accumulate in i64 and wrap to their dtype like the CPU backend.
  const TensorData i(std::vector<std::int64_t>{2000000000, 2000000000, -5, 7}, Shape{2, 2});
  for (DType dt : {DType::I64, DType::I32}) {
    auto gi = on<B, 2, Int>(i.convert(dt));
    auto ci = on<Cpu, 2, Int>(i.convert(dt));
    expect_eq(gi.sum_dim(0).into_data(), ci.sum_dim(0).into_data());
    expect_eq(gi.max_dim(1).into_data(), ci.max_dim(1).into_data());
  }
}

TYPED_TEST(GpuTest, MatmulKernelMatchesTheCpuBackend) {
  using B = TypeParam;
  // Sizes that are not multiples of the 16 x 16 tile; a broadcast batch; a transposed input.
  const TensorData a(spread(2 * 37 * 29, -1, 1), Shape{2, 37, 29});
  const TensorData b(spread(29 * 21, -1, 1), Shape{1, 29, 21});
  auto ga = on<B, 3>(a), gb = on<B, 3>(b);
  auto ca = on<Cpu, 3>(a), cb = on<Cpu, 3>(b);
  const Tolerance tol = Tolerance::rel_abs(1e-4, 1e-5);
  expect_approx(ga.matmul(gb).into_data(), ca.matmul(cb).into_data(), tol);
  expect_approx(gb.swap_dims(1, 2).matmul(ga.swap_dims(1, 2)).into_data(),
                cb.swap_dims(1, 2).matmul(ca.swap_dims(1, 2)).into_data(), tol);
  // bf16 inputs accumulate in f32 and round once.
  expect_approx(ga.cast(DType::BF16).matmul(gb.cast(DType::BF16)).into_data(),
                ca.cast(DType::BF16).matmul(cb.cast(DType::BF16)).into_data(),
                Tolerance::rel_abs(1e-2, 1e-2));
}

// docs/gpu.md's first example, on a smaller size: the same values as the CPU backend, and
// only device kernels (no host fallback) on the way.
TYPED_TEST(GpuTest, TheGuidesExampleRunsOnTheDevice) {
  using B = TypeParam;
  const typename B::Device dev{0};
  const TensorData weights(spread(4 * 3, -1, 1), Shape{4, 3});
  B::seed(3);
  auto before = gpu::fallback_counts();
  auto x = Tensor<B, 2>::random({5, 4}, Distribution::normal(0, 1), dev);
  auto w = Tensor<B, 2>::from_data(weights, dev);
  auto y = activation::relu(x.matmul(w) + 1.0).sum_dim(1);
  const std::vector<float> v = y.template to_vec<float>();
  Cpu::seed(3);
  auto cx = Tensor<Cpu, 2>::random({5, 4}, Distribution::normal(0, 1));
  auto cy = activation::relu(cx.matmul(Tensor<Cpu, 2>::from_data(weights)) + 1.0).sum_dim(1);
  expect_approx(TensorData(v, Shape{5, 1}), cy.into_data(), Tolerance::rel_abs(1e-5, 1e-5));
  // random() draws on the host (the shared generator); everything after it is native.
  auto after = gpu::fallback_counts();
  before.erase("float_random");
  after.erase("float_random");
  EXPECT_EQ(after, before);
}

// Convolutions, their gradients and pooling run on the device (src/gpu/conv.cpp, pool.cpp):
// the CPU backend's values (f32 within 1e-5; max pooling and its indices exactly) and no call
// through the host. The conformance suite covers every option on Dispatch and each backend.
TYPED_TEST(GpuTest, ConvolutionsAndPoolingRunOnTheDevice) {
  using B = TypeParam;
  const TensorData xd(spread(2 * 4 * 7 * 6, -2, 2), Shape{2, 4, 7, 6});
  const TensorData wd(spread(6 * 2 * 3 * 3, -1, 1), Shape{6, 2, 3, 3});
  const TensorData bd(spread(6, -0.5, 0.5), Shape{6});
  ConvOptions<2> o;
  o.stride = {2, 1};
  o.padding = {1, 2};
  o.dilation = {1, 2};
  o.groups = 2;
  const auto gx = on<B, 4>(xd);
  const auto cx = on<Cpu, 4>(xd);
  const Tolerance tol = Tolerance::rel_abs(1e-5, 1e-5);
  const std::uint64_t before = host_calls();

  expect_conv_like_cpu<B>(xd, wd, bd, o, tol, tol);
  ConvTransposeOptions<2> t;
  t.stride = {2, 2};
  t.padding = {1, 0};
  t.padding_out = {1, 0};
  t.groups = 2;
  const TensorData td(spread(4 * 3 * 3 * 3, -1, 1), Shape{4, 3, 3, 3});  // [C_in, C_out/G, k]
  expect_approx(B::float_into_data(B::template conv_transpose<2>(
                    gx.primitive(), on<B, 4>(td).primitive(), std::nullopt, t)),
                Cpu::float_into_data(Cpu::template conv_transpose<2>(
                    cx.primitive(), on<Cpu, 4>(td).primitive(), std::nullopt, t)),
                tol);

  MaxPoolOptions<2> mp;
  mp.kernel = {3, 2};
  mp.stride = {2, 2};
  mp.padding = {1, 1};
  const auto [gv, gi] = B::template float_max_pool_with_indices<2>(gx.primitive(), mp);
  const auto [cv, ci] = Cpu::template float_max_pool_with_indices<2>(cx.primitive(), mp);
  expect_eq(B::float_into_data(gv), Cpu::float_into_data(cv));
  expect_eq(B::int_into_data(gi), Cpu::int_into_data(ci));
  const Shape ps = Cpu::float_shape(cv);
  const TensorData pgd(spread(static_cast<std::size_t>(ps.numel()), -1, 1), ps);
  expect_approx(B::float_into_data(B::template float_max_pool_backward<2>(on<B, 4>(pgd).primitive(),
                                                                          gi, xd.shape())),
                Cpu::float_into_data(Cpu::template float_max_pool_backward<2>(
                    on<Cpu, 4>(pgd).primitive(), ci, xd.shape())),
                tol);
  AvgPoolOptions<2> ap;
  ap.kernel = {3, 3};
  ap.stride = {2, 2};
  ap.padding = {1, 1};
  ap.count_include_pad = false;
  expect_approx(B::float_into_data(B::template float_avg_pool<2>(gx.primitive(), ap)),
                Cpu::float_into_data(Cpu::template float_avg_pool<2>(cx.primitive(), ap)), tol);
  expect_approx(
      B::float_into_data(B::template float_adaptive_avg_pool<2>(gx.primitive(), {3, 4})),
      Cpu::float_into_data(Cpu::template float_adaptive_avg_pool<2>(cx.primitive(), {3, 4})), tol);
  EXPECT_EQ(host_calls(), before);
}

// Indexing runs on the device (src/gpu/index.cpp): the CPU backend's values exactly, no call
// through the host.
TYPED_TEST(GpuTest, IndexingRunsOnTheDevice) {
  using B = TypeParam;
  const TensorData xd(spread(3 * 4 * 5, -3, 3), Shape{3, 4, 5});
  const TensorData yd(spread(3 * 2 * 5, -1, 1), Shape{3, 2, 5});
  const TensorData id(std::vector<std::int64_t>{2, 0, 2}, Shape{3});
  const TensorData gd(std::vector<std::int64_t>{1, 0, 3, 3, 2, 1, 0, 0, 1, 2, 3, 0},
                      Shape{3, 2, 2});
  const TensorData md(std::vector<bool>{true, false, false, true, true}, Shape{1, 1, 5});
  const auto gx = on<B, 3>(xd), gy = on<B, 3>(yd);
  const auto cx = on<Cpu, 3>(xd), cy = on<Cpu, 3>(yd);
  const auto gi = on<B, 1, Int>(id), ci = on<Cpu, 1, Int>(id);
  const auto gg = on<B, 3, Int>(gd), cg = on<Cpu, 3, Int>(gd);
  const auto gm = on<B, 3, Bool>(md), cm = on<Cpu, 3, Bool>(md);
  const std::uint64_t before = host_calls();
  expect_eq(Tensor<B, 3>::cat({gx, gy, gx}, 1).into_data(),
            Tensor<Cpu, 3>::cat({cx, cy, cx}, 1).into_data());
  const std::vector<Slice> region{s(), s(1, 3), s(0, 5, 2)};
  const TensorData vd(spread(3 * 2 * 3, 5, 9), Shape{3, 2, 3});
  expect_eq(gx.slice_assign(region, on<B, 3>(vd)).into_data(),
            cx.slice_assign(region, on<Cpu, 3>(vd)).into_data());
  expect_eq(gx.select(1, gi).into_data(), cx.select(1, ci).into_data());
  expect_eq(gx.gather(1, gg).into_data(), cx.gather(1, cg).into_data());
  expect_approx(gx.scatter(1, gg, gy.slice({s(), s(), s(0, 2)}), IndexUpdate::Add).into_data(),
                cx.scatter(1, cg, cy.slice({s(), s(), s(0, 2)}), IndexUpdate::Add).into_data(),
                Tolerance::rel_abs(1e-6, 1e-6));
  // index_copy / index_add with a duplicate index (index_copy: the last one wins), and scatter
  // assigning with duplicate targets (the last in row-major order wins).
  const TensorData dd(std::vector<std::int64_t>{3, 0, 3}, Shape{3});
  const TensorData vd3(spread(3 * 3 * 5, -4, 4), Shape{3, 3, 5});
  for (IndexUpdate up : {IndexUpdate::Assign, IndexUpdate::Add}) {
    expect_approx(gx.select_assign(1, on<B, 1, Int>(dd), on<B, 3>(vd3), up).into_data(),
                  cx.select_assign(1, on<Cpu, 1, Int>(dd), on<Cpu, 3>(vd3), up).into_data(),
                  Tolerance::rel_abs(1e-6, 1e-6));
  }
  EXPECT_EQ(gx.select_assign(1, on<B, 1, Int>(dd), on<B, 3>(vd3))
                .into_data()
                .template to_vec<float>()[3 * 5],
            vd3.template to_vec<float>()[2 * 5]);  // x[0, 3, 0] = values[0, 2, 0]
  const TensorData sd(std::vector<std::int64_t>{2, 2, 2, 2, 0, 0, 0, 0, 3, 1, 3, 1},
                      Shape{3, 2, 2});
  const auto gs = on<B, 3, Int>(sd), cs = on<Cpu, 3, Int>(sd);
  expect_eq(gx.scatter(1, gs, gy.slice({s(), s(), s(0, 2)})).into_data(),
            cx.scatter(1, cs, cy.slice({s(), s(), s(0, 2)})).into_data());
  EXPECT_EQ(gx.scatter(1, gs, gy).into_data().template to_vec<float>()[2 * 5],
            yd.template to_vec<float>()[5]);  // x[0, 2, 0] = y[0, 1, 0]: the later duplicate
  expect_eq(
      on<B, 3, Int>(gd)
          .scatter(1, gs.slice({s(), s(), s(0, 1)}).remainder_scalar(2), on<B, 3, Int>(gd).neg())
          .into_data(),
      on<Cpu, 3, Int>(gd)
          .scatter(1, cs.slice({s(), s(), s(0, 1)}).remainder_scalar(2), on<Cpu, 3, Int>(gd).neg())
          .into_data());
  expect_eq(gx.mask_fill(gm, -7.5).into_data(), cx.mask_fill(cm, -7.5).into_data());
  expect_eq(gx.mask_where(gm, gx.neg()).into_data(), cx.mask_where(cm, cx.neg()).into_data());
  expect_eq(
      on<B, 3, Int>(gd)
          .mask_fill(on<B, 3, Bool>(TensorData(std::vector<bool>{true, false}, Shape{1, 1, 2})), 9)
          .into_data(),
      on<Cpu, 3, Int>(gd)
          .mask_fill(on<Cpu, 3, Bool>(TensorData(std::vector<bool>{true, false}, Shape{1, 1, 2})),
                     9)
          .into_data());
  EXPECT_EQ(host_calls(), before);
}

// A convolution whose columns exceed one chunk's budget (64 MiB on Vulkan, 256 MiB on CUDA):
// the batch runs in chunks, forward and both gradients still the CPU's values.
TYPED_TEST(GpuTest, ConvolutionsChunkedOverTheBatchMatchTheCpu) {
  using B = TypeParam;
  // 10 items x 64 channels x 9 taps x 56 x 56 positions x 4 bytes = 72 MiB of columns.
  const TensorData xd(spread(10 * 64 * 56 * 56, -1, 1), Shape{10, 64, 56, 56});
  const TensorData wd(spread(8 * 64 * 9, -0.1f, 0.1f), Shape{8, 64, 3, 3});
  ConvOptions<2> o;
  o.padding = {1, 1};
  expect_conv_like_cpu<B>(xd, wd, std::nullopt, o, Tolerance::rel_abs(1e-4, 1e-4),
                          Tolerance::rel_abs(1e-3, 1e-2));  // sums over 31,360 products
}
