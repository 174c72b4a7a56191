// Fashion-MNIST without the Learner: the training loop written out (Burn's custom training
// loop example). Each step: forward, loss, backward, gradients by parameter, optimizer step
// with the scheduler's learning rate; after each epoch, accuracy of model.valid() on the test
// split.
//
//   custom-training-loop [--epochs N] [--items N]
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

#include "ember/data/batcher.hpp"
#include "ember/data/loader.hpp"
#include "ember/data/mnist.hpp"
#include "ember/nn.hpp"
#include "ember/optim/optim.hpp"

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
};

/// A Cnn on `device` (32 and 64 channels, 128 hidden units, dropout 0.25).
Cnn<> make_cnn(const Device& device) {
  const auto conv = [&](std::int64_t in, std::int64_t out) {
    return nn::Conv2dConfig{.channels = {in, out},
                            .kernel_size = {3, 3},
                            .padding = nn::PaddingConfig2d::explicit_(1, 1)}
        .init(device);
  };
  return {conv(1, 32),
          conv(32, 64),
          nn::BatchNormConfig{.num_features = 32}.init(device),
          nn::BatchNormConfig{.num_features = 64}.init(device),
          nn::LinearConfig{.d_input = 64 * 7 * 7, .d_output = 128}.init(device),
          nn::LinearConfig{.d_input = 128, .d_output = 10}.init(device),
          nn::MaxPool2dConfig{.kernel_size = {2, 2}}.init(),
          nn::DropoutConfig{.prob = 0.25}.init()};
}

/// A whole number from a command-line value; false when the text is not one.
bool parse_count(const char* text, std::size_t& out) {
  const char* end = text + std::strlen(text);
  const auto [last, error] = std::from_chars(text, end, out);
  return error == std::errc() && last == end && last != text;
}

int main(int argc, char** argv) {
  std::size_t epochs = 3, items = 0;
  for (int i = 1; i < argc; i += 2) {
    const std::string flag = argv[i];
    const char* value = i + 1 < argc ? argv[i + 1] : nullptr;
    bool ok = value != nullptr;
    if (ok && flag == "--epochs")
      ok = parse_count(value, epochs) && epochs > 0;
    else if (ok && flag == "--items")
      ok = parse_count(value, items);  // a subset, for a quick run
    else
      ok = false;
    if (!ok) {
      std::cerr << "usage: " << argv[0] << " [--epochs N] [--items N]\n";
      return 2;
    }
  }
  try {
    const Device device = Device::cpu().autodiff();
    Dispatch::seed(42);

    data::DatasetPtr<data::ImageU8> train_set = data::FashionMnist::train();
    data::DatasetPtr<data::ImageU8> test_set = data::FashionMnist::test();
    if (items > 0) {
      train_set = std::make_shared<data::PartialDataset<data::ImageU8>>(train_set, 0, items);
      test_set = std::make_shared<data::PartialDataset<data::ImageU8>>(
          test_set, 0, std::min(items, test_set->len()));
    }
    const data::Normalize normalize{{0.2860f}, {0.3530f}};
    auto train_loader = data::DataLoaderBuilder(data::ImageBatcher<Dispatch, float>(device))
                            .batch_size(64)
                            .shuffle(42)
                            .num_workers(1)
                            .build(data::mapped(train_set, normalize));
    auto test_loader =
        data::DataLoaderBuilder(data::ImageBatcher<Dispatch, float>(device.without_autodiff()))
            .batch_size(256)
            .build(data::mapped(test_set, normalize));

    Cnn<> model = make_cnn(device);
    auto optimizer = optim::AdamConfig{}.init();
    auto scheduler =
        optim::CosineAnnealingLrSchedulerConfig{
            .initial_lr = 2e-3,
            .num_iters = static_cast<std::int64_t>(epochs * train_loader.num_batches())}
            .init();
    const auto loss_fn = nn::CrossEntropyLossConfig{}.init(device);

    for (std::size_t epoch = 0; epoch < epochs; ++epoch) {
      const auto start = std::chrono::steady_clock::now();
      model.train();  // dropout on, batch norm uses batch statistics
      double loss_sum = 0;
      std::size_t seen = 0;
      for (auto& batch : train_loader.iter(epoch)) {  // a new shuffle every epoch
        auto logits = model.forward(batch.images);
        auto loss = loss_fn.forward(logits, batch.targets);
        auto grads = optim::GradientsParams::from_grads(loss.backward(), model);
        optimizer.step(scheduler.step(), model, grads);  // updates the model in place
        const auto n = static_cast<std::size_t>(batch.targets.dim(0));
        loss_sum += loss.into_scalar() * static_cast<double>(n);
        seen += n;
      }

      // Validation: the model without autodiff, in eval mode (running batch-norm statistics).
      const Cnn<> eval_model = model.valid();
      std::size_t correct = 0, total = 0;
      for (auto& batch : test_loader.iter()) {
        auto predicted = eval_model.forward(batch.images).argmax(1).squeeze_dim(1);  // [N]
        correct +=
            static_cast<std::size_t>(predicted.equal(batch.targets).int_().sum().into_scalar());
        total += static_cast<std::size_t>(batch.targets.dim(0));
      }
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::cout << "epoch " << epoch + 1 << "/" << epochs << ": train loss "
                << loss_sum / static_cast<double>(seen) << ", test accuracy "
                << 100.0 * static_cast<double>(correct) / static_cast<double>(total) << " % ("
                << seconds << " s)" << std::endl;
    }
    model.save("custom-loop.safetensors");
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
