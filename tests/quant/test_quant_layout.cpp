// Layout ops on quantized tensors (ember/quant/layout.hpp) on the CPU backend: reshape,
// permute, narrow and cat move the stored integers and give, bit for bit, the float op on
// the dequantized input, with the integers of the same op on the unpacked integers; the
// layouts a scheme cannot follow throw; quant::apply runs float ops on quantized tensors,
// with or without requantizing (Burn's QuantPropagation).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ember/cpu/cpu.hpp"
#include "ember/quant/layout.hpp"
#include "ember/tensor/tensor.hpp"
#include "fixtures.hpp"

using namespace ember;

namespace {

/// Deterministic values whose size varies along every dim (so groups get different scales).
template <std::size_t D>
Tensor<Cpu, D> sample(const Shape& shape, double phase = 0.0) {
  std::vector<float> v(static_cast<std::size_t>(shape.numel()));
  for (std::size_t i = 0; i < v.size(); ++i) {
    v[i] = static_cast<float>(std::sin(0.61 * static_cast<double>(i) + phase) *
                              (1.0 + static_cast<double>(i % 7)));
  }
  return Tensor<Cpu, D>::from_data(TensorData(std::move(v), shape));
}

/// `base`'s level under int8 / int4 and symmetric / affine.
std::vector<QuantScheme> variants(const QuantScheme& base) {
  std::vector<QuantScheme> out;
  for (auto value : {QuantValue::Int8, QuantValue::Int4}) {
    for (auto mode : {QuantMode::Symmetric, QuantMode::Affine}) {
      QuantScheme s = base;
      s.value = value;
      s.mode = mode;
      out.push_back(s);
    }
  }
  return out;
}

std::string where(const QuantScheme& s, const Shape& shape) {
  return s.to_string() + " on " + shape.to_string();
}

/// r, the result of a layout op on q, against the float op on q.dequantize() (`want`, bit
/// for bit) and the same op on q's integers (`ints`); r has `scheme` and parameters of its
/// params_shape, and its packed values are what quantizing its own values with its own
/// parameters gives (so an int4 padding nibble is 0).
template <std::size_t D>
void expect_layout(const QTensor<Cpu, D>& r, const Tensor<Cpu, D>& want,
                   const Tensor<Cpu, D, Int>& ints, const QuantScheme& scheme) {
  EXPECT_EQ(r.scheme(), scheme);
  EXPECT_EQ(r.shape(), want.shape());
  test::expect_eq(r.dequantize().into_data(), want.into_data());
  test::expect_eq(quant::integers(r).into_data(), ints.into_data());
  EXPECT_EQ(r.values().shape(), scheme.storage_shape(want.shape()));
  EXPECT_EQ(r.scales().shape(), scheme.params_shape(want.shape()));
  EXPECT_EQ(r.zero_points().has_value(), scheme.mode == QuantMode::Affine);
  if (r.zero_points()) {
    EXPECT_EQ(r.zero_points()->shape(), scheme.params_shape(want.shape()));
  }
  const auto again = quantize(r.dequantize(), scheme, r.scales(), r.zero_points());
  test::expect_eq(r.values().into_data(), again.values().into_data());
}

template <std::size_t D2, std::size_t D>
void check_reshape(const QTensor<Cpu, D>& q, const Shape& target, const QuantScheme& want) {
  SCOPED_TRACE("reshape to " + target.to_string());
  expect_layout(quant::reshape<D2>(q, target), q.dequantize().template reshape<D2>(target),
                quant::integers(q).template reshape<D2>(target), want);
}

template <std::size_t D>
void check_permute(const QTensor<Cpu, D>& q, const std::vector<std::int64_t>& dims,
                   const QuantScheme& want) {
  SCOPED_TRACE("permute " + Shape(dims).to_string());
  expect_layout(quant::permute(q, dims), q.dequantize().permute(dims),
                quant::integers(q).permute(dims), want);
}

template <std::size_t D>
void check_narrow(const QTensor<Cpu, D>& q, std::int64_t dim, std::int64_t start,
                  std::int64_t length) {
  SCOPED_TRACE("narrow(" + std::to_string(dim) + ", " + std::to_string(start) + ", " +
               std::to_string(length) + ")");
  expect_layout(quant::narrow(q, dim, start, length), q.dequantize().narrow(dim, start, length),
                quant::integers(q).narrow(dim, start, length), q.scheme());
}

template <std::size_t D>
void check_cat(const std::vector<QTensor<Cpu, D>>& qs, std::int64_t dim, const QuantScheme& want) {
  SCOPED_TRACE("cat along " + std::to_string(dim));
  std::vector<Tensor<Cpu, D>> fs;
  std::vector<Tensor<Cpu, D, Int>> is;
  for (const auto& q : qs) {
    fs.push_back(q.dequantize());
    is.push_back(quant::integers(q));
  }
  expect_layout(quant::cat(qs, dim), Tensor<Cpu, D>::cat(fs, dim),
                Tensor<Cpu, D, Int>::cat(is, dim), want);
}

/// quant::cat on rank 3 (a name without a template comma, for EMBER_EXPECT_THROW_MSG).
QTensor<Cpu, 3> cat3(const std::vector<QTensor<Cpu, 3>>& qs, std::int64_t dim) {
  return quant::cat(qs, dim);
}

/// Every permutation of 0..n-1.
std::vector<std::vector<std::int64_t>> permutations(std::int64_t n) {
  std::vector<std::int64_t> p(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) p[static_cast<std::size_t>(i)] = i;
  std::vector<std::vector<std::int64_t>> out;
  do out.push_back(p);
  while (std::next_permutation(p.begin(), p.end()));
  return out;
}

}  // namespace

// ---- integers ------------------------------------------------------------------------------

TEST(QuantLayout, IntegersUnpackTheNibbles) {
  // scale 0.5: 0, 2, 2, 0, -2, 127 | 7, -128 | -8 (as test_quant.cpp's RoundsHalfToEven).
  auto x = Tensor<Cpu, 1>::from_floats({0.25, 0.75, 1.25, -0.25, -0.75, 1000, -1000});
  auto s = Tensor<Cpu, 1>::from_floats({0.5});
  auto q4 = quantize(x, QuantScheme::int4(), s);
  test::expect_eq(quant::integers(q4).into_data(),
                  TensorData(std::vector<std::int8_t>{0, 2, 2, 0, -2, 7, -8}, Shape{7}));
  auto q8 = quantize(x, QuantScheme::int8(), s);
  test::expect_eq(quant::integers(q8).into_data(),
                  TensorData(std::vector<std::int8_t>{0, 2, 2, 0, -2, 127, -128}, Shape{7}));
}

// ---- reshape -------------------------------------------------------------------------------

TEST(QuantLayout, ReshapePerTensor) {
  for (const Shape& shape : {Shape{4, 3, 6}, Shape{4, 3, 5}}) {
    const auto x = sample<3>(shape);
    const std::int64_t w = shape[2];
    for (const auto& s : variants(QuantScheme::int8())) {
      SCOPED_TRACE(where(s, shape));
      const auto q = x.quantize(s);
      check_reshape<2>(q, Shape{12, w}, s);       // last dim kept: int4 bytes reshaped
      check_reshape<2>(q, Shape{w, -1}, s);       // last dim 12: int4 repacked
      check_reshape<1>(q, Shape{12 * w}, s);      // rank 1
      check_reshape<3>(q, Shape{0, -1, 3}, s);    // 0 keeps dim 0: [4, w, 3]
      check_reshape<4>(q, Shape{2, 2, 3, w}, s);  // rank 4, last dim kept
      check_reshape<2>(q, Shape{-1, 2}, s);       // even last dim from an odd one
      check_reshape<3>(q, Shape{4, 3, w}, s);     // identity
    }
  }
}

TEST(QuantLayout, ReshapePerChannelMovesTheAxis) {
  for (const Shape& shape : {Shape{4, 3, 6}, Shape{4, 3, 5}}) {
    const auto x = sample<3>(shape);
    const std::int64_t w = shape[2];
    for (const auto& base : {QuantScheme::int8().per_channel(0), QuantScheme::int8().per_channel(1),
                             QuantScheme::int8().per_channel(-1)}) {
      for (const auto& s : variants(base)) {
        SCOPED_TRACE(where(s, shape));
        const auto q = x.quantize(s);
        const std::size_t a = s.channel_dim(3);
        if (a == 0) {
          check_reshape<2>(q, Shape{4, 3 * w}, s.per_channel(0));  // int4 repacked
          check_reshape<4>(q, Shape{4, 3, w, 1}, s.per_channel(0));
          check_reshape<3>(q, Shape{1, 4, -1}, s.per_channel(1));  // size-1 dim in front
        } else if (a == 1) {
          check_reshape<4>(q, Shape{2, 2, 3, w}, s.per_channel(2));
          check_reshape<4>(q, Shape{4, 3, w, 1}, s.per_channel(1));  // last dim 1: repacked
        } else {
          check_reshape<2>(q, Shape{12, w}, s.per_channel(1));  // axis -1 -> 1
          check_reshape<3>(q, Shape{2, 6, w}, s.per_channel(2));
          check_reshape<4>(q, Shape{1, 12, w, 1}, s.per_channel(2));  // repacked
        }
      }
    }
  }
}

TEST(QuantLayout, ReshapePerBlockKeepsTheLastDim) {
  struct Case {
    Shape shape;
    std::int64_t block;
  };
  for (const Case& c : {Case{{4, 3, 6}, 3}, Case{{4, 3, 6}, 2}, Case{{4, 3, 5}, 5}}) {
    const auto x = sample<3>(c.shape);
    const std::int64_t w = c.shape[2];
    auto bases = variants(QuantScheme::int8().per_block(c.block));
    for (const auto& s : variants(QuantScheme::int8().per_block(c.block).with_f16_scales())) {
      bases.push_back(s);
    }
    for (const auto& s : bases) {
      SCOPED_TRACE(where(s, c.shape));
      const auto q = x.quantize(s);
      check_reshape<2>(q, Shape{12, w}, s);
      check_reshape<3>(q, Shape{2, 6, w}, s);
      check_reshape<4>(q, Shape{4, 3, 1, -1}, s);
      // A single row to rank 1 keeps the last dim too.
      const auto row = x.narrow(0, 0, 1).narrow(1, 2, 1).quantize(s);
      check_reshape<1>(row, Shape{-1}, s);
    }
  }
}

TEST(QuantLayout, ReshapeRefused) {
  const auto x = sample<3>({4, 3, 6});
  // The channel dim split, merged, or with other elements before it.
  const auto c0 = x.quantize(QuantScheme::int4().per_channel(0));
  EMBER_EXPECT_THROW_MSG(
      quant::reshape<3>(c0, Shape{2, 2, 18}), UnsupportedError,
      "[reshape] cannot reshape [4, 3, 6] into [2, 2, 18] quantized as int4 "
      "symmetric per-channel(axis=0) f32: the channel dim 0 (size 4) must stay a "
      "dim of its own with as many elements before it (1)");
  EMBER_EXPECT_THROW_MSG(quant::reshape<2>(c0, Shape{12, 6}), UnsupportedError,
                         "the channel dim 0 (size 4");
  const auto c1 = x.quantize(QuantScheme::int8().affine().per_channel(1));
  EMBER_EXPECT_THROW_MSG(
      quant::reshape<2>(c1, Shape{3, 24}), UnsupportedError,
      "the channel dim 1 (size 3) must stay a dim of its own with as many elements "
      "before it (4)");
  EMBER_EXPECT_THROW_MSG(quant::reshape<2>(c1, Shape{4, 18}), UnsupportedError,
                         "per-channel(axis=1)");
  const auto c2 = x.quantize(QuantScheme::int8().per_channel(-1));
  EMBER_EXPECT_THROW_MSG(quant::reshape<2>(c2, Shape{4, 18}), UnsupportedError,
                         "the channel dim 2 (size 6");
  // A block level whose last dim changes size.
  const auto b = x.quantize(QuantScheme::int4().per_block(3).with_f16_scales());
  EMBER_EXPECT_THROW_MSG(quant::reshape<2>(b, Shape{6, 12}), UnsupportedError,
                         "[reshape] cannot reshape [4, 3, 6] into [6, 12] quantized as int4 "
                         "symmetric per-block(3) f16: the per-block level needs the last dim to "
                         "keep its size (6, blocks of 3)");
  EMBER_EXPECT_THROW_MSG(quant::reshape<1>(b, Shape{72}), UnsupportedError, "keep its size");
  // Bad targets, as Tensor::reshape.
  const auto t = x.quantize(QuantScheme::int8());
  EMBER_EXPECT_THROW_MSG(quant::reshape<2>(t, Shape{5, 14}), ShapeError,
                         "[reshape] cannot reshape [4, 3, 6] (72 elements) into [5, 14] (70 "
                         "elements)");
  EMBER_EXPECT_THROW_MSG(quant::reshape<2>(t, Shape{-1, -1}), ShapeError, "more than one -1");
  EMBER_EXPECT_THROW_MSG(quant::reshape<2>(t, Shape{-1, 7}), ShapeError,
                         "cannot reshape [4, 3, 6] into [-1, 7]");
  EMBER_EXPECT_THROW_MSG(quant::reshape<2>(t, Shape{72}), ShapeError,
                         "target shape [72] has rank 1, expected rank 2");
  EMBER_EXPECT_THROW_MSG(quant::reshape<2>(t, Shape{-2, 36}), ShapeError, "invalid dim -2");
}

// ---- permute -------------------------------------------------------------------------------

TEST(QuantLayout, PermuteMovesTheChannelAxis) {
  for (const Shape& shape : {Shape{4, 3, 6}, Shape{4, 3, 5}}) {
    const auto x = sample<3>(shape);
    for (const auto& base :
         {QuantScheme::int8(), QuantScheme::int8().per_channel(0),
          QuantScheme::int8().per_channel(1), QuantScheme::int8().per_channel(-1)}) {
      for (const auto& s : variants(base)) {
        SCOPED_TRACE(where(s, shape));
        const auto q = x.quantize(s);
        for (const auto& dims : permutations(3)) {
          QuantScheme want = s;
          if (s.level == QuantLevel::Channel) {
            const auto a = static_cast<std::int64_t>(s.channel_dim(3));
            want.axis = std::find(dims.begin(), dims.end(), a) - dims.begin();
          }
          check_permute(q, dims, want);
        }
      }
    }
  }
  // Negative dims; the axis of [2, 0, 1] is where dim 0 went.
  const auto q = sample<3>({4, 3, 5}).quantize(QuantScheme::int4().affine().per_channel(0));
  check_permute(q, {-1, 0, -2}, QuantScheme::int4().affine().per_channel(1));
}

TEST(QuantLayout, PermutePerBlockKeepsTheLastDimLast) {
  for (const auto& [shape, block] :
       {std::pair{Shape{4, 3, 6}, std::int64_t{3}}, std::pair{Shape{4, 3, 5}, std::int64_t{5}}}) {
    const auto x = sample<3>(shape);
    auto schemes = variants(QuantScheme::int8().per_block(block));
    schemes.push_back(QuantScheme::int4().affine().per_block(block).with_f16_scales());
    for (const auto& s : schemes) {
      SCOPED_TRACE(where(s, shape));
      const auto q = x.quantize(s);
      check_permute(q, {1, 0, 2}, s);
      check_permute(q, {0, 1, 2}, s);
      check_permute(q, {-2, -3, -1}, s);
      expect_layout(quant::swap_dims(q, 0, 1), q.dequantize().swap_dims(0, 1),
                    quant::integers(q).swap_dims(0, 1), s);
    }
  }
}

TEST(QuantLayout, SwapDimsAndTranspose) {
  // A weight [out, in] per output channel becomes [in, out] per channel along axis 1.
  for (const Shape& shape : {Shape{6, 8}, Shape{6, 7}}) {
    for (const auto& s : variants(QuantScheme::int8().per_channel(0))) {
      SCOPED_TRACE(where(s, shape));
      const auto q = sample<2>(shape).quantize(s);
      const auto t = quant::transpose(q);
      expect_layout(t, q.dequantize().transpose(), quant::integers(q).transpose(),
                    s.per_channel(1));
      // Transposing back restores the stored integers and the axis.
      const auto back = quant::transpose(t);
      expect_layout(back, q.dequantize(), quant::integers(q), s.per_channel(0));
      test::expect_eq(back.values().into_data(), q.values().into_data());
    }
  }
  const auto q3 = sample<3>({4, 3, 5}).quantize(QuantScheme::int4().per_channel(-1));
  expect_layout(quant::swap_dims(q3, -1, 0), q3.dequantize().swap_dims(-1, 0),
                quant::integers(q3).swap_dims(-1, 0), QuantScheme::int4().per_channel(0));
  expect_layout(quant::swap_dims(q3, 1, 1), q3.dequantize(), quant::integers(q3),
                QuantScheme::int4().per_channel(2));
}

TEST(QuantLayout, PermuteRefused) {
  const auto b = sample<3>({4, 3, 6}).quantize(QuantScheme::int4().per_block(2));
  EMBER_EXPECT_THROW_MSG(
      quant::permute(b, {2, 0, 1}), UnsupportedError,
      "[permute] dims [2, 0, 1] move the last dim of a tensor of shape [4, 3, 6] "
      "quantized as int4 symmetric per-block(2) f32: the per-block level needs "
      "the last dim to stay last");
  EMBER_EXPECT_THROW_MSG(quant::swap_dims(b, 1, -1), UnsupportedError,
                         "[swap_dims] dims [0, 2, 1] move the last dim");
  const auto b2 = sample<2>({4, 6}).quantize(QuantScheme::int8().per_block(3));
  EMBER_EXPECT_THROW_MSG(quant::transpose(b2), UnsupportedError, "[transpose] dims [1, 0]");
  EMBER_EXPECT_THROW_MSG(
      quant::permute(b, {0, 1}), ShapeError,
      "[permute] expected 3 dims, got 2 ([0, 1]) for a tensor of shape [4, 3, 6]");
  EMBER_EXPECT_THROW_MSG(quant::permute(b, {0, 1, 1}), ShapeError, "dim 1 appears more than once");
  EMBER_EXPECT_THROW_MSG(quant::permute(b, {0, 1, 3}), ShapeError, "[permute]");
  EMBER_EXPECT_THROW_MSG(quant::swap_dims(b, 0, 3), ShapeError, "[swap_dims]");
}

// ---- narrow --------------------------------------------------------------------------------

TEST(QuantLayout, NarrowPerTensorAndChannel) {
  for (const Shape& shape : {Shape{4, 3, 6}, Shape{4, 3, 5}}) {
    const auto x = sample<3>(shape);
    const std::int64_t w = shape[2];
    for (const auto& base :
         {QuantScheme::int8(), QuantScheme::int8().per_channel(0),
          QuantScheme::int8().per_channel(1), QuantScheme::int8().per_channel(-1)}) {
      for (const auto& s : variants(base)) {
        SCOPED_TRACE(where(s, shape));
        const auto q = x.quantize(s);
        check_narrow(q, 0, 1, 2);
        check_narrow(q, 0, -3, 3);
        check_narrow(q, 0, 4, 0);
        check_narrow(q, 1, 1, 1);
        check_narrow(q, -2, 0, 3);
        check_narrow(q, 2, 0, 2);      // int4: whole bytes
        check_narrow(q, 2, 2, 2);      // whole bytes
        check_narrow(q, 2, 1, 3);      // odd start and length: repacked
        check_narrow(q, 2, 1, 2);      // odd start
        check_narrow(q, 2, 2, w - 2);  // to the end (odd length for w = 5)
        check_narrow(q, -1, -2, 2);
        check_narrow(q, 2, 0, w);
        check_narrow(q, 2, 3, 0);
      }
    }
  }
}

TEST(QuantLayout, NarrowPerBlock) {
  for (const auto& [shape, block] :
       {std::pair{Shape{4, 3, 6}, std::int64_t{3}}, std::pair{Shape{4, 3, 6}, std::int64_t{2}},
        std::pair{Shape{4, 3, 5}, std::int64_t{5}}, std::pair{Shape{4, 3, 12}, std::int64_t{3}}}) {
    const auto x = sample<3>(shape);
    const std::int64_t w = shape[2];
    auto schemes = variants(QuantScheme::int8().per_block(block));
    schemes.push_back(QuantScheme::int4().affine().per_block(block).with_f16_scales());
    for (const auto& s : schemes) {
      SCOPED_TRACE(where(s, shape));
      const auto q = x.quantize(s);
      check_narrow(q, 0, 1, 2);  // blocks along the other dims are sliced with the values
      check_narrow(q, 1, 2, 1);
      check_narrow(q, -3, -1, 1);
      // Whole blocks of the last dim (odd offsets for blocks of 3 and 5: int4 repacked).
      for (std::int64_t a = 0; a <= w; a += block) {
        for (std::int64_t n = 0; a + n <= w; n += block) check_narrow(q, 2, a, n);
      }
      check_narrow(q, -1, -block, block);
    }
  }
}

TEST(QuantLayout, NarrowRefused) {
  const auto b = sample<3>({4, 3, 6}).quantize(QuantScheme::int4().affine().per_block(3));
  EMBER_EXPECT_THROW_MSG(quant::narrow(b, 2, 1, 3), UnsupportedError,
                         "[narrow] start 1 and length 3 of the last dim of shape [4, 3, 6] must be "
                         "multiples of the block size 3 under int4 affine per-block(3) f32");
  EMBER_EXPECT_THROW_MSG(quant::narrow(b, -1, 0, 2), UnsupportedError, "start 0 and length 2");
  EMBER_EXPECT_THROW_MSG(quant::narrow(b, 2, -4, 3), UnsupportedError, "start 2 and length 3");
  // Bad ranges, as Tensor::narrow.
  EMBER_EXPECT_THROW_MSG(quant::narrow(b, 0, 0, -1), ValueError,
                         "[narrow] length must be >= 0, got -1");
  EMBER_EXPECT_THROW_MSG(quant::narrow(b, 0, 5, 0), ShapeError,
                         "[narrow] start 5 is out of range for dim 0 of size 4 (shape [4, 3, 6])");
  EMBER_EXPECT_THROW_MSG(quant::narrow(b, 1, 2, 2), ShapeError,
                         "[narrow] start 2 + length 2 exceeds dim 1 of size 3");
  EMBER_EXPECT_THROW_MSG(quant::narrow(b, 3, 0, 1), ShapeError, "[narrow]");
}

// ---- cat -----------------------------------------------------------------------------------

TEST(QuantLayout, CatJoinsVaryingParameters) {
  for (const auto& s : variants(QuantScheme::int8())) {
    SCOPED_TRACE(s.to_string());
    // Channels along the joined dim: each tensor brings its own scales.
    const auto c0 = s.per_channel(0);
    check_cat<3>({sample<3>({2, 3, 5}).quantize(c0), sample<3>({3, 3, 5}, 1).quantize(c0),
                  sample<3>({1, 3, 5}, 2).quantize(c0)},
                 0, c0);
    const auto cl = s.per_channel(-1);
    // Last dims 5, 6, 3 (int4 repacked: an odd piece in front); 6, 5 (bytes joined).
    check_cat<3>({sample<3>({2, 3, 5}).quantize(cl), sample<3>({2, 3, 6}, 1).quantize(cl),
                  sample<3>({2, 3, 3}, 2).quantize(cl)},
                 2, cl);
    check_cat<3>({sample<3>({2, 3, 6}).quantize(cl), sample<3>({2, 3, 5}, 1).quantize(cl)}, -1, cl);
    // Channel axis -1 and 2 are the same scheme.
    check_cat<3>({sample<3>({2, 3, 4}).quantize(s.per_channel(2)),
                  sample<3>({2, 3, 3}, 1).quantize(s.per_channel(-1))},
                 2, s.per_channel(2));
    // Blocks: along any dim, and along the last one in whole blocks.
    for (const auto& b : {s.per_block(3), s.per_block(3).with_f16_scales()}) {
      SCOPED_TRACE(b.to_string());
      check_cat<3>({sample<3>({2, 3, 6}).quantize(b), sample<3>({1, 3, 6}, 1).quantize(b)}, 0, b);
      check_cat<3>({sample<3>({2, 1, 6}).quantize(b), sample<3>({2, 4, 6}, 1).quantize(b)}, 1, b);
      check_cat<3>({sample<3>({2, 3, 3}).quantize(b), sample<3>({2, 3, 6}, 1).quantize(b),
                    sample<3>({2, 3, 9}, 2).quantize(b)},
                   2, b);
      check_cat<3>({sample<3>({2, 3, 6}).quantize(b), sample<3>({2, 3, 3}, 1).quantize(b)}, 2, b);
    }
  }
}

TEST(QuantLayout, CatKeepsSharedParameters) {
  for (const auto& s : variants(QuantScheme::int8())) {
    SCOPED_TRACE(s.to_string());
    const auto zp = [&](const Shape& ps, std::vector<std::int32_t> v) {
      return s.mode == QuantMode::Affine
                 ? std::optional(Tensor<Cpu, 3, Int>::from_data(TensorData(std::move(v), ps)))
                 : std::nullopt;
    };
    // Per tensor: the same scale and zero point given to each part.
    const auto sc =
        Tensor<Cpu, 3>::from_data(TensorData(std::vector<float>{0.75f}, Shape{1, 1, 1}));
    const auto z = zp(Shape{1, 1, 1}, {-1});
    const auto part = [&](const Shape& shape, double phase) {
      return quantize(sample<3>(shape, phase), s, sc, z);
    };
    check_cat<3>({part({2, 3, 5}, 0), part({1, 3, 5}, 1)}, 0, s);
    check_cat<3>({part({2, 3, 5}, 0), part({2, 2, 5}, 1)}, 1, s);
    check_cat<3>({part({2, 3, 5}, 0), part({2, 3, 3}, 1), part({2, 3, 2}, 2)}, 2, s);  // repacked
    check_cat<3>({part({2, 3, 4}, 0), part({2, 3, 5}, 1)}, -1, s);  // bytes joined
    // Per channel along another dim than the joined one: the same scales per channel.
    const auto c1 = s.per_channel(1);
    const auto csc = Tensor<Cpu, 3>::from_data(
        TensorData(std::vector<float>{0.5f, 1.0f, 0.25f}, Shape{1, 3, 1}));
    const auto cz = zp(Shape{1, 3, 1}, {0, 2, -3});
    const auto cpart = [&](const Shape& shape, double phase) {
      return quantize(sample<3>(shape, phase), c1, csc, cz);
    };
    check_cat<3>({cpart({2, 3, 5}, 0), cpart({3, 3, 5}, 1)}, 0, c1);
    check_cat<3>({cpart({2, 3, 5}, 0), cpart({2, 3, 1}, 1), cpart({2, 3, 2}, 2)}, 2, c1);
    // A single tensor is returned as it is.
    const auto one = cpart({2, 3, 5}, 0);
    check_cat<3>({one}, 1, c1);
  }
}

TEST(QuantLayout, CatRefused) {
  const auto x = sample<3>({2, 3, 4}), y = sample<3>({2, 3, 4}, 1);
  // Different schemes.
  EMBER_EXPECT_THROW_MSG(
      cat3({x.quantize(QuantScheme::int8()), y.quantize(QuantScheme::int4())}, 0), ValueError,
      "[cat] tensor 1 is quantized as int4 symmetric per-tensor f32 but tensor "
      "0 as int8 symmetric per-tensor f32; quantized tensors must share the "
      "scheme");
  EMBER_EXPECT_THROW_MSG(cat3({x.quantize(QuantScheme::int8().per_channel(0)),
                               y.quantize(QuantScheme::int8().per_channel(1))},
                              0),
                         ValueError, "tensor 1 is quantized as int8 symmetric per-channel(axis=1)");
  // Per-tensor parameters from different data differ.
  const auto s = QuantScheme::int8().affine();
  EMBER_EXPECT_THROW_MSG(cat3({x.quantize(s), x.quantize(s), y.mul_scalar(3.0).quantize(s)}, 1),
                         ValueError,
                         "[cat] the scales of tensor 2 differ from tensor 0's (group 0: ");
  EMBER_EXPECT_THROW_MSG(cat3({x.quantize(s), y.mul_scalar(3.0).quantize(s)}, 1), ValueError,
                         "they do not vary along dim 1, so they must be equal");
  // Equal scales, different zero points.
  const auto one = Tensor<Cpu, 3>::ones({1, 1, 1});
  EMBER_EXPECT_THROW_MSG(
      cat3({quantize(x, s, one, Tensor<Cpu, 3, Int>::full({1, 1, 1}, 1, {}, DType::I32)),
            quantize(y, s, one, Tensor<Cpu, 3, Int>::full({1, 1, 1}, 2, {}, DType::I32))},
           0),
      ValueError, "the zero points of tensor 1 differ from tensor 0's (group 0: 2 vs 1)");
  // Channels along another dim with different scales.
  const auto c2 = QuantScheme::int4().per_channel(2);
  EMBER_EXPECT_THROW_MSG(cat3({x.quantize(c2), y.quantize(c2)}, 0), ValueError,
                         "[cat] the scales of tensor 1 differ from tensor 0's");
  // Shapes, dims and the empty list.
  EMBER_EXPECT_THROW_MSG(
      cat3({x.quantize(QuantScheme::int8()), sample<3>({2, 4, 4}).quantize(QuantScheme::int8())},
           0),
      ShapeError,
      "[cat] tensor 1 has shape [2, 4, 4] but tensor 0 has shape [2, 3, 4] "
      "(every dim but dim 0 must agree)");
  EMBER_EXPECT_THROW_MSG(cat3({x.quantize(QuantScheme::int8())}, 3), ShapeError, "[cat]");
  EMBER_EXPECT_THROW_MSG(quant::cat(std::vector<QTensor<Cpu, 3>>{}, 0), ValueError,
                         "[cat] expected a non-empty list of quantized tensors");
}

// ---- propagation ---------------------------------------------------------------------------

namespace {

/// Every level under every value / mode, on [4, 3, 6].
std::vector<QuantScheme> all_schemes() {
  std::vector<QuantScheme> out;
  for (const auto& base : {QuantScheme::int8(), QuantScheme::int8().per_channel(1),
                           QuantScheme::int8().per_channel(-1), QuantScheme::int8().per_block(3),
                           QuantScheme::int8().per_block(2).with_f16_scales()}) {
    for (const auto& s : variants(base)) out.push_back(s);
  }
  return out;
}

}  // namespace

TEST(QuantPropagation, InhibitReturnsTheFloatResult) {
  for (const auto& s : all_schemes()) {
    SCOPED_TRACE(s.to_string());
    const auto q = sample<3>({4, 3, 6}).quantize(s);
    const auto r = quant::apply(q, [](const Tensor<Cpu, 3>& v) { return v.exp(); });
    ASSERT_FALSE(r.is_quantized());
    test::expect_eq(r.float_tensor().into_data(), q.dequantize().exp().into_data());
    test::expect_eq(r.dequantize().into_data(), q.dequantize().exp().into_data());
    EMBER_EXPECT_THROW_MSG(r.quantized(), ValueError,
                           "[apply] the result is a float tensor (Propagation::Inhibit)");
    const auto explicit_inhibit = quant::apply(
        q, [](const Tensor<Cpu, 3>& v) { return v.tanh(); }, quant::Propagation::Inhibit);
    EXPECT_FALSE(explicit_inhibit.is_quantized());
  }
}

TEST(QuantPropagation, PropagateRequantizesUnderTheSameScheme) {
  for (const auto& s : all_schemes()) {
    SCOPED_TRACE(s.to_string());
    const auto q = sample<3>({4, 3, 6}).quantize(s);
    const auto f = [](const Tensor<Cpu, 3>& v) { return v.tanh().mul_scalar(2.0).add_scalar(0.5); };
    const auto r = quant::apply(q, f, quant::Propagation::Propagate);
    ASSERT_TRUE(r.is_quantized());
    const QTensor<Cpu, 3>& p = r.quantized();
    EXPECT_EQ(p.scheme(), s);
    EXPECT_EQ(p.shape(), q.shape());
    EXPECT_EQ(p.scales().shape(), s.params_shape(q.shape()));
    // Parameters from the result's values: the same as quantizing f(dequantized) directly.
    const auto want = f(q.dequantize());
    const auto direct = want.quantize(s);
    test::expect_eq(p.values().into_data(), direct.values().into_data());
    test::expect_eq(p.scales().into_data(), direct.scales().into_data());
    // Within one scale step of the float result.
    const auto sc = p.scales().into_data().to_vec<double>();
    const double step = *std::max_element(sc.begin(), sc.end());
    test::expect_approx(p.dequantize().into_data(), want.into_data(), Tolerance::rel_abs(0, step));
    test::expect_eq(r.dequantize().into_data(), p.dequantize().into_data());
    EMBER_EXPECT_THROW_MSG(r.float_tensor(), ValueError,
                           "[apply] the result is quantized (Propagation::Propagate)");
  }
}

TEST(QuantPropagation, PropagateAcrossRanksAndItsErrors) {
  // f may change the rank: per tensor, the scheme fits any shape.
  const auto q = sample<3>({4, 3, 6}).quantize(QuantScheme::int4().affine());
  const auto r = quant::apply(
      q,
      [](const Tensor<Cpu, 3>& v) {
        return v.reshape<2>(Shape{12, 6}).abs();
      },
      quant::Propagation::Propagate);
  ASSERT_TRUE(r.is_quantized());
  EXPECT_EQ(r.quantized().shape(), (Shape{12, 6}));
  EXPECT_EQ(r.quantized().scheme(), q.scheme());
  const double step = r.quantized().scales().into_data().to_vec<double>()[0];
  test::expect_approx(r.dequantize().into_data(),
                      q.dequantize().reshape<2>(Shape{12, 6}).abs().into_data(),
                      Tolerance::rel_abs(0, step));
  // A scheme that does not fit the result: quantize's errors.
  const auto b = sample<3>({4, 3, 6}).quantize(QuantScheme::int8().per_block(3));
  const auto cut = [](const Tensor<Cpu, 3>& v) { return v.narrow(2, 0, 4); };
  EMBER_EXPECT_THROW_MSG(quant::apply(b, cut, quant::Propagation::Propagate), ShapeError,
                         "block size 3 does not divide the last dim of shape [4, 3, 4]");
  EXPECT_EQ(quant::apply(b, cut).float_tensor().shape(), (Shape{4, 3, 4}));
  const auto nan = [](const Tensor<Cpu, 3>& v) { return v.sqrt(); };  // NaN for negatives
  EMBER_EXPECT_THROW_MSG(quant::apply(b, nan, quant::Propagation::Propagate), ValueError,
                         "contains NaN");
}
