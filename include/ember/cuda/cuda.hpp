// The CUDA runtime of the kernel language: devices, one stream each, a caching memory pool,
// pinned staging for copies, and kernels compiled by NVRTC (cached in memory and on disk).
//
// The driver (libcuda.so.1) and NVRTC (libnvrtc.so.*) are opened at run time, so programs
// built with ember::cuda start on machines without them; device_count() is then 0 and says
// why. Set EMBER_NVRTC_LIB to pick an NVRTC library, CUDA_HOME (or CUDA_PATH) for the
// toolkit's include folder (cuda_fp16.h, mma.h) when it is not where Ember was built.
#pragma once

#include <string>
#include <vector>

#include "ember/kernel/device.hpp"

namespace ember::cuda {

/// Number of CUDA devices; 0 when there is no driver or no device (`why` says which).
int device_count(std::string* why = nullptr);
/// Device `index` (made on first use; lives until the process ends). DeviceError when
/// there is no such device.
kernel::ComputeDevice& device(int index = 0);

/// True when NVRTC can be loaded (no GPU needed); otherwise `why` says why not.
bool nvrtc_available(std::string* why = nullptr);

/// A kernel compiled by NVRTC.
struct Program {
  std::string source;  // the CUDA C++ given to NVRTC
  std::string log;     // NVRTC's log
  std::string image;   // CUBIN (sm_XX) or PTX (compute_XX)
  bool cubin = true;
  int arch = 0;  // 10 * major + minor
};
/// Generates and compiles a kernel for compute capability `arch` (90 = sm_90) without a
/// device: CUBIN when NVRTC supports the architecture, PTX otherwise. DeviceError (with the
/// log and the source) when NVRTC fails; UnsupportedError for what CUDA cannot express.
Program compile_program(const kernel::Kernel& k, int arch);

}  // namespace ember::cuda
