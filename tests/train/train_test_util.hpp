// Shared pieces of the ember::train tests: a tiny classifier, an in-memory loader of
// synthetic data, and temporary run folders.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "ember/nn.hpp"
#include "ember/optim/optim.hpp"
#include "ember/train/train.hpp"

namespace ember::train::testing {

/// Linear -> ReLU -> Dropout -> Linear.
template <Backend B = Dispatch>
struct TinyNet {
  nn::Linear<B> fc1, fc2;
  nn::Dropout dropout;
  EMBER_MODULE(fc1, fc2, dropout)

  /// [N, 4] -> [N, 3]
  Tensor<B, 2> forward(const Tensor<B, 2>& x) const {
    return fc2.forward(dropout.forward(activation::relu(fc1.forward(x))));
  }
};

inline constexpr std::int64_t kFeatures = 4, kClasses = 3;

/// A TinyNet on `device`, initialised from `seed`.
inline TinyNet<> make_net(const Device& device, std::uint64_t seed, double dropout = 0.0,
                          std::int64_t hidden = 8) {
  Dispatch::seed(seed);
  return {nn::LinearConfig{.d_input = kFeatures, .d_output = hidden}.init(device),
          nn::LinearConfig{.d_input = hidden, .d_output = kClasses}.init(device),
          nn::DropoutConfig{.prob = dropout}.init()};
}

/// A batch of features [N, 4] and classes [N].
struct XYBatch {
  DTensor<2> x;
  DTensor<1, Int> y;
};

/// Synthetic data: n items of 4 Gaussian features, class = argmax of a fixed linear map.
struct Data {
  std::vector<float> x;
  std::vector<std::int64_t> y;
  std::size_t n = 0;
};

inline std::shared_ptr<const Data> make_data(std::size_t n, std::uint32_t seed = 7) {
  auto d = std::make_shared<Data>();
  d->n = n;
  std::mt19937 gen(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const float w[3][4] = {
      {1.0f, -0.5f, 0.2f, 0.0f}, {-0.3f, 1.0f, 0.4f, -0.6f}, {0.2f, 0.1f, -1.0f, 0.8f}};
  for (std::size_t i = 0; i < n; ++i) {
    float f[4];
    for (float& v : f) v = normal(gen);
    std::int64_t best = 0;
    float best_score = -1e30f;
    for (int c = 0; c < 3; ++c) {
      float s = 0;
      for (int k = 0; k < 4; ++k) s += w[c][k] * f[k];
      if (s > best_score) {
        best_score = s;
        best = c;
      }
    }
    d->x.insert(d->x.end(), f, f + 4);
    d->y.push_back(best);
  }
  return d;
}

/// An in-memory loader with data::DataLoader's interface: epoch e visits the items in a
/// permutation seeded by (shuffle seed, e), or in order.
struct VecLoader {
  std::shared_ptr<const Data> data;
  std::size_t batch_size = 8;
  std::optional<std::uint64_t> shuffle{};
  Device device = Device::cpu();

  struct Epoch {
    std::shared_ptr<const Data> data;
    std::vector<std::size_t> order;
    std::size_t batch_size = 1, pos = 0;
    Device device;

    std::optional<XYBatch> next() {
      if (pos >= order.size()) return std::nullopt;
      const std::size_t end = std::min(order.size(), pos + batch_size);
      std::vector<float> xs;
      std::vector<std::int64_t> ys;
      for (std::size_t i = pos; i < end; ++i) {
        const std::size_t k = order[i];
        xs.insert(xs.end(), data->x.begin() + 4 * k, data->x.begin() + 4 * k + 4);
        ys.push_back(data->y[k]);
      }
      const auto n = static_cast<std::int64_t>(end - pos);
      pos = end;
      return XYBatch{DTensor<2>::from_data(TensorData(std::move(xs), Shape{n, kFeatures}), device),
                     DTensor<1, Int>::from_data(TensorData(std::move(ys), Shape{n}), device)};
    }
  };

  Epoch iter(std::size_t epoch) const {
    Epoch e{data, {}, batch_size, 0, device};
    e.order.resize(data->n);
    for (std::size_t i = 0; i < data->n; ++i) e.order[i] = i;
    if (shuffle) {
      std::mt19937_64 gen(*shuffle * 1000003ULL + epoch);
      std::shuffle(e.order.begin(), e.order.end(), gen);
    }
    return e;
  }
  std::size_t num_batches() const { return (data->n + batch_size - 1) / batch_size; }
  std::size_t num_items() const { return data->n; }
};

/// The classification step for TinyNet on any device.
inline ClassificationOutput<Dispatch> classify(const TinyNet<>& net, const XYBatch& b) {
  auto logits = net.forward(b.x);
  auto loss = nn::CrossEntropyLossConfig{}.init(b.x.device()).forward(logits, b.y);
  return {loss, logits, b.y};
}

/// A fresh, empty folder under the system temp folder, removed at destruction.
class TempDir {
 public:
  explicit TempDir(const std::string& tag) {
    std::string pattern =
        (std::filesystem::temp_directory_path() / ("ember-train-" + tag + "-XXXXXX")).string();
    path_ = ::mkdtemp(pattern.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

/// Every parameter of a module as host data, by path.
inline std::map<std::string, std::vector<double>> params_of(const TinyNet<>& m) {
  std::map<std::string, std::vector<double>> out;
  for (const auto& [k, v] : nn::state_dict(m)) out[k] = v.to_vec<double>();
  return out;
}

}  // namespace ember::train::testing
