// Reduce family benchmarks (Google Benchmark). Threads: EMBER_NUM_THREADS (default: all
// cores); compare with benchmarks/torch_reduce.py at the same thread count.
#include <benchmark/benchmark.h>

#include "ember/cpu/cpu.hpp"
#include "ember/tensor/tensor.hpp"

namespace {

using ember::Cpu;
using ember::Shape;
template <std::size_t D, class K = ember::Float>
using T = ember::Tensor<Cpu, D, K>;

T<2> randn2(std::int64_t r, std::int64_t c) {
  Cpu::seed(42);
  return T<2>::random(Shape{r, c}, ember::Distribution::normal(0.0, 1.0));
}

void BM_sum(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  Cpu::seed(42);
  const auto x = T<1>::random(Shape{n}, ember::Distribution::normal(0.0, 1.0));
  for (auto _ : state) benchmark::DoNotOptimize(x.sum());
  state.SetItemsProcessed(state.iterations() * n);
}

template <class F>
void bench_4096(benchmark::State& state, F f) {
  const auto x = randn2(4096, 4096);
  for (auto _ : state) benchmark::DoNotOptimize(f(x));
  state.SetItemsProcessed(state.iterations() * 4096 * 4096);
}

void BM_sort(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  Cpu::seed(42);
  const auto x = T<1>::random(Shape{n}, ember::Distribution::normal(0.0, 1.0));
  for (auto _ : state) benchmark::DoNotOptimize(x.sort(0));
  state.SetItemsProcessed(state.iterations() * n);
}

}  // namespace

BENCHMARK(BM_sum)->Arg(16777216)->Unit(benchmark::kMillisecond);

static const bool registered = [] {
  benchmark::RegisterBenchmark("BM_sum_dim_rows/4096x4096", [](benchmark::State& s) {
    bench_4096(s, [](const T<2>& x) { return x.sum_dim(1); });
  })->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_sum_dim_cols/4096x4096", [](benchmark::State& s) {
    bench_4096(s, [](const T<2>& x) { return x.sum_dim(0); });
  })->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_max_dim/4096x4096", [](benchmark::State& s) {
    bench_4096(s, [](const T<2>& x) { return x.max_dim(1); });
  })->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_argmax/4096x4096", [](benchmark::State& s) {
    bench_4096(s, [](const T<2>& x) { return x.argmax(1); });
  })->Unit(benchmark::kMillisecond);
  return true;
}();

BENCHMARK(BM_sort)->Arg(1048576)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
