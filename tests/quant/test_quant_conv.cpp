// The statically quantized conv2d (quantized_conv2d, ir::QuantizedConv2d): exact integer sums
// against a hand loop in both CPU paths (oneDNN's int8 convolution and the direct loop), the
// kernel against the composite, the calibrated nn::Conv2d on the integers, and the errors.
#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>

#include "ember/cpu/cpu.hpp"
#include "ember/quant/quantize.hpp"
#include "fixtures.hpp"
#include "no_quant_kernels.hpp"

using namespace ember;

namespace {

struct Case {
  std::int64_t n, c, h, w, o, kh, kw;
  ConvOptions<2> opt;
};

/// Random int8 weights and a per-channel QTensor of them with unit scales.
QTensor<Cpu, 2> unit_weights(std::int64_t out, std::int64_t taps, std::vector<std::int8_t>& w) {
  w.resize(static_cast<std::size_t>(out * taps));
  const auto r = Tensor<Cpu, 2>::random({out, taps}, Distribution::uniform(-128.0, 128.0))
                     .floor()
                     .clamp(-128.0, 127.0)
                     .to_vec<float>();
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<std::int8_t>(r[i]);
  return QTensor<Cpu, 2>(QuantScheme::int8().per_channel(0), Shape{out, taps},
                         Tensor<Cpu, 2, Int>::from_data(TensorData(w, Shape{out, taps})),
                         Tensor<Cpu, 2>::ones({out, 1}), std::nullopt);
}

/// With unit scales the output is the exact integer sum: checks it against a loop in i64.
void check_exact(const Case& k) {
  SCOPED_TRACE(testing::Message() << "x [" << k.n << ", " << k.c << ", " << k.h << ", " << k.w
                                  << "] o " << k.o << " k " << k.kh << "x" << k.kw << " groups "
                                  << k.opt.groups);
  const std::int64_t cg = k.c / k.opt.groups, og = k.o / k.opt.groups, taps = cg * k.kh * k.kw;
  std::vector<std::int8_t> w;
  const auto qw = unit_weights(k.o, taps, w);
  const ActivationQuant a{1.0f, 37};
  // Integer inputs in [-37, 218]: quantized exactly (q = x + 37), a few beyond clamp.
  const auto x =
      Tensor<Cpu, 4>::random({k.n, k.c, k.h, k.w}, Distribution::uniform(-40.0, 221.0)).floor();
  const auto xv = x.to_vec<float>();
  const auto bias = Tensor<Cpu, 1>::random({k.o}, Distribution::normal(0, 1));
  const auto bv = bias.to_vec<float>();
  const Shape ws{k.o, cg, k.kh, k.kw};
  for (const bool direct : {false, true}) {
    SCOPED_TRACE(direct ? "direct loop" : "oneDNN (when built with it)");
    if (direct) setenv("EMBER_QUANT_CONV_DIRECT", "1", 1);
    const auto y = quantized_conv2d(x, qw, ws, bias, k.opt, a);
    unsetenv("EMBER_QUANT_CONV_DIRECT");
    const Shape ys = y.shape();
    ASSERT_EQ(ys, module::conv2d(x, Tensor<Cpu, 4>::zeros(ws), std::nullopt, k.opt).shape());
    const auto got = y.to_vec<float>();
    const auto [sh, sw] = k.opt.stride;
    const auto [ph, pw] = k.opt.padding;
    const auto [dh, dw] = k.opt.dilation;
    std::int64_t bad = 0;
    for (std::int64_t n = 0; n < k.n; ++n)
      for (std::int64_t o = 0; o < k.o; ++o)
        for (std::int64_t i = 0; i < ys[2]; ++i)
          for (std::int64_t j = 0; j < ys[3]; ++j) {
            std::int64_t acc = 0;
            const std::int64_t g = o / og;
            for (std::int64_t c = 0; c < cg; ++c)
              for (std::int64_t u = 0; u < k.kh; ++u)
                for (std::int64_t v = 0; v < k.kw; ++v) {
                  const std::int64_t r = i * sh - ph + u * dh, s = j * sw - pw + v * dw;
                  if (r < 0 || r >= k.h || s < 0 || s >= k.w) continue;  // padding: 0.0
                  const float xf =
                      xv[static_cast<std::size_t>(((n * k.c + g * cg + c) * k.h + r) * k.w + s)];
                  const std::int64_t q = std::min<std::int64_t>(
                      std::max<std::int64_t>(static_cast<std::int64_t>(xf) + 37, 0), 255);
                  acc +=
                      (q - 37) * w[static_cast<std::size_t>(o * taps + (c * k.kh + u) * k.kw + v)];
                }
            const float want = static_cast<float>(acc) * 1.0f + bv[static_cast<std::size_t>(o)];
            const float have =
                got[static_cast<std::size_t>(((n * k.o + o) * ys[2] + i) * ys[3] + j)];
            if (have != want && bad++ < 5)
              ADD_FAILURE() << "y[" << n << ", " << o << ", " << i << ", " << j << "] = " << have
                            << ", expected " << want;
          }
    EXPECT_EQ(bad, 0);
  }
}

}  // namespace

TEST(QuantizedConv2d, ExactIntegerSums) {
  check_exact({2, 3, 9, 9, 8, 3, 3, {}});
  check_exact({2, 4, 8, 7, 6, 3, 3, {.stride = {2, 1}, .padding = {1, 1}}});
  check_exact({1, 6, 10, 10, 4, 3, 2, {.padding = {2, 1}, .dilation = {2, 1}, .groups = 2}});
  check_exact({3, 8, 5, 5, 16, 1, 1, {}});
  // Channels enough for oneDNN's AMX / VNNI kernels.
  check_exact({4, 32, 14, 14, 64, 3, 3, {.padding = {1, 1}}});
  check_exact({2, 1, 28, 28, 32, 3, 3, {.padding = {1, 1}}});
}

TEST(QuantizedConv2d, KernelAgainstComposite) {
  // Random scales: the kernel's exact sums and the composite's f32 conv of the same values.
  const auto x = Tensor<Cpu, 4>::random({2, 8, 11, 11}, Distribution::normal(0.3, 1.5));
  const auto w = Tensor<Cpu, 4>::random({12, 4, 3, 3}, Distribution::normal(0, 0.2));
  const auto b = Tensor<Cpu, 1>::random({12}, Distribution::normal(0, 1));
  const ConvOptions<2> opt{.stride = {1, 2}, .padding = {1, 0}, .groups = 2};
  const auto a = ActivationQuant::from_range(-3.5f, 4.0f);
  for (const QuantScheme& s : {QuantScheme::int8().per_channel(0), QuantScheme::int8()}) {
    SCOPED_TRACE(s.to_string());
    const auto q = w.reshape<2>({12, 36}).quantize(s);
    const auto want = quantized_conv2d(x, q, w.shape(), b, opt, a);
    using NQ = test::NoQuantKernels;
    const QTensor<NQ, 2> qn(s, q.shape(), Tensor<NQ, 2, Int>::from_data(q.values().into_data()),
                            Tensor<NQ, 2>::from_data(q.scales().into_data()), std::nullopt);
    const auto got = quantized_conv2d(Tensor<NQ, 4>::from_data(x.into_data()), qn, w.shape(),
                                      Tensor<NQ, 1>::from_data(b.into_data()), opt, a);
    test::expect_approx(got.into_data(), want.into_data(), Tolerance::rel_abs(1e-5, 1e-5));
    // And the composite is the f32 conv of the fake-quantized input and dequantized weight.
    const auto fq =
        module::conv2d(fake_quantize(x, a), q.dequantize().reshape<4>(w.shape()), b, opt);
    test::expect_approx(want.into_data(), fq.into_data(), Tolerance::rel_abs(1e-5, 1e-5));
  }
}

namespace {
struct ConvNet {
  nn::Conv2d<Cpu> conv;
  EMBER_MODULE(conv)
};
}  // namespace

TEST(QuantizedConv2d, CalibratedLayerRunsOnTheIntegers) {
  Cpu::seed(11);
  using Net = ConvNet;
  const Net net{nn::Conv2dConfig{
      .channels = {4, 8}, .kernel_size = {2, 2}, .padding = nn::PaddingConfig2d::same()}
                    .init<Cpu>()};
  const auto x = Tensor<Cpu, 4>::random({3, 4, 7, 7}, Distribution::normal(0, 1));
  const Net q =
      quant::quantize(net, {.activations = true}, [&](const Net& m) { (void)m.conv.forward(x); });
  ASSERT_TRUE(q.conv.input_quant.has_value());
  EXPECT_TRUE(q.conv.integer_weights());
  // "same" padding of a 2x2 kernel is asymmetric: the layer pads x (zeros stay zeros) and
  // runs the integer convolution.
  const auto y = q.conv.forward(x);
  const auto xp = x.pad({0, 1, 0, 1});
  const auto want = quantized_conv2d(xp, q.conv.qweight->qtensor(), q.conv.qweight->shape,
                                     q.conv.bias->val(), {}, *q.conv.input_quant);
  test::expect_eq(y.into_data(), want.into_data());
  const double scale = net.conv.forward(x).abs().max().into_scalar();
  EXPECT_LT((y - net.conv.forward(x)).abs().max().into_scalar(), 0.05 * scale);
  // Weights-only (no input parameters): dequantized weights in float, as before.
  const Net wq = quant::quantize(net, {});
  const auto yw = wq.conv.forward(x);
  EXPECT_EQ(yw.shape(), y.shape());
}

TEST(QuantizedConv2d, Errors) {
  const auto x = Tensor<Cpu, 4>::ones({1, 2, 5, 5});
  const auto w = Tensor<Cpu, 2>::ones({3, 18});
  const Shape ws{3, 2, 3, 3};
  const ActivationQuant a{0.1f, 10};
  EMBER_EXPECT_THROW_MSG(
      quantized_conv2d(x, w.quantize(QuantScheme::int8().affine()), ws, std::nullopt, {}, a),
      UnsupportedError, "[quantized_conv2d] weights must be int8 symmetric");
  const auto q = w.quantize(QuantScheme::int8().per_channel(0));
  EMBER_EXPECT_THROW_MSG(quantized_conv2d(x, q, ws, std::nullopt, {}, ActivationQuant{0, 3}),
                         ValueError, "the input scale is 0");
  // A denormal scale (1 / scale overflows), one below what calibration gives, one too large.
  for (const float bad : {1e-40f, 1e-30f, 1e38f}) {
    EMBER_EXPECT_THROW_MSG(quantized_conv2d(x, q, ws, std::nullopt, {}, ActivationQuant{bad, 3}),
                           ValueError, "at least f32 epsilon");
  }
  EMBER_EXPECT_THROW_MSG(
      quantized_conv2d(Tensor<Cpu, 4>::ones({1, 3, 5, 5}), q, ws, std::nullopt, {}, a), ShapeError,
      "channels");
  EMBER_EXPECT_THROW_MSG(quantized_conv2d(x, q, Shape{3, 2, 3, 2}, std::nullopt, {}, a), ShapeError,
                         "weight values [3, 18] i8 do not fit weight [3, 2, 3, 2]");
  EMBER_EXPECT_THROW_MSG(quantized_conv2d(x, q, ws, Tensor<Cpu, 1>::ones({2}), {}, a), ShapeError,
                         "bias");
  EMBER_EXPECT_THROW_MSG(
      quantized_conv2d(Tensor<Cpu, 4>::ones({1, 2, 2, 2}), q, ws, std::nullopt, {}, a), ShapeError,
      "");
}
