// Loading the CUDA driver and NVRTC at run time.
#include "api.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <vector>

#include "ember/kernel/core.hpp"

namespace ember::cuda::detail {

namespace {

#define EMBER_STR2(x) #x
#define EMBER_STR(x) EMBER_STR2(x)

struct DriverState {
  Driver d;
  std::string error;
  bool ok = false;
};

DriverState load_driver() {
  DriverState s;
  std::string tried;
  void* h = open_first({"libcuda.so.1", "libcuda.so"}, tried);
  if (!h) {
    s.error = "no CUDA driver (" + tried + ")";
    return s;
  }
#define EMBER_API_LOAD(fn)                                              \
  s.d.fn##_ = reinterpret_cast<decltype(&fn)>(dlsym(h, EMBER_STR(fn))); \
  if (!s.d.fn##_) {                                                     \
    s.error = "the CUDA driver lacks " EMBER_STR(fn);                   \
    return s;                                                           \
  }
  EMBER_CU_FUNCS(EMBER_API_LOAD)
  const CUresult r = s.d.cuInit_(0);
  if (r != CUDA_SUCCESS) {
    const char* name = nullptr;
    s.d.cuGetErrorName_(r, &name);
    s.error = std::string("cuInit failed: ") + (name ? name : "?");
    return s;
  }
  s.d.cuDriverGetVersion_(&s.d.version);
  s.ok = true;
  return s;
}

struct NvrtcState {
  Nvrtc n;
  std::string error;
  bool ok = false;
};

NvrtcState load_nvrtc() {
  NvrtcState s;
  std::vector<std::string> names;
  if (const char* p = std::getenv("EMBER_NVRTC_LIB"); p && *p) names.emplace_back(p);
  for (const char* n : {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"}) names.emplace_back(n);
#ifdef EMBER_CUDA_LIBRARY_DIR
  names.push_back(std::string(EMBER_CUDA_LIBRARY_DIR) + "/libnvrtc.so");
#endif
  for (const char* env : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* p = std::getenv(env); p && *p)
      names.push_back(std::string(p) + "/lib64/libnvrtc.so");
  names.emplace_back("/usr/local/cuda/lib64/libnvrtc.so");
  std::string tried;
  void* h = open_first(names, tried);
  if (!h) {
    s.error = "no NVRTC library (" + tried + ")";
    return s;
  }
  Dl_info info{};
#define EMBER_NVRTC_LOAD(fn)                                            \
  s.n.fn##_ = reinterpret_cast<decltype(&fn)>(dlsym(h, EMBER_STR(fn))); \
  if (!s.n.fn##_) {                                                     \
    s.error = "NVRTC lacks " EMBER_STR(fn);                             \
    return s;                                                           \
  }
  EMBER_NVRTC_FUNCS(EMBER_NVRTC_LOAD)
  if (dladdr(reinterpret_cast<void*>(s.n.nvrtcVersion_), &info) && info.dli_fname)
    s.n.path = info.dli_fname;
  s.n.nvrtcVersion_(&s.n.major, &s.n.minor);
  s.ok = true;
  return s;
}

}  // namespace

void* open_first(const std::vector<std::string>& names, std::string& tried) {
  std::vector<std::string> seen;
  for (const std::string& n : names) {
    if (std::find(seen.begin(), seen.end(), n) != seen.end()) continue;
    seen.push_back(n);
    // RTLD_LOCAL: the library's symbols stay out of the global namespace.
    if (void* h = dlopen(n.c_str(), RTLD_NOW | RTLD_LOCAL)) return h;
    const char* e = dlerror();
    tried += (tried.empty() ? "" : "; ") + std::string(e ? e : n);
  }
  return nullptr;
}

const Driver* driver(std::string* why) {
  static const DriverState s = load_driver();
  if (!s.ok) {
    if (why) *why = s.error;
    return nullptr;
  }
  return &s.d;
}

const Nvrtc* nvrtc(std::string* why) {
  static const NvrtcState s = load_nvrtc();
  if (!s.ok) {
    if (why) *why = s.error;
    return nullptr;
  }
  return &s.n;
}

void check(CUresult r, const std::string& op) {
  if (r == CUDA_SUCCESS) return;
  const Driver* d = driver();
  const char* name = nullptr;
  const char* desc = nullptr;
  if (d) {
    d->cuGetErrorName_(r, &name);
    d->cuGetErrorString_(r, &desc);
  }
  if (r == CUDA_ERROR_OUT_OF_MEMORY)
    ember::detail::fail<OutOfMemoryError>(op, "CUDA error ", name ? name : "?", ": ",
                                          desc ? desc : "");
  ember::detail::fail<DeviceError>(op, "CUDA error ", name ? name : std::to_string(r), ": ",
                                   desc ? desc : "");
}

std::string toolkit_include_dir() {
  namespace fs = std::filesystem;
  std::vector<std::string> c;
  for (const char* env : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* p = std::getenv(env); p && *p) c.push_back(std::string(p) + "/include");
#ifdef EMBER_CUDA_INCLUDE_DIR
  c.emplace_back(EMBER_CUDA_INCLUDE_DIR);
#endif
  c.emplace_back("/usr/local/cuda/include");
  if (const Nvrtc* n = nvrtc(); n && !n->path.empty())  // <toolkit>/lib64/libnvrtc.so
    c.push_back((fs::path(n->path).parent_path().parent_path() / "include").string());
  for (const std::string& d : c) {
    std::error_code ec;
    if (fs::exists(fs::path(d) / "cuda_fp16.h", ec)) return d;
  }
  return "";
}

}  // namespace ember::cuda::detail
