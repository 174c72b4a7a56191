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

#include "ember/core/data.hpp"
#include "ember/core/distribution.hpp"
#include "ember/core/dtype.hpp"
#include "ember/core/kind.hpp"
#include "ember/core/options.hpp"
#include "ember/core/runtime.hpp"
#include "ember/core/shape.hpp"

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
// Optional runtime services (detected with requires; Forward passes them through, Dispatch
// reaches them through ember::memory_stats(device) and ember::set_num_threads(device, n)):
//   memory_stats(const Device&) -> MemoryStats ; reset_peak_memory(const Device&)
//   set_num_threads(int) ; num_threads() -> int      (host threads of the kernels)
//
// Value checks that need a tensor's values (index ranges, class targets, labels, finite norms)
// never read them back behind the caller's back on an asynchronous device. The front end
// computes a Bool tensor marking the bad elements with tensor ops and calls the optional
//   bool_check_none(const Bo& bad, const char* op) -> bool
// A backend that queues its work on a device checks `bad` there, records the first violation
// in the device's error flag, and returns true; the next synchronising call (into_data, sync)
// throws it as ValueError naming `op`. Returning false (Dispatch on a host device), or not
// defining it (the CPU), makes the front end read `bad` back and throw the op's own error at
// once (ember/tensor/ops/value_check.hpp).

/// The types and the non-op functions every backend has; the op functions of the contract
/// are checked by `Backend` (ember/backend/backend.hpp) from the op registry.
template <class B>
concept CoreBackend = requires {
  typename B::Device;
  typename B::FloatTensor;
  typename B::IntTensor;
  typename B::BoolTensor;
}
&&requires(const typename B::Device& dev) {
  { B::name() } -> std::convertible_to<std::string>;
  { B::device_name(dev) } -> std::convertible_to<std::string>;
  B::seed(std::uint64_t{0});
  B::sync(dev);
};

}  // namespace ember
