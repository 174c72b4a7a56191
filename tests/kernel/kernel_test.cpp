// Targets and value helpers of the kernel tests.
#include "kernel_test.hpp"

#include <bit>
#include <limits>

#ifdef EMBER_HAVE_CUDA
#include "ember/cuda/cuda.hpp"
#endif
#ifdef EMBER_HAVE_VULKAN
#include "ember/vulkan/vulkan.hpp"
#endif

namespace ember::kernel::test {

std::vector<std::string> targets() {
  std::vector<std::string> t{"cpu"};
#ifdef EMBER_HAVE_CUDA
  t.push_back("nvrtc");
#endif
#ifdef EMBER_HAVE_VULKAN
  t.push_back("vulkan");
#endif
#ifdef EMBER_HAVE_CUDA
  t.push_back("cuda");
#endif
  return t;
}

ComputeDevice* target_device(const std::string& target, std::string& why) {
  if (target == "cpu" || target == "nvrtc") {
#ifdef EMBER_HAVE_CUDA
    if (target == "nvrtc" && !cuda::nvrtc_available(&why)) return nullptr;
#endif
    return &cpu_device();
  }
#ifdef EMBER_HAVE_VULKAN
  if (target == "vulkan") {
    if (vulkan::device_count(&why) == 0) return nullptr;
    return &vulkan::device(0);
  }
#endif
#ifdef EMBER_HAVE_CUDA
  if (target == "cuda") {
    if (cuda::device_count(&why) == 0) return nullptr;
    return &cuda::device(0);
  }
#endif
  why = "target " + target + " is not built";
  return nullptr;
}

void extra_compile(const std::string& target, const Kernel& k) {
#ifdef EMBER_HAVE_CUDA
  if (target == "nvrtc") {
    Kernel opt = k;
    optimize(opt);
    const cuda::Program p = cuda::compile_program(opt, 90);
    ASSERT_FALSE(p.image.empty()) << "NVRTC produced no code for " << k.name;
  }
#else
  (void)target;
  (void)k;
#endif
}

std::vector<float> test_floats(std::size_t n, float lo, float hi, std::uint32_t seed) {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> v{0.0f,    -0.0f,  1.0f,    -1.0f,    inf,  -inf,  std::nanf(""), 1e-30f,
                       -1e-30f, 1e-40f, 3.0e38f, -3.0e38f, 0.5f, -0.5f, 2.5f,          -2.5f};
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  while (v.size() < n) v.push_back(d(rng));
  v.resize(n);
  return v;
}

std::int64_t ulp_distance(float a, float b) {
  if (a != a && b != b) return 0;
  if (a != a || b != b) return std::numeric_limits<std::int64_t>::max();
  if (a == b) return 0;
  const auto key = [](float f) {
    const auto u = static_cast<std::int64_t>(std::bit_cast<std::uint32_t>(f));
    return u & 0x80000000 ? 0x80000000 - u : u;
  };
  const std::int64_t d = key(a) - key(b);
  return d < 0 ? -d : d;
}

void expect_ulp(const std::vector<float>& got, const std::vector<float>& want, std::int64_t ulps,
                const std::vector<float>& inputs, const char* what, bool flush, bool nans) {
  ASSERT_EQ(got.size(), want.size());
  const auto subnormal = [](float f) {
    return f != 0 && std::fabs(f) < std::numeric_limits<float>::min();
  };
  int bad = 0;
  for (std::size_t i = 0; i < got.size() && bad < 5; ++i) {
    if (flush && (subnormal(inputs[i]) || subnormal(want[i]))) continue;
    if (nans && inputs[i] != inputs[i]) continue;
    if (ulp_distance(got[i], want[i]) > ulps) {
      ADD_FAILURE() << what << "[" << i << "] of " << inputs[i] << ": got " << got[i] << ", want "
                    << want[i] << " (" << ulp_distance(got[i], want[i]) << " ulp)";
      ++bad;
    }
  }
}

void expect_close(const std::vector<float>& got, const std::vector<float>& want, double atol,
                  double rtol, const char* what) {
  ASSERT_EQ(got.size(), want.size());
  int bad = 0;
  for (std::size_t i = 0; i < got.size() && bad < 5; ++i) {
    const double g = got[i], w = want[i];
    const bool ok = (g != g && w != w) || g == w ||
                    (std::isfinite(w) && std::fabs(g - w) <= atol + rtol * std::fabs(w));
    if (!ok) {
      ADD_FAILURE() << what << "[" << i << "]: got " << g << ", want " << w;
      ++bad;
    }
  }
}

}  // namespace ember::kernel::test
