// CudaRuntime: ember::Cuda's devices are ember::cuda's.
#include "ember/cuda/cuda.hpp"
#include "ember/gpu/cuda.hpp"

namespace ember {

kernel::ComputeDevice& CudaRuntime::device(int index) {
  return cuda::device(index);
}
int CudaRuntime::device_count(std::string* why) {
  return cuda::device_count(why);
}

}  // namespace ember
