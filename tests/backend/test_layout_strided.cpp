// CPU core helpers on arbitrary views: cpu::contiguous and cpu::strided_copy (and the core
// ops built on them: into_data, reshape, cast) with zero strides, negative strides and
// offsets, as produced by expand, flip and slices with negative steps. Kernels of every
// family rely on these to accept any view.
#include <cstring>
#include <numeric>

#include "backends.hpp"
#include "fixtures.hpp"

namespace ember::cpu {
// Declared in src/cpu/kernel.hpp (internal, not on the tests' include path).
CpuTensor alloc(const Shape& shape, DType dtype);
CpuTensor contiguous(const CpuTensor& t);
void strided_copy(const CpuTensor& src, const CpuTensor& dst);
}  // namespace ember::cpu

using namespace ember;

namespace {

/// A contiguous f32 buffer holding 0, 1, ..., n-1 (or another dtype converted).
CpuTensor iota_buffer(std::int64_t n, DType dtype = DType::F32) {
  std::vector<double> v(static_cast<std::size_t>(n));
  std::iota(v.begin(), v.end(), 0.0);
  return Cpu::float_from_data(TensorData(v, Shape{n}).convert(dtype), {});
}

CpuTensor view(CpuTensor base, Shape shape, std::vector<std::int64_t> strides,
               std::int64_t offset) {
  base.shape = std::move(shape);
  base.strides = std::move(strides);
  base.offset = offset;
  return base;
}

std::vector<double> values(const CpuTensor& t) {
  return Cpu::float_into_data(t).to_vec<double>();
}

}  // namespace

TEST(CpuStridedViews, ContiguousOfZeroStrideViewWithOffset) {
  const auto v = view(iota_buffer(10), Shape{3, 2}, {0, 2}, 3);
  const CpuTensor c = cpu::contiguous(v);
  EXPECT_TRUE(c.is_contiguous());
  EXPECT_NE(c.storage, v.storage);
  EXPECT_EQ(values(c), (std::vector<double>{3, 5, 3, 5, 3, 5}));
}

TEST(CpuStridedViews, ContiguousOfNegativeStrides) {
  const auto v = view(iota_buffer(6), Shape{2, 3}, {-3, -1}, 5);
  EXPECT_FALSE(v.is_contiguous());
  EXPECT_EQ(values(cpu::contiguous(v)), (std::vector<double>{5, 4, 3, 2, 1, 0}));
}

TEST(CpuStridedViews, ContiguousOfMixedZeroNegativePositiveStrides) {
  // element [i][j][k] = 1 - j + 4k
  const auto v = view(iota_buffer(8), Shape{2, 2, 2}, {0, -1, 4}, 1);
  EXPECT_EQ(values(cpu::contiguous(v)), (std::vector<double>{1, 5, 0, 4, 1, 5, 0, 4}));
}

TEST(CpuStridedViews, ContiguousKeepsAContiguousOffsetView) {
  const auto v = view(iota_buffer(10), Shape{2, 3}, {3, 1}, 4);  // rows 4..9
  const CpuTensor c = cpu::contiguous(v);
  EXPECT_EQ(c.storage, v.storage);  // no copy needed
  EXPECT_EQ(values(c), (std::vector<double>{4, 5, 6, 7, 8, 9}));
}

TEST(CpuStridedViews, StridedCopyIntoNegativeStrideDestination) {
  const CpuTensor src = view(iota_buffer(6), Shape{2, 3}, {3, 1}, 0);
  CpuTensor buf = cpu::alloc(Shape{6}, DType::F32);
  const CpuTensor dst = view(buf, Shape{2, 3}, {-3, -1}, 5);  // the buffer, reversed
  cpu::strided_copy(src, dst);
  EXPECT_EQ(values(buf), (std::vector<double>{5, 4, 3, 2, 1, 0}));
}

TEST(CpuStridedViews, StridedCopyFromZeroStrideIntoOffsetColumn) {
  const CpuTensor src = view(iota_buffer(4), Shape{3, 1}, {0, 1}, 2);  // three copies of 2
  CpuTensor buf = Cpu::float_full(Shape{3, 2}, -1.0, {}, DType::F32);
  const CpuTensor dst = view(buf, Shape{3, 1}, {2, 1}, 1);  // column 1
  cpu::strided_copy(src, dst);
  EXPECT_EQ(values(buf), (std::vector<double>{-1, 2, -1, 2, -1, 2}));
}

TEST(CpuStridedViews, OtherDtypesThroughNegativeStrides) {
  for (DType dt :
       {DType::F16, DType::BF16, DType::F64, DType::I32, DType::I64, DType::U8, DType::Bool}) {
    const auto v = view(iota_buffer(4, dt), Shape{2, 2}, {-1, -2}, 3);  // [[3, 1], [2, 0]]
    const CpuTensor c = cpu::contiguous(v);
    EXPECT_EQ(c.dtype, dt);
    const std::vector<double> want =
        dt == DType::Bool ? std::vector<double>{1, 1, 1, 0} : std::vector<double>{3, 1, 2, 0};
    EXPECT_EQ(values(c), want) << dtype_name(dt);
  }
}

TEST(CpuStridedViews, EmptyViewsWithOddStridesAndOffsets) {
  const auto v = view(iota_buffer(4), Shape{0, 3}, {-7, 0}, 3);
  const CpuTensor c = cpu::contiguous(v);
  EXPECT_EQ(c.shape, (Shape{0, 3}));
  EXPECT_TRUE(values(c).empty());
  CpuTensor dst = cpu::alloc(Shape{0, 3}, DType::F32);
  cpu::strided_copy(v, dst);  // nothing to do, must not touch memory
  EXPECT_EQ(Cpu::float_reshape(v, Shape{3, 0}).shape, (Shape{3, 0}));
}

TEST(CpuStridedViews, CoreOpsAcceptNegativeAndZeroStrides) {
  const auto v = view(iota_buffer(6), Shape{2, 3}, {-3, 0}, 3);  // [[3, 3, 3], [0, 0, 0]]
  EXPECT_EQ(values(Cpu::float_reshape(v, Shape{3, 2})), (std::vector<double>{3, 3, 3, 0, 0, 0}));
  const CpuTensor i = Cpu::float_into_int(v, DType::I32);
  EXPECT_EQ(Cpu::int_into_data(i).to_vec<std::int64_t>(),
            (std::vector<std::int64_t>{3, 3, 3, 0, 0, 0}));
  const CpuTensor h = Cpu::float_cast(v, DType::F16);
  EXPECT_EQ(values(h), (std::vector<double>{3, 3, 3, 0, 0, 0}));
  // a flipped view is not reusable in place even when its handle is unique
  CpuTensor own = Cpu::float_flip(iota_buffer(3), {0});
  EXPECT_FALSE(own.can_reuse());
}

TEST(CpuStridedViews, LargeTransposedCopyMatchesIndexing) {
  // big enough for the parallel paths of kernels built on contiguous()
  const std::int64_t r = 300, c = 257;
  const auto t =
      Tensor<Cpu, 1, Int>::arange(0, r * c).template reshape<2>({r, c}).transpose().flip({0});
  const auto v = t.template to_vec<std::int64_t>();
  ASSERT_EQ(v.size(), static_cast<std::size_t>(r * c));
  bool ok = true;
  for (std::int64_t i = 0; i < c && ok; ++i)
    for (std::int64_t j = 0; j < r && ok; ++j)
      ok = v[static_cast<std::size_t>(i * r + j)] == j * c + (c - 1 - i);
  EXPECT_TRUE(ok);
  const auto cat = Tensor<Cpu, 2, Int>::cat({t, t.slice({s(0, 2)})}, 0);
  EXPECT_EQ(cat.shape(), (Shape{c + 2, r}));
  EXPECT_EQ(cat.slice({s(c), s(5)}).into_scalar(), 5 * c + (c - 1));
}
