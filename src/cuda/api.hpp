// The CUDA driver and NVRTC entry points, loaded with dlopen (see cuda.hpp).
#pragma once

#include <cuda.h>
#include <nvrtc.h>

#include <string>
#include <vector>

namespace ember::cuda::detail {

// The names below go through cuda.h's macros (cuMemAlloc -> cuMemAlloc_v2), so the symbol
// looked up is the versioned one the header declares.
// clang-format off
#define EMBER_CU_FUNCS(X) \
  X(cuInit) \
  X(cuDriverGetVersion) \
  X(cuDeviceGetCount) \
  X(cuDeviceGet) \
  X(cuDeviceGetName) \
  X(cuDeviceGetAttribute) \
  X(cuDeviceTotalMem) \
  X(cuDevicePrimaryCtxRetain) \
  X(cuCtxSetCurrent) \
  X(cuStreamCreate) \
  X(cuStreamSynchronize) \
  X(cuStreamQuery) \
  X(cuMemAlloc) \
  X(cuMemFree) \
  X(cuMemHostAlloc) \
  X(cuMemFreeHost) \
  X(cuMemcpyHtoDAsync) \
  X(cuMemcpyDtoHAsync) \
  X(cuMemcpyDtoDAsync) \
  X(cuModuleLoadData) \
  X(cuModuleGetFunction) \
  X(cuModuleUnload) \
  X(cuLaunchKernel) \
  X(cuEventCreate) \
  X(cuEventRecord) \
  X(cuEventSynchronize) \
  X(cuEventElapsedTime) \
  X(cuEventDestroy) \
  X(cuEventQuery) \
  X(cuGetErrorName) \
  X(cuGetErrorString) \
  X(cuMemGetInfo)
// clang-format on

// clang-format off
#define EMBER_NVRTC_FUNCS(X) \
  X(nvrtcVersion) \
  X(nvrtcGetErrorString) \
  X(nvrtcCreateProgram) \
  X(nvrtcCompileProgram) \
  X(nvrtcDestroyProgram) \
  X(nvrtcGetProgramLogSize) \
  X(nvrtcGetProgramLog) \
  X(nvrtcGetPTXSize) \
  X(nvrtcGetPTX) \
  X(nvrtcGetCUBINSize) \
  X(nvrtcGetCUBIN) \
  X(nvrtcGetNumSupportedArchs) \
  X(nvrtcGetSupportedArchs)
// clang-format on

#define EMBER_API_MEMBER(fn) decltype(&fn) fn##_ = nullptr;

struct Driver {
  EMBER_CU_FUNCS(EMBER_API_MEMBER)
  int version = 0;
};
struct Nvrtc {
  EMBER_NVRTC_FUNCS(EMBER_API_MEMBER)
  int major = 0, minor = 0;
  std::string path;
};

/// The driver, loaded and initialised once; nullptr with the reason when unavailable.
const Driver* driver(std::string* why = nullptr);
/// NVRTC, loaded once; nullptr with the reason when unavailable.
const Nvrtc* nvrtc(std::string* why = nullptr);

/// dlopen (RTLD_NOW | RTLD_LOCAL) of the first of `names` that loads, each name tried once;
/// nullptr when none does, each failure appended to `tried` ("; "-separated).
void* open_first(const std::vector<std::string>& names, std::string& tried);

/// Throws DeviceError "[op] CUDA error NAME: description" unless r is CUDA_SUCCESS.
void check(CUresult r, const std::string& op);

/// The CUDA toolkit's include folder (cuda_fp16.h, mma.h), or "" when not found.
std::string toolkit_include_dir();

}  // namespace ember::cuda::detail
