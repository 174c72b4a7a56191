// ember_autodiff_dispatch_tests sets up the device it needs (issue 19): the gradient suite over
// Dispatch needs an autodiff device, so before any test runs EMBER_DEVICE is made one: unset
// -> "cpu+autodiff", a plain device -> the same device with autodiff ("cuda:1" ->
// "cuda:1+autodiff"). Run from an IDE or by hand, the binary passes without any environment.
#ifdef EMBER_GRAD_DISPATCH
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "ember/dispatch/dispatch.hpp"

namespace {

class AutodiffDeviceEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    const char* env = std::getenv("EMBER_DEVICE");
    const ember::Device d =
        env != nullptr && *env != '\0' ? ember::Device::parse(env) : ember::Device::cpu();
    if (!d.is_autodiff()) {
      ::setenv("EMBER_DEVICE", d.autodiff().to_string().c_str(), 1);
    }
  }
};

[[maybe_unused]] ::testing::Environment* const kDevice =
    ::testing::AddGlobalTestEnvironment(new AutodiffDeviceEnvironment);

}  // namespace
#endif
