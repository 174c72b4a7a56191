// The int8 linear (QuantizedLinear): against exact integer sums of the quantized operands and
// the float computation on the dequantized values, in the VNNI and portable kernels
// (EMBER_CPU_ISA=base runs the portable one), and its errors.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "ember/cpu/cpu.hpp"
#include "ember/tensor/module/nn.hpp"
#include "ember/tensor/tensor.hpp"
#include "fixtures.hpp"

using namespace ember;

namespace {

/// y[m, o] by the documented rule with the integers of Ember's own quantize: the rows of x
/// under int8 affine per row (the kernel's u8 values minus 128, same scale), or all of x
/// with the static `input` parameters (zero point minus 128), the weight's values and
/// scales. Returns (exact-sum result, float result on dequantized values).
std::pair<std::vector<double>, std::vector<double>> reference(
    const Tensor<Cpu, 2>& x, const QTensor<Cpu, 2>& w, const std::optional<Tensor<Cpu, 1>>& b,
    const std::optional<ActivationQuant>& input = std::nullopt) {
  const auto qx =
      input ? quantize(x, QuantScheme::int8().affine(), Tensor<Cpu, 2>::full({1, 1}, input->scale),
                       Tensor<Cpu, 2, Int>::full({1, 1}, input->zero_point - 128, {}, DType::I32))
            : x.quantize(QuantScheme::int8().affine().per_channel(0));
  const auto xv = qx.values().to_vec<std::int64_t>();
  const auto xs = qx.scales().to_vec<float>();
  const auto xz = qx.zero_points()->to_vec<std::int64_t>();
  const auto xdq = qx.dequantize().to_vec<double>();
  const auto wv = w.values().to_vec<std::int64_t>();
  const auto ws = w.scales().to_vec<float>();
  const auto wdq = w.dequantize().to_vec<double>();
  const std::int64_t m = x.dims()[0], in = x.dims()[1], out = w.shape()[0];
  const std::vector<float> bv = b ? b->to_vec<float>() : std::vector<float>(out, 0.0f);
  std::vector<double> exact(m * out), fl(m * out);
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t o = 0; o < out; ++o) {
      std::int64_t acc = 0;
      double f = 0;
      for (std::int64_t k = 0; k < in; ++k) {
        acc += (xv[i * in + k] - xz[xz.size() == 1 ? 0 : i]) * wv[o * in + k];
        f += xdq[i * in + k] * wdq[o * in + k];
      }
      const float sw = ws[ws.size() == 1 ? 0 : o];
      const float sx = xs[xs.size() == 1 ? 0 : i];
      exact[i * out + o] = static_cast<double>(static_cast<float>(acc) * (sx * sw) + bv[o]);
      fl[i * out + o] = f + bv[o];
    }
  }
  return {exact, fl};
}

void check_linear(std::int64_t m, std::int64_t in, std::int64_t out, bool bias,
                  const QuantScheme& scheme = QuantScheme::int8().per_channel(0),
                  const std::optional<ActivationQuant>& input = std::nullopt) {
  SCOPED_TRACE(testing::Message() << "m=" << m << " in=" << in << " out=" << out
                                  << (input ? " static" : " dynamic"));
  auto x = Tensor<Cpu, 2>::random({m, in}, Distribution::normal(0.3, 2.0));
  auto w = Tensor<Cpu, 2>::random({out, in}, Distribution::uniform(-0.5, 0.5));
  std::optional<Tensor<Cpu, 1>> b;
  if (bias) b = Tensor<Cpu, 1>::random({out}, Distribution::normal(0, 1));
  const auto lin = QuantizedLinear<Cpu>::from_float(w, b, scheme, input);
  const auto y = lin.forward(x);
  ASSERT_EQ(y.shape(), (Shape{m, out}));
  const auto got = y.to_vec<double>();
  const auto [exact, fl] = reference(x, lin.weight(), b, input);
  double max_exact = 0, max_float = 0, max_quant = 0, ymax = 0;
  const auto yf = (b ? module::linear(x, w, *b) : module::linear(x, w)).to_vec<double>();
  for (std::size_t i = 0; i < got.size(); ++i) {
    max_exact = std::max(max_exact, std::abs(got[i] - exact[i]) / (1 + std::abs(exact[i])));
    max_float = std::max(max_float, std::abs(got[i] - fl[i]) / (1 + std::abs(fl[i])));
    max_quant = std::max(max_quant, std::abs(got[i] - yf[i]));
    ymax = std::max(ymax, std::abs(yf[i]));
  }
  EXPECT_LT(max_exact, 1e-6) << "against the exact integer sums";
  EXPECT_LT(max_float, 1e-5) << "against the float product of the dequantized values";
  // With static parameters the error depends on how many inputs clamp: checked on whole
  // layers in test_quantize_module.cpp.
  if (!input) {
    EXPECT_LT(max_quant, 0.02 * ymax + 1e-3) << "against the f32 linear (quantization error)";
  }
}

/// Static input parameters for N(0.3, 2) inputs: the range [-7.7, 8.3], so some clamp.
ActivationQuant static_input() {
  return ActivationQuant::from_range(-7.7f, 8.3f);
}

}  // namespace

TEST(QuantizedLinear, SmallOddShapes) {
  check_linear(5, 37, 70, true);
}
TEST(QuantizedLinear, OneRowOneColumn) {
  check_linear(1, 1, 1, true);
}
TEST(QuantizedLinear, ManyRowsAndPanels) {
  check_linear(130, 64, 200, true);
}
TEST(QuantizedLinear, NoBiasPerTensorWeights) {
  check_linear(64, 256, 128, false, QuantScheme::int8());
}
TEST(QuantizedLinear, LargerThreaded) {
  check_linear(64, 1024, 512, true);
}

TEST(QuantizedLinear, StaticInputParameters) {
  // The rows quantized with fixed parameters, in the VNNI / AMX (32 rows and more) kernels.
  check_linear(5, 37, 70, true, QuantScheme::int8().per_channel(0), static_input());
  check_linear(1, 1, 1, false, QuantScheme::int8().per_channel(0), static_input());
  check_linear(130, 64, 200, true, QuantScheme::int8().per_channel(0), static_input());
  check_linear(64, 300, 128, false, QuantScheme::int8(), static_input());
  check_linear(40, 1024, 96, true, QuantScheme::int8().per_channel(0), ActivationQuant{0.05f, 128});
}

TEST(QuantizedLinear, StaticInputClampsAndMatchesFakeQuantize) {
  // With static parameters the kernel computes on fake_quantize(x): values beyond the range
  // clamp to its ends.
  // The identity as int8 100 with scale 0.01.
  const auto values = Tensor<Cpu, 2, Int>::from_data(
      TensorData(std::vector<std::int8_t>{100, 0, 0, 0, 100, 0, 0, 0, 100}, Shape{3, 3}));
  const QTensor<Cpu, 2> w(QuantScheme::int8(), Shape{3, 3}, values,
                          Tensor<Cpu, 2>::full({1, 1}, 0.01), std::nullopt);
  const ActivationQuant a{0.5f, 10};  // u8 [0, 255] covers [-5, 122.5] in steps of 0.5
  const QuantizedLinear<Cpu> lin(w, std::nullopt, a);
  ASSERT_TRUE(lin.input().has_value());
  EXPECT_EQ(*lin.input(), a);
  const auto x = Tensor<Cpu, 2>::from_data(
      TensorData(std::vector<float>{-9.0f, 0.26f, 130.0f, 1.25f, 0.75f, -0.24f}, Shape{2, 3}));
  // The identity weight returns the fake-quantized input: -9 and 130 clamped to -5 and
  // 122.5, 0.26 -> 0.5, 1.25 -> 1.0 (half to even: 2.5 -> 2), 0.75 -> 1.0, -0.24 -> 0.
  const std::vector<float> want{-5.0f, 0.5f, 122.5f, 1.0f, 1.0f, 0.0f};
  EXPECT_EQ(fake_quantize(x, a).to_vec<float>(), want);
  const auto got = lin.forward(x).to_vec<float>();
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-4f) << i;
}

TEST(QuantizedLinear, BatchDimsAndStridedInput) {
  auto w = Tensor<Cpu, 2>::random({24, 16}, Distribution::normal(0, 1));
  const auto lin = QuantizedLinear<Cpu>::from_float(w);
  auto x = Tensor<Cpu, 3>::random({2, 3, 16}, Distribution::normal(0, 1));
  const auto y = lin.forward(x);
  EXPECT_EQ(y.shape(), (Shape{2, 3, 24}));
  const auto y2 = lin.forward(x.reshape(std::array<std::int64_t, 2>{6, 16}));
  EXPECT_EQ(y.to_vec<float>(), y2.to_vec<float>());
  // A transposed view gives the result of its contiguous copy.
  auto xt = Tensor<Cpu, 2>::random({16, 5}, Distribution::normal(0, 1)).transpose();
  auto xc = Tensor<Cpu, 2>::from_data(xt.into_data());
  EXPECT_EQ(lin.forward(xt).to_vec<float>(), lin.forward(xc).to_vec<float>());
}

TEST(QuantizedLinear, Errors) {
  auto w = Tensor<Cpu, 2>::ones({4, 8});
  EMBER_EXPECT_THROW_MSG(
      QuantizedLinear<Cpu>::from_float(w, std::nullopt, QuantScheme::int8().affine()),
      UnsupportedError,
      "[quantized_linear] weights must be int8 symmetric, per tensor or per "
      "channel along axis 0, got int8 affine per-tensor f32");
  EMBER_EXPECT_THROW_MSG(
      QuantizedLinear<Cpu>::from_float(w, std::nullopt, QuantScheme::int8().per_channel(1)),
      UnsupportedError, "per channel along axis 0");
  EMBER_EXPECT_THROW_MSG(
      QuantizedLinear<Cpu>::from_float(w, std::nullopt, QuantScheme::int4().per_block(4)),
      UnsupportedError, "got int4 symmetric per-block(4) f32");
  EMBER_EXPECT_THROW_MSG(QuantizedLinear<Cpu>::from_float(w, Tensor<Cpu, 1>::ones({3})), ShapeError,
                         "bias [3] f32 does not match weight of shape [4, 8]");
  EMBER_EXPECT_THROW_MSG(QuantizedLinear<Cpu>::from_float(Tensor<Cpu, 2>::ones({1, 65537})),
                         UnsupportedError, "at most 65536 inputs (exact i32 sums)");
  const auto lin = QuantizedLinear<Cpu>::from_float(w);
  EMBER_EXPECT_THROW_MSG(lin.forward(Tensor<Cpu, 2>::ones({2, 7})), ShapeError,
                         "[quantized_linear] input of shape [2, 7] does not match weight of "
                         "shape [4, 8]");
  EMBER_EXPECT_THROW_MSG(lin.forward(Tensor<Cpu, 2>::ones({2, 8}, {}, DType::F64)), DTypeError,
                         "input must be f32, got f64");
  // Bad static parameters.
  EMBER_EXPECT_THROW_MSG(
      QuantizedLinear<Cpu>::from_float(w, std::nullopt, QuantScheme::int8(), ActivationQuant{0, 3}),
      ValueError, "[quantized_linear] the input scale is 0; it must be finite and > 0");
  EMBER_EXPECT_THROW_MSG(QuantizedLinear<Cpu>::from_float(w, std::nullopt, QuantScheme::int8(),
                                                          ActivationQuant{0.1f, 256}),
                         ValueError, "the input zero point is 256; it must be in [0, 255] (u8)");
  EMBER_EXPECT_THROW_MSG(
      fake_quantize(Tensor<Cpu, 2>::ones({2, 2}), ActivationQuant{std::nanf(""), 0}), ValueError,
      "[fake_quantize] the input scale is nan");
}
