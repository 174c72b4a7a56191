// Layout ops: every front-end check throws the documented exception with a message that
// starts with "[op]" and names the shapes/dims.
#include "backends.hpp"
#include "fixtures.hpp"

using namespace ember;

template <class B>
using F1 = Tensor<B, 1>;

template <class B>
class LayoutErrors : public ::testing::Test {};
TYPED_TEST_SUITE(LayoutErrors, ember::test::ConformanceBackends, ember::test::BackendNames);

TYPED_TEST(LayoutErrors, Permute) {
  using B = TypeParam;
  auto x = Tensor<B, 3>::zeros({2, 3, 4});
  EMBER_EXPECT_THROW_MSG(
      x.permute({1, 0}), ShapeError,
      "[permute] expected 3 dims, got 2 ([1, 0]) for a tensor of shape [2, 3, 4]");
  EMBER_EXPECT_THROW_MSG(x.permute({1, 1, 0}), ShapeError,
                         "[permute] dim 1 appears more than once in [1, 1, 0]");
  EMBER_EXPECT_THROW_MSG(x.permute({0, -2, 1}), ShapeError,
                         "[permute] dim 1 appears more than once in [0, -2, 1]");
  EMBER_EXPECT_THROW_MSG(x.permute({0, 1, 3}), ShapeError,
                         "[permute] dim 3 is out of range for a tensor of rank 3");
}

TYPED_TEST(LayoutErrors, SwapDimsAndMovedim) {
  using B = TypeParam;
  auto x = Tensor<B, 3, Int>::zeros({2, 3, 4});
  EMBER_EXPECT_THROW_MSG(x.swap_dims(0, -4), ShapeError, "[swap_dims] dim -4 is out of range");
  EMBER_EXPECT_THROW_MSG(x.movedim(3, 0), ShapeError, "[movedim] dim 3 is out of range");
  EMBER_EXPECT_THROW_MSG(x.movedim({0, 1}, {2}), ShapeError,
                         "[movedim] source [0, 1] and destination [2] have different lengths");
  EMBER_EXPECT_THROW_MSG(x.movedim({0, 0}, {1, 2}), ShapeError,
                         "[movedim] dim 0 appears more than once in [0, 0]");
  EMBER_EXPECT_THROW_MSG(x.movedim({0, 1}, {2, -1}), ShapeError,
                         "[movedim] dim -1 appears more than once in [2, -1]");
}

TYPED_TEST(LayoutErrors, Flip) {
  using B = TypeParam;
  auto x = Tensor<B, 2, Bool>::zeros({2, 3});
  EMBER_EXPECT_THROW_MSG(x.flip({0, -2}), ShapeError,
                         "[flip] dim -2 appears more than once in [0, -2]");
  EMBER_EXPECT_THROW_MSG(x.flip({2}), ShapeError,
                         "[flip] dim 2 is out of range for a tensor of rank 2");
}

TYPED_TEST(LayoutErrors, Flatten) {
  using B = TypeParam;
  auto x = Tensor<B, 3>::zeros({2, 3, 4});
  EMBER_EXPECT_THROW_MSG(x.template flatten<2>(2, 1), ShapeError,
                         "[flatten] start dim 2 comes after end dim 1 for shape [2, 3, 4]");
  EMBER_EXPECT_THROW_MSG(x.template flatten<1>(0, 1), ShapeError,
                         "[flatten] flattening dims 0..1 of shape [2, 3, 4] gives rank 2, not 1");
  EMBER_EXPECT_THROW_MSG(x.template flatten<2>(0, 3), ShapeError,
                         "[flatten] dim 3 is out of range");
}

TYPED_TEST(LayoutErrors, Squeeze) {
  using B = TypeParam;
  auto x = Tensor<B, 4>::zeros({1, 3, 1, 2});
  EMBER_EXPECT_THROW_MSG(
      x.template squeeze<3>(), ShapeError,
      "[squeeze] shape [1, 3, 1, 2] has 2 size-1 dims; removing them gives rank 2, not 3");
  EMBER_EXPECT_THROW_MSG(x.squeeze_dim(1), ShapeError,
                         "[squeeze_dim] dim 1 of shape [1, 3, 1, 2] has size 3, not 1");
  EMBER_EXPECT_THROW_MSG(x.squeeze_dim(4), ShapeError, "[squeeze_dim] dim 4 is out of range");
  EMBER_EXPECT_THROW_MSG(x.template squeeze_dims<2>({0, -4}), ShapeError,
                         "[squeeze_dims] dim -4 appears more than once in [0, -4]");
  EMBER_EXPECT_THROW_MSG(
      x.template squeeze_dims<3>({0, 2}), ShapeError,
      "[squeeze_dims] removing 2 dims of shape [1, 3, 1, 2] gives rank 2, not 3");
  EMBER_EXPECT_THROW_MSG(x.template squeeze_dims<2>({0, 3}), ShapeError,
                         "[squeeze_dims] dim 3 of shape [1, 3, 1, 2] has size 2, not 1");
}

TYPED_TEST(LayoutErrors, Unsqueeze) {
  using B = TypeParam;
  auto x = Tensor<B, 2>::zeros({2, 3});
  EMBER_EXPECT_THROW_MSG(x.unsqueeze_dim(3), ShapeError,
                         "[unsqueeze_dim] dim 3 is out of range for a tensor of rank 3");
  EMBER_EXPECT_THROW_MSG(x.unsqueeze_dim(-4), ShapeError, "[unsqueeze_dim] dim -4 is out of range");
  EMBER_EXPECT_THROW_MSG(
      x.template unsqueeze_dims<4>({0}), ShapeError,
      "[unsqueeze_dims] 1 dims [0] given to go from rank 2 to rank 4 (expected 2)");
  EMBER_EXPECT_THROW_MSG(x.template unsqueeze_dims<4>({0, -4}), ShapeError,
                         "[unsqueeze_dims] dim -4 appears more than once in [0, -4]");
  EMBER_EXPECT_THROW_MSG(x.template unsqueeze_dims<3>({3}), ShapeError,
                         "[unsqueeze_dims] dim 3 is out of range");
}

TYPED_TEST(LayoutErrors, Expand) {
  using B = TypeParam;
  auto x = Tensor<B, 2>::zeros({2, 1});
  EMBER_EXPECT_THROW_MSG(x.expand({3, 4}), ShapeError,
                         "[expand] cannot expand shape [2, 1] to [3, 4]: dim 0 has size 2 (only "
                         "size-1 dims can be expanded)");
  EMBER_EXPECT_THROW_MSG(
      x.expand({-1, 2, 4}), ShapeError,
      "[expand] size -1 is not allowed for new leading dim 0 of target [-1, 2, 4]");
  EMBER_EXPECT_THROW_MSG(x.expand({2, -2}), ShapeError,
                         "[expand] invalid size -2 in target [2, -2]");
  EMBER_EXPECT_THROW_MSG(x.template expand<3>(Shape{2, 4}), ShapeError,
                         "[expand] target shape [2, 4] has rank 2, expected 3");
}

TYPED_TEST(LayoutErrors, RepeatAndRoll) {
  using B = TypeParam;
  auto x = Tensor<B, 2, Int>::zeros({2, 3});
  EMBER_EXPECT_THROW_MSG(
      x.repeat({2}), ShapeError,
      "[repeat] expected 2 repeat counts, got 1 ([2]) for a tensor of shape [2, 3]");
  EMBER_EXPECT_THROW_MSG(x.repeat({2, -1}), ValueError,
                         "[repeat] repeat counts must be >= 0, got [2, -1]");
  EMBER_EXPECT_THROW_MSG(x.repeat_dim(0, -3), ValueError,
                         "[repeat_dim] times must be >= 0, got -3");
  EMBER_EXPECT_THROW_MSG(x.repeat_dim(2, 3), ShapeError, "[repeat_dim] dim 2 is out of range");
  EMBER_EXPECT_THROW_MSG(x.roll({1, 2}, {0}), ShapeError,
                         "[roll] shifts [1, 2] and dims [0] must be non-empty and of equal length");
  EMBER_EXPECT_THROW_MSG(x.roll({}, {}), ShapeError, "[roll] shifts [] and dims []");
  EMBER_EXPECT_THROW_MSG(x.roll_dim(1, -3), ShapeError, "[roll] dim -3 is out of range");
}

TYPED_TEST(LayoutErrors, Unfold) {
  using B = TypeParam;
  auto x = Tensor<B, 2>::zeros({2, 4});
  EMBER_EXPECT_THROW_MSG(x.unfold(1, 5, 1), ShapeError,
                         "[unfold] window size 5 exceeds dim 1 of size 4 (shape [2, 4])");
  EMBER_EXPECT_THROW_MSG(x.unfold(1, 2, 0), ValueError, "[unfold] step must be > 0, got 0");
  EMBER_EXPECT_THROW_MSG(x.unfold(1, -1, 1), ValueError,
                         "[unfold] window size must be >= 0, got -1");
  EMBER_EXPECT_THROW_MSG(x.unfold(2, 1, 1), ShapeError, "[unfold] dim 2 is out of range");
}

TYPED_TEST(LayoutErrors, Narrow) {
  using B = TypeParam;
  auto x = Tensor<B, 2>::zeros({2, 4});
  EMBER_EXPECT_THROW_MSG(x.narrow(1, 3, 2), ShapeError,
                         "[narrow] start 3 + length 2 exceeds dim 1 of size 4 (shape [2, 4])");
  EMBER_EXPECT_THROW_MSG(x.narrow(1, -5, 1), ShapeError,
                         "[narrow] start -5 is out of range for dim 1 of size 4");
  EMBER_EXPECT_THROW_MSG(x.narrow(0, 0, -1), ValueError, "[narrow] length must be >= 0, got -1");
  EMBER_EXPECT_THROW_MSG(x.narrow(-3, 0, 1), ShapeError, "[narrow] dim -3 is out of range");
}

TYPED_TEST(LayoutErrors, ChunkAndSplit) {
  using B = TypeParam;
  auto x = Tensor<B, 2>::zeros({5, 2});
  EMBER_EXPECT_THROW_MSG(x.chunk(0, 0), ValueError, "[chunk] number of chunks must be > 0, got 0");
  EMBER_EXPECT_THROW_MSG(x.chunk(2, 2), ShapeError, "[chunk] dim 2 is out of range");
  EMBER_EXPECT_THROW_MSG(x.split(0, 0), ValueError, "[split] split size must be > 0, got 0");
  EMBER_EXPECT_THROW_MSG(
      x.split_with_sizes({2, 2}, 0), ShapeError,
      "[split_with_sizes] sizes [2, 2] sum to 4 but dim 0 of shape [5, 2] has size 5");
  EMBER_EXPECT_THROW_MSG(x.split_with_sizes({6, -1}, 0), ValueError,
                         "[split_with_sizes] sizes must be >= 0, got [6, -1]");
}

TYPED_TEST(LayoutErrors, Cat) {
  using B = TypeParam;
  using T = Tensor<B, 2>;
  EMBER_EXPECT_THROW_MSG(T::cat({}, 0), ValueError, "[cat] expected a non-empty list of tensors");
  auto a = T::zeros({2, 3}), b = T::zeros({2, 4});
  EMBER_EXPECT_THROW_MSG(T::cat({a, b}, 0), ShapeError,
                         "[cat] tensor 1 has shape [2, 4] but tensor 0 has shape [2, 3] (dim 1 "
                         "differs; only dim 0 may)");
  EMBER_EXPECT_THROW_MSG(T::cat({a, T::zeros({0, 4})}, 0), ShapeError,
                         "[cat] tensor 1 has shape [0, 4]");
  EMBER_EXPECT_THROW_MSG(T::cat({a, a}, 2), ShapeError, "[cat] dim 2 is out of range");
}

TYPED_TEST(LayoutErrors, Stack) {
  using B = TypeParam;
  using T = Tensor<B, 2, Int>;
  EMBER_EXPECT_THROW_MSG(T::stack({}, 0), ValueError,
                         "[stack] expected a non-empty list of tensors");
  auto a = T::zeros({2, 3});
  EMBER_EXPECT_THROW_MSG(
      T::stack({a, T::zeros({3, 2})}, 0), ShapeError,
      "[stack] tensor 1 has shape [3, 2] but tensor 0 has shape [2, 3] (all shapes must be equal)");
  EMBER_EXPECT_THROW_MSG(T::stack({a, a}, 3), ShapeError,
                         "[stack] dim 3 is out of range for a tensor of rank 3");
}

TYPED_TEST(LayoutErrors, Pad) {
  using B = TypeParam;
  auto x = Tensor<B, 2>::zeros({2, 3});
  EMBER_EXPECT_THROW_MSG(
      x.pad({1}), ShapeError,
      "[pad] pads [1] must hold (left, right) pairs for at most 2 dims of shape [2, 3]");
  EMBER_EXPECT_THROW_MSG(x.pad({1, 1, 1, 1, 1, 1}), ShapeError,
                         "[pad] pads [1, 1, 1, 1, 1, 1] must hold");
  EMBER_EXPECT_THROW_MSG(
      x.pad({3, 0}, PadMode::Reflect), ShapeError,
      "[pad] reflect padding (3, 0) of dim 1 must be less than its size 3 (shape [2, 3])");
  EMBER_EXPECT_THROW_MSG(x.pad({0, 0, 0, 2}, PadMode::Reflect), ShapeError,
                         "[pad] reflect padding (0, 2) of dim 0 must be less than its size 2");
  EMBER_EXPECT_THROW_MSG(F1<B>::zeros({0}).pad({1, 0}, PadMode::Edge), ShapeError,
                         "[pad] edge padding of dim 0 needs a non-empty dim (shape [0])");
  EMBER_EXPECT_THROW_MSG(x.pad({-2, -2}), ShapeError,
                         "[pad] pads (-2, -2) crop more than dim 1 of size 3 (shape [2, 3])");
  // A crop larger than the dim is an error even when the other side pads it back
  // (torch.nn.functional.pad raises for (-4, 5) and (-4, 1) on a dim of 3).
  EMBER_EXPECT_THROW_MSG(x.pad({-4, 5}), ShapeError,
                         "[pad] pads (-4, 5) crop more than dim 1 of size 3 (shape [2, 3])");
  EMBER_EXPECT_THROW_MSG(x.pad({5, -4}), ShapeError, "[pad] pads (5, -4) crop more than dim 1");
  EMBER_EXPECT_THROW_MSG(x.pad({-4, 1}), ShapeError, "[pad] pads (-4, 1) crop more than dim 1");
  EMBER_EXPECT_THROW_MSG(x.pad({-4, 5}, PadMode::Edge), ShapeError,
                         "[pad] pads (-4, 5) crop more than dim 1");
  constexpr std::int64_t kHuge = std::int64_t{1} << 62;
  EMBER_EXPECT_THROW_MSG(x.pad({kHuge, kHuge}), ShapeError,
                         "[pad] pads (4611686018427387904, 4611686018427387904) of dim 1 of size 3 "
                         "overflow a 64-bit size");
  // Cropping the whole dim and padding it back is allowed: only fill values remain.
  EXPECT_EQ(x.pad({-3, 2}).shape(), (Shape{2, 2}));
}

TYPED_TEST(LayoutErrors, Slice) {
  using B = TypeParam;
  auto x = Tensor<B, 2>::zeros({2, 3});
  EMBER_EXPECT_THROW_MSG(x.slice({s(), s(), s()}), ShapeError,
                         "[slice] 3 slices given for a tensor of shape [2, 3]");
  EMBER_EXPECT_THROW_MSG(x.slice({s(0, 2, 0)}), ShapeError,
                         "[slice] slice step must be non-zero (dim 0)");
  EMBER_EXPECT_THROW_MSG(x.slice({s(), s(3)}), ShapeError,
                         "[slice] index 3 is out of range for dim 1 of size 3");
  EMBER_EXPECT_THROW_MSG(x.slice({s(-3)}), ShapeError,
                         "[slice] index -3 is out of range for dim 0 of size 2");
}
