// ember::Dispatch: the run-time backend (Burn's burn-dispatch).
//
// Dispatch is one backend type whose device is chosen at run time (`ember::Device`: "cpu",
// "cpu+autodiff", later "cuda:0", ...), so applications, the CLI and model code need not be
// templates:
//
//   ember::DTensor<2> x = ember::DTensor<2>::ones({2, 3}, ember::Device::parse("cpu"));
//   void step(const ember::DTensor<2>& x);   // an ordinary function, any device
//
// Each Dispatch primitive records its device and the backend stack that device maps to (a
// statically compiled backend such as Cpu or Autodiff<Cpu>), and holds that stack's own
// primitive. Every backend function forwards to the same function of the operand's stack;
// operands on two different devices throw DeviceError "[float_add] tensors are on different
// devices: cpu and cpu+autodiff". `to_device` moves data between stacks.
//
// This header is light on purpose (DESIGN.md, "Habits"): it declares the functions; their
// definitions, and the backends behind them, are compiled once in src/dispatch/*.cpp
// (target ember::dispatch). The stacks are registered in one list, src/dispatch/stacks.hpp
// (see docs/architecture.md, "Dispatch").
//
// The semantics of every function are those of the backend contract
// (ember/backend/<family>.hpp); Dispatch adds only the device check. The optional overrides
// declared here (activations, softmax family, linear, sum, ...) run the stack's fast kernel
// when it has one and the front end's composite otherwise.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ember/backend/autodiff.hpp"
#include "ember/backend/backend.hpp"
#include "ember/dispatch/device.hpp"
#include "ember/dispatch/elementwise.hpp"
#include "ember/ir/elementwise.hpp"
#include "ember/ir/registry.hpp"
#include "ember/tensor/tensor.hpp"

namespace ember {

namespace dispatch {

/// Bytes reserved in a DispatchTensor for the stack's primitive (checked when a stack is
/// registered).
inline constexpr std::size_t kPrimitiveBytes = 128;
inline constexpr std::size_t kPrimitiveAlign = 16;

/// Copy, move and destroy of one stack primitive type (one table per type).
struct PrimitiveOps {
  void (*copy)(void* dst, const void* src);
  void (*move)(void* dst, void* src);
  void (*destroy)(void* p);
};

/// The implementation's access to a DispatchTensor's storage (defined in src/dispatch).
struct Access;

}  // namespace dispatch

/// The primitive of Dispatch for kind K (Float, Int or Bool): the device, the index of the
/// backend stack that runs it, and that stack's primitive, stored in place (no allocation).
/// Copying is cheap and shares data, like every primitive. A default-constructed value holds
/// nothing and may only be assigned to.
template <class K>
class DispatchTensor {
 public:
  using Kind = K;

  DispatchTensor() noexcept = default;
  DispatchTensor(const DispatchTensor& o) : device_(o.device_), stack_(o.stack_) {
    if (o.ops_) o.ops_->copy(buf_, o.buf_);
    ops_ = o.ops_;
  }
  DispatchTensor(DispatchTensor&& o) noexcept : device_(o.device_), stack_(o.stack_) {
    if (o.ops_) o.ops_->move(buf_, o.buf_);
    ops_ = o.ops_;
  }
  DispatchTensor& operator=(const DispatchTensor& o) {
    if (this != &o) {
      reset();
      if (o.ops_) o.ops_->copy(buf_, o.buf_);
      ops_ = o.ops_;
      device_ = o.device_;
      stack_ = o.stack_;
    }
    return *this;
  }
  DispatchTensor& operator=(DispatchTensor&& o) noexcept {
    if (this != &o) {
      reset();
      if (o.ops_) o.ops_->move(buf_, o.buf_);
      ops_ = o.ops_;
      device_ = o.device_;
      stack_ = o.stack_;
    }
    return *this;
  }
  ~DispatchTensor() { reset(); }

  /// The device the tensor lives on.
  const Device& device() const { return device_; }
  /// Index of the backend stack in the registration list (src/dispatch/stacks.hpp).
  std::uint8_t stack() const { return stack_; }
  /// False for a default-constructed value.
  bool has_value() const { return ops_ != nullptr; }

 private:
  friend struct dispatch::Access;
  void reset() noexcept {
    if (ops_) ops_->destroy(buf_);
    ops_ = nullptr;
  }

  const dispatch::PrimitiveOps* ops_ = nullptr;
  Device device_ = Device::cpu();
  std::uint8_t stack_ = 0;
  alignas(dispatch::kPrimitiveAlign) unsigned char buf_[dispatch::kPrimitiveBytes];
};

/// Gradients of one backward pass on an autodiff device of Dispatch (type-erased: holds the
/// stack's own Gradients).
class DispatchGradients {
 public:
  DispatchGradients() = default;
  /// The device of the backward pass that produced these gradients.
  const Device& device() const { return device_; }
  /// False for a default-constructed value.
  bool has_value() const { return impl_ != nullptr; }

 private:
  friend struct dispatch::Access;
  std::shared_ptr<void> impl_;
  Device device_ = Device::cpu();
  std::uint8_t stack_ = 0;
};

// Generated declarations (REQ and OPT rows; EXT rows are not offered).
#define EMBER_DISPATCH_DECLARE(Req, Res, Ret, name, Desc, Params) \
  EMBER_DISPATCH_DECLARE_##Req(Ret, name, Params)
#define EMBER_DISPATCH_DECLARE_REQ(Ret, name, Params) static Ret name(EMBER_PP_PARAMS Params);
#define EMBER_DISPATCH_DECLARE_OPT(Ret, name, Params) static Ret name(EMBER_PP_PARAMS Params);
#define EMBER_DISPATCH_DECLARE_EXT(Ret, name, Params)
#define EMBER_DISPATCH_DECLARE_N(Req, Res, Ret, name, Desc, Params, Ns) \
  EMBER_DISPATCH_DECLARE_N_##Req(Ret, name, Params)
#define EMBER_DISPATCH_DECLARE_N_REQ(Ret, name, Params) \
  template <std::size_t N>                              \
  static Ret name(EMBER_PP_PARAMS Params);
#define EMBER_DISPATCH_DECLARE_N_OPT EMBER_DISPATCH_DECLARE_N_REQ
#define EMBER_DISPATCH_DECLARE_N_EXT(Ret, name, Params)

/// The run-time backend. Satisfies `Backend` and `AutodiffBackend`. Every function forwards to the
/// operand's stack; functions with several tensor operands throw DeviceError "[<function>] tensors
/// are on different devices: <a> and <b>" when the operands' devices differ, and creation functions
/// throw DeviceError for a device that is not available in this build. Shapes, dims and dtypes are
/// assumed valid (checked by the front end), as for every backend.
struct Dispatch {
  using Device = ember::Device;
  using FloatTensor = DispatchTensor<Float>;
  using IntTensor = DispatchTensor<Int>;
  using BoolTensor = DispatchTensor<Bool>;

  EMBER_IR_TYPE_ALIASES(FloatTensor, IntTensor, BoolTensor, ember::Device);

  // ---- core (ember/backend/core.hpp) ----------------------------------------------------
  /// "dispatch".
  static std::string name() { return "dispatch"; }
  /// The device's canonical name ("cpu", "cpu+autodiff", ...).
  static std::string device_name(const Device& device) { return device.to_string(); }
  /// Seeds the random generator of every registered stack.
  static void seed(std::uint64_t seed);
  /// Waits for the work queued on `device`. Throws DeviceError if it is not available.
  static void sync(const Device& device);

  // ---- every REQ and OPT row of the op registry (ember/ir/registry.hpp) -------------------
  // Creation functions run on the stack of their device argument and throw DeviceError
  // when it is not available in this build; `X_device` is the tensor's device; `X_to_device`
  // moves between stacks (within one stack through the stack's to_device, between stacks
  // through TensorData; an autodiff tensor moved to a plain device loses its graph, a plain
  // tensor moved to an autodiff device is a constant). OPT rows run the stack's fast kernel
  // when it has one and the front end's composite otherwise (src/dispatch/defaults.hpp).
  // Generated: a new row needs no edit here.
  EMBER_IR_OPS(EMBER_DISPATCH_DECLARE, EMBER_DISPATCH_DECLARE_N)

  // ---- element-wise (ember/backend/elementwise.hpp) --------------------------------------
  // Generic over the rows of ir::ElementwiseOps: each forwards the row's index to one
  // function per family (src/dispatch/elementwise.cpp), which runs the stack's instantiation.
  template <class Op>
  static F float_unary(F x) {
    return ew_unary(dispatch::ew::Form::FloatUnary, ir::op_index<Op>, std::move(x));
  }
  template <class Op>
  static I int_unary(I x) {
    return ew_unary(dispatch::ew::Form::IntUnary, ir::op_index<Op>, std::move(x));
  }
  template <class Op>
  static Bo bool_unary(Bo x) {
    return ew_unary(dispatch::ew::Form::BoolUnary, ir::op_index<Op>, std::move(x));
  }
  template <class Op>
  static F float_binary(F lhs, F rhs) {
    return ew_binary(dispatch::ew::Form::FloatBinary, ir::op_index<Op>, std::move(lhs),
                     std::move(rhs));
  }
  template <class Op>
  static I int_binary(I lhs, I rhs) {
    return ew_binary(dispatch::ew::Form::IntBinary, ir::op_index<Op>, std::move(lhs),
                     std::move(rhs));
  }
  template <class Op>
  static Bo bool_binary(Bo lhs, Bo rhs) {
    return ew_binary(dispatch::ew::Form::BoolBinary, ir::op_index<Op>, std::move(lhs),
                     std::move(rhs));
  }
  template <class Op>
  static F float_binary_scalar(F lhs, double rhs) {
    return ew_scalar(ir::op_index<Op>, std::move(lhs), rhs);
  }
  template <class Op>
  static I int_binary_scalar(I lhs, i64 rhs) {
    return ew_scalar(ir::op_index<Op>, std::move(lhs), rhs);
  }
  template <class Op>
  static Bo float_compare(const F& lhs, const F& rhs) {
    return ew_compare(ir::op_index<Op>, lhs, rhs);
  }
  template <class Op>
  static Bo int_compare(const I& lhs, const I& rhs) {
    return ew_compare(ir::op_index<Op>, lhs, rhs);
  }
  template <class Op>
  static Bo bool_compare(const Bo& lhs, const Bo& rhs) {
    return ew_compare(ir::op_index<Op>, lhs, rhs);
  }
  template <class Op>
  static Bo float_compare_scalar(const F& lhs, double rhs) {
    return ew_compare_scalar(ir::op_index<Op>, lhs, rhs);
  }
  template <class Op>
  static Bo int_compare_scalar(const I& lhs, i64 rhs) {
    return ew_compare_scalar(ir::op_index<Op>, lhs, rhs);
  }
  template <class Op>
  static Bo float_predicate(const F& x) {
    return ew_predicate(ir::op_index<Op>, x);
  }
  static F float_clamp(F x, double min, double max);
  static I int_clamp(I x, i64 min, i64 max);

  /// The entry points of the templates above (row = index in ir::ElementwiseOps).
  template <class K>
  static DispatchTensor<K> ew_unary(dispatch::ew::Form form, unsigned row, DispatchTensor<K> x);
  template <class K>
  static DispatchTensor<K> ew_binary(dispatch::ew::Form form, unsigned row, DispatchTensor<K> a,
                                     DispatchTensor<K> b);
  static F ew_scalar(unsigned row, F x, double s);
  static I ew_scalar(unsigned row, I x, i64 s);
  template <class K>
  static Bo ew_compare(unsigned row, const DispatchTensor<K>& a, const DispatchTensor<K>& b);
  static Bo ew_compare_scalar(unsigned row, const F& x, double s);
  static Bo ew_compare_scalar(unsigned row, const I& x, i64 s);
  static Bo ew_predicate(unsigned row, const F& x);

  /// Deferred value checks (ember/backend/core.hpp): true when `bad`'s stack queued the check
  /// on its device, false when the caller must check on the host (every stack of this build).
  static bool bool_check_none(const Bo& bad, const char* op);

  // ---- autodiff (ember/backend/autodiff.hpp) ---------------------------------------------
  // Autodiff is a property of the device: tensors on an autodiff device ("cpu+autodiff")
  // live on an autodiff stack and record gradients; the inner backend is Dispatch itself,
  // on the same device without autodiff. On a plain device, is_require_grad is false,
  // detach and inner are the identity, and require_grad/backward throw DeviceError.
  using InnerBackend = Dispatch;
  using Gradients = DispatchGradients;

  /// The same values as a leaf that requires a gradient. Throws DeviceError when t is not on
  /// an autodiff device ("[require_grad] tensor on device cpu cannot require gradients: ...").
  static F float_require_grad(const F& t);
  /// Whether t is tracked (always false on a plain device).
  static bool float_is_require_grad(const F& t);
  /// The same values, cut from the graph (the identity on a plain device).
  static F float_detach(const F& t);
  /// Backpropagates from t (see ember/backend/autodiff.hpp). Throws DeviceError on a plain
  /// device; the stack throws Error when t is not tracked.
  static Gradients float_backward(const F& t, bool create_graph);
  /// The gradient of leaf t, on t's device without autodiff; nullopt when it has none.
  /// Throws DeviceError when `grads` come from another device than t's.
  static std::optional<F> float_grad(const F& t, const Gradients& grads);
  /// The gradient as a tensor on t's (autodiff) device, tracked after backward(true).
  static std::optional<F> float_grad_graph(const F& t, const Gradients& grads);
  /// Removes and returns t's gradient (on t's device without autodiff).
  static std::optional<F> float_grad_remove(const F& t, Gradients& grads);
  /// Replaces t's gradient by `grad` (on t's device without autodiff, t's shape).
  static void float_grad_replace(const F& t, Gradients& grads, F grad);
  /// The values of t on the same device without autodiff (no copy; the identity on a plain
  /// device).
  static F float_inner(const F& t);
  static I int_inner(const I& t);
  static Bo bool_inner(const Bo& t);
  /// A constant (untracked) tensor on the autodiff variant of t's device (`.autodiff()`,
  /// unless t is already on an autodiff device: then t itself). Throws DeviceError when no
  /// autodiff stack is registered for the device.
  static F float_from_inner(const F& t);
  static I int_from_inner(const I& t);
  static Bo bool_from_inner(const Bo& t);
};

static_assert(Backend<Dispatch>, "Dispatch must satisfy the Backend concept");
static_assert(AutodiffBackend<Dispatch>, "Dispatch must satisfy the AutodiffBackend concept");

/// The tensor type applications write most: a tensor of rank D and kind K on the run-time
/// backend, whose device is chosen at run time (`Device::default_()` unless given):
///   DTensor<2> w = DTensor<2>::random({3, 4});            // on EMBER_DEVICE or cpu
///   DTensor<1, Int> i = DTensor<1, Int>::arange(0, 4, Device::cpu());
/// `Tensor<B, D, K>` over a static backend (Cpu, Autodiff<Cpu>) keeps working unchanged.
template <std::size_t D, class K = Float>
using DTensor = Tensor<Dispatch, D, K>;

}  // namespace ember
