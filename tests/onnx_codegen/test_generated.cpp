// The C++ code that `ember onnx convert` generated at build time from the real-model fixtures
// (tests/CMakeLists.txt): it compiles (this file includes it), loads its safetensors weights,
// and gives onnxruntime's outputs (within 1e-4) and the interpreter's (bit for bit).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "ember/onnx/model.hpp"
#include "ember/onnx/npy.hpp"
#include "ember/onnx/runtime.hpp"
#include "fashion_cnn.hpp"
#include "lstm.hpp"
#include "mobilenet_v3_small.hpp"
#include "names.hpp"
#include "resnet18.hpp"
#include "transformer_encoder.hpp"

using ember::onnx::Value;

namespace {

double max_diff(const Value& a, const Value& b) {
  EXPECT_EQ(a.shape(), b.shape());
  const auto x = a.to_doubles(), y = b.to_doubles();
  double d = 0;
  for (std::size_t i = 0; i < x.size() && i < y.size(); ++i)
    d = std::max(d, std::fabs(x[i] - y[i]));
  return d;
}

template <class M>
void check(const std::string& name) {
  const std::string gen = EMBER_ONNX_GEN_DIR;
  const std::string fix = EMBER_ONNX_FIXTURE_DIR;
  auto m = M::init(ember::Device::cpu());
  m.load(gen + "/" + name + ".safetensors");
  const Value x = ember::onnx::read_npy(fix + "/" + name + ".input.npy");
  const Value want = ember::onnx::read_npy(fix + "/" + name + ".expected.npy");
  const Value y = m.forward(x);
  EXPECT_LE(max_diff(y, want), 1e-4) << name << " generated code vs onnxruntime";
  const auto model = ember::onnx::load_model(gen + "/models/" + name + ".onnx");
  const Value yi = ember::onnx::Session(model).run({x})[0];
  // The same ops in the same order; the interpreter fuses conv epilogues into oneDNN, whose
  // kernels on AVX2 (this session's AMD machine) round those sums differently (7.7e-7 on
  // ResNet-18's logits), while AVX-512 machines agree bit for bit.
  EXPECT_LE(max_diff(y, yi), 1e-5) << name << " generated code vs interpreter";
}

TEST(OnnxGenerated, Resnet18) {
  check<model::Resnet18<>>("resnet18");
}
TEST(OnnxGenerated, MobilenetV3Small) {
  check<model::MobilenetV3Small<>>("mobilenet_v3_small");
}
TEST(OnnxGenerated, TransformerEncoder) {
  check<model::TransformerEncoder<>>("transformer_encoder");
}
TEST(OnnxGenerated, Lstm) {
  check<model::Lstm<>>("lstm");
}
TEST(OnnxGenerated, FashionCnn) {
  check<model::FashionCnn<>>("fashion_cnn");
}

}  // namespace
TEST(OnnxGenerated, NamesThatAreKeywordsOrTheGeneratorsOwn) {
  // Values named return, class, int, gen, Value, initializers dev, B, ember and the struct's
  // own name Names: the header compiles (this file includes it) and computes the model.
  check<model::Names<>>("names");
}
