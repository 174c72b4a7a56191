// A custom kernel written once with ember::kernel and run on every device: GELU,
// y = x (erf(x / sqrt 2) + 1) / 2, forward and backward (dx = dy (Phi(x) + x phi(x))), on the
// CPU target, every Vulkan device (llvmpipe without a GPU) and every CUDA device. Each
// device's results are compared with the CPU's; the program fails when any differs by more
// than 1e-6.
//
//   custom-kernel [--n N] [--targets cpu,vulkan,cuda]
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "ember/kernel/builder.hpp"
#include "ember/kernel/device.hpp"
#ifdef EMBER_HAVE_CUDA
#include "ember/cuda/cuda.hpp"
#endif
#ifdef EMBER_HAVE_VULKAN
#include "ember/vulkan/vulkan.hpp"
#endif

using namespace ember::kernel;

// The kernel: forward writes y = gelu(x); backward writes dx = dy * gelu'(x). `lanes` elements
// per thread (a vector access); the same source compiles for every device.
Kernel gelu(bool backward, int lanes) {
  KernelBuilder kb(backward ? "gelu_backward" : "gelu_forward", {256, 1, 1});
  Mem x = kb.buffer("x", Elem::F32, Access::Read);
  Mem dy = backward ? kb.buffer("dy", Elem::F32, Access::Read) : x;
  Mem out = kb.buffer(backward ? "dx" : "y", Elem::F32, Access::Write);
  Val i = kb.absolute_pos();
  kb.if_in_bounds(i, out.len() / static_cast<std::uint32_t>(lanes), [&] {
    Val v = x.load(i, lanes);
    Val cdf = (erf(v * 0.70710678118654752f) + 1.0f) * 0.5f;  // Phi(x)
    if (!backward) {
      out.store(i, v * cdf);
    } else {
      Val pdf = exp(v * v * -0.5f) * 0.39894228040143268f;  // phi(x) = exp(-x^2/2) / sqrt(2 pi)
      out.store(i, dy.load(i, lanes) * (cdf + v * pdf));
    }
  });
  return kb.build();
}

struct Result {
  std::string device;
  std::vector<float> y, dx;
  double ms = 0;
};

Result run_on(ComputeDevice& dev, const std::vector<float>& x, const std::vector<float>& dy) {
  const std::size_t n = x.size();
  const int lanes = choose_lanes(Elem::F32, n);  // widest access the shape allows
  const Kernel fwd = gelu(false, lanes), bwd = gelu(true, lanes);
  auto kf = dev.compile(fwd), kbw = dev.compile(bwd);
  Buffer bx = dev.upload(x.data(), n * 4), bdy = dev.upload(dy.data(), n * 4);
  Buffer by = dev.alloc(n * 4), bdx = dev.alloc(n * 4);
  const Grid g = grid_for(fwd, n / lanes);
  dev.sync();
  const auto t0 = std::chrono::steady_clock::now();
  dev.launch(*kf, g, {Arg::buf(bx), Arg::buf(by)});
  dev.launch(*kbw, g, {Arg::buf(bx), Arg::buf(bdy), Arg::buf(bdx)});
  dev.sync();
  Result r;
  r.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  r.device = dev.properties().kind + ": " + dev.properties().name;
  r.y.resize(n);
  r.dx.resize(n);
  dev.read(by, 0, r.y.data(), n * 4);
  dev.read(bdx, 0, r.dx.data(), n * 4);
  return r;
}

double max_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double m = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double d = std::fabs(static_cast<double>(a[i]) - b[i]);
    if (!(d <= m)) m = d;  // NaN counts as a difference
  }
  return m;
}

int main(int argc, char** argv) {
  std::size_t n = 1 << 20;
  std::string targets = "cpu,vulkan,cuda";
  for (int a = 1; a < argc; ++a) {
    if (!std::strcmp(argv[a], "--n") && a + 1 < argc)
      n = std::stoul(argv[++a]);
    else if (!std::strcmp(argv[a], "--targets") && a + 1 < argc)
      targets = argv[++a];
    else {
      std::fprintf(stderr, "usage: custom-kernel [--n N] [--targets cpu,vulkan,cuda]\n");
      return 2;
    }
  }
  std::vector<float> x(n), dy(n);
  for (std::size_t i = 0; i < n; ++i) {
    x[i] = -6.0f + 12.0f * static_cast<float>(i) / static_cast<float>(n);
    dy[i] = std::cos(static_cast<float>(i) * 0.001f);
  }
  try {
    std::vector<Result> results;
    results.push_back(run_on(cpu_device(), x, dy));
#ifdef EMBER_HAVE_VULKAN
    std::string why;
    if (targets.find("vulkan") != std::string::npos) {
      const int nv = ember::vulkan::device_count(&why);
      if (nv == 0) std::printf("vulkan: skipped (%s)\n", why.c_str());
      for (int d = 0; d < nv; ++d) results.push_back(run_on(ember::vulkan::device(d), x, dy));
    }
#endif
#ifdef EMBER_HAVE_CUDA
    if (targets.find("cuda") != std::string::npos) {
      std::string why_cuda;
      const int nc = ember::cuda::device_count(&why_cuda);
      if (nc == 0) std::printf("cuda: skipped (%s)\n", why_cuda.c_str());
      for (int d = 0; d < nc; ++d) results.push_back(run_on(ember::cuda::device(d), x, dy));
    }
#endif
    const Result& ref = results.front();
    std::printf("GELU forward and backward on %zu floats, x in [-6, 6)\n", n);
    std::printf("  y(-1) = %.9g, y(0.5) = %.9g, dx(1) = %.9g  (cpu)\n", ref.y[n / 2 - n / 12],
                ref.y[n / 2 + n / 24], ref.dx[n / 2 + n / 12]);
    std::printf("%-55s %14s %14s %10s\n", "device", "max |y - cpu|", "max |dx - cpu|", "time ms");
    bool ok = true;
    for (const Result& r : results) {
      const double dy_ = max_diff(r.y, ref.y), ddx = max_diff(r.dx, ref.dx);
      ok &= dy_ <= 1e-6 && ddx <= 1e-6;
      std::printf("%-55s %14.3g %14.3g %10.3f\n", r.device.c_str(), dy_, ddx, r.ms);
    }
    std::printf(ok ? "all devices agree within 1e-6\n" : "DEVICES DISAGREE\n");
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "custom-kernel: %s\n", e.what());
    return 1;
  }
}
