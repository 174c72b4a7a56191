// Fusion<Cpu> against the CPU backend's eager functions on element-wise chains (compare with
// benchmarks/torch_fusion.py, PyTorch eager, at the same thread count). Threads:
// EMBER_NUM_THREADS, default 2.
//
//   BM_gelu_custom/N          x * (erf(x / sqrt(2)) + 1) / 2, fused (Fusion<Cpu>)
//   BM_gelu_custom_unfused/N  the same five functions one by one (Cpu)
//   BM_softplus_scaled/N      log1p(exp(x * 0.5)) * 2 + y, fused / _unfused
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdlib>
#include <type_traits>

#include "ember/cpu/cpu.hpp"
#include "ember/fusion/cpu.hpp"
#include "ember/tensor/tensor.hpp"

using namespace ember;

namespace {

template <class B>
Tensor<B, 1> gelu_custom(const Tensor<B, 1>& x) {
  return x.mul(x.div_scalar(std::sqrt(2.0)).erf().add_scalar(1.0)).div_scalar(2.0);
}
template <class B>
Tensor<B, 1> softplus_scaled(const Tensor<B, 1>& x, const Tensor<B, 1>& y) {
  return x.mul_scalar(0.5).exp().log1p().mul_scalar(2.0).add(y);
}

template <class B>
Tensor<B, 1> input(std::int64_t n, std::uint64_t seed) {
  Cpu::seed(seed);
  return Tensor<B, 1>::from_data(
      Tensor<Cpu, 1>::random(Shape{n}, Distribution::uniform(-4.0, 4.0)).into_data());
}

/// The value computed (Fusion runs its pending chain here).
template <class B>
const void* computed(const Tensor<B, 1>& t) {
  if constexpr (std::is_same_v<B, Fusion<Cpu>>)
    return Fusion<Cpu>::float_value(t.primitive()).storage.get();
  else
    return t.primitive().storage.get();
}

template <class B>
void BM_gelu(benchmark::State& state) {
  const auto x = input<B>(state.range(0), 1);
  for (auto _ : state) {
    auto y = gelu_custom(x);
    benchmark::DoNotOptimize(computed(y));
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
template <class B>
void BM_softplus(benchmark::State& state) {
  const auto x = input<B>(state.range(0), 1), y = input<B>(state.range(0), 2);
  for (auto _ : state) {
    auto z = softplus_scaled(x, y);
    benchmark::DoNotOptimize(computed(z));
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

}  // namespace

BENCHMARK(BM_gelu<Fusion<Cpu>>)
    ->Name("BM_gelu_custom")
    ->Arg(1 << 24)
    ->Arg(1 << 16)
    ->Arg(1 << 10)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_gelu<Cpu>)
    ->Name("BM_gelu_custom_unfused")
    ->Arg(1 << 24)
    ->Arg(1 << 16)
    ->Arg(1 << 10)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_softplus<Fusion<Cpu>>)
    ->Name("BM_softplus_scaled")
    ->Arg(1 << 24)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_softplus<Cpu>)
    ->Name("BM_softplus_scaled_unfused")
    ->Arg(1 << 24)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

int main(int argc, char** argv) {
  const char* env = std::getenv("EMBER_NUM_THREADS");
  Cpu::set_num_threads(env ? std::atoi(env) : 2);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
