// Pooling / interpolate / grid_sample benchmarks (compare with benchmarks/torch_pool.py).
#include <benchmark/benchmark.h>

#include "ember/cpu/cpu.hpp"
#include "ember/tensor/module/interpolate.hpp"
#include "ember/tensor/module/pool.hpp"

using namespace ember;
namespace m = ember::module;
using T4 = Tensor<Cpu, 4>;

namespace {

T4 input(std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w) {
  Cpu::seed(0);
  return T4::random(Shape{n, c, h, w});
}

void BM_max_pool2d(benchmark::State& state) {
  const auto x = input(8, 64, state.range(0), state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(m::max_pool2d(x, {3, 3}, {2, 2}, {1, 1}));
  state.SetItemsProcessed(state.iterations() * x.numel());
}
BENCHMARK(BM_max_pool2d)->Arg(56)->Unit(benchmark::kMicrosecond)->UseRealTime();

void BM_max_pool2d_with_indices(benchmark::State& state) {
  const auto x = input(8, 64, state.range(0), state.range(0));
  for (auto _ : state)
    benchmark::DoNotOptimize(m::max_pool2d_with_indices(x, {3, 3}, {2, 2}, {1, 1}));
  state.SetItemsProcessed(state.iterations() * x.numel());
}
BENCHMARK(BM_max_pool2d_with_indices)->Arg(56)->Unit(benchmark::kMicrosecond)->UseRealTime();

void BM_avg_pool2d(benchmark::State& state) {
  const auto x = input(8, 64, state.range(0), state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(m::avg_pool2d(x, {3, 3}, {2, 2}, {1, 1}));
  state.SetItemsProcessed(state.iterations() * x.numel());
}
BENCHMARK(BM_avg_pool2d)->Arg(56)->Unit(benchmark::kMicrosecond)->UseRealTime();

void BM_adaptive_avg_pool2d(benchmark::State& state) {
  const auto x = input(8, 512, state.range(0), state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(m::adaptive_avg_pool2d(x, {1, 1}));
  state.SetItemsProcessed(state.iterations() * x.numel());
}
BENCHMARK(BM_adaptive_avg_pool2d)->Arg(7)->Unit(benchmark::kMicrosecond)->UseRealTime();

void BM_interpolate_bilinear(benchmark::State& state) {
  const auto x = input(8, 64, state.range(0), state.range(0));
  const std::int64_t o = 2 * state.range(0);
  for (auto _ : state)
    benchmark::DoNotOptimize(m::interpolate(x, {o, o}, {InterpolateMode::Bilinear, false}));
  state.SetItemsProcessed(state.iterations() * 8 * 64 * o * o);
}
BENCHMARK(BM_interpolate_bilinear)->Arg(56)->Unit(benchmark::kMicrosecond)->UseRealTime();

void BM_interpolate_bicubic(benchmark::State& state) {
  const auto x = input(8, 64, state.range(0), state.range(0));
  const std::int64_t o = 2 * state.range(0);
  for (auto _ : state)
    benchmark::DoNotOptimize(m::interpolate(x, {o, o}, {InterpolateMode::Bicubic, false}));
  state.SetItemsProcessed(state.iterations() * 8 * 64 * o * o);
}
BENCHMARK(BM_interpolate_bicubic)->Arg(56)->Unit(benchmark::kMicrosecond)->UseRealTime();

void BM_grid_sample_2d(benchmark::State& state) {
  const std::int64_t s = state.range(0);
  const auto x = input(8, 64, s, s);
  const auto grid = T4::random(Shape{8, s, s, 2}, Distribution::uniform(-1, 1));
  for (auto _ : state) benchmark::DoNotOptimize(m::grid_sample_2d(x, grid));
  state.SetItemsProcessed(state.iterations() * x.numel());
}
BENCHMARK(BM_grid_sample_2d)->Arg(56)->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
