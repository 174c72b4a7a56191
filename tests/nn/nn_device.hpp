// The device of the nn suite's Dispatch cases: EMBER_DEVICE (autodiff added) when it is set,
// else cpu+autodiff. CI runs the suite once more with EMBER_DEVICE=vulkan:0 (llvmpipe) and
// scripts/gpu-test.sh with the GPU machine's devices, so the same cases check every device.
#pragma once

#include <cstdlib>

#include "ember/dispatch/dispatch.hpp"

namespace ember::test {

inline Device nn_dispatch_device() {
  static const Device d = [] {
    const char* e = std::getenv("EMBER_DEVICE");
    return e && *e ? Device::parse(e).autodiff() : Device::cpu().autodiff();
  }();
  return d;
}

}  // namespace ember::test
