// Dispatch: core functions (creation, read-back, reshape, casts, device moves).
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

/// Moves `t` (kind K) to `device`: within its stack through the stack's to_device, else
/// through TensorData.
template <class K>
DispatchTensor<K> to_device(DispatchTensor<K> t, const Device& device, const char* op) {
  using dispatch::Access;
  const std::uint8_t target = dispatch::stack_of(op, device);
  if (target == t.stack()) {
    return dispatch::visit<DispatchTensor<K>>(target, [&]<std::size_t I>() {
      using B = dispatch::BackendAt<I>;
      using P = dispatch::PrimAt<I, K>;
      const auto native = dispatch::NativeDevice<dispatch::StackAt<I>::kind>::get(device);
      P p = std::move(Access::get<P>(t));
      if constexpr (std::is_same_v<K, Float>) {
        return Access::make<K>(target, device, B::float_to_device(std::move(p), native));
      } else if constexpr (std::is_same_v<K, Int>) {
        return Access::make<K>(target, device, B::int_to_device(std::move(p), native));
      } else {
        return Access::make<K>(target, device, B::bool_to_device(std::move(p), native));
      }
    });
  }
  TensorData data;
  if constexpr (std::is_same_v<K, Float>) data = Dispatch::float_into_data(t);
  else if constexpr (std::is_same_v<K, Int>) data = Dispatch::int_into_data(t);
  else data = Dispatch::bool_into_data(t);
  if constexpr (std::is_same_v<K, Float>) return Dispatch::float_from_data(data, device);
  else if constexpr (std::is_same_v<K, Int>) return Dispatch::int_from_data(data, device);
  else return Dispatch::bool_from_data(data, device);
}

}  // namespace

void Dispatch::seed(std::uint64_t seed) { seed_all(seed); }

void Dispatch::sync(const Device& device) {
  create<int>("sync", device, []<class B>(const typename B::Device& d) {
    B::sync(d);
    return 0;
  });
}

// ---- creation ----------------------------------------------------------------------------
#define EMBER_DISPATCH_FROM_DATA(X, P)                                                  \
  Dispatch::P Dispatch::X##_from_data(const TensorData& data, const Device& device) {  \
    return create<P>(#X "_from_data", device, [&]<class B>(const typename B::Device& d) { \
      return B::X##_from_data(data, d);                                                 \
    });                                                                                 \
  }                                                                                     \
  Dispatch::P Dispatch::X##_empty(const Shape& shape, const Device& device, DType dtype) { \
    return create<P>(#X "_empty", device, [&]<class B>(const typename B::Device& d) {   \
      return B::X##_empty(shape, d, dtype);                                             \
    });                                                                                 \
  }                                                                                     \
  Dispatch::P Dispatch::X##_full(const Shape& shape, double value, const Device& device, \
                                 DType dtype) {                                         \
    return create<P>(#X "_full", device, [&]<class B>(const typename B::Device& d) {    \
      return B::X##_full(shape, value, d, dtype);                                       \
    });                                                                                 \
  }                                                                                     \
  Dispatch::P Dispatch::X##_to_device(P t, const Device& device) {                      \
    return to_device(std::move(t), device, #X "_to_device");                            \
  }
EMBER_DISPATCH_FROM_DATA(float, F)
EMBER_DISPATCH_FROM_DATA(int, I)
EMBER_DISPATCH_FROM_DATA(bool, Bo)
#undef EMBER_DISPATCH_FROM_DATA

Dispatch::F Dispatch::float_random(const Shape& shape, Distribution dist, const Device& device,
                                   DType dtype) {
  return create<F>("float_random", device, [&]<class B>(const typename B::Device& d) {
    return B::float_random(shape, dist, d, dtype);
  });
}

Dispatch::I Dispatch::int_arange(i64 start, i64 end, i64 step, const Device& device, DType dtype) {
  return create<I>("int_arange", device, [&]<class B>(const typename B::Device& d) {
    return B::int_arange(start, end, step, d, dtype);
  });
}

// ---- read-back and metadata ---------------------------------------------------------------
EMBER_DISPATCH_DEF1(TensorData, float_into_data, const F&)
EMBER_DISPATCH_DEF1(TensorData, int_into_data, const I&)
EMBER_DISPATCH_DEF1(TensorData, bool_into_data, const Bo&)
EMBER_DISPATCH_DEF1(Shape, float_shape, const F&)
EMBER_DISPATCH_DEF1(Shape, int_shape, const I&)
EMBER_DISPATCH_DEF1(Shape, bool_shape, const Bo&)
EMBER_DISPATCH_DEF1(DType, float_dtype, const F&)
EMBER_DISPATCH_DEF1(DType, int_dtype, const I&)
EMBER_DISPATCH_DEF1(DType, bool_dtype, const Bo&)

// ---- reshape and casts --------------------------------------------------------------------
EMBER_DISPATCH_DEF2(F, float_reshape, F, const Shape&)
EMBER_DISPATCH_DEF2(I, int_reshape, I, const Shape&)
EMBER_DISPATCH_DEF2(Bo, bool_reshape, Bo, const Shape&)
EMBER_DISPATCH_DEF2(F, float_cast, F, DType)
EMBER_DISPATCH_DEF2(I, int_cast, I, DType)
EMBER_DISPATCH_DEF2(I, float_into_int, F, DType)
EMBER_DISPATCH_DEF2(F, int_into_float, I, DType)
EMBER_DISPATCH_DEF2(I, bool_into_int, Bo, DType)
EMBER_DISPATCH_DEF2(F, bool_into_float, Bo, DType)

Dispatch::Bo Dispatch::float_into_bool(F t) {
  return dispatch::forward<Bo>(
      "float_into_bool",
      []<class B>(typename B::FloatTensor p) {
        if constexpr (requires { B::float_into_bool(std::move(p)); }) {
          return B::float_into_bool(std::move(p));
        } else {
          return B::float_not_equal_elem(p, 0.0);
        }
      },
      std::move(t));
}

Dispatch::Bo Dispatch::int_into_bool(I t) {
  return dispatch::forward<Bo>(
      "int_into_bool",
      []<class B>(typename B::IntTensor p) {
        if constexpr (requires { B::int_into_bool(std::move(p)); }) {
          return B::int_into_bool(std::move(p));
        } else {
          return B::int_not_equal_elem(p, 0);
        }
      },
      std::move(t));
}

}  // namespace ember
