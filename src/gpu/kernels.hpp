// What the GPU backends' kernel files (src/gpu/conv.cpp, pool.cpp, index.cpp, scan.cpp, ...)
// share: the workgroup size, the cache of compiled kernels, element-type helpers, 32-bit index
// checks. Not installed.
#pragma once

#include <cstdint>
#include <sstream>
#include <string>

#include "ember/core/error.hpp"
#include "ember/core/shape.hpp"
#include "ember/kernel/builder.hpp"
#include "ember/kernel/cache.hpp"
#include "ember/kernel/device.hpp"

namespace ember::gpu::detail {

/// Threads per workgroup of the one-thread-per-element kernels.
inline constexpr std::uint32_t kGroup = 256;

inline kernel::LruCache<kernel::CompiledPtr>& kernel_cache() {
  static kernel::LruCache<kernel::CompiledPtr> c(1024);
  return c;
}

/// The kernel `make()` builds, compiled once per device and `key`; nullptr when the device
/// lacks a feature it uses (the caller then takes the host path).
template <class Make>
const kernel::CompiledKernel* compiled(kernel::ComputeDevice& dev, const std::string& key,
                                       Make make) {
  std::ostringstream k;
  k << static_cast<const void*>(&dev) << '|' << key;
  auto c = kernel_cache().get(k.str());
  if (!c) {
    const kernel::Kernel kern = make();
    if (!kernel::missing_features(dev.properties(), kernel::features(kern)).empty()) return nullptr;
    c = dev.compile(kern);
    kernel_cache().put(k.str(), *c);
  }
  return c->get();
}

inline bool is_float_elem(kernel::Elem e) {
  return e == kernel::Elem::F32 || e == kernel::Elem::F16 || e == kernel::Elem::BF16 ||
         e == kernel::Elem::F64;
}

/// The type in which the CPU backend compares values (max/min, sorting): f32 for f16/bf16,
/// i64 for the integer types, else the element type.
inline kernel::Elem compare_elem(kernel::Elem e) {
  if (e == kernel::Elem::F16 || e == kernel::Elem::BF16) return kernel::Elem::F32;
  if (!is_float_elem(e)) return kernel::Elem::I64;
  return e;
}

/// A tensor seen around `dim` as [outer, len, inner]: outer * inner lines of len values,
/// `inner` apart (contiguous layout).
struct Lines {
  std::int64_t outer = 1, len = 1, inner = 1;
  std::int64_t count() const { return outer * inner; }
};
inline Lines lines_of(const Shape& s, std::int64_t dim) {
  Lines l;
  for (std::int64_t d = 0; d < dim; ++d) l.outer *= s.dims[d];
  l.len = s.dims[dim];
  for (std::size_t d = dim + 1; d < s.dims.size(); ++d) l.inner *= s.dims[d];
  return l;
}

/// `v` as a kernel's 32-bit index; UnsupportedError "[op] what V exceeds ..." otherwise.
inline std::uint32_t u32_index(std::int64_t v, const char* op, const char* what) {
  if (v < 0 || v > std::int64_t{0xffffffff})
    throw UnsupportedError(std::string("[") + op + "] " + what + " " + std::to_string(v) +
                           " exceeds the kernels' 32-bit indices");
  return static_cast<std::uint32_t>(v);
}

/// The names every kernel file uses unqualified: `using namespace detail::names;`.
namespace names {
using kernel::Arg;
using kernel::Elem;
using kernel::KernelBuilder;
using kernel::Mem;
using kernel::Val;
using kernel::Var;

using detail::compare_elem;
using detail::compiled;
using detail::is_float_elem;
using detail::kGroup;
using detail::Lines;
using detail::lines_of;
}  // namespace names

}  // namespace ember::gpu::detail
