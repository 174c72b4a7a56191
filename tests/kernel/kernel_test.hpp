// Test fixture for kernels on every target.
//
// Targets: "cpu" (the interpreter), "nvrtc" (every kernel also compiled by NVRTC to sm_90
// machine code, run on the interpreter: needs no GPU), "vulkan" (the first Vulkan device:
// llvmpipe in CI), "cuda" (the first CUDA device). A target without a device is skipped with
// the reason; a device that lacks a feature a test needs skips that test.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "ember/kernel/builder.hpp"
#include "ember/kernel/device.hpp"
#include "ember/kernel/passes.hpp"

namespace ember::kernel::test {

/// The targets compiled into this test binary.
std::vector<std::string> targets();
/// The device of a target, or nullptr with the reason in `why`.
ComputeDevice* target_device(const std::string& target, std::string& why);
/// Extra compilation a target does for each kernel (nvrtc: NVRTC to sm_90).
void extra_compile(const std::string& target, const Kernel& k);

class KernelTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    std::string why;
    dev_ = target_device(GetParam(), why);
    if (!dev_) GTEST_SKIP() << why;
  }
  ComputeDevice& dev() { return *dev_; }
  const DeviceProperties& props() { return dev_->properties(); }
  const std::string& target() const { return GetParam(); }

  CompiledPtr compile(const Kernel& k) {
    extra_compile(GetParam(), k);
    return dev_->compile(k);
  }
  template <class T>
  Buffer up(const std::vector<T>& v) {
    return dev_->upload(v.data(), v.size() * sizeof(T));
  }
  /// A buffer of n elements filled with a recognisable pattern (to catch unwritten outputs).
  template <class T>
  Buffer poisoned(std::size_t n) {
    std::vector<std::uint8_t> p(n * sizeof(T), 0xA5);
    return dev_->upload(p.data(), p.size());
  }
  template <class T>
  std::vector<T> down(const Buffer& b, std::size_t n) {
    std::vector<T> v(n);
    dev_->read(b, 0, v.data(), n * sizeof(T));
    return v;
  }
  void run(const CompiledPtr& k, Grid g, std::initializer_list<Arg> args) {
    dev_->launch(*k, g, args);
    dev_->sync();
  }

 private:
  ComputeDevice* dev_ = nullptr;
};

/// Skips the test (from its body) when the device lacks `what`.
#define EMBER_REQUIRE(has, what) \
  if (!(has)) GTEST_SKIP() << props().name << " has no " << (what)

inline std::string target_name(const ::testing::TestParamInfo<std::string>& i) {
  return i.param;
}

#define EMBER_KERNEL_INSTANTIATE(Suite)                                                           \
  INSTANTIATE_TEST_SUITE_P(Targets, Suite, ::testing::ValuesIn(::ember::kernel::test::targets()), \
                           ::ember::kernel::test::target_name)

// ---- values ----------------------------------------------------------------------------------

/// n floats: the edge values first (0, -0, +-1, +-inf, NaN, tiny, huge), then uniform in [lo, hi].
std::vector<float> test_floats(std::size_t n, float lo, float hi, std::uint32_t seed = 1);
/// Distance in units in the last place between two floats (NaN == NaN is 0).
std::int64_t ulp_distance(float a, float b);

/// Expects got[i] within `ulps` of want[i] (NaN matching NaN); reports the first mismatches.
/// `flush`: the device may flush f32 subnormals, so elements whose input or expected value is
/// subnormal are not compared.
/// `nans`: the device may not keep NaN through clamps (Vulkan without float controls), so
/// elements with a NaN input are not compared.
void expect_ulp(const std::vector<float>& got, const std::vector<float>& want, std::int64_t ulps,
                const std::vector<float>& inputs, const char* what, bool flush = false,
                bool nans = false);
/// Expects |got - want| <= atol + rtol |want| (NaN matching NaN, inf matching inf).
void expect_close(const std::vector<float>& got, const std::vector<float>& want, double atol,
                  double rtol, const char* what);

}  // namespace ember::kernel::test
