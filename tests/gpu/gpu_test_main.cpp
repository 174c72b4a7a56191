// main() of the GPU test binaries: runs the cases of every GPU backend that has a device here
// and skips the others, saying why (no GPU in CI: the CUDA cases skip, Vulkan runs on llvmpipe).
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "gpu_backends.hpp"

namespace {

template <class B>
void skip_without_device(std::string& negative) {
  std::string why;
  int n = 0;
  try {
    n = B::Device::runtime_type::device_count(&why);
  } catch (const std::exception& e) {
    why = e.what();
  }
  if (n > 0) return;
  std::printf("[ember gpu] %s: no device (%s); its cases are skipped\n", B::name().c_str(),
              why.c_str());
  // The backend's cases and those of the stacks over it (Fusion<B>: "fusion_" + name).
  negative += (negative.empty() ? "" : ":") + std::string("*/") + B::name() + ".*:*/fusion_" +
              B::name() + ".*";
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  std::string negative;
  ember::test::for_each_gpu_backend([&]<class B>() { skip_without_device<B>(negative); });
  if (!negative.empty()) {
    std::string filter = ::testing::GTEST_FLAG(filter);
    filter += (filter.find('-') == std::string::npos ? "-" : ":") + negative;
    ::testing::GTEST_FLAG(filter) = filter;
  }
  return RUN_ALL_TESTS();
}
