// ember::Gpu<R>: the GPU backend over a kernel runtime R (Burn's CubeBackend<R>), with
// ember::Cuda = Gpu<CudaRuntime> and ember::Vulkan = Gpu<VulkanRuntime> (ember/gpu/cuda.hpp,
// ember/gpu/vulkan.hpp). Kernels are written once in ember::kernel and compiled by R.
//
// The backend implements the whole contract from the first day: it derives from the generated
// pass-through Forward<Cpu, ...> whose unwrap/lift move tensors between the device and the
// host, so every function without a device kernel yet runs on the CPU backend on a copy of its
// inputs and uploads its result (the host fallback, like PyTorch's MPS fallback). Functions
// with device kernels hide the forwarded ones below. `EMBER_GPU_FALLBACK_LOG=1` prints each
// function the first time it falls back; `gpu::fallback_counts()` counts them (docs/gpu.md).
//
// Primitives: one GpuTensor type for the three kinds (a strided view over a device buffer).
// Devices: GpuDevice<R>{index}. dtypes: f32, f16, bf16, f64, i64, i32, u8, bool have device
// kernels where the device supports them (DeviceProperties); i16 and i8 tensors live on the
// device but every op on them runs through the host.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "ember/backend/attention_composite.hpp"
#include "ember/backend/forward.hpp"
#include "ember/backend/views.hpp"
#include "ember/core/value_range.hpp"
#include "ember/cpu/cpu.hpp"
#include "ember/gpu/attention.hpp"
#include "ember/gpu/conv.hpp"
#include "ember/gpu/create.hpp"
#include "ember/gpu/expr.hpp"
#include "ember/gpu/index.hpp"
#include "ember/gpu/ops.hpp"
#include "ember/gpu/pool.hpp"
#include "ember/gpu/rows.hpp"
#include "ember/gpu/scan.hpp"
#include "ember/gpu/sort.hpp"

namespace ember {

namespace gpu {

/// Records that backend function `fn` ran through the host; prints it once when
/// EMBER_GPU_FALLBACK_LOG is set.
void note_fallback(const char* fn);
/// How many times each function ran through the host since the start.
std::map<std::string, std::uint64_t> fallback_counts();

/// Where a result of a host-fallback call goes: the device of its first tensor or device
/// argument.
struct Placement {
  kernel::ComputeDevice* dev = nullptr;
  int index = 0;
};

/// The broadcast shape of two shapes of one rank (the front end has checked them).
Shape broadcast_shape(const Shape& a, const Shape& b);

}  // namespace gpu

template <class R>
struct GpuTypes {
  using FloatTensor = GpuTensor;
  using IntTensor = GpuTensor;
  using BoolTensor = GpuTensor;
  using Device = GpuDevice<R>;
  static constexpr bool forward_float = true;
  /// The optional rows (softmax, batch norm, linear, ...) without a device kernel are not
  /// run on the host: the front end's composites run them on the device's own kernels.
  static constexpr bool forward_optional = false;
};

/// Inside Gpu<R>: the CPU backend's `fn` on host copies of the arguments, its result uploaded
/// (the host path of a function whose device kernels do not serve the case).
#define EMBER_GPU_ON_HOST(fn, ...) \
  host(                            \
      #fn, [](auto&&... a_) { return Cpu::fn(a_...); }, __VA_ARGS__)

template <class R>
struct Gpu : Forward<Cpu, GpuTypes<R>, Gpu<R>> {
  using Base = Forward<Cpu, GpuTypes<R>, Gpu<R>>;
  using Device = GpuDevice<R>;
  using FloatTensor = GpuTensor;
  using IntTensor = GpuTensor;
  using BoolTensor = GpuTensor;
  EMBER_IR_TYPE_ALIASES(GpuTensor, GpuTensor, GpuTensor, Device);
  using Val = kernel::Val;

  static std::string name() { return R::name; }
  static std::string device_name(const Device& d) {
    return d.to_string() + " (" + R::device(d.index).properties().name + ")";
  }
  /// The same counter-based generator as the CPU: a seed gives the same values everywhere.
  static void seed(std::uint64_t s) { Cpu::seed(s); }
  static void sync(const Device& d) { R::device(d.index).sync(); }
  /// Bytes of live tensors, their peak and the pool's cached bytes on device `d`.
  static MemoryStats memory_stats(const Device& d) { return gpu::memory_stats(R::device(d.index)); }
  static void reset_peak_memory(const Device& d) { R::device(d.index).reset_peak_memory(); }

  // ---- host fallback: unwrap to the CPU backend, lift back to the device --------------------

  template <class T>
  static decltype(auto) unwrap(T&& x) {
    using D = std::remove_cvref_t<T>;
    if constexpr (std::is_same_v<D, GpuTensor>) {
      return gpu::download(x);
    } else if constexpr (std::is_same_v<D, Device>) {
      return CpuDevice{};
    } else if constexpr (std::is_same_v<D, std::vector<GpuTensor>>) {
      std::vector<CpuTensor> v;
      v.reserve(x.size());
      for (const GpuTensor& t : x) v.push_back(gpu::download(t));
      return v;
    } else if constexpr (std::is_same_v<D, std::optional<GpuTensor>>) {
      return x ? std::optional<CpuTensor>(gpu::download(*x)) : std::optional<CpuTensor>();
    } else {
      return std::forward<T>(x);
    }
  }

  template <class D, class Ret, class Call, class... A>
  static Ret run(const char* fn, Call call, A&&... a) {
    gpu::Placement p;
    (place(p, a), ...);
    if (!p.dev) p = {&R::device(0), 0};
    gpu::note_fallback(fn);
    return lift_to<Ret>(call(unwrap(std::forward<A>(a))...), p);
  }
  /// The host path of a function that has a device kernel for some cases only: `call` runs
  /// the CPU backend's function on the downloaded arguments; the result comes back up.
  template <class Call, class... A>
  static GpuTensor host(const char* fn, Call call, A&&... a) {
    return run<void, GpuTensor>(fn, call, std::forward<A>(a)...);
  }

  // ---- core ---------------------------------------------------------------------------------
#define EMBER_GPU_CORE(X)                                                   \
  static GpuTensor X##_from_data(const TensorData& d, const Device& dev) {  \
    return gpu::upload(d, R::device(dev.index), dev.index);                 \
  }                                                                         \
  static TensorData X##_into_data(const GpuTensor& t) {                     \
    return gpu::into_data(t);                                               \
  }                                                                         \
  static Shape X##_shape(const GpuTensor& t) {                              \
    return t.shape;                                                         \
  }                                                                         \
  static DType X##_dtype(const GpuTensor& t) {                              \
    return t.dtype;                                                         \
  }                                                                         \
  static Device X##_device(const GpuTensor& t) {                            \
    return Device{t.device};                                                \
  }                                                                         \
  static GpuTensor X##_to_device(GpuTensor t, const Device& dev) {          \
    return gpu::to_device(t, R::device(dev.index), dev.index);              \
  }                                                                         \
  static GpuTensor X##_empty(const Shape& s, const Device& dev, DType dt) { \
    return gpu::empty(s, dt, R::device(dev.index), dev.index);              \
  }                                                                         \
  static GpuTensor X##_reshape(GpuTensor t, const Shape& s) {               \
    return gpu::reshape(t, s);                                              \
  }
  EMBER_GPU_CORE(float)
  EMBER_GPU_CORE(int)
  EMBER_GPU_CORE(bool)
#undef EMBER_GPU_CORE

  // ---- creation (src/gpu/create.cpp) ----------------------------------------------------------
#define EMBER_GPU_FULL(X)                                                                    \
  static GpuTensor X##_full(const Shape& s, double v, const Device& dev, DType dt) {         \
    if (auto r = gpu::full(s, v, dt, R::device(dev.index), dev.index)) return std::move(*r); \
    return Base::X##_full(s, v, dev, dt);                                                    \
  }
  EMBER_GPU_FULL(float)
  EMBER_GPU_FULL(int)
  EMBER_GPU_FULL(bool)
#undef EMBER_GPU_FULL
  static GpuTensor int_arange(std::int64_t start, std::int64_t end, std::int64_t step,
                              const Device& dev, DType dt) {
    if (auto r = gpu::arange(start, end, step, dt, R::device(dev.index), dev.index))
      return std::move(*r);
    return Base::int_arange(start, end, step, dev, dt);
  }
  /// The CPU's generator on the device (uniform, Bernoulli); normal values on the host.
  static GpuTensor float_random(const Shape& s, Distribution d, const Device& dev, DType dt) {
    if (auto r = gpu::random(s, d, dt, R::device(dev.index), dev.index)) return std::move(*r);
    return Base::float_random(s, d, dev, dt);
  }

  // ---- views (ember/backend/views.hpp) ------------------------------------------------------
  // Negative strides are not views here: the kernels address elements with unsigned 32-bit
  // offsets, so flip and a slice with a negative step make a contiguous copy (on the device).
#define EMBER_GPU_VIEWS(X)                                                                  \
  static GpuTensor X##_permute(GpuTensor t, const ir::Axes& a) {                            \
    return views::permute(std::move(t), a);                                                 \
  }                                                                                         \
  static GpuTensor X##_expand(GpuTensor t, const Shape& s) {                                \
    return views::expand(std::move(t), s);                                                  \
  }                                                                                         \
  static GpuTensor X##_slice(GpuTensor t, const ir::Ranges& r) {                            \
    if (auto c = reversed_slice(t, r)) return std::move(*c);                                \
    for (const SliceRange& range : r)                                                       \
      if (range.step < 0) return Base::X##_slice(std::move(t), r);                          \
    return views::slice(std::move(t), r);                                                   \
  }                                                                                         \
  static GpuTensor X##_flip(GpuTensor t, const ir::Axes& a) {                               \
    if (auto c = gpu::flip(t, a)) return std::move(*c);                                     \
    return Base::X##_flip(std::move(t), a);                                                 \
  }                                                                                         \
  static GpuTensor X##_unfold(GpuTensor t, std::size_t d, std::int64_t n, std::int64_t s) { \
    return views::unfold(std::move(t), d, n, s);                                            \
  }                                                                                         \
  static GpuTensor X##_squeeze_dims(GpuTensor t, const ir::Axes& a) {                       \
    return views::squeeze(std::move(t), a);                                                 \
  }                                                                                         \
  static GpuTensor X##_unsqueeze_dims(GpuTensor t, const ir::Axes& a) {                     \
    return views::unsqueeze(std::move(t), a);                                               \
  }
  EMBER_GPU_VIEWS(float)
  EMBER_GPU_VIEWS(int)
  EMBER_GPU_VIEWS(bool)
#undef EMBER_GPU_VIEWS

  // ---- casts --------------------------------------------------------------------------------
  static GpuTensor float_cast(GpuTensor x, DType dt) {
    if (x.dtype == dt) return x;
    if (!native2(x, dt)) return Base::float_cast(std::move(x), dt);
    return convert(x, dt, "float_cast");
  }
  static GpuTensor int_into_float(const GpuTensor& x, DType dt) {
    if (!native2(x, dt)) return Base::int_into_float(x, dt);
    return convert(x, dt, "int_into_float");
  }
  static GpuTensor bool_into_float(const GpuTensor& x, DType dt) {
    if (!native2(x, dt)) return Base::bool_into_float(x, dt);
    return convert(x, dt, "bool_into_float");
  }
  static GpuTensor bool_into_int(const GpuTensor& x, DType dt) {
    if (!native2(x, dt)) return Base::bool_into_int(x, dt);
    return convert(x, dt, "bool_into_int");
  }
  static GpuTensor float_into_bool(const GpuTensor& x) {
    if (!native1(x)) return Base::float_into_bool(x);
    return nonzero(x);
  }
  static GpuTensor int_into_bool(const GpuTensor& x) {
    if (!native1(x)) return Base::int_into_bool(x);
    return nonzero(x);
  }

  // ---- the element-wise table -----------------------------------------------------------------
  // A row runs on the device when it has a kernel expression for the tensor kind
  // (gpu::expr::Of), the dtypes are native and the device has what the kernel needs (else
  // the host). Functions taking tensors by value let the result reuse a buffer they alone
  // hold; const& ones never do.
  template <class Op>
  static F float_unary(F x) {
    if constexpr (gpu::expr::native<Op, ir::kFloat>)
      if (native1(x))
        if (auto r = unary_map<Op>(x, x.dtype, true)) return std::move(*r);
    return Base::template float_unary<Op>(std::move(x));
  }
  template <class Op>
  static I int_unary(I x) {
    if constexpr (gpu::expr::native<Op, ir::kInt>)
      if (native1(x))
        if (auto r = unary_map<Op>(x, x.dtype, true)) return std::move(*r);
    return Base::template int_unary<Op>(std::move(x));
  }
  template <class Op>
  static Bo bool_unary(Bo x) {
    if constexpr (gpu::expr::native<Op, ir::kBool>)
      if (native1(x))
        if (auto r = unary_map<Op>(x, DType::Bool, true)) return std::move(*r);
    return Base::template bool_unary<Op>(std::move(x));
  }
  template <class Op>
  static Bo float_predicate(const F& x) {
    if constexpr (gpu::expr::native<Op, ir::kFloat>)
      if (native1(x))
        if (auto r = unary_map<Op>(x, DType::Bool, false)) return std::move(*r);
    return Base::template float_predicate<Op>(x);
  }
  template <class Op>
  static F float_binary(F a, F b) {
    if constexpr (gpu::expr::native<Op, ir::kFloat>)
      if (native1(a) && native1(b))
        if (auto r = binary_map<Op>(a, b, a.dtype, true)) return std::move(*r);
    return Base::template float_binary<Op>(std::move(a), std::move(b));
  }
  template <class Op>
  static I int_binary(I a, I b) {
    if constexpr (gpu::expr::native<Op, ir::kInt>)
      if (native1(a) && native1(b))
        if (auto r = binary_map<Op>(a, b, a.dtype, true)) return std::move(*r);
    return Base::template int_binary<Op>(std::move(a), std::move(b));
  }
  template <class Op>
  static Bo bool_binary(Bo a, Bo b) {
    if constexpr (gpu::expr::native<Op, ir::kBool>)
      if (native1(a) && native1(b))
        if (auto r = binary_map<Op>(a, b, DType::Bool, true)) return std::move(*r);
    return Base::template bool_binary<Op>(std::move(a), std::move(b));
  }
  template <class Op>
  static Bo float_compare(const F& a, const F& b) {
    if constexpr (gpu::expr::native<Op, ir::kFloat>)
      if (native1(a) && native1(b))
        if (auto r = binary_map<Op>(a, b, DType::Bool, false)) return std::move(*r);
    return Base::template float_compare<Op>(a, b);
  }
  template <class Op>
  static Bo int_compare(const I& a, const I& b) {
    if constexpr (gpu::expr::native<Op, ir::kInt>)
      if (native1(a) && native1(b))
        if (auto r = binary_map<Op>(a, b, DType::Bool, false)) return std::move(*r);
    return Base::template int_compare<Op>(a, b);
  }
  template <class Op>
  static Bo bool_compare(const Bo& a, const Bo& b) {
    if constexpr (gpu::expr::native<Op, ir::kBool>)
      if (native1(a) && native1(b))
        if (auto r = binary_map<Op>(a, b, DType::Bool, false)) return std::move(*r);
    return Base::template bool_compare<Op>(a, b);
  }
  /// Tensor-scalar forms compute as the CPU backend does: floats in f32 (f16, bf16, f32) or
  /// f64 with the scalar rounded to that type; integers with the scalar converted to the
  /// tensor's type (binary) or both in i64 (comparisons).
  template <class Op>
  static F float_binary_scalar(F a, double s) {
    if constexpr (gpu::expr::native<Op, ir::kFloat>)
      if (native1(a))
        if (auto r = float_scalar_map<Op>(a, s, a.dtype, true)) return std::move(*r);
    return Base::template float_binary_scalar<Op>(std::move(a), s);
  }
  template <class Op>
  static Bo float_compare_scalar(const F& a, double s) {
    if constexpr (gpu::expr::native<Op, ir::kFloat>)
      if (native1(a))
        if (auto r = float_scalar_map<Op>(a, s, DType::Bool, false)) return std::move(*r);
    return Base::template float_compare_scalar<Op>(a, s);
  }
  template <class Op>
  static I int_binary_scalar(I a, std::int64_t s) {
    if constexpr (gpu::expr::native<Op, ir::kInt>)
      if (native1(a))
        if (auto r = int_scalar_map<Op>(a, s, a.dtype, false, true)) return std::move(*r);
    return Base::template int_binary_scalar<Op>(std::move(a), s);
  }
  template <class Op>
  static Bo int_compare_scalar(const I& a, std::int64_t s) {
    if constexpr (gpu::expr::native<Op, ir::kInt>)
      if (native1(a) && native_on(DType::I64, a))
        if (auto r = int_scalar_map<Op>(a, s, DType::Bool, true, false)) return std::move(*r);
    return Base::template int_compare_scalar<Op>(a, s);
  }

  /// A fused block of element-wise steps (Fusion<Gpu<R>>): one generated kernel per block
  /// pattern; nullopt (inputs untouched) where the device or the steps are not served
  /// (gpu::fused_elementwise).
  static std::optional<std::vector<F>> float_fused_elementwise(const ir::FusedBlock& block,
                                                               std::vector<F>& inputs) {
    return gpu::fused_elementwise(block, inputs);
  }

  // ---- activations (the CPU backend's scalar definitions, src/cpu/activation.cpp) -----------
#define EMBER_GPU_ACT(fn, e)                                                                  \
  static F fn(F x) {                                                                          \
    if (native_float(x))                                                                      \
      if (auto r = act_map(x, #fn, {}, [](Val a, std::span<const Val>) -> Val { return e; })) \
        return std::move(*r);                                                                 \
    return EMBER_GPU_ON_HOST(fn, std::move(x));                                               \
  }
#define EMBER_GPU_ACT2(fn, e)                                                                    \
  static F fn(F x, double p0, double p1) {                                                       \
    if (native_float(x))                                                                         \
      if (auto r =                                                                               \
              act_map(x, #fn, {p0, p1}, [](Val a, std::span<const Val> p) -> Val { return e; })) \
        return std::move(*r);                                                                    \
    return EMBER_GPU_ON_HOST(fn, std::move(x), p0, p1);                                          \
  }
  EMBER_GPU_ACT(float_relu, kernel::select(a < lit(a, 0), lit(a, 0), a))
  EMBER_GPU_ACT(float_relu6, kernel::select(a < lit(a, 0), lit(a, 0),
                                            kernel::select(a > lit(a, 6), lit(a, 6), a)))
  EMBER_GPU_ACT(float_gelu,
                lit(a, 0.5) * a * (lit(a, 1) + kernel::erf(a * lit(a, 0.70710678118654752440))))
  EMBER_GPU_ACT(float_gelu_tanh, lit(a, 0.5) * a *
                                     (lit(a, 1) + kernel::tanh(lit(a, 0.79788456080286535588) *
                                                               (a + lit(a, 0.044715) * a * a * a))))
  EMBER_GPU_ACT(float_silu, a / (lit(a, 1) + kernel::exp(-a)))
  EMBER_GPU_ACT(float_sigmoid, lit(a, 1) / (lit(a, 1) + kernel::exp(-a)))
  EMBER_GPU_ACT(float_hard_swish, a* kernel::select(a + lit(a, 3) < lit(a, 0), lit(a, 0),
                                                    kernel::select(a + lit(a, 3) > lit(a, 6),
                                                                   lit(a, 6), a + lit(a, 3))) /
                                      lit(a, 6))
  EMBER_GPU_ACT(float_softsign, a / (lit(a, 1) + kernel::abs(a)))
  EMBER_GPU_ACT(float_tanhshrink, a - kernel::tanh(a))
  static F float_leaky_relu(F x, double slope) {
    if (native_float(x))
      if (auto r =
              act_map(x, "float_leaky_relu", {slope}, [](Val a, std::span<const Val> p) -> Val {
                return kernel::select(a < lit(a, 0), a * p[0], a);
              }))
        return std::move(*r);
    return EMBER_GPU_ON_HOST(float_leaky_relu, std::move(x), slope);
  }
  EMBER_GPU_ACT2(float_hard_sigmoid, kernel::select(p[0] * a + p[1] < lit(a, 0), lit(a, 0),
                                                    kernel::select(p[0] * a + p[1] > lit(a, 1),
                                                                   lit(a, 1), p[0] * a + p[1])))
  // torch.clamp: min(max(x, lo), hi) with the CPU's NaN-keeping max/min; the bounds in the
  // compute type (f32 for f16/bf16), as the CPU converts them.
  EMBER_GPU_ACT2(float_clamp, kernel::min(kernel::max(a, p[0]), p[1]))
#undef EMBER_GPU_ACT
#undef EMBER_GPU_ACT2
  /// The bounds saturate to the dtype's range first, as on the CPU (clamp_min passes the
  /// int64 limits); the values compare in i64.
  static I int_clamp(I x, std::int64_t lo, std::int64_t hi) {
    if (native1(x) && native_on(DType::I64, x)) {
      const IInfo range = iinfo(x.dtype);
      const auto sat = [&](std::int64_t v) { return std::clamp(v, range.min, range.max); };
      gpu::MapSpec spec{
          "int_clamp", x.dtype, {kernel::Elem::I64, kernel::Elem::I64}, [](auto in, auto sc) {
            const kernel::Val v = kernel::cast(in[0], kernel::Elem::I64);
            return kernel::min(kernel::max(v, sc[0]), sc[1]);
          }};
      const gpu::ScalarArg args[2] = {{kernel::Elem::I64, 0, sat(lo)},
                                      {kernel::Elem::I64, 0, sat(hi)}};
      if (auto r =
              gpu::try_map(spec, std::span<const GpuTensor>(&x, 1), x.shape, args, sole(x, true)))
        return std::move(*r);
    }
    return EMBER_GPU_ON_HOST(int_clamp, std::move(x), lo, hi);
  }

  // ---- reductions -----------------------------------------------------------------------------
#define EMBER_GPU_REDUCE_DIM(fn, R)                                                         \
  static GpuTensor fn(const GpuTensor& x, std::int64_t d) {                                 \
    if (gpu::reduce_native(gpu::Reduce::R, x, d)) return gpu::reduce(gpu::Reduce::R, x, d); \
    return EMBER_GPU_ON_HOST(fn, x, d);                                                     \
  }
  EMBER_GPU_REDUCE_DIM(float_sum_dim, Sum)
  EMBER_GPU_REDUCE_DIM(float_prod_dim, Prod)
  EMBER_GPU_REDUCE_DIM(float_mean_dim, Mean)
  EMBER_GPU_REDUCE_DIM(float_max_dim, Max)
  EMBER_GPU_REDUCE_DIM(float_min_dim, Min)
  EMBER_GPU_REDUCE_DIM(int_sum_dim, Sum)
  EMBER_GPU_REDUCE_DIM(int_prod_dim, Prod)
  EMBER_GPU_REDUCE_DIM(int_max_dim, Max)
  EMBER_GPU_REDUCE_DIM(int_min_dim, Min)
#undef EMBER_GPU_REDUCE_DIM
  static GpuTensor float_sum(const GpuTensor& x) {
    if (gpu::reduce_native(gpu::Reduce::Sum, x, -1)) return gpu::reduce(gpu::Reduce::Sum, x, -1);
    return EMBER_GPU_ON_HOST(float_sum, x);
  }
  static GpuTensor int_sum(const GpuTensor& x) {
    if (gpu::reduce_native(gpu::Reduce::Sum, x, -1)) return gpu::reduce(gpu::Reduce::Sum, x, -1);
    return EMBER_GPU_ON_HOST(int_sum, x);
  }

  // ---- line kernels (src/gpu/scan.cpp) and sorting (src/gpu/sort.cpp) ------------------------
#define EMBER_GPU_SCAN(fn, S)                                         \
  static GpuTensor fn(const GpuTensor& x, std::int64_t d) {           \
    if (auto r = gpu::scan(gpu::Scan::S, x, d)) return std::move(*r); \
    return Base::fn(x, d);                                            \
  }
#define EMBER_GPU_WITH_INDICES(fn, call)                                          \
  static std::pair<GpuTensor, GpuTensor> fn(const GpuTensor& x, std::int64_t d) { \
    if (auto r = gpu::call) return std::move(*r);                                 \
    return Base::fn(x, d);                                                        \
  }
#define EMBER_GPU_ANY_ALL(fn, all)                              \
  static GpuTensor fn(const GpuTensor& x, std::int64_t d) {     \
    if (auto r = gpu::any_all(all, x, d)) return std::move(*r); \
    return Base::fn(x, d);                                      \
  }
#define EMBER_GPU_LINES(X)                                                            \
  EMBER_GPU_SCAN(X##_cumsum, Sum)                                                     \
  EMBER_GPU_SCAN(X##_cumprod, Prod)                                                   \
  EMBER_GPU_SCAN(X##_cummax, Max)                                                     \
  EMBER_GPU_SCAN(X##_cummin, Min)                                                     \
  EMBER_GPU_WITH_INDICES(X##_cummax_with_indices, scan_with_indices(true, x, d))      \
  EMBER_GPU_WITH_INDICES(X##_cummin_with_indices, scan_with_indices(false, x, d))     \
  EMBER_GPU_WITH_INDICES(X##_max_dim_with_indices, extreme_with_indices(true, x, d))  \
  EMBER_GPU_WITH_INDICES(X##_min_dim_with_indices, extreme_with_indices(false, x, d)) \
  EMBER_GPU_ANY_ALL(X##_any_dim, false)                                               \
  EMBER_GPU_ANY_ALL(X##_all_dim, true)
  EMBER_GPU_LINES(float)
  EMBER_GPU_LINES(int)
  EMBER_GPU_ANY_ALL(bool_any_dim, false)
  EMBER_GPU_ANY_ALL(bool_all_dim, true)
#undef EMBER_GPU_LINES
#undef EMBER_GPU_ANY_ALL
#undef EMBER_GPU_WITH_INDICES
#undef EMBER_GPU_SCAN
#define EMBER_GPU_SORT(X)                                                                          \
  static std::pair<GpuTensor, GpuTensor> X##_sort_with_indices(const GpuTensor& x, std::int64_t d, \
                                                               bool desc) {                        \
    if (auto r = gpu::sort(x, d, desc)) return std::move(*r);                                      \
    return Base::X##_sort_with_indices(x, d, desc);                                                \
  }                                                                                                \
  static std::pair<GpuTensor, GpuTensor> X##_topk_with_indices(const GpuTensor& x, std::int64_t k, \
                                                               std::int64_t d) {                   \
    if (auto r = gpu::topk(x, k, d)) return std::move(*r);                                         \
    return Base::X##_topk_with_indices(x, k, d);                                                   \
  }
  EMBER_GPU_SORT(float)
  EMBER_GPU_SORT(int)
#undef EMBER_GPU_SORT
#define EMBER_GPU_MEDIAN(X)                                                              \
  static std::pair<GpuTensor, GpuTensor> X##_median_dim_with_indices(const GpuTensor& x, \
                                                                     std::int64_t d) {   \
    if (auto r = gpu::median(x, d)) return std::move(*r);                                \
    return Base::X##_median_dim_with_indices(x, d);                                      \
  }
  EMBER_GPU_MEDIAN(float)
  EMBER_GPU_MEDIAN(int)
#undef EMBER_GPU_MEDIAN
  static std::pair<GpuTensor, GpuTensor> float_var_mean(const GpuTensor& x, std::int64_t d,
                                                        std::int64_t correction) {
    if (auto r = gpu::var_mean(x, d, correction)) return std::move(*r);
    return Base::float_var_mean(x, d, correction);
  }

  // ---- row kernels: softmax family, norms, cross-entropy (src/gpu/rows.cpp) ------------------
#define EMBER_GPU_SOFTMAX(fn, K)                                               \
  static GpuTensor fn(const GpuTensor& x, std::size_t d) {                     \
    if (auto r = gpu::softmax(gpu::RowOp::K, x, static_cast<std::int64_t>(d))) \
      return std::move(*r);                                                    \
    return EMBER_GPU_ON_HOST(fn, x, d);                                        \
  }
  EMBER_GPU_SOFTMAX(float_softmax, Softmax)
  EMBER_GPU_SOFTMAX(float_log_softmax, LogSoftmax)
  EMBER_GPU_SOFTMAX(float_softmin, Softmin)
  EMBER_GPU_SOFTMAX(float_quiet_softmax, QuietSoftmax)
#undef EMBER_GPU_SOFTMAX
  static GpuTensor float_layer_norm(const GpuTensor& x, std::size_t k,
                                    const std::optional<GpuTensor>& w,
                                    const std::optional<GpuTensor>& b, double eps) {
    if (auto r = gpu::layer_norm(x, static_cast<std::int64_t>(k), w, b, eps)) return std::move(*r);
    return EMBER_GPU_ON_HOST(float_layer_norm, x, k, w, b, eps);
  }
  static GpuTensor float_rms_norm(const GpuTensor& x, const std::optional<GpuTensor>& w,
                                  double eps) {
    if (auto r = gpu::rms_norm(x, w, eps)) return std::move(*r);
    return EMBER_GPU_ON_HOST(float_rms_norm, x, w, eps);
  }
  static GpuTensor float_cross_entropy_with_indices(const GpuTensor& logits,
                                                    const GpuTensor& targets) {
    if (auto r = gpu::cross_entropy(logits, targets)) return std::move(*r);
    return EMBER_GPU_ON_HOST(float_cross_entropy_with_indices, logits, targets);
  }

  // ---- attention (src/gpu/attention.cpp) -------------------------------------------------------
  /// The fused kernel; where it does not serve the case, the composite of the device's
  /// matrix products and element-wise kernels (ember/backend/attention_composite.hpp).
  static GpuTensor float_scaled_dot_product_attention(const GpuTensor& q, const GpuTensor& k,
                                                      const GpuTensor& v,
                                                      const std::optional<GpuTensor>& mask,
                                                      const std::optional<GpuTensor>& bias,
                                                      bool is_causal, double scale) {
    if (auto r = gpu::attention(q, k, v, mask, bias, is_causal, scale, false))
      return std::move(r->first);
    return composite::attention<Gpu>(q, k, v, mask, bias, is_causal, scale);
  }
  /// {out, lse} for Autodiff's fused backward; nullopt where the kernels do not serve the case
  /// (Autodiff then differentiates the composite).
  static std::optional<std::pair<GpuTensor, GpuTensor>> float_scaled_dot_product_attention_train(
      const GpuTensor& q, const GpuTensor& k, const GpuTensor& v,
      const std::optional<GpuTensor>& mask, const std::optional<GpuTensor>& bias, bool is_causal,
      double scale) {
    return gpu::attention(q, k, v, mask, bias, is_causal, scale, true);
  }
  /// {dq, dk, dv} of a case float_scaled_dot_product_attention_train served.
  static std::vector<GpuTensor> float_scaled_dot_product_attention_backward(
      const GpuTensor& q, const GpuTensor& k, const GpuTensor& v, const GpuTensor& out,
      const GpuTensor& dout, const GpuTensor& lse, const std::optional<GpuTensor>& mask,
      const std::optional<GpuTensor>& bias, bool is_causal, double scale) {
    if (auto r = gpu::attention_backward(q, k, v, out, dout, lse, mask, bias, is_causal, scale))
      return std::move(*r);
    throw UnsupportedError(
        "[scaled_dot_product_attention_backward] the fused kernels do not serve this case "
        "(its forward pass did not run them)");
  }

  // ---- matrix products ------------------------------------------------------------------------
  static GpuTensor float_matmul(const GpuTensor& a, const GpuTensor& b) {
    if (a.shape.dims.size() >= 2 && a.shape.dims.size() == b.shape.dims.size() &&
        a.dtype == b.dtype && gpu::matmul_native(a, b))
      return gpu::matmul(a, b);
    return Base::float_matmul(a, b);
  }

  // ---- indexing (src/gpu/index.cpp) -----------------------------------------------------------
#define EMBER_GPU_INDEXING(X)                                                                      \
  static GpuTensor X##_cat(const std::vector<GpuTensor>& xs, std::size_t d) {                      \
    if (auto r = gpu::cat(xs, d)) return std::move(*r);                                            \
    return Base::X##_cat(xs, d);                                                                   \
  }                                                                                                \
  static GpuTensor X##_slice_assign(GpuTensor t, const ir::Ranges& r, GpuTensor v) {               \
    if (auto o = gpu::slice_assign(t, r, v, sole(t, true))) return std::move(*o);                  \
    return Base::X##_slice_assign(std::move(t), r, std::move(v));                                  \
  }                                                                                                \
  static GpuTensor X##_select(const GpuTensor& x, std::size_t d, const GpuTensor& i) {             \
    if (auto r = gpu::select(x, d, i)) return std::move(*r);                                       \
    return Base::X##_select(x, d, i);                                                              \
  }                                                                                                \
  static GpuTensor X##_gather(std::size_t d, const GpuTensor& x, const GpuTensor& i) {             \
    if (auto r = gpu::gather(d, x, i)) return std::move(*r);                                       \
    return Base::X##_gather(d, x, i);                                                              \
  }                                                                                                \
  static GpuTensor X##_scatter(std::size_t d, GpuTensor t, const GpuTensor& i, const GpuTensor& v, \
                               IndexUpdate up) {                                                   \
    if (auto r = up == IndexUpdate::Add ? gpu::scatter_add(d, t, i, v, sole(t, true))              \
                                        : gpu::scatter_assign(d, t, i, v, sole(t, true)))          \
      return std::move(*r);                                                                        \
    return Base::X##_scatter(d, std::move(t), i, v, up);                                           \
  }                                                                                                \
  static GpuTensor X##_select_assign(GpuTensor t, std::size_t d, const GpuTensor& i,               \
                                     const GpuTensor& v, IndexUpdate up) {                         \
    if (auto r = gpu::select_assign(d, t, i, v, up, sole(t, true))) return std::move(*r);          \
    return Base::X##_select_assign(std::move(t), d, i, v, up);                                     \
  }                                                                                                \
  static GpuTensor X##_mask_where(GpuTensor t, const GpuTensor& m, const GpuTensor& v) {           \
    if (auto r = gpu::mask_where(t, m, v, sole(t, true))) return std::move(*r);                    \
    return Base::X##_mask_where(std::move(t), m, v);                                               \
  }                                                                                                \
  static GpuTensor X##_mask_fill(GpuTensor t, const GpuTensor& m, double v) {                      \
    if (auto r = gpu::mask_fill(t, m, v, sole(t, true))) return std::move(*r);                     \
    return Base::X##_mask_fill(std::move(t), m, v);                                                \
  }
  EMBER_GPU_INDEXING(float)
  EMBER_GPU_INDEXING(int)
  EMBER_GPU_INDEXING(bool)
#undef EMBER_GPU_INDEXING

  // ---- optional rows without a composite: the host path -------------------------------------
#define EMBER_GPU_HOST_ROW(fn, Params, Args)             \
  static GpuTensor fn Params {                           \
    return EMBER_GPU_ON_HOST(fn, EMBER_PP_UNPAREN Args); \
  }
  EMBER_GPU_HOST_ROW(float_diag, (const GpuTensor& x), (x))
  EMBER_GPU_HOST_ROW(int_diag, (const GpuTensor& x), (x))
  EMBER_GPU_HOST_ROW(float_cross, (const GpuTensor& a, const GpuTensor& b, std::size_t d),
                     (a, b, d))
  EMBER_GPU_HOST_ROW(int_cross, (const GpuTensor& a, const GpuTensor& b, std::size_t d), (a, b, d))
  EMBER_GPU_HOST_ROW(float_vector_norm, (const GpuTensor& x, double p, std::size_t d), (x, p, d))
  EMBER_GPU_HOST_ROW(float_cosine_similarity,
                     (const GpuTensor& a, const GpuTensor& b, std::size_t d, double eps),
                     (a, b, d, eps))
  // Quantization parameters and values must be the CPU's bit for bit (a scale one ulp off
  // moves integers across a rounding edge), and some Vulkan drivers' division is not
  // correctly rounded: these run on the host.
  static std::pair<GpuTensor, GpuTensor> float_quant_params(const GpuTensor& x,
                                                            const QuantScheme& s) {
    return run<void, std::pair<GpuTensor, GpuTensor>>(
        "float_quant_params", [](auto&&... a_) { return Cpu::float_quant_params(a_...); }, x, s);
  }
  EMBER_GPU_HOST_ROW(float_quantize,
                     (const GpuTensor& x, const GpuTensor& sc, const std::optional<GpuTensor>& zp,
                      const QuantScheme& s),
                     (x, sc, zp, s))
  EMBER_GPU_HOST_ROW(int_dequantize,
                     (const GpuTensor& q, const GpuTensor& sc, const std::optional<GpuTensor>& zp,
                      const QuantScheme& s, const Shape& shape, DType dt),
                     (q, sc, zp, s, shape, dt))
#undef EMBER_GPU_HOST_ROW

  // ---- convolutions (src/gpu/conv.cpp: im2col + the matrix product, col2im) ----------------
  template <std::size_t N>
  static GpuTensor conv(const GpuTensor& x, const GpuTensor& w, const std::optional<GpuTensor>& b,
                        const ConvOptions<N>& o) {
    if (gpu::conv_native(x, w) && (!b || b->dtype == x.dtype)) return gpu::conv<N>(x, w, b, o);
    return Base::template conv<N>(x, w, b, o);
  }
  template <std::size_t N>
  static GpuTensor conv_transpose(const GpuTensor& x, const GpuTensor& w,
                                  const std::optional<GpuTensor>& b,
                                  const ConvTransposeOptions<N>& o) {
    if (gpu::conv_native(x, w) && (!b || b->dtype == x.dtype))
      return gpu::conv_transpose<N>(x, w, b, o);
    return Base::template conv_transpose<N>(x, w, b, o);
  }
  /// The optional gradients of conv (ember/backend/conv.hpp), which Autodiff's rules use.
  template <std::size_t N>
  static GpuTensor conv_x_backward(const GpuTensor& dy, const GpuTensor& w, const Shape& xs,
                                   const ConvOptions<N>& o) {
    if (gpu::conv_native(dy, w)) return gpu::conv_x_backward<N>(dy, w, xs, o);
    return host(
        "conv_x_backward", [](auto&&... a_) { return Cpu::template conv_x_backward<N>(a_...); }, dy,
        w, xs, o);
  }
  template <std::size_t N>
  static GpuTensor conv_weight_backward(const GpuTensor& x, const GpuTensor& dy, const Shape& ws,
                                        const ConvOptions<N>& o) {
    if (gpu::conv_native(x, dy)) return gpu::conv_weight_backward<N>(x, dy, ws, o);
    return host(
        "conv_weight_backward",
        [](auto&&... a_) { return Cpu::template conv_weight_backward<N>(a_...); }, x, dy, ws, o);
  }

  static GpuTensor unfold4d(const GpuTensor& x, const std::array<std::int64_t, 2>& k,
                            const UnfoldOptions& o) {
    if (auto r = gpu::unfold4d(x, k, o)) return std::move(*r);
    return Base::unfold4d(x, k, o);
  }
  static GpuTensor fold4d(const GpuTensor& x, const std::array<std::int64_t, 2>& s,
                          const std::array<std::int64_t, 2>& k, const UnfoldOptions& o) {
    if (auto r = gpu::fold4d(x, s, k, o)) return std::move(*r);
    return Base::fold4d(x, s, k, o);
  }

  // ---- pooling (src/gpu/pool.cpp) ------------------------------------------------------------
  template <std::size_t N>
  static GpuTensor float_max_pool(const GpuTensor& x, const MaxPoolOptions<N>& o) {
    if (auto r = gpu::max_pool<N>(x, o, false)) return std::move(r->first);
    return Base::template float_max_pool<N>(x, o);
  }
  template <std::size_t N>
  static std::pair<GpuTensor, GpuTensor> float_max_pool_with_indices(const GpuTensor& x,
                                                                     const MaxPoolOptions<N>& o) {
    if (auto r = gpu::max_pool<N>(x, o, true)) return {std::move(r->first), std::move(*r->second)};
    return Base::template float_max_pool_with_indices<N>(x, o);
  }
  /// The optional gradient of max pooling (ember/backend/pool.hpp), which Autodiff uses.
  template <std::size_t N>
  static GpuTensor float_max_pool_backward(const GpuTensor& g, const GpuTensor& idx,
                                           const Shape& xs) {
    if (auto r = gpu::max_pool_backward<N>(g, idx, xs)) return std::move(*r);
    return host(
        "float_max_pool_backward",
        [](auto&&... a_) { return Cpu::template float_max_pool_backward<N>(a_...); }, g, idx, xs);
  }
  template <std::size_t N>
  static GpuTensor float_avg_pool(const GpuTensor& x, const AvgPoolOptions<N>& o) {
    if (auto r = gpu::avg_pool<N>(x, o)) return std::move(*r);
    return Base::template float_avg_pool<N>(x, o);
  }
  static GpuTensor float_interpolate(const GpuTensor& x, const std::array<std::int64_t, 2>& s,
                                     InterpolateOptions o) {
    if (auto r = gpu::interpolate(x, s, o)) return std::move(*r);
    return Base::float_interpolate(x, s, o);
  }
  template <std::size_t N>
  static GpuTensor float_adaptive_avg_pool(const GpuTensor& x,
                                           const std::array<std::int64_t, N>& s) {
    if (auto r = gpu::adaptive_avg_pool<N>(x, s)) return std::move(*r);
    return Base::template float_adaptive_avg_pool<N>(x, s);
  }

 private:
  /// A slice with negative steps as a contiguous copy made on the device: the slice with the
  /// same elements in increasing order, flipped along the reversed dims; nullopt when no
  /// step is negative or the dtype has no kernel here.
  static std::optional<GpuTensor> reversed_slice(const GpuTensor& t, const ir::Ranges& r) {
    ir::Ranges forward = r;
    ir::Axes axes;
    for (std::size_t d = 0; d < r.size(); ++d) {
      if (r[d].step >= 0) continue;
      if (r[d].count > 0)
        forward[d] = {r[d].start + (r[d].count - 1) * r[d].step, r[d].count, -r[d].step};
      axes.push_back(d);
    }
    if (axes.empty()) return std::nullopt;
    return gpu::flip(views::slice(t, forward), axes);
  }
  static bool native_on(DType d, const GpuTensor& t) {
    return gpu::native_dtype(d, t.compute());
  }
  static bool native1(const GpuTensor& t) {
    return native_on(t.dtype, t);
  }
  static bool native2(const GpuTensor& t, DType to) {
    return native1(t) && native_on(to, t);
  }

  static void place(gpu::Placement& p, const GpuTensor& t) {
    if (!p.dev) p = {&t.compute(), t.device};
  }
  static void place(gpu::Placement& p, const Device& d) {
    if (!p.dev) p = {&R::device(d.index), d.index};
  }
  static void place(gpu::Placement& p, const std::vector<GpuTensor>& v) {
    if (!v.empty()) place(p, v.front());
  }
  static void place(gpu::Placement& p, const std::optional<GpuTensor>& v) {
    if (v) place(p, *v);
  }
  template <class T>
  static void place(gpu::Placement&, const T&) {}

  template <class Ret, class V>
  static Ret lift_to(V&& v, const gpu::Placement& p) {
    if constexpr (std::is_same_v<Ret, GpuTensor>) {
      return gpu::upload(v, *p.dev, p.index);
    } else if constexpr (std::is_same_v<Ret, std::vector<GpuTensor>>) {
      std::vector<GpuTensor> out;
      out.reserve(v.size());
      for (const CpuTensor& t : v) out.push_back(gpu::upload(t, *p.dev, p.index));
      return out;
    } else if constexpr (std::is_same_v<Ret, std::optional<GpuTensor>>) {
      return v ? std::optional<GpuTensor>(gpu::upload(*v, *p.dev, p.index)) : std::nullopt;
    } else if constexpr (std::is_same_v<Ret, std::pair<GpuTensor, GpuTensor>>) {
      return {gpu::upload(v.first, *p.dev, p.index), gpu::upload(v.second, *p.dev, p.index)};
    } else if constexpr (std::is_same_v<Ret, Device>) {
      return Device{p.index};
    } else {
      return Ret(std::forward<V>(v));
    }
  }

  /// Kernel expressions see f16/bf16 values as f32 (one rounding on store, as the CPU).
  static kernel::Val widen(kernel::Val v) {
    return kernel::is_half(v.elem()) ? kernel::cast(v, kernel::Elem::F32) : v;
  }

  static bool native_float(const GpuTensor& t) {
    return (t.dtype == DType::F32 || t.dtype == DType::F16 || t.dtype == DType::BF16 ||
            t.dtype == DType::F64) &&
           native1(t);
  }
  template <class T>
  static kernel::Val lit(const kernel::Val& v, T x) {
    return kernel::lit(v, x);
  }
  /// An activation: `f(a, params)` with a in f32 (f64 for f64) and the parameters as
  /// run-time scalars of that type; the result reuses x's buffer when x is unique.
  template <class Fn>
  static std::optional<GpuTensor> act_map(const GpuTensor& x, const char* key,
                                          std::vector<double> params, Fn f) {
    const kernel::Elem c = x.dtype == DType::F64 ? kernel::Elem::F64 : kernel::Elem::F32;
    gpu::MapSpec spec{key, x.dtype, std::vector<kernel::Elem>(params.size(), c),
                      [f](auto in, auto sc) { return f(widen(in[0]), sc); }};
    std::vector<gpu::ScalarArg> args;
    for (double p : params) args.push_back(gpu::ScalarArg{c, p, 0});
    return gpu::try_map(spec, std::span<const GpuTensor>(&x, 1), x.shape, args, sole(x, true));
  }

  /// 1 when `may_reuse` (the caller holds `t` by value) and `t`'s buffer has no other owner.
  static unsigned sole(const GpuTensor& t, bool may_reuse) {
    return may_reuse && t.buffer.use_count() == 1 ? 1u : 0u;
  }

  template <class Op>
  static std::optional<GpuTensor> unary_map(const GpuTensor& x, DType out, bool may_reuse) {
    gpu::MapSpec spec{
        Op::name, out, {}, [](auto in, auto) { return gpu::expr::Of<Op>::f(widen(in[0])); }};
    return gpu::try_map(spec, std::span<const GpuTensor>(&x, 1), x.shape, {}, sole(x, may_reuse));
  }
  template <class Op>
  static std::optional<GpuTensor> binary_map(const GpuTensor& a, const GpuTensor& b, DType out,
                                             bool may_reuse) {
    gpu::MapSpec spec{Op::name, out, {}, [](auto in, auto) {
                        return gpu::expr::Of<Op>::f(widen(in[0]), widen(in[1]));
                      }};
    const unsigned reuse = sole(a, may_reuse) | sole(b, may_reuse) << 1;
    const GpuTensor in[2] = {a, b};
    return gpu::try_map(spec, in, gpu::broadcast_shape(a.shape, b.shape), {}, reuse);
  }
  template <class Op>
  static std::optional<GpuTensor> float_scalar_map(const GpuTensor& a, double s, DType out,
                                                   bool may_reuse) {
    const kernel::Elem c = a.dtype == DType::F64 ? kernel::Elem::F64 : kernel::Elem::F32;
    gpu::MapSpec spec{std::string(Op::name) + "_scalar", out, {c}, [](auto in, auto sc) {
                        return gpu::expr::Of<Op>::f(widen(in[0]), sc[0]);
                      }};
    const gpu::ScalarArg arg{c, s, 0};
    return gpu::try_map(spec, std::span<const GpuTensor>(&a, 1), a.shape,
                        std::span<const gpu::ScalarArg>(&arg, 1), sole(a, may_reuse));
  }
  template <class Op>
  static std::optional<GpuTensor> int_scalar_map(const GpuTensor& a, std::int64_t s, DType out,
                                                 bool in_i64, bool may_reuse) {
    const kernel::Elem c = in_i64 ? kernel::Elem::I64 : gpu::elem_of(a.dtype, Op::name);
    gpu::MapSpec spec{std::string(Op::name) + (in_i64 ? "_scalar64" : "_scalar"),
                      out,
                      {c},
                      [c](auto in, auto sc) {
                        kernel::Val v = in[0];
                        if (v.elem() != c) v = kernel::cast(v, c);
                        return gpu::expr::Of<Op>::f(v, sc[0]);
                      }};
    std::int64_t wrapped = s;  // the scalar in the tensor's type, as static_cast<T>(s)
    if (c == kernel::Elem::I32) wrapped = static_cast<std::int32_t>(s);
    if (c == kernel::Elem::U8) wrapped = static_cast<std::uint8_t>(s);
    const gpu::ScalarArg arg{c, 0, wrapped};
    return gpu::try_map(spec, std::span<const GpuTensor>(&a, 1), a.shape,
                        std::span<const gpu::ScalarArg>(&arg, 1), sole(a, may_reuse));
  }
  static GpuTensor convert(const GpuTensor& x, DType to, const char* name) {
    gpu::MapSpec spec{name, to, {}, [](auto in, auto) { return in[0]; }};
    return gpu::map(spec, std::span<const GpuTensor>(&x, 1), x.shape);
  }
  static GpuTensor nonzero(const GpuTensor& x) {
    gpu::MapSpec spec{
        "nonzero", DType::Bool, {}, [](auto in, auto) { return in[0] != kernel::lit(in[0], 0); }};
    return gpu::map(spec, std::span<const GpuTensor>(&x, 1), x.shape);
  }
};

#undef EMBER_GPU_ON_HOST

}  // namespace ember
