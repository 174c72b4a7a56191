// Pooling on the GPU backends: max pooling (with i64 indices into each input plane, NaN wins,
// the CPU backend's scan order so ties pick the same element), its gradient (f32: the
// gradients added at their indices with atomics), average pooling and adaptive average
// pooling. One thread per output element; 1-d pools are 2-d pools of [B, C, 1, L], as on the
// CPU (src/cpu/pool.cpp, after PyTorch's MaxPoolKernel.cpp / AvgPoolKernel.cpp /
// AdaptiveAvgPoolKernel.cpp).
#include "ember/gpu/pool.hpp"

#include <optional>

#include "ember/core/error.hpp"
#include "ember/gpu/ops.hpp"
#include "ember/ir/pool.hpp"
#include "kernels.hpp"

namespace ember::gpu {

namespace {

using namespace detail::names;

/// The kernel for `name` and dtype `dt` (nullptr when the device lacks a feature it uses).
template <class Make>
const kernel::CompiledKernel* compiled(kernel::ComputeDevice& dev, const std::string& name,
                                       DType dt, Make make) {
  return detail::compiled(dev, "pool|" + name + "|" + std::to_string(static_cast<int>(dt)), make);
}

std::uint32_t u32(std::int64_t v) {
  return detail::u32_index(v, "gpu pool", "size");
}

Elem reg_of(DType dt) {
  return dt == DType::F64 ? Elem::F64 : Elem::F32;
}

/// A 2-d window geometry (1-d pools have H = 1 and a 1-tall window).
struct Window {
  std::int64_t H = 1, W = 1, OH = 1, OW = 1, kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0, dh = 1,
               dw = 1;
};
constexpr const char* kWindowNames[] = {"H",  "W",  "OH", "OW", "kh", "kw",
                                        "sh", "sw", "ph", "pw", "dh", "dw"};
struct WindowVals {
  Val H, W, OH, OW, kh, kw, sh, sw, ph, pw, dh, dw;
};
WindowVals window_scalars(KernelBuilder& kb) {
  Val v[12];
  for (int i = 0; i < 12; ++i) v[i] = kb.scalar(kWindowNames[i], Elem::U32);
  return {v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10], v[11]};
}
void push_window(std::vector<Arg>& args, const Window& w) {
  for (std::int64_t v : {w.H, w.W, w.OH, w.OW, w.kh, w.kw, w.sh, w.sw, w.ph, w.pw, w.dh, w.dw})
    args.push_back(Arg::u32(u32(v)));
}

Val i32(Val v) {
  return kernel::cast(v, Elem::I32);
}

kernel::Kernel build_max(DType dt, bool with_indices) {
  const Elem e = elem_of(dt, "max_pool"), reg = reg_of(dt);
  KernelBuilder kb(with_indices ? "max_pool_indices" : "max_pool", {kGroup, 1, 1});
  Mem x = kb.buffer("x", e, kernel::Access::Read);
  Mem y = kb.buffer("y", e, kernel::Access::Write);
  std::optional<Mem> idx;
  if (with_indices) idx = kb.buffer("indices", Elem::I64, kernel::Access::Write);
  const WindowVals w = window_scalars(kb);
  Val x0 = kb.scalar("x0", Elem::U32), n = kb.scalar("n", Elem::U32);
  Val pos = kb.absolute_pos();
  kb.if_in_bounds(pos, n, [&] {
    Val ow = pos % w.OW, oh = (pos / w.OW) % w.OH, plane = pos / (w.OW * w.OH);
    Val base = x0 + plane * w.H * w.W;
    // The first element in the window starts the scan (the CPU's -inf start gives the same
    // value and index), then a greater value or a NaN replaces it.
    Var best = kb.var(kb.i32(-1));
    Var mx = kb.var(kb.constant(reg, 0));
    kb.for_(0u, w.kh, 1u, [&](Val r) {
      Val ih = i32(oh * w.sh + r * w.dh) - i32(w.ph);
      kb.if_((ih >= 0) & (ih < i32(w.H)), [&] {
        kb.for_(0u, w.kw, 1u, [&](Val c) {
          Val iw = i32(ow * w.sw + c * w.dw) - i32(w.pw);
          kb.if_((iw >= 0) & (iw < i32(w.W)), [&] {
            Val at = ih * i32(w.W) + iw;
            Val v = kernel::cast(x[base + kernel::cast(at, Elem::U32)], reg);
            kb.if_((best.get() < 0) | (v > mx.get()) | kernel::is_nan(v), [&] {
              mx = v;
              best = at;
            });
          });
        });
      });
    });
    y[pos] = kernel::cast(mx.get(), e);
    if (idx) (*idx)[pos] = kernel::cast(best.get(), Elem::I64);
  });
  return kb.build();
}

kernel::Kernel build_max_backward() {
  KernelBuilder kb("max_pool_backward", {kGroup, 1, 1});
  Mem g = kb.buffer("grad", Elem::F32, kernel::Access::Read);
  Mem idx = kb.buffer("indices", Elem::I64, kernel::Access::Read);
  Mem dx = kb.buffer("dx", Elem::F32, kernel::Access::ReadWrite);
  Val ohw = kb.scalar("ohw", Elem::U32), hw = kb.scalar("hw", Elem::U32);
  Val n = kb.scalar("n", Elem::U32);
  Val pos = kb.absolute_pos();
  kb.if_in_bounds(pos, n, [&] {
    Val plane = pos / ohw;
    Val i = kernel::cast(Val(idx[pos]), Elem::U32);
    dx.atomic_add(plane * hw + i, g[pos]);
  });
  return kb.build();
}

kernel::Kernel build_zero() {
  KernelBuilder kb("fill_zero_f32", {kGroup, 1, 1});
  Mem y = kb.buffer("y", Elem::F32, kernel::Access::Write);
  Val n = kb.scalar("n", Elem::U32);
  Val pos = kb.absolute_pos();
  kb.if_in_bounds(pos, n, [&] { y[pos] = kb.f32(0); });
  return kb.build();
}

kernel::Kernel build_avg(DType dt, bool include_pad) {
  const Elem e = elem_of(dt, "avg_pool"), reg = reg_of(dt);
  KernelBuilder kb(include_pad ? "avg_pool_pad" : "avg_pool", {kGroup, 1, 1});
  Mem x = kb.buffer("x", e, kernel::Access::Read);
  Mem y = kb.buffer("y", e, kernel::Access::Write);
  const WindowVals w = window_scalars(kb);
  Val x0 = kb.scalar("x0", Elem::U32), n = kb.scalar("n", Elem::U32);
  Val pos = kb.absolute_pos();
  kb.if_in_bounds(pos, n, [&] {
    Val ow = pos % w.OW, oh = (pos / w.OW) % w.OH, plane = pos / (w.OW * w.OH);
    Val base = x0 + plane * w.H * w.W;
    Val h0 = i32(oh * w.sh) - i32(w.ph), w0 = i32(ow * w.sw) - i32(w.pw);
    Val h1 = kernel::min(h0 + i32(w.kh), i32(w.H + w.ph));
    Val w1 = kernel::min(w0 + i32(w.kw), i32(w.W + w.pw));
    Val pool_size = (h1 - h0) * (w1 - w0);
    Val hs = kernel::max(h0, kb.i32(0)), ws = kernel::max(w0, kb.i32(0));
    Val he = kernel::min(h1, i32(w.H)), we = kernel::min(w1, i32(w.W));
    Var sum = kb.var(kb.constant(reg, 0));
    kb.for_(kernel::cast(hs, Elem::U32), kernel::cast(kernel::max(he, hs), Elem::U32), kb.u32(1),
            [&](Val ih) {
              kb.for_(kernel::cast(ws, Elem::U32), kernel::cast(kernel::max(we, ws), Elem::U32),
                      kb.u32(1), [&](Val iw) {
                        sum = sum.get() + kernel::cast(x[base + ih * w.W + iw], reg);
                      });
            });
    Val div = include_pad ? pool_size : (he - hs) * (we - ws);
    Val empty = (hs >= he) | (ws >= we);
    Val r = kernel::select(empty, kb.constant(reg, 0), sum.get() / kernel::cast(div, reg));
    y[pos] = kernel::cast(r, e);
  });
  return kb.build();
}

kernel::Kernel build_adaptive(DType dt) {
  const Elem e = elem_of(dt, "adaptive_avg_pool"), reg = reg_of(dt);
  KernelBuilder kb("adaptive_avg_pool", {kGroup, 1, 1});
  Mem x = kb.buffer("x", e, kernel::Access::Read);
  Mem y = kb.buffer("y", e, kernel::Access::Write);
  const WindowVals w = window_scalars(kb);
  Val x0 = kb.scalar("x0", Elem::U32), n = kb.scalar("n", Elem::U32);
  Val pos = kb.absolute_pos();
  kb.if_in_bounds(pos, n, [&] {
    Val ow = pos % w.OW, oh = (pos / w.OW) % w.OH, plane = pos / (w.OW * w.OH);
    Val base = x0 + plane * w.H * w.W;
    Val h0 = oh * w.H / w.OH, h1 = ((oh + 1) * w.H + w.OH - 1) / w.OH;
    Val w0 = ow * w.W / w.OW, w1 = ((ow + 1) * w.W + w.OW - 1) / w.OW;
    Var sum = kb.var(kb.constant(reg, 0));
    kb.for_(h0, h1, kb.u32(1), [&](Val ih) {
      kb.for_(w0, w1, kb.u32(1),
              [&](Val iw) { sum = sum.get() + kernel::cast(x[base + ih * w.W + iw], reg); });
    });
    y[pos] = kernel::cast(sum.get() / kernel::cast((h1 - h0) * (w1 - w0), reg), e);
  });
  return kb.build();
}

/// [B, C, *S] with N = 1 or 2 spatial dims as planes of H x W.
template <std::size_t N>
void plane_dims(const Shape& s, std::int64_t& H, std::int64_t& W) {
  H = N == 2 ? s.dims[2] : 1;
  W = s.dims[1 + N];
}

bool float_native(const GpuTensor& x) {
  return (x.dtype == DType::F32 || x.dtype == DType::F16 || x.dtype == DType::BF16 ||
          x.dtype == DType::F64) &&
         native_dtype(x.dtype, x.compute()) && x.numel() <= std::int64_t{0xffffffff};
}

/// Launches a one-thread-per-output kernel over x (bound from its buffer's start).
void launch(const kernel::CompiledKernel& k, const GpuTensor& x, std::vector<Arg> outs,
            const Window& w, std::int64_t n) {
  kernel::ComputeDevice& dev = x.compute();
  std::vector<Arg> args{
      Arg::buf(x.buffer, 0, u32(x.offset + std::max<std::int64_t>(x.numel(), 1)))};
  for (Arg& a : outs) args.push_back(a);
  push_window(args, w);
  args.push_back(Arg::u32(u32(x.offset)));
  args.push_back(Arg::u32(u32(n)));
  dev.launch(k, kernel::grid_for(k.kernel(), static_cast<std::uint64_t>(n)), args);
}

/// The window of a pool from x's shape to `out` (N = 1: a 1-tall window over [B, C, 1, L]);
/// kernel, stride, padding and dilation per spatial dim (all 1/0 for adaptive pooling).
template <std::size_t N>
Window window(const Shape& x, const Shape& out, const std::array<std::int64_t, N>& k,
              const std::array<std::int64_t, N>& s, const std::array<std::int64_t, N>& p,
              const std::array<std::int64_t, N>& d) {
  Window w;
  plane_dims<N>(x, w.H, w.W);
  plane_dims<N>(out, w.OH, w.OW);
  w.kw = k[N - 1];
  w.sw = s[N - 1];
  w.pw = p[N - 1];
  w.dw = d[N - 1];
  if constexpr (N == 2) {
    w.kh = k[0];
    w.sh = s[0];
    w.ph = p[0];
    w.dh = d[0];
  }
  return w;
}

}  // namespace

template <std::size_t N>
std::optional<std::pair<GpuTensor, std::optional<GpuTensor>>> max_pool(const GpuTensor& x_in,
                                                                       const MaxPoolOptions<N>& o,
                                                                       bool with_indices) {
  if (!float_native(x_in) || (with_indices && !native_dtype(DType::I64, x_in.compute())))
    return std::nullopt;
  kernel::ComputeDevice& dev = x_in.compute();
  const GpuTensor x = contiguous(x_in);
  const Shape os = ir::MaxPool<N>{o}.infer({x.shape, x.dtype}).shape;
  const auto* k = compiled(dev, with_indices ? "max_pool_i" : "max_pool", x.dtype,
                           [&] { return build_max(x.dtype, with_indices); });
  if (!k) return std::nullopt;
  GpuTensor y = empty(os, x.dtype, dev, x.device);
  std::optional<GpuTensor> idx;
  if (with_indices) idx = empty(os, DType::I64, dev, x.device);
  if (y.numel() == 0) return std::make_pair(y, idx);
  std::vector<Arg> outs{Arg::buf(y.buffer, 0, u32(y.numel()))};
  if (idx) outs.push_back(Arg::buf(idx->buffer, 0, u32(idx->numel())));
  launch(*k, x, outs, window<N>(x.shape, os, o.kernel, o.stride, o.padding, o.dilation), y.numel());
  return std::make_pair(y, idx);
}

template <std::size_t N>
std::optional<GpuTensor> max_pool_backward(const GpuTensor& grad_in, const GpuTensor& idx_in,
                                           const Shape& x_shape) {
  if (grad_in.dtype != DType::F32 || idx_in.dtype != DType::I64 || !float_native(grad_in) ||
      !native_dtype(DType::I64, grad_in.compute()) || x_shape.numel() > std::int64_t{0xffffffff})
    return std::nullopt;
  kernel::ComputeDevice& dev = grad_in.compute();
  const auto* k = compiled(dev, "max_pool_backward", DType::F32, build_max_backward);
  const auto* z = compiled(dev, "fill_zero", DType::F32, build_zero);
  if (!k || !z) return std::nullopt;
  const GpuTensor g = packed(grad_in), idx = packed(idx_in);
  GpuTensor dx = empty(x_shape, DType::F32, dev, grad_in.device);
  const std::int64_t n = dx.numel();
  if (n == 0) return dx;
  dev.launch(*z, kernel::grid_for(z->kernel(), static_cast<std::uint64_t>(n)),
             {Arg::buf(dx.buffer, 0, u32(n)), Arg::u32(u32(n))});
  const std::int64_t planes = x_shape.dims[0] * x_shape.dims[1];
  const std::int64_t m = g.numel();
  if (m == 0 || planes == 0) return dx;
  const std::int64_t hw = n / planes, ohw = m / planes;
  dev.launch(
      *k, kernel::grid_for(k->kernel(), static_cast<std::uint64_t>(m)),
      {Arg::buf(g.buffer, static_cast<std::uint64_t>(g.offset), u32(m)),
       Arg::buf(idx.buffer, static_cast<std::uint64_t>(idx.offset), u32(m)),
       Arg::buf(dx.buffer, 0, u32(n)), Arg::u32(u32(ohw)), Arg::u32(u32(hw)), Arg::u32(u32(m))});
  return dx;
}

template <std::size_t N>
std::optional<GpuTensor> avg_pool(const GpuTensor& x_in, const AvgPoolOptions<N>& o) {
  if (!float_native(x_in)) return std::nullopt;
  kernel::ComputeDevice& dev = x_in.compute();
  const GpuTensor x = contiguous(x_in);
  const Shape os = ir::AvgPool<N>{o}.infer({x.shape, x.dtype}).shape;
  const auto* k = compiled(dev, o.count_include_pad ? "avg_pool_pad" : "avg_pool", x.dtype,
                           [&] { return build_avg(x.dtype, o.count_include_pad); });
  if (!k) return std::nullopt;
  GpuTensor y = empty(os, x.dtype, dev, x.device);
  if (y.numel() == 0) return y;
  const auto one = ConvOptions<N>::filled(1);
  launch(*k, x, {Arg::buf(y.buffer, 0, u32(y.numel()))},
         window<N>(x.shape, os, o.kernel, o.stride, o.padding, one), y.numel());
  return y;
}

template <std::size_t N>
std::optional<GpuTensor> adaptive_avg_pool(const GpuTensor& x_in,
                                           const std::array<std::int64_t, N>& size) {
  if (!float_native(x_in)) return std::nullopt;
  kernel::ComputeDevice& dev = x_in.compute();
  const GpuTensor x = contiguous(x_in);
  const Shape os = ir::AdaptiveAvgPool<N>{size}.infer({x.shape, x.dtype}).shape;
  const auto* k =
      compiled(dev, "adaptive_avg_pool", x.dtype, [&] { return build_adaptive(x.dtype); });
  if (!k) return std::nullopt;
  GpuTensor y = empty(os, x.dtype, dev, x.device);
  if (y.numel() == 0) return y;
  const auto one = ConvOptions<N>::filled(1), zero = ConvOptions<N>::filled(0);
  launch(*k, x, {Arg::buf(y.buffer, 0, u32(y.numel()))},
         window<N>(x.shape, os, one, one, zero, one), y.numel());
  return y;
}

#define EMBER_GPU_POOL_INSTANCES(N)                                                          \
  template std::optional<std::pair<GpuTensor, std::optional<GpuTensor>>> max_pool<N>(        \
      const GpuTensor&, const MaxPoolOptions<N>&, bool);                                     \
  template std::optional<GpuTensor> max_pool_backward<N>(const GpuTensor&, const GpuTensor&, \
                                                         const Shape&);                      \
  template std::optional<GpuTensor> avg_pool<N>(const GpuTensor&, const AvgPoolOptions<N>&); \
  template std::optional<GpuTensor> adaptive_avg_pool<N>(const GpuTensor&,                   \
                                                         const std::array<std::int64_t, N>&);
EMBER_GPU_POOL_INSTANCES(1)
EMBER_GPU_POOL_INSTANCES(2)
#undef EMBER_GPU_POOL_INSTANCES

}  // namespace ember::gpu
