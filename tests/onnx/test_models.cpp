// Real models exported from PyTorch (tests/fixtures/onnx/gen_onnx_models.py): ResNet-18 and
// MobileNetV3-small from torchvision's constructors, a TransformerEncoder, an LSTM and the
// Fashion-MNIST CNN, run by the interpreter and compared with onnxruntime's outputs.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "ember/onnx/model.hpp"
#include "ember/onnx/npy.hpp"
#include "ember/onnx/runtime.hpp"
#include "fixture_util.hpp"

using namespace ember::onnx;

namespace {

std::string fixture_out_dir() {
  return (std::filesystem::temp_directory_path() / "ember-onnx-fixtures").string();
}

/// Max |a - b| and max |b| over two tensors of equal shape.
std::pair<double, double> max_diff(const Value& got, const Value& want) {
  EXPECT_EQ(got.shape(), want.shape());
  const auto a = got.to_doubles(), b = want.to_doubles();
  double d = 0, m = 0;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
    d = std::max(d, std::fabs(a[i] - b[i]));
    m = std::max(m, std::fabs(b[i]));
  }
  return {d, m};
}

class RealModel : public ::testing::TestWithParam<const char*> {};

TEST_P(RealModel, InterpreterMatchesOnnxRuntime) {
  const std::string name = GetParam();
  const std::string path =
      ember::onnx::testing::materialize_fixture(EMBER_ONNX_FIXTURE_DIR, name, fixture_out_dir());
  const Model model = load_model(path);
  const Value x = read_npy(std::string(EMBER_ONNX_FIXTURE_DIR) + "/" + name + ".input.npy");
  const Value want = read_npy(std::string(EMBER_ONNX_FIXTURE_DIR) + "/" + name + ".expected.npy");
  Session session(model, {.device = ember::Device::cpu()});
  const auto out = session.run({x});
  ASSERT_EQ(out.size(), 1u);
  const auto [d, m] = max_diff(out[0], want);
  RecordProperty("max_abs_diff", std::to_string(d));
  EXPECT_LE(d, 1e-4) << name << ": max |ember - onnxruntime| = " << d << " (max |y| = " << m << ")";
  EXPECT_LE(d, 1e-3 * m) << name << ": relative error " << d / m;
  EXPECT_GT(m, 0.0);
}

/// The first item of a batch ([1, ...]).
Value first_item(const Value& v) {
  const ember::TensorData d = v.to_data();
  auto dims = d.shape().dims;
  const auto n = static_cast<std::size_t>(d.numel() / dims[0]) * ember::dtype_size(d.dtype());
  dims[0] = 1;
  std::vector<std::uint8_t> bytes(d.bytes().begin(),
                                  d.bytes().begin() + static_cast<std::ptrdiff_t>(n));
  return Value::from_data(
      ember::TensorData::from_bytes(std::move(bytes), ember::Shape(dims), d.dtype()));
}

TEST_P(RealModel, RunsAtAnotherBatchSize) {
  const std::string name = GetParam();
  const std::string path =
      ember::onnx::testing::materialize_fixture(EMBER_ONNX_FIXTURE_DIR, name, fixture_out_dir());
  const Model model = load_model(path);
  const Value x = read_npy(std::string(EMBER_ONNX_FIXTURE_DIR) + "/" + name + ".input.npy");
  const Value want = read_npy(std::string(EMBER_ONNX_FIXTURE_DIR) + "/" + name + ".expected.npy");
  Session session(model);
  const auto out = session.run({first_item(x)});
  const auto [d, m] = max_diff(out[0], first_item(want));
  EXPECT_LE(d, 1e-4) << name << " at batch 1: max diff " << d << " (max |y| " << m << ")";
}

INSTANTIATE_TEST_SUITE_P(Onnx, RealModel,
                         ::testing::Values("resnet18", "mobilenet_v3_small", "transformer_encoder",
                                           "lstm", "fashion_cnn"),
                         [](const auto& info) { return std::string(info.param); });

}  // namespace
