// Creation (full, arange, random), flip, the line kernels (scans, max/min with indices,
// any/all, var_mean), sorting and interpolation on the GPU backends: the CPU backend's values,
// with no call through the host. Lines longer than one launch's piece (4,096 values) take
// several passes.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "ember/tensor/module/conv.hpp"
#include "ember/tensor/module/interpolate.hpp"
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
class GpuLinesTest : public ::testing::Test {};
TYPED_TEST_SUITE(GpuLinesTest, ember::test::GpuConformanceBackends, ember::test::GpuNames);

namespace {

/// [4, 4] with ties (rows 0, 1), a NaN inside row 2 and NaN at the start of row 3.
TensorData with_nans() {
  std::vector<float> v{3, 1, 3, -2, 5, 5, 0, 1, 2, NAN, -7, 4, NAN, 8, NAN, 1};
  return TensorData(v, Shape{4, 4});
}

}  // namespace

TYPED_TEST(GpuLinesTest, CreationRunsOnTheDeviceWithTheCpusValues) {
  using B = TypeParam;
  const typename B::Device dev{0};
  const std::uint64_t before = host_calls();
  for (DType dt : {DType::F32, DType::F16, DType::BF16, DType::F64}) {
    expect_eq(Tensor<B, 2>::full(Shape{3, 5}, 0.1, dev, dt).into_data(),
              Tensor<Cpu, 2>::full(Shape{3, 5}, 0.1, {}, dt).into_data());
  }
  // Integers truncate toward zero as on the CPU; u8 and bool.
  for (DType dt : {DType::I64, DType::I32, DType::U8}) {
    expect_eq(Tensor<B, 1, Int>::full(Shape{4}, 200.7, dev, dt).into_data(),
              TensorData(std::vector<std::int64_t>{200, 200, 200, 200}, Shape{4}).convert(dt));
    expect_eq(Tensor<B, 1, Int>::arange_step(250, 3, -7, dev, dt).into_data(),
              Tensor<Cpu, 1, Int>::arange_step(250, 3, -7, {}, dt).into_data());
  }
  expect_eq(Tensor<B, 1, Int>::arange_step(5, -7, -3, dev).into_data(),
            TensorData(std::vector<std::int64_t>{5, 2, -1, -4}, Shape{4}));
  expect_eq(Tensor<B, 2, Bool>::full(Shape{2, 2}, 1, dev, DType::Bool).into_data(),
            TensorData(std::vector<bool>{true, true, true, true}, Shape{2, 2}));
  // The CPU's generator: the same seed gives the same values, in every float dtype, and the
  // counter advances the same way across calls.
  for (DType dt : {DType::F32, DType::F16, DType::BF16, DType::F64}) {
    for (const Distribution& d :
         {Distribution::default_(), Distribution::uniform(-2, 3), Distribution::bernoulli(0.3)}) {
      B::seed(7);
      auto g1 = Tensor<B, 2>::random(Shape{33, 65}, d, dev, dt);
      auto g2 = Tensor<B, 1>::random(Shape{1000}, d, dev, dt);
      Cpu::seed(7);
      auto c1 = Tensor<Cpu, 2>::random(Shape{33, 65}, d, {}, dt);
      auto c2 = Tensor<Cpu, 1>::random(Shape{1000}, d, {}, dt);
      expect_eq(g1.into_data(), c1.into_data());
      expect_eq(g2.into_data(), c2.into_data());
    }
  }
  EXPECT_EQ(host_calls(), before);
}

TYPED_TEST(GpuLinesTest, FlipAndReversedSlicesAreDeviceCopies) {
  using B = TypeParam;
  const TensorData x(spread(3 * 4 * 5, -3, 3), Shape{3, 4, 5});
  const auto g = Tensor<B, 3>::from_data(x);
  const auto c = Tensor<Cpu, 3>::from_data(x);
  const std::uint64_t before = host_calls();
  expect_eq(g.flip({0, 2}).into_data(), c.flip({0, 2}).into_data());
  expect_eq(g.swap_dims(0, 2).flip({1}).into_data(), c.swap_dims(0, 2).flip({1}).into_data());
  const std::vector<Slice> r{s(0, 3, -1), s(1, 4), s(1, 5, -2)};
  expect_eq(g.slice(r).into_data(), c.slice(r).into_data());
  // By hand: [1, 5) walked backwards with step 2 is 4, 2.
  const auto one = Tensor<B, 3>::from_data(
      TensorData(std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, Shape{1, 2, 5}));
  expect_eq(one.slice({s(), s(1, 2), s(1, 5, -2)}).into_data(),
            TensorData(std::vector<float>{9, 7}, Shape{1, 1, 2}));
  EXPECT_EQ(host_calls(), before);
}

TYPED_TEST(GpuLinesTest, ScansMatchTheCpuBackend) {
  using B = TypeParam;
  const TensorData x(spread(3 * 40 * 5, -1.5, 1.5), Shape{3, 40, 5});
  const auto g = Tensor<B, 3>::from_data(x);
  const auto c = Tensor<Cpu, 3>::from_data(x);
  const auto gn = Tensor<B, 2>::from_data(with_nans());
  const auto cn = Tensor<Cpu, 2>::from_data(with_nans());
  const TensorData xi(std::vector<std::int64_t>{4, -2, 4, 9, 0, 3000000000, 7, -1}, Shape{2, 4});
  const std::uint64_t before = host_calls();
  for (std::int64_t d = 0; d < 3; ++d) {
    // Sums and products accumulate in f64 as on the CPU: the same values.
    expect_eq(g.cumsum(d).into_data(), c.cumsum(d).into_data());
    expect_eq(g.cumprod(d).into_data(), c.cumprod(d).into_data());
    expect_eq(g.cummax(d).into_data(), c.cummax(d).into_data());
    expect_eq(g.cummin(d).into_data(), c.cummin(d).into_data());
  }
  // NaN stays once seen; with indices, ties and NaN take the later index (PyTorch).
  for (std::int64_t d = 0; d < 2; ++d) {
    expect_eq(gn.cummax(d).into_data(), cn.cummax(d).into_data());
    expect_eq(gn.cummin(d).into_data(), cn.cummin(d).into_data());
    auto [gv, gi] = gn.cummax_with_indices(d);
    auto [cv, ci] = cn.cummax_with_indices(d);
    expect_eq(gv.into_data(), cv.into_data());
    expect_eq(gi.into_data(), ci.into_data());
    auto [gv2, gi2] = gn.cummin_with_indices(d);
    auto [cv2, ci2] = cn.cummin_with_indices(d);
    expect_eq(gi2.into_data(), ci2.into_data());
  }
  expect_eq(gn.cummax_with_indices(1).second.into_data(),
            TensorData(std::vector<std::int64_t>{0, 0, 2, 2, 0, 1, 1, 1, 0, 1, 1, 1, 0, 0, 2, 2},
                       Shape{4, 4}));
  for (DType dt : {DType::I64, DType::I32}) {
    const auto gi = Tensor<B, 2, Int>::from_data(xi.convert(dt));
    const auto ci = Tensor<Cpu, 2, Int>::from_data(xi.convert(dt));
    expect_eq(gi.cumsum(1).into_data(), ci.cumsum(1).into_data());
    expect_eq(gi.cumprod(1).into_data(), ci.cumprod(1).into_data());
    expect_eq(gi.cummax_with_indices(1).second.into_data(),
              ci.cummax_with_indices(1).second.into_data());
  }
  EXPECT_EQ(host_calls(), before);
}

TYPED_TEST(GpuLinesTest, ExtremesAnyAllAndVarMeanMatchTheCpuBackend) {
  using B = TypeParam;
  const auto gn = Tensor<B, 2>::from_data(with_nans());
  const auto cn = Tensor<Cpu, 2>::from_data(with_nans());
  const TensorData x(spread(3 * 40 * 5, -1.5, 1.5), Shape{3, 40, 5});
  const auto g = Tensor<B, 3>::from_data(x);
  const auto c = Tensor<Cpu, 3>::from_data(x);
  const std::uint64_t before = host_calls();
  for (std::int64_t d = 0; d < 2; ++d) {
    auto [gv, gi] = gn.max_dim_with_indices(d);
    auto [cv, ci] = cn.max_dim_with_indices(d);
    expect_eq(gv.into_data(), cv.into_data());
    expect_eq(gi.into_data(), ci.into_data());
    expect_eq(gn.argmin(d).into_data(), cn.argmin(d).into_data());
    expect_eq(gn.any_dim(d).into_data(), cn.any_dim(d).into_data());
    expect_eq(gn.all_dim(d).into_data(), cn.all_dim(d).into_data());
  }
  // The first of tied maxima (rows 0, 1), the first NaN (rows 2, 3).
  expect_eq(gn.argmax(1).into_data(),
            TensorData(std::vector<std::int64_t>{0, 0, 1, 0}, Shape{4, 1}));
  expect_eq(gn.argmax(0).into_data(),
            TensorData(std::vector<std::int64_t>{3, 2, 3, 2}, Shape{1, 4}));
  const auto gb = gn.greater_elem(2.5);
  const auto cb = cn.greater_elem(2.5);
  expect_eq(gb.any_dim(1).into_data(), cb.any_dim(1).into_data());
  expect_eq(gb.all_dim(0).into_data(), cb.all_dim(0).into_data());
  for (std::int64_t d = 0; d < 3; ++d) {
    auto [gv, gm] = g.var_mean(d);
    auto [cv, cm] = c.var_mean(d);
    // f64 sums in the CPU's order; the devices' f64 division may differ in the last bit.
    expect_approx(gv.into_data(), cv.into_data(), Tolerance::rel_abs(1e-6, 1e-7));
    expect_approx(gm.into_data(), cm.into_data(), Tolerance::rel_abs(1e-6, 1e-7));
  }
  EXPECT_EQ(host_calls(), before);
}

// Lines longer than one launch (4,096 values) continue from the state the previous launch
// left: row scans and reductions over 10,000 values, a NaN and a maximum near the end.
TYPED_TEST(GpuLinesTest, LongLinesTakeSeveralPasses) {
  using B = TypeParam;
  std::vector<float> v = spread(2 * 10000, -1, 1);
  v[9000] = 50;
  v[10000 + 9500] = NAN;
  const TensorData x(v, Shape{2, 10000});
  const auto g = Tensor<B, 2>::from_data(x);
  const auto c = Tensor<Cpu, 2>::from_data(x);
  const std::uint64_t before = host_calls();
  expect_eq(g.cumsum(1).into_data(), c.cumsum(1).into_data());
  expect_eq(g.cummax_with_indices(1).second.into_data(),
            c.cummax_with_indices(1).second.into_data());
  expect_eq(g.argmax(1).into_data(),
            TensorData(std::vector<std::int64_t>{9000, 9500}, Shape{2, 1}));
  expect_eq(g.equal_elem(50).any_dim(1).into_data(),
            TensorData(std::vector<bool>{true, false}, Shape{2, 1}));
  expect_approx(g.var_mean(1).first.into_data(), c.var_mean(1).first.into_data(),
                Tolerance::rel_abs(1e-6, 1e-7));
  EXPECT_EQ(host_calls(), before);
}

// Sorting (src/gpu/sort.cpp): the CPU's stable sort, values and indices, with ties, NaN, -0.0
// and lines that are not a power of two long; topk (ties by lower index) and the median as the
// CPU's.
TYPED_TEST(GpuLinesTest, SortAndTopkMatchTheCpuBackend) {
  using B = TypeParam;
  std::vector<float> v = spread(3 * 37 * 4, -2, 2);
  for (std::size_t i = 0; i < v.size(); i += 7) v[i] = 0.5f;  // ties
  v[5] = NAN;
  v[50] = NAN;
  v[11] = -0.0f;
  v[12] = 0.0f;
  const TensorData x(v, Shape{3, 37, 4});
  const auto g = Tensor<B, 3>::from_data(x);
  const auto c = Tensor<Cpu, 3>::from_data(x);
  const std::uint64_t before = host_calls();
  for (std::int64_t d = 0; d < 3; ++d) {
    for (bool desc : {false, true}) {
      auto [gv, gi] = g.sort_with_indices(d, desc);
      auto [cv, ci] = c.sort_with_indices(d, desc);
      expect_eq(gv.into_data(), cv.into_data());
      expect_eq(gi.into_data(), ci.into_data());
    }
    auto [gv, gi] = g.topk_with_indices(2, d);
    auto [cv, ci] = c.topk_with_indices(2, d);
    expect_eq(gv.into_data(), cv.into_data());
    expect_eq(gi.into_data(), ci.into_data());
    // The lower median (ties by index), or a line's first NaN.
    auto [gm, gmi] = g.median_dim_with_indices(d);
    auto [cm, cmi] = c.median_dim_with_indices(d);
    expect_eq(gm.into_data(), cm.into_data());
    expect_eq(gmi.into_data(), cmi.into_data());
  }
  // By hand: NaN last ascending, equal values keep their order.
  const auto small =
      Tensor<B, 1>::from_data(TensorData(std::vector<float>{2, NAN, 1, 2, -1}, Shape{5}));
  expect_eq(small.argsort(0).into_data(),
            TensorData(std::vector<std::int64_t>{4, 2, 0, 3, 1}, Shape{5}));
  expect_eq(small.argsort(0, true).into_data(),
            TensorData(std::vector<std::int64_t>{1, 0, 3, 2, 4}, Shape{5}));
  const TensorData xi(std::vector<std::int64_t>{5, -3, 5, 9000000000, 0, -3, 7}, Shape{7});
  for (DType dt : {DType::I64, DType::I32}) {
    const auto gi = Tensor<B, 1, Int>::from_data(xi.convert(dt));
    const auto ci = Tensor<Cpu, 1, Int>::from_data(xi.convert(dt));
    expect_eq(gi.sort(0).into_data(), ci.sort(0).into_data());
    expect_eq(gi.argsort(0, true).into_data(), ci.argsort(0, true).into_data());
    expect_eq(gi.median_dim_with_indices(0).second.into_data(),
              ci.median_dim_with_indices(0).second.into_data());
  }
  // A long line: 5,000 values (8,192 slots, 91 launches).
  const TensorData lx(spread(5000, -9, 9), Shape{1, 5000});
  const auto gl = Tensor<B, 2>::from_data(lx);
  const auto cl = Tensor<Cpu, 2>::from_data(lx);
  expect_eq(gl.argsort(1).into_data(), cl.argsort(1).into_data());
  expect_eq(gl.topk_with_indices(10, 1).second.into_data(),
            cl.topk_with_indices(10, 1).second.into_data());
  EXPECT_EQ(host_calls(), before);
}

// Interpolation (src/gpu/interpolate.cpp): the CPU's taps blended in the CPU's order, up and
// down, every mode, both corner conventions, f32 and f64.
TYPED_TEST(GpuLinesTest, InterpolationMatchesTheCpuBackend) {
  using B = TypeParam;
  const TensorData x(spread(2 * 3 * 5 * 7, -2, 2), Shape{2, 3, 5, 7});
  const std::uint64_t before = host_calls();
  for (DType dt : {DType::F32, DType::F64}) {
    const auto g = Tensor<B, 4>::from_data(x.convert(dt));
    const auto c = Tensor<Cpu, 4>::from_data(x.convert(dt));
    for (InterpolateMode m :
         {InterpolateMode::Nearest, InterpolateMode::Bilinear, InterpolateMode::Bicubic}) {
      for (bool align : {false, true}) {
        const InterpolateOptions o = InterpolateOptions{m}.with_align_corners(align);
        for (PoolArg2 size : {PoolArg2{9, 4}, PoolArg2{3, 14}}) {
          expect_approx(module::interpolate(g, size, o).into_data(),
                        module::interpolate(c, size, o).into_data(),
                        Tolerance::rel_abs(1e-6, 1e-6));
        }
      }
    }
  }
  // By hand: bilinear 2x upsampling with aligned corners of [0, 3] is [0, 1, 2, 3].
  const auto row = Tensor<B, 4>::from_data(TensorData(std::vector<float>{0, 3}, Shape{1, 1, 1, 2}));
  expect_approx(
      module::interpolate(row, {1, 4},
                          InterpolateOptions{InterpolateMode::Bilinear}.with_align_corners(true))
          .into_data(),
      TensorData(std::vector<float>{0, 1, 2, 3}, Shape{1, 1, 1, 4}),
      Tolerance::rel_abs(1e-6, 1e-6));
  EXPECT_EQ(host_calls(), before);
}

// unfold / fold (im2col / col2im of src/gpu/conv.cpp): the CPU's values, with stride, padding
// and dilation; fold sums the overlaps.
TYPED_TEST(GpuLinesTest, UnfoldAndFoldMatchTheCpuBackend) {
  using B = TypeParam;
  const TensorData x(spread(2 * 3 * 6 * 7, -2, 2), Shape{2, 3, 6, 7});
  const auto g = Tensor<B, 4>::from_data(x);
  const auto c = Tensor<Cpu, 4>::from_data(x);
  const std::uint64_t before = host_calls();
  for (const UnfoldOptions& o : {UnfoldOptions{}, UnfoldOptions{{2, 1}, {1, 2}, {1, 2}},
                                 UnfoldOptions{{1, 3}, {0, 1}, {2, 1}}}) {
    const std::array<std::int64_t, 2> k{2, 3};
    const auto gu = module::unfold4d(g, k, o);
    const auto cu = module::unfold4d(c, k, o);
    expect_eq(gu.into_data(), cu.into_data());
    expect_approx(module::fold4d(gu, {6, 7}, k, o).into_data(),
                  module::fold4d(cu, {6, 7}, k, o).into_data(), Tolerance::rel_abs(1e-6, 1e-6));
  }
  // By hand: a 1x1x2x2 input unfolded by a 2x2 kernel is one column of its four values, and
  // fold of the all-ones columns of a 3x3 output with 2x2 patches counts the overlaps.
  const auto four =
      Tensor<B, 4>::from_data(TensorData(std::vector<float>{1, 2, 3, 4}, Shape{1, 1, 2, 2}));
  expect_eq(module::unfold4d(four, {2, 2}, {}).into_data(),
            TensorData(std::vector<float>{1, 2, 3, 4}, Shape{1, 4, 1}));
  expect_eq(module::fold4d(Tensor<B, 3>::ones(Shape{1, 4, 4}), {3, 3}, {2, 2}, {}).into_data(),
            TensorData(std::vector<float>{1, 2, 1, 2, 4, 2, 1, 2, 1}, Shape{1, 1, 3, 3}));
  EXPECT_EQ(host_calls(), before);
}

// clamp: the CPU's values (NaN stays NaN; integer bounds saturate to the dtype, as clamp_min
// and clamp_max pass the int64 limits).
TYPED_TEST(GpuLinesTest, ClampRunsOnTheDevice) {
  using B = TypeParam;
  const auto gn = Tensor<B, 2>::from_data(with_nans());
  const auto cn = Tensor<Cpu, 2>::from_data(with_nans());
  const TensorData xi(std::vector<std::int64_t>{5, -3, 2000000000, 0, 255, 7}, Shape{6});
  const std::uint64_t before = host_calls();
  expect_eq(gn.clamp(-1, 2.5).into_data(), cn.clamp(-1, 2.5).into_data());
  expect_eq(gn.clamp_min(0.5).into_data(), cn.clamp_min(0.5).into_data());
  expect_eq(gn.clamp_max(0).into_data(), cn.clamp_max(0).into_data());
  for (DType dt : {DType::I64, DType::I32}) {
    const auto gi = Tensor<B, 1, Int>::from_data(xi.convert(dt));
    const auto ci = Tensor<Cpu, 1, Int>::from_data(xi.convert(dt));
    expect_eq(gi.clamp(0, 6).into_data(), ci.clamp(0, 6).into_data());
    expect_eq(gi.clamp_min(-2).into_data(), ci.clamp_min(-2).into_data());
    expect_eq(gi.clamp_max(4).into_data(), ci.clamp_max(4).into_data());
  }
  const auto gu = Tensor<B, 1, Int>::from_data(
      TensorData(std::vector<std::int64_t>{0, 7, 200, 255}, Shape{4}).convert(DType::U8));
  expect_eq(gu.clamp_min(10).into_data(),
            TensorData(std::vector<std::int64_t>{10, 10, 200, 255}, Shape{4}).convert(DType::U8));
  EXPECT_EQ(host_calls(), before);
}

// u8 indices address a dim longer than 255 (the bound is compared without narrowing the dim
// to the index type), and a fold whose kernel is too long for one device loop takes the host.
TYPED_TEST(GpuLinesTest, IndicesAndFoldAtTheLimits) {
  using B = TypeParam;
  const TensorData x(spread(300, -1, 1), Shape{300});
  const TensorData v(std::vector<float>{10, 20, 30, 40, 50}, Shape{5});
  // 300 = 44 mod 256: indices 44 and above were dropped.
  const TensorData id =
      TensorData(std::vector<std::int64_t>{5, 43, 44, 200, 255}, Shape{5}).convert(DType::U8);
  const auto gx = Tensor<B, 1>::from_data(x), gv = Tensor<B, 1>::from_data(v);
  const auto cx = Tensor<Cpu, 1>::from_data(x), cv = Tensor<Cpu, 1>::from_data(v);
  const auto gi = Tensor<B, 1, Int>::from_data(id);
  const auto ci = Tensor<Cpu, 1, Int>::from_data(id);
  const std::uint64_t before = host_calls();
  expect_eq(gx.select(0, gi).into_data(), cx.select(0, ci).into_data());
  expect_eq(gx.gather(0, gi).into_data(), cx.gather(0, ci).into_data());
  for (IndexUpdate up : {IndexUpdate::Assign, IndexUpdate::Add}) {
    expect_eq(gx.select_assign(0, gi, gv, up).into_data(),
              cx.select_assign(0, ci, cv, up).into_data());
    expect_eq(gx.scatter(0, gi, gv, up).into_data(), cx.scatter(0, ci, cv, up).into_data());
  }
  EXPECT_EQ(gx.select_assign(0, gi, gv).into_data().template to_vec<float>()[255], 50.f);
  EXPECT_EQ(host_calls(), before);
  // A 1 x 70,000 kernel: one tap loop would end early on llvmpipe (65,535 iterations).
  const auto ones = Tensor<B, 3>::ones(Shape{1, 70000, 1});
  EXPECT_EQ(module::fold4d(ones, {1, 70000}, {1, 70000}, {}).sum().into_scalar(), 70000.0);
}
