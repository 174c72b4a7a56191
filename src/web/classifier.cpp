// web::Classifier: a built-in `ember train` model (ember/models/classifiers.hpp) on the CPU
// backend.
#include "ember/web/classifier.hpp"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <utility>
#include <variant>

#include "ember/core/error.hpp"
#include "ember/cpu/cpu.hpp"
#include "ember/models/classifiers.hpp"
#include "ember/module/config.hpp"
#include "ember/module/module.hpp"
#include "ember/store/safetensors.hpp"

namespace ember::web {

namespace {

using B = Cpu;
using Model = std::variant<models::Cnn<B>, models::Mlp<B>>;

/// The JSON value at `key` of `j` as T, or a ValueError naming it.
template <class T>
T field(const nlohmann::json& j, const char* key) {
  if (!j.contains(key)) ember::detail::fail<ValueError>("web", "run.json has no '", key, "'");
  try {
    return j.at(key).get<T>();
  } catch (const nlohmann::json::exception&) {
    ember::detail::fail<ValueError>("web", "run.json: '", key,
                                    "' has the wrong type: ", j.at(key).dump());
  }
}

/// An integer field: a ValueError for 0.5 or "28" instead of truncating or converting.
std::int64_t int_field(const nlohmann::json& j, const char* key) {
  const auto v = field<nlohmann::json>(j, key);
  if (!v.is_number_integer()) {
    ember::detail::fail<ValueError>("web", "run.json: '", key, "' must be an integer, got ",
                                    v.dump());
  }
  return v.get<std::int64_t>();
}

}  // namespace

struct Classifier::Impl {
  models::ModelSpec spec;
  std::int64_t channels = 1, size = 28;
  float mean = 0, inv_std = 1;
  std::vector<std::string> classes;
  std::int64_t num_classes = 0;
  Model model;
};

Classifier::Classifier(std::span<const std::uint8_t> safetensors, std::string_view run_json) {
  // run.json: {"format": "ember-run", "model": {"name", "config"}, "data": {...}, ...}.
  nlohmann::json run;
  try {
    run = nlohmann::json::parse(run_json);
  } catch (const nlohmann::json::exception& e) {
    ember::detail::fail<ValueError>("web", "run.json is not JSON: ", e.what());
  }
  if (!run.is_object() || run.value("format", "") != "ember-run") {
    ember::detail::fail<ValueError>("web",
                                    "not a run.json of `ember train` (no \"format\": "
                                    "\"ember-run\")");
  }
  auto impl = std::make_unique<Impl>();
  impl->spec = models::ModelSpec::from_json(field<nlohmann::json>(run, "model"));
  const auto data = field<nlohmann::json>(run, "data");
  impl->channels = int_field(data, "channels");
  impl->size = int_field(data, "size");
  const auto mean = field<double>(data, "mean"), std = field<double>(data, "std");
  // Bounds keep channels * size * size itself within 32 bits; tensors too large for the
  // module's memory fail in alloc() with an OutOfMemoryError.
  constexpr std::int64_t kMaxSize = 4096, kMaxChannels = 64;
  if (impl->channels <= 0 || impl->channels > kMaxChannels || impl->size <= 0 ||
      impl->size > kMaxSize || !(std > 0) || !std::isfinite(std) || !std::isfinite(mean)) {
    ember::detail::fail<ValueError>(
        "web", "run.json: bad image shape or normalisation (data.channels ", impl->channels,
        ", data.size ", impl->size, ", data.mean ", mean, ", data.std ", std, "; expected 1..",
        kMaxChannels, " channels, a size of 1..", kMaxSize, ", finite mean and std > 0)");
  }
  // The same float arithmetic as `ember infer` (NormalizingBatcher).
  impl->mean = static_cast<float>(mean);
  impl->inv_std = static_cast<float>(1.0 / std);
  if (data.contains("classes")) impl->classes = field<std::vector<std::string>>(data, "classes");

  store::NamedTensors weights = store::read_safetensors(safetensors);
  // `ember train` records the model's spec in the file: a file of another run is named as such.
  if (const auto it = weights.metadata.find("config"); it != weights.metadata.end()) {
    models::ModelSpec stored;
    bool ours = true;
    try {
      stored = models::ModelSpec::from_json(nlohmann::json::parse(it->second));
    } catch (const std::exception&) {
      ours = false;  // not an `ember train` config: the load below checks keys and shapes
    }
    if (ours && (stored.name != impl->spec.name || stored.config != impl->spec.config)) {
      ember::detail::fail<ValueError>("web", "the weights hold a '", stored.name, "' model ",
                                      stored.config.dump(), " but run.json describes a '",
                                      impl->spec.name, "' model ", impl->spec.config.dump(),
                                      ": the files belong to different runs");
    }
  }
  // The image that run.json's data section describes must be the one the model takes.
  const auto check_input = [&](const char* what, std::int64_t want, const char* field_name,
                               std::int64_t got) {
    if (want != got) {
      ember::detail::fail<ValueError>("web", "run.json describes images of ", impl->channels, "x",
                                      impl->size, "x", impl->size, " (", what, " ", got,
                                      ") but the '", impl->spec.name, "' model's config has ",
                                      field_name, " = ", want);
    }
  };
  const auto load = [&](auto m) -> Model {
    nn::load_state_dict(m, weights);
    m.eval();
    return m;
  };
  if (impl->spec.name == "cnn") {
    const auto cfg = nn::config_from_json<models::CnnConfig>(impl->spec.config);
    check_input("channels", cfg.in_channels, "in_channels", impl->channels);
    check_input("size", cfg.image_size, "image_size", impl->size);
    impl->num_classes = cfg.num_classes;
    impl->model = load(cfg.init<B>());
  } else {
    const auto cfg = nn::config_from_json<models::MlpConfig>(impl->spec.config);
    check_input("channels x size x size", cfg.d_input, "d_input",
                impl->channels * impl->size * impl->size);
    impl->num_classes = cfg.num_classes;
    impl->model = load(cfg.init<B>());
  }
  for (auto c = static_cast<std::int64_t>(impl->classes.size()); c < impl->num_classes; ++c) {
    impl->classes.push_back(std::to_string(c));
  }
  impl_ = std::move(impl);
}

Classifier::~Classifier() = default;
Classifier::Classifier(Classifier&&) noexcept = default;
Classifier& Classifier::operator=(Classifier&&) noexcept = default;

std::vector<float> Classifier::predict(std::span<const float> pixels, std::size_t count) const {
  const Impl& s = *impl_;
  const auto per = static_cast<std::size_t>(s.channels * s.size * s.size);
  if (count == 0 || pixels.size() != count * per) {
    ember::detail::fail<ShapeError>("web", "expected ", count, " images of ", s.channels, "x",
                                    s.size, "x", s.size, " = ", count * per, " values, got ",
                                    pixels.size());
  }
  std::vector<float> x(pixels.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (!std::isfinite(pixels[i])) {
      ember::detail::fail<ValueError>("web", "pixel ", i % per, " of image ", i / per,
                                      " is not a finite number (", pixels[i],
                                      "): the input must hold values in [0, 1]");
    }
    x[i] = (pixels[i] - s.mean) * s.inv_std;
  }
  const auto n = static_cast<std::int64_t>(count);
  const auto input =
      Tensor<B, 4>::from_data(TensorData(std::move(x), Shape{n, s.channels, s.size, s.size}));
  const auto logits = std::visit([&](const auto& m) { return m.forward(input); }, s.model);
  const auto k = static_cast<std::size_t>(logits.dim(1));
  const auto values = logits.into_data().template to_vec<float>();
  std::vector<float> probs(values.size());
  for (std::size_t i = 0; i < count; ++i) {
    const float* row = values.data() + i * k;
    if (!std::all_of(row, row + k, [](float v) { return std::isfinite(v); })) {
      ember::detail::fail<ValueError>(
          "web", "the model's outputs for image ", i,
          " are not finite numbers: NaN or infinity in the weights (did its training diverge?), or "
          "pixels far outside [0, 1]");
    }
    // Softmax in double, as `ember infer`.
    const double mx = *std::max_element(row, row + k);
    double sum = 0;
    for (std::size_t c = 0; c < k; ++c) sum += std::exp(static_cast<double>(row[c]) - mx);
    for (std::size_t c = 0; c < k; ++c) {
      probs[i * k + c] = static_cast<float>(std::exp(static_cast<double>(row[c]) - mx) / sum);
    }
  }
  return probs;
}

const std::string& Classifier::model_name() const {
  return impl_->spec.name;
}
std::int64_t Classifier::channels() const {
  return impl_->channels;
}
std::int64_t Classifier::size() const {
  return impl_->size;
}
std::int64_t Classifier::num_classes() const {
  return impl_->num_classes;
}
const std::vector<std::string>& Classifier::classes() const {
  return impl_->classes;
}

}  // namespace ember::web
