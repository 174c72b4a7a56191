// Conv family: hand-computed edge cases (empty batch, strided inputs, half dtypes, NaN,
// adjointness of conv / conv_transpose and unfold / fold, threading paths) and one test
// per front-end check.
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>

#include "backends.hpp"
#include "ember/tensor/module/conv.hpp"
#include "fixtures.hpp"

using namespace ember;
using ember::test::expect_approx;
using ember::test::expect_eq;

namespace {

template <class B, std::size_t D>
Tensor<B, D> seq(const Shape& shape, double scale = 1.0, DType dt = DType::F32) {
  std::vector<double> v(static_cast<std::size_t>(shape.numel()));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = scale * static_cast<double>((i * 7) % 11) - 2.0;
  return Tensor<B, D>::from_data(TensorData(std::move(v), shape), {}, dt);
}

double dot(const TensorData& a, const TensorData& b) {
  const auto x = a.to_vec<double>(), y = b.to_vec<double>();
  return std::inner_product(x.begin(), x.end(), y.begin(), 0.0);
}

}  // namespace

template <class B>
class ConvTest : public ::testing::Test {};
TYPED_TEST_SUITE(ConvTest, ember::test::ConformanceBackends, ember::test::BackendNames);

// ---- values -------------------------------------------------------------------------------

TYPED_TEST(ConvTest, Conv2dHandComputed) {
  using B = TypeParam;
  // x = 0..15 as 4x4, weight = [[1, 0], [0, -1]] -> x[i][j] - x[i+1][j+1] = -5 everywhere.
  auto x =
      Tensor<B, 4>::from_floats({{{{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9, 10, 11}, {12, 13, 14, 15}}}});
  auto w = Tensor<B, 4>::from_floats({{{{1, 0}, {0, -1}}}});
  auto b = Tensor<B, 1>::from_floats({0.5});
  const auto y = module::conv2d(x, w, b, {.stride = {2, 1}});
  EXPECT_EQ(y.shape(), (Shape{1, 1, 2, 3}));
  expect_eq(y.into_data(), TensorData(std::vector<float>(6, -4.5f), Shape{1, 1, 2, 3}));
}

TYPED_TEST(ConvTest, Conv1dPaddingHandComputed) {
  using B = TypeParam;
  auto x = Tensor<B, 3>::from_floats({{{1, 2, 3}}});
  auto w = Tensor<B, 3>::from_floats({{{1, 1, 1}}});
  const auto y = module::conv1d(x, w, std::nullopt, {.padding = {1}});
  expect_eq(y.into_data(), TensorData(std::vector<float>{3, 6, 5}, Shape{1, 1, 3}));
}

TYPED_TEST(ConvTest, ConvTranspose1dHandComputed) {
  using B = TypeParam;
  // Each input scatters weight * x at stride 2: [1*w, 2*w] overlapping by one.
  auto x = Tensor<B, 3>::from_floats({{{1, 2}}});
  auto w = Tensor<B, 3>::from_floats({{{1, 10, 100}}});
  const auto y = module::conv_transpose1d(x, w, std::nullopt, {.stride = {2}, .padding_out = {1}});
  expect_eq(y.into_data(), TensorData(std::vector<float>{1, 10, 102, 20, 200, 0}, Shape{1, 1, 6}));
}

TYPED_TEST(ConvTest, EmptyBatch) {
  using B = TypeParam;
  auto x = Tensor<B, 4>::zeros(Shape{0, 3, 5, 5});
  auto w = Tensor<B, 4>::ones(Shape{2, 3, 3, 3});
  EXPECT_EQ(module::conv2d(x, w, std::nullopt).shape(), (Shape{0, 2, 3, 3}));
  auto wt = Tensor<B, 4>::ones(Shape{3, 2, 3, 3});
  EXPECT_EQ(module::conv_transpose2d(x, wt, std::nullopt).shape(), (Shape{0, 2, 7, 7}));
  EXPECT_EQ(module::unfold4d(x, {2, 2}).shape(), (Shape{0, 12, 16}));
}

TYPED_TEST(ConvTest, ZeroInputChannelsGiveBias) {
  using B = TypeParam;
  auto x = Tensor<B, 4>::zeros(Shape{2, 0, 3, 3});
  auto w = Tensor<B, 4>::zeros(Shape{2, 0, 2, 2});
  auto b = Tensor<B, 1>::from_floats({1.5, -2.0});
  const auto y = module::conv2d(x, w, b);
  EXPECT_EQ(y.shape(), (Shape{2, 2, 2, 2}));
  const auto v = y.template to_vec<float>();
  for (std::size_t i = 0; i < v.size(); ++i) EXPECT_FLOAT_EQ(v[i], (i / 4) % 2 == 0 ? 1.5f : -2.0f);
  auto x64 = Tensor<B, 3>::zeros(Shape{1, 0, 4}, {}, DType::F64);
  auto w64 = Tensor<B, 3>::zeros(Shape{3, 0, 2}, {}, DType::F64);
  expect_eq(module::conv1d(x64, w64, std::nullopt).into_data(),
            TensorData(std::vector<double>(9, 0.0), Shape{1, 3, 3}));
}

TYPED_TEST(ConvTest, ConvTransposeIsAdjointOfConv) {
  using B = TypeParam;
  // <conv(x, w), y> == <x, conv_transpose(y, w)> for the same stride/padding/dilation/groups.
  auto x = seq<B, 4>(Shape{2, 4, 7, 6}, 0.25, DType::F64);
  auto w = seq<B, 4>(Shape{6, 2, 3, 2}, 0.5, DType::F64);
  ConvOptions<2> o{{2, 1}, {1, 0}, {1, 2}, 2};
  const auto cx = module::conv2d(x, w, std::nullopt, o);
  auto y = seq<B, 4>(cx.shape(), 0.125, DType::F64);
  // padding_out recovers the input size lost to the stride's floor.
  const std::int64_t lost = (7 + 2 - 2 - 1) % 2;
  const auto ty =
      module::conv_transpose2d(y, w, std::nullopt, {o.stride, o.padding, {lost, 0}, o.dilation, 2});
  ASSERT_EQ(ty.shape(), x.shape());
  EXPECT_NEAR(dot(cx.into_data(), y.into_data()), dot(x.into_data(), ty.into_data()), 1e-9);
}

TYPED_TEST(ConvTest, FoldIsAdjointOfUnfold) {
  using B = TypeParam;
  UnfoldOptions o{{2, 1}, {1, 1}, {1, 2}};
  auto x = seq<B, 4>(Shape{2, 3, 6, 5}, 0.5, DType::F64);
  const auto ux = module::unfold4d(x, {3, 2}, o);
  auto y = seq<B, 3>(ux.shape(), 0.25, DType::F64);
  const auto fy = module::fold4d(y, {6, 5}, {3, 2}, o);
  EXPECT_NEAR(dot(ux.into_data(), y.into_data()), dot(x.into_data(), fy.into_data()), 1e-9);
}

TYPED_TEST(ConvTest, UnfoldFoldNonOverlappingRoundtrip) {
  using B = TypeParam;
  auto x = seq<B, 4>(Shape{2, 3, 4, 6});
  UnfoldOptions o{{2, 3}, {0, 0}, {1, 1}};
  const auto back = module::fold4d(module::unfold4d(x, {2, 3}, o), {4, 6}, {2, 3}, o);
  expect_eq(back.into_data(), x.into_data());
}

TYPED_TEST(ConvTest, StridedInputMatchesContiguous) {
  using B = TypeParam;
  auto x = seq<B, 4>(Shape{2, 3, 5, 6});
  auto w = seq<B, 4>(Shape{4, 3, 3, 3}, 0.5);
  const auto ref = module::conv2d(x, w, std::nullopt, {.padding = {1, 1}}).into_data();
  if constexpr (std::is_same_v<B, Cpu>) {
    // The same values stored channels-last and viewed as NCHW (a permuted view).
    const auto v = x.into_data().template to_vec<float>();
    std::vector<float> nhwc(v.size());
    for (int n = 0; n < 2; ++n)
      for (int c = 0; c < 3; ++c)
        for (int h = 0; h < 5; ++h)
          for (int ww = 0; ww < 6; ++ww)
            nhwc[((n * 5 + h) * 6 + ww) * 3 + c] = v[((n * 3 + c) * 5 + h) * 6 + ww];
    CpuTensor p = Cpu::float_from_data(TensorData(nhwc, Shape{2, 5, 6, 3}), {});
    p.shape = Shape{2, 3, 5, 6};
    p.strides = {90, 1, 18, 3};
    ASSERT_FALSE(p.is_contiguous());
    const auto y = module::conv2d(Tensor<B, 4>(p), w, std::nullopt, {.padding = {1, 1}});
    expect_approx(y.into_data(), ref);
  }
}

TYPED_TEST(ConvTest, ExpandedBiasAndOffsetView) {
  using B = TypeParam;
  if constexpr (std::is_same_v<B, Cpu>) {
    // A bias of stride 0 (one value expanded) and an input at a non-zero storage offset.
    CpuTensor bias = Cpu::float_from_data(TensorData(std::vector<float>{2.0f}, Shape{1}), {});
    bias.shape = Shape{3};
    bias.strides = {0};
    CpuTensor big =
        Cpu::float_from_data(TensorData(std::vector<float>(1 + 2 * 4, 1.0f), Shape{9}), {});
    big.data<float>()[0] = 100.0f;
    big.offset = 1;
    big.shape = Shape{1, 2, 4};
    big.strides = {8, 4, 1};
    auto w = Tensor<B, 3>::ones(Shape{3, 2, 2});
    const auto y = module::conv1d(Tensor<B, 3>(big), w, Tensor<B, 1>(bias));
    expect_eq(y.into_data(), TensorData(std::vector<float>(9, 6.0f), Shape{1, 3, 3}));
  }
}

TYPED_TEST(ConvTest, HalfDtypesComputeThroughF32) {
  using B = TypeParam;
  auto x = seq<B, 4>(Shape{2, 4, 6, 6}, 0.25);
  auto w = seq<B, 4>(Shape{4, 2, 3, 3}, 0.125);
  auto b = Tensor<B, 1>::from_floats({0.5, -0.5, 1.0, 0.0});
  ConvOptions<2> o{{1, 1}, {1, 1}, {1, 1}, 2};
  const auto ref = module::conv2d(x, w, b, o).into_data();
  for (DType dt : {DType::F16, DType::BF16}) {
    const auto y = module::conv2d(x.cast(dt), w.cast(dt), b.cast(dt), o);
    EXPECT_EQ(y.dtype(), dt);
    expect_approx(y.into_data(), ref.convert(dt), Tolerance::permissive());
  }
  const auto t = module::conv_transpose2d(x.cast(DType::F16), w.cast(DType::F16), std::nullopt);
  EXPECT_EQ(t.dtype(), DType::F16);
  expect_approx(t.into_data(),
                module::conv_transpose2d(x, w, std::nullopt).into_data().convert(DType::F16),
                Tolerance::permissive());
}

TYPED_TEST(ConvTest, NaNPropagatesOnlyToItsWindows) {
  using B = TypeParam;
  std::vector<float> v(8, 1.0f);
  v[0] = std::numeric_limits<float>::quiet_NaN();
  auto x = Tensor<B, 3>::from_data(TensorData(v, Shape{1, 1, 8}));
  auto w = Tensor<B, 3>::ones(Shape{1, 1, 3});
  const auto y = module::conv1d(x, w, std::nullopt).template to_vec<float>();
  ASSERT_EQ(y.size(), 6u);
  EXPECT_TRUE(std::isnan(y[0]));
  for (std::size_t i = 1; i < 6; ++i) EXPECT_FLOAT_EQ(y[i], 3.0f);
}

TYPED_TEST(ConvTest, BatchedEqualsPerImage) {
  using B = TypeParam;
  // Large batch goes through one path (parallel jobs or threaded BLAS), single images another.
  auto x = seq<B, 4>(Shape{6, 8, 10, 10}, 0.25);
  auto w = seq<B, 4>(Shape{16, 8, 3, 3}, 0.125);
  auto b = seq<B, 1>(Shape{16});
  const auto all = module::conv2d(x, w, b, {.padding = {1, 1}}).template to_vec<float>();
  const auto xs = x.template to_vec<float>();
  for (std::int64_t n = 0; n < 6; ++n) {
    std::vector<float> one(xs.begin() + n * 800, xs.begin() + (n + 1) * 800);
    auto xn = Tensor<B, 4>::from_data(TensorData(one, Shape{1, 8, 10, 10}));
    const auto yn = module::conv2d(xn, w, b, {.padding = {1, 1}}).template to_vec<float>();
    for (std::size_t i = 0; i < yn.size(); ++i) ASSERT_FLOAT_EQ(yn[i], all[n * 1600 + i]);
  }
}

TYPED_TEST(ConvTest, ThreadCountDoesNotChangeResults) {
  using B = TypeParam;
  if constexpr (std::is_same_v<B, Cpu>) {
    auto x = seq<B, 4>(Shape{4, 16, 20, 20}, 0.25);
    auto w = seq<B, 4>(Shape{32, 16, 3, 3}, 0.125);
    const int before = Cpu::num_threads();
    Cpu::set_num_threads(1);
    const auto one = module::conv2d(x, w, std::nullopt, {.padding = {1, 1}}).into_data();
    Cpu::set_num_threads(4);
    const auto four = module::conv2d(x, w, std::nullopt, {.padding = {1, 1}}).into_data();
    Cpu::set_num_threads(before);
    expect_approx(four, one, Tolerance::strict());
  }
}

TYPED_TEST(ConvTest, DeformIntegerOffsetShiftsInput) {
  using B = TypeParam;
  // A constant offset of (+1, 0) on a 1x1 kernel reads the next row; the last row reads
  // outside the input and gives zero.
  auto x = seq<B, 4>(Shape{1, 2, 3, 4});
  auto w = Tensor<B, 4>::from_floats({{{{1}}, {{2}}}});
  std::vector<float> off(2 * 3 * 4, 0.0f);
  for (int i = 0; i < 12; ++i) off[i] = 1.0f;  // dy channel
  auto offset = Tensor<B, 4>::from_data(TensorData(off, Shape{1, 2, 3, 4}));
  const auto y =
      module::deform_conv2d(x, offset, w, std::nullopt, std::nullopt).template to_vec<float>();
  const auto xs = x.template to_vec<float>();
  for (int h = 0; h < 3; ++h)
    for (int ww = 0; ww < 4; ++ww) {
      const float want = h == 2 ? 0.0f : xs[(h + 1) * 4 + ww] + 2 * xs[12 + (h + 1) * 4 + ww];
      EXPECT_FLOAT_EQ(y[h * 4 + ww], want) << h << "," << ww;
    }
}

TYPED_TEST(ConvTest, DeformHalfMatchesF32) {
  using B = TypeParam;
  auto x = seq<B, 4>(Shape{1, 2, 5, 5}, 0.25);
  auto w = seq<B, 4>(Shape{3, 2, 3, 3}, 0.125);
  auto offset = seq<B, 4>(Shape{1, 18, 3, 3}, 0.1);
  auto mask = seq<B, 4>(Shape{1, 9, 3, 3}, 0.1);
  const auto ref = module::deform_conv2d(x, offset, w, mask, std::nullopt).into_data();
  const auto y = module::deform_conv2d(x.cast(DType::BF16), offset.cast(DType::BF16),
                                       w.cast(DType::BF16), mask.cast(DType::BF16), std::nullopt);
  EXPECT_EQ(y.dtype(), DType::BF16);
  expect_approx(y.into_data(), ref.convert(DType::BF16), Tolerance::rel_abs(5e-2, 5e-2));
}

TYPED_TEST(ConvTest, WrongRanksDoNotCompile) {
  using B = TypeParam;
  using T3 = Tensor<B, 3>;
  using T4 = Tensor<B, 4>;
  constexpr bool conv2d_on_rank3 = requires(T3 x, T4 w) {
    module::conv2d(x, w, std::nullopt);
  };
  constexpr bool conv1d_on_rank3 = requires(T3 x, T3 w) {
    module::conv1d(x, w, std::nullopt);
  };
  EXPECT_FALSE(conv2d_on_rank3);
  EXPECT_TRUE(conv1d_on_rank3);
}

// ---- errors -------------------------------------------------------------------------------

TYPED_TEST(ConvTest, ErrorChannelMismatchNamesShapes) {
  using B = TypeParam;
  auto x = Tensor<B, 4>::zeros(Shape{1, 4, 5, 5});
  auto w = Tensor<B, 4>::zeros(Shape{2, 3, 3, 3});
  EMBER_EXPECT_THROW_MSG(
      module::conv2d(x, w, std::nullopt), ShapeError,
      "[conv2d] input [1, 4, 5, 5] has 4 channels but weight [2, 3, 3, 3] with groups 1 expects 3");
  auto x1 = Tensor<B, 3>::zeros(Shape{1, 2, 5});
  auto w1 = Tensor<B, 3>::zeros(Shape{2, 3, 3});
  EMBER_EXPECT_THROW_MSG(module::conv1d(x1, w1, std::nullopt), ShapeError,
                         "[conv1d] input [1, 2, 5] has 2 channels but weight [2, 3, 3]");
}

TYPED_TEST(ConvTest, ErrorGroupsDoNotDivideChannels) {
  using B = TypeParam;
  auto x = Tensor<B, 4>::zeros(Shape{1, 3, 5, 5});
  auto w = Tensor<B, 4>::zeros(Shape{4, 1, 3, 3});
  EMBER_EXPECT_THROW_MSG(
      module::conv2d(x, w, std::nullopt, {.groups = 2}), ShapeError,
      "[conv2d] groups 2 does not divide the 3 input channels of input [1, 3, 5, 5]");
  auto x4 = Tensor<B, 4>::zeros(Shape{1, 4, 5, 5});
  auto w3 = Tensor<B, 4>::zeros(Shape{3, 2, 3, 3});
  EMBER_EXPECT_THROW_MSG(
      module::conv2d(x4, w3, std::nullopt, {.groups = 2}), ShapeError,
      "[conv2d] groups 2 does not divide the 3 output channels of weight [3, 2, 3, 3]");
}

TYPED_TEST(ConvTest, ErrorOutputSizeNotPositive) {
  using B = TypeParam;
  auto x = Tensor<B, 4>::zeros(Shape{1, 1, 2, 5});
  auto w = Tensor<B, 4>::zeros(Shape{1, 1, 3, 3});
  EMBER_EXPECT_THROW_MSG(module::conv2d(x, w, std::nullopt), ShapeError,
                         "[conv2d] output size 0 along spatial dim 0 is not positive: input [1, 1, "
                         "2, 5], kernel [1, 1, 3, 3]");
  auto x3 = Tensor<B, 5>::zeros(Shape{1, 1, 4, 4, 4});
  auto w3 = Tensor<B, 5>::zeros(Shape{1, 1, 2, 2, 2});
  EMBER_EXPECT_THROW_MSG(module::conv3d(x3, w3, std::nullopt, {.dilation = {1, 1, 4}}), ShapeError,
                         "[conv3d] output size 0 along spatial dim 2");
}

TYPED_TEST(ConvTest, ErrorBiasLength) {
  using B = TypeParam;
  auto x = Tensor<B, 4>::zeros(Shape{1, 2, 5, 5});
  auto w = Tensor<B, 4>::zeros(Shape{4, 2, 3, 3});
  auto b = Tensor<B, 1>::zeros(Shape{3});
  EMBER_EXPECT_THROW_MSG(
      module::conv2d(x, w, b), ShapeError,
      "[conv2d] bias of shape [3] does not match the 4 output channels of weight [4, 2, 3, 3]");
  auto wt = Tensor<B, 4>::zeros(Shape{2, 2, 3, 3});
  EMBER_EXPECT_THROW_MSG(
      module::conv_transpose2d(x, wt, b, {.groups = 2}), ShapeError,
      "[conv_transpose2d] bias of shape [3] does not match the 4 output channels");
}

TYPED_TEST(ConvTest, ErrorInvalidOptions) {
  using B = TypeParam;
  auto x = Tensor<B, 4>::zeros(Shape{1, 2, 5, 5});
  auto w = Tensor<B, 4>::zeros(Shape{2, 2, 3, 3});
  EMBER_EXPECT_THROW_MSG(module::conv2d(x, w, std::nullopt, {.stride = {1, 0}}), ValueError,
                         "[conv2d] stride [1, 0] must be >= 1");
  EMBER_EXPECT_THROW_MSG(module::conv2d(x, w, std::nullopt, {.padding = {-1, 0}}), ValueError,
                         "[conv2d] padding [-1, 0] must be >= 0");
  EMBER_EXPECT_THROW_MSG(module::conv2d(x, w, std::nullopt, {.dilation = {0, 1}}), ValueError,
                         "[conv2d] dilation [0, 1] must be >= 1");
  EMBER_EXPECT_THROW_MSG(module::conv2d(x, w, std::nullopt, {.groups = 0}), ValueError,
                         "[conv2d] groups 0 must be >= 1");
}

TYPED_TEST(ConvTest, ErrorMixedDtypes) {
  using B = TypeParam;
  auto x = Tensor<B, 4>::zeros(Shape{1, 2, 5, 5});
  auto w = Tensor<B, 4>::zeros(Shape{2, 2, 3, 3}, {}, DType::F64);
  EMBER_EXPECT_THROW_MSG(module::conv2d(x, w, std::nullopt), DTypeError,
                         "[conv2d] weight dtype f64 differs from input dtype f32");
  auto w32 = Tensor<B, 4>::zeros(Shape{2, 2, 3, 3});
  auto b = Tensor<B, 1>::zeros(Shape{2}, {}, DType::F16);
  EMBER_EXPECT_THROW_MSG(module::conv2d(x, w32, b), DTypeError,
                         "[conv2d] bias dtype f16 differs from input dtype f32");
}

TYPED_TEST(ConvTest, ErrorConvTransposeChecks) {
  using B = TypeParam;
  auto x = Tensor<B, 3>::zeros(Shape{1, 4, 5});
  auto w = Tensor<B, 3>::zeros(Shape{3, 2, 3});
  EMBER_EXPECT_THROW_MSG(
      module::conv_transpose1d(x, w, std::nullopt), ShapeError,
      "[conv_transpose1d] input [1, 4, 5] has 4 channels but weight [3, 2, 3] expects 3");
  auto w4 = Tensor<B, 3>::zeros(Shape{4, 2, 3});
  EMBER_EXPECT_THROW_MSG(
      module::conv_transpose1d(x, w4, std::nullopt, {.groups = 3}), ShapeError,
      "[conv_transpose1d] groups 3 does not divide the 4 input channels of input [1, 4, 5]");
  EMBER_EXPECT_THROW_MSG(
      module::conv_transpose1d(x, w4, std::nullopt, {.stride = {2}, .padding_out = {2}}),
      ValueError,
      "[conv_transpose1d] padding_out [2] must be >= 0 and smaller than stride [2] or dilation "
      "[1]");
  auto x1 = Tensor<B, 3>::zeros(Shape{1, 4, 1});
  auto k1 = Tensor<B, 3>::zeros(Shape{4, 2, 1});
  EMBER_EXPECT_THROW_MSG(module::conv_transpose1d(x1, k1, std::nullopt, {.padding = {1}}),
                         ShapeError,
                         "[conv_transpose1d] output size -1 along spatial dim 0 is not positive");
  auto x2 = Tensor<B, 4>::zeros(Shape{1, 4, 3, 3});
  auto w2 = Tensor<B, 4>::zeros(Shape{4, 1, 3, 3});
  EMBER_EXPECT_THROW_MSG(module::conv_transpose2d(x2, w2, std::nullopt, {.stride = {0, 1}}),
                         ValueError, "[conv_transpose2d] stride [0, 1] must be >= 1");
  auto x3 = Tensor<B, 5>::zeros(Shape{1, 2, 3, 3, 3});
  auto w3 = Tensor<B, 5>::zeros(Shape{3, 1, 2, 2, 2});
  EMBER_EXPECT_THROW_MSG(
      module::conv_transpose3d(x3, w3, std::nullopt), ShapeError,
      "[conv_transpose3d] input [1, 2, 3, 3, 3] has 2 channels but weight [3, 1, 2, 2, 2]");
}

TYPED_TEST(ConvTest, ErrorDeformChecks) {
  using B = TypeParam;
  auto x = Tensor<B, 4>::zeros(Shape{2, 4, 5, 5});
  auto w = Tensor<B, 4>::zeros(Shape{3, 4, 3, 3});
  auto off = Tensor<B, 4>::zeros(Shape{2, 18, 3, 3});
  auto bad_off = Tensor<B, 4>::zeros(Shape{2, 9, 3, 3});
  EMBER_EXPECT_THROW_MSG(
      module::deform_conv2d(x, bad_off, w, std::nullopt, std::nullopt), ShapeError,
      "[deform_conv2d] offset of shape [2, 9, 3, 3] does not match [2, 18, 3, 3]");
  auto bad_mask = Tensor<B, 4>::zeros(Shape{2, 9, 3, 2});
  EMBER_EXPECT_THROW_MSG(module::deform_conv2d(x, off, w, bad_mask, std::nullopt), ShapeError,
                         "[deform_conv2d] mask of shape [2, 9, 3, 2] does not match [2, 9, 3, 3]");
  EMBER_EXPECT_THROW_MSG(
      module::deform_conv2d(x, off, w, std::nullopt, std::nullopt, {.offset_groups = 3}),
      ShapeError, "[deform_conv2d] offset_groups 3 does not divide the 4 input channels");
  EMBER_EXPECT_THROW_MSG(
      module::deform_conv2d(x, off, w, std::nullopt, std::nullopt, {.offset_groups = 0}),
      ValueError, "[deform_conv2d] offset_groups 0 must be >= 1");
  auto w2 = Tensor<B, 4>::zeros(Shape{3, 3, 3, 3});
  EMBER_EXPECT_THROW_MSG(
      module::deform_conv2d(x, off, w2, std::nullopt, std::nullopt), ShapeError,
      "[deform_conv2d] input [2, 4, 5, 5] has 4 channels but weight [3, 3, 3, 3]");
  EMBER_EXPECT_THROW_MSG(
      module::deform_conv2d(x, off, w, std::nullopt, std::nullopt, {.weight_groups = 2}),
      ShapeError, "[deform_conv2d] groups 2 does not divide the 3 output channels");
  EMBER_EXPECT_THROW_MSG(
      module::deform_conv2d(x, off.cast(DType::F64), w, std::nullopt, std::nullopt), DTypeError,
      "[deform_conv2d] offset dtype f64 differs from input dtype f32");
  auto b = Tensor<B, 1>::zeros(Shape{4});
  EMBER_EXPECT_THROW_MSG(module::deform_conv2d(x, off, w, std::nullopt, b), ShapeError,
                         "[deform_conv2d] bias of shape [4] does not match the 3 output channels");
}

TYPED_TEST(ConvTest, ErrorUnfoldFoldChecks) {
  using B = TypeParam;
  auto x = Tensor<B, 4>::zeros(Shape{1, 2, 3, 3});
  EMBER_EXPECT_THROW_MSG(module::unfold4d(x, {0, 2}), ValueError,
                         "[unfold4d] kernel_size [0, 2] must be >= 1");
  EMBER_EXPECT_THROW_MSG(
      module::unfold4d(x, {4, 2}), ShapeError,
      "[unfold4d] output size 0 along spatial dim 0 is not positive: input [1, 2, 3, 3]");
  EMBER_EXPECT_THROW_MSG(module::unfold4d(x, {2, 2}, {.stride = {0, 1}}), ValueError,
                         "[unfold4d] stride [0, 1] must be >= 1");
  auto c = Tensor<B, 3>::zeros(Shape{1, 10, 4});
  EMBER_EXPECT_THROW_MSG(
      module::fold4d(c, {3, 3}, {2, 2}), ShapeError,
      "[fold4d] input [1, 10, 4]: dim 1 (10) is not a multiple of the kernel size [2, 2]");
  auto c2 = Tensor<B, 3>::zeros(Shape{1, 8, 5});
  EMBER_EXPECT_THROW_MSG(
      module::fold4d(c2, {3, 3}, {2, 2}), ShapeError,
      "[fold4d] input [1, 8, 5] has 5 blocks but output_size [3, 3] with kernel [2, 2] gives 4");
  EMBER_EXPECT_THROW_MSG(module::fold4d(c2, {0, 3}, {2, 2}), ValueError,
                         "[fold4d] output_size [0, 3] must be >= 1");
  EMBER_EXPECT_THROW_MSG(module::fold4d(c2, {1, 3}, {2, 2}), ShapeError,
                         "[fold4d] output size 0 along spatial dim 0 is not positive");
}

TYPED_TEST(ConvTest, ErrorEmptyKernelMaskDtypeAndTransposeGroups) {
  using B = TypeParam;
  auto x = Tensor<B, 4>::zeros(Shape{1, 2, 5, 5});
  auto w0 = Tensor<B, 4>::zeros(Shape{2, 2, 0, 3});
  EMBER_EXPECT_THROW_MSG(module::conv2d(x, w0, std::nullopt), ShapeError,
                         "[conv2d] weight [2, 2, 0, 3] has an empty kernel");
  EMBER_EXPECT_THROW_MSG(module::conv_transpose2d(x, w0, std::nullopt), ShapeError,
                         "[conv_transpose2d] weight [2, 2, 0, 3] has an empty kernel");
  auto wt = Tensor<B, 4>::zeros(Shape{2, 2, 3, 3});
  EMBER_EXPECT_THROW_MSG(module::conv_transpose2d(x, wt, std::nullopt, {.groups = 0}), ValueError,
                         "[conv_transpose2d] groups 0 must be >= 1");
  EMBER_EXPECT_THROW_MSG(module::conv_transpose2d(x, wt, std::nullopt, {.padding_out = {-1, 0}}),
                         ValueError, "[conv_transpose2d] padding_out [-1, 0] must be >= 0");
  auto off = Tensor<B, 4>::zeros(Shape{1, 18, 3, 3});
  auto mask = Tensor<B, 4>::zeros(Shape{1, 9, 3, 3}, {}, DType::F64);
  EMBER_EXPECT_THROW_MSG(module::deform_conv2d(x, off, wt, mask, std::nullopt), DTypeError,
                         "[deform_conv2d] mask dtype f64 differs from input dtype f32");
  auto c = Tensor<B, 3>::zeros(Shape{1, 8, 4});
  EMBER_EXPECT_THROW_MSG(module::fold4d(c, {3, 3}, {2, -1}), ValueError,
                         "[fold4d] kernel_size [2, -1] must be >= 1");
  EMBER_EXPECT_THROW_MSG(module::fold4d(c, {3, 3}, {2, 2}, {.dilation = {0, 1}}), ValueError,
                         "[fold4d] dilation [0, 1] must be >= 1");
}
