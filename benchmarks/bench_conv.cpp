// Conv family benchmarks. Items processed = multiply-adds of the convolution.
// Compare with benchmarks/torch_conv.py (same cases, PyTorch at the same thread count).
#include <benchmark/benchmark.h>

#include <cstdlib>

#include "ember/cpu/cpu.hpp"
#include "ember/tensor/module/conv.hpp"
#include "ember/tensor/tensor.hpp"

using namespace ember;
using B = Cpu;

namespace {

void set_threads() {
  const char* env = std::getenv("EMBER_NUM_THREADS");
  Cpu::set_num_threads(env ? std::atoi(env) : 2);
}

Tensor<B, 4> rand4(Shape s) {
  return Tensor<B, 4>::random(std::move(s));
}

void run_conv2d(benchmark::State& state, std::int64_t n, std::int64_t cin, std::int64_t cout,
                std::int64_t hw, std::int64_t k, std::int64_t stride, std::int64_t pad) {
  set_threads();
  auto x = rand4(Shape{n, cin, hw, hw});
  auto w = rand4(Shape{cout, cin, k, k});
  auto b = Tensor<B, 1>::random(Shape{cout});
  ConvOptions<2> o{{stride, stride}, {pad, pad}, {1, 1}, 1};
  std::int64_t macs = 0;
  for (auto _ : state) {
    auto y = module::conv2d(x, w, b, o);
    benchmark::DoNotOptimize(y);
    macs = y.numel() * cin * k * k;
  }
  state.SetItemsProcessed(state.iterations() * macs);
}

void BM_conv2d_cnn(benchmark::State& s) {
  run_conv2d(s, 64, 32, 64, 28, 3, 1, 1);
}
void BM_conv2d_stem(benchmark::State& s) {
  run_conv2d(s, 8, 3, 64, 224, 7, 2, 3);
}

void BM_conv2d_depthwise(benchmark::State& state) {
  set_threads();
  auto x = rand4(Shape{32, 64, 28, 28});
  auto w = rand4(Shape{64, 1, 3, 3});
  ConvOptions<2> o{{1, 1}, {1, 1}, {1, 1}, 64};
  for (auto _ : state) benchmark::DoNotOptimize(module::conv2d(x, w, std::nullopt, o));
  state.SetItemsProcessed(state.iterations() * 32 * 64 * 28 * 28 * 9);
}

void BM_conv_transpose2d_cnn(benchmark::State& state) {
  set_threads();
  auto x = rand4(Shape{64, 64, 14, 14});
  auto w = rand4(Shape{64, 32, 4, 4});
  ConvTransposeOptions<2> o{{2, 2}, {1, 1}, {0, 0}, {1, 1}, 1};
  for (auto _ : state) benchmark::DoNotOptimize(module::conv_transpose2d(x, w, std::nullopt, o));
  state.SetItemsProcessed(state.iterations() * 64 * 64 * 14 * 14 * 32 * 16);
}

void BM_conv3d_small(benchmark::State& state) {
  set_threads();
  auto x = Tensor<B, 5>::random(Shape{4, 16, 16, 16, 16});
  auto w = Tensor<B, 5>::random(Shape{32, 16, 3, 3, 3});
  ConvOptions<3> o{{1, 1, 1}, {1, 1, 1}, {1, 1, 1}, 1};
  for (auto _ : state) benchmark::DoNotOptimize(module::conv3d(x, w, std::nullopt, o));
  state.SetItemsProcessed(state.iterations() * 4 * 32 * 4096 * 16 * 27);
}

void BM_unfold4d_cnn(benchmark::State& state) {
  set_threads();
  auto x = rand4(Shape{64, 32, 28, 28});
  UnfoldOptions o{{1, 1}, {1, 1}, {1, 1}};
  for (auto _ : state) benchmark::DoNotOptimize(module::unfold4d(x, {3, 3}, o));
  state.SetItemsProcessed(state.iterations() * 64 * 32 * 9 * 784);
}

}  // namespace

BENCHMARK(BM_conv2d_cnn)
    ->Name("BM_conv2d/n64_c32_k64_28x28_3x3")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_conv2d_stem)
    ->Name("BM_conv2d/n8_c3_k64_224x224_7x7s2")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_conv2d_depthwise)
    ->Name("BM_conv2d/depthwise_n32_c64_28x28_3x3")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_conv_transpose2d_cnn)
    ->Name("BM_conv_transpose2d/n64_c64_k32_14x14_4x4s2")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_conv3d_small)
    ->Name("BM_conv3d/n4_c16_k32_16x16x16_3x3x3")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_unfold4d_cnn)
    ->Name("BM_unfold4d/n64_c32_28x28_3x3")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

BENCHMARK_MAIN();
