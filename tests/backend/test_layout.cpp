// Layout ops: views and storage sharing, non-contiguous inputs, dtypes, hand-computed
// edge cases. Error messages are in test_layout_errors.cpp, PyTorch-checked values in
// test_layout_fixtures.cpp.
#include <cmath>
#include <limits>
#include <type_traits>

#include "backends.hpp"
#include "fixtures.hpp"

using namespace ember;
using ember::test::expect_eq;

template <class B>
class LayoutTest : public ::testing::Test {};
TYPED_TEST_SUITE(LayoutTest, ember::test::ConformanceBackends, ember::test::BackendNames);

namespace {

template <class B>
using F1 = Tensor<B, 1>;
template <class B>
using F2 = Tensor<B, 2>;
template <class B>
using I1 = Tensor<B, 1, Int>;
template <class B>
using B2 = Tensor<B, 2, Bool>;

/// True when both tensors are CPU tensors over one buffer (always true for other backends,
/// whose sharing is not observable here).
template <class T1, class T2>
bool same_storage(const T1& a, const T2& b) {
  if constexpr (ember::test::kCpuBacked<typename T1::Backend>) {
    if (!ember::test::cpu_views_observable<typename T1::Backend>()) return true;
    return ember::test::cpu_of(a.primitive()).storage == ember::test::cpu_of(b.primitive()).storage;
  } else {
    return true;
  }
}

template <class B>
Tensor<B, 2> iota2(std::int64_t rows, std::int64_t cols) {
  return I1<B>::arange(0, rows * cols).float_().template reshape<2>({rows, cols});
}

}  // namespace

TYPED_TEST(LayoutTest, PermuteTransposeSwapMovedimAreViews) {
  using B = TypeParam;
  auto x = I1<B>::arange(0, 24).float_().template reshape<3>({2, 3, 4});
  auto p = x.permute({2, -3, 1});
  EXPECT_EQ(p.shape(), (Shape{4, 2, 3}));
  EXPECT_TRUE(same_storage(p, x));
  EXPECT_EQ(p.slice({s(1), s(1), s(2)}).into_scalar(), 21.0);  // x[1][2][1]
  EXPECT_TRUE(same_storage(x.transpose(), x));
  EXPECT_TRUE(same_storage(x.swap_dims(0, 2), x));
  EXPECT_TRUE(same_storage(x.movedim(0, -1), x));
  EXPECT_EQ(x.movedim(0, -1).shape(), (Shape{3, 4, 2}));
  if constexpr (std::is_same_v<B, Cpu>) {
    EXPECT_EQ(p.primitive().strides, (std::vector<std::int64_t>{1, 12, 4}));
  }
}

TYPED_TEST(LayoutTest, FlipIsAViewWithNegativeStrides) {
  using B = TypeParam;
  auto x = iota2<B>(2, 3);
  auto f = x.flip({-1, 0});
  EXPECT_TRUE(same_storage(f, x));
  EXPECT_EQ(f.template to_vec<float>(), (std::vector<float>{5, 4, 3, 2, 1, 0}));
  if constexpr (std::is_same_v<B, Cpu>) {
    EXPECT_EQ(f.primitive().strides, (std::vector<std::int64_t>{-3, -1}));
    EXPECT_EQ(f.primitive().offset, 5);
  }
  // flipping twice restores the original
  expect_eq(f.flip({0, 1}).into_data(), x.into_data());
}

TYPED_TEST(LayoutTest, ExpandIsAViewWithZeroStrides) {
  using B = TypeParam;
  auto x = F2<B>::from_floats({{1}, {2}});
  auto e = x.expand({3, 2, 4});
  EXPECT_TRUE(same_storage(e, x));
  EXPECT_EQ(e.shape(), (Shape{3, 2, 4}));
  if constexpr (std::is_same_v<B, Cpu>) {
    EXPECT_EQ(e.primitive().strides[0], 0);
    EXPECT_EQ(e.primitive().strides[2], 0);
  }
  std::vector<float> want;
  for (int a = 0; a < 3; ++a)
    for (float v : {1.0f, 2.0f})
      for (int c = 0; c < 4; ++c) want.push_back(v);
  EXPECT_EQ(e.template to_vec<float>(), want);
}

TYPED_TEST(LayoutTest, SliceNarrowChunkSplitAreViews) {
  using B = TypeParam;
  auto x = iota2<B>(4, 5);
  auto sl = x.slice({s(0, 3, -2), s(1, end, 2)});  // rows 2, 0 (Burn: [0, 3) reversed), cols 1, 3
  EXPECT_TRUE(same_storage(sl, x));
  EXPECT_EQ(sl.template to_vec<float>(), (std::vector<float>{11, 13, 1, 3}));
  EXPECT_TRUE(same_storage(x.narrow(1, 2, 2), x));
  for (const auto& c : x.chunk(3, 0)) EXPECT_TRUE(same_storage(c, x));
  for (const auto& c : x.split(2, 1)) EXPECT_TRUE(same_storage(c, x));
  for (const auto& c : x.split_with_sizes({1, 0, 3}, 0)) EXPECT_TRUE(same_storage(c, x));
  EXPECT_EQ(x.split_with_sizes({1, 0, 3}, 0)[1].shape(), (Shape{0, 5}));
}

TYPED_TEST(LayoutTest, SqueezeUnsqueezeUnfoldAreViews) {
  using B = TypeParam;
  auto x = iota2<B>(3, 4).transpose();  // non-contiguous [4, 3]
  auto u = x.template unsqueeze_dims<4>({0, -1});
  EXPECT_EQ(u.shape(), (Shape{1, 4, 3, 1}));
  EXPECT_TRUE(same_storage(u, x));
  auto q = u.template squeeze<2>();
  EXPECT_TRUE(same_storage(q, x));
  expect_eq(q.into_data(), x.into_data());
  auto w = x.unfold(0, 2, 2);  // [2, 3, 2]
  EXPECT_TRUE(same_storage(w, x));
  EXPECT_EQ(w.shape(), (Shape{2, 3, 2}));
  // w[1][2] = window of column 2 of x^T... = x[2:4, 2] = iota[2][2], iota[2][3]
  EXPECT_EQ(w.slice({s(1), s(2)}).template to_vec<float>(), (std::vector<float>{10, 11}));
}

TYPED_TEST(LayoutTest, ViewOfViewOfView) {
  using B = TypeParam;
  // permute of a slice of an expand: still one buffer, values from first principles
  auto x = F2<B>::from_floats({{1, 2, 3}});      // [1, 3]
  auto e = x.expand({4, 3});                     // rows all equal
  auto sl = e.slice({s(1, 4, 2), s(0, 3, -1)});  // [2, 3], columns reversed
  auto p = sl.permute({1, 0});                   // [3, 2]
  EXPECT_TRUE(same_storage(p, x));
  EXPECT_EQ(p.template to_vec<float>(), (std::vector<float>{3, 3, 2, 2, 1, 1}));
  auto f = p.flip({0}).unsqueeze_dim(0).narrow(2, 1, 1);  // [1, 3, 1]
  EXPECT_TRUE(same_storage(f, x));
  EXPECT_EQ(f.template to_vec<float>(), (std::vector<float>{1, 2, 3}));
}

TYPED_TEST(LayoutTest, CopyingOpsDoNotShareStorage) {
  using B = TypeParam;
  if constexpr (std::is_same_v<B, Cpu>) {
    auto x = iota2<B>(2, 3);
    EXPECT_FALSE(same_storage(F2<B>::cat({x, x}, 0), x));
    EXPECT_FALSE(same_storage(x.repeat({2, 1}), x));
    EXPECT_FALSE(same_storage(x.roll_dim(1, 1), x));
    EXPECT_FALSE(same_storage(x.pad({1, 1}), x));
    EXPECT_FALSE(same_storage(F2<B>::stack({x, x}, 0), x));
  }
}

TYPED_TEST(LayoutTest, NonContiguousInputsToCopyingOps) {
  using B = TypeParam;
  auto x = iota2<B>(2, 3);  // [[0,1,2],[3,4,5]]
  auto t = x.transpose();   // [[0,3],[1,4],[2,5]]
  EXPECT_EQ(F2<B>::cat({t, t.flip({0})}, 1).template to_vec<float>(),
            (std::vector<float>{0, 3, 2, 5, 1, 4, 1, 4, 2, 5, 0, 3}));
  EXPECT_EQ(t.repeat({1, 2}).template to_vec<float>(),
            (std::vector<float>{0, 3, 0, 3, 1, 4, 1, 4, 2, 5, 2, 5}));
  auto col = x.slice({s(), s(1)}).expand({2, 2});  // [[1,1],[4,4]] with a zero stride
  EXPECT_EQ(col.repeat({1, 2}).template to_vec<float>(),
            (std::vector<float>{1, 1, 1, 1, 4, 4, 4, 4}));
  EXPECT_EQ(t.roll_dim(1, 0).template to_vec<float>(), (std::vector<float>{2, 5, 0, 3, 1, 4}));
  EXPECT_EQ(t.flip({1}).pad({1, 0}, PadMode::Edge).template to_vec<float>(),
            (std::vector<float>{3, 3, 0, 4, 4, 1, 5, 5, 2}));
  EXPECT_EQ(t.pad({0, 0, 1, 1}, PadMode::Reflect).template to_vec<float>(),
            (std::vector<float>{1, 4, 0, 3, 1, 4, 2, 5, 1, 4}));
  EXPECT_EQ(F2<B>::stack({t.flip({0}), t}, 0).shape(), (Shape{2, 3, 2}));
  EXPECT_EQ(t.template flatten<1>(0, 1).template to_vec<float>(),
            (std::vector<float>{0, 3, 1, 4, 2, 5}));
}

TYPED_TEST(LayoutTest, CatPromotesDtypesWithinAKind) {
  using B = TypeParam;
  auto a = I1<B>::from_ints({1, 2}, {}, DType::I32);
  auto b = I1<B>::from_ints({-3});
  auto c = I1<B>::cat({a, b}, 0);
  EXPECT_EQ(c.dtype(), DType::I64);
  EXPECT_EQ(c.template to_vec<std::int64_t>(), (std::vector<std::int64_t>{1, 2, -3}));
  auto h = F1<B>::from_floats({0.5}, {}, DType::F16);
  auto bf = F1<B>::from_floats({-2.0, 4.0}, {}, DType::BF16);
  auto hb = F1<B>::cat({h, bf}, 0);
  EXPECT_EQ(hb.dtype(), DType::F32);  // torch.promote_types(float16, bfloat16)
  EXPECT_EQ(hb.template to_vec<float>(), (std::vector<float>{0.5f, -2.0f, 4.0f}));
  auto same = I1<B>::cat({a, a}, 0);
  EXPECT_EQ(same.dtype(), DType::I32);
}

TYPED_TEST(LayoutTest, DtypesPassThroughViewsAndCopies) {
  using B = TypeParam;
  for (DType dt : {DType::F64, DType::F16, DType::BF16}) {
    auto x = F2<B>::from_floats({{1.5, -2.25}, {3.0, 0.125}}, {}, dt);
    auto y = x.flip({1}).transpose().pad({1, 0}, PadMode::Constant, -1.0);
    EXPECT_EQ(y.dtype(), dt);
    EXPECT_EQ(y.template to_vec<double>(), (std::vector<double>{-1, -2.25, 0.125, -1, 1.5, 3.0}));
  }
  auto i = Tensor<B, 2, Int>::from_ints({{1, 2, 3}}, {}, DType::I32);
  auto r = i.roll_dim(-1, 1).repeat_dim(0, 2);
  EXPECT_EQ(r.dtype(), DType::I32);
  EXPECT_EQ(r.template to_vec<std::int32_t>(), (std::vector<std::int32_t>{2, 3, 1, 2, 3, 1}));
  auto u = I1<B>::from_ints({7, 8, 9}, {}, DType::U8).unfold(0, 2, 1);
  EXPECT_EQ(u.template to_vec<std::uint8_t>(), (std::vector<std::uint8_t>{7, 8, 8, 9}));
}

TYPED_TEST(LayoutTest, NanAndInfAreMovedUntouched) {
  using B = TypeParam;
  const double nan = std::numeric_limits<double>::quiet_NaN(),
               inf = std::numeric_limits<double>::infinity();
  auto x = F1<B>::from_floats({nan, inf, -inf, 1.0});
  auto y = x.flip({0}).pad({1, 1}, PadMode::Reflect).template to_vec<double>();
  ASSERT_EQ(y.size(), 6u);
  EXPECT_EQ(y[0], -inf);
  EXPECT_EQ(y[1], 1.0);
  EXPECT_EQ(y[2], -inf);
  EXPECT_EQ(y[3], inf);
  EXPECT_TRUE(std::isnan(y[4]));
  EXPECT_EQ(y[5], inf);
}

TYPED_TEST(LayoutTest, EmptyTensors) {
  using B = TypeParam;
  auto e = F2<B>::zeros({0, 3});
  EXPECT_EQ(e.permute({1, 0}).shape(), (Shape{3, 0}));
  EXPECT_EQ(e.flip({0, 1}).numel(), 0);
  EXPECT_EQ(e.expand({2, 0, 3}).shape(), (Shape{2, 0, 3}));
  EXPECT_EQ(e.repeat({5, 2}).shape(), (Shape{0, 6}));
  EXPECT_EQ(e.roll({1, 2}, {0, 1}).shape(), (Shape{0, 3}));
  EXPECT_EQ(e.unfold(1, 2, 1).shape(), (Shape{0, 2, 2}));
  EXPECT_EQ(e.pad({1, 1}).shape(), (Shape{0, 5}));
  EXPECT_EQ(e.slice({s(), s(2, 0, -1)}).shape(), (Shape{0, 0}));
  EXPECT_EQ(e.split(2, 0).size(), 1u);
  auto x = iota2<B>(2, 3);
  auto c = F2<B>::cat({e, x, e}, 0);
  EXPECT_EQ(c.shape(), (Shape{2, 3}));
  EXPECT_EQ(c.template to_vec<float>(), x.template to_vec<float>());
  auto none = x.slice({s(1, 1)});
  EXPECT_EQ(none.shape(), (Shape{0, 3}));
  EXPECT_TRUE(none.template to_vec<float>().empty());
}

TYPED_TEST(LayoutTest, BoolTensors) {
  using B = TypeParam;
  auto m = B2<B>::from_bools({{true, false, false}});
  auto e = m.expand({2, 3}).flip({1});
  EXPECT_EQ(e.template to_vec<std::uint8_t>(), (std::vector<std::uint8_t>{0, 0, 1, 0, 0, 1}));
  auto p = m.pad({1, 1}, PadMode::Edge);
  EXPECT_EQ(p.template to_vec<std::uint8_t>(), (std::vector<std::uint8_t>{1, 1, 0, 0, 0}));
  auto st = B2<B>::stack({m, m.roll_dim(1, 1)}, 1);
  EXPECT_EQ(st.shape(), (Shape{1, 2, 3}));
  EXPECT_EQ(st.template to_vec<std::uint8_t>(), (std::vector<std::uint8_t>{1, 0, 0, 0, 1, 0}));
}

TYPED_TEST(LayoutTest, ChunkFollowsTorch) {
  using B = TypeParam;
  auto x = I1<B>::arange(0, 10);
  auto c = x.chunk(4, 0);  // ceil(10/4) = 3 -> 3, 3, 3, 1
  ASSERT_EQ(c.size(), 4u);
  EXPECT_EQ(c[3].template to_vec<std::int64_t>(), (std::vector<std::int64_t>{9}));
  auto c6 = I1<B>::arange(0, 6).chunk(4, 0);  // chunk size 2 -> only 3 pieces
  ASSERT_EQ(c6.size(), 3u);
  auto c0 = I1<B>::arange(0, 0).chunk(3, 0);
  ASSERT_EQ(c0.size(), 3u);
  EXPECT_EQ(c0[2].numel(), 0);
}

TYPED_TEST(LayoutTest, StackAtEveryPosition) {
  using B = TypeParam;
  auto a = iota2<B>(2, 3);
  auto b = a.flip({0});
  for (std::int64_t d = -3; d <= 2; ++d) {
    auto s3 = F2<B>::stack({a, b}, d);
    const std::size_t nd = static_cast<std::size_t>(d < 0 ? d + 3 : d);
    EXPECT_EQ(s3.dim(static_cast<std::int64_t>(nd)), 2);
    // taking index 1 of the new dim gives b back
    std::vector<Slice> sl(3, s());
    sl[nd] = s(1);
    auto back = s3.slice(sl).template squeeze_dim<2>(static_cast<std::int64_t>(nd));
    expect_eq(back.into_data(), b.into_data());
  }
}

TYPED_TEST(LayoutTest, RepeatMatchesCatOfCopies) {
  using B = TypeParam;
  auto x = iota2<B>(2, 2).slice({s(), s(2, 0, -1)});  // non-contiguous
  auto r = x.repeat({3, 2});
  auto row = F2<B>::cat({x, x}, 1);
  auto want = F2<B>::cat({row, row, row}, 0);
  expect_eq(r.into_data(), want.into_data());
}
