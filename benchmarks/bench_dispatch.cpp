// Dispatch overhead: the same ops on Tensor<Cpu, D> and on DTensor<D> (Dispatch on the cpu
// device). Small shapes ([8, 8]) show the per-op cost of the run-time forwarding; large
// ones (1M floats) show that the kernels are the same. Threads: EMBER_NUM_THREADS.
#include <benchmark/benchmark.h>

#include "ember/cpu/cpu.hpp"
#include "ember/dispatch/dispatch.hpp"
#include "ember/tensor/activation.hpp"
#include "ember/tensor/module/nn.hpp"

using namespace ember;

namespace {

template <class B>
typename B::Device device() {
  if constexpr (std::is_same_v<B, Dispatch>)
    return Device::cpu();
  else
    return typename B::Device{};
}

template <class B, std::size_t D>
Tensor<B, D> rand(const Shape& s) {
  return Tensor<B, D>::random(s, Distribution::uniform(-4.0, 4.0), device<B>());
}

template <class B>
void BM_add(benchmark::State& state) {
  const auto n = state.range(0);
  auto x = rand<B, 2>(Shape{n, n}), y = rand<B, 2>(Shape{n, n});
  for (auto _ : state) {
    auto z = x + y;
    benchmark::DoNotOptimize(z);
  }
  state.SetItemsProcessed(state.iterations() * n * n);
}

template <class B>
void BM_add_1d(benchmark::State& state) {
  const auto n = state.range(0);
  auto x = rand<B, 1>(Shape{n}), y = rand<B, 1>(Shape{n});
  for (auto _ : state) {
    auto z = x + y;
    benchmark::DoNotOptimize(z);
  }
  state.SetItemsProcessed(state.iterations() * n);
}

template <class B>
void BM_mul_add_chain(benchmark::State& state) {  // 3 ops, temporaries reused in place
  auto x = rand<B, 2>(Shape{8, 8}), y = rand<B, 2>(Shape{8, 8});
  for (auto _ : state) {
    auto z = (x * y + x).exp();
    benchmark::DoNotOptimize(z);
  }
}

template <class B>
void BM_relu(benchmark::State& state) {
  const auto n = state.range(0);
  auto x = rand<B, 1>(Shape{n});
  for (auto _ : state) {
    auto z = activation::relu(x);
    benchmark::DoNotOptimize(z);
  }
  state.SetItemsProcessed(state.iterations() * n);
}

template <class B>
void BM_softmax(benchmark::State& state) {
  const auto n = state.range(0);
  auto x = rand<B, 2>(Shape{n, n});
  for (auto _ : state) {
    auto z = activation::softmax(x, -1);
    benchmark::DoNotOptimize(z);
  }
  state.SetItemsProcessed(state.iterations() * n * n);
}

template <class B>
void BM_sum(benchmark::State& state) {
  const auto n = state.range(0);
  auto x = rand<B, 1>(Shape{n});
  for (auto _ : state) {
    auto z = x.sum();
    benchmark::DoNotOptimize(z);
  }
  state.SetItemsProcessed(state.iterations() * n);
}

template <class B>
void BM_linear(benchmark::State& state) {
  const auto n = state.range(0);
  auto x = rand<B, 2>(Shape{n, n}), w = rand<B, 2>(Shape{n, n});
  auto b = rand<B, 1>(Shape{n});
  for (auto _ : state) {
    auto z = module::linear(x, w, b);
    benchmark::DoNotOptimize(z);
  }
}

}  // namespace

#define EMBER_BENCH_BOTH(fn, ...)           \
  BENCHMARK_TEMPLATE(fn, Cpu)->__VA_ARGS__; \
  BENCHMARK_TEMPLATE(fn, Dispatch)->__VA_ARGS__;

EMBER_BENCH_BOTH(BM_add, Arg(8))
EMBER_BENCH_BOTH(BM_add_1d, Arg(1 << 20))
EMBER_BENCH_BOTH(BM_mul_add_chain, Arg(8))
EMBER_BENCH_BOTH(BM_relu, Arg(64)->Arg(1 << 20))
EMBER_BENCH_BOTH(BM_softmax, Arg(8)->Arg(1024))
EMBER_BENCH_BOTH(BM_sum, Arg(64)->Arg(1 << 20))
EMBER_BENCH_BOTH(BM_linear, Arg(8)->Arg(256))

BENCHMARK_MAIN();
