// The GPU backends of the test binaries (the runtimes this build has), and the filter that
// skips the ones without a device at run time (gpu_test_main.cpp).
#pragma once

#include <gtest/gtest.h>

#ifdef EMBER_HAVE_VULKAN
#include "ember/gpu/vulkan.hpp"
#endif
#ifdef EMBER_HAVE_CUDA
#include "ember/gpu/cuda.hpp"
#endif

namespace ember::test {

#if defined(EMBER_CONFORMANCE_ONLY_VULKAN)
using GpuConformanceBackends = ::testing::Types<ember::Vulkan>;
#elif defined(EMBER_CONFORMANCE_ONLY_CUDA)
using GpuConformanceBackends = ::testing::Types<ember::Cuda>;
#elif defined(EMBER_HAVE_VULKAN) && defined(EMBER_HAVE_CUDA)
using GpuConformanceBackends = ::testing::Types<ember::Vulkan, ember::Cuda>;
#elif defined(EMBER_HAVE_VULKAN)
using GpuConformanceBackends = ::testing::Types<ember::Vulkan>;
#else
using GpuConformanceBackends = ::testing::Types<ember::Cuda>;
#endif

/// Calls f.template operator()<B>() for every GPU backend of the build (of the program's one
/// runtime in ember_conformance_vulkan / ember_conformance_cuda).
template <class F>
void for_each_gpu_backend(F&& f) {
#if defined(EMBER_HAVE_VULKAN) && !defined(EMBER_CONFORMANCE_ONLY_CUDA)
  f.template operator()<ember::Vulkan>();
#endif
#if defined(EMBER_HAVE_CUDA) && !defined(EMBER_CONFORMANCE_ONLY_VULKAN)
  f.template operator()<ember::Cuda>();
#endif
}

}  // namespace ember::test
