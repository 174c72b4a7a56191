// Indexing conformance: hand-computed edge cases (non-contiguous inputs, ownership,
// dtypes, empty tensors, large inputs on the parallel paths) and every front-end check.
#include <cmath>
#include <limits>
#include <numeric>

#include "backends.hpp"
#include "fixtures.hpp"

using namespace ember;
using ember::test::expect_eq;

template <class B>
class IndexingTest : public ::testing::Test {};
TYPED_TEST_SUITE(IndexingTest, ember::test::ConformanceBackends, ember::test::BackendNames);

namespace {

using I64 = std::vector<std::int64_t>;
using F32 = std::vector<float>;

/// A strided view of `t` (CPU only): same storage, the given shape/strides/offset. Layout
/// ops land in another family, so tests build views directly.
template <class B, std::size_t D2, class K, std::size_t D>
Tensor<B, D2, K> view(const Tensor<B, D, K>& t, Shape shape, std::vector<std::int64_t> strides,
                      std::int64_t offset = 0) {
  CpuTensor p = ember::test::cpu_of(t.primitive());
  p.shape = std::move(shape);
  p.strides = std::move(strides);
  p.offset = offset;
  return Tensor<B, D2, K>(ember::test::with_cpu(t.primitive(), std::move(p)));
}

template <class B>
constexpr bool kIsCpu = ember::test::kCpuBacked<B>;
template <class B>
constexpr bool kViews = ember::test::kViewsBuildable<B>;

}  // namespace

// ---- non-contiguous inputs ------------------------------------------------------------------

TYPED_TEST(IndexingTest, SelectTransposedInputAndStridedIndices) {
  using B = TypeParam;
  if constexpr (!kViews<B>)
    GTEST_SKIP() << "needs hand-built views";
  else {
    // base [3, 2] = [[0, 1], [2, 3], [4, 5]]; transposed -> [2, 3] = [[0, 2, 4], [1, 3, 5]]
    auto base = Tensor<B, 2>::from_floats({{0, 1}, {2, 3}, {4, 5}});
    auto xt = view<B, 2>(base, {2, 3}, {1, 2});
    // indices [2, 9, 0, 9] with stride 2 -> [2, 0]
    auto raw = Tensor<B, 1, Int>::from_ints({2, 9, 0, 9});
    auto idx = view<B, 1>(raw, {2}, {2});
    EXPECT_EQ(xt.select(1, idx).template to_vec<float>(), (F32{4, 0, 5, 1}));
    EXPECT_EQ(xt.select(0, Tensor<B, 1, Int>::from_ints({1})).template to_vec<float>(),
              (F32{1, 3, 5}));
  }
}

TYPED_TEST(IndexingTest, GatherTransposedInputExpandedIndex) {
  using B = TypeParam;
  if constexpr (!kViews<B>)
    GTEST_SKIP();
  else {
    auto base = Tensor<B, 2>::from_floats({{0, 1}, {2, 3}, {4, 5}});
    auto xt = view<B, 2>(base, {2, 3}, {1, 2});  // [[0, 2, 4], [1, 3, 5]]
    auto row = Tensor<B, 2, Int>::from_ints({{2, 0, 1}});
    auto idx = view<B, 2>(row, {2, 3}, {0, 1});  // the row repeated (stride 0)
    EXPECT_EQ(xt.gather(1, idx).template to_vec<float>(), (F32{4, 0, 2, 5, 1, 3}));
  }
}

TYPED_TEST(IndexingTest, ScatterAddIntoTransposedWithStridedValues) {
  using B = TypeParam;
  if constexpr (!kViews<B>)
    GTEST_SKIP();
  else {
    auto base = Tensor<B, 2>::from_floats({{0, 1}, {2, 3}, {4, 5}});
    auto xt = view<B, 2>(base, {2, 3}, {1, 2});  // [[0, 2, 4], [1, 3, 5]]
    auto vals_base = Tensor<B, 2>::from_floats({{10, 20}, {30, 40}});
    auto vals = view<B, 2>(vals_base, {2, 2}, {1, 2});  // [[10, 30], [20, 40]]
    auto idx = Tensor<B, 2, Int>::from_ints({{2, 2}, {0, 1}});
    auto out = xt.scatter(1, idx, vals, IndexUpdate::Add);
    EXPECT_EQ(out.template to_vec<float>(), (F32{0, 2, 44, 21, 43, 5}));
    EXPECT_EQ(base.template to_vec<float>(), (F32{0, 1, 2, 3, 4, 5}));  // untouched
  }
}

TYPED_TEST(IndexingTest, MaskWhereExpandedAndOffsetViews) {
  using B = TypeParam;
  if constexpr (!kViews<B>)
    GTEST_SKIP();
  else {
    auto col = Tensor<B, 2>::from_floats({{1}, {2}});
    auto x = view<B, 2>(col, {2, 3}, {1, 0});  // [[1, 1, 1], [2, 2, 2]]
    auto mraw = Tensor<B, 1, Bool>::from_bools({false, true, false, true, true, false, false});
    auto m = view<B, 2>(mraw, {2, 3}, {3, 1}, 1);  // [[1, 0, 1], [1, 0, 0]]
    auto v = Tensor<B, 2>::from_floats({{7, 8, 9}});
    EXPECT_EQ(x.mask_where(m, v).template to_vec<float>(), (F32{7, 1, 9, 7, 2, 2}));
    EXPECT_EQ(x.mask_fill(m, -1).template to_vec<float>(), (F32{-1, 1, -1, -1, 2, 2}));
    EXPECT_EQ(x.mask_select(m).template to_vec<float>(), (F32{1, 1, 2}));
    EXPECT_EQ(m.argwhere().template to_vec<std::int64_t>(), (I64{0, 0, 0, 2, 1, 0}));
  }
}

TYPED_TEST(IndexingTest, SliceAssignAndSelectAssignOnViews) {
  using B = TypeParam;
  if constexpr (!kViews<B>)
    GTEST_SKIP();
  else {
    auto base = Tensor<B, 2, Int>::from_ints({{0, 1}, {2, 3}, {4, 5}});
    auto xt = view<B, 2>(base, {2, 3}, {1, 2});  // [[0, 2, 4], [1, 3, 5]]
    auto vb = Tensor<B, 2, Int>::from_ints({{8, 9}});
    auto v = view<B, 2>(vb, {2, 1}, {1, 1});  // [[8], [9]]
    EXPECT_EQ(xt.slice_assign({s(), s(1)}, v).template to_vec<std::int64_t>(),
              (I64{0, 8, 4, 1, 9, 5}));
    auto v2 = view<B, 2>(vb, {2, 2}, {0, 1});  // [[8, 9], [8, 9]]
    EXPECT_EQ(xt.select_assign(1, Tensor<B, 1, Int>::from_ints({2, 0}), v2, IndexUpdate::Add)
                  .template to_vec<std::int64_t>(),
              (I64{9, 2, 12, 10, 3, 13}));
    EXPECT_EQ(base.template to_vec<std::int64_t>(), (I64{0, 1, 2, 3, 4, 5}));
  }
}

// ---- ownership --------------------------------------------------------------------------------

TYPED_TEST(IndexingTest, RvalueUniqueInputIsWrittenInPlace) {
  using B = TypeParam;
  if (!ember::test::buffers_observable<B>())
    GTEST_SKIP() << "buffers of a GPU device are not observable here";
  auto x = Tensor<B, 2>::zeros({2, 3});
  auto m = Tensor<B, 2, Bool>::from_bools({{true, false, true}});
  if constexpr (kIsCpu<B>) {
    const void* buf = ember::test::cpu_of(x.primitive()).storage.get();
    auto y = std::move(x).mask_fill(m, 5);
    EXPECT_EQ(ember::test::cpu_of(y.primitive()).storage.get(), buf);
    auto z = std::move(y).slice_fill({s(1)}, 2);
    EXPECT_EQ(ember::test::cpu_of(z.primitive()).storage.get(), buf);
    EXPECT_EQ(z.template to_vec<float>(), (F32{5, 0, 5, 2, 2, 2}));
  }
}

TYPED_TEST(IndexingTest, SharedInputIsNeverModified) {
  using B = TypeParam;
  auto x = Tensor<B, 1>::from_floats({1, 2, 3});
  auto keep = x;  // shares the buffer
  auto y =
      std::move(x).scatter(0, Tensor<B, 1, Int>::from_ints({0}), Tensor<B, 1>::from_floats({9}));
  EXPECT_EQ(y.template to_vec<float>(), (F32{9, 2, 3}));
  EXPECT_EQ(keep.template to_vec<float>(), (F32{1, 2, 3}));
  auto z = keep.select_assign(0, Tensor<B, 1, Int>::from_ints({2}), Tensor<B, 1>::from_floats({7}));
  EXPECT_EQ(keep.template to_vec<float>(), (F32{1, 2, 3}));
  EXPECT_EQ(z.template to_vec<float>(), (F32{1, 2, 7}));
}

// ---- duplicates, dtypes, NaN, empty ---------------------------------------------------------

TYPED_TEST(IndexingTest, DuplicateIndicesAssignLastWinsAddAccumulates) {
  using B = TypeParam;
  auto x = Tensor<B, 1>::zeros({3});
  auto idx = Tensor<B, 1, Int>::from_ints({1, 1, 1});
  auto v = Tensor<B, 1>::from_floats({1, 2, 4});
  EXPECT_EQ(x.select_assign(0, idx, v, IndexUpdate::Add).template to_vec<float>(), (F32{0, 7, 0}));
  EXPECT_EQ(x.select_assign(0, idx, v, IndexUpdate::Assign).template to_vec<float>(),
            (F32{0, 4, 0}));
  EXPECT_EQ(x.scatter(0, idx, v, IndexUpdate::Add).template to_vec<float>(), (F32{0, 7, 0}));
  EXPECT_EQ(x.scatter(0, idx, v, IndexUpdate::Assign).template to_vec<float>(), (F32{0, 4, 0}));
}

TYPED_TEST(IndexingTest, HalfDtypesComputeThroughFloat) {
  using B = TypeParam;
  for (DType dt : {DType::F16, DType::BF16}) {
    auto x = Tensor<B, 2>::from_floats({{1, 2}, {3, 4}}, {}, dt);
    auto idx = Tensor<B, 2, Int>::from_ints({{1, 1}, {0, 0}});
    auto out = x.scatter(1, idx, x, IndexUpdate::Add);
    EXPECT_EQ(out.dtype(), dt);
    EXPECT_EQ(out.template to_vec<float>(), (F32{1, 5, 10, 4}));
    EXPECT_EQ(x.gather(0, idx).template to_vec<float>(), (F32{3, 4, 1, 2}));
    // values of another float dtype are converted to the tensor's dtype
    auto w = x.mask_where(Tensor<B, 2, Bool>::from_bools({{true, false}}),
                          Tensor<B, 2>::from_floats({{0.5, 0.5}}, {}, DType::F64));
    EXPECT_EQ(w.dtype(), dt);
    EXPECT_EQ(w.template to_vec<float>(), (F32{0.5, 2, 0.5, 4}));
  }
}

TYPED_TEST(IndexingTest, NarrowIntIndexAndTensorDtypes) {
  using B = TypeParam;
  auto x = Tensor<B, 1, Int>::from_ints({10, 20, 30}, {}, DType::I32);
  for (DType it : {DType::I32, DType::I16, DType::I8, DType::U8}) {
    auto idx = Tensor<B, 1, Int>::from_ints({2, 0}, {}, it);
    auto y = x.select(0, idx);
    EXPECT_EQ(y.dtype(), DType::I32);
    EXPECT_EQ(y.template to_vec<std::int64_t>(), (I64{30, 10}));
    EXPECT_EQ(x.gather(0, idx).template to_vec<std::int64_t>(), (I64{30, 10}));
  }
  auto oh = Tensor<B, 1, Int>::from_ints({1, 0}, {}, DType::I32).one_hot(2);
  EXPECT_EQ(oh.dtype(), DType::I32);
  EXPECT_EQ(oh.template to_vec<std::int64_t>(), (I64{0, 1, 1, 0}));
}

TYPED_TEST(IndexingTest, NanAndInfAreCopiedUnchanged) {
  using B = TypeParam;
  const double nan = std::numeric_limits<double>::quiet_NaN(),
               inf = std::numeric_limits<double>::infinity();
  auto x = Tensor<B, 1>::from_floats({nan, inf, -inf, 1});
  auto g = x.select(0, Tensor<B, 1, Int>::from_ints({3, 0, 2})).template to_vec<float>();
  EXPECT_EQ(g[0], 1.0f);
  EXPECT_TRUE(std::isnan(g[1]));
  EXPECT_EQ(g[2], -std::numeric_limits<float>::infinity());
  // NaN is non-zero (torch.nonzero)
  EXPECT_EQ(x.argwhere().template to_vec<std::int64_t>(), (I64{0, 1, 2, 3}));
}

TYPED_TEST(IndexingTest, EmptyTensors) {
  using B = TypeParam;
  auto x = Tensor<B, 2>::zeros({0, 3});
  EXPECT_EQ(x.select(1, Tensor<B, 1, Int>::from_ints({2, 2})).shape(), (Shape{0, 2}));
  EXPECT_EQ(x.argwhere().shape(), (Shape{0, 2}));
  EXPECT_EQ(x.tril().shape(), (Shape{0, 3}));
  EXPECT_EQ(x.mask_select(Tensor<B, 2, Bool>::full({1, 3}, 1)).shape(), (Shape{0}));
  auto nz = x.nonzero();
  ASSERT_EQ(nz.size(), 2u);
  EXPECT_EQ(nz[1].shape(), (Shape{0}));
  auto y = Tensor<B, 2>::ones({2, 3});
  auto empty_idx = Tensor<B, 1, Int>::from_data(TensorData(I64{}, Shape{0}));
  EXPECT_EQ((y.template take<1>(0, empty_idx).shape()), (Shape{0, 3}));
  EXPECT_EQ((Tensor<B, 2>::eye(0).shape()), (Shape{0, 0}));
  EXPECT_EQ((y.slice_fill({s(1, 1)}, 5).template to_vec<float>()), (F32(6, 1.0f)));
}

TYPED_TEST(IndexingTest, OneHotAndEyeDefaults) {
  using B = TypeParam;
  auto oh = Tensor<B, 1, Int>::from_ints({2, 0}).one_hot(3);
  static_assert(decltype(oh)::rank == 2);
  EXPECT_EQ(oh.dtype(), DType::I64);
  EXPECT_EQ(oh.template to_vec<std::int64_t>(), (I64{0, 0, 1, 1, 0, 0}));
  auto e = Tensor<B, 2>::eye(2, {}, DType::BF16);
  EXPECT_EQ(e.dtype(), DType::BF16);
  EXPECT_EQ(e.template to_vec<float>(), (F32{1, 0, 0, 1}));
  auto b = Tensor<B, 2, Bool>::full({2, 3}, 1).tril(-1);  // Bool tril zeroes to false
  EXPECT_EQ(b.template to_vec<std::uint8_t>(), (std::vector<std::uint8_t>{0, 0, 0, 1, 0, 0}));
}

TYPED_TEST(IndexingTest, LargeInputsMatchNaiveReference) {
  using B = TypeParam;
  // Big enough for the parallel paths (>= 32768 elements), checked against host loops.
  const std::int64_t R = 300, C = 257;
  std::vector<float> xs(static_cast<std::size_t>(R * C));
  std::iota(xs.begin(), xs.end(), 0.0f);
  auto x = Tensor<B, 2>::from_data(TensorData(xs, Shape{R, C}));
  std::vector<std::int64_t> gi(static_cast<std::size_t>(R * C));
  std::vector<std::uint8_t> mv(gi.size());
  for (std::size_t k = 0; k < gi.size(); ++k) {
    gi[k] = static_cast<std::int64_t>((k * 7919) % R);
    mv[k] = (k * 31) % 3 == 0;
  }
  auto idx = Tensor<B, 2, Int>::from_data(TensorData(gi, Shape{R, C}));
  auto g = x.gather(0, idx).template to_vec<float>();
  auto sc =
      Tensor<B, 2>::zeros({R, C}).scatter(0, idx, x, IndexUpdate::Add).template to_vec<float>();
  std::vector<double> ref(gi.size(), 0.0);
  bool gather_ok = true;
  for (std::int64_t i = 0; i < R; ++i) {
    for (std::int64_t j = 0; j < C; ++j) {
      const auto k = static_cast<std::size_t>(i * C + j);
      if (g[k] != xs[static_cast<std::size_t>(gi[k] * C + j)]) gather_ok = false;
      ref[static_cast<std::size_t>(gi[k] * C + j)] += xs[k];
    }
  }
  EXPECT_TRUE(gather_ok);
  for (std::size_t k = 0; k < ref.size(); ++k) {
    if (std::abs(sc[k] - ref[k]) > 1e-3 * std::abs(ref[k]) + 1e-3) {
      ADD_FAILURE() << "scatter add mismatch at " << k << ": " << sc[k] << " vs " << ref[k];
      break;
    }
  }
  auto m = Tensor<B, 2, Bool>::from_data(TensorData::from_bytes(mv, Shape{R, C}, DType::Bool));
  auto filled = x.mask_fill(m, -1).template to_vec<float>();
  auto sel = x.mask_select(m).template to_vec<float>();
  auto where = m.argwhere().template to_vec<std::int64_t>();
  std::vector<float> sel_ref;
  bool fill_ok = true;
  for (std::size_t k = 0; k < mv.size(); ++k) {
    if (filled[k] != (mv[k] ? -1.0f : xs[k])) fill_ok = false;
    if (mv[k]) sel_ref.push_back(xs[k]);
  }
  EXPECT_TRUE(fill_ok);
  EXPECT_EQ(sel, sel_ref);
  ASSERT_EQ(where.size(), 2 * sel_ref.size());
  bool where_ok = true;
  for (std::size_t r = 0; r < sel_ref.size(); ++r) {
    if (xs[static_cast<std::size_t>(where[2 * r] * C + where[2 * r + 1])] != sel_ref[r])
      where_ok = false;
  }
  EXPECT_TRUE(where_ok);
  auto rows = x.select(0, Tensor<B, 1, Int>::from_ints({299, 0})).template to_vec<float>();
  EXPECT_EQ(rows[0], xs[static_cast<std::size_t>(299 * C)]);
  EXPECT_EQ(rows[static_cast<std::size_t>(C)], 0.0f);
}

// ---- errors: every front-end check --------------------------------------------------------

TYPED_TEST(IndexingTest, SelectErrors) {
  using B = TypeParam;
  auto x = Tensor<B, 2>::zeros({2, 3});
  EMBER_EXPECT_THROW_MSG((x.select(1, Tensor<B, 1, Int>::from_ints({0, 5}))), ShapeError,
                         "[select] index 5 is out of range for dim 1 of size 3");
  EMBER_EXPECT_THROW_MSG((x.select(0, Tensor<B, 1, Int>::from_ints({-1}))), ShapeError,
                         "[select] index -1 is out of range for dim 0 of size 2");
  EMBER_EXPECT_THROW_MSG((x.select(2, Tensor<B, 1, Int>::from_ints({0}))), ShapeError,
                         "[select] dim 2 is out of range");
}

TYPED_TEST(IndexingTest, SelectAssignErrors) {
  using B = TypeParam;
  auto x = Tensor<B, 2>::zeros({2, 3});
  auto idx = Tensor<B, 1, Int>::from_ints({0, 2});
  EMBER_EXPECT_THROW_MSG((x.select_assign(1, idx, Tensor<B, 2>::zeros({2, 3}))), ShapeError,
                         "[select_assign] values of shape [2, 3] do not match [2, 2]");
  EMBER_EXPECT_THROW_MSG((x.select_assign(0, idx, Tensor<B, 2>::zeros({2, 3}))), ShapeError,
                         "[select_assign] index 2 is out of range for dim 0 of size 2");
  EMBER_EXPECT_THROW_MSG((x.select_assign(-3, idx, Tensor<B, 2>::zeros({2, 3}))), ShapeError,
                         "[select_assign] dim -3 is out of range");
  auto b = Tensor<B, 2, Bool>::full({2, 3}, 0);
  EMBER_EXPECT_THROW_MSG(
      (b.select_assign(1, idx, Tensor<B, 2, Bool>::full({2, 2}, 1), IndexUpdate::Add)),
      UnsupportedError, "[select_assign] IndexUpdate::Add is not supported for Bool");
}

TYPED_TEST(IndexingTest, GatherErrors) {
  using B = TypeParam;
  auto x = Tensor<B, 2>::zeros({2, 3});
  EMBER_EXPECT_THROW_MSG(
      (x.gather(1, Tensor<B, 2, Int>::from_ints({{0}, {1}, {2}}))), ShapeError,
      "[gather] index of shape [3, 1] is larger than the tensor of shape [2, 3] in dim 0");
  EMBER_EXPECT_THROW_MSG((x.gather(1, Tensor<B, 2, Int>::from_ints({{0, 3}}))), ShapeError,
                         "[gather] index 3 is out of range for dim 1 of size 3");
  EMBER_EXPECT_THROW_MSG((x.gather(0, Tensor<B, 2, Int>::from_ints({{-2}}))), ShapeError,
                         "[gather] index -2 is out of range for dim 0 of size 2");
  EMBER_EXPECT_THROW_MSG((x.gather(5, Tensor<B, 2, Int>::from_ints({{0}}))), ShapeError,
                         "[gather] dim 5 is out of range");
}

TYPED_TEST(IndexingTest, ScatterErrors) {
  using B = TypeParam;
  auto x = Tensor<B, 2>::zeros({2, 3});
  EMBER_EXPECT_THROW_MSG(
      (x.scatter(1, Tensor<B, 2, Int>::from_ints({{0, 1}}), Tensor<B, 2>::zeros({1, 1}))),
      ShapeError, "[scatter] index of shape [1, 2] is larger than values of shape [1, 1] in dim 1");
  EMBER_EXPECT_THROW_MSG(
      (x.scatter(1, Tensor<B, 2, Int>::from_ints({{0}, {1}, {2}}), Tensor<B, 2>::zeros({3, 1}))),
      ShapeError,
      "[scatter] index of shape [3, 1] is larger than the tensor of shape [2, 3] in dim 0");
  EMBER_EXPECT_THROW_MSG(
      (x.scatter(0, Tensor<B, 2, Int>::from_ints({{2}}), Tensor<B, 2>::zeros({1, 1}))), ShapeError,
      "[scatter] index 2 is out of range for dim 0 of size 2");
  auto b = Tensor<B, 2, Bool>::full({2, 3}, 0);
  EMBER_EXPECT_THROW_MSG((b.scatter(0, Tensor<B, 2, Int>::from_ints({{0}}), b, IndexUpdate::Add)),
                         UnsupportedError, "[scatter] IndexUpdate::Add is not supported for Bool");
}

TYPED_TEST(IndexingTest, TakeErrors) {
  using B = TypeParam;
  auto x = Tensor<B, 2>::zeros({2, 3});
  EMBER_EXPECT_THROW_MSG((x.template take<2>(1, Tensor<B, 2, Int>::from_ints({{0, 3}}))),
                         ShapeError, "[take] index 3 is out of range for dim 1 of size 3");
  EMBER_EXPECT_THROW_MSG((x.template take<1>(2, Tensor<B, 1, Int>::from_ints({0}))), ShapeError,
                         "[take] dim 2 is out of range");
}

TYPED_TEST(IndexingTest, MaskErrors) {
  using B = TypeParam;
  auto x = Tensor<B, 2>::zeros({2, 3});
  auto bad = Tensor<B, 2, Bool>::full({2, 2}, 1);
  EMBER_EXPECT_THROW_MSG(
      (x.mask_where(bad, x)), ShapeError,
      "[mask_where] mask of shape [2, 2] cannot be broadcast to the tensor's shape [2, 3]");
  EMBER_EXPECT_THROW_MSG(
      (x.mask_where(Tensor<B, 2, Bool>::full({1, 3}, 1), Tensor<B, 2>::zeros({3, 3}))), ShapeError,
      "[mask_where] values of shape [3, 3] cannot be broadcast");
  EMBER_EXPECT_THROW_MSG(
      (x.mask_fill(bad, 1)), ShapeError,
      "[mask_fill] mask of shape [2, 2] cannot be broadcast to the tensor's shape [2, 3]");
  EMBER_EXPECT_THROW_MSG((x.mask_select(bad)), ShapeError,
                         "[mask_select] mask of shape [2, 2] cannot be broadcast");
  // broadcasting goes to the tensor's shape only (a size-1 tensor dim does not stretch)
  EMBER_EXPECT_THROW_MSG(
      (Tensor<B, 2>::zeros({1, 3}).mask_fill(Tensor<B, 2, Bool>::full({2, 3}, 1), 0)), ShapeError,
      "(dim 0: 2 vs 1)");
}

TYPED_TEST(IndexingTest, SliceAssignAndFillErrors) {
  using B = TypeParam;
  auto x = Tensor<B, 2>::zeros({2, 3});
  EMBER_EXPECT_THROW_MSG((x.slice_assign({s(0, 1)}, Tensor<B, 2>::zeros({2, 3}))), ShapeError,
                         "[slice_assign] values of shape [2, 3] do not match the slice shape [1, "
                         "3] of the tensor of shape [2, 3]");
  EMBER_EXPECT_THROW_MSG((x.slice_assign({s(), s(), s()}, x)), ShapeError,
                         "[slice_assign] 3 slices given for a tensor of shape [2, 3]");
  EMBER_EXPECT_THROW_MSG((x.slice_fill({s(0, 2, 0)}, 1)), ShapeError,
                         "[slice_fill] slice step must be non-zero (dim 0)");
  EMBER_EXPECT_THROW_MSG((x.slice_fill({s(), s(3)}, 1)), ShapeError,
                         "[slice_fill] index 3 is out of range for dim 1 of size 3");
}

TYPED_TEST(IndexingTest, OneHotErrors) {
  using B = TypeParam;
  auto i = Tensor<B, 1, Int>::from_ints({0, 3});
  EMBER_EXPECT_THROW_MSG(
      (i.one_hot(3)), ValueError,
      "[one_hot] index 3 is out of range: num_classes 3 must be greater than every index");
  EMBER_EXPECT_THROW_MSG((Tensor<B, 1, Int>::from_ints({-1}).one_hot(3)), ValueError,
                         "[one_hot] index -1 is out of range");
  EMBER_EXPECT_THROW_MSG((i.one_hot(0)), ValueError,
                         "[one_hot] num_classes must be positive, got 0");
  EMBER_EXPECT_THROW_MSG(
      (i.one_hot_fill(3, 1, 0)), ValueError,
      "[one_hot_fill] index 3 is out of range for num_classes 3 (valid: -3 to 2)");
  EMBER_EXPECT_THROW_MSG((Tensor<B, 1, Int>::from_ints({-4}).one_hot_fill(3, 1, 0)), ValueError,
                         "[one_hot_fill] index -4 is out of range");
  EMBER_EXPECT_THROW_MSG((i.one_hot_fill(4, 1, 0, 2)), ShapeError,
                         "[one_hot_fill] dim 2 is out of range");
}

TYPED_TEST(IndexingTest, CreationErrors) {
  using B = TypeParam;
  EMBER_EXPECT_THROW_MSG((Tensor<B, 2>::eye(-1)), ValueError, "[eye] size must be >= 0, got -1");
  EMBER_EXPECT_THROW_MSG((Tensor<B, 2>::eye(2, {}, DType::I64)), DTypeError,
                         "[eye] dtype i64 is not a Float dtype");
  EMBER_EXPECT_THROW_MSG((Tensor<B, 2, Int>::eye(2, {}, DType::F32)), DTypeError,
                         "[eye] dtype f32 is not an Int dtype");
  EMBER_EXPECT_THROW_MSG((Tensor<B, 2, Bool>::tril_mask({3})), ShapeError,
                         "[tril_mask] shape [3] has rank 1, expected rank 2");
  EMBER_EXPECT_THROW_MSG((Tensor<B, 3, Bool>::triu_mask({2, 2})), ShapeError,
                         "[triu_mask] shape [2, 2] has rank 2");
  EMBER_EXPECT_THROW_MSG((Tensor<B, 2, Bool>::diag_mask({2, -1})), ShapeError,
                         "[diag_mask] shape [2, -1] has a negative dim");
}

// ---- index kinds and ranks are checked at compile time ------------------------------------

namespace {
template <class X, class I>
concept CanSelect = requires(const X& x, const I& i) {
  x.select(0, i);
};
template <class X, class I>
concept CanGather = requires(const X& x, const I& i) {
  x.gather(0, i);
};
template <class X, class M>
concept CanMaskFill = requires(const X& x, const M& m) {
  x.mask_fill(m, 0.0);
};
template <class X>
concept CanOneHot = requires(const X& x) {
  x.one_hot(3);
};
template <class X>
concept CanTril = requires(const X& x) {
  x.tril(0);
};
}  // namespace

TYPED_TEST(IndexingTest, WrongIndexKindOrRankDoesNotCompile) {
  using B = TypeParam;
  // Index tensors must be Int (any int dtype) of the documented rank; masks must be Bool of
  // the tensor's rank. These are type errors, so no run-time check exists for them.
  static_assert(CanSelect<Tensor<B, 2>, Tensor<B, 1, Int>>);
  static_assert(!CanSelect<Tensor<B, 2>, Tensor<B, 1>>);       // Float indices
  static_assert(!CanSelect<Tensor<B, 2>, Tensor<B, 2, Int>>);  // rank-2 indices
  static_assert(CanGather<Tensor<B, 3>, Tensor<B, 3, Int>>);
  static_assert(!CanGather<Tensor<B, 3>, Tensor<B, 2, Int>>);   // index rank != D
  static_assert(!CanGather<Tensor<B, 3>, Tensor<B, 3, Bool>>);  // Bool indices
  static_assert(CanMaskFill<Tensor<B, 2>, Tensor<B, 2, Bool>>);
  static_assert(!CanMaskFill<Tensor<B, 2>, Tensor<B, 2, Int>>);   // Int mask
  static_assert(!CanMaskFill<Tensor<B, 2>, Tensor<B, 1, Bool>>);  // mask of another rank
  static_assert(CanOneHot<Tensor<B, 1, Int>> && CanOneHot<Tensor<B, 1>>);
  static_assert(!CanOneHot<Tensor<B, 1, Bool>>);
  static_assert(CanTril<Tensor<B, 2>> && !CanTril<Tensor<B, 1>>);
  SUCCEED();
}

TYPED_TEST(IndexingTest, PermutedThreeDimViews) {
  using B = TypeParam;
  if constexpr (!kViews<B>)
    GTEST_SKIP();
  else {
    // base [2, 3, 2] holding 0..11; view permuted to [2, 2, 3] (dims 0, 2, 1)
    std::vector<float> v(12);
    std::iota(v.begin(), v.end(), 0.0f);
    auto base = Tensor<B, 3>::from_data(TensorData(v, Shape{2, 3, 2}));
    auto p = view<B, 3>(base, {2, 2, 3}, {6, 1, 2});
    // p[i][j][k] = 6i + 2k + j
    auto idx = Tensor<B, 3, Int>::from_ints({{{2, 0}}, {{1, 1}}});  // [2, 1, 2]
    EXPECT_EQ(p.gather(2, idx).template to_vec<float>(), (F32{4, 0, 8, 8}));
    EXPECT_EQ(p.tril().template to_vec<float>(), (F32{0, 0, 0, 1, 3, 0, 6, 0, 0, 7, 9, 0}));
    EXPECT_EQ((p.template take<1>(-1, Tensor<B, 1, Int>::from_ints({2})).template to_vec<float>()),
              (F32{4, 5, 10, 11}));
    auto m = Tensor<B, 3, Bool>::from_bools({{{true, false, false}}});  // [1, 1, 3]
    EXPECT_EQ(p.mask_select(m).template to_vec<float>(), (F32{0, 1, 6, 7}));
    EXPECT_EQ(base.template to_vec<float>(), v);
  }
}
