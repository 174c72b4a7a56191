// Training-step benchmark of the default Fashion-MNIST CNN (issue 5) on Autodiff<Cpu>.
//
// Model: Conv2d(1->32, 3x3, pad 1) - BatchNorm2d - ReLU - MaxPool2d(2) - Conv2d(32->64, 3x3,
// pad 1) - BatchNorm2d - ReLU - MaxPool2d(2) - flatten - Linear(3136->128) - ReLU - Dropout(0.25)
// - Linear(128->10), cross-entropy over class indices, Adam (lr 1e-3).
//
// BM_train_step/batch:N   forward + backward + Adam update of one batch of N random 28x28
//                         images; items/s = images/s. The CPU column of the training-step
//                         and fwd_bwd cases is the CPU time of all threads (process time):
//                         at 2 threads, compare it with 1 thread to see the threading cost
//                         apart from the waiting a loaded machine adds to the wall time.
// BM_train_step_dispatch/batch:N  the same on Dispatch's cpu+autodiff device.
// BM_train_step_fusion/batch:N    the same on Autodiff<Fusion<Cpu>> (element-wise chains of
//                         forward, backward and the Adam update fused; docs/fusion.md).
// BM_fwd_bwd/batch:N      forward + backward only (no optimizer).
// BM_conv_fwd/<layer>/N   the conv's forward on the inner backend (Cpu).
// BM_conv_dx/<layer>/N    backward of that conv into its input only (x tracked, w not);
// BM_conv_dw/<layer>/N    ... into its weight only. Only backward() is timed (manual time):
//                         the forward is built outside the timed region and the output
//                         gradient is all ones.
// BM_maxpool_bwd, BM_bn_fwd_bwd, BM_ce_fwd_bwd, BM_adam_step: the other parts of the step.
// EMBER_BENCH_CLOCK=process times the manual cases in CPU time of all threads.
// layer1 = x [N, 1, 28, 28] * w [32, 1, 3, 3]; layer2 = x [N, 32, 14, 14] * w [64, 32, 3, 3].
//
// benchmarks/torch_train_cnn.py runs the same cases in PyTorch (same names). Run with
// EMBER_NUM_THREADS=2 (the default here) to compare with torch.set_num_threads(2).
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

#include "ember/autodiff/cpu.hpp"
#include "ember/autodiff/fusion_cpu.hpp"
#include "ember/dispatch/dispatch.hpp"
#include "ember/module/module.hpp"
#include "ember/nn/loss.hpp"
#include "ember/optim/optim.hpp"
#include "ember/tensor/activation.hpp"
#include "ember/tensor/module/conv.hpp"
#include "ember/tensor/module/pool.hpp"
#include "ember/tensor/tensor.hpp"
#include "train_cnn_model.hpp"

namespace {

using namespace ember;
using AD = Autodiff<Cpu>;
using bench::Cnn;

/// The clock of the manually timed cases: wall time, or with EMBER_BENCH_CLOCK=process the
/// CPU time of all threads (for a machine shared with other work, at 1 thread).
double clock_seconds() {
  static const bool process = [] {
    const char* v = std::getenv("EMBER_BENCH_CLOCK");
    return v && std::string(v) == "process";
  }();
  if (process) {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void set_threads() {
  const char* env = std::getenv("EMBER_NUM_THREADS");
  Cpu::set_num_threads(env ? std::atoi(env) : 2);
}

/// A random batch: images [n, 1, 28, 28] in [0, 1) and labels [n] in [0, 10).
template <Backend B>
struct Batch {
  Tensor<B, 4> x;
  Tensor<B, 1, Int> y;
};
template <Backend B = AD>
Batch<B> make_batch(std::int64_t n, const typename B::Device& dev = {}) {
  std::vector<std::int64_t> labels(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) labels[static_cast<std::size_t>(i)] = (i * 7 + 3) % 10;
  return {Tensor<B, 4>::random(Shape{n, 1, 28, 28}, Distribution::default_(), dev),
          Tensor<B, 1, Int>::from_data(TensorData(std::move(labels), Shape{n}), dev)};
}

/// Forward + backward + Adam on backend B (device `dev`).
template <Backend B>
void train_steps(benchmark::State& state, const typename B::Device& dev) {
  set_threads();
  Cpu::seed(1);
  const std::int64_t n = state.range(0);
  auto model = Cnn<B>::init(dev);
  auto opt = optim::AdamConfig{}.init();
  const Batch<B> b = make_batch<B>(n, dev);
  for (auto _ : state) {
    auto loss = nn::loss::cross_entropy(model.forward(b.x), b.y);
    auto grads = optim::GradientsParams::from_grads(loss.backward(), model);
    opt.step(1e-3, model, grads);
  }
  state.SetItemsProcessed(state.iterations() * n);
}

void BM_train_step(benchmark::State& state) {
  train_steps<AD>(state, {});
}
/// The same through Dispatch on the cpu+autodiff device (what applications and the CLI run).
void BM_train_step_dispatch(benchmark::State& state) {
  train_steps<Dispatch>(state, Device::cpu().autodiff());
}

/// The same with fusion (Autodiff<Fusion<Cpu>>).
void BM_train_step_fusion(benchmark::State& state) {
  train_steps<Autodiff<Fusion<Cpu>>>(state, {});
}

void BM_fwd_bwd(benchmark::State& state) {
  set_threads();
  AD::seed(1);
  const std::int64_t n = state.range(0);
  auto model = Cnn<AD>::init({});
  const Batch<AD> b = make_batch(n);
  for (auto _ : state) {
    auto loss = nn::loss::cross_entropy(model.forward(b.x), b.y);
    benchmark::DoNotOptimize(loss.backward());
  }
  state.SetItemsProcessed(state.iterations() * n);
}

// ---- single ops --------------------------------------------------------------------------

struct ConvCase {
  std::int64_t cin, cout, hw;
};
ConvCase conv_case(std::int64_t layer) {
  return layer == 1 ? ConvCase{1, 32, 28} : ConvCase{32, 64, 14};
}
const ConvOptions<2> kPad1{{1, 1}, {1, 1}, {1, 1}, 1};

void BM_conv_fwd(benchmark::State& state) {
  set_threads();
  const auto c = conv_case(state.range(0));
  const std::int64_t n = state.range(1);
  auto x = Tensor<Cpu, 4>::random(Shape{n, c.cin, c.hw, c.hw});
  auto w = Tensor<Cpu, 4>::random(Shape{c.cout, c.cin, 3, 3});
  auto bias = Tensor<Cpu, 1>::random(Shape{c.cout});
  for (auto _ : state) benchmark::DoNotOptimize(module::conv2d(x, w, bias, kPad1));
}

/// Times backward() of y = conv2d(x, w, b) with only x (`into_x`) or only w and b tracked.
void conv_bwd(benchmark::State& state, bool into_x) {
  set_threads();
  const auto c = conv_case(state.range(0));
  const std::int64_t n = state.range(1);
  auto x = Tensor<AD, 4>::random(Shape{n, c.cin, c.hw, c.hw});
  auto w = Tensor<AD, 4>::random(Shape{c.cout, c.cin, 3, 3});
  auto bias = Tensor<AD, 1>::random(Shape{c.cout});
  if (into_x) {
    x = x.require_grad();
  } else {
    w = w.require_grad();
    bias = bias.require_grad();
  }
  for (auto _ : state) {
    auto y = module::conv2d(x, w, bias, kPad1);
    const double t0 = clock_seconds();
    auto g = y.backward();
    benchmark::DoNotOptimize(g);
    state.SetIterationTime(clock_seconds() - t0);
  }
}
void BM_conv_dx(benchmark::State& state) {
  conv_bwd(state, true);
}
void BM_conv_dw(benchmark::State& state) {
  conv_bwd(state, false);
}

/// Times backward() of max_pool2d(x, 2) for x [n, c, hw, hw] (output gradient all ones).
void BM_maxpool_bwd(benchmark::State& state) {
  set_threads();
  const std::int64_t n = state.range(0), c = state.range(1), hw = state.range(2);
  auto x = Tensor<AD, 4>::random(Shape{n, c, hw, hw}).require_grad();
  for (auto _ : state) {
    auto y = module::max_pool2d(x, {2, 2}, {2, 2}, {0, 0}, {1, 1}, false);
    const double t0 = clock_seconds();
    auto g = y.backward();
    benchmark::DoNotOptimize(g);
    state.SetIterationTime(clock_seconds() - t0);
  }
}

/// Forward + backward of a training-mode BatchNorm2d on x [n, c, hw, hw] (x, weight, bias
/// tracked; loss = sum(y * r) with a fixed random r).
void BM_bn_fwd_bwd(benchmark::State& state) {
  set_threads();
  const std::int64_t n = state.range(0), c = state.range(1), hw = state.range(2);
  auto bn = nn::BatchNormConfig{.num_features = c}.init<AD>({});
  auto x = Tensor<AD, 4>::random(Shape{n, c, hw, hw}).require_grad();
  auto r = Tensor<AD, 4>::random(Shape{n, c, hw, hw});
  for (auto _ : state) benchmark::DoNotOptimize(bn.forward(x).mul(r).sum().backward());
  state.SetItemsProcessed(state.iterations() * n);
}

/// Forward + backward of cross-entropy on logits [n, 10].
void BM_ce_fwd_bwd(benchmark::State& state) {
  set_threads();
  const std::int64_t n = state.range(0);
  auto logits = Tensor<AD, 2>::random(Shape{n, 10}).require_grad();
  const Batch<AD> b = make_batch(n);
  for (auto _ : state) benchmark::DoNotOptimize(nn::loss::cross_entropy(logits, b.y).backward());
}

/// Adam's update of the CNN's parameters (gradients from one backward pass, reused).
void BM_adam_step(benchmark::State& state) {
  set_threads();
  AD::seed(1);
  auto model = Cnn<AD>::init({});
  auto opt = optim::AdamConfig{}.init();
  const Batch<AD> b = make_batch(64);
  auto loss = nn::loss::cross_entropy(model.forward(b.x), b.y);
  const auto grads = optim::GradientsParams::from_grads(loss.backward(), model);
  for (auto _ : state) opt.step(1e-3, model, grads);
}

}  // namespace

BENCHMARK(BM_train_step)
    ->ArgName("batch")
    ->Arg(64)
    ->Arg(256)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MeasureProcessCPUTime();
BENCHMARK(BM_train_step_dispatch)
    ->ArgName("batch")
    ->Arg(64)
    ->Arg(256)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MeasureProcessCPUTime();
BENCHMARK(BM_train_step_fusion)
    ->ArgName("batch")
    ->Arg(64)
    ->Arg(256)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MeasureProcessCPUTime();
BENCHMARK(BM_fwd_bwd)
    ->ArgName("batch")
    ->Arg(64)
    ->Arg(256)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MeasureProcessCPUTime();
BENCHMARK(BM_conv_fwd)
    ->ArgNames({"layer", "batch"})
    ->ArgsProduct({{1, 2}, {64, 256}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_conv_dx)
    ->ArgNames({"layer", "batch"})
    ->ArgsProduct({{2}, {64, 256}})
    ->Unit(benchmark::kMillisecond)
    ->UseManualTime();
BENCHMARK(BM_conv_dw)
    ->ArgNames({"layer", "batch"})
    ->ArgsProduct({{1, 2}, {64, 256}})
    ->Unit(benchmark::kMillisecond)
    ->UseManualTime();
BENCHMARK(BM_maxpool_bwd)
    ->ArgNames({"n", "c", "hw"})
    ->Args({256, 32, 28})
    ->Args({256, 64, 14})
    ->Unit(benchmark::kMillisecond)
    ->UseManualTime();
BENCHMARK(BM_bn_fwd_bwd)
    ->ArgNames({"n", "c", "hw"})
    ->Args({256, 32, 28})
    ->Args({256, 64, 14})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_ce_fwd_bwd)->ArgName("batch")->Arg(256)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_adam_step)->Unit(benchmark::kMillisecond)->UseRealTime();

BENCHMARK_MAIN();
