// The built-in image classifiers of `ember train` (and of the WebAssembly classifier,
// src/web/): an MLP and a CNN with batch norm, both written with the module API
// (EMBER_MODULE) and configured by EMBER_CONFIG structs, plus ModelSpec, the (name, config)
// pair a run directory records. Like Burn's example models, they sit above nn/.
//
// Inputs are normalised images [N, C, H, W] (Fashion-MNIST: [N, 1, 28, 28]); outputs are
// logits [N, num_classes].
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "ember/nn.hpp"

namespace ember::models {

/// Hidden layers of Linear -> ReLU -> Dropout on the flattened image, then a Linear head.
template <Backend B = Dispatch>
struct Mlp {
  std::vector<nn::Linear<B>> hidden;
  nn::Linear<B> head;
  nn::Dropout dropout;
  EMBER_MODULE(hidden, head, dropout)

  /// [N, C, H, W] -> [N, num_classes].
  Tensor<B, 2> forward(const Tensor<B, 4>& images) const {
    Tensor<B, 2> h = images.template flatten<2>(1, 3);
    for (const auto& layer : hidden) h = dropout.forward(activation::relu(layer.forward(h)));
    return head.forward(h);
  }
};

/// Config of Mlp: input C*H*W, the hidden widths, dropout after each hidden layer.
struct MlpConfig {
  std::int64_t d_input = 784;
  std::vector<std::int64_t> hidden = {512, 256};
  std::int64_t num_classes = 10;
  double dropout = 0.2;

  /// Throws ValueError for a non-positive size or a dropout outside [0, 1].
  template <Backend B = Dispatch>
  Mlp<B> init(const typename B::Device& device = {}) const {
    Mlp<B> m{{}, {}, nn::DropoutConfig{.prob = dropout}.init()};
    std::int64_t in = d_input;
    for (const std::int64_t width : hidden) {
      m.hidden.push_back(nn::LinearConfig{.d_input = in, .d_output = width}.init<B>(device));
      in = width;
    }
    m.head = nn::LinearConfig{.d_input = in, .d_output = num_classes}.init<B>(device);
    return m;
  }
};
EMBER_CONFIG(MlpConfig, d_input, hidden, num_classes, dropout)

/// Two blocks of Conv2d 3x3 (padding 1) -> BatchNorm -> ReLU -> MaxPool 2x2, then
/// Linear -> ReLU -> Dropout -> Linear. For 28x28 inputs and channels {32, 64}:
/// [N, 1, 28, 28] -> [N, 32, 14, 14] -> [N, 64, 7, 7] -> [N, 128] -> [N, 10].
template <Backend B = Dispatch>
struct Cnn {
  nn::Conv2d<B> conv1;
  nn::BatchNorm<B> bn1;
  nn::Conv2d<B> conv2;
  nn::BatchNorm<B> bn2;
  nn::Linear<B> fc1, fc2;
  nn::MaxPool2d pool;
  nn::Dropout dropout;
  EMBER_MODULE(conv1, bn1, conv2, bn2, fc1, fc2, pool, dropout)

  /// [N, C, H, W] -> [N, num_classes].
  Tensor<B, 2> forward(const Tensor<B, 4>& images) const {
    auto h = pool.forward(activation::relu(bn1.forward(conv1.forward(images))));
    h = pool.forward(activation::relu(bn2.forward(conv2.forward(h))));
    auto f = dropout.forward(activation::relu(fc1.forward(h.template flatten<2>(1, 3))));
    return fc2.forward(f);
  }
};

/// Config of Cnn: input channels and square image size (divisible by 4), the channels of
/// the two conv blocks, the hidden width of the classifier and its dropout.
struct CnnConfig {
  std::int64_t in_channels = 1;
  std::int64_t image_size = 28;
  std::vector<std::int64_t> channels = {32, 64};
  std::int64_t d_hidden = 128;
  std::int64_t num_classes = 10;
  double dropout = 0.25;

  /// Throws ValueError for a bad size (channels must hold two values).
  template <Backend B = Dispatch>
  Cnn<B> init(const typename B::Device& device = {}) const {
    if (channels.size() != 2 || image_size % 4 != 0 || image_size <= 0) {
      ember::detail::fail<ValueError>("CnnConfig",
                                      "needs two conv channel counts and an image size that is "
                                      "a positive multiple of 4");
    }
    const auto conv = [&](std::int64_t in, std::int64_t out) {
      return nn::Conv2dConfig{.channels = {in, out},
                              .kernel_size = {3, 3},
                              .padding = nn::PaddingConfig2d::explicit_(1, 1)}
          .init<B>(device);
    };
    const std::int64_t side = image_size / 4;
    return Cnn<B>{
        conv(in_channels, channels[0]),
        nn::BatchNormConfig{.num_features = channels[0]}.init<B>(device),
        conv(channels[0], channels[1]),
        nn::BatchNormConfig{.num_features = channels[1]}.init<B>(device),
        nn::LinearConfig{.d_input = channels[1] * side * side, .d_output = d_hidden}.init<B>(
            device),
        nn::LinearConfig{.d_input = d_hidden, .d_output = num_classes}.init<B>(device),
        nn::MaxPool2dConfig{.kernel_size = {2, 2}}.init(),
        nn::DropoutConfig{.prob = dropout}.init()};
  }
};
EMBER_CONFIG(CnnConfig, in_channels, image_size, channels, d_hidden, num_classes, dropout)

/// The names of the built-in models, for --model.
inline const std::vector<std::string>& model_names() {
  static const std::vector<std::string> names = {"cnn", "mlp"};
  return names;
}

/// A model choice as a run directory records it: {"name": "cnn", "config": {...}}.
struct ModelSpec {
  std::string name = "cnn";
  nlohmann::json config = nlohmann::json::object();

  /// The built-in model `name` with its default config for images [channels, size, size].
  /// Throws ValueError for an unknown name.
  static ModelSpec defaults(const std::string& name, std::int64_t channels, std::int64_t size,
                            std::int64_t num_classes);
  /// {"name", "config"}.
  nlohmann::json to_json() const { return {{"name", name}, {"config", config}}; }
  /// Inverse of to_json(); ValueError when a key is missing or the name is unknown.
  static ModelSpec from_json(const nlohmann::json& j);
};

/// Calls `f(model)` with the built-in model of `spec` created on `device` (Cnn<> or Mlp<>),
/// and returns what f returns (both calls must return one type). Throws ValueError for an
/// unknown name or a config that does not convert.
template <class F>
decltype(auto) with_model(const ModelSpec& spec, const Device& device, F&& f) {
  if (spec.name == "cnn") {
    return std::forward<F>(f)(nn::config_from_json<CnnConfig>(spec.config).init(device));
  }
  if (spec.name == "mlp") {
    return std::forward<F>(f)(nn::config_from_json<MlpConfig>(spec.config).init(device));
  }
  ember::detail::fail<ValueError>("model", "unknown model '", spec.name, "' (built in: cnn, mlp)");
}

inline ModelSpec ModelSpec::defaults(const std::string& name, std::int64_t channels,
                                     std::int64_t size, std::int64_t num_classes) {
  if (name == "cnn") {
    return {name, nn::config_to_json(CnnConfig{
                      .in_channels = channels, .image_size = size, .num_classes = num_classes})};
  }
  if (name == "mlp") {
    return {name, nn::config_to_json(
                      MlpConfig{.d_input = channels * size * size, .num_classes = num_classes})};
  }
  ember::detail::fail<ValueError>("model", "unknown model '", name, "' (built in: cnn, mlp)");
}

inline ModelSpec ModelSpec::from_json(const nlohmann::json& j) {
  if (!j.is_object() || !j.contains("name") || !j.contains("config") || !j["name"].is_string()) {
    ember::detail::fail<ValueError>("model", "expected {\"name\": ..., \"config\": {...}}, got ",
                                    j.dump());
  }
  ModelSpec s{j["name"].get<std::string>(), j["config"]};
  if (s.name != "cnn" && s.name != "mlp") {
    ember::detail::fail<ValueError>("model", "unknown model '", s.name, "' (built in: cnn, mlp)");
  }
  return s;
}

}  // namespace ember::models
