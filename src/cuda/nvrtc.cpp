// Compiling generated CUDA C++ with NVRTC.
#include <algorithm>
#include <string>
#include <vector>

#include "api.hpp"
#include "ember/cuda/cuda.hpp"
#include "ember/kernel/codegen.hpp"

namespace ember::cuda {

namespace {

std::string program_log(const detail::Nvrtc& n, nvrtcProgram p) {
  std::size_t size = 0;
  n.nvrtcGetProgramLogSize_(p, &size);
  std::string log(size, '\0');
  if (size) n.nvrtcGetProgramLog_(p, log.data());
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  return log;
}

bool arch_supported(const detail::Nvrtc& n, int arch) {
  int count = 0;
  if (n.nvrtcGetNumSupportedArchs_(&count) != NVRTC_SUCCESS || count <= 0) return false;
  std::vector<int> archs(static_cast<std::size_t>(count));
  n.nvrtcGetSupportedArchs_(archs.data());
  return std::find(archs.begin(), archs.end(), arch) != archs.end();
}

}  // namespace

bool nvrtc_available(std::string* why) {
  return detail::nvrtc(why) != nullptr;
}

Program compile_program(const kernel::Kernel& k, int arch) {
  std::string why;
  const detail::Nvrtc* n = detail::nvrtc(&why);
  if (!n) ember::detail::fail<DeviceError>("compile " + k.name, why);
  Program out;
  out.arch = arch;
  out.source = kernel::generate_cuda(k);
  out.cubin = arch_supported(*n, arch);
  // The shared scalar header as an in-memory header; it includes no standard header under
  // NVRTC (its __CUDACC_RTC__ branch), so it needs nothing else.
  const char* header_names[] = {"ember_scalar.hpp"};
  const char* headers[] = {kernel::scalar_header_text()};
  nvrtcProgram p = nullptr;
  if (n->nvrtcCreateProgram_(&p, out.source.c_str(), (k.name + ".cu").c_str(), 1, headers,
                             header_names) != NVRTC_SUCCESS)
    ember::detail::fail<DeviceError>("compile " + k.name, "nvrtcCreateProgram failed");
  const std::string gpu =
      std::string("--gpu-architecture=") + (out.cubin ? "sm_" : "compute_") + std::to_string(arch);
  const std::string inc = "--include-path=" + detail::toolkit_include_dir();
  std::vector<const char*> opts = {gpu.c_str(), "--std=c++17",
                                   k.contract ? "--fmad=true" : "--fmad=false", "-default-device"};
  if (inc.size() > std::string("--include-path=").size()) opts.push_back(inc.c_str());
  const nvrtcResult r = n->nvrtcCompileProgram_(p, static_cast<int>(opts.size()), opts.data());
  out.log = program_log(*n, p);
  if (r != NVRTC_SUCCESS) {
    n->nvrtcDestroyProgram_(&p);
    ember::detail::fail<DeviceError>("compile " + k.name, "NVRTC failed (",
                                     n->nvrtcGetErrorString_(r), "):\n", out.log, "\n---- source\n",
                                     out.source);
  }
  std::size_t size = 0;
  if (out.cubin) {
    n->nvrtcGetCUBINSize_(p, &size);
    out.image.resize(size);
    n->nvrtcGetCUBIN_(p, out.image.data());
  } else {
    n->nvrtcGetPTXSize_(p, &size);
    out.image.resize(size);
    n->nvrtcGetPTX_(p, out.image.data());
  }
  n->nvrtcDestroyProgram_(&p);
  return out;
}

}  // namespace ember::cuda
