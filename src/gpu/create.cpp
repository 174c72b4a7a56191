// Creation on the GPU backends: constant fills, integer ranges and random numbers, one thread
// per element. Random numbers are the CPU backend's generator (ember/cpu/random.hpp) computed on
// the device: the 64-bit hash runs in i64 registers (integer arithmetic wraps in the kernel
// language, so i64 and u64 products agree bit for bit; right shifts are masked to be logical),
// the draw in f64, then the value is rounded to the output type as the CPU rounds it.
#include "ember/gpu/create.hpp"

#include <sstream>
#include <type_traits>

#include "ember/core/data.hpp"
#include "ember/cpu/random.hpp"
#include "ember/gpu/ops.hpp"
#include "ember/ir/core.hpp"
#include "kernels.hpp"

namespace ember::gpu {

namespace {

using namespace detail::names;

/// The register type a fill value travels in: f16/bf16 as their exact f32 value, u8 and bool
/// as u32.
Elem carrier(Elem e) {
  switch (e) {
    case Elem::F16:
    case Elem::BF16:
      return Elem::F32;
    case Elem::U8:
    case Elem::Bool:
      return Elem::U32;
    default:
      return e;
  }
}

kernel::Kernel build_fill(Elem out) {
  KernelBuilder kb("fill", {kGroup, 1, 1});
  Mem y = kb.buffer("y", out, kernel::Access::Write);
  Val v = kb.scalar("v", carrier(out));
  Val n = kb.scalar("n", Elem::U32);
  Val pos = kb.absolute_pos();
  kb.if_in_bounds(pos, n, [&] { y[pos] = carrier(out) == out ? v : kernel::cast(v, out); });
  return kb.build();
}

kernel::Kernel build_arange(Elem out) {
  KernelBuilder kb("arange", {kGroup, 1, 1});
  Mem y = kb.buffer("y", out, kernel::Access::Write);
  Val start = kb.scalar("start", Elem::I64), step = kb.scalar("step", Elem::I64);
  Val n = kb.scalar("n", Elem::U32);
  Val pos = kb.absolute_pos();
  kb.if_in_bounds(pos, n, [&] {
    Val v = start + kernel::cast(pos, Elem::I64) * step;
    y[pos] = out == Elem::I64 ? v : kernel::cast(v, out);
  });
  return kb.build();
}

/// The 64-bit constant hi:lo as an i64 register.
Val i64_const(KernelBuilder& kb, std::uint32_t hi, std::uint32_t lo) {
  return (kernel::cast(kb.u32(hi), Elem::I64) << kernel::cast(kb.u32(32), Elem::I64)) |
         kernel::cast(kb.u32(lo), Elem::I64);
}

/// z >> k as an unsigned (logical) shift of the 64 bits, 0 < k < 32.
Val shr_logical(KernelBuilder& kb, Val z, std::uint32_t k) {
  const Val mask = i64_const(kb, (std::uint32_t{1} << (32 - k)) - 1, 0xffffffffu);
  return (z >> kernel::lit(z, static_cast<std::int64_t>(k))) & mask;
}

/// splitmix64's finaliser (ember/cpu/random.hpp).
Val mix64(KernelBuilder& kb, Val z) {
  z = (z ^ shr_logical(kb, z, 30)) * i64_const(kb, 0xbf58476du, 0x1ce4e5b9u);
  z = (z ^ shr_logical(kb, z, 27)) * i64_const(kb, 0x94d049bbu, 0x133111ebu);
  return z ^ shr_logical(kb, z, 31);
}

kernel::Kernel build_random(Distribution::Kind kind, Elem out) {
  KernelBuilder kb("random", {kGroup, 1, 1});
  Mem y = kb.buffer("y", out, kernel::Access::Write);
  Val seed = kb.scalar("seed", Elem::I64), base = kb.scalar("base", Elem::I64);
  Val a = kb.scalar("a", Elem::F64), b = kb.scalar("b", Elem::F64);
  Val n = kb.scalar("n", Elem::U32);
  Val pos = kb.absolute_pos();
  kb.if_in_bounds(pos, n, [&] {
    Val c = base + kernel::cast(pos, Elem::I64) * kernel::lit(base, std::int64_t{2});
    Val r = mix64(kb, seed ^ mix64(kb, c + i64_const(kb, 0x9e3779b9u, 0x7f4a7c15u)));
    Val u = kernel::cast(shr_logical(kb, r, 11), Elem::F64) * kb.constant(Elem::F64, 0x1.0p-53);
    // The CPU rounds a double to f16/bf16 through f32 (ember::detail::convert_value).
    const auto round = [&](Val v) {
      return out == Elem::F64 ? v : kernel::cast(kernel::cast(v, Elem::F32), out);
    };
    const auto widen = [&](Val v) {
      return out == Elem::F64 ? v : kernel::cast(kernel::cast(v, Elem::F32), Elem::F64);
    };
    if (kind == Distribution::Kind::Bernoulli) {
      y[pos] = kernel::cast(
          kernel::select(u < a, kb.constant(Elem::F64, 1), kb.constant(Elem::F64, 0)), out);
      return;
    }
    // U[lo, hi): a value that rounds up to hi becomes lo (the CPU's rule).
    const bool plain = kind == Distribution::Kind::Default;
    Val lo = plain ? kb.constant(Elem::F64, 0) : a;
    Val hi = plain ? kb.constant(Elem::F64, 1) : b;
    Val v = round(plain ? u : a + (b - a) * u);
    y[pos] = kernel::select((widen(v) >= hi) & (hi > lo), round(lo), v);
  });
  return kb.build();
}

/// A stored value as a double (f16/bf16 through their f32 value, which is exact).
template <class T>
double as_double(T t) {
  if constexpr (std::is_same_v<T, f16> || std::is_same_v<T, bf16>)
    return static_cast<double>(static_cast<float>(t));
  else
    return static_cast<double>(t);
}

}  // namespace

std::optional<GpuTensor> full(const Shape& shape, double value, DType dtype,
                              kernel::ComputeDevice& dev, int index) {
  if (!native_dtype(dtype, dev)) return std::nullopt;
  const std::uint32_t n = detail::u32_index(shape.numel(), "gpu full", "element count");
  const Elem e = elem_of(dtype, "full");
  const auto* k =
      compiled(dev, "fill|" + std::to_string(static_cast<int>(e)), [&] { return build_fill(e); });
  if (!k) return std::nullopt;
  GpuTensor out = empty(shape, dtype, dev, index);
  if (n == 0) return out;
  // The value the CPU backend stores, then its exact register form.
  Arg v;
  visit_dtype(dtype, [&]<class T>() {
    const T t = ember::detail::convert_value<T>(value);
    if (e == Elem::I64)
      v = Arg::i64(static_cast<std::int64_t>(t));
    else
      v = Arg::scalar(carrier(e), as_double(t));
  });
  dev.launch(*k, kernel::grid_for(k->kernel(), n), {Arg::buf(out.buffer, 0, n), v, Arg::u32(n)});
  return out;
}

std::optional<GpuTensor> arange(std::int64_t start, std::int64_t end, std::int64_t step,
                                DType dtype, kernel::ComputeDevice& dev, int index) {
  if (!native_dtype(dtype, dev) || !native_dtype(DType::I64, dev)) return std::nullopt;
  // The count from the op's shape rule (ember/ir/core.hpp), the CPU's too.
  const std::int64_t count = ir::Arange{start, end, step, dtype}.infer().shape.numel();
  if (count > std::int64_t{0xffffffff}) return std::nullopt;
  const auto n = static_cast<std::uint32_t>(count);
  const Elem e = elem_of(dtype, "arange");
  const auto* k = compiled(dev, "arange|" + std::to_string(static_cast<int>(e)),
                           [&] { return build_arange(e); });
  if (!k) return std::nullopt;
  GpuTensor out = empty(Shape{static_cast<std::int64_t>(n)}, dtype, dev, index);
  if (n == 0) return out;
  dev.launch(*k, kernel::grid_for(k->kernel(), n),
             {Arg::buf(out.buffer, 0, n), Arg::i64(start), Arg::i64(step), Arg::u32(n)});
  return out;
}

std::optional<GpuTensor> random(const Shape& shape, const Distribution& dist, DType dtype,
                                kernel::ComputeDevice& dev, int index) {
  if (dist.kind == Distribution::Kind::Normal) return std::nullopt;
  if (!is_float(dtype) || !native_dtype(dtype, dev) || !native_dtype(DType::F64, dev) ||
      !native_dtype(DType::I64, dev))
    return std::nullopt;
  const std::int64_t numel = shape.numel();
  if (numel > std::int64_t{0xffffffff}) return std::nullopt;
  const auto n = static_cast<std::uint32_t>(numel);
  const Elem e = elem_of(dtype, "random");
  std::ostringstream key;
  key << "random|" << static_cast<int>(dist.kind) << '|' << static_cast<int>(e);
  const auto* k = compiled(dev, key.str(), [&] { return build_random(dist.kind, e); });
  if (!k) return std::nullopt;
  GpuTensor out = empty(shape, dtype, dev, index);
  // Counters are reserved even for an empty tensor, as on the CPU.
  const cpu::RandomStream s = cpu::reserve_random(numel);
  if (n == 0) return out;
  dev.launch(*k, kernel::grid_for(k->kernel(), n),
             {Arg::buf(out.buffer, 0, n), Arg::i64(static_cast<std::int64_t>(s.seed)),
              Arg::i64(static_cast<std::int64_t>(s.base)), Arg::f64(dist.a), Arg::f64(dist.b),
              Arg::u32(n)});
  return out;
}

}  // namespace ember::gpu
