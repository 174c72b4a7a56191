// The backend stacks of Dispatch and the forwarding machinery (not installed).
//
// ADDING A BACKEND: append a `Stack<...>` (or a kind's `KindStacks<...>`) to `Stacks` below
// (and, for a new kind of hardware, specialise `NativeDevice` for it). Nothing else changes: every
// Dispatch function is written once over the list, and a binary op instantiates one call per stack
// (the device is checked first, then one stack is visited), so N stacks cost N instantiations, not
// N^2.
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "ember/autodiff/cpu.hpp"
#include "ember/cpu/cpu.hpp"
#include "ember/dispatch/dispatch.hpp"
// The GPU stacks, when CMake builds the runtime (cmake/EmberGpu.cmake defines these).
#if EMBER_DISPATCH_CUDA
#include "ember/autodiff/fusion_cuda.hpp"
#endif
#if EMBER_DISPATCH_VULKAN
#include "ember/autodiff/fusion_vulkan.hpp"
#endif

namespace ember::dispatch {

/// Whether a stack records gradients.
enum class Grad : std::uint8_t { None, Autodiff, Checkpointing };

/// One backend stack: the static backend `B` runs the devices of `Kind` whose autodiff mode
/// is `Mode`.
template <class B, DeviceKind Kind, Grad Mode>
struct Stack {
  using Backend = B;
  static constexpr DeviceKind kind = Kind;
  static constexpr Grad grad = Mode;
};

template <class... S>
struct StackList {
  static constexpr std::size_t size = sizeof...(S);
  template <std::size_t I>
  using At = std::tuple_element_t<I, std::tuple<S...>>;
};

/// The stacks of one kind of hardware (`B`: its backend): plain, +autodiff, +checkpointing.
template <class B, DeviceKind Kind>
using KindStacks =
    StackList<Stack<B, Kind, Grad::None>, Stack<Autodiff<B>, Kind, Grad::Autodiff>,
              Stack<Autodiff<B, autodiff::BalancedCheckpointing>, Kind, Grad::Checkpointing>>;

template <class... L>
struct Concat;
template <class... A>
struct Concat<StackList<A...>> {
  using type = StackList<A...>;
};
template <class... A, class... B, class... L>
struct Concat<StackList<A...>, StackList<B...>, L...> {
  using type = typename Concat<StackList<A..., B...>, L...>::type;
};

/// How an ember::Device maps to the device type of the backends of one kind of hardware,
/// and how many devices of that kind exist (`why` gets the driver's reason when none).
template <DeviceKind Kind>
struct NativeDevice;
template <>
struct NativeDevice<DeviceKind::Cpu> {
  static CpuDevice get(const Device&) { return {}; }
  static int count(std::string* = nullptr) { return 1; }
};
#if EMBER_DISPATCH_CUDA
template <>
struct NativeDevice<DeviceKind::Cuda> {
  static GpuDevice<CudaRuntime> get(const Device& d) { return {d.index()}; }
  static int count(std::string* why = nullptr) { return CudaRuntime::device_count(why); }
};
#endif
#if EMBER_DISPATCH_VULKAN
template <>
struct NativeDevice<DeviceKind::Vulkan> {
  static GpuDevice<VulkanRuntime> get(const Device& d) { return {d.index()}; }
  static int count(std::string* why = nullptr) { return VulkanRuntime::device_count(why); }
  static bool software(int index) { return VulkanRuntime::software(index); }
};
#endif

// ==== THE REGISTRATION LIST ================================================================
// "cpu", "cpu+autodiff", "cpu+autodiff+checkpointing"; the same for "cuda:N" and "vulkan:N"
// when the build has the runtime. The GPUs' stacks fuse element-wise chains (Fusion<B>: one
// generated kernel per chain, forward and backward); EMBER_FUSION=0 runs each function at once.
using Stacks = typename Concat<KindStacks<Cpu, DeviceKind::Cpu>
#if EMBER_DISPATCH_CUDA
                               ,
                               KindStacks<Fusion<Cuda>, DeviceKind::Cuda>
#endif
#if EMBER_DISPATCH_VULKAN
                               ,
                               KindStacks<Fusion<Vulkan>, DeviceKind::Vulkan>
#endif
                               >::type;
// ===========================================================================================

inline constexpr std::size_t kNumStacks = Stacks::size;
static_assert(kNumStacks >= 1 && kNumStacks < 256);

template <std::size_t I>
using StackAt = typename Stacks::template At<I>;
template <std::size_t I>
using BackendAt = typename StackAt<I>::Backend;

/// Mode of a device.
inline Grad grad_of(const Device& d) {
  return d.is_checkpointing() ? Grad::Checkpointing : d.is_autodiff() ? Grad::Autodiff : Grad::None;
}

/// Index of the stack that runs `device`, or -1 when none is registered.
int find_stack(const Device& device);
/// Index of the stack that runs `device`; throws DeviceError "[op] device X is not
/// available in this build (available: ...)".
std::uint8_t stack_of(const char* op, const Device& device);
/// Throws DeviceError "[op] tensors are on different devices: a and b".
[[noreturn]] void throw_device_mismatch(const char* op, const Device& a, const Device& b);

// ---- primitive storage --------------------------------------------------------------------

template <class T>
inline constexpr PrimitiveOps kOpsOf = {
    [](void* dst, const void* src) { ::new (dst) T(*static_cast<const T*>(src)); },
    [](void* dst, void* src) { ::new (dst) T(std::move(*static_cast<T*>(src))); },
    [](void* p) { static_cast<T*>(p)->~T(); },
};

struct Access {
  template <class T, class K>
  static T& get(DispatchTensor<K>& t) {
    return *std::launder(reinterpret_cast<T*>(t.buf_));
  }
  template <class T, class K>
  static const T& get(const DispatchTensor<K>& t) {
    return *std::launder(reinterpret_cast<const T*>(t.buf_));
  }
  template <class K, class T>
  static DispatchTensor<K> make(std::uint8_t stack, const Device& device, T&& value) {
    using V = std::remove_cvref_t<T>;
    static_assert(sizeof(V) <= kPrimitiveBytes && alignof(V) <= kPrimitiveAlign,
                  "a stack primitive does not fit in DispatchTensor: raise kPrimitiveBytes");
    DispatchTensor<K> out;
    ::new (static_cast<void*>(out.buf_)) V(std::forward<T>(value));
    out.ops_ = &kOpsOf<V>;
    out.device_ = device;
    out.stack_ = stack;
    return out;
  }
  template <class G>
  static DispatchGradients make_gradients(std::uint8_t stack, const Device& device, G&& grads) {
    DispatchGradients out;
    out.impl_ = std::make_shared<std::remove_cvref_t<G>>(std::forward<G>(grads));
    out.device_ = device;
    out.stack_ = stack;
    return out;
  }
  template <class G>
  static G& gradients(const DispatchGradients& g) {
    return *static_cast<G*>(g.impl_.get());
  }
  static std::uint8_t stack(const DispatchGradients& g) { return g.stack_; }
};

// ---- traits over argument types --------------------------------------------------------------

template <class T>
struct KindOf {
  using type = void;
};
template <class K>
struct KindOf<DispatchTensor<K>> {
  using type = K;
};
template <class T>
inline constexpr bool kIsTensor = !std::is_void_v<typename KindOf<T>::type>;

template <class T>
struct IsOptTensor : std::false_type {};
template <class K>
struct IsOptTensor<std::optional<DispatchTensor<K>>> : std::true_type {};
template <class T>
struct IsVecTensor : std::false_type {};
template <class K>
struct IsVecTensor<std::vector<DispatchTensor<K>>> : std::true_type {};

/// The kind of a Dispatch tensor type.
template <class R>
using KindOfR = typename KindOf<R>::type;

/// The primitive of stack I for kind K.
template <std::size_t I, class K>
using PrimAt = PrimitiveOf<BackendAt<I>, K>;

/// Records the device of every tensor argument; throws on a mismatch.
struct DeviceCheck {
  const char* op;
  const Device* first = nullptr;
  std::uint8_t stack = 0;

  template <class K>
  void see(const DispatchTensor<K>& t) {
    if (!first) {
      first = &t.device();
      stack = t.stack();
    } else if (!(t.device() == *first)) {
      throw_device_mismatch(op, *first, t.device());
    }
  }
  template <class K>
  void see(const std::optional<DispatchTensor<K>>& t) {
    if (t) see(*t);
  }
  template <class K>
  void see(const std::vector<DispatchTensor<K>>& ts) {
    for (const auto& t : ts) see(t);
  }
  template <class T>
  void see(const T&) {}
};

/// Stack I's view of an argument: a tensor becomes the stack primitive (moved out of an
/// rvalue, so the stack may reuse the buffer), an optional/vector of tensors becomes an
/// optional/vector of primitives; anything else passes through.
template <std::size_t I, class T>
decltype(auto) unwrap(T&& x) {
  using U = std::remove_cvref_t<T>;
  if constexpr (kIsTensor<U>) {
    using P = PrimAt<I, typename KindOf<U>::type>;
    if constexpr (std::is_lvalue_reference_v<T>) {
      return static_cast<const P&>(Access::get<P>(x));
    } else {
      return P(std::move(Access::get<P>(x)));
    }
  } else if constexpr (IsOptTensor<U>::value) {
    using P = PrimAt<I, typename KindOf<typename U::value_type>::type>;
    std::optional<P> o;
    if (x) o.emplace(Access::get<P>(*x));
    return o;
  } else if constexpr (IsVecTensor<U>::value) {
    using P = PrimAt<I, typename KindOf<typename U::value_type>::type>;
    std::vector<P> v;
    v.reserve(x.size());
    for (const auto& t : x) v.push_back(Access::get<P>(t));
    return v;
  } else {
    return std::forward<T>(x);
  }
}

/// Wraps stack I's result as the Dispatch result type R (tensors get `device`).
template <class R, std::size_t I, class V>
R lift(const Device& device, V&& v) {
  if constexpr (kIsTensor<R>) {
    return Access::make<typename KindOf<R>::type>(static_cast<std::uint8_t>(I), device,
                                                  std::forward<V>(v));
  } else if constexpr (requires {
                         typename R::first_type;
                         typename R::second_type;
                       }) {
    return R(lift<typename R::first_type, I>(device, std::move(v.first)),
             lift<typename R::second_type, I>(device, std::move(v.second)));
  } else {
    return R(std::forward<V>(v));
  }
}

/// Calls f.template operator()<I>() for the stack index s (an if-chain: N stacks, N calls).
template <class R, std::size_t I = 0, class Fn>
R visit(std::size_t s, Fn&& f) {
  if constexpr (I + 1 == kNumStacks) {
    return f.template operator()<I>();
  } else {
    if (s == I) return f.template operator()<I>();
    return visit<R, I + 1>(s, std::forward<Fn>(f));
  }
}

/// Forwards `call` (a generic lambda over the backend, see EMBER_OP) to the stack of the
/// tensor arguments, after checking that they share one device. R is the Dispatch result.
template <class R, class Call, class... Args>
R forward(const char* op, Call call, Args&&... args) {
  DeviceCheck check{op};
  (check.see(args), ...);
  const Device device = *check.first;
  return visit<R>(check.stack, [&]<std::size_t I>() -> R {
    using B = BackendAt<I>;
    if constexpr (std::is_void_v<R>) {
      call.template operator()<B>(unwrap<I>(std::forward<Args>(args))...);
    } else {
      return lift<R, I>(device,
                        call.template operator()<B>(unwrap<I>(std::forward<Args>(args))...));
    }
  });
}

/// Runs `call` on the stack of `device` (creation functions); the result lives on `device`.
template <class R, class Call>
R create(const char* op, const Device& device, Call call) {
  const std::uint8_t s = stack_of(op, device);
  return visit<R>(s, [&]<std::size_t I>() -> R {
    using B = BackendAt<I>;
    using S = StackAt<I>;
    const typename B::Device native = NativeDevice<S::kind>::get(device);
    return lift<R, I>(device, call.template operator()<B>(native));
  });
}

template <class T>
inline constexpr bool kIsTensorArg =
    kIsTensor<std::remove_cvref_t<T>> || IsOptTensor<std::remove_cvref_t<T>>::value ||
    IsVecTensor<std::remove_cvref_t<T>>::value;

/// The first ember::Device among the arguments (creation functions have one).
inline const Device& device_arg() {
  detail::fail<DeviceError>("dispatch", "a creation function without a device argument");
}
template <class T, class... A>
const Device& device_arg(const T& x, const A&... rest) {
  if constexpr (std::is_same_v<T, Device>)
    return x;
  else
    return device_arg(rest...);
}
/// An argument with an ember::Device replaced by backend B's native device.
template <class B, class T>
decltype(auto) native_arg(const typename B::Device& native, T&& x) {
  if constexpr (std::is_same_v<std::remove_cvref_t<T>, Device>)
    return native;
  else
    return std::forward<T>(x);
}

/// How Dispatch runs the registry row with description D. By default: on the stack of the
/// tensor operands (all on one device), or, for creation functions (no tensor operand), on
/// the stack of the device argument with that stack's native device.
template <class D>
struct Run {
  template <class R, class Call, class... A>
  static R call(const char* op, Call c, A&&... a) {
    if constexpr ((kIsTensorArg<A> || ...)) {
      return forward<R>(op, c, std::forward<A>(a)...);
    } else {
      return create<R>(op, device_arg(a...), [&]<class B>(const typename B::Device& native) {
        return c.template operator()<B>(native_arg<B>(native, a)...);
      });
    }
  }
};

}  // namespace ember::dispatch

/// A generic lambda calling B::fn with the (already unwrapped) arguments.
#define EMBER_OP(fn) \
  []<class B_>(auto&&... a_) -> decltype(auto) { return B_::fn(std::forward<decltype(a_)>(a_)...); }

/// A generic lambda running B's optional `fn` when B has it, else Defaults<B>::fn (the front
/// end's composite on B, src/dispatch/defaults.hpp).
#define EMBER_OP_OR_DEFAULT(fn)                                                      \
  []<class B_>(auto&&... a_) -> decltype(auto) {                                     \
    if constexpr (requires { B_::fn(std::forward<decltype(a_)>(a_)...); })           \
      return B_::fn(std::forward<decltype(a_)>(a_)...);                              \
    else                                                                             \
      return ::ember::dispatch::Defaults<B_>::fn(std::forward<decltype(a_)>(a_)...); \
  }

// Generated definitions of the registry's rows (one translation unit per family expands its
// rows with these): REQ rows run B's function, OPT rows B's or the default; EXT rows are not
// offered by Dispatch.
#define EMBER_DISPATCH_DEFINE(Req, Res, Ret, name, Desc, Params) \
  EMBER_DISPATCH_DEFINE_##Req(Ret, name, Desc, Params)
#define EMBER_DISPATCH_DEFINE_REQ(Ret, name, Desc, Params)                                \
  auto Dispatch::name(EMBER_PP_PARAMS Params)->Ret {                                      \
    return ::ember::dispatch::Run<::ember::ir::Desc>::template call<Ret>(                 \
        #name, EMBER_OP(name), EMBER_PP_ARGS(EMBER_PP_FORWARD, EMBER_PP_UNPAREN Params)); \
  }
#define EMBER_DISPATCH_DEFINE_OPT(Ret, name, Desc, Params)                \
  auto Dispatch::name(EMBER_PP_PARAMS Params)->Ret {                      \
    return ::ember::dispatch::Run<::ember::ir::Desc>::template call<Ret>( \
        #name, EMBER_OP_OR_DEFAULT(name),                                 \
        EMBER_PP_ARGS(EMBER_PP_FORWARD, EMBER_PP_UNPAREN Params));        \
  }
#define EMBER_DISPATCH_DEFINE_EXT(Ret, name, Desc, Params)
#define EMBER_DISPATCH_DEFINE_N(Req, Res, Ret, name, Desc, Params, Ns) \
  EMBER_DISPATCH_DEFINE_N_##Req(Ret, name, Desc, Params, Ns)
#define EMBER_DISPATCH_DEFINE_N_REQ(Ret, name, Desc, Params, Ns)             \
  template <std::size_t N>                                                   \
  auto Dispatch::name(EMBER_PP_PARAMS Params)->Ret {                         \
    return ::ember::dispatch::Run<::ember::ir::Desc<N>>::template call<Ret>( \
        #name,                                                               \
        []<class B_>(auto&&... a_) -> decltype(auto) {                       \
          return B_::template name<N>(std::forward<decltype(a_)>(a_)...);    \
        },                                                                   \
        EMBER_PP_ARGS(EMBER_PP_FORWARD, EMBER_PP_UNPAREN Params));           \
  }                                                                          \
  EMBER_IR_FOR_NS(Ns, EMBER_DISPATCH_INSTANCE, name)
#define EMBER_DISPATCH_DEFINE_N_OPT EMBER_DISPATCH_DEFINE_N_REQ
#define EMBER_DISPATCH_DEFINE_N_EXT(Ret, name, Desc, Params, Ns)
/// An exported pointer to the instance makes the compiler emit it.
#define EMBER_DISPATCH_INSTANCE(n, name) \
  extern const auto kDispatchInstance_##name##_##n = &Dispatch::template name<n>;
