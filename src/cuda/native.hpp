// Raw CUDA handles of ember::cuda's devices, for the vendor libraries that run on their
// streams (cuBLASLt, blaslt.cpp). Internal to src/cuda: nothing outside ember::cuda sees
// CUDA types.
#pragma once

#include <cuda.h>

#include <functional>
#include <string>

#include "ember/kernel/device.hpp"

namespace ember::cuda::detail {

/// True when `device` is one of ember::cuda's devices.
bool is_cuda_device(const kernel::ComputeDevice& device);

/// The device address of the first byte of a buffer of a CUDA device.
CUdeviceptr device_ptr(const kernel::BufferStorage& buffer);

/// Runs `fn(stream)` with the device's lock held and its context current, so that what `fn`
/// enqueues on the stream runs in order with Ember's kernels and copies; `what` names that
/// work in the errors of later waits ("sync (after cublasLtMatmul)"). DeviceError when
/// `device` is not a CUDA device.
void with_stream(kernel::ComputeDevice& device, const std::string& what,
                 const std::function<void(CUstream)>& fn);

}  // namespace ember::cuda::detail
