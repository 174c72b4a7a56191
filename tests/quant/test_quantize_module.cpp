// Post-training quantization of modules (ember/quant/quantize.hpp): quantized Linear and
// Conv layers against the integer kernel and the dequantized float computation, a whole
// CNN (report, sizes, Dispatch), saving and loading exactly, and bad input.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "ember/cpu/cpu.hpp"
#include "ember/models/classifiers.hpp"
#include "ember/quant/quantize.hpp"
#include "ember/store/safetensors.hpp"
#include "fixtures.hpp"

using namespace ember;

namespace {

std::filesystem::path temp_file(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / "ember_quant_tests";
  std::filesystem::create_directories(dir);
  return dir / name;
}

/// Largest |a - b| over the elements.
double max_diff(const TensorData& a, const TensorData& b) {
  const auto x = a.to_vec<double>(), y = b.to_vec<double>();
  double m = 0;
  for (std::size_t i = 0; i < x.size(); ++i) m = std::max(m, std::abs(x[i] - y[i]));
  return m;
}

struct Net {
  nn::Linear<Cpu> fc1, fc2;
  nn::Conv2d<Cpu> conv;
  EMBER_MODULE(fc1, fc2, conv)
};

struct Small {
  nn::Linear<Cpu> fc1;
  EMBER_MODULE(fc1)
};

Net make_net() {
  return {nn::LinearConfig{.d_input = 64, .d_output = 32}.init<Cpu>(),
          nn::LinearConfig{.d_input = 32, .d_output = 10, .bias = false}.init<Cpu>(),
          nn::Conv2dConfig{.channels = {3, 8}, .kernel_size = {3, 3}}.init<Cpu>()};
}

}  // namespace

TEST(QuantizeModule, Int8LinearRunsTheIntegerKernel) {
  const Net net = make_net();
  quant::QuantizeReport report;
  const Net q = quant::quantize(net, {}, &report);
  EXPECT_EQ(report.quantized, (std::vector<std::string>{"fc1", "fc2", "conv"}));
  EXPECT_TRUE(report.skipped.empty());
  EXPECT_FALSE(q.fc1.weight.has_value());
  ASSERT_TRUE(q.fc1.qweight.has_value());
  EXPECT_EQ(q.fc1.qweight->values->dtype(), DType::I8);
  EXPECT_EQ(q.fc1.qweight->scales->shape(), (Shape{32, 1}));
  EXPECT_TRUE(net.fc1.weight.has_value());  // the original is untouched

  const auto x = Tensor<Cpu, 2>::random({5, 64}, Distribution::normal(0, 1));
  const auto want =
      QuantizedLinear<Cpu>::from_float(net.fc1.weight.val(), net.fc1.bias->val()).forward(x);
  test::expect_eq(q.fc1.forward(x).into_data(), want.into_data());
  // Within int8 quantization error of the float layer.
  EXPECT_LT(max_diff(q.fc1.forward(x).into_data(), net.fc1.forward(x).into_data()), 0.05);
  // Sizes: f32 weights (64*32 + 32*10 + 8*27) * 4 bytes become 1 byte each plus f32 scales.
  EXPECT_EQ(report.bytes_before, (64 * 32 + 32 + 32 * 10 + 8 * 27 + 8) * 4);
  EXPECT_EQ(report.bytes_after,
            64 * 32 + 32 * 4 + 32 * 4 + 32 * 10 + 10 * 4 + 8 * 27 + 8 * 4 + 8 * 4);
}

TEST(QuantizeModule, Int4BlocksAreDequantizedAndConvRowsAreBlocked) {
  const Net net = make_net();
  quant::QuantizeReport report;
  const QuantScheme s = QuantScheme::int4().per_block(16);
  const Net q = quant::quantize(net, {.weights = s}, &report);
  // conv's row is 3 * 3 * 3 = 27 values: 16 does not divide it, so it stays float.
  EXPECT_EQ(report.quantized, (std::vector<std::string>{"fc1", "fc2"}));
  ASSERT_EQ(report.skipped.size(), 1u);
  EXPECT_EQ(report.skipped[0].first, "conv");
  EXPECT_NE(report.skipped[0].second.find("block"), std::string::npos) << report.skipped[0].second;
  EXPECT_TRUE(q.conv.weight.has_value());
  EXPECT_EQ(q.fc1.qweight->values->shape(), (Shape{32, 32}));  // two int4 per byte

  const auto x = Tensor<Cpu, 3>::random({2, 3, 64}, Distribution::normal(0, 1));
  const auto w = net.fc1.weight.val().quantize(s).dequantize();
  test::expect_eq(q.fc1.forward(x).into_data(),
                  module::linear(x, w, net.fc1.bias->val()).into_data());
}

TEST(QuantizeModule, ConvPerChannel) {
  const Net net = make_net();
  const Net q = quant::quantize(net, {.modules = {"conv"}});
  EXPECT_TRUE(q.fc1.weight.has_value());
  ASSERT_TRUE(q.conv.qweight.has_value());
  EXPECT_EQ(q.conv.qweight->shape, (Shape{8, 3, 3, 3}));
  EXPECT_EQ(q.conv.qweight->values->shape(), (Shape{8, 27}));
  EXPECT_EQ(q.conv.channels_in(), 3);
  EXPECT_EQ(q.conv.channels_out(), 8);
  const auto x = Tensor<Cpu, 4>::random({2, 3, 9, 9}, Distribution::normal(0, 1));
  const auto w = net.conv.weight.val()
                     .reshape<2>({8, 27})
                     .quantize(QuantScheme::int8().per_channel(0))
                     .dequantize()
                     .reshape<4>({8, 3, 3, 3});
  const auto want = module::conv2d(x, w, net.conv.bias->val(), ConvOptions<2>{});
  test::expect_eq(q.conv.forward(x).into_data(), want.into_data());
  EXPECT_LT(max_diff(q.conv.forward(x).into_data(), net.conv.forward(x).into_data()), 0.05);
}

TEST(QuantizeModule, SaveAndLoadExactly) {
  const Net net = make_net();
  for (const QuantScheme& s : {QuantScheme::int8().per_channel(0),
                               QuantScheme::int4().affine().per_block(8).with_f16_scales()}) {
    SCOPED_TRACE(s.to_string());
    quant::QuantizeReport report;
    const Net q = quant::quantize(net, {.weights = s}, &report);
    const auto path = temp_file("net.safetensors");
    quant::save(q, path, {{"note", "kept"}});
    const auto schemes = quant::saved_schemes(path);
    // int8: all three layers; int4 blocks of 8: conv's row of 27 stays f32.
    ASSERT_EQ(schemes.size(), s.value == QuantValue::Int8 ? 3u : 2u);
    ASSERT_EQ(schemes.size(), report.quantized.size());
    EXPECT_EQ(schemes.at("fc1"), s);
    const Net back = quant::load(make_net(), path);
    const auto a = nn::state_dict(q), b = nn::state_dict(back);
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i].first, b[i].first);
      test::expect_eq(b[i].second, a[i].second);
    }
    const auto x = Tensor<Cpu, 2>::random({3, 64}, Distribution::normal(0, 1));
    test::expect_eq(back.fc1.forward(x).into_data(), q.fc1.forward(x).into_data());
    // The file holds the integers: fc1's values as I8 (or packed U8).
    const auto file = store::read_safetensors(path);
    EXPECT_EQ(file.metadata.at("note"), "kept");
    bool seen = false;
    for (const auto& [name, t] : file.tensors) {
      if (name == "fc1.qweight.values") {
        seen = true;
        EXPECT_EQ(t.dtype(), s.value == QuantValue::Int8 ? DType::I8 : DType::U8);
      }
      EXPECT_NE(name, "fc1.weight");
    }
    EXPECT_TRUE(seen);
  }
}

TEST(QuantizeModule, SchemeNamesRoundTrip) {
  for (const QuantScheme& s : {QuantScheme::int8(), QuantScheme::int8().affine().per_channel(1),
                               QuantScheme::int4().per_block(32),
                               QuantScheme::int4().affine().per_block(8).with_f16_scales()}) {
    EXPECT_EQ(parse_quant_scheme(quant::scheme_name(s)), s) << quant::scheme_name(s);
  }
  EXPECT_EQ(quant::scheme_name(QuantScheme::int8().per_channel(0)), "int8-per-channel0");
  EXPECT_THROW((void)quant::scheme_name(QuantScheme::int8().per_channel(-1)), ValueError);
  EMBER_EXPECT_THROW_MSG((void)parse_quant_scheme("int8-f16"), ValueError,
                         "scheme 'int8-f16': f16 scales are for the per-block level only");
  EXPECT_THROW((void)parse_quant_scheme("int8-per-channel-f16"), ValueError);
  EXPECT_EQ(parse_quant_scheme("int8-block64-f16"),
            QuantScheme::int8().per_block(64).with_f16_scales());
  // A layer quantized per_channel(-1) stores the axis normalised, so it can be saved.
  const Net q = quant::quantize(make_net(), {.weights = QuantScheme::int8().per_channel(-1)});
  EXPECT_EQ(q.fc1.qweight->scheme.axis, 1);
}

TEST(QuantizeModule, CnnOnDispatchSmallerAndClose) {
  const auto cfg = models::CnnConfig{};
  const auto model = cfg.init<Dispatch>().valid();
  quant::QuantizeReport report;
  const auto q = quant::quantize(model, {}, &report);
  EXPECT_EQ(report.quantized, (std::vector<std::string>{"conv1", "conv2", "fc1", "fc2"}));
  EXPECT_GT(static_cast<double>(report.bytes_before) / static_cast<double>(report.bytes_after),
            3.7);
  const auto x = Tensor<Dispatch, 4>::random({4, 1, 28, 28}, Distribution::normal(0, 1));
  const double scale = model.forward(x).abs().max().into_scalar();
  EXPECT_LT(max_diff(q.forward(x).into_data(), model.forward(x).into_data()), 0.05 * scale);
  // int4 blocks of 32 (f16 scales): conv1's row (9 values) stays float.
  const auto q4 = quant::quantize(model, {.weights = parse_quant_scheme("int4-block32")}, &report);
  EXPECT_EQ(report.quantized, (std::vector<std::string>{"conv2", "fc1", "fc2"}));
  EXPECT_GT(static_cast<double>(report.bytes_before) / static_cast<double>(report.bytes_after),
            6.5);
  EXPECT_LT(max_diff(q4.forward(x).into_data(), model.forward(x).into_data()), 0.3 * scale);
}

TEST(QuantizeModule, Errors) {
  const Net net = make_net();
  const Net q = quant::quantize(net, {});
  // Quantizing again leaves the layers as they are.
  quant::QuantizeReport report;
  (void)quant::quantize(q, {}, &report);
  EXPECT_TRUE(report.quantized.empty());
  ASSERT_EQ(report.skipped.size(), 3u);
  EXPECT_EQ(report.skipped[0].second, "already quantized");
  // Input dtype and shape.
  EXPECT_THROW((void)q.fc1.forward(Tensor<Cpu, 2>::zeros({2, 64}, {}, DType::F64)), DTypeError);
  EXPECT_THROW((void)q.fc1.forward(Tensor<Cpu, 2>::zeros({2, 63})), ShapeError);
  EXPECT_THROW((void)q.conv.forward(Tensor<Cpu, 4>::zeros({1, 4, 5, 5})), ShapeError);

  const auto path = temp_file("bad.safetensors");
  quant::save(q, path);
  // A model without the recorded layers.
  EXPECT_THROW(
      (void)quant::load(Small{nn::LinearConfig{.d_input = 64, .d_output = 32}.init<Cpu>()}, path),
      ValueError);
  // A malformed scheme record.
  auto file = store::read_safetensors(path);
  file.metadata[quant::kQuantMetadataKey] = R"({"fc1": {"value": "int3", "mode": "symmetric"}})";
  store::write_safetensors(path, file);
  EXPECT_THROW((void)quant::saved_schemes(path), ValueError);
  file.metadata[quant::kQuantMetadataKey] = "[1, 2]";
  store::write_safetensors(path, file);
  EXPECT_THROW((void)quant::load(make_net(), path), ValueError);
  // A float file loads as float (no record).
  nn::save(net, path);
  EXPECT_TRUE(quant::saved_schemes(path).empty());
  const Net f = quant::load(make_net(), path);
  EXPECT_TRUE(f.fc1.weight.has_value());
  // Values that do not fit the recorded scheme: LoadError.
  quant::save(q, path);
  file = store::read_safetensors(path);
  for (auto& [name, t] : file.tensors) {
    if (name == "fc1.qweight.scales") t = TensorData::full(Shape{16, 1}, 0.5, DType::F32);
  }
  store::write_safetensors(path, file);
  // The message says the tensors contradict the file's record, naming the layer and scheme.
  EMBER_EXPECT_THROW_MSG((void)quant::load(make_net(), path), nn::LoadError,
                         "the quantized tensors of fc1 (int8-per-channel0) do not fit the scheme " +
                             path.string() + "'s metadata records for them");
  // Zero points outside the scheme's integers are found by load too.
  const Net qa = quant::quantize(net, {.weights = QuantScheme::int8().affine().per_channel(0)});
  quant::save(qa, path);
  file = store::read_safetensors(path);
  for (auto& [name, t] : file.tensors) {
    if (name == "fc1.qweight.zero_points") {
      auto v = t.to_vec<std::int64_t>();
      v[2] = 300;
      t = TensorData(v, t.shape()).convert(t.dtype());
    }
  }
  store::write_safetensors(path, file);
  EMBER_EXPECT_THROW_MSG((void)quant::load(make_net(), path), ValueError,
                         "the quantized weight of layer 'fc1' in " + path.string() +
                             " is invalid: [quantize] zero point 2 of 32 is 300; it must be in "
                             "[-128, 127]");
  // Bad stored scales are found by load, naming the layer and the file.
  for (const double bad : {0.0, -1.0, 1e38}) {
    SCOPED_TRACE(bad);
    quant::save(q, path);
    file = store::read_safetensors(path);
    for (auto& [name, t] : file.tensors) {
      if (name == "fc2.qweight.scales") {
        auto v = t.to_vec<float>();
        v[3] = static_cast<float>(bad);
        t = TensorData(v, t.shape());
      }
    }
    store::write_safetensors(path, file);
    EMBER_EXPECT_THROW_MSG((void)quant::load(make_net(), path), ValueError,
                           "the quantized weight of layer 'fc2' in " + path.string() +
                               " is invalid: [quantize] scale 3 of 10 is");
  }
}

namespace {

/// Calibration data for make_net()'s layers, and a function that runs them.
struct Calibration {
  Tensor<Cpu, 2> x1 = Tensor<Cpu, 2>::random({16, 64}, Distribution::normal(0.5, 1.0));
  Tensor<Cpu, 2> h = Tensor<Cpu, 2>::random({16, 32}, Distribution::uniform(0.0, 3.0));
  Tensor<Cpu, 4> xc = Tensor<Cpu, 4>::random({2, 3, 9, 9}, Distribution::normal(0.0, 2.0));
  void operator()(const Net& m) const {
    (void)m.fc1.forward(x1);
    (void)m.fc2.forward(h);
    (void)m.conv.forward(xc);
  }
};

ActivationQuant range_of(const Tensor<Cpu, 2>& a, const Tensor<Cpu, 2>& b) {
  return ActivationQuant::from_range(
      static_cast<float>(std::min(a.min().into_scalar(), b.min().into_scalar())),
      static_cast<float>(std::max(a.max().into_scalar(), b.max().into_scalar())));
}

}  // namespace

TEST(QuantizeModule, StaticActivationsFromCalibration) {
  Cpu::seed(7);  // the error bounds below hold for these draws (clipping depends on them)
  const Net net = make_net();
  const Calibration calib;
  // Two calibration passes: min-max over both.
  const auto x1b = Tensor<Cpu, 2>::random({4, 64}, Distribution::normal(-1.0, 2.0));
  quant::QuantizeReport report;
  const Net q = quant::quantize(
      net, {.activations = true},
      [&](const Net& m) {
        calib(m);
        (void)m.fc1.forward(x1b);
      },
      &report);
  EXPECT_EQ(report.quantized, (std::vector<std::string>{"fc1", "fc2", "conv"}));
  ASSERT_TRUE(q.fc1.input_quant.has_value());
  EXPECT_EQ(*q.fc1.input_quant, range_of(calib.x1, x1b));
  EXPECT_EQ(*q.fc2.input_quant, range_of(calib.h, calib.h));
  EXPECT_EQ(*q.conv.input_quant,
            range_of(calib.xc.reshape<2>({2, 243}), calib.xc.reshape<2>({2, 243})));
  EXPECT_EQ(q.fc1.input_observer, nullptr);    // removed by convert
  EXPECT_EQ(net.fc1.input_observer, nullptr);  // the original is untouched
  EXPECT_FALSE(net.fc1.input_quant.has_value());

  // The int8 Linear quantizes its input by the calibrated parameters.
  const auto x = Tensor<Cpu, 2>::random({7, 64}, Distribution::normal(0.5, 1.0));
  const auto want =
      QuantizedLinear<Cpu>::from_float(net.fc1.weight.val(), net.fc1.bias->val(),
                                       QuantScheme::int8().per_channel(0), q.fc1.input_quant)
          .forward(x);
  test::expect_eq(q.fc1.forward(x).into_data(), want.into_data());
  // Within quantization error of the float layer (a few inputs may clip the range seen).
  const double fc_scale = net.fc1.forward(x).abs().max().into_scalar();
  EXPECT_LT(max_diff(q.fc1.forward(x).into_data(), net.fc1.forward(x).into_data()),
            0.05 * fc_scale);
  // The convolution runs on the integers: the values of the f32 conv of the fake-quantized
  // input and the dequantized weight, summed exactly.
  const auto qw =
      net.conv.weight.val().reshape<2>({8, 27}).quantize(QuantScheme::int8().per_channel(0));
  const auto w = qw.dequantize().reshape<4>({8, 3, 3, 3});
  const auto xc = Tensor<Cpu, 4>::random({1, 3, 9, 9}, Distribution::normal(0.0, 2.0));
  test::expect_eq(
      q.conv.forward(xc).into_data(),
      quantized_conv2d(xc, qw, Shape{8, 3, 3, 3}, net.conv.bias->val(), {}, *q.conv.input_quant)
          .into_data());
  test::expect_approx(
      q.conv.forward(xc).into_data(),
      module::conv2d(fake_quantize(xc, *q.conv.input_quant), w, net.conv.bias->val(), {})
          .into_data(),
      Tolerance::rel_abs(1e-5, 1e-5));
  const double conv_scale = net.conv.forward(xc).abs().max().into_scalar();
  EXPECT_LT(max_diff(q.conv.forward(xc).into_data(), net.conv.forward(xc).into_data()),
            0.08 * conv_scale);

  // Saved and loaded exactly, the input parameters with the weights.
  const auto path = temp_file("static.safetensors");
  quant::save(q, path);
  EXPECT_EQ(quant::saved_inputs(path).at("fc1"), *q.fc1.input_quant);
  const Net back = quant::load(make_net(), path);
  ASSERT_TRUE(back.conv.input_quant.has_value());
  EXPECT_EQ(*back.conv.input_quant, *q.conv.input_quant);
  test::expect_eq(back.fc1.forward(x).into_data(), q.fc1.forward(x).into_data());
  test::expect_eq(back.conv.forward(xc).into_data(), q.conv.forward(xc).into_data());
  // A weights-only file has no input record, and loading it clears nothing else.
  quant::save(quant::quantize(net, {}), path);
  EXPECT_TRUE(quant::saved_inputs(path).empty());
  EXPECT_FALSE(quant::load(make_net(), path).fc1.input_quant.has_value());
}

TEST(QuantizeModule, StaticActivationsWithInt4WeightsFakeQuantizeTheInput) {
  const Net net = make_net();
  const Calibration calib;
  const QuantScheme s = QuantScheme::int4().per_block(16).with_f16_scales();
  const Net q =
      quant::quantize(net,
                      {.weights = s,
                       .activations = true,
                       .observer = {.kind = quant::ObserverKind::Percentile, .percentile = 99.0}},
                      calib);
  ASSERT_TRUE(q.fc1.input_quant.has_value());
  // conv stays float (27 values per row): no input parameters either.
  EXPECT_TRUE(q.conv.weight.has_value());
  EXPECT_FALSE(q.conv.input_quant.has_value());
  const auto x = Tensor<Cpu, 2>::random({3, 64}, Distribution::normal(0.5, 1.0));
  const auto w = net.fc1.weight.val().quantize(s).dequantize();
  test::expect_eq(
      q.fc1.forward(x).into_data(),
      module::linear(fake_quantize(x, *q.fc1.input_quant), w, net.fc1.bias->val()).into_data());
}

TEST(QuantizeModule, StaticActivationErrors) {
  const Net net = make_net();
  // Static activations need calibration.
  EMBER_EXPECT_THROW_MSG((void)quant::quantize(net, {.activations = true}), ValueError,
                         "static activations need calibration");
  EMBER_EXPECT_THROW_MSG((void)quant::convert(net, {.activations = true}), ValueError,
                         "layer 'fc1' was not calibrated");
  // A calibration function that does not run a chosen layer.
  EMBER_EXPECT_THROW_MSG((void)quant::quantize(net, {.activations = true},
                                               [](const Net& m) {
                                                 (void)m.fc1.forward(Tensor<Cpu, 2>::ones({1, 64}));
                                               }),
                         ValueError, "the observer of layer 'fc2' saw no batch");
  // Only the chosen layers are observed and given input parameters.
  const Net part =
      quant::quantize(net, {.modules = {"fc2"}, .activations = true}, [](const Net& m) {
        (void)m.fc2.forward(Tensor<Cpu, 2>::ones({1, 32}));
      });
  EXPECT_TRUE(part.fc2.input_quant.has_value());
  EXPECT_FALSE(part.fc1.input_quant.has_value());
  EXPECT_TRUE(part.fc1.weight.has_value());
  // Calibration on NaN.
  EMBER_EXPECT_THROW_MSG(
      (void)quant::quantize(net, {.modules = {"fc1"}, .activations = true},
                            [](const Net& m) {
                              (void)m.fc1.forward(Tensor<Cpu, 2>::full({1, 64}, std::nan("")));
                            }),
      ValueError, "the batch contains NaN");
  // Bad observer settings.
  EXPECT_THROW((void)quant::prepare(net, {.observer = {.kind = quant::ObserverKind::MovingAverage,
                                                       .averaging_constant = 0}}),
               ValueError);
  // Malformed input records.
  const auto path = temp_file("static-bad.safetensors");
  quant::save(part, path);
  auto file = store::read_safetensors(path);
  for (const char* bad : {R"({"fc2": {"scale": 0.5, "zero_point": 300}})",
                          R"({"fc2": {"scale": -1, "zero_point": 3}})", R"({"fc2": [1, 2]})",
                          R"({"fc1": {"scale": 0.5, "zero_point": 3}})", "7"}) {
    SCOPED_TRACE(bad);
    file.metadata[quant::kQuantInputsMetadataKey] = bad;
    store::write_safetensors(path, file);
    EXPECT_THROW((void)quant::load(make_net(), path), ValueError);
  }
}
