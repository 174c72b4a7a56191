// Quantization benchmarks: the int8 Linear (QuantizedLinear, dynamic per-row activation
// quantization, AVX512-VNNI) against Ember's f32 Linear, on the Cpu backend.
//
//   BM_linear_f32/<out>x<in>/batch:<m>    module::linear, f32 weight [out, in]
//   BM_linear_int8/<out>x<in>/batch:<m>   QuantizedLinear (int8 per-channel weight), f32 out
//   BM_linear_int8_layer/...              nn::Linear after quant::quantize (int8 per channel)
//   BM_quantize/<rows>x<cols>             x.quantize(int8 per channel 0): parameters + values
//   BM_cnn/<scheme>/batch:<n>             the Fashion-MNIST CNN of `ember train` (inference,
//                                         eval mode): f32, quant::quantize with int8 per
//                                         channel (integer Linear kernels, dequantized convs)
//                                         and int4 blocks of 32 (weights only, dequantized);
//                                         "-static": inputs calibrated (static int8 Linear
//                                         kernels, fake-quantized conv inputs)
//
// Threads: EMBER_NUM_THREADS (default 2 here, to match benchmarks/torch_quant.py).
// Side by side with PyTorch (torch.ao.quantization.quantize_dynamic Linear and f32 Linear):
//   python3 benchmarks/compare_pytorch.py --threads 2 --filter 'linear|quantize'
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <string>

#include "ember/cpu/cpu.hpp"
#include "ember/models/classifiers.hpp"
#include "ember/quant/quantize.hpp"
#include "ember/tensor/module/nn.hpp"
#include "ember/tensor/tensor.hpp"

namespace {

using ember::Cpu;
using ember::Distribution;
using ember::QuantScheme;
using ember::Shape;
template <std::size_t D>
using T = ember::Tensor<Cpu, D>;

void report(benchmark::State& state, double flops_per_iter) {
  state.SetItemsProcessed(state.iterations());
  state.counters["GOP/s"] = benchmark::Counter(
      flops_per_iter * 1e-9 * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

void BM_linear_f32(benchmark::State& state, std::int64_t out, std::int64_t in, std::int64_t m) {
  const auto x = T<2>::random(Shape{m, in}, Distribution::normal(0, 1));
  const auto w = T<2>::random(Shape{out, in}, Distribution::uniform(-0.05, 0.05));
  const auto b = T<1>::random(Shape{out}, Distribution::normal(0, 1));
  for (auto _ : state) {
    auto y = ember::module::linear(x, w, b);
    benchmark::DoNotOptimize(y);
  }
  report(state, 2.0 * m * in * out);
}

void BM_linear_int8(benchmark::State& state, std::int64_t out, std::int64_t in, std::int64_t m) {
  const auto x = T<2>::random(Shape{m, in}, Distribution::normal(0, 1));
  const auto w = T<2>::random(Shape{out, in}, Distribution::uniform(-0.05, 0.05));
  const auto b = T<1>::random(Shape{out}, Distribution::normal(0, 1));
  const auto lin = ember::QuantizedLinear<Cpu>::from_float(w, b);
  for (auto _ : state) {
    auto y = lin.forward(x);
    benchmark::DoNotOptimize(y);
  }
  report(state, 2.0 * m * in * out);
}

/// The same Linear as a layer: nn::Linear after quant::quantize (int8 per channel), whose
/// forward starts from the stored QuantizedWeight.
void BM_linear_int8_layer(benchmark::State& state, std::int64_t out, std::int64_t in,
                          std::int64_t m) {
  const auto x = T<2>::random(Shape{m, in}, Distribution::normal(0, 1));
  const auto layer = ember::quant::quantize(
      ember::nn::LinearConfig{in, out}.init<Cpu>(),
      ember::quant::QuantizeConfig{.weights = QuantScheme::int8().per_channel(0)});
  for (auto _ : state) {
    auto y = layer.forward(x);
    benchmark::DoNotOptimize(y);
  }
  report(state, 2.0 * m * in * out);
}

void BM_quantize(benchmark::State& state, std::int64_t rows, std::int64_t cols) {
  const auto w = T<2>::random(Shape{rows, cols}, Distribution::normal(0, 1));
  for (auto _ : state) {
    auto q = w.quantize(QuantScheme::int8().per_channel(0));
    benchmark::DoNotOptimize(q);
  }
  state.SetItemsProcessed(state.iterations() * rows * cols);
}

void BM_cnn(benchmark::State& state, const char* scheme, std::int64_t n) {
  auto model = ember::models::CnnConfig{}.init<Cpu>().valid();
  const auto x = T<4>::random(Shape{n, 1, 28, 28}, Distribution::normal(0, 1));
  std::string name = scheme;
  const bool calibrated = name.ends_with("-static");
  if (calibrated) name.resize(name.size() - 7);
  if (name != "f32") {
    const ember::quant::QuantizeConfig cfg{.weights = ember::parse_quant_scheme(name),
                                           .activations = calibrated};
    if (calibrated) {
      model = ember::quant::quantize(model, cfg, [&](const auto& m) { (void)m.forward(x); });
    } else {
      model = ember::quant::quantize(model, cfg);
    }
  }
  for (auto _ : state) {
    auto y = model.forward(x);
    benchmark::DoNotOptimize(y);
  }
  state.SetItemsProcessed(state.iterations() * n);
}

}  // namespace

BENCHMARK_CAPTURE(BM_cnn, f32_256, "f32", 256)
    ->Name("BM_cnn/f32/batch:256")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_cnn, int8_256, "int8-per-channel", 256)
    ->Name("BM_cnn/int8-per-channel/batch:256")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_cnn, int8_static_256, "int8-per-channel-static", 256)
    ->Name("BM_cnn/int8-per-channel-static/batch:256")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_cnn, int4_256, "int4-block32", 256)
    ->Name("BM_cnn/int4-block32/batch:256")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_linear_f32, 4096x4096_64, 4096, 4096, 64)
    ->Name("BM_linear_f32/4096x4096/batch:64")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_linear_int8, 4096x4096_64, 4096, 4096, 64)
    ->Name("BM_linear_int8/4096x4096/batch:64")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_linear_int8_layer, 4096x4096_64, 4096, 4096, 64)
    ->Name("BM_linear_int8_layer/4096x4096/batch:64")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_linear_f32, 4096x4096_16, 4096, 4096, 16)
    ->Name("BM_linear_f32/4096x4096/batch:16")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_linear_int8, 4096x4096_16, 4096, 4096, 16)
    ->Name("BM_linear_int8/4096x4096/batch:16")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_linear_f32, 4096x4096_1, 4096, 4096, 1)
    ->Name("BM_linear_f32/4096x4096/batch:1")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_linear_int8, 4096x4096_1, 4096, 4096, 1)
    ->Name("BM_linear_int8/4096x4096/batch:1")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_quantize, 4096x4096, 4096, 4096)
    ->Name("BM_quantize/4096x4096")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

int main(int argc, char** argv) {
  const char* env = std::getenv("EMBER_NUM_THREADS");
  Cpu::set_num_threads(env ? std::atoi(env) : 2);
  benchmark::AddCustomContext("ember_threads", std::to_string(Cpu::num_threads()));
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
