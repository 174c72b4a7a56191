// Quantization on the CPU backend: schemes, quantize / dequantize against PyTorch fixtures
// (tests/fixtures/gen_quant.py), printing, and the errors of bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <sstream>

#include "ember/cpu/cpu.hpp"
#include "ember/tensor/tensor.hpp"
#include "fixtures.hpp"
#include "quant_fixture.hpp"

using namespace ember;
using test::FixtureCase;

namespace {

const bool registered = [] {
  test::register_fixture_tests<Cpu>("QuantFixture", "quant", "",
                                    [](const FixtureCase& c) { test::run_quant_fixture<Cpu>(c); });
  return true;
}();

}  // namespace

TEST(QuantScheme, NamesAndShapes) {
  const auto s = QuantScheme::int8().per_channel(0);
  EXPECT_EQ(s.to_string(), "int8 symmetric per-channel(axis=0) f32");
  EXPECT_EQ(QuantScheme::int4().affine().per_block(32).with_f16_scales().to_string(),
            "int4 affine per-block(32) f16");
  // Blocks default to f16 scales; -f32 asks for f32.
  EXPECT_EQ(parse_quant_scheme("int4-block32"),
            QuantScheme::int4().per_block(32).with_f16_scales());
  EXPECT_EQ(parse_quant_scheme("int4-block32-f32"), QuantScheme::int4().per_block(32));
  EXPECT_EQ(parse_quant_scheme("int8-f32"), QuantScheme::int8());
  EXPECT_EQ(parse_quant_scheme("int8-per-channel"), QuantScheme::int8().per_channel(0));
  EXPECT_EQ(parse_quant_scheme("int8-affine-per-channel1"),
            QuantScheme::int8().affine().per_channel(1));
  EXPECT_EQ(QuantScheme::int4().per_block(4).params_shape(Shape{3, 12}), (Shape{3, 3}));
  EXPECT_EQ(QuantScheme::int8().per_channel(-1).params_shape(Shape{2, 3, 4}), (Shape{1, 1, 4}));
  EXPECT_EQ(QuantScheme::int4().storage_shape(Shape{2, 7}), (Shape{2, 4}));
  EXPECT_EQ(QuantScheme::int8().storage_shape(Shape{2, 7}), (Shape{2, 7}));
}

TEST(QuantScheme, UnknownNames) {
  EMBER_EXPECT_THROW_MSG(parse_quant_scheme("int3"), ValueError, "unknown scheme 'int3'");
  EMBER_EXPECT_THROW_MSG(parse_quant_scheme("int8-block"), ValueError,
                         "unknown scheme 'int8-block'");
  EMBER_EXPECT_THROW_MSG(parse_quant_scheme("int4-block0"), ValueError, "unknown scheme");
  EMBER_EXPECT_THROW_MSG(parse_quant_scheme("int8-per-channelx"), ValueError, "unknown scheme");
  EMBER_EXPECT_THROW_MSG(parse_quant_scheme("int8-per-channel-1"), ValueError, "unknown scheme");
}

TEST(Quantize, RoundsHalfToEvenAndClamps) {
  // scale 0.5: x / scale = 0.5, 1.5, 2.5, -0.5, -1.5 round to 0, 2, 2, -0, -2.
  auto x = Tensor<Cpu, 1>::from_floats({0.25, 0.75, 1.25, -0.25, -0.75, 1000, -1000});
  auto s = Tensor<Cpu, 1>::from_floats({0.5});
  auto q = quantize(x, QuantScheme::int8(), s);
  EXPECT_EQ(q.values().to_vec<std::int64_t>(),
            (std::vector<std::int64_t>{0, 2, 2, 0, -2, 127, -128}));
  auto q4 = quantize(x, QuantScheme::int4(), s);
  // int4: 0, 2 | 2, 0 | -2, 7 | -8 (low nibble first; -2 = 0xE, -8 = 0x8).
  EXPECT_EQ(q4.values().to_vec<std::int64_t>(),
            (std::vector<std::int64_t>{0x20, 0x02, 0x7E, 0x08}));
  EXPECT_EQ(q4.dequantize().to_vec<float>(), (std::vector<float>{0, 1, 1, 0, -1, 3.5f, -4}));
}

TEST(Quantize, AllZerosAndConstantGroups) {
  // All zeros: the scale is f32 epsilon (PyTorch's observers), values 0, exact round trip.
  auto z = Tensor<Cpu, 2>::zeros({2, 4});
  auto q = z.quantize(QuantScheme::int8().affine().per_channel(0));
  EXPECT_EQ(q.scales().to_vec<float>(),
            (std::vector<float>(2, std::numeric_limits<float>::epsilon())));
  EXPECT_EQ(q.dequantize().to_vec<float>(), std::vector<float>(8, 0.0f));
}

TEST(Quantize, BytesAndPrinting) {
  auto x = Tensor<Cpu, 2>::from_floats({{1, -2, 3, 4}, {0.5, 0.25, -1, 2}});
  auto q = x.quantize(QuantScheme::int4().per_block(2));
  EXPECT_EQ(q.values().shape(), (Shape{2, 2}));
  EXPECT_EQ(q.bytes(), 4 + 4 * 4);
  std::ostringstream os;
  os << q;
  EXPECT_NE(os.str().find("QTensor { shape: [2, 4], scheme: int4 symmetric per-block(2) f32, "
                          "device: cpu, values: "),
            std::string::npos)
      << os.str();
  EXPECT_NE(os.str().find("scales: "), std::string::npos);
  auto q8 = x.quantize(QuantScheme::int8().affine());
  std::ostringstream os8;
  os8 << q8;
  EXPECT_NE(os8.str().find("int8 affine per-tensor f32"), std::string::npos) << os8.str();
  EXPECT_NE(os8.str().find("zero_points: "), std::string::npos) << os8.str();
}

TEST(Quantize, NegativeAxis) {
  auto x = Tensor<Cpu, 3>::random({2, 3, 4}, Distribution::normal(0, 1));
  auto a = x.quantize(QuantScheme::int8().affine().per_channel(-1));
  auto b = x.quantize(QuantScheme::int8().affine().per_channel(2));
  EXPECT_EQ(a.scales().shape(), (Shape{1, 1, 4}));
  EXPECT_EQ(a.values().to_vec<std::int64_t>(), b.values().to_vec<std::int64_t>());
  EXPECT_EQ(a.scales().to_vec<float>(), b.scales().to_vec<float>());
}

TEST(Quantize, NonContiguousAndF64Input) {
  auto x = Tensor<Cpu, 2>::from_floats({{1, 2, 3}, {-4, 5, -6}});
  auto xt = x.transpose();  // [3, 2] view
  auto q = xt.quantize(QuantScheme::int8().per_channel(1));
  auto ref = Tensor<Cpu, 2>::from_floats({{1, -4}, {2, 5}, {3, -6}})
                 .quantize(QuantScheme::int8().per_channel(1));
  EXPECT_EQ(q.values().to_vec<std::int64_t>(), ref.values().to_vec<std::int64_t>());
  auto x64 = Tensor<Cpu, 1>::from_floats({0.1, -0.2, 0.3}, {}, DType::F64);
  auto q64 = x64.quantize(QuantScheme::int8());
  EXPECT_EQ(q64.dequantize(DType::F64).dtype(), DType::F64);
  test::expect_approx(q64.dequantize().into_data(), x64.into_data(),
                      Tolerance::rel_abs(0, 0.3 / 127.5 / 2 + 1e-7));
}

// ---- bad input ----------------------------------------------------------------------------

TEST(QuantErrors, IntAndBoolTensors) {
  auto i = Tensor<Cpu, 2, Int>::from_ints({{1, 2}, {3, 4}});
  EMBER_EXPECT_THROW_MSG(i.quantize(QuantScheme::int8()), DTypeError,
                         "[quantize] only float tensors can be quantized, got a i64 tensor of "
                         "shape [2, 2]");
  EMBER_EXPECT_THROW_MSG(quantize(i, QuantScheme::int8(), Tensor<Cpu, 2>::ones({1, 1})), DTypeError,
                         "only float tensors can be quantized");
  auto b = Tensor<Cpu, 1, Bool>::from_data(TensorData(std::vector<bool>{true, false}, Shape{2}));
  EMBER_EXPECT_THROW_MSG(b.quantize(QuantScheme::int4()), DTypeError, "got a bool tensor");
}

TEST(QuantErrors, BlockSizeAndAxis) {
  auto x = Tensor<Cpu, 2>::ones({2, 10});
  EMBER_EXPECT_THROW_MSG(x.quantize(QuantScheme::int4().per_block(4)), ShapeError,
                         "[quantize] block size 4 does not divide the last dim of shape [2, 10] "
                         "(10 % 4 = 2)");
  EMBER_EXPECT_THROW_MSG(x.quantize(QuantScheme::int8().per_block(0)), ShapeError,
                         "block size must be positive, got 0");
  EMBER_EXPECT_THROW_MSG(x.quantize(QuantScheme::int8().per_channel(2)), ShapeError,
                         "channel axis 2 is out of range for shape [2, 10]");
  EMBER_EXPECT_THROW_MSG(x.quantize(QuantScheme::int8().with_f16_scales()), ValueError,
                         "f16 scales are for the per-block level only");
}

TEST(Quant, EmptyTensors) {
  // No group, or groups of no element: empty parameters, no division by zero.
  for (const auto& [shape, s] : std::vector<std::pair<Shape, QuantScheme>>{
           {Shape{0, 64}, QuantScheme::int8().per_channel(0)},
           {Shape{0, 64}, QuantScheme::int4().per_block(32)},
           {Shape{4, 0}, QuantScheme::int4().per_block(32)},
           {Shape{4, 0}, QuantScheme::int8().per_channel(0)}}) {
    SCOPED_TRACE(s.to_string());
    const auto q = Tensor<Cpu, 2>::zeros(shape).quantize(s);
    EXPECT_EQ(q.scales().shape(), s.params_shape(shape));
    EXPECT_EQ(q.dequantize().shape(), shape);
  }
}

TEST(QuantErrors, ZeroNegativeNaNAndInfiniteScales) {
  auto x = Tensor<Cpu, 2>::ones({2, 3});
  const auto s = QuantScheme::int8().per_channel(0);
  EMBER_EXPECT_THROW_MSG(quantize(x, s, Tensor<Cpu, 2>::from_floats({{0.1}, {0.0}})), ValueError,
                         "[quantize] scale 1 of 2 is 0; scales must be finite, > 0 and at most");
  // So large that (q - zero point) * scale would overflow f32.
  EMBER_EXPECT_THROW_MSG(quantize(x, s, Tensor<Cpu, 2>::from_floats({{0.1}, {1e37}})), ValueError,
                         "(FLT_MAX / 256: the dequantized values must fit f32)");
  EMBER_EXPECT_THROW_MSG(quantize(x, s, Tensor<Cpu, 2>::from_floats({{NAN}, {1}})), ValueError,
                         "scale 0 of 2 is nan");
  EMBER_EXPECT_THROW_MSG(quantize(x, s, Tensor<Cpu, 2>::from_floats({{-1}, {1}})), ValueError,
                         "scale 0 of 2 is -1");
  EMBER_EXPECT_THROW_MSG(quantize(x, s, Tensor<Cpu, 2>::from_floats({{INFINITY}, {1}})), ValueError,
                         "scale 0 of 2 is inf");
  // Scales computed from data holding NaN (calibration gone wrong) are refused too.
  auto bad = Tensor<Cpu, 2>::from_floats({{1, 2, 3}, {1, NAN, 3}});
  EMBER_EXPECT_THROW_MSG(bad.quantize(s), ValueError,
                         "[quantize] group 1 of 2 contains NaN, so its scale would be NaN");
  auto huge = Tensor<Cpu, 2>::from_floats({{1e9, 2, 3, 4}});
  EMBER_EXPECT_THROW_MSG(huge.quantize(QuantScheme::int4().per_block(2).with_f16_scales()),
                         ValueError, "the scale of group 0 of 2 is infinite");
}

TEST(QuantErrors, ParameterShapesAndDTypes) {
  auto x = Tensor<Cpu, 2>::ones({2, 4});
  EMBER_EXPECT_THROW_MSG(
      quantize(x, QuantScheme::int8().per_channel(0), Tensor<Cpu, 2>::ones({1, 4})), ShapeError,
      "[quantize] scales of shape [1, 4] do not fit a tensor of shape [2, 4] "
      "under int8 symmetric per-channel(axis=0) f32 (expected [2, 1])");
  EMBER_EXPECT_THROW_MSG(quantize(x, QuantScheme::int8().affine(), Tensor<Cpu, 2>::ones({1, 1})),
                         ValueError, "an affine scheme needs zero points");
  EMBER_EXPECT_THROW_MSG(quantize(x, QuantScheme::int8(), Tensor<Cpu, 2>::ones({1, 1}),
                                  Tensor<Cpu, 2, Int>::zeros({1, 1})),
                         ValueError, "a symmetric scheme has no zero points");
  EMBER_EXPECT_THROW_MSG(
      quantize(x, QuantScheme::int8().per_block(2).with_f16_scales(), Tensor<Cpu, 2>::ones({2, 2})),
      DTypeError, "scales must be f16");
  EMBER_EXPECT_THROW_MSG(x.quantize(QuantScheme::int8()).dequantize(DType::I32), DTypeError,
                         "[dequantize] the result must be a float dtype, got i32");
}
