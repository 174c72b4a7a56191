// Autodiff<Cpu> benchmarks.
//
// BM_autodiff_chain/N: forward + backward of a chain of N small element-wise ops on [8, 8]
//   f32 tensors (mul by a tensor, tanh, add a tensor, sin, repeated), i.e. the per-op
//   overhead of recording and running the graph. benchmarks/torch_autodiff.py runs the same
//   chain with torch.autograd.
// BM_mlp_step/ckpt: one training step (forward, backward) of an MLP 784-1024-1024-10 with
//   GELU at batch 256, without (0) and with (1) gradient checkpointing; the counter
//   peak_MiB is the most CPU tensor memory held at once during the step.
#include <benchmark/benchmark.h>

#include "ember/autodiff/cpu.hpp"
#include "ember/tensor/activation.hpp"
#include "ember/tensor/loss.hpp"
#include "ember/tensor/tensor.hpp"

namespace {

using ember::Autodiff;
using ember::Cpu;
using ember::Tensor;
using AD = Autodiff<Cpu>;

void BM_autodiff_chain(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  Cpu::seed(1);
  auto x0 = Tensor<AD, 2>::random({8, 8});
  auto c = Tensor<AD, 2>::random({8, 8});
  for (auto _ : state) {
    auto x = x0.require_grad();
    auto y = x;
    for (int i = 0; i < n; ++i) {
      switch (i % 4) {
        case 0:
          y = y * c;
          break;
        case 1:
          y = y.tanh();
          break;
        case 2:
          y = y + c;
          break;
        default:
          y = y.sin();
          break;
      }
    }
    auto grads = y.sum().backward();
    benchmark::DoNotOptimize(x.grad(grads));
  }
}
BENCHMARK(BM_autodiff_chain)->Arg(1000)->Unit(benchmark::kMicrosecond);

void BM_mlp_step(benchmark::State& state) {
  const bool ckpt = state.range(0) != 0;
  Cpu::seed(2);
  using T2 = Tensor<AD, 2>;
  auto w1 = (T2::random({784, 1024}) * 0.05).require_grad();
  auto w2 = (T2::random({1024, 1024}) * 0.05).require_grad();
  auto w3 = (T2::random({1024, 10}) * 0.05).require_grad();
  auto b1 = T2::zeros({1, 1024}).require_grad();
  auto b2 = T2::zeros({1, 1024}).require_grad();
  auto x = T2::random({256, 784});
  auto target = Tensor<AD, 1, ember::Int>::from_data(
      ember::TensorData(std::vector<std::int64_t>(256, 3), ember::Shape({256})));
  double peak = 0;
  for (auto _ : state) {
    ember::cpu::reset_peak_memory();
    const auto base = ember::cpu::memory_stats().live_bytes;
    std::optional<ember::autodiff::Checkpointing> scope;
    if (ckpt) scope.emplace();
    auto h1 = ember::activation::gelu(x.matmul(w1) + b1);
    auto h2 = ember::activation::gelu(h1.matmul(w2) + b2);
    auto logits = h2.matmul(w3);
    auto loss = ember::loss::cross_entropy_with_logits(logits, target);
    auto grads = loss.backward();
    benchmark::DoNotOptimize(w1.grad(grads));
    peak = static_cast<double>(ember::cpu::memory_stats().peak_bytes - base) / (1 << 20);
  }
  state.counters["peak_MiB"] = peak;
}
BENCHMARK(BM_mlp_step)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
