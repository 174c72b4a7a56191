// Autodiff<Cpu> benchmarks.
//
// BM_autodiff_chain/N: forward + backward of a chain of N small element-wise ops on [8, 8]
//   f32 tensors (mul by a tensor, tanh, add a tensor, sin, repeated), i.e. the per-op
//   overhead of recording and running the graph. benchmarks/torch_autodiff.py runs the same
//   chain with torch.autograd.
// BM_mlp_step/ckpt: one training step (forward, backward) of an MLP 784-512x6-10 with GELU
//   (exact, the front end's composite) at batch 512, without (0) and with (1) gradient
//   checkpointing; the counter peak_MiB is the most CPU tensor memory held at once during
//   the step on top of the parameters and the input.
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
  constexpr int kDepth = 6, kWidth = 512, kBatch = 512;
  std::vector<T2> weights, biases;
  for (int l = 0; l < kDepth; ++l) {
    weights.push_back((T2::random({l == 0 ? 784 : kWidth, kWidth}) * 0.05).require_grad());
    biases.push_back(T2::zeros({1, kWidth}).require_grad());
  }
  auto head = (T2::random({kWidth, 10}) * 0.05).require_grad();
  auto x = T2::random({kBatch, 784});
  auto target = Tensor<AD, 1, ember::Int>::from_data(
      ember::TensorData(std::vector<std::int64_t>(kBatch, 3), ember::Shape({kBatch})));
  double peak = 0;
  for (auto _ : state) {
    ember::cpu::reset_peak_memory();
    const auto base = ember::cpu::memory_stats().live_bytes;
    std::optional<ember::autodiff::Checkpointing> scope;
    if (ckpt) scope.emplace();
    auto h = x;
    for (int l = 0; l < kDepth; ++l) h = ember::activation::gelu(h.matmul(weights[l]) + biases[l]);
    auto loss = ember::loss::cross_entropy_with_logits(h.matmul(head), target);
    h = T2::zeros({1, 1});  // the graph alone holds what backward needs
    auto grads = loss.backward();
    benchmark::DoNotOptimize(head.grad(grads));
    peak = static_cast<double>(ember::cpu::memory_stats().peak_bytes - base) / (1 << 20);
  }
  state.counters["peak_MiB"] = peak;
}
BENCHMARK(BM_mlp_step)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
