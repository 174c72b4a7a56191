// ember_autodiff_vulkan_tests / ember_autodiff_cuda_tests (tests/gpu/CMakeLists.txt): the
// gradient suite on Autodiff<Vulkan> or Autodiff<Cuda> needs a device of that runtime. On a
// machine without one (no GPU: CUDA in CI) every case is skipped with the reason, and
// reported as skipped, and the program exits with success.
//
// The skip is recorded when a case starts (a listener's OnTestStart): GoogleTest then
// neither constructs the case nor runs its body, as for GTEST_SKIP() in a constructor.
#if defined(EMBER_GRAD_VULKAN) || defined(EMBER_GRAD_CUDA)
#include <gtest/gtest.h>

#include <cstdio>
#include <exception>
#include <optional>
#include <string>

#include "gradcheck.hpp"

namespace {

/// Empty when the runtime has a device, else why the suite cannot run.
const std::optional<std::string>& missing_device() {
  static const std::optional<std::string> why = []() -> std::optional<std::string> {
    using Runtime = ember::test::ADInner::Device::runtime_type;
    std::string reason;
    int n = 0;
    try {
      n = Runtime::device_count(&reason);
    } catch (const std::exception& e) {
      reason = e.what();
    }
    if (n > 0) return std::nullopt;
    return ember::test::AD::name() + ": no " + ember::test::ADInner::name() + " device (" + reason +
           ")";
  }();
  return why;
}

class SkipWithoutDevice : public ::testing::EmptyTestEventListener {
 public:
  void OnTestProgramStart(const ::testing::UnitTest&) override {
    if (missing_device())
      std::printf("[ember gpu] %s; every case is skipped\n", missing_device()->c_str());
  }
  void OnTestStart(const ::testing::TestInfo&) override { skip_if_missing(); }

 private:
  static void skip_if_missing() {
    if (missing_device()) GTEST_SKIP() << *missing_device();
  }
};

[[maybe_unused]] const bool kSkipWithoutDevice = [] {
  ::testing::UnitTest::GetInstance()->listeners().Append(new SkipWithoutDevice);
  return true;
}();

}  // namespace
#endif
