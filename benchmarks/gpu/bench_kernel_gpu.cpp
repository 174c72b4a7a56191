// GPU benchmarks of kernels written in ember::kernel (Google Benchmark, manual time from the
// device's timers): copy and tanh over 1 GiB of f32 (the launch shape autotuned with
// ember::tune), and 10,000 launches of a tiny kernel. Runs on the first CUDA device and the
// first Vulkan device; side_by_side.py runs PyTorch's equivalents and prints the ratios.
//
//   bench_kernel_gpu --benchmark_out=ember.json --benchmark_out_format=json
//   EMBER_BENCH_BYTES (default 1 GiB) sets the buffer size.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "ember/kernel/builder.hpp"
#include "ember/kernel/device.hpp"
#include "ember/kernel/passes.hpp"
#include "ember/tune/tune.hpp"
#ifdef EMBER_HAVE_CUDA
#include "ember/cuda/cuda.hpp"
#endif
#ifdef EMBER_HAVE_VULKAN
#include "ember/vulkan/vulkan.hpp"
#endif

using namespace ember::kernel;

namespace {

std::size_t bench_bytes() {
  const char* b = std::getenv("EMBER_BENCH_BYTES");
  return b ? std::stoull(b) : (std::size_t{1} << 30);
}

/// y = f(x) over n floats: each thread handles `unroll` vectors of `lanes`, the vectors of a
/// workgroup interleaved so that the accesses of a warp are contiguous. Launched with an exact
/// cover, so the bounds checks are removed.
Kernel streaming(bool tanh_op, bool contract, int lanes, std::uint32_t wg, std::uint32_t unroll) {
  KernelBuilder kb(std::string(tanh_op ? "tanh" : "copy") + (contract ? "_fma" : "") + "_l" +
                       std::to_string(lanes) + "_w" + std::to_string(wg) + "_u" +
                       std::to_string(unroll),
                   {wg, 1, 1});
  kb.allow_contraction(contract);
  Mem x = kb.buffer("x", Elem::F32, Access::Read);
  Mem y = kb.buffer("y", Elem::F32, Access::Write);
  Val base =
      (kb.block_idx(0) + kb.grid_dim(0) * kb.block_idx(1)) * (wg * unroll) + kb.thread_idx(0);
  std::vector<Val> v;
  for (std::uint32_t u = 0; u < unroll; ++u)
    v.push_back(x.load(base + u * wg, lanes));  // loads first
  for (std::uint32_t u = 0; u < unroll; ++u) {
    Val r = tanh_op ? tanh(v[u]) : v[u];
    kb.if_in_bounds(base + u * wg, y.len() / static_cast<std::uint32_t>(lanes),
                    [&] { y.store(base + u * wg, r); });
  }
  Kernel k = kb.build();
  assume_in_bounds(k);
  return k;
}

struct Streaming {
  ComputeDevice* dev = nullptr;
  Buffer x, y;
  std::size_t n = 0;
  CompiledPtr kernel;
  Grid grid;
  std::string name;
};

/// Sets up the buffers and picks (autotunes) the launch shape on first use.
Streaming& setup(ComputeDevice& dev, bool tanh_op, bool contract) {
  static std::vector<std::unique_ptr<Streaming>> cache;
  const std::string prefix = std::string(tanh_op ? "tanh" : "copy") + (contract ? "_fma_" : "_l");
  for (auto& s : cache)
    if (s->dev == &dev && s->name.rfind(prefix, 0) == 0) return *s;
  auto s = std::make_unique<Streaming>();
  s->dev = &dev;
  s->n = bench_bytes() / 4;
  std::vector<float> h(s->n);
  for (std::size_t i = 0; i < s->n; ++i) h[i] = static_cast<float>(i % 1000) * 0.01f - 5.0f;
  s->x = dev.upload(h.data(), s->n * 4);
  s->y = dev.alloc(s->n * 4);
  std::vector<ember::tune::Candidate> cands;
  std::vector<std::pair<CompiledPtr, Grid>> shapes;
  for (int lanes : {4, 8})
    for (std::uint32_t wg : {128u, 256u, 512u, 1024u})
      for (std::uint32_t unroll : {1u, 2u, 4u, 8u}) {
        const std::size_t per_group = std::size_t{wg} * unroll * lanes;
        if (s->n % per_group != 0) continue;
        const Kernel k = streaming(tanh_op, contract, lanes, wg, unroll);
        const std::uint64_t groups = s->n / per_group;
        Grid g{static_cast<std::uint32_t>(std::min<std::uint64_t>(groups, 65535)), 1, 1};
        if (groups > 65535) {
          if (groups % 65535 != 0) {
            // factor the groups into x * y exactly
            std::uint32_t gx = 65535;
            while (groups % gx) --gx;
            g = Grid{gx, static_cast<std::uint32_t>(groups / gx), 1};
          } else {
            g = Grid{65535, static_cast<std::uint32_t>(groups / 65535), 1};
          }
        }
        auto c = dev.compile(k);
        shapes.emplace_back(c, g);
        cands.push_back({k.name, [&dev, c, g, sp = s.get()] {
                           dev.launch(*c, g, {Arg::buf(sp->x), Arg::buf(sp->y)});
                         }});
      }
  const auto key = ember::tune::make_key(
      tanh_op ? (contract ? "bench_tanh_fma" : "bench_tanh") : "bench_copy", {s->n}, "f32", dev);
  const std::size_t best = ember::tune::Tuner::global().choose(key, cands, dev);
  s->kernel = shapes[best].first;
  s->grid = shapes[best].second;
  s->name = cands[best].name;
  cache.push_back(std::move(s));
  return *cache.back();
}

void stream_bench(benchmark::State& state, ComputeDevice* dev, bool tanh_op, bool contract) {
  Streaming& s = setup(*dev, tanh_op, contract);
  std::vector<double> ms;
  for (auto _ : state) {
    const double t = dev->time_ms([&] {
      dev->launch(*s.kernel, s.grid, {Arg::buf(s.x), Arg::buf(s.y)});
    });
    ms.push_back(t);
    state.SetIterationTime(t / 1e3);
  }
  std::sort(ms.begin(), ms.end());
  const double med = ms[ms.size() / 2];
  state.counters["median_ms"] = med;
  state.counters["median_TBps"] = 2.0 * static_cast<double>(s.n) * 4 / (med * 1e-3) / 1e12;
  state.SetLabel(dev->properties().name + " " + s.name);
  // correctness of the timed kernel, checked once
  std::vector<float> y(1024);
  dev->read(s.y, (s.n - 1024) * 4, y.data(), 4096);
  for (std::size_t i = 0; i < 1024; ++i) {
    const std::size_t j = s.n - 1024 + i;
    const float x = static_cast<float>(j % 1000) * 0.01f - 5.0f;
    const float want = tanh_op ? std::tanh(x) : x;
    if (std::fabs(y[i] - want) > 1e-6f) {
      state.SkipWithError("wrong result");
      break;
    }
  }
}

// 10,000 launches of a kernel on 8 floats (y += 1), timed on the host from the first launch
// to the end of sync(): the per-launch cost as an application sees it.
void tiny_bench(benchmark::State& state, ComputeDevice* dev) {
  KernelBuilder kb("tiny_add", {32, 1, 1});
  Mem y = kb.buffer("y", Elem::F32, Access::ReadWrite);
  Val i = kb.absolute_pos();
  kb.if_in_bounds(i, y.len(), [&] { y[i] = y[i] + 1.0f; });
  const Kernel k = kb.build();
  auto c = dev->compile(k);
  std::vector<float> h(8, 0.0f);
  Buffer b = dev->upload(h.data(), 32);
  const Arg args[] = {Arg::buf(b)};
  std::vector<double> us;
  constexpr int kLaunches = 10000;
  for (int w = 0; w < 100; ++w) dev->launch(*c, Grid{}, args);  // warm-up
  dev->sync();
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int l = 0; l < kLaunches; ++l) dev->launch(*c, Grid{}, args);
    dev->sync();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    us.push_back(s * 1e6 / kLaunches);
    state.SetIterationTime(s);
  }
  std::sort(us.begin(), us.end());
  state.counters["median_us_per_launch"] = us[us.size() / 2];
  state.SetLabel(dev->properties().name);
  dev->read(b, 0, h.data(), 32);
  const double want = 100.0 + static_cast<double>(kLaunches) * static_cast<double>(us.size());
  if (h[0] != static_cast<float>(want)) state.SkipWithError("wrong result");
}

// Unused in a build without ember::cuda and ember::vulkan (the program then runs nothing).
[[maybe_unused]] void register_device(const std::string& tag, ComputeDevice* dev) {
  benchmark::RegisterBenchmark(("copy_1GiB/" + tag).c_str(), stream_bench, dev, false, false)
      ->UseManualTime()
      ->Iterations(50)
      ->Unit(benchmark::kMillisecond);
  // exact: no FMA contraction, results equal the CPU's bit for bit
  benchmark::RegisterBenchmark(("tanh_1GiB/" + tag).c_str(), stream_bench, dev, true, false)
      ->UseManualTime()
      ->Iterations(50)
      ->Unit(benchmark::kMillisecond);
  // Kernel::contract: the compiler may fuse a * b + c (an ulp or two from the CPU's result)
  benchmark::RegisterBenchmark(("tanh_fma_1GiB/" + tag).c_str(), stream_bench, dev, true, true)
      ->UseManualTime()
      ->Iterations(50)
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark(("tiny_launch_x10000/" + tag).c_str(), tiny_bench, dev)
      ->UseManualTime()
      ->Iterations(7)
      ->Unit(benchmark::kMillisecond);
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  std::string why;
#ifdef EMBER_HAVE_CUDA
  if (ember::cuda::device_count(&why) > 0)
    register_device("cuda", &ember::cuda::device(0));
  else
    std::fprintf(stderr, "cuda: %s\n", why.c_str());
#endif
#ifdef EMBER_HAVE_VULKAN
  if (ember::vulkan::device_count(&why) > 0)
    register_device("vulkan", &ember::vulkan::device(0));
  else
    std::fprintf(stderr, "vulkan: %s\n", why.c_str());
#endif
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
