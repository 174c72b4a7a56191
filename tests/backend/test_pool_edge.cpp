// Pooling / interpolate / grid_sample: hand-computed edge cases (layouts, dtypes, empty
// tensors, NaN/-inf) and one test per front-end check.
#include <cmath>
#include <limits>
#include <vector>

#include "backends.hpp"
#include "ember/tensor/module/interpolate.hpp"
#include "ember/tensor/module/pool.hpp"
#include "fixtures.hpp"

using namespace ember;
namespace m = ember::module;
using ember::test::expect_approx;
using ember::test::expect_eq;

template <class B>
class PoolEdge : public ::testing::Test {};
TYPED_TEST_SUITE(PoolEdge, ember::test::ConformanceBackends, ember::test::BackendNames);

namespace {

std::vector<float> iota(std::int64_t n, float start = 0.f) {
  std::vector<float> v(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = start + static_cast<float>(i);
  return v;
}

template <class B, std::size_t D>
Tensor<B, D> make(std::vector<float> v, Shape s, DType dt = DType::F32) {
  return Tensor<B, D>::from_data(TensorData(std::move(v), std::move(s)), {}, dt);
}

// A view of `dense` ([.., A, B] row-major data) as its transpose [.., B, A] (Cpu only).
[[maybe_unused]] CpuTensor transposed_view(const CpuTensor& dense) {
  CpuTensor t = dense;
  const std::size_t r = t.shape.rank();
  std::swap(t.shape.dims[r - 1], t.shape.dims[r - 2]);
  std::swap(t.strides[r - 1], t.strides[r - 2]);
  return t;
}

}  // namespace

// ---- numerics --------------------------------------------------------------------------

TYPED_TEST(PoolEdge, MaxPoolHandComputed) {
  using B = TypeParam;
  // [[0 1 2 3] [4 5 6 7] [8 9 10 11]], k2 s1 p0 -> [[5 6 7] [9 10 11]]
  const auto x = make<B, 4>(iota(12), Shape{1, 1, 3, 4});
  const auto [v, i] = m::max_pool2d_with_indices(x, {2, 2}, {1, 1});
  expect_eq(v.into_data(), TensorData(std::vector<float>{5, 6, 7, 9, 10, 11}, Shape{1, 1, 2, 3}));
  expect_eq(i.into_data(),
            TensorData(std::vector<std::int64_t>{5, 6, 7, 9, 10, 11}, Shape{1, 1, 2, 3}));
}

TYPED_TEST(PoolEdge, MaxPoolAllNegInfWindowGivesFirstIndex) {
  using B = TypeParam;
  const float ninf = -std::numeric_limits<float>::infinity();
  const auto x = make<B, 4>({ninf, ninf, ninf, ninf, 1, 2, ninf, 3, 4}, Shape{1, 1, 3, 3});
  const auto [v, i] = m::max_pool2d_with_indices(x, {2, 2}, {2, 2}, {1, 1});
  // windows (padded): {p,p,p,-inf} {p,p,-inf,-inf} {p,-inf,p,4... }
  expect_eq(v.into_data(), TensorData(std::vector<float>{ninf, ninf, ninf, 4}, Shape{1, 1, 2, 2}));
  expect_eq(i.into_data(), TensorData(std::vector<std::int64_t>{0, 1, 3, 8}, Shape{1, 1, 2, 2}));
}

TYPED_TEST(PoolEdge, MaxPoolNaNPropagatesWithLastNaNIndex) {
  using B = TypeParam;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const auto x = make<B, 3>({nan, 5, nan, 1, 2, 3}, Shape{1, 1, 6});
  const auto [v, i] = m::max_pool1d_with_indices(x, 3, 3);
  const auto vv = v.template to_vec<float>();
  EXPECT_TRUE(std::isnan(vv[0]));
  EXPECT_EQ(vv[1], 3.f);
  EXPECT_EQ(i.template to_vec<std::int64_t>(), (std::vector<std::int64_t>{2, 5}));
}

TYPED_TEST(PoolEdge, AvgPoolCountIncludePadHandComputed) {
  using B = TypeParam;
  // 2x2 input [[1 2] [3 4]], k2 s1 p1 -> 3x3; corner windows hold one value.
  const auto x = make<B, 4>({1, 2, 3, 4}, Shape{1, 1, 2, 2});
  expect_approx(
      m::avg_pool2d(x, {2, 2}, {1, 1}, {1, 1}, true).into_data(),
      TensorData(std::vector<float>{0.25f, 0.75f, 0.5f, 1.f, 2.5f, 1.5f, 0.75f, 1.75f, 1.f},
                 Shape{1, 1, 3, 3}));
  expect_approx(
      m::avg_pool2d(x, {2, 2}, {1, 1}, {1, 1}, false).into_data(),
      TensorData(std::vector<float>{1, 1.5f, 2, 2, 2.5f, 3, 3, 3.5f, 4}, Shape{1, 1, 3, 3}));
}

TYPED_TEST(PoolEdge, AvgPoolCeilPartialWindowExcludesBeyondPadding) {
  using B = TypeParam;
  // L=5, k2 s2 ceil: windows [0,2) [2,4) [4,5): last divisor is 1 even with
  // count_include_pad (the part beyond the padded input is never counted).
  const auto x = make<B, 3>({1, 2, 3, 4, 10}, Shape{1, 1, 5});
  expect_approx(m::avg_pool1d(x, 2, 2, 0, true, true).into_data(),
                TensorData(std::vector<float>{1.5f, 3.5f, 10}, Shape{1, 1, 3}));
  EXPECT_EQ(m::avg_pool1d(x, 2, 2, 0, true, false).dims()[2], 2);
}

TYPED_TEST(PoolEdge, AdaptiveGlobalIsMean) {
  using B = TypeParam;
  const auto x = make<B, 4>(iota(2 * 3 * 5), Shape{2, 1, 3, 5});
  expect_approx(m::adaptive_avg_pool2d(x, {1, 1}).into_data(),
                TensorData(std::vector<float>{7, 22}, Shape{2, 1, 1, 1}));
  expect_approx(m::adaptive_avg_pool1d(make<B, 3>(iota(5), Shape{1, 1, 5}), 2).into_data(),
                TensorData(std::vector<float>{1, 3}, Shape{1, 1, 2}));  // [0,3) [2,5)
}

TYPED_TEST(PoolEdge, InterpolateSameSizeIsIdentity) {
  using B = TypeParam;
  const auto x = make<B, 4>(iota(2 * 12, -3.f), Shape{1, 2, 3, 4});
  for (auto mode :
       {InterpolateMode::Nearest, InterpolateMode::Bilinear, InterpolateMode::Bicubic}) {
    for (bool align : {true, false}) {
      expect_approx(m::interpolate(x, {3, 4}, {mode, align}).into_data(), x.into_data(),
                    Tolerance::rel_abs(1e-6, 1e-5));
    }
  }
}

TYPED_TEST(PoolEdge, InterpolateBilinearAlignCornersHandComputed) {
  using B = TypeParam;
  // [0 2] -> 3 wide with align_corners: src = i * (2 - 1) / (3 - 1)
  const auto x = make<B, 4>({0, 2}, Shape{1, 1, 1, 2});
  expect_approx(m::interpolate(x, {1, 3}, {InterpolateMode::Bilinear, true}).into_data(),
                TensorData(std::vector<float>{0, 1, 2}, Shape{1, 1, 1, 3}));
  // half-pixel, 2 -> 4: src = [-0.25 -> 0, 0.25, 0.75, 1.25 (right tap clamped)]
  expect_approx(m::interpolate(x, {1, 4}, {InterpolateMode::Bilinear, false}).into_data(),
                TensorData(std::vector<float>{0, 0.5f, 1.5f, 2}, Shape{1, 1, 1, 4}));
}

TYPED_TEST(PoolEdge, GridSampleIdentityGrid) {
  using B = TypeParam;
  const auto x = make<B, 4>(iota(6), Shape{1, 1, 2, 3});
  // align_corners=true: pixel (h, w) at (-1 + 2w/(W-1), -1 + 2h/(H-1))
  std::vector<float> g;
  for (int h = 0; h < 2; ++h)
    for (int w = 0; w < 3; ++w) {
      g.push_back(-1.f + 2.f * static_cast<float>(w) / 2.f);
      g.push_back(-1.f + 2.f * static_cast<float>(h));
    }
  const auto grid = make<B, 4>(g, Shape{1, 2, 3, 2});
  for (auto mode : {InterpolateMode::Bilinear, InterpolateMode::Nearest}) {
    GridSampleOptions o;
    o.mode = mode;
    o.align_corners = true;
    expect_approx(m::grid_sample_2d(x, grid, o).into_data(), x.into_data());
  }
  // zeros padding: a point far outside gives 0, border gives the corner value.
  const auto far = make<B, 4>({5.f, 5.f}, Shape{1, 1, 1, 2});
  EXPECT_EQ(m::grid_sample_2d(x, far).template to_vec<float>()[0], 0.f);
  GridSampleOptions border;
  border.padding_mode = GridSamplePaddingMode::Border;
  EXPECT_EQ(m::grid_sample_2d(x, far, border).template to_vec<float>()[0], 5.f);
  // huge coordinates sample nothing with zeros padding (torch maps them out of range
  // instead of overflowing); non-finite ones are covered by the nonfinite_* fixtures
  const auto huge = make<B, 4>({1e30f, 0.f, -1e30f, 0.f, 0.f, 3e9f}, Shape{1, 1, 3, 2});
  for (auto mode : {InterpolateMode::Bilinear, InterpolateMode::Nearest}) {
    GridSampleOptions o;
    o.mode = mode;
    expect_eq(m::grid_sample_2d(x, huge, o).into_data(),
              TensorData(std::vector<float>{0, 0, 0}, Shape{1, 1, 1, 3}));
  }
}

// ---- dtypes ----------------------------------------------------------------------------

TYPED_TEST(PoolEdge, HalfDtypesComputeThroughF32) {
  using B = TypeParam;
  const auto x32 = make<B, 4>(iota(2 * 36, -20.f), Shape{1, 2, 6, 6});
  for (DType dt : {DType::F16, DType::BF16, DType::F64}) {
    const auto x = x32.cast(dt);
    const auto mp = m::max_pool2d(x, {3, 3}, {2, 2}, {1, 1}, {1, 1}, true);
    EXPECT_EQ(mp.dtype(), dt);
    expect_approx(mp.into_data().convert(DType::F32),
                  m::max_pool2d(x32, {3, 3}, {2, 2}, {1, 1}, {1, 1}, true).into_data(),
                  Tolerance::permissive());
    const auto [v, i] = m::max_pool2d_with_indices(x, {2, 2}, {2, 2});
    EXPECT_EQ(i.dtype(), DType::I64);
    expect_eq(i.into_data(), m::max_pool2d_with_indices(x32, {2, 2}, {2, 2}).second.into_data());
    const auto ap = m::avg_pool2d(x, {3, 3}, {2, 2}, {1, 1}, false, true);
    EXPECT_EQ(ap.dtype(), dt);
    expect_approx(ap.into_data().convert(DType::F32),
                  m::avg_pool2d(x32, {3, 3}, {2, 2}, {1, 1}, false, true).into_data(),
                  Tolerance::permissive());
    expect_approx(m::adaptive_avg_pool2d(x, {4, 5}).into_data().convert(DType::F32),
                  m::adaptive_avg_pool2d(x32, {4, 5}).into_data(), Tolerance::permissive());
    const InterpolateOptions bic{InterpolateMode::Bicubic, false};
    expect_approx(m::interpolate(x, {9, 4}, bic).into_data().convert(DType::F32),
                  m::interpolate(x32, {9, 4}, bic).into_data(), Tolerance::rel_abs(1e-2, 0.1));
    const auto grid32 = make<B, 4>({-0.9f, 0.3f, 0.1f, 1.2f, 0.7f, -0.4f}, Shape{1, 1, 3, 2});
    expect_approx(m::grid_sample_2d(x, grid32.cast(dt)).into_data().convert(DType::F32),
                  m::grid_sample_2d(x32, grid32).into_data(), Tolerance::rel_abs(1e-2, 0.1));
  }
}

// ---- layouts ---------------------------------------------------------------------------

TYPED_TEST(PoolEdge, NonContiguousInputs) {
  using B = TypeParam;
  if constexpr (std::is_same_v<B, Cpu>) {
    // dense [1, 2, 5, 6] holds x^T for x = [1, 2, 6, 5]
    const auto dense = make<B, 4>(iota(60, -30.f), Shape{1, 2, 5, 6});
    const Tensor<B, 4> view(transposed_view(dense.primitive()));
    ASSERT_FALSE(view.primitive().is_contiguous());
    // the same values materialised contiguously
    std::vector<float> t;
    const auto d = dense.template to_vec<float>();
    for (int c = 0; c < 2; ++c)
      for (int i = 0; i < 6; ++i)
        for (int j = 0; j < 5; ++j) t.push_back(d[static_cast<std::size_t>(c * 30 + j * 6 + i)]);
    const auto x = make<B, 4>(t, Shape{1, 2, 6, 5});
    expect_eq(view.into_data(), x.into_data());
    expect_eq(
        m::max_pool2d_with_indices(view, {3, 2}, {2, 1}, {1, 1}, {1, 1}, true).second.into_data(),
        m::max_pool2d_with_indices(x, {3, 2}, {2, 1}, {1, 1}, {1, 1}, true).second.into_data());
    expect_eq(m::avg_pool2d(view, {2, 2}, {2, 2}, {1, 1}, false, true).into_data(),
              m::avg_pool2d(x, {2, 2}, {2, 2}, {1, 1}, false, true).into_data());
    expect_eq(m::adaptive_avg_pool2d(view, {4, 3}).into_data(),
              m::adaptive_avg_pool2d(x, {4, 3}).into_data());
    const InterpolateOptions bil{InterpolateMode::Bilinear, false};
    expect_eq(m::interpolate(view, {7, 3}, bil).into_data(),
              m::interpolate(x, {7, 3}, bil).into_data());
    // 1-d on a strided view: every other column (offset 1, stride 2)
    CpuTensor cols = make<B, 3>(iota(12), Shape{1, 2, 6}).primitive();
    cols.shape = Shape{1, 2, 3};
    cols.strides = {12, 6, 2};
    cols.offset = 1;
    const Tensor<B, 3> odd(cols);
    expect_eq(m::max_pool1d(odd, 2, 1).into_data(),
              TensorData(std::vector<float>{3, 5, 9, 11}, Shape{1, 2, 2}));
    // expanded (stride 0) batch and a non-contiguous grid
    CpuTensor ex = make<B, 4>(iota(6), Shape{1, 1, 2, 3}).primitive();
    ex.shape = Shape{3, 1, 2, 3};
    ex.strides = {0, 6, 3, 1};
    const Tensor<B, 4> expanded(ex);
    const auto pooled = m::avg_pool2d(expanded, {2, 2}, {1, 1});
    expect_eq(pooled.into_data(),
              TensorData(std::vector<float>{2, 3, 2, 3, 2, 3}, Shape{3, 1, 1, 2}));
    CpuTensor g = make<B, 4>({-1, -1, 1, 1}, Shape{1, 1, 1, 4}).primitive();
    g.shape = Shape{3, 1, 1, 2};
    g.strides = {0, 4, 4, 1};
    GridSampleOptions ac;
    ac.align_corners = true;
    expect_eq(m::grid_sample_2d(expanded, Tensor<B, 4>(g), ac).into_data(),
              TensorData(std::vector<float>{0, 0, 0}, Shape{3, 1, 1, 1}));
  }
}

TYPED_TEST(PoolEdge, EmptyBatchAndChannels) {
  using B = TypeParam;
  const auto x = Tensor<B, 4>::zeros(Shape{0, 3, 5, 5});
  EXPECT_EQ(m::max_pool2d(x, {2, 2}, {2, 2}).shape(), (Shape{0, 3, 2, 2}));
  EXPECT_EQ(m::max_pool2d_with_indices(x, {2, 2}, {2, 2}).second.shape(), (Shape{0, 3, 2, 2}));
  EXPECT_EQ(m::avg_pool2d(x, {3, 3}, {1, 1}).shape(), (Shape{0, 3, 3, 3}));
  EXPECT_EQ(m::adaptive_avg_pool2d(x, {2, 4}).shape(), (Shape{0, 3, 2, 4}));
  EXPECT_EQ(m::interpolate(x, {7, 1}).shape(), (Shape{0, 3, 7, 1}));
  const auto y = Tensor<B, 3>::zeros(Shape{2, 0, 4});
  EXPECT_EQ(m::max_pool1d(y, 2, 2).shape(), (Shape{2, 0, 2}));
  EXPECT_EQ(m::avg_pool1d(y, 2, 1).shape(), (Shape{2, 0, 3}));
  EXPECT_EQ(m::adaptive_avg_pool1d(y, 3).shape(), (Shape{2, 0, 3}));
  EXPECT_EQ(m::grid_sample_2d(Tensor<B, 4>::zeros(Shape{2, 0, 3, 3}),
                              Tensor<B, 4>::zeros(Shape{2, 4, 1, 2}))
                .shape(),
            (Shape{2, 0, 4, 1}));
}

// ---- errors ----------------------------------------------------------------------------

TYPED_TEST(PoolEdge, ErrorKernelLargerThanPaddedInput) {
  using B = TypeParam;
  const auto x = Tensor<B, 4>::zeros(Shape{1, 1, 3, 8});
  EMBER_EXPECT_THROW_MSG((m::max_pool2d(x, {4, 2}, {1, 1})), ShapeError,
                         "[max_pool2d] input of shape [1, 1, 3, 8]: kernel of effective size 4 is "
                         "larger than the padded input size 3 of dim 2");
  EMBER_EXPECT_THROW_MSG((m::max_pool2d(x, {2, 3}, {1, 1}, {0, 0}, {1, 4})), ShapeError,
                         "kernel of effective size 9 is larger than the padded input size 8");
  EMBER_EXPECT_THROW_MSG((m::avg_pool2d(x, {6, 1}, {1, 1}, {1, 0})), ShapeError,
                         "[avg_pool2d] input of shape [1, 1, 3, 8]");
  EMBER_EXPECT_THROW_MSG((m::max_pool1d(Tensor<B, 3>::zeros(Shape{1, 1, 2}), 3, 1)), ShapeError,
                         "[max_pool1d] input of shape [1, 1, 2]: kernel of effective size 3");
  EMBER_EXPECT_THROW_MSG((m::avg_pool1d(Tensor<B, 3>::zeros(Shape{1, 1, 2}), 3, 1)), ShapeError,
                         "[avg_pool1d]");
}

TYPED_TEST(PoolEdge, ErrorPaddingMoreThanHalfKernel) {
  using B = TypeParam;
  const auto x = Tensor<B, 4>::zeros(Shape{1, 1, 8, 8});
  EMBER_EXPECT_THROW_MSG((m::max_pool2d(x, {3, 3}, {1, 1}, {2, 1})), ValueError,
                         "[max_pool2d] pad should be at most half of kernel size, but got pad=2 "
                         "and kernel_size=3");
  // torch compares with the kernel, not the dilated kernel
  EMBER_EXPECT_THROW_MSG((m::max_pool2d_with_indices(x, {3, 3}, {1, 1}, {0, 2}, {1, 3})),
                         ValueError, "[max_pool2d_with_indices] pad should be at most half");
  EMBER_EXPECT_THROW_MSG((m::avg_pool2d(x, {2, 2}, {1, 1}, {0, 2})), ValueError,
                         "[avg_pool2d] pad should be at most half of kernel size, but got pad=2 "
                         "and kernel_size=2");
  EMBER_EXPECT_THROW_MSG((m::avg_pool1d(Tensor<B, 3>::zeros(Shape{1, 1, 8}), 4, 1, 3)), ValueError,
                         "[avg_pool1d] pad should be at most half");
  EMBER_EXPECT_THROW_MSG((m::max_pool1d_with_indices(Tensor<B, 3>::zeros(Shape{1, 1, 8}), 1, 1, 1)),
                         ValueError, "[max_pool1d_with_indices] pad should be at most half");
}

TYPED_TEST(PoolEdge, ErrorNonPositiveArguments) {
  using B = TypeParam;
  const auto x = Tensor<B, 4>::zeros(Shape{1, 1, 4, 4});
  EMBER_EXPECT_THROW_MSG((m::max_pool2d(x, {0, 2}, {1, 1})), ValueError,
                         "[max_pool2d] kernel size should be greater than zero, but got 0");
  EMBER_EXPECT_THROW_MSG((m::avg_pool2d(x, {2, 2}, {1, 0})), ValueError,
                         "[avg_pool2d] stride should be greater than zero, but got 0");
  EMBER_EXPECT_THROW_MSG((m::max_pool2d(x, {2, 2}, {1, 1}, {0, 0}, {0, 1})), ValueError,
                         "[max_pool2d] dilation should be greater than zero, but got 0");
  EMBER_EXPECT_THROW_MSG((m::max_pool2d(x, {2, 2}, {1, 1}, {-1, 0})), ValueError,
                         "[max_pool2d] padding should be non-negative, but got -1");
}

TYPED_TEST(PoolEdge, ErrorWrongRank) {
  using B = TypeParam;
  const auto x3 = Tensor<B, 3>::zeros(Shape{1, 4, 4});
  const auto x4 = Tensor<B, 4>::zeros(Shape{1, 1, 4, 4});
  EMBER_EXPECT_THROW_MSG((m::max_pool2d(x3, {2, 2}, {2, 2})), ShapeError,
                         "[max_pool2d] input of shape [1, 4, 4] has rank 3, expected rank 4 "
                         "[batch, channels, height, width]");
  EMBER_EXPECT_THROW_MSG((m::avg_pool2d(x3, {2, 2}, {2, 2})), ShapeError,
                         "[avg_pool2d] input of shape [1, 4, 4] has rank 3");
  EMBER_EXPECT_THROW_MSG((m::max_pool1d(x4, 2, 2)), ShapeError,
                         "[max_pool1d] input of shape [1, 1, 4, 4] has rank 4, expected rank 3 "
                         "[batch, channels, length]");
  EMBER_EXPECT_THROW_MSG((m::avg_pool1d(x4, 2, 2)), ShapeError,
                         "[avg_pool1d] input of shape [1, 1, 4, 4] has rank 4");
  EMBER_EXPECT_THROW_MSG((m::adaptive_avg_pool2d(x3, {2, 2})), ShapeError,
                         "[adaptive_avg_pool2d] input of shape [1, 4, 4] has rank 3");
  EMBER_EXPECT_THROW_MSG((m::adaptive_avg_pool1d(x4, 2)), ShapeError,
                         "[adaptive_avg_pool1d] input of shape [1, 1, 4, 4] has rank 4");
  EMBER_EXPECT_THROW_MSG((m::interpolate(x3, {2, 2})), ShapeError,
                         "[interpolate] input of shape [1, 4, 4] has rank 3");
  EMBER_EXPECT_THROW_MSG((m::grid_sample_2d(x3, Tensor<B, 4>::zeros(Shape{1, 2, 2, 2}))),
                         ShapeError, "[grid_sample_2d] input of shape [1, 4, 4] has rank 3");
  EMBER_EXPECT_THROW_MSG((m::grid_sample_2d(x4, Tensor<B, 3>::zeros(Shape{1, 2, 2}))), ShapeError,
                         "[grid_sample_2d] grid of shape [1, 2, 2] has rank 3, expected rank 4");
}

TYPED_TEST(PoolEdge, ErrorOutputSizeZero) {
  using B = TypeParam;
  const auto x = Tensor<B, 4>::zeros(Shape{1, 1, 4, 4});
  EMBER_EXPECT_THROW_MSG((m::interpolate(x, {0, 3})), ValueError,
                         "[interpolate] output size [0, 3] must be positive (input of shape "
                         "[1, 1, 4, 4])");
  EMBER_EXPECT_THROW_MSG((m::adaptive_avg_pool2d(x, {2, 0})), ValueError,
                         "[adaptive_avg_pool2d] output size [2, 0] must be positive");
  EMBER_EXPECT_THROW_MSG((m::adaptive_avg_pool1d(Tensor<B, 3>::zeros(Shape{1, 1, 4}), 0)),
                         ValueError, "[adaptive_avg_pool1d] output size 0 must be positive");
}

TYPED_TEST(PoolEdge, ErrorEmptySpatialDim) {
  using B = TypeParam;
  const auto x = Tensor<B, 4>::zeros(Shape{1, 1, 0, 4});
  EMBER_EXPECT_THROW_MSG((m::max_pool2d(x, {1, 1}, {1, 1})), ShapeError,
                         "[max_pool2d] input of shape [1, 1, 0, 4] has an empty spatial dim 2");
  EMBER_EXPECT_THROW_MSG((m::interpolate(x, {2, 2})), ShapeError,
                         "[interpolate] input of shape [1, 1, 0, 4] has an empty");
  EMBER_EXPECT_THROW_MSG((m::adaptive_avg_pool2d(x, {2, 2})), ShapeError, "[adaptive_avg_pool2d]");
  EMBER_EXPECT_THROW_MSG((m::grid_sample_2d(x, Tensor<B, 4>::zeros(Shape{1, 2, 2, 2}))), ShapeError,
                         "[grid_sample_2d] input of shape [1, 1, 0, 4] has an empty spatial dim 2");
}

TYPED_TEST(PoolEdge, ErrorGridShapeMismatch) {
  using B = TypeParam;
  const auto x = Tensor<B, 4>::zeros(Shape{2, 3, 4, 4});
  EMBER_EXPECT_THROW_MSG((m::grid_sample_2d(x, Tensor<B, 4>::zeros(Shape{2, 5, 5, 3}))), ShapeError,
                         "[grid_sample_2d] grid of shape [2, 5, 5, 3] must have last dim 2 (x, y), "
                         "input of shape [2, 3, 4, 4]");
  EMBER_EXPECT_THROW_MSG((m::grid_sample_2d(x, Tensor<B, 4>::zeros(Shape{1, 5, 5, 2}))), ShapeError,
                         "[grid_sample_2d] grid of shape [1, 5, 5, 2] and input of shape "
                         "[2, 3, 4, 4] have different batch sizes (1 vs 2)");
}

TYPED_TEST(PoolEdge, ErrorGridDtypeAndMode) {
  using B = TypeParam;
  const auto x = Tensor<B, 4>::zeros(Shape{1, 1, 4, 4});
  const auto g = Tensor<B, 4>::zeros(Shape{1, 2, 2, 2}, {}, DType::F64);
  EMBER_EXPECT_THROW_MSG((m::grid_sample_2d(x, g)), DTypeError,
                         "[grid_sample_2d] grid dtype f64 differs from input dtype f32");
  GridSampleOptions bicubic;
  bicubic.mode = InterpolateMode::Bicubic;
  EMBER_EXPECT_THROW_MSG((m::grid_sample_2d(x, g.cast(DType::F32), bicubic)), UnsupportedError,
                         "[grid_sample_2d] bicubic mode is not supported");
}

TYPED_TEST(PoolEdge, ResultsDoNotDependOnThreadCount) {
  using B = TypeParam;
  if constexpr (std::is_same_v<B, Cpu>) {
    // 4 * 16 planes of 33 x 31: large enough for the kernels to split across threads.
    const auto x = Tensor<B, 4>::random(Shape{4, 16, 33, 31});
    const auto grid = Tensor<B, 4>::random(Shape{4, 20, 17, 2}, Distribution::uniform(-1.3, 1.3));
    auto run = [&] {
      std::vector<TensorData> r;
      auto [v, i] = m::max_pool2d_with_indices(x, {3, 3}, {2, 2}, {1, 1}, {1, 1}, true);
      r.push_back(v.into_data());
      r.push_back(i.into_data());
      r.push_back(m::avg_pool2d(x, {3, 2}, {2, 2}, {1, 1}, false, true).into_data());
      r.push_back(m::adaptive_avg_pool2d(x, {5, 7}).into_data());
      r.push_back(m::interpolate(x, {40, 20}, {InterpolateMode::Bicubic, false}).into_data());
      r.push_back(m::grid_sample_2d(x, grid).into_data());
      return r;
    };
    const int saved = B::num_threads();
    B::set_num_threads(1);
    const auto serial = run();
    B::set_num_threads(4);
    const auto parallel = run();
    B::set_num_threads(saved);
    for (std::size_t k = 0; k < serial.size(); ++k) expect_eq(parallel[k], serial[k]);
  }
}

TYPED_TEST(PoolEdge, OptionDefaultsAndBuildersFollowBurn) {
  using B = TypeParam;
  const InterpolateOptions io{};
  EXPECT_EQ(io.mode, InterpolateMode::Nearest);
  EXPECT_TRUE(io.align_corners);  // Burn's default (PyTorch's is false)
  EXPECT_FALSE(
      InterpolateOptions{InterpolateMode::Bilinear}.with_align_corners(false).align_corners);
  const GridSampleOptions go{};
  EXPECT_EQ(go.mode, InterpolateMode::Bilinear);
  EXPECT_EQ(go.padding_mode, GridSamplePaddingMode::Zeros);
  EXPECT_FALSE(go.align_corners);
  const auto g2 = GridSampleOptions{InterpolateMode::Nearest}
                      .with_padding_mode(GridSamplePaddingMode::Reflection)
                      .with_align_corners(true);
  EXPECT_EQ(g2.mode, InterpolateMode::Nearest);
  EXPECT_EQ(g2.padding_mode, GridSamplePaddingMode::Reflection);
  EXPECT_TRUE(g2.align_corners);
  // the default interpolate is nearest: 2x upsampling repeats each value
  const auto x = make<B, 4>({1, 2}, Shape{1, 1, 1, 2});
  expect_eq(m::interpolate(x, {1, 4}).into_data(),
            TensorData(std::vector<float>{1, 1, 2, 2}, Shape{1, 1, 1, 4}));
}
