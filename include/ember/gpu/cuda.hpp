// ember::Cuda: the GPU backend on NVIDIA devices through CUDA (ember/gpu/gpu.hpp); link
// ember::gpu. Needs the CUDA runtime (ember::cuda, built when CMake finds a CUDA toolkit); the
// driver and NVRTC are opened at run time, so programs start without them.
#pragma once

#include "ember/gpu/gpu.hpp"

namespace ember {

/// The CUDA runtime of Gpu<R>: devices in CUDA's order.
struct CudaRuntime {
  static constexpr const char* name = "cuda";
  /// Device `index`; DeviceError when there is no such device (with the reason).
  static kernel::ComputeDevice& device(int index);
  /// Number of CUDA devices (0 without a driver or GPU); `why` gets the reason when 0.
  static int device_count(std::string* why = nullptr);
};

using Cuda = Gpu<CudaRuntime>;

}  // namespace ember
