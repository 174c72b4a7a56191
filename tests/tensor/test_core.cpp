// Core types: dtype, f16/bf16, Shape, TensorData, and the Tensor front end's
// creation / reshape / read-back paths.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ember/cpu/cpu.hpp"
#include "ember/tensor/tensor.hpp"
#include "fixtures.hpp"

using namespace ember;

TEST(DType, SizesAndNames) {
  EXPECT_EQ(dtype_size(DType::F64), 8u);
  EXPECT_EQ(dtype_size(DType::BF16), 2u);
  EXPECT_EQ(dtype_size(DType::Bool), 1u);
  EXPECT_EQ(dtype_name(DType::I32), "i32");
  EXPECT_EQ(dtype_from_name("float16"), DType::F16);
  EMBER_EXPECT_THROW_MSG(dtype_from_name("f128"), DTypeError, "unknown dtype name 'f128'");
}

TEST(DType, FInfoMatchesTorch) {
  // torch.finfo(torch.float16).eps == 0.0009765625, .max == 65504, .tiny == 6.103515625e-05
  EXPECT_DOUBLE_EQ(finfo(DType::F16).eps, 0.0009765625);
  EXPECT_DOUBLE_EQ(finfo(DType::F16).max, 65504.0);
  EXPECT_DOUBLE_EQ(finfo(DType::F16).smallest_normal, 6.103515625e-05);
  EXPECT_DOUBLE_EQ(finfo(DType::BF16).eps, 0.0078125);
  EXPECT_DOUBLE_EQ(finfo(DType::F32).eps, 1.1920928955078125e-07);
  EMBER_EXPECT_THROW_MSG(finfo(DType::I32), DTypeError, "[finfo]");
}

TEST(DType, PromotionFollowsTorch) {
  EXPECT_EQ(promote_types(DType::F16, DType::F32), DType::F32);
  EXPECT_EQ(promote_types(DType::BF16, DType::F16), DType::F32);
  EXPECT_EQ(promote_types(DType::F32, DType::F64), DType::F64);
  EXPECT_EQ(promote_types(DType::I32, DType::I64), DType::I64);
  EXPECT_EQ(promote_types(DType::U8, DType::I8), DType::I16);
  EXPECT_EQ(promote_types(DType::I8, DType::I16), DType::I16);
}

TEST(Half, F16RoundTripAndRounding) {
  EXPECT_EQ(f16(1.0f).bits, 0x3c00);
  EXPECT_EQ(f16(-2.0f).bits, 0xc000);
  EXPECT_EQ(f16(65504.0f).bits, 0x7bff);
  EXPECT_EQ(f16(65520.0f).bits, 0x7c00);                // rounds to inf
  EXPECT_EQ(f16(5.960464477539063e-08f).bits, 0x0001);  // smallest subnormal
  EXPECT_EQ(f16(1.0f + 1.0f / 2048.0f).bits, 0x3c00);   // tie -> even
  EXPECT_EQ(f16(1.0f + 3.0f / 2048.0f).bits, 0x3c02);   // tie -> even (up)
  EXPECT_FLOAT_EQ(static_cast<float>(f16(0.333333f)), 0.33325195f);
  EXPECT_TRUE(std::isnan(static_cast<float>(f16(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_FLOAT_EQ(f16::to_float(0x0200), 3.0517578125e-05f);  // subnormal
}

TEST(Half, BF16RoundTrip) {
  EXPECT_EQ(bf16(1.0f).bits, 0x3f80);
  EXPECT_FLOAT_EQ(static_cast<float>(bf16(3.14159f)), 3.140625f);
  EXPECT_TRUE(std::isnan(static_cast<float>(bf16(std::numeric_limits<float>::quiet_NaN()))));
}

TEST(ShapeTest, StridesAndDims) {
  Shape s{2, 3, 4};
  EXPECT_EQ(s.numel(), 24);
  EXPECT_EQ(s.contiguous_strides(), (std::vector<std::int64_t>{12, 4, 1}));
  EXPECT_EQ(s.to_string(), "[2, 3, 4]");
  EXPECT_EQ(normalize_dim("op", -1, 3), 2u);
  EMBER_EXPECT_THROW_MSG(normalize_dim("sum_dim", 3, 3), ShapeError,
                         "[sum_dim] dim 3 is out of range");
  EXPECT_EQ(broadcast_shapes("add", Shape{2, 1}, Shape{1, 3}), (Shape{2, 3}));
  EMBER_EXPECT_THROW_MSG(
      broadcast_shapes("add", Shape{2, 3}, Shape{4, 3}), ShapeError,
      "[add] shapes [2, 3] and [4, 3] are not broadcast-compatible (dim 0: 2 vs 4)");
}

TEST(TensorDataTest, ConvertAndCompare) {
  TensorData d(std::vector<float>{1.5f, -2.7f, 0.0f, 3.0f}, Shape{2, 2});
  EXPECT_EQ(d.to_vec<std::int64_t>(), (std::vector<std::int64_t>{1, -2, 0, 3}));
  const auto b = d.convert(DType::Bool);
  EXPECT_EQ(b.to_vec<std::uint8_t>(), (std::vector<std::uint8_t>{1, 1, 0, 1}));
  d.assert_approx_eq(TensorData(std::vector<double>{1.5, -2.7, 0.0, 3.0}, Shape{2, 2}));
  EXPECT_THROW(
      d.assert_approx_eq(TensorData(std::vector<double>{1.5, -2.6, 0.0, 3.0}, Shape{2, 2})), Error);
  EXPECT_THROW(d.assert_eq(TensorData(std::vector<float>{1.5f, -2.7f, 0.0f, 3.0f}, Shape{4})),
               Error);
  // balanced tolerance: 0.5 % relative
  TensorData x(std::vector<float>{100.4f}, Shape{1});
  x.assert_approx_eq(TensorData(std::vector<float>{100.0f}, Shape{1}));
  EXPECT_THROW(
      x.assert_approx_eq(TensorData(std::vector<float>{99.8f}, Shape{1}), Tolerance::strict()),
      Error);
  EMBER_EXPECT_THROW_MSG(TensorData(std::vector<float>{1, 2, 3}, Shape{2, 2}), ShapeError,
                         "3 values given for shape [2, 2]");
  EMBER_EXPECT_THROW_MSG(d.as_span<double>(), DTypeError, "requested f64 but the data is f32");
}

TEST(TensorFront, FromFloatsReshapeReadBack) {
  auto a = Tensor<Cpu, 2>::from_floats({{1, 2, 3}, {4, 5, 6}});
  EXPECT_EQ(a.shape(), (Shape{2, 3}));
  EXPECT_EQ(a.dtype(), DType::F32);
  auto b = a.reshape({3, -1});
  EXPECT_EQ(b.shape(), (Shape{3, 2}));
  EXPECT_EQ(b.to_vec<float>(), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  auto c = a.reshape({0, 3, 1});
  EXPECT_EQ(c.shape(), (Shape{2, 3, 1}));
  EMBER_EXPECT_THROW_MSG(a.reshape({4, -1}), ShapeError, "[reshape] cannot reshape [2, 3]");
  EMBER_EXPECT_THROW_MSG(a.reshape({-1, -1}), ShapeError, "more than one -1");
  EMBER_EXPECT_THROW_MSG((Tensor<Cpu, 2>::from_floats({{1, 2}, {3}})), ShapeError, "ragged");
}

TEST(TensorFront, CreationAndCasts) {
  auto z = Tensor<Cpu, 2>::zeros({2, 2});
  EXPECT_EQ(z.to_vec<float>(), (std::vector<float>(4, 0.0f)));
  auto f = Tensor<Cpu, 1>::full({3}, 2.5, {}, DType::F64);
  EXPECT_EQ(f.dtype(), DType::F64);
  EXPECT_EQ(f.to_vec<double>(), (std::vector<double>{2.5, 2.5, 2.5}));
  auto i = Tensor<Cpu, 1>::from_floats({-1.7, 2.9}).int_();
  EXPECT_EQ(i.to_vec<std::int64_t>(), (std::vector<std::int64_t>{-1, 2}));
  auto h = Tensor<Cpu, 1>::from_floats({0.1, 1000.7}).cast(DType::F16);
  EXPECT_EQ(h.dtype(), DType::F16);
  EXPECT_FLOAT_EQ(h.to_vec<float>()[1], 1000.5f);
  auto r = Tensor<Cpu, 1, Int>::arange_step(5, -3, -3);
  EXPECT_EQ(r.to_vec<std::int64_t>(), (std::vector<std::int64_t>{5, 2, -1}));
  EXPECT_DOUBLE_EQ((Tensor<Cpu, 1>::from_floats({4.25}).into_scalar()), 4.25);
  EMBER_EXPECT_THROW_MSG((Tensor<Cpu, 1>::zeros({2}).into_scalar()), ShapeError, "[into_scalar]");
  EMBER_EXPECT_THROW_MSG((Tensor<Cpu, 2>::zeros({2})), ShapeError,
                         "[full] shape [2] has rank 1, expected rank 2");
  EMBER_EXPECT_THROW_MSG((Tensor<Cpu, 1>::zeros({2}, {}, DType::I32)), DTypeError,
                         "not a Float dtype");
  auto bl = Tensor<Cpu, 1>::from_floats({0.0, -0.5, 3.0}).bool_();
  EXPECT_EQ(bl.to_vec<std::uint8_t>(), (std::vector<std::uint8_t>{0, 1, 1}));
}

TEST(TensorFront, RandomIsSeededAndInRange) {
  Cpu::seed(7);
  auto a = Tensor<Cpu, 1>::random({1000}, Distribution::uniform(-2, 3));
  Cpu::seed(7);
  auto b = Tensor<Cpu, 1>::random({1000}, Distribution::uniform(-2, 3));
  EXPECT_EQ(a.to_vec<float>(), b.to_vec<float>());
  double mean = 0;
  for (float v : a.to_vec<float>()) {
    EXPECT_GE(v, -2.0f);
    EXPECT_LT(v, 3.0f);
    mean += v / 1000.0;
  }
  EXPECT_NEAR(mean, 0.5, 0.15);  // E = 0.5, sd of the mean = 1.44/sqrt(1000) = 0.046
  auto n = Tensor<Cpu, 1>::random({20000}, Distribution::normal(1.0, 2.0)).to_vec<double>();
  double m = 0, v2 = 0;
  for (double x : n) m += x / n.size();
  for (double x : n) v2 += (x - m) * (x - m) / n.size();
  EXPECT_NEAR(m, 1.0, 0.06);  // sd of the mean = 2/sqrt(20000) = 0.014
  EXPECT_NEAR(v2, 4.0, 0.2);
  EMBER_EXPECT_THROW_MSG((Tensor<Cpu, 1>::random({2}, Distribution::normal(0, -1))), ValueError,
                         "std >= 0");
}

TEST(TensorFront, PrintingShowsShapeDtypeDevice) {
  std::ostringstream os;
  os << Tensor<Cpu, 2>::from_floats({{1, 2}, {3, 4}});
  EXPECT_EQ(os.str(),
            "Tensor { shape: [2, 2], dtype: f32, device: cpu, values: [[1, 2], [3, 4]] }");
  std::ostringstream big;
  big << Tensor<Cpu, 1>::zeros({5000});
  EXPECT_NE(big.str().find("[0, 0, 0, ..., 0, 0, 0]"), std::string::npos) << big.str();
}
