// Element-wise benchmarks (compare with benchmarks/torch_elementwise.py at the same thread
// count). Threads: EMBER_NUM_THREADS, default 2.
#include <benchmark/benchmark.h>

#include <cstdlib>

#include "ember/cpu/cpu.hpp"
#include "ember/tensor/tensor.hpp"

using namespace ember;
using T1 = Tensor<Cpu, 1>;
using T2 = Tensor<Cpu, 2>;

namespace {

T1 rand1(std::int64_t n, double lo = -4.0, double hi = 4.0) {
  return T1::random(Shape{n}, Distribution::uniform(lo, hi));
}

void BM_exp(benchmark::State& state) {
  const auto n = state.range(0);
  auto x = rand1(n);
  for (auto _ : state) {
    auto y = x.exp();
    benchmark::DoNotOptimize(y.primitive().storage.get());
  }
  state.SetItemsProcessed(state.iterations() * n);
}
void BM_log(benchmark::State& state) {
  const auto n = state.range(0);
  auto x = rand1(n, 0.01, 100.0);
  for (auto _ : state) {
    auto y = x.log();
    benchmark::DoNotOptimize(y.primitive().storage.get());
  }
  state.SetItemsProcessed(state.iterations() * n);
}
void BM_tanh(benchmark::State& state) {
  const auto n = state.range(0);
  auto x = rand1(n);
  for (auto _ : state) {
    auto y = x.tanh();
    benchmark::DoNotOptimize(y.primitive().storage.get());
  }
  state.SetItemsProcessed(state.iterations() * n);
}
void BM_erf(benchmark::State& state) {
  const auto n = state.range(0);
  auto x = rand1(n);
  for (auto _ : state) {
    auto y = x.erf();
    benchmark::DoNotOptimize(y.primitive().storage.get());
  }
  state.SetItemsProcessed(state.iterations() * n);
}
void BM_add(benchmark::State& state) {
  const auto n = state.range(0);
  auto x = rand1(n), y = rand1(n);
  for (auto _ : state) {
    auto z = x + y;
    benchmark::DoNotOptimize(z.primitive().storage.get());
  }
  state.SetItemsProcessed(state.iterations() * n);
}
void BM_add_broadcast(benchmark::State& state) {
  const auto r = state.range(0), c = state.range(1);
  auto x = T2::random(Shape{r, c}, Distribution::uniform(-1, 1));
  auto b = T2::random(Shape{1, c}, Distribution::uniform(-1, 1));
  for (auto _ : state) {
    auto z = x + b;
    benchmark::DoNotOptimize(z.primitive().storage.get());
  }
  state.SetItemsProcessed(state.iterations() * r * c);
}
void BM_mul_add(benchmark::State& state) {
  const auto n = state.range(0);
  auto x = rand1(n), y = rand1(n), z = rand1(n);
  for (auto _ : state) {
    auto w = x * y + z;  // the temporary x * y is reused in place
    benchmark::DoNotOptimize(w.primitive().storage.get());
  }
  state.SetItemsProcessed(state.iterations() * n);
}
void BM_unary_small(benchmark::State& state) {
  const auto n = state.range(0);
  auto x = rand1(n);
  for (auto _ : state) {
    auto y = x.exp();
    benchmark::DoNotOptimize(y.primitive().storage.get());
  }
  state.SetItemsProcessed(state.iterations() * n);
}
void BM_add_transposed(benchmark::State& state) {
  const auto r = state.range(0);
  auto x = T2::random(Shape{r, r}, Distribution::uniform(-1, 1));
  auto y = T2::random(Shape{r, r}, Distribution::uniform(-1, 1));
  CpuTensor v = x.primitive();
  std::swap(v.shape[0], v.shape[1]);
  std::swap(v.strides[0], v.strides[1]);
  T2 xt(v);
  for (auto _ : state) {
    auto z = xt + y;
    benchmark::DoNotOptimize(z.primitive().storage.get());
  }
  state.SetItemsProcessed(state.iterations() * r * r);
}

}  // namespace

BENCHMARK(BM_exp)->Arg(16777216)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_log)->Arg(16777216)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_tanh)->Arg(16777216)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_erf)->Arg(16777216)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_add)->Arg(16777216)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_add_broadcast)->Args({4096, 4096})->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_mul_add)->Arg(16777216)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_add_transposed)->Arg(2048)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_unary_small)->Arg(1024)->UseRealTime();

int main(int argc, char** argv) {
  const char* env = std::getenv("EMBER_NUM_THREADS");
  Cpu::set_num_threads(env ? std::atoi(env) : 2);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
