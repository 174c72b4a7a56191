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

// X-macro lists shared by the declarations below and the definitions in src/dispatch.
// clang-format off
#define EMBER_DISPATCH_FLOAT_BINARY(X) \
  X(add) X(sub) X(mul) X(div) X(remainder) X(powf) X(atan2) X(hypot) X(fmod) X(max_pair) X(min_pair)
#define EMBER_DISPATCH_FLOAT_SCALAR(X) X(add) X(sub) X(mul) X(div) X(remainder) X(powf) X(fmod)
#define EMBER_DISPATCH_FLOAT_UNARY(X)                                                              \
  X(neg)                                                                                           \
  X(abs) X(sign) X(square) X(recip) X(exp) X(log) X(log1p) X(sqrt) X(erf) X(sin) X(cos) X(tan)     \
      X(sinh) X(cosh) X(tanh) X(asin) X(acos) X(atan) X(asinh) X(acosh) X(atanh) X(round) X(floor) \
          X(ceil) X(trunc)
#define EMBER_DISPATCH_INT_BINARY(X)                                                    \
  X(add)                                                                                \
  X(sub) X(mul) X(div) X(remainder) X(powi) X(bitwise_and) X(bitwise_or) X(bitwise_xor) \
      X(bitwise_left_shift) X(bitwise_right_shift)
#define EMBER_DISPATCH_INT_UNARY(X) X(neg) X(abs) X(sign) X(square) X(bitwise_not)
#define EMBER_DISPATCH_COMPARE(X) \
  X(equal) X(not_equal) X(greater) X(greater_equal) X(lower) X(lower_equal)
#define EMBER_DISPATCH_BOOL_BINARY(X) X(and) X(or) X(xor) X(equal) X(not_equal)
/// Element-wise activations without parameters / with one or two double parameters.
#define EMBER_DISPATCH_ACT0(X)                                                          \
  X(relu)                                                                               \
  X(relu6) X(gelu) X(gelu_tanh) X(silu) X(mish) X(sigmoid) X(hard_swish) X(log_sigmoid) \
      X(softsign) X(selu) X(tanhshrink)
#define EMBER_DISPATCH_ACT1(X) X(leaky_relu) X(elu) X(celu) X(hard_shrink) X(soft_shrink)
#define EMBER_DISPATCH_ACT2(X) X(hard_sigmoid) X(softplus)
#define EMBER_DISPATCH_SOFTMAX(X) X(softmax) X(log_softmax) X(softmin) X(quiet_softmax)
/// Reductions of float and int tensors along one dim: X(name) for P(const P&, int64 dim).
#define EMBER_DISPATCH_REDUCE_DIM(X) \
  X(sum_dim) X(prod_dim) X(mean_dim) X(max_abs_dim) X(cumsum) X(cumprod) X(cummax) X(cummin)
/// Reductions returning (values, int indices): X(name) for pair<P, I>(const P&, int64 dim).
#define EMBER_DISPATCH_REDUCE_PAIR(X) \
  X(max_dim_with_indices) X(min_dim_with_indices) X(median_dim_with_indices)
// clang-format on

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

  using F = FloatTensor;
  using I = IntTensor;
  using Bo = BoolTensor;
  using OptF = std::optional<FloatTensor>;
  using FI = std::pair<FloatTensor, IntTensor>;
  using II = std::pair<IntTensor, IntTensor>;
  using FF = std::pair<FloatTensor, FloatTensor>;
  using Ranges = std::vector<SliceRange>;
  using Axes = std::vector<std::size_t>;
  using Pads = std::vector<std::pair<std::int64_t, std::int64_t>>;
  using i64 = std::int64_t;

  // ---- core (ember/backend/core.hpp) ----------------------------------------------------
  /// "dispatch".
  static std::string name() { return "dispatch"; }
  /// The device's canonical name ("cpu", "cpu+autodiff", ...).
  static std::string device_name(const Device& device) { return device.to_string(); }
  /// Seeds the random generator of every registered stack.
  static void seed(std::uint64_t seed);
  /// Waits for the work queued on `device`. Throws DeviceError if it is not available.
  static void sync(const Device& device);

  /// Creation on `device`: throw DeviceError when the device is not available in this build.
  static F float_from_data(const TensorData& data, const Device& device);
  static I int_from_data(const TensorData& data, const Device& device);
  static Bo bool_from_data(const TensorData& data, const Device& device);
  static F float_empty(const Shape& shape, const Device& device, DType dtype);
  static I int_empty(const Shape& shape, const Device& device, DType dtype);
  static Bo bool_empty(const Shape& shape, const Device& device, DType dtype);
  static F float_full(const Shape& shape, double value, const Device& device, DType dtype);
  static I int_full(const Shape& shape, double value, const Device& device, DType dtype);
  static Bo bool_full(const Shape& shape, double value, const Device& device, DType dtype);
  static F float_random(const Shape& shape, Distribution dist, const Device& device, DType dtype);
  static I int_arange(i64 start, i64 end, i64 step, const Device& device, DType dtype);

  /// Host copy (synchronous), shape, dtype and device of a primitive.
  static TensorData float_into_data(const F& t);
  static TensorData int_into_data(const I& t);
  static TensorData bool_into_data(const Bo& t);
  static Shape float_shape(const F& t);
  static Shape int_shape(const I& t);
  static Shape bool_shape(const Bo& t);
  static DType float_dtype(const F& t);
  static DType int_dtype(const I& t);
  static DType bool_dtype(const Bo& t);
  static Device float_device(const F& t) { return t.device(); }
  static Device int_device(const I& t) { return t.device(); }
  static Device bool_device(const Bo& t) { return t.device(); }

  /// Moves a tensor to `device`: within one stack through the stack's to_device, between
  /// stacks through TensorData (an autodiff tensor moved to a plain device loses its graph;
  /// a plain tensor moved to an autodiff device is a constant). Throws DeviceError when the
  /// device is not available.
  static F float_to_device(F t, const Device& device);
  static I int_to_device(I t, const Device& device);
  static Bo bool_to_device(Bo t, const Device& device);

  /// Reshape and casts (see ember/backend/core.hpp).
  static F float_reshape(F t, const Shape& shape);
  static I int_reshape(I t, const Shape& shape);
  static Bo bool_reshape(Bo t, const Shape& shape);
  static F float_cast(F t, DType dtype);
  static I int_cast(I t, DType dtype);
  static I float_into_int(F t, DType dtype);
  static F int_into_float(I t, DType dtype);
  static I bool_into_int(Bo t, DType dtype);
  static F bool_into_float(Bo t, DType dtype);
  static Bo float_into_bool(F t);
  static Bo int_into_bool(I t);

  // ---- element-wise (ember/backend/elementwise.hpp) --------------------------------------
#define EMBER_DISPATCH_DECL_FB(name) static F float_##name(F lhs, F rhs);
#define EMBER_DISPATCH_DECL_FS(name) static F float_##name##_scalar(F lhs, double rhs);
#define EMBER_DISPATCH_DECL_FU(name) static F float_##name(F x);
#define EMBER_DISPATCH_DECL_IB(name) \
  static I int_##name(I lhs, I rhs); \
  static I int_##name##_scalar(I lhs, i64 rhs);
#define EMBER_DISPATCH_DECL_IU(name) static I int_##name(I x);
#define EMBER_DISPATCH_DECL_CMP(name)                      \
  static Bo float_##name(const F& lhs, const F& rhs);      \
  static Bo float_##name##_elem(const F& lhs, double rhs); \
  static Bo int_##name(const I& lhs, const I& rhs);        \
  static Bo int_##name##_elem(const I& lhs, i64 rhs);
#define EMBER_DISPATCH_DECL_BB(name) static Bo bool_##name(Bo lhs, Bo rhs);
  EMBER_DISPATCH_FLOAT_BINARY(EMBER_DISPATCH_DECL_FB)
  EMBER_DISPATCH_FLOAT_SCALAR(EMBER_DISPATCH_DECL_FS)
  EMBER_DISPATCH_FLOAT_UNARY(EMBER_DISPATCH_DECL_FU)
  EMBER_DISPATCH_INT_BINARY(EMBER_DISPATCH_DECL_IB)
  EMBER_DISPATCH_INT_UNARY(EMBER_DISPATCH_DECL_IU)
  EMBER_DISPATCH_COMPARE(EMBER_DISPATCH_DECL_CMP)
  EMBER_DISPATCH_BOOL_BINARY(EMBER_DISPATCH_DECL_BB)
#undef EMBER_DISPATCH_DECL_FB
#undef EMBER_DISPATCH_DECL_FS
#undef EMBER_DISPATCH_DECL_FU
#undef EMBER_DISPATCH_DECL_IB
#undef EMBER_DISPATCH_DECL_IU
#undef EMBER_DISPATCH_DECL_CMP
#undef EMBER_DISPATCH_DECL_BB
  static I int_max_pair(I lhs, I rhs);
  static I int_min_pair(I lhs, I rhs);
  static F float_clamp(F x, double min, double max);
  static F float_clamp_min(F x, double min);
  static F float_clamp_max(F x, double max);
  static I int_clamp(I x, i64 min, i64 max);
  static I int_clamp_min(I x, i64 min);
  static I int_clamp_max(I x, i64 max);
  static Bo float_is_nan(const F& x);
  static Bo float_is_inf(const F& x);
  static Bo float_is_finite(const F& x);
  static Bo bool_not(Bo x);

  // ---- layout (ember/backend/layout.hpp), incl. the optional unfold/squeeze/unsqueeze/pad
#define EMBER_DISPATCH_DECL_LAYOUT(X, P)                                              \
  static P X##_permute(P t, const Axes& axes);                                        \
  static P X##_expand(P t, const Shape& shape);                                       \
  static P X##_slice(P t, const Ranges& ranges);                                      \
  static P X##_flip(P t, const Axes& axes);                                           \
  static P X##_cat(const std::vector<P>& tensors, std::size_t dim);                   \
  static P X##_unfold(P t, std::size_t dim, i64 size, i64 step);                      \
  static P X##_squeeze_dims(P t, const Axes& dims);                                   \
  static P X##_unsqueeze_dims(P t, const Axes& dims);                                 \
  static P X##_pad(const P& t, const Pads& pads, PadMode mode, double value);         \
  /* indexing (ember/backend/indexing.hpp) */                                         \
  static P X##_slice_assign(P t, const Ranges& ranges, P values);                     \
  static P X##_select(const P& t, std::size_t dim, const I& indices);                 \
  static P X##_select_assign(P t, std::size_t dim, const I& indices, const P& values, \
                             IndexUpdate update);                                     \
  static P X##_gather(std::size_t dim, const P& t, const I& indices);                 \
  static P X##_scatter(std::size_t dim, P t, const I& indices, const P& values,       \
                       IndexUpdate update);                                           \
  static P X##_mask_where(P t, const Bo& mask, const P& values);                      \
  static P X##_mask_fill(P t, const Bo& mask, double value);
  EMBER_DISPATCH_DECL_LAYOUT(float, F)
  EMBER_DISPATCH_DECL_LAYOUT(int, I)
  EMBER_DISPATCH_DECL_LAYOUT(bool, Bo)
#undef EMBER_DISPATCH_DECL_LAYOUT
  static I bool_argwhere(const Bo& mask, DType index_dtype);

  // ---- reduce (ember/backend/reduce.hpp), incl. the optional sum/max_dim/argmax ---------
#define EMBER_DISPATCH_DECL_REDUCE(X, P, PI)                             \
  static P X##_sum_dim(const P& x, i64 dim);                             \
  static P X##_prod_dim(const P& x, i64 dim);                            \
  static P X##_mean_dim(const P& x, i64 dim);                            \
  static P X##_max_abs_dim(const P& x, i64 dim);                         \
  static P X##_cumsum(const P& x, i64 dim);                              \
  static P X##_cumprod(const P& x, i64 dim);                             \
  static P X##_cummax(const P& x, i64 dim);                              \
  static P X##_cummin(const P& x, i64 dim);                              \
  static PI X##_max_dim_with_indices(const P& x, i64 dim);               \
  static PI X##_min_dim_with_indices(const P& x, i64 dim);               \
  static PI X##_median_dim_with_indices(const P& x, i64 dim);            \
  static PI X##_sort_with_indices(const P& x, i64 dim, bool descending); \
  static PI X##_topk_with_indices(const P& x, i64 k, i64 dim);           \
  static Bo X##_any_dim(const P& x, i64 dim);                            \
  static Bo X##_all_dim(const P& x, i64 dim);                            \
  static P X##_sum(const P& x);                                          \
  static P X##_max_dim(const P& x, i64 dim);                             \
  static P X##_min_dim(const P& x, i64 dim);                             \
  static I X##_argmax(const P& x, i64 dim);                              \
  static I X##_argmin(const P& x, i64 dim);
  EMBER_DISPATCH_DECL_REDUCE(float, F, FI)
  EMBER_DISPATCH_DECL_REDUCE(int, I, II)
#undef EMBER_DISPATCH_DECL_REDUCE
  static FF float_var_mean(const F& x, i64 dim, i64 correction);
  static Bo bool_any_dim(const Bo& x, i64 dim);
  static Bo bool_all_dim(const Bo& x, i64 dim);

  // ---- linalg (ember/backend/linalg.hpp) ------------------------------------------------
  static F float_matmul(const F& lhs, const F& rhs);
  static I int_matmul(const I& lhs, const I& rhs);
  /// The optional linalg functions the front end needs (every registered stack must define
  /// them, checked at compile time): [..., m, n] -> [..., min(m, n)] diagonal; cross product of
  /// 3-vectors along dim; torch.linalg.vector_norm with the dim kept; cosine similarity along dim.
  static F float_diag(const F& t);
  static I int_diag(const I& t);
  static F float_cross(const F& lhs, const F& rhs, std::size_t dim);
  static I int_cross(const I& lhs, const I& rhs, std::size_t dim);
  static F float_vector_norm(const F& t, double p, std::size_t dim);
  static F float_cosine_similarity(const F& lhs, const F& rhs, std::size_t dim, double eps);

  // ---- conv (ember/backend/conv.hpp) ----------------------------------------------------
  static F conv1d(const F& x, const F& weight, const OptF& bias, const ConvOptions<1>& opt);
  static F conv2d(const F& x, const F& weight, const OptF& bias, const ConvOptions<2>& opt);
  static F conv3d(const F& x, const F& weight, const OptF& bias, const ConvOptions<3>& opt);
  static F conv_transpose1d(const F& x, const F& weight, const OptF& bias,
                            const ConvTransposeOptions<1>& opt);
  static F conv_transpose2d(const F& x, const F& weight, const OptF& bias,
                            const ConvTransposeOptions<2>& opt);
  static F conv_transpose3d(const F& x, const F& weight, const OptF& bias,
                            const ConvTransposeOptions<3>& opt);
  static F deform_conv2d(const F& x, const F& offset, const F& weight, const OptF& mask,
                         const OptF& bias, const DeformConvOptions& opt);
  static F unfold4d(const F& x, const std::array<i64, 2>& kernel_size, const UnfoldOptions& opt);
  static F fold4d(const F& x, const std::array<i64, 2>& output_size,
                  const std::array<i64, 2>& kernel_size, const UnfoldOptions& opt);

  // ---- pool (ember/backend/pool.hpp) ----------------------------------------------------
  static F float_max_pool2d(const F& x, PoolArg2 kernel, PoolArg2 stride, PoolArg2 padding,
                            PoolArg2 dilation, bool ceil_mode);
  static FI float_max_pool2d_with_indices(const F& x, PoolArg2 kernel, PoolArg2 stride,
                                          PoolArg2 padding, PoolArg2 dilation, bool ceil_mode);
  static F float_avg_pool2d(const F& x, PoolArg2 kernel, PoolArg2 stride, PoolArg2 padding,
                            bool count_include_pad, bool ceil_mode);
  static F float_adaptive_avg_pool2d(const F& x, PoolArg2 output_size);
  static F float_interpolate(const F& x, PoolArg2 output_size, InterpolateOptions options);
  static F float_grid_sample_2d(const F& x, const F& grid, GridSampleOptions options);

  // ---- optional activation overrides (ember/backend/activation.hpp) ---------------------
  // The stack's fused kernel when it has one, else the front end's composite.
#define EMBER_DISPATCH_DECL_ACT0(name) static F float_##name(F x);
#define EMBER_DISPATCH_DECL_ACT1(name) static F float_##name(F x, double a);
#define EMBER_DISPATCH_DECL_ACT2(name) static F float_##name(F x, double a, double b);
#define EMBER_DISPATCH_DECL_SOFTMAX(name) static F float_##name(const F& x, std::size_t dim);
  EMBER_DISPATCH_ACT0(EMBER_DISPATCH_DECL_ACT0)
  EMBER_DISPATCH_ACT1(EMBER_DISPATCH_DECL_ACT1)
  EMBER_DISPATCH_ACT2(EMBER_DISPATCH_DECL_ACT2)
  EMBER_DISPATCH_SOFTMAX(EMBER_DISPATCH_DECL_SOFTMAX)
#undef EMBER_DISPATCH_DECL_ACT0
#undef EMBER_DISPATCH_DECL_ACT1
#undef EMBER_DISPATCH_DECL_ACT2
#undef EMBER_DISPATCH_DECL_SOFTMAX
  /// x [..., in], weight [out, in], bias [out] -> [..., out] (torch.nn.functional.linear).
  static F float_linear(const F& x, const F& weight, const OptF& bias);
  /// Training batch norm: x [N, C, ...], weight/bias [C] -> {y, stats [2, C] (mean; biased
  /// var)} (module::batch_norm_train; the stack's fused kernel, else its composite).
  static FF float_batch_norm_train(const F& x, const OptF& weight, const OptF& bias, double eps);

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
