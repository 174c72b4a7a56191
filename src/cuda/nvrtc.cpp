// Compiling generated CUDA C++ with NVRTC.
#include <algorithm>
#include <string>
#include <vector>

#include "api.hpp"
#include "ember/cuda/cuda.hpp"
#include "ember/kernel/codegen.hpp"

namespace ember::cuda {

namespace {

// NVRTC has no C++ standard library. The shared scalar header is meant to compile without it
// (its NVRTC branch); these minimal stand-ins cover a version of it that still includes
// standard headers, so both compile. Device functions forward to CUDA's math builtins.
constexpr const char* kStdCstdint = R"(#pragma once
namespace std {
typedef signed char int8_t; typedef short int16_t; typedef int int32_t; typedef long long int64_t;
typedef unsigned char uint8_t; typedef unsigned short uint16_t; typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
}
)";

constexpr const char* kStdCmath = R"(#pragma once
namespace std {
#define EMBER_STD_M1(n, f) __device__ inline float n(float a) { return ::f(a); } \
  __device__ inline double n(double a) { return ::n(a); }
#define EMBER_STD_M2(n, f) __device__ inline float n(float a, float b) { return ::f(a, b); } \
  __device__ inline double n(double a, double b) { return ::n(a, b); }
EMBER_STD_M1(fabs, fabsf) EMBER_STD_M1(sqrt, sqrtf) EMBER_STD_M1(exp, expf) EMBER_STD_M1(log, logf)
EMBER_STD_M1(log1p, log1pf) EMBER_STD_M1(erf, erff) EMBER_STD_M1(tanh, tanhf) EMBER_STD_M1(sin, sinf)
EMBER_STD_M1(cos, cosf) EMBER_STD_M1(tan, tanf) EMBER_STD_M1(sinh, sinhf) EMBER_STD_M1(cosh, coshf)
EMBER_STD_M1(asin, asinf) EMBER_STD_M1(acos, acosf) EMBER_STD_M1(atan, atanf) EMBER_STD_M1(asinh, asinhf)
EMBER_STD_M1(acosh, acoshf) EMBER_STD_M1(atanh, atanhf) EMBER_STD_M1(floor, floorf)
EMBER_STD_M1(ceil, ceilf) EMBER_STD_M1(trunc, truncf) EMBER_STD_M1(round, roundf) EMBER_STD_M1(expm1, expm1f)
EMBER_STD_M2(copysign, copysignf) EMBER_STD_M2(fmod, fmodf) EMBER_STD_M2(pow, powf)
EMBER_STD_M2(atan2, atan2f) EMBER_STD_M2(hypot, hypotf)
#undef EMBER_STD_M1
#undef EMBER_STD_M2
}
)";

constexpr const char* kStdLimits = R"(#pragma once
namespace std {
template <class T> struct numeric_limits;
template <> struct numeric_limits<float> {
  __device__ static constexpr float infinity() { return __builtin_bit_cast(float, 0x7f800000u); }
  __device__ static constexpr float quiet_NaN() { return __builtin_bit_cast(float, 0x7fc00000u); }
  __device__ static constexpr float max() { return 3.40282347e+38f; }
  __device__ static constexpr float lowest() { return -3.40282347e+38f; }
};
template <> struct numeric_limits<double> {
  __device__ static constexpr double infinity() { return __builtin_bit_cast(double, 0x7ff0000000000000ull); }
  __device__ static constexpr double quiet_NaN() { return __builtin_bit_cast(double, 0x7ff8000000000000ull); }
  __device__ static constexpr double max() { return 1.7976931348623157e+308; }
  __device__ static constexpr double lowest() { return -1.7976931348623157e+308; }
};
}
)";

constexpr const char* kStdTypeTraits = R"(#pragma once
namespace std {
template <class A, class B> inline constexpr bool is_same_v = false;
template <class A> inline constexpr bool is_same_v<A, A> = true;
template <class T> inline constexpr bool is_floating_point_v = is_same_v<T, float> || is_same_v<T, double>;
template <class T> inline constexpr bool is_integral_v = !is_floating_point_v<T>;
template <class T> inline constexpr bool is_signed_v = T(-1) < T(0);
template <class T> struct make_unsigned { typedef T type; };
template <> struct make_unsigned<signed char> { typedef unsigned char type; };
template <> struct make_unsigned<short> { typedef unsigned short type; };
template <> struct make_unsigned<int> { typedef unsigned int type; };
template <> struct make_unsigned<long> { typedef unsigned long type; };
template <> struct make_unsigned<long long> { typedef unsigned long long type; };
template <class T> using make_unsigned_t = typename make_unsigned<T>::type;
}
)";

constexpr const char* kStdBit = R"(#pragma once
namespace std {
template <class To, class From> __device__ constexpr To bit_cast(const From& f) {
  return __builtin_bit_cast(To, f);
}
}
)";

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
  const char* header_names[] = {"ember_scalar.hpp", "cstdint",     "cmath",
                                "limits",           "type_traits", "bit"};
  const char* headers[] = {
      kernel::scalar_header_text(), kStdCstdint, kStdCmath, kStdLimits, kStdTypeTraits, kStdBit};
  nvrtcProgram p = nullptr;
  if (n->nvrtcCreateProgram_(&p, out.source.c_str(), (k.name + ".cu").c_str(), 6, headers,
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
