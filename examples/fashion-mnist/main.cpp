// Fashion-MNIST with the Learner: what `ember train` does, in one file.
//
//   fashion-mnist [--epochs N] [--items N] [--run-dir DIR]
//
// A CNN with batch norm defined with the module API, the Fashion-MNIST IDX files from Debian's
// dataset-fashion-mnist package, a DataLoader with worker threads, and the Learner (metrics,
// dashboard, checkpoints; an earlier run in the folder is replaced); then the Evaluator on
// the test split.
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

#include "ember/data/batcher.hpp"
#include "ember/data/loader.hpp"
#include "ember/data/mnist.hpp"
#include "ember/nn.hpp"
#include "ember/optim/optim.hpp"
#include "ember/train/train.hpp"

using namespace ember;

/// conv 3x3 -> batch norm -> ReLU -> max pool, twice, then two linear layers.
template <Backend B = Dispatch>
struct Cnn {
  nn::Conv2d<B> conv1, conv2;
  nn::BatchNorm<B> bn1, bn2;
  nn::Linear<B> fc1, fc2;
  nn::MaxPool2d pool;
  nn::Dropout dropout;
  EMBER_MODULE(conv1, conv2, bn1, bn2, fc1, fc2, pool, dropout)

  /// [N, 1, 28, 28] -> [N, 10] logits.
  Tensor<B, 2> forward(const Tensor<B, 4>& x) const {
    auto h = pool.forward(activation::relu(bn1.forward(conv1.forward(x))));  // [N, 32, 14, 14]
    h = pool.forward(activation::relu(bn2.forward(conv2.forward(h))));       // [N, 64, 7, 7]
    auto f = dropout.forward(activation::relu(fc1.forward(h.template flatten<2>(1, 3))));
    return fc2.forward(f);
  }

  /// Loss and logits of a batch: what the Learner's train and valid steps return.
  train::ClassificationOutput<B> forward_classification(const data::ImageBatch<B>& batch) const {
    auto logits = forward(batch.images);
    auto loss =
        nn::CrossEntropyLossConfig{}.init(batch.images.device()).forward(logits, batch.targets);
    return {loss, logits, batch.targets};
  }
};

struct CnnConfig {
  std::int64_t channels1 = 32, channels2 = 64, hidden = 128;
  double dropout = 0.25;

  template <Backend B = Dispatch>
  Cnn<B> init(const typename B::Device& device = {}) const {
    const auto conv = [&](std::int64_t in, std::int64_t out) {
      return nn::Conv2dConfig{.channels = {in, out},
                              .kernel_size = {3, 3},
                              .padding = nn::PaddingConfig2d::explicit_(1, 1)}
          .init<B>(device);
    };
    return {conv(1, channels1),
            conv(channels1, channels2),
            nn::BatchNormConfig{.num_features = channels1}.init<B>(device),
            nn::BatchNormConfig{.num_features = channels2}.init<B>(device),
            nn::LinearConfig{.d_input = channels2 * 7 * 7, .d_output = hidden}.init<B>(device),
            nn::LinearConfig{.d_input = hidden, .d_output = 10}.init<B>(device),
            nn::MaxPool2dConfig{.kernel_size = {2, 2}}.init(),
            nn::DropoutConfig{.prob = dropout}.init()};
  }
};
EMBER_CONFIG(CnnConfig, channels1, channels2, hidden, dropout)

/// A whole number from a command-line value; false when the text is not one.
bool parse_count(const char* text, std::size_t& out) {
  const char* end = text + std::strlen(text);
  const auto [last, error] = std::from_chars(text, end, out);
  return error == std::errc() && last == end && last != text;
}

int main(int argc, char** argv) {
  std::size_t epochs = 5, items = 0;
  std::string run_dir = "runs/example-fashion-mnist";
  for (int i = 1; i < argc; i += 2) {
    const std::string flag = argv[i];
    const char* value = i + 1 < argc ? argv[i + 1] : nullptr;
    bool ok = value != nullptr;
    if (ok && flag == "--epochs")
      ok = parse_count(value, epochs) && epochs > 0;
    else if (ok && flag == "--items")
      ok = parse_count(value, items);  // a subset, for a quick run
    else if (ok && flag == "--run-dir")
      run_dir = value;
    else
      ok = false;
    if (!ok) {
      std::cerr << "usage: " << argv[0] << " [--epochs N] [--items N] [--run-dir DIR]\n";
      return 2;
    }
  }
  try {
    const Device device = Device::cpu().autodiff();  // training records gradients
    const std::uint64_t seed = 42;
    Dispatch::seed(seed);

    // Data: uint8 images -> normalised float images -> batches [N, 1, 28, 28] on a device.
    data::DatasetPtr<data::ImageU8> train_set = data::FashionMnist::train();
    data::DatasetPtr<data::ImageU8> test_set = data::FashionMnist::test();
    if (items > 0) {
      train_set = std::make_shared<data::PartialDataset<data::ImageU8>>(train_set, 0, items);
      test_set = std::make_shared<data::PartialDataset<data::ImageU8>>(
          test_set, 0, std::min(items, test_set->len()));
    }
    const data::Normalize normalize{{0.2860f}, {0.3530f}};
    auto loader = [&](data::DatasetPtr<data::ImageU8> ds, const Device& dev, bool shuffle) {
      auto builder = data::DataLoaderBuilder(data::ImageBatcher<Dispatch, float>(dev))
                         .batch_size(64)
                         .num_workers(1);
      if (shuffle) builder.shuffle(seed);
      return builder.build(data::mapped(ds, normalize));
    };
    auto train_loader = loader(train_set, device, true);
    auto test_loader = loader(test_set, device.without_autodiff(), false);

    // The Learner: Adam with a cosine schedule over all steps, metrics, checkpoints.
    const CnnConfig config{};
    using Batch = data::ImageBatch<>;
    auto learner =
        train::LearnerBuilder(config.init(device), optim::AdamConfig{}.init(), train_loader,
                              test_loader)
            .train_step([](Cnn<>& m, const Batch& b) { return m.forward_classification(b); })
            .valid_step([](const Cnn<>& m, const Batch& b) { return m.forward_classification(b); })
            .lr_scheduler(optim::CosineAnnealingLrSchedulerConfig{
                .initial_lr = 2e-3,
                .num_iters = static_cast<std::int64_t>(epochs * train_loader.num_batches())}
                              .init())
            .metric(train::LossMetric{})
            .metric(train::AccuracyMetric{})
            .metric(train::LearningRateMetric{})
            .metric(train::ThroughputMetric{})
            .num_epochs(epochs)
            .seed(seed)
            .run_dir(run_dir)
            .overwrite()
            .model_config(nn::config_to_json(config))
            .build();
    Cnn<> trained = learner.fit();

    // Test accuracy and the confusion matrix (written to RUN_DIR/confusion_matrix.csv).
    std::vector<std::string> names;
    for (auto n : data::FashionMnist::class_names()) names.emplace_back(n);
    const auto report =
        train::Evaluator(trained.valid(),
                         [](const Cnn<>& m, const Batch& b) { return m.forward_classification(b); })
            .class_names(names)
            .output_dir(run_dir)
            .eval(test_loader);
    trained.save(run_dir + "/model.safetensors", {{"config", nn::config_to_json(config).dump()}});
    std::cout << "test accuracy " << 100.0 * report.accuracy() << " %\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
