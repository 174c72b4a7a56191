// The core of the backend contract: primitives, devices, data in/out, creation,
// reshape and casts. Every backend must provide these.
//
// A backend `B` is a type with:
//   B::Device                          - value type naming a device; default-constructible
//                                        to the backend's default device.
//   B::FloatTensor / IntTensor / BoolTensor - primitive handles (may be one type). A primitive
//                                        carries its shape, dtype and device. Copying is cheap
//                                        and shares data.
// and static functions named after Burn's ops, prefixed by kind (float_, int_, bool_).
// The front end validates every argument before calling a backend function, so backends may
// assume shapes, dims and dtypes are valid.
#pragma once

#include <concepts>
#include <cstdint>
#include <string>
#include <vector>

#include "ember/tensor/data.hpp"
#include "ember/tensor/distribution.hpp"
#include "ember/tensor/dtype.hpp"
#include "ember/tensor/kind.hpp"
#include "ember/tensor/shape.hpp"

namespace ember {

/// Primitive type of kind K on backend B.
template <class B, class K>
struct PrimitiveOfT;
template <class B>
struct PrimitiveOfT<B, Float> {
  using type = typename B::FloatTensor;
};
template <class B>
struct PrimitiveOfT<B, Int> {
  using type = typename B::IntTensor;
};
template <class B>
struct PrimitiveOfT<B, Bool> {
  using type = typename B::BoolTensor;
};
template <class B, class K>
using PrimitiveOf = typename PrimitiveOfT<B, K>::type;

// The core functions, for X in {float, int, bool} and P = X's primitive:
//   X_from_data(const TensorData&, const Device&) -> P       (data dtype is of kind X)
//   X_into_data(const P&) -> TensorData                      (row-major, synchronous)
//   X_shape(const P&) -> Shape ; X_dtype(const P&) -> DType ; X_device(const P&) -> Device
//   X_to_device(P, const Device&) -> P
//   X_empty(const Shape&, const Device&, DType) -> P         (uninitialised values)
//   X_full(const Shape&, double value, const Device&, DType) -> P
//   X_reshape(P, const Shape&) -> P                          (same numel; a view when possible)
//   X_cast(P, DType) -> P                                    (within the kind)
//   float_into_int(P, DType) (truncation toward zero), int_into_float(P, DType),
//   bool_into_int(P, DType), bool_into_float(P, DType)
//   float_random(const Shape&, Distribution, const Device&, DType) -> FloatTensor
//   int_arange(int64 start, int64 end, int64 step, const Device&, DType) -> IntTensor
//   seed(uint64), sync(const Device&), name() -> std::string, device_name(const Device&)
template <class B>
concept CoreBackend = requires {
  typename B::Device;
  typename B::FloatTensor;
  typename B::IntTensor;
  typename B::BoolTensor;
}
&&requires(const typename B::FloatTensor& f, const typename B::IntTensor& i,
           const typename B::BoolTensor& b, const TensorData& data, const typename B::Device& dev,
           const Shape& shape, DType dt, Distribution dist) {
  { B::name() } -> std::convertible_to<std::string>;
  { B::device_name(dev) } -> std::convertible_to<std::string>;
  B::seed(std::uint64_t{0});
  B::sync(dev);
  { B::float_from_data(data, dev) } -> std::same_as<typename B::FloatTensor>;
  { B::int_from_data(data, dev) } -> std::same_as<typename B::IntTensor>;
  { B::bool_from_data(data, dev) } -> std::same_as<typename B::BoolTensor>;
  { B::float_into_data(f) } -> std::same_as<TensorData>;
  { B::int_into_data(i) } -> std::same_as<TensorData>;
  { B::bool_into_data(b) } -> std::same_as<TensorData>;
  { B::float_shape(f) } -> std::same_as<Shape>;
  { B::int_shape(i) } -> std::same_as<Shape>;
  { B::bool_shape(b) } -> std::same_as<Shape>;
  { B::float_dtype(f) } -> std::same_as<DType>;
  { B::int_dtype(i) } -> std::same_as<DType>;
  { B::bool_dtype(b) } -> std::same_as<DType>;
  { B::float_device(f) } -> std::same_as<typename B::Device>;
  { B::int_device(i) } -> std::same_as<typename B::Device>;
  { B::bool_device(b) } -> std::same_as<typename B::Device>;
  { B::float_to_device(f, dev) } -> std::same_as<typename B::FloatTensor>;
  { B::int_to_device(i, dev) } -> std::same_as<typename B::IntTensor>;
  { B::bool_to_device(b, dev) } -> std::same_as<typename B::BoolTensor>;
  { B::float_empty(shape, dev, dt) } -> std::same_as<typename B::FloatTensor>;
  { B::int_empty(shape, dev, dt) } -> std::same_as<typename B::IntTensor>;
  { B::bool_empty(shape, dev, dt) } -> std::same_as<typename B::BoolTensor>;
  { B::float_full(shape, 0.0, dev, dt) } -> std::same_as<typename B::FloatTensor>;
  { B::int_full(shape, 0.0, dev, dt) } -> std::same_as<typename B::IntTensor>;
  { B::bool_full(shape, 0.0, dev, dt) } -> std::same_as<typename B::BoolTensor>;
  { B::float_reshape(f, shape) } -> std::same_as<typename B::FloatTensor>;
  { B::int_reshape(i, shape) } -> std::same_as<typename B::IntTensor>;
  { B::bool_reshape(b, shape) } -> std::same_as<typename B::BoolTensor>;
  { B::float_cast(f, dt) } -> std::same_as<typename B::FloatTensor>;
  { B::int_cast(i, dt) } -> std::same_as<typename B::IntTensor>;
  { B::float_into_int(f, dt) } -> std::same_as<typename B::IntTensor>;
  { B::int_into_float(i, dt) } -> std::same_as<typename B::FloatTensor>;
  { B::bool_into_int(b, dt) } -> std::same_as<typename B::IntTensor>;
  { B::bool_into_float(b, dt) } -> std::same_as<typename B::FloatTensor>;
  { B::float_random(shape, dist, dev, dt) } -> std::same_as<typename B::FloatTensor>;
  {
    B::int_arange(std::int64_t{0}, std::int64_t{1}, std::int64_t{1}, dev, dt)
    } -> std::same_as<typename B::IntTensor>;
};

}  // namespace ember
