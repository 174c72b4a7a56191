// Data loader throughput on Fashion-MNIST's train split (Debian's dataset-fashion-mnist, or
// EMBER_FASHION_MNIST_DIR): one iteration is one epoch of 60000 images at batch 64 (938
// batches), shuffled, built into [64, 1, 28, 28] f32 + [64] i64 DTensors on the cpu device
// by 0 (consumer thread), 1 or 2 workers; with and without a random crop (padding 4) and
// flip per item. Counters: batches/s and items/s. Skipped when the dataset is missing.
#include <benchmark/benchmark.h>

#include <memory>

#include "ember/data/batcher.hpp"
#include "ember/data/image.hpp"
#include "ember/data/loader.hpp"
#include "ember/data/mnist.hpp"

using namespace ember;
using namespace ember::data;

namespace {

std::shared_ptr<MnistDataset> train_set() {
  static std::shared_ptr<MnistDataset> ds = [] {
    try {
      return FashionMnist::train();
    } catch (const IoError&) {
      return std::shared_ptr<MnistDataset>();
    }
  }();
  return ds;
}

void BM_fashion_mnist_epoch(benchmark::State& state) {
  auto ds = train_set();
  if (!ds) {
    state.SkipWithError("Fashion-MNIST is not installed (dataset-fashion-mnist)");
    return;
  }
  const auto workers = static_cast<std::size_t>(state.range(0));
  const bool augment = state.range(1) != 0;
  auto builder = DataLoaderBuilder(ImageBatcher<>(Device::cpu()))
                     .batch_size(64)
                     .shuffle(1)
                     .num_workers(workers);
  if (augment) {
    builder.augment(
        [](ImageU8 im, Rng& rng) {
          return HorizontalFlip{0.5}(RandomCrop{28, 28, 4}(im, rng), rng);
        },
        2);
  }
  auto loader = builder.build(ds);
  std::size_t epoch = 0, batches = 0;
  for (auto _ : state) {
    for (auto& batch : loader.iter(epoch++)) {
      benchmark::DoNotOptimize(batch.images);
      ++batches;
    }
  }
  state.counters["batches/s"] =
      benchmark::Counter(static_cast<double>(batches), benchmark::Counter::kIsRate);
  state.counters["items/s"] =
      benchmark::Counter(static_cast<double>(batches) * 64.0, benchmark::Counter::kIsRate);
}

}  // namespace

BENCHMARK(BM_fashion_mnist_epoch)
    ->ArgNames({"workers", "augment"})
    ->ArgsProduct({{0, 1, 2}, {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(3);

BENCHMARK_MAIN();
