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
/// under int8 affine per row (the kernel's u8 values minus 128, same scale), the weight's
/// values and scales. Returns (exact-sum result, float result on dequantized values).
std::pair<std::vector<double>, std::vector<double>> reference(
    const Tensor<Cpu, 2>& x, const QTensor<Cpu, 2>& w, const std::optional<Tensor<Cpu, 1>>& b) {
  const auto qx = x.quantize(QuantScheme::int8().affine().per_channel(0));
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
        acc += (xv[i * in + k] - xz[i]) * wv[o * in + k];
        f += xdq[i * in + k] * wdq[o * in + k];
      }
      const float sw = ws[ws.size() == 1 ? 0 : o];
      exact[i * out + o] = static_cast<double>(static_cast<float>(acc) * (xs[i] * sw) + bv[o]);
      fl[i * out + o] = f + bv[o];
    }
  }
  return {exact, fl};
}

void check_linear(std::int64_t m, std::int64_t in, std::int64_t out, bool bias,
                  const QuantScheme& scheme = QuantScheme::int8().per_channel(0)) {
  SCOPED_TRACE(testing::Message() << "m=" << m << " in=" << in << " out=" << out);
  auto x = Tensor<Cpu, 2>::random({m, in}, Distribution::normal(0.3, 2.0));
  auto w = Tensor<Cpu, 2>::random({out, in}, Distribution::uniform(-0.5, 0.5));
  std::optional<Tensor<Cpu, 1>> b;
  if (bias) b = Tensor<Cpu, 1>::random({out}, Distribution::normal(0, 1));
  const auto lin = QuantizedLinear<Cpu>::from_float(w, b, scheme);
  const auto y = lin.forward(x);
  ASSERT_EQ(y.shape(), (Shape{m, out}));
  const auto got = y.to_vec<double>();
  const auto [exact, fl] = reference(x, lin.weight(), b);
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
  EXPECT_LT(max_quant, 0.02 * ymax + 1e-3) << "against the f32 linear (quantization error)";
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
}
