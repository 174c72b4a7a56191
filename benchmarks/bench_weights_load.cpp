// Module::load of a 400 MiB weights file (100 f32 tensors [1024, 1024], keys "w.0" .. "w.99")
// into a module on Dispatch (cpu), from a file in the page cache: one iteration is one load.
// The files are made by benchmarks/weights_load.py (which also times torch.load on them and
// prints both side by side); this binary reads them from EMBER_WEIGHTS_DIR (default
// /tmp/ember-weights-bench) and skips a file that is missing. Each case is one load (the
// first of the process: the CPU buffer pool starts empty).
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "ember/nn.hpp"

using namespace ember;
namespace fs = std::filesystem;

namespace {

struct Weights {
  std::vector<nn::Param<DTensor<2>>> w;
  EMBER_MODULE(w)
};

fs::path weights_dir() {
  const char* env = std::getenv("EMBER_WEIGHTS_DIR");
  return env != nullptr && *env != '\0' ? fs::path(env) : fs::path("/tmp/ember-weights-bench");
}

Weights make_model() {
  Weights m;
  for (int i = 0; i < 100; ++i) m.w.emplace_back(DTensor<2>::zeros({1024, 1024}));
  return m;
}

void BM_module_load(benchmark::State& state, const char* file) {
  const fs::path path = weights_dir() / file;
  if (!fs::exists(path)) {
    state.SkipWithError(("missing " + path.string() + ": run benchmarks/weights_load.py").c_str());
    return;
  }
  for (auto _ : state) {
    state.PauseTiming();
    Weights m = make_model();  // a fresh model, as a program that loads its weights at start
    state.ResumeTiming();
    m.load(path);
    state.PauseTiming();
    if (m.w.back().val().into_data().as_span<float>()[7] != 7.0f) {  // the file's w.99[0, 7]
      state.SkipWithError("wrong values loaded");
      return;
    }
    m = Weights{};
    state.ResumeTiming();
  }
  state.SetBytesProcessed(state.iterations() * std::int64_t{100} * 1024 * 1024 * 4);
}

// The same, but the second load of the process into the same model (as torch.load run
// again in one Python process).
void BM_module_load_again(benchmark::State& state, const char* file) {
  const fs::path path = weights_dir() / file;
  if (!fs::exists(path)) {
    state.SkipWithError(("missing " + path.string() + ": run benchmarks/weights_load.py").c_str());
    return;
  }
  Weights m = make_model();
  m.load(path);
  for (auto _ : state) m.load(path);
  state.SetBytesProcessed(state.iterations() * std::int64_t{100} * 1024 * 1024 * 4);
}

// Reference: what Module::load did before issue 19, the whole file read into memory
// (read_weights) and then loaded all at once (load_state_dict keeps every new value until
// the end, so a second model's memory is allocated, page by page).
void BM_read_weights_then_load_state_dict(benchmark::State& state, const char* file) {
  const fs::path path = weights_dir() / file;
  if (!fs::exists(path)) {
    state.SkipWithError(("missing " + path.string() + ": run benchmarks/weights_load.py").c_str());
    return;
  }
  Weights m = make_model();
  for (auto _ : state) m.load_state_dict(store::read_weights(path));
  state.SetBytesProcessed(state.iterations() * std::int64_t{100} * 1024 * 1024 * 4);
}

// One load per run: the first load of a process, as a program loading its weights at start
// (benchmarks/weights_load.py runs the binary again for each repeat).
BENCHMARK_CAPTURE(BM_module_load, pt, "weights.pt")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(1);
BENCHMARK_CAPTURE(BM_module_load, safetensors, "weights.safetensors")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(1);

BENCHMARK_CAPTURE(BM_module_load_again, pt, "weights.pt")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(1);
BENCHMARK_CAPTURE(BM_module_load_again, safetensors, "weights.safetensors")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(1);
BENCHMARK_CAPTURE(BM_read_weights_then_load_state_dict, pt, "weights.pt")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(1);
BENCHMARK_CAPTURE(BM_read_weights_then_load_state_dict, safetensors, "weights.safetensors")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
