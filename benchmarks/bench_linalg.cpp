// Linalg benchmarks: matmul through the Tensor front end on the Cpu backend.
//
//   BM_matmul/<n>                       [n, n] x [n, n], f32
//   BM_matmul_batched/64x64x64x128      b x m x k x n: [64, 64, 64] x [64, 64, 128], f32
//   BM_matmul_transposed/<n>            A^T x B with A^T a transposed view (no copy), f32
//
// Threads: EMBER_NUM_THREADS (default 2 here, to match benchmarks/torch_linalg.py).
// Counters: GFLOP/s (2 m n k per product); items = products.
// Compare with: python3 benchmarks/torch_linalg.py --threads 2
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <string>

#include "ember/cpu/cpu.hpp"
#include "ember/tensor/tensor.hpp"

extern "C" char* openblas_get_corename(void);  // OpenBLAS is linked through ember_cpu
extern "C" char* openblas_get_config(void);

namespace {

using ember::Cpu;
using ember::Shape;
template <std::size_t D>
using T = ember::Tensor<Cpu, D>;

void report(benchmark::State& state, double flops_per_iter) {
  state.SetItemsProcessed(state.iterations());
  state.counters["GFLOP/s"] = benchmark::Counter(
      flops_per_iter * 1e-9 * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

void BM_matmul(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  const auto a = T<2>::random(Shape{n, n}), b = T<2>::random(Shape{n, n});
  for (auto _ : state) {
    auto c = a.matmul(b);
    benchmark::DoNotOptimize(c);
  }
  report(state, 2.0 * n * n * n);
}

void BM_matmul_transposed(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  const auto at = T<2>::random(Shape{n, n}), b = T<2>::random(Shape{n, n});
  ember::CpuTensor p = at.primitive();  // transposed view: swap the strides
  std::swap(p.strides[0], p.strides[1]);
  const T<2> a(p);
  for (auto _ : state) {
    auto c = a.matmul(b);
    benchmark::DoNotOptimize(c);
  }
  report(state, 2.0 * n * n * n);
}

void BM_matmul_batched(benchmark::State& state, std::int64_t bs, std::int64_t m, std::int64_t k,
                       std::int64_t n) {
  const auto a = T<3>::random(Shape{bs, m, k}), b = T<3>::random(Shape{bs, k, n});
  for (auto _ : state) {
    auto c = a.matmul(b);
    benchmark::DoNotOptimize(c);
  }
  report(state, 2.0 * bs * m * n * k);
}

}  // namespace

BENCHMARK(BM_matmul)->Arg(256)->Arg(1024)->Arg(2048)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_matmul_transposed)->Arg(1024)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_matmul_batched, 64x64x64x128, 64, 64, 64, 128)
    ->Name("BM_matmul_batched/64x64x64x128")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

int main(int argc, char** argv) {
  const char* env = std::getenv("EMBER_NUM_THREADS");
  Cpu::set_num_threads(env ? std::atoi(env) : 2);
  benchmark::AddCustomContext("ember_threads", std::to_string(Cpu::num_threads()));
  benchmark::AddCustomContext("openblas_core", openblas_get_corename());
  benchmark::AddCustomContext("openblas_config", openblas_get_config());
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
