// Module::load of a 400 MiB weights file (100 f32 tensors [1024, 1024], keys "w.0" .. "w.99")
// into a module on Dispatch (cpu), from a file in the page cache: one iteration is one load.
// The files are made by benchmarks/weights_load.py (which also times torch.load on them and
// prints both side by side); this binary reads them from EMBER_WEIGHTS_DIR (default
// /tmp/ember-weights-bench) and skips a file that is missing.
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

BENCHMARK_CAPTURE(BM_module_load, pt, "weights.pt")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_module_load, safetensors, "weights.safetensors")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
