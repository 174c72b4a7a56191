// The measurement behind the choice of CPU target (docs/gpu.md, "The CPU target"): GELU
// forward over 16M floats on the kernel interpreter, and the same kernel as the C++ a
// generator would emit, compiled at run time by g++ and by clang (LLVM) into a shared object.
// Prints the first-use cost (preparation or compilation) and the run times.
//
//   bench_cpu_target [N]   (compilers not found are skipped)
#include <dlfcn.h>
#include <omp.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "ember/kernel/builder.hpp"
#include "ember/kernel/device.hpp"

using namespace ember::kernel;
using Clock = std::chrono::steady_clock;

namespace {

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

// What a C++ generator would emit for the kernel: one thread = one element, the grid a loop,
// the math from the same scalar header.
constexpr const char* kGenerated = R"(#include EMBER_SCALAR_HEADER_PATH
extern "C" void gelu_forward(const float* x, float* y, unsigned n, unsigned begin, unsigned end) {
  for (unsigned i = begin; i < end; ++i) {
    if (i < n) {
      const float v = x[i];
      const float cdf = (ember::scalar::erf_f32(v * 0.70710678118654752f) + 1.0f) * 0.5f;
      y[i] = v * cdf;
    }
  }
}
)";

}  // namespace

int main(int argc, char** argv) {
  const unsigned n = argc > 1 ? static_cast<unsigned>(std::stoul(argv[1])) : (1u << 24);
  std::vector<float> x(n), y(n);
  for (unsigned i = 0; i < n; ++i)
    x[i] = -6.0f + 12.0f * static_cast<float>(i) / static_cast<float>(n);

  KernelBuilder kb("gelu_forward", {256, 1, 1});
  Mem bx = kb.buffer("x", Elem::F32, Access::Read), by = kb.buffer("y", Elem::F32, Access::Write);
  Val i = kb.absolute_pos();
  kb.if_in_bounds(i, by.len(), [&] {
    Val v = bx[i];
    by[i] = v * ((erf(v * 0.70710678118654752f) + 1.0f) * 0.5f);
  });
  const Kernel k = kb.build();
  ComputeDevice& d = cpu_device();
  auto t = Clock::now();
  auto c = d.compile(k);
  std::printf("%-12s first use %9.2f ms\n", "interpreter", ms_since(t));
  Buffer gx = d.upload(x.data(), std::size_t{n} * 4), gy = d.alloc(std::size_t{n} * 4);
  for (int r = 0; r < 4; ++r) {
    t = Clock::now();
    d.launch(*c, grid_for(k, n), {Arg::buf(gx), Arg::buf(gy)});
    const double ms = ms_since(t);
    std::printf("%-12s run       %9.2f ms  %6.2f ns/element\n", "interpreter", ms, ms * 1e6 / n);
  }

  const auto dir =
      std::filesystem::temp_directory_path() / ("ember-cpu-target-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "gelu.cpp") << kGenerated;
  for (const char* cc : {"g++", "clang++-14", "clang++"}) {
    const std::string so = (dir / (std::string(cc) + ".so")).string();
    const std::string cmd = std::string(cc) +
                            " -std=c++20 -O2 -fPIC -shared -I" EMBER_SOURCE_INCLUDE " " +
                            (dir / "gelu.cpp").string() + " -o " + so + " 2>/dev/null";
    t = Clock::now();
    if (std::system(cmd.c_str()) != 0) {
      std::printf("%-12s not available\n", cc);
      continue;
    }
    std::printf("%-12s first use %9.2f ms (compile)\n", cc, ms_since(t));
    void* h = dlopen(so.c_str(), RTLD_NOW);
    using Fn = void (*)(const float*, float*, unsigned, unsigned, unsigned);
    auto f = reinterpret_cast<Fn>(h ? dlsym(h, "gelu_forward") : nullptr);
    if (!f) continue;
    for (int r = 0; r < 4; ++r) {
      t = Clock::now();
#pragma omp parallel for schedule(dynamic, 1)
      for (int ch = 0; ch < 64; ++ch) f(x.data(), y.data(), n, ch * (n / 64), (ch + 1) * (n / 64));
      const double ms = ms_since(t);
      std::printf("%-12s run       %9.2f ms  %6.2f ns/element\n", cc, ms, ms * 1e6 / n);
    }
  }
  std::filesystem::remove_all(dir);
  return 0;
}
