// Activation family benchmarks (CPU backend). Names match benchmarks/torch_activation.py.
//   build/rel/benchmarks/bench_activation [--benchmark_filter=softmax]
// Threads: EMBER_NUM_THREADS (default: hardware concurrency); compare with
//   python3 benchmarks/torch_activation.py --threads N
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <functional>
#include <string>

#include "ember/cpu/cpu.hpp"
#include "ember/tensor/activation.hpp"
#include "ember/tensor/module/nn.hpp"

using namespace ember;
using T2 = Tensor<Cpu, 2>;

namespace {

void run(benchmark::State& state, std::int64_t rows, std::int64_t cols,
         const std::function<T2(const T2&)>& f) {
  Cpu::seed(1);
  const T2 x = T2::random(Shape{rows, cols}, Distribution::normal(0.0, 1.0));
  for (auto _ : state) {
    T2 y = f(x);
    benchmark::DoNotOptimize(y.primitive().raw());
  }
  state.SetItemsProcessed(state.iterations() * rows * cols);
}

void reg(const std::string& op, std::int64_t rows, std::int64_t cols,
         std::function<T2(const T2&)> f) {
  const std::string name = "BM_" + op + "/" + std::to_string(rows) + "x" + std::to_string(cols);
  benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& s) { run(s, rows, cols, f); })
      ->Unit(benchmark::kMicrosecond)
      ->UseRealTime();
}

const bool registered = [] {
  for (auto [r, c] : {std::pair<std::int64_t, std::int64_t>{64, 1000}, {1024, 1024}}) {
    reg("softmax", r, c, [](const T2& x) { return activation::softmax(x, -1); });
    reg("log_softmax", r, c, [](const T2& x) { return activation::log_softmax(x, -1); });
  }
  reg("softmax_dim0", 1024, 1024, [](const T2& x) { return activation::softmax(x, 0); });
  reg("relu", 1024, 1024, [](const T2& x) { return activation::relu(x); });
  reg("sigmoid", 1024, 1024, [](const T2& x) { return activation::sigmoid(x); });
  reg("gelu", 1024, 1024, [](const T2& x) { return activation::gelu(x); });
  reg("silu", 1024, 1024, [](const T2& x) { return activation::silu(x); });
  static const Tensor<Cpu, 1> w = Tensor<Cpu, 1>::ones(Shape{1024});
  static const Tensor<Cpu, 1> b = Tensor<Cpu, 1>::zeros(Shape{1024});
  reg("layer_norm", 1024, 1024, [](const T2& x) { return module::layer_norm(x, w, b); });
  return true;
}();

}  // namespace

BENCHMARK_MAIN();
