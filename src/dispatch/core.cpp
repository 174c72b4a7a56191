// Dispatch: core functions (creation, read-back, reshape, casts, device moves).
#include "ember/dispatch/cpu.hpp"
#include "stacks.hpp"

namespace ember {

using dispatch::create;

namespace {

template <std::size_t I = 0>
void seed_all(std::uint64_t seed) {
  if constexpr (I < dispatch::kNumStacks) {
    dispatch::BackendAt<I>::seed(seed);
    seed_all<I + 1>(seed);
  }
}

/// Kind-generic access to the core functions of backend B.
template <class B, class K>
struct KindOps;
#define EMBER_KIND_OPS(Kind, X)                                                    \
  template <class B>                                                               \
  struct KindOps<B, Kind> {                                                        \
    using P = PrimitiveOf<B, Kind>;                                                \
    static P to_device(P p, const typename B::Device& d) {                         \
      return B::X##_to_device(std::move(p), d);                                    \
    }                                                                              \
    static TensorData into_data(const P& p) { return B::X##_into_data(p); }        \
    static P from_data(const TensorData& data, const typename B::Device& d) {      \
      return B::X##_from_data(data, d);                                            \
    }                                                                              \
    static decltype(auto) inner(const P& p) requires requires { B::X##_inner(p); } \
    { return B::X##_inner(p); }                                                    \
    template <class IP>                                                            \
    static P from_inner(IP p) requires requires {                                  \
      B::X##_from_inner(std::move(p));                                             \
    }                                                                              \
    { return B::X##_from_inner(std::move(p)); }                                    \
  };
EMBER_KIND_OPS(Float, float)
EMBER_KIND_OPS(Int, int)
EMBER_KIND_OPS(Bool, bool)
#undef EMBER_KIND_OPS

template <class B>
struct InnerOf {
  using type = void;
};
template <class B>
requires requires {
  typename B::InnerBackend;
}
struct InnerOf<B> {
  using type = typename B::InnerBackend;
};

/// Moves `t` (kind K) to `device`. Same stack: the stack's to_device. An autodiff stack and
/// its inner stack (or two autodiff stacks over one inner backend): through inner /
/// from_inner, without a copy (the graph is not carried over). Otherwise through TensorData.
/// (This is the one function that visits a pair of stacks: N^2 small instantiations.)
template <class K>
DispatchTensor<K> to_device_impl(DispatchTensor<K> t, const Device& device, const char* op) {
  using dispatch::Access;
  using DK = DispatchTensor<K>;
  const std::uint8_t target = dispatch::stack_of(op, device);
  return dispatch::visit<DK>(t.stack(), [&]<std::size_t I>() -> DK {
    using BS = dispatch::BackendAt<I>;
    using PS = dispatch::PrimAt<I, K>;
    PS p = std::move(Access::get<PS>(t));
    return dispatch::visit<DK>(target, [&]<std::size_t J>() -> DK {
      using BT = dispatch::BackendAt<J>;
      using OT = KindOps<BT, K>;
      using IS = typename InnerOf<BS>::type;
      using IT = typename InnerOf<BT>::type;
      const auto native = dispatch::NativeDevice<dispatch::StackAt<J>::kind>::get(device);
      if constexpr (I == J) {
        return Access::make<K>(target, device, OT::to_device(std::move(p), native));
      } else if constexpr (std::is_same_v<IT, BS> && requires { OT::from_inner(std::move(p)); }) {
        return Access::make<K>(target, device, OT::to_device(OT::from_inner(std::move(p)), native));
      } else if constexpr (std::is_same_v<IS, BT> && requires { KindOps<BS, K>::inner(p); }) {
        return Access::make<K>(target, device, OT::to_device(KindOps<BS, K>::inner(p), native));
      } else if constexpr (!std::is_void_v<IS> && std::is_same_v<IS, IT> &&
                           requires { OT::from_inner(KindOps<BS, K>::inner(p)); }) {
        return Access::make<K>(target, device,
                               OT::to_device(OT::from_inner(KindOps<BS, K>::inner(p)), native));
      } else {
        const TensorData data = KindOps<BS, K>::into_data(p);
        return Access::make<K>(target, device, OT::from_data(data, native));
      }
    });
  });
}

}  // namespace

void Dispatch::seed(std::uint64_t seed) {
  seed_all(seed);
}

void Dispatch::sync(const Device& device) {
  create<int>("sync", device, []<class B>(const typename B::Device& d) {
    B::sync(d);
    return 0;
  });
}

}  // namespace ember

namespace ember::dispatch {

/// X_to_device: between stacks (see to_device above).
template <>
struct Run<ir::ToDevice> {
  template <class R, class Call, class T>
  static R call(const char* op, Call, T&& t, const Device& device) {
    return ::ember::to_device_impl(std::forward<T>(t), device, op);
  }
};
/// X_device: the tensor's own device.
template <>
struct Run<ir::DeviceOf> {
  template <class R, class Call, class T>
  static R call(const char*, Call, const T& t) {
    return t.device();
  }
};

}  // namespace ember::dispatch

namespace ember {

bool Dispatch::bool_check_none(const Bo& bad, const char* op) {
  return dispatch::forward<bool>(
      "bool_check_none",
      [op]<class B>(const typename B::BoolTensor& p) {
        if constexpr (requires { B::bool_check_none(p, op); })
          return B::bool_check_none(p, op);
        else
          return false;
      },
      bad);
}

EMBER_IR_CORE(EMBER_DISPATCH_DEFINE, EMBER_DISPATCH_DEFINE_N)

}  // namespace ember

// ---- interop with CpuTensor (ember/dispatch/cpu.hpp) ---------------------------------------
namespace ember::dispatch {

namespace {

template <class K>
CpuTensor cpu_primitive_of(const DispatchTensor<K>& t) {
  return visit<CpuTensor>(t.stack(), [&]<std::size_t I>() -> CpuTensor {
    using B = BackendAt<I>;
    using P = PrimAt<I, K>;
    const P& p = Access::get<P>(t);
    if constexpr (std::is_same_v<P, CpuTensor>) {
      return p;
    } else if constexpr (std::is_same_v<K, Float> && requires {
                           { B::float_inner(p) } -> std::same_as<CpuTensor>;
                         }) {
      return B::float_inner(p);
    } else if constexpr (std::is_same_v<K, Int> && requires {
                           { B::int_inner(p) } -> std::same_as<CpuTensor>;
                         }) {
      return B::int_inner(p);
    } else if constexpr (std::is_same_v<K, Bool> && requires {
                           { B::bool_inner(p) } -> std::same_as<CpuTensor>;
                         }) {
      return B::bool_inner(p);
    } else {
      detail::fail<DeviceError>("cpu_primitive", "tensor on device ", t.device().to_string(),
                                " is not a cpu tensor");
    }
  });
}

}  // namespace

CpuTensor cpu_primitive(const DispatchTensor<Float>& t) {
  return cpu_primitive_of(t);
}
CpuTensor cpu_primitive(const DispatchTensor<Int>& t) {
  return cpu_primitive_of(t);
}
CpuTensor cpu_primitive(const DispatchTensor<Bool>& t) {
  return cpu_primitive_of(t);
}

template <class K>
DispatchTensor<K> from_cpu_primitive(CpuTensor t, const Device& device) {
  const std::uint8_t s = stack_of("from_cpu_primitive", device);
  return visit<DispatchTensor<K>>(s, [&]<std::size_t I>() -> DispatchTensor<K> {
    using B = BackendAt<I>;
    using P = PrimAt<I, K>;
    if constexpr (std::is_same_v<P, CpuTensor>) {
      return Access::make<K>(s, device, std::move(t));
    } else if constexpr (std::is_same_v<K, Float> && requires { B::float_from_inner(t); }) {
      return Access::make<K>(s, device, B::float_from_inner(std::move(t)));
    } else if constexpr (std::is_same_v<K, Int> && requires { B::int_from_inner(t); }) {
      return Access::make<K>(s, device, B::int_from_inner(std::move(t)));
    } else if constexpr (std::is_same_v<K, Bool> && requires { B::bool_from_inner(t); }) {
      return Access::make<K>(s, device, B::bool_from_inner(std::move(t)));
    } else {
      detail::fail<DeviceError>("from_cpu_primitive", "device ", device.to_string(),
                                " is not a cpu device");
    }
  });
}

template DispatchTensor<Float> from_cpu_primitive<Float>(CpuTensor, const Device&);
template DispatchTensor<Int> from_cpu_primitive<Int>(CpuTensor, const Device&);
template DispatchTensor<Bool> from_cpu_primitive<Bool>(CpuTensor, const Device&);

}  // namespace ember::dispatch
