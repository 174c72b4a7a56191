// The backend stacks every conformance test runs on. Adding a backend or decorator
// stack to the suite is one line here.
#pragma once

#include <gtest/gtest.h>

#include <type_traits>

#include "checking_backend.hpp"
#include "ember/autodiff/cpu.hpp"
#include "ember/cpu/cpu.hpp"
#include "ember/dispatch/cpu.hpp"
#include "ember/dispatch/dispatch.hpp"
#include "ember/tensor/tensor.hpp"
#ifdef EMBER_CONFORMANCE_GPU
#include "ember/gpu/ops.hpp"
#include "gpu_backends.hpp"
#endif
#ifdef EMBER_CONFORMANCE_GPU_FUSION
#include "ember/fusion/fusion.hpp"
#endif
#ifdef EMBER_CONFORMANCE_FUSION
#include "ember/autodiff/fusion_cpu.hpp"
#endif

namespace ember::test {

#if defined(EMBER_CONFORMANCE_GPU) && defined(EMBER_CONFORMANCE_GPU_FUSION)
// ember_conformance_fusion_vulkan / _cuda (tests/gpu/): the same cases on Fusion<R>.
#if defined(EMBER_CONFORMANCE_ONLY_CUDA)
using ConformanceBackends = ::testing::Types<ember::Fusion<ember::Cuda>>;
#else
using ConformanceBackends = ::testing::Types<ember::Fusion<ember::Vulkan>>;
#endif
template <class F>
void for_each_backend(F&& f) {
  for_each_gpu_backend([&]<class G>() { f.template operator()<ember::Fusion<G>>(); });
}
#elif defined(EMBER_CONFORMANCE_GPU)
// ember_conformance_gpu (tests/gpu/): the same cases on the GPU backends (gpu_backends.hpp).
using ConformanceBackends = GpuConformanceBackends;
template <class F>
void for_each_backend(F&& f) {
  for_each_gpu_backend(f);
}
#elif defined(EMBER_CONFORMANCE_FUSION)
// ember_conformance_fusion: the same cases on the fusion stacks.
using ConformanceBackends =
    ::testing::Types<ember::Fusion<ember::Cpu>, ember::Autodiff<ember::Fusion<ember::Cpu>>>;
template <class F>
void for_each_backend(F&& f) {
  f.template operator()<ember::Fusion<ember::Cpu>>();
  f.template operator()<ember::Autodiff<ember::Fusion<ember::Cpu>>>();
}
#else

/// Dispatch runs on the default device (EMBER_DEVICE, else cpu): the ctest entry
/// ember_conformance_dispatch_autodiff reruns its cases with EMBER_DEVICE=cpu+autodiff.
/// Checking<Cpu> runs Cpu and asserts that every op description's infer (ember/ir) gives the
/// shape and dtype of Cpu's result.
using ConformanceBackends = ::testing::Types<ember::Cpu, ember::Autodiff<ember::Cpu>,
                                             ember::Dispatch, Checking<ember::Cpu>>;

/// Calls f.template operator()<B>() for every backend of the suite (for registering
/// fixture-driven tests).
template <class F>
void for_each_backend(F&& f) {
  f.template operator()<ember::Cpu>();
  f.template operator()<ember::Autodiff<ember::Cpu>>();
  f.template operator()<ember::Dispatch>();
  f.template operator()<Checking<ember::Cpu>>();
}
#endif

// ---- CPU storage of a primitive, for tests that build strided views by hand ----------------

#ifdef EMBER_CONFORMANCE_GPU_FUSION
/// True for FusionTensor<G> of a GPU backend G (Fusion<Vulkan>, Fusion<Cuda>).
template <class P>
inline constexpr bool kGpuFusionPrimitive = false;
template <class G>
inline constexpr bool kGpuFusionPrimitive<ember::fusion::FusionTensor<G>> =
    std::is_same_v<typename G::FloatTensor, GpuTensor>;
/// The device value of a Fusion<G> primitive (a pending one is computed).
template <class G>
const GpuTensor& fusion_value(const ember::fusion::FusionTensor<G>& p) {
  return ember::Fusion<G>::float_value(p);
}
template <class G>
ember::fusion::FusionTensor<G> lift_fusion_to(ember::fusion::FusionTensor<G>*, GpuTensor v) {
  return ember::Fusion<G>::template lift<ember::fusion::FusionTensor<G>>(std::move(v));
}
/// A Fusion<G> primitive P holding the computed value `v`.
template <class P>
P lift_fusion(GpuTensor v) {
  return lift_fusion_to(static_cast<P*>(nullptr), std::move(v));
}
#endif

/// True when B's primitives hold a CpuTensor (Cpu and its test variants, Dispatch on a cpu
/// device).
template <class B>
inline constexpr bool kCpuBacked =
    std::is_same_v<typename B::FloatTensor, CpuTensor> || std::is_same_v<B, ember::Dispatch> ||
    std::is_same_v<B, ember::Autodiff<ember::Cpu>>;

/// True when tests can build strided views of B's tensors by hand (view_of / with_cpu): the
/// CPU-backed backends and, in ember_conformance_vulkan/_cuda, the GPU backends.
template <class B>
inline constexpr bool kViewsBuildable =
    kCpuBacked<B>
#ifdef EMBER_CONFORMANCE_GPU
    || std::is_same_v<typename B::FloatTensor, GpuTensor>
#endif
#ifdef EMBER_CONFORMANCE_GPU_FUSION
    || kGpuFusionPrimitive<typename B::FloatTensor>
#endif
#ifdef EMBER_CONFORMANCE_FUSION
    || std::is_same_v<B, ember::Fusion<ember::Cpu>> ||
    std::is_same_v<B, ember::Autodiff<ember::Fusion<ember::Cpu>>>
#endif
    ;

/// True when B's views and in-place reuse are observable as CPU storage sharing: Cpu-backed,
/// and for Dispatch only on a plain cpu default device (an autodiff stack composes some
/// layout ops from copies; a GPU device's tensors reach the test as copies).
template <class B>
bool cpu_views_observable() {
  if constexpr (std::is_same_v<B, ember::Dispatch>) {
    const ember::Device d = ember::Device::default_();
    return !d.is_autodiff() && d.kind() == ember::DeviceKind::Cpu;
  } else if constexpr (std::is_same_v<B, ember::Autodiff<ember::Cpu>>) {
    return false;  // some layout ops are composites built from copies
#ifdef EMBER_CONFORMANCE_FUSION
  } else if constexpr (std::is_same_v<B, ember::Fusion<ember::Cpu>>) {
    return true;  // Cpu's views, wrapped
  } else if constexpr (std::is_same_v<B, ember::Autodiff<ember::Fusion<ember::Cpu>>>) {
    return false;
#endif
  } else {
    return kCpuBacked<B>;
  }
}

/// True when cpu_of / storage_id see B's own buffers (to test views and in-place reuse): all
/// but Dispatch on a GPU device, whose tensors reach the test as host copies (the GPU
/// backends' own programs, ember_conformance_vulkan / _cuda, test their buffers).
template <class B>
bool buffers_observable() {
  if constexpr (std::is_same_v<B, ember::Dispatch>)
    return ember::Device::default_().kind() == ember::DeviceKind::Cpu;
  else
    return true;
}

/// The CpuTensor behind primitive `p` (shares its data; a copy for Dispatch on a GPU).
template <class P>
CpuTensor cpu_of(const P& p) {
#ifdef EMBER_CONFORMANCE_GPU
  if constexpr (std::is_same_v<P, GpuTensor>) {
    return gpu::download(p);  // a copy
  } else
#endif
#ifdef EMBER_CONFORMANCE_GPU_FUSION
      if constexpr (kGpuFusionPrimitive<P>) {
    return gpu::download(fusion_value(p));  // computes a pending value; a copy
  } else
#endif
      if constexpr (std::is_same_v<P, CpuTensor>) {
    return p;
  } else if constexpr (std::is_same_v<P, ember::autodiff::AdTensor<Cpu>>) {
    return p.inner;
#ifdef EMBER_CONFORMANCE_FUSION
  } else if constexpr (std::is_same_v<P, ember::fusion::FusionTensor<Cpu>>) {
    return ember::Fusion<Cpu>::float_value(p);  // computes a pending value
  } else if constexpr (std::is_same_v<P, ember::autodiff::AdTensor<ember::Fusion<Cpu>>>) {
    return cpu_of(p.inner);
#endif
  } else {
    if (p.device().kind() != ember::DeviceKind::Cpu) {  // Dispatch on a GPU: a host copy
      using K = typename P::Kind;
      if constexpr (std::is_same_v<K, ember::Float>)
        return Cpu::float_from_data(ember::Dispatch::float_into_data(p), {});
      else if constexpr (std::is_same_v<K, ember::Int>)
        return Cpu::int_from_data(ember::Dispatch::int_into_data(p), {});
      else
        return Cpu::bool_from_data(ember::Dispatch::bool_into_data(p), {});
    }
    return ember::dispatch::cpu_primitive(p);
  }
}

/// An identity of the buffer behind primitive `p`, to see whether two tensors share one.
template <class P>
const void* storage_id(const P& p) {
#ifdef EMBER_CONFORMANCE_GPU
  if constexpr (std::is_same_v<P, GpuTensor>) return p.buffer.get();
#endif
#ifdef EMBER_CONFORMANCE_GPU_FUSION
  if constexpr (kGpuFusionPrimitive<P>) return fusion_value(p).buffer.get();
#endif
  return cpu_of(p).storage.get();
}

/// A primitive of `like`'s type (and device) holding `t`.
template <class P>
P with_cpu(const P& like, CpuTensor t) {
#ifdef EMBER_CONFORMANCE_GPU
  // The same view (shape, strides, offset) over a device copy of t's whole storage.
  if constexpr (std::is_same_v<P, GpuTensor>) {
    CpuTensor whole = t;
    whole.offset = 0;
    whole.shape = Shape{static_cast<std::int64_t>(t.storage->bytes() / dtype_size(t.dtype))};
    whole.strides = {1};
    GpuTensor g = gpu::upload(whole, like.compute(), like.device);
    g.shape = t.shape;
    g.strides = t.strides;
    g.offset = t.offset;
    return g;
  } else
#endif
#ifdef EMBER_CONFORMANCE_GPU_FUSION
      if constexpr (kGpuFusionPrimitive<P>) {
    return lift_fusion<P>(with_cpu(fusion_value(like), std::move(t)));
  } else
#endif
      if constexpr (std::is_same_v<P, CpuTensor>) {
    return t;
  } else if constexpr (std::is_same_v<P, ember::autodiff::AdTensor<Cpu>>) {
    return P{std::move(t), nullptr, like.checkpointing};
#ifdef EMBER_CONFORMANCE_FUSION
  } else if constexpr (std::is_same_v<P, ember::fusion::FusionTensor<Cpu>>) {
    return ember::Fusion<Cpu>::lift<P>(std::move(t));
  } else if constexpr (std::is_same_v<P, ember::autodiff::AdTensor<ember::Fusion<Cpu>>>) {
    return P{with_cpu(like.inner, std::move(t)), nullptr, like.checkpointing};
#endif
  } else {
    if (like.device().kind() != ember::DeviceKind::Cpu) {  // Dispatch on a GPU: t's values
      using K = typename P::Kind;
      if constexpr (std::is_same_v<K, ember::Float>)
        return ember::Dispatch::float_from_data(Cpu::float_into_data(t), like.device());
      else if constexpr (std::is_same_v<K, ember::Int>)
        return ember::Dispatch::int_from_data(Cpu::int_into_data(t), like.device());
      else
        return ember::Dispatch::bool_from_data(Cpu::bool_into_data(t), like.device());
    }
    return ember::dispatch::from_cpu_primitive<typename P::Kind>(std::move(t), like.device());
  }
}

/// GoogleTest name generator: the backend's name().
struct BackendNames {
  template <class B>
  static std::string GetName(int) {
    return B::name();
  }
};

}  // namespace ember::test
