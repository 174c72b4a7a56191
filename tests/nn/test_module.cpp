// The module core: EMBER_MODULE visiting and paths, Param ids, valid/to_device/freeze/mode,
// state_dict / load_state_dict (all-or-nothing), configs as JSON, Linear.
#include <gtest/gtest.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <vector>

#include "ember/autodiff/cpu.hpp"
#include "ember/dispatch/dispatch.hpp"
#include "ember/module/config.hpp"
#include "ember/module/module.hpp"
#include "ember/nn/linear.hpp"

namespace ember::nn {
namespace {

using AD = Autodiff<Cpu>;

/// A module whose behaviour depends on the mode (stands in for Dropout in these tests).
struct ModeFlag {
  bool training = true;
  EMBER_MODULE(training)
};

template <Backend B = Dispatch>
struct Block {
  Linear<B> proj;
  Buffer<Tensor<B, 1>> stat;
  Buffer<Tensor<B, 1, Int>> count;
  ModeFlag mode;
  EMBER_MODULE(proj, stat, count, mode)
};

template <Backend B = Dispatch>
struct Net {
  std::vector<Block<B>> layers;
  std::optional<Linear<B>> head;
  std::array<Param<Tensor<B, 1>>, 2> scales;
  std::int64_t hidden = 0;
  double unlisted = 0;  // not in EMBER_MODULE: valid() default-initialises it
  EMBER_MODULE(layers, head, scales, hidden)
};

template <class B>
Net<B> make_net(const typename B::Device& device) {
  Net<B> net;
  net.hidden = 3;
  net.unlisted = 7;
  for (int i = 0; i < 2; ++i) {
    Block<B> b;
    b.proj = LinearConfig{.d_input = 3, .d_output = 3}.init<B>(device);
    b.stat = Buffer<Tensor<B, 1>>(Tensor<B, 1>::full({3}, 0.5 + i, device));
    b.count = Buffer<Tensor<B, 1, Int>>(Tensor<B, 1, Int>::full({1}, 4, device), true);
    net.layers.push_back(b);
  }
  net.head = LinearConfig{.d_input = 3, .d_output = 2, .bias = false}.init<B>(device);
  net.scales[0] = Param<Tensor<B, 1>>(Tensor<B, 1>::ones({3}, device));
  net.scales[1] = Param<Tensor<B, 1>>(Tensor<B, 1>::full({2}, 2.0, device));
  return net;
}

const std::vector<std::string> kPaths = {
    "layers.0.proj.weight", "layers.0.proj.bias", "layers.0.stat", "layers.0.count",
    "layers.1.proj.weight", "layers.1.proj.bias", "layers.1.stat", "layers.1.count",
    "head.weight",          "scales.0",           "scales.1"};

std::vector<std::string> paths_of(const auto& m) {
  std::vector<std::string> out;
  visit(m, [&](const std::string& p, const auto&) { out.push_back(p); });
  return out;
}

TEST(Module, PathsFollowDeclarationOrderAndContainers) {
  auto net = make_net<AD>(Cpu::Device{});
  EXPECT_EQ(paths_of(net), kPaths);
  // 2 * (9 + 3) + 6 + 3 + 2 (buffers excluded)
  EXPECT_EQ(net.num_params(), 35);
  std::vector<std::string> kinds;
  visit(net, [&](const std::string&, const auto& leaf) {
    kinds.push_back(is_param_v<std::remove_cvref_t<decltype(leaf)>> ? "P" : "B");
  });
  EXPECT_EQ(kinds,
            (std::vector<std::string>{"P", "P", "B", "B", "P", "P", "B", "B", "P", "P", "P"}));
}

TEST(Module, ParamIdsAreUniqueAndSurviveCopiesAndValid) {
  auto net = make_net<AD>(Cpu::Device{});
  std::vector<ParamId> ids;
  visit(net, [&](const std::string&, const auto& leaf) {
    if constexpr (is_param_v<std::remove_cvref_t<decltype(leaf)>>) ids.push_back(leaf.id());
  });
  ASSERT_EQ(ids.size(), 7u);  // 2 x (weight, bias), head.weight, scales.0, scales.1
  for (std::size_t i = 0; i < ids.size(); ++i)
    for (std::size_t j = i + 1; j < ids.size(); ++j) EXPECT_NE(ids[i], ids[j]);
  auto same_ids = [&](const auto& m) {
    std::vector<ParamId> got;
    visit(m, [&](const std::string&, const auto& leaf) {
      if constexpr (is_param_v<std::remove_cvref_t<decltype(leaf)>>) got.push_back(leaf.id());
    });
    return got == ids;
  };
  Net<AD> copy = net;
  EXPECT_TRUE(same_ids(copy));
  EXPECT_TRUE(same_ids(net.valid()));
  EXPECT_TRUE(same_ids(net.to_device(Cpu::Device{})));
}

TEST(Module, ValidRebuildsOnTheInnerBackendInEvalMode) {
  auto net = make_net<AD>(Cpu::Device{});
  EXPECT_TRUE(net.is_training());
  auto v = net.valid();
  static_assert(std::is_same_v<decltype(v), Net<Cpu>>);
  EXPECT_FALSE(v.is_training());
  EXPECT_TRUE(net.is_training());  // the original keeps its mode
  EXPECT_EQ(v.hidden, 3);
  EXPECT_EQ(v.unlisted, 0);  // not listed in EMBER_MODULE
  EXPECT_EQ(paths_of(v), kPaths);
  const auto a = net.state_dict(), b = v.state_dict();
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) b[i].second.assert_eq(a[i].second);
  EXPECT_TRUE(net.layers[0].proj.weight->is_require_grad());
}

TEST(Module, DispatchValidAndToDevice) {
  const Device plain = Device::cpu(), ad = Device::cpu().autodiff();
  auto net = make_net<Dispatch>(plain);
  EXPECT_FALSE(net.head->weight->is_require_grad());
  auto trainable = net.to_device(ad);
  EXPECT_EQ(trainable.head->weight->device(), ad);
  EXPECT_TRUE(trainable.head->weight->is_require_grad());
  EXPECT_EQ(trainable.layers[1].count->device(), ad);
  auto v = trainable.valid();
  static_assert(std::is_same_v<decltype(v), Net<Dispatch>>);
  EXPECT_EQ(v.head->weight->device(), plain);
  EXPECT_EQ(v.layers[0].stat->device(), plain);
  EXPECT_FALSE(v.is_training());
}

TEST(Module, TrainEvalReachEverySubModule) {
  auto net = make_net<AD>(Cpu::Device{});
  net.eval();
  EXPECT_FALSE(net.layers[0].mode.training);
  EXPECT_FALSE(net.layers[1].mode.training);
  net.train();
  EXPECT_TRUE(net.layers[1].mode.training);
}

TEST(Module, FreezeAndNoGradStopGradients) {
  auto net = make_net<AD>(Cpu::Device{});
  auto frozen = net.freeze("layers.0.*");
  auto x = Tensor<AD, 2>::ones({4, 3});
  auto forward = [&](const Net<AD>& m) {
    auto h = m.layers[1].proj.forward(m.layers[0].proj.forward(x));
    return m.head->forward(h).sum();
  };
  auto grads = forward(frozen).backward();
  EXPECT_FALSE(frozen.layers[0].proj.weight.require_grad());
  EXPECT_FALSE(frozen.layers[0].proj.weight->grad(grads).has_value());
  EXPECT_FALSE(frozen.layers[0].proj.bias->val().grad(grads).has_value());
  EXPECT_TRUE(frozen.layers[1].proj.weight->grad(grads).has_value());
  EXPECT_TRUE(net.layers[0].proj.weight.require_grad());  // freeze returned a copy
  auto nothing = net.no_grad();
  EXPECT_FALSE(nothing.head->weight->is_require_grad());
  auto back = nothing.unfreeze("head.*");
  EXPECT_TRUE(back.head->weight->is_require_grad());
  EXPECT_FALSE(back.scales[0]->is_require_grad());
  EXPECT_THROW(net.freeze("encoder.*"), ValueError);
}

TEST(Module, CopiesShareNothingMutable) {
  auto net = make_net<AD>(Cpu::Device{});
  Net<AD> copy = net;
  copy.head->weight.set(Tensor<AD, 2>::zeros({2, 3}));
  copy.layers[0].stat.set(Tensor<AD, 1>::zeros({3}));
  EXPECT_NE(net.head->weight->into_data().to_vec<float>()[0], 0.0f);
  EXPECT_EQ(net.layers[0].stat->into_data().to_vec<float>(),
            (std::vector<float>{0.5f, 0.5f, 0.5f}));
}

TEST(Module, StateDictRoundTripAndScalarBuffers) {
  auto a = make_net<AD>(Cpu::Device{});
  auto b = make_net<AD>(Cpu::Device{});
  const StateDict sd = a.state_dict();
  EXPECT_EQ(sd[3].first, "layers.0.count");
  EXPECT_EQ(sd[3].second.shape().rank(), 0u);  // PyTorch's num_batches_tracked is 0-dim
  const LoadReport r = b.load_state_dict(sd);
  EXPECT_EQ(r.loaded.size(), kPaths.size());
  EXPECT_TRUE(r.missing.empty());
  const StateDict sb = b.state_dict();
  for (std::size_t i = 0; i < sd.size(); ++i) sb[i].second.assert_eq(sd[i].second);
  EXPECT_TRUE(b.head->weight->is_require_grad());  // loaded params are leaves again
  // f64 data loads into f32 params (converted), [1] into a scalar buffer.
  std::map<std::string, TensorData> m(sd.begin(), sd.end());
  m["scales.0"] = TensorData(std::vector<double>{1.5, 2.5, 3.5}, Shape{3});
  m["layers.1.count"] = TensorData(std::vector<std::int64_t>{9}, Shape{1});
  b.load_state_dict(m);
  EXPECT_EQ(b.scales[0]->dtype(), DType::F32);
  EXPECT_EQ(b.scales[0]->to_vec<float>(), (std::vector<float>{1.5f, 2.5f, 3.5f}));
  EXPECT_EQ(b.layers[1].count->to_vec<std::int64_t>(), (std::vector<std::int64_t>{9}));
}

TEST(Module, LoadErrorsListEveryProblemAndChangeNothing) {
  auto net = make_net<AD>(Cpu::Device{});
  const StateDict before = net.state_dict();
  std::map<std::string, TensorData> m(before.begin(), before.end());
  m.erase("head.weight");
  m["head.bias"] = TensorData(std::vector<float>{1, 2}, Shape{2});
  m["layers.0.proj.weight"] = TensorData(std::vector<float>(6, 1.0f), Shape{2, 3});
  m["scales.1"] = TensorData(std::vector<std::int64_t>{1, 2}, Shape{2});
  m["scales.0"] = TensorData(std::vector<float>{9, 9, 9}, Shape{3});  // valid, must not load
  try {
    net.load_state_dict(m);
    FAIL() << "expected LoadError";
  } catch (const LoadError& e) {
    EXPECT_EQ(e.missing, std::vector<std::string>{"head.weight"});
    EXPECT_EQ(e.unexpected, std::vector<std::string>{"head.bias"});
    ASSERT_EQ(e.mismatched.size(), 2u);
    EXPECT_NE(e.mismatched[0].find("layers.0.proj.weight: shape [2, 3] in the file, [3, 3]"),
              std::string::npos)
        << e.mismatched[0];
    EXPECT_NE(e.mismatched[1].find("scales.1: dtype i64"), std::string::npos) << e.mismatched[1];
    const std::string what = e.what();
    EXPECT_NE(what.find("missing keys (1):\n    head.weight"), std::string::npos) << what;
  }
  const StateDict after = net.state_dict();
  for (std::size_t i = 0; i < before.size(); ++i) after[i].second.assert_eq(before[i].second);
  // Partial loading: missing keys allowed, unexpected ones too when asked.
  m = std::map<std::string, TensorData>{
      {"scales.0", TensorData(std::vector<float>{4, 5, 6}, Shape{3})},
      {"extra", TensorData(std::vector<float>{1}, Shape{1})}};
  EXPECT_THROW(net.load_state_dict(m, LoadOptions{.strict = false}), LoadError);
  const LoadReport r =
      net.load_state_dict(m, LoadOptions{.strict = false, .error_on_unexpected = false});
  EXPECT_EQ(r.loaded, std::vector<std::string>{"scales.0"});
  EXPECT_EQ(r.unexpected, std::vector<std::string>{"extra"});
  EXPECT_EQ(r.missing.size(), kPaths.size() - 1);
  EXPECT_EQ(net.scales[0]->to_vec<float>(), (std::vector<float>{4, 5, 6}));
}

TEST(Linear, ForwardMatchesHandComputedValues) {
  auto fc = LinearConfig{.d_input = 3, .d_output = 2}.init<AD>();
  fc.weight.set(Tensor<AD, 2>::from_floats({{1, 2, 3}, {-1, 0, 1}}));
  fc.bias->set(Tensor<AD, 1>::from_floats({0.5, -0.5}));
  auto x = Tensor<AD, 3>::from_floats({{{1, 1, 1}, {1, 0, -1}}});
  // [1,1,1]: 6.5, -0.5; [1,0,-1]: -1.5, -2.5
  EXPECT_EQ(fc.forward(x).to_vec<float>(), (std::vector<float>{6.5f, -0.5f, -1.5f, -2.5f}));
  auto g = fc.forward(x).sum().backward();
  // d sum / dW[o, i] = sum over rows of x[:, i]; d/db = number of rows.
  EXPECT_EQ(fc.weight->grad(g)->to_vec<float>(), (std::vector<float>{2, 1, 0, 2, 1, 0}));
  EXPECT_EQ(fc.bias->val().grad(g)->to_vec<float>(), (std::vector<float>{2, 2}));
  EXPECT_THROW(fc.forward(Tensor<AD, 2>::ones({2, 4})), ShapeError);
  // Empty inputs: no rows gives no rows; zero input features give the bias.
  EXPECT_EQ(fc.forward(Tensor<AD, 3>::zeros({2, 0, 3})).shape(), (Shape{2, 0, 2}));
  auto fc0 = LinearConfig{.d_input = 1, .d_output = 2}.init<AD>();
  fc0.weight.set(Tensor<AD, 2>::zeros({2, 0}));
  fc0.bias->set(Tensor<AD, 1>::from_floats({0.5, -0.5}));
  EXPECT_EQ(fc0.forward(Tensor<AD, 2>::zeros({3, 0})).to_vec<float>(),
            (std::vector<float>{0.5f, -0.5f, 0.5f, -0.5f, 0.5f, -0.5f}));
  EXPECT_THROW((LinearConfig{.d_input = 0, .d_output = 2}.init<AD>()), ValueError);
}

TEST(Linear, DefaultInitIsPyTorchs) {
  Cpu::seed(7);
  auto fc = LinearConfig{.d_input = 400, .d_output = 300}.init<Cpu>();
  const double bound = 1.0 / std::sqrt(400.0);
  const auto w = fc.weight->to_vec<double>();
  double sum2 = 0;
  for (double v : w) {
    ASSERT_LE(std::abs(v), bound);
    sum2 += v * v;
  }
  // Var of U(-b, b) is b^2 / 3; 120000 samples: relative error of the estimate ~0.4 %.
  EXPECT_NEAR(sum2 / w.size(), bound * bound / 3, 0.03 * bound * bound / 3);
  for (double v : fc.bias->val().to_vec<double>()) ASSERT_LE(std::abs(v), bound);
  EXPECT_EQ(paths_of(fc), (std::vector<std::string>{"weight", "bias"}));
  EXPECT_FALSE((LinearConfig{.d_input = 2, .d_output = 2, .bias = false}.init<Cpu>().bias));
}

TEST(Config, JsonRoundTripAndDefaults) {
  const LinearConfig c{
      .d_input = 5, .d_output = 7, .bias = false, .initializer = Initializer::xavier_normal(2.0)};
  const auto j = config_to_json(c);
  EXPECT_EQ(j.at("d_input"), 5);
  EXPECT_EQ(j.at("initializer").at("kind"), "xavier_normal");
  const auto back = config_from_json<LinearConfig>(j);
  EXPECT_EQ(back.d_output, 7);
  EXPECT_FALSE(back.bias);
  EXPECT_EQ(back.initializer, Initializer::xavier_normal(2.0));
  const auto partial = config_from_json<LinearConfig>(nlohmann::json{{"d_input", 3}});
  EXPECT_EQ(partial.d_input, 3);
  EXPECT_TRUE(partial.bias);
  EXPECT_EQ(partial.initializer, LinearConfig{}.initializer);
  try {
    config_from_json<LinearConfig>(nlohmann::json{{"d_input", "three"}});
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("[LinearConfig] field 'd_input'"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(config_from_json<LinearConfig>(nlohmann::json::array()), ValueError);
  EXPECT_THROW(config_from_json<LinearConfig>(
                   nlohmann::json{{"initializer", {{"kind", "magic"}, {"gain", 1}}}}),
               ValueError);

  const auto dir = std::filesystem::temp_directory_path() / "ember_config_test";
  std::filesystem::create_directories(dir);
  save_config(c, dir / "linear.json");
  EXPECT_EQ(load_config<LinearConfig>(dir / "linear.json").d_output, 7);
  EXPECT_THROW(load_config<LinearConfig>(dir / "missing.json"), IoError);
  { std::ofstream(dir / "bad.json") << "{\"d_input\": 3,"; }
  EXPECT_THROW(load_config<LinearConfig>(dir / "bad.json"), IoError);
  std::filesystem::remove_all(dir);
}

TEST(Initializer, FormulasAndErrors) {
  using I = Initializer;
  auto d = I::kaiming_uniform(1.0 / std::sqrt(3.0)).distribution(100, 10);
  EXPECT_NEAR(d.b, 0.1, 1e-12);  // 1/sqrt(fan_in)
  d = I::kaiming_normal(std::sqrt(2.0), true).distribution(100, 50);
  EXPECT_NEAR(d.b, std::sqrt(2.0 / 50), 1e-12);
  d = I::xavier_uniform(1.0).distribution(20, 30);
  EXPECT_NEAR(d.b, std::sqrt(6.0 / 50), 1e-12);
  d = I::xavier_normal(2.0).distribution(20, 30);
  EXPECT_NEAR(d.b, 2.0 * std::sqrt(2.0 / 50), 1e-12);
  EXPECT_THROW(I::kaiming_uniform(1.0).distribution(std::nullopt, 3), ValueError);
  EXPECT_THROW(I::xavier_uniform().distribution(3, std::nullopt), ValueError);
  EXPECT_THROW(I::kaiming_uniform(1.0).distribution(0, 3), ValueError);
  auto c = I::constant(0.25).init<Cpu, 2>(Shape{2, 2}, Cpu::Device{});
  EXPECT_EQ(c.to_vec<float>(), (std::vector<float>{0.25f, 0.25f, 0.25f, 0.25f}));
  EXPECT_THROW((I::orthogonal().init<Cpu, 1>(Shape{4}, Cpu::Device{})), ShapeError);
}

TEST(Initializer, OrthogonalRowsOrColumnsAreOrthonormal) {
  for (auto shape : {Shape{6, 4}, Shape{3, 5}, Shape{4, 2, 3}}) {
    const double gain = 1.5;
    auto w = Initializer::orthogonal(gain).init<Cpu, 2>(Shape{shape[0], shape.numel() / shape[0]},
                                                        Cpu::Device{}, std::nullopt, std::nullopt,
                                                        DType::F64);
    const std::int64_t r = shape[0], c = shape.numel() / shape[0];
    const auto v = w.to_vec<double>();
    // The smaller Gram matrix (W W^T when r <= c, else W^T W) is gain^2 I.
    const std::int64_t n = std::min(r, c);
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        double dot = 0;
        if (r <= c)
          for (std::int64_t k = 0; k < c; ++k) dot += v[i * c + k] * v[j * c + k];
        else
          for (std::int64_t k = 0; k < r; ++k) dot += v[k * c + i] * v[k * c + j];
        EXPECT_NEAR(dot, i == j ? gain * gain : 0.0, 1e-9) << shape << " " << i << "," << j;
      }
  }
}

}  // namespace
}  // namespace ember::nn

namespace ember::nn {
namespace {

TEST(Module, SaveAndLoadFilesAtomicallyAndUnchangedOnError) {
  const auto dir = std::filesystem::temp_directory_path() / "ember_module_io_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  auto a = make_net<AD>(Cpu::Device{});
  a.save(dir / "net.safetensors", {{"config", "{\"hidden\": 3}"}});
  auto b = make_net<AD>(Cpu::Device{});
  const LoadReport r = b.load(dir / "net.safetensors");
  EXPECT_EQ(r.loaded.size(), kPaths.size());
  const auto sa = a.state_dict(), sb = b.state_dict();
  for (std::size_t i = 0; i < sa.size(); ++i) sb[i].second.assert_eq(sa[i].second);
  // A truncated copy: IoError, model unchanged.
  const auto full = std::filesystem::file_size(dir / "net.safetensors");
  std::filesystem::copy_file(dir / "net.safetensors", dir / "cut.safetensors");
  std::filesystem::resize_file(dir / "cut.safetensors", full - 9);
  auto c = make_net<AD>(Cpu::Device{});
  const auto before = c.state_dict();
  EXPECT_THROW(c.load(dir / "cut.safetensors"), IoError);
  EXPECT_THROW(c.load(dir / "missing.safetensors"), IoError);
  const auto after = c.state_dict();
  for (std::size_t i = 0; i < before.size(); ++i) after[i].second.assert_eq(before[i].second);
  // Keys renamed by a regex on load: "blocks.N." -> "layers.N.".
  StateDict renamed;
  for (auto& [k, v] : sa)
    renamed.emplace_back(std::regex_replace(k, std::regex("^layers"), "blocks"), v);
  detail::save_state(renamed, dir / "renamed.safetensors", {});
  EXPECT_THROW(c.load(dir / "renamed.safetensors"), LoadError);
  c.load(dir / "renamed.safetensors", LoadOptions{.remap = {{"^blocks\\.", "layers."}}});
  const auto sc = c.state_dict();
  for (std::size_t i = 0; i < sa.size(); ++i) sc[i].second.assert_eq(sa[i].second);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ember::nn
