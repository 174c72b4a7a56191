// The int8 linear (QuantizedLinear, static and dynamic input) and the statically quantized
// nn::Conv2d against PyTorch (tests/fixtures/gen_quant_ops.py -> quant_ops.json), on the CPU
// kernels (Cpu, under Checking, through Dispatch) and on the front end's composites (a
// backend without the quantization kernels, Autodiff<Cpu>).
//
// Tolerance of the float outputs: |got - y| <= 1e-5 * max(1, |y|) elementwise. PyTorch's y is
// the f64 product of the dequantized operands rounded once to f32. Ember sums the integers
// exactly and rounds in its f32 epilogue, f32(acc) * (x_scale * weight_scale) + bias (the
// generator checks this within 1e-6 of y), and the quantized conv runs an f32 conv on the
// same dequantized values (within 5e-7 of y on these cases). 1e-5 leaves room for another
// summation order while staying far below one quantization step (about 1e-2 here).
// Integers, scales, zero points and fake-quantized inputs are compared exactly: both sides
// compute them in f32 with the same rule.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "checking_backend.hpp"
#include "ember/autodiff/autodiff.hpp"
#include "ember/cpu/cpu.hpp"
#include "ember/dispatch/dispatch.hpp"
#include "ember/nn/conv.hpp"
#include "ember/quant/quantize.hpp"
#include "ember/tensor/tensor.hpp"
#include "fixtures.hpp"
#include "no_quant_kernels.hpp"

using namespace ember;
using test::FixtureCase;

namespace {

using test::NoQuantKernels;

/// The fixture tolerance (see the file comment).
constexpr double kTolerance = 1e-5;

/// Each element of `got` within kTolerance * max(1, |want|) of `want`; lists the first few
/// that are not.
void expect_close(const TensorData& got, const TensorData& want) {
  ASSERT_EQ(got.shape(), want.shape());
  const auto a = got.to_vec<double>(), b = want.to_vec<double>();
  std::ostringstream os;
  os.precision(9);
  int bad = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (!(std::abs(a[i] - b[i]) <= kTolerance * std::max(1.0, std::abs(b[i])))) {
      if (bad++ < 8) os << "\n  index " << i << ": " << a[i] << " vs " << b[i];
    }
  }
  EXPECT_EQ(bad, 0) << bad << " of " << a.size() << " values beyond " << kTolerance
                    << " * max(1, |y|):" << os.str();
}

/// The values of `d` as i64 plus `delta` (int8 with zero point z - 128 to u8 with zero point z).
std::vector<std::int64_t> shifted(const TensorData& d, std::int64_t delta) {
  auto v = d.to_vec<std::int64_t>();
  for (auto& x : v) x += delta;
  return v;
}

/// The input's static parameters of a case.
ActivationQuant input_params(const FixtureCase& c) {
  return ActivationQuant{c.param<float>("x_scale"), c.param<std::int32_t>("x_zero_point")};
}

/// Checks shared by the static cases: torch's MinMaxObserver(quint8) parameters are the
/// rule of ActivationQuant::from_range on the range it saw, Ember's u8 values of x are
/// torch's (as int8 with the zero point minus 128), and fake_quantize(x) is torch's
/// dequantized quint8 input, all exactly.
template <class B, std::size_t D>
void check_static_input(const FixtureCase& c, const Tensor<B, D>& x,
                        const typename B::Device& device) {
  const ActivationQuant a = input_params(c);
  EXPECT_EQ(ActivationQuant::from_range(c.param<float>("calib_min"), c.param<float>("calib_max")),
            a);
  Shape ones;
  for (std::size_t i = 0; i < D; ++i) ones.dims.push_back(1);
  const QTensor<B, D> q =
      ember::quantize(x, QuantScheme::int8().affine(), Tensor<B, D>::full(ones, a.scale, device),
                      Tensor<B, D, Int>::full(ones, a.zero_point - 128, device, DType::I32));
  EXPECT_EQ(shifted(q.values().into_data(), 128), c.tensor("x_q").to_vec<std::int64_t>());
  test::expect_eq(fake_quantize(x, a).into_data(), c.tensor("x_dq"));
}

/// The fixture's integer sums through QuantizedLinear<B>, exactly: the fixture's int8 weight
/// with unit scales, no bias, and as input x_q - zero point (floats) with the parameters
/// {1, zero point}, which quantize back to x_q; the result is then f32(acc), exact since
/// |acc| < 2^24. Static cases run all rows at once (32 rows and more: the AMX kernel where
/// the CPU has it), dynamic cases one row at a time with the row's zero point.
template <class B>
void expect_integer_sums(const FixtureCase& c, const typename B::Device& device) {
  const QuantScheme scheme = parse_quant_scheme(c.param<std::string>("weight_scheme"));
  const TensorData wq = c.tensor("weight_q");
  const std::int64_t out = wq.shape()[0], in = wq.shape()[1];
  const QTensor<B, 2> w(scheme, wq.shape(), Tensor<B, 2, Int>::from_data(wq, device, DType::I8),
                        Tensor<B, 2>::ones(scheme.params_shape(wq.shape()), device), std::nullopt);
  const TensorData xq_data = c.tensor("x_q");
  const auto xq = xq_data.to_vec<std::int64_t>();
  const auto acc = c.tensor("acc").to_vec<std::int64_t>();
  const std::int64_t m = xq_data.shape()[0];
  const bool fixed = c.has("x_zero_point");
  const std::vector<std::int64_t> zp =
      fixed ? std::vector<std::int64_t>(static_cast<std::size_t>(m),
                                        c.param<std::int64_t>("x_zero_point"))
            : c.tensor("x_zero_points").to_vec<std::int64_t>();
  const std::int64_t rows = fixed ? m : 1;
  for (std::int64_t r0 = 0; r0 < m; r0 += rows) {
    std::vector<float> v;
    std::vector<float> want;
    for (std::int64_t r = r0; r < r0 + rows; ++r) {
      const auto z = zp[static_cast<std::size_t>(r)];
      for (std::int64_t k = 0; k < in; ++k)
        v.push_back(static_cast<float>(xq[static_cast<std::size_t>(r * in + k)] - z));
      for (std::int64_t o = 0; o < out; ++o)
        want.push_back(static_cast<float>(acc[static_cast<std::size_t>(r * out + o)]));
    }
    const auto z0 = static_cast<std::int32_t>(zp[static_cast<std::size_t>(r0)]);
    const QuantizedLinear<B> lin(w, std::nullopt, ActivationQuant{1.0f, z0});
    const auto x = Tensor<B, 2>::from_data(TensorData(std::move(v), Shape{rows, in}), device);
    EXPECT_EQ(lin.forward(x).template to_vec<float>(), want) << "rows from " << r0;
  }
}

/// linear_static_* and linear_dynamic_*: the layer from the fixture's integers and scales and
/// from the float weight (Ember's observer), against y; the weight's integers; the integer
/// sums; the input's parameters and integers.
template <class B>
void run_linear(const FixtureCase& c, const typename B::Device& device, bool fixed_input) {
  const auto x = Tensor<B, 2>::from_data(c.tensor("x"), device);
  const auto weight = Tensor<B, 2>::from_data(c.tensor("weight"), device);
  std::optional<Tensor<B, 1>> bias;
  if (c.has("bias")) bias = Tensor<B, 1>::from_data(c.tensor("bias"), device);
  const QuantScheme scheme = parse_quant_scheme(c.param<std::string>("weight_scheme"));
  const TensorData want_scales = c.tensor("weight_scales");
  const auto scales = Tensor<B, 2>::from_data(want_scales, device);
  std::optional<ActivationQuant> input;
  if (fixed_input) input = input_params(c);

  // The weight's int8 values: Ember's quantize with torch's scales gives torch's.
  const QTensor<B, 2> wq = ember::quantize(weight, scheme, scales);
  test::expect_eq(wq.values().into_data().convert(DType::I64), c.tensor("weight_q"));

  // The layer from the fixture's integers and scales.
  const QTensor<B, 2> w(scheme, weight.shape(),
                        Tensor<B, 2, Int>::from_data(c.tensor("weight_q"), device, DType::I8),
                        scales, std::nullopt);
  const QuantizedLinear<B> lin(w, bias, input);
  expect_close(lin.forward(x).into_data(), c.tensor("y"));

  // The layer from the float weight: Ember's observer gives torch's scales, so the same y.
  const auto calibrated = QuantizedLinear<B>::from_float(weight, bias, scheme, input);
  test::expect_eq(calibrated.weight().scales().into_data(), want_scales);
  expect_close(calibrated.forward(x).into_data(), c.tensor("y"));

  expect_integer_sums<B>(c, device);

  if (fixed_input) {
    check_static_input(c, x, device);
  } else {
    // The per-row rule of QuantizedLinear (quant_composite.hpp, the CPU kernel) is Ember's
    // int8 affine per-row quantize shifted by 128: torch's PerChannelMinMaxObserver(quint8)
    // scales exactly, zero points and values minus 128.
    const QTensor<B, 2> qx = x.quantize(QuantScheme::int8().affine().per_channel(0));
    test::expect_eq(qx.scales().into_data(), c.tensor("x_scales"));
    ASSERT_TRUE(qx.zero_points().has_value());
    EXPECT_EQ(shifted(qx.zero_points()->into_data(), 128),
              c.tensor("x_zero_points").to_vec<std::int64_t>());
    EXPECT_EQ(shifted(qx.values().into_data(), 128), c.tensor("x_q").to_vec<std::int64_t>());
  }
}

/// One Conv2d, so that quant::quantize sees it at the path "conv".
template <class B>
struct OneConv {
  nn::Conv2d<B> conv;
  EMBER_MODULE(conv)
};

/// conv2d_static_*: an nn::Conv2d with the fixture's weight, bias and options, quantized by
/// quant::quantize (int8 symmetric per output channel), its input_quant the fixture's.
template <class B>
void run_conv(const FixtureCase& c, const typename B::Device& device) {
  const TensorData wd = c.tensor("weight");
  const Shape ws = wd.shape();
  const auto stride = c.param<std::array<std::int64_t, 2>>("stride");
  const auto padding = c.param<std::array<std::int64_t, 2>>("padding");
  const auto dilation = c.param<std::array<std::int64_t, 2>>("dilation");
  const auto groups = c.param<std::int64_t>("groups");
  const nn::Conv2dConfig config{.channels = {ws[1] * groups, ws[0]},
                                .kernel_size = {ws[2], ws[3]},
                                .stride = stride,
                                .dilation = dilation,
                                .groups = groups,
                                .padding = nn::PaddingConfig2d::explicit_(padding[0], padding[1]),
                                .bias = c.has("bias")};
  OneConv<B> net{config.init<B>(device)};
  net.conv.weight.set(Tensor<B, 4>::from_data(wd, device));
  if (c.has("bias")) net.conv.bias->set(Tensor<B, 1>::from_data(c.tensor("bias"), device));

  quant::QuantizeReport report;
  OneConv<B> q = quant::quantize(
      net, quant::QuantizeConfig{.weights = QuantScheme::int8().per_channel(0)}, &report);
  EXPECT_EQ(report.quantized, (std::vector<std::string>{"conv"}));
  ASSERT_TRUE(q.conv.qweight.has_value());
  EXPECT_FALSE(q.conv.weight.has_value());
  // The weight as [out, in / groups * kh * kw]: torch's scales and int8 values exactly.
  const auto& qw = *q.conv.qweight;
  EXPECT_EQ(qw.scheme, QuantScheme::int8().per_channel(0));
  EXPECT_EQ(qw.values.val().shape(), (Shape{ws[0], ws.numel() / ws[0]}));
  EXPECT_EQ(qw.values.val().dtype(), DType::I8);
  EXPECT_EQ(qw.values.val().template to_vec<std::int64_t>(),
            c.tensor("weight_q").to_vec<std::int64_t>());
  EXPECT_EQ(qw.scales.val().template to_vec<float>(), c.tensor("weight_scales").to_vec<float>());
  EXPECT_FALSE(qw.zero_points.has_value());

  const auto x = Tensor<B, 4>::from_data(c.tensor("x"), device);
  q.conv.input_quant = input_params(c);
  check_static_input(c, x, device);
  expect_close(q.conv.forward(x).into_data(), c.tensor("y"));
}

template <class B>
void run_case(const FixtureCase& c) {
  const typename B::Device device{};
  if (c.name.starts_with("linear_static_")) {
    run_linear<B>(c, device, true);
  } else if (c.name.starts_with("linear_dynamic_")) {
    run_linear<B>(c, device, false);
  } else if (c.name.starts_with("conv2d_static_")) {
    run_conv<B>(c, device);
  } else {
    ADD_FAILURE() << "a case of quant_ops.json that no test reads: " << c.name;
  }
}

const bool registered = [] {
  const auto reg = []<class B>() {
    test::register_fixture_tests<B>("QuantOpsFixture", "quant_ops", "",
                                    [](const FixtureCase& c) { run_case<B>(c); });
  };
  reg.template operator()<Cpu>();
  reg.template operator()<test::Checking<Cpu>>();
  reg.template operator()<NoQuantKernels>();
  reg.template operator()<Autodiff<Cpu>>();
  reg.template operator()<Dispatch>();
  return true;
}();

}  // namespace

// The fixture holds the shapes the kernels treat apart, so the tests registered above cover
// them: a truncated or regenerated file with other shapes fails here.
TEST(QuantOpsFixture, CasesCoverTheKernelPaths) {
  EXPECT_EQ(test::fixture_cases("quant_ops", "linear_static_").size(), 4u);
  EXPECT_EQ(test::fixture_cases("quant_ops", "linear_dynamic_").size(), 4u);
  EXPECT_EQ(test::fixture_cases("quant_ops", "conv2d_static_").size(), 5u);
  bool rows32 = false, odd_in = false, wide_out = false, per_tensor = false, no_bias = false;
  for (const auto& c : test::fixture_cases("quant_ops", "linear_")) {
    const Shape xs = c.tensor("x").shape(), ws = c.tensor("weight").shape();
    rows32 = rows32 || xs[0] >= 32;
    odd_in = odd_in || xs[1] % 4 != 0;
    wide_out = wide_out || (ws[0] > 64 && ws[0] % 64 != 0);
    per_tensor = per_tensor || c.param<std::string>("weight_scheme") == "int8";
    no_bias = no_bias || !c.has("bias");
  }
  EXPECT_TRUE(rows32 && odd_in && wide_out && per_tensor && no_bias);
  // Static cases whose calibration range is narrower than x: some inputs clamp.
  int clamped_linear = 0, clamped_conv = 0;
  for (const auto& c : test::fixture_cases("quant_ops", "linear_static_"))
    clamped_linear += c.param<std::int64_t>("clamped") > 0;
  for (const auto& c : test::fixture_cases("quant_ops", "conv2d_static_"))
    clamped_conv += c.param<std::int64_t>("clamped") > 0;
  EXPECT_GE(clamped_linear, 1);
  EXPECT_GE(clamped_conv, 1);
}
