// Convolutions on the GPU backends, as im2col + the tiled matrix product (ember/gpu/ops.hpp);
// the two gradients (and so the transposed convolution) first try the implicit matrix
// products of conv_backward.cpp, which write no column matrix, and come here where those do
// not serve the case:
// the input's patches are copied into a column matrix [G, B, C/G * K, L] (K kernel taps, L
// output positions), which the weight [G, C_out/G, C/G * K] multiplies. The input gradient is
// the transposed product scattered back by col2im (one thread per input element gathers the
// columns that read it: deterministic, no atomics); the weight gradient multiplies the output
// gradient by the columns laid out [G, B * L, C/G * K]. 1-d and 2-d convolutions are 3-d ones
// with leading spatial dims of size 1. The batch is cut into chunks whose columns fit a
// budget (64 MiB; 256 MiB on CUDA), since Vulkan devices bind at most maxStorageBufferRange
// bytes per buffer.
//
// Formulas: PyTorch's Convolution.cpp (output size (S + 2p - d (k - 1) - 1) / s + 1) and its
// im2col / col2im (aten/src/ATen/native/im2col.h); the transposed convolution is the input
// gradient of the convolution that maps its output to its input.
//
// On CUDA devices with cuDNN (loaded at run time, src/cuda/dnn.hpp) autotune chooses per op
// (forward, input gradient, weight gradient), shape bucket and dtype between the candidates
// "ember" (Ember's kernels: the above, with the gradients' implicit products of
// conv_backward.cpp; the default) and "cudnn"; the transposed convolution is an input
// gradient and shares its choice. A case cuDNN refuses runs Ember's. EMBER_AUTOTUNE_LOG=1
// prints the choice, EMBER_CONV_CANDIDATE=ember or cudnn forces one (tests, benchmarks).
// Vulkan runs Ember's.
#include "ember/gpu/conv.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <functional>
#include <string>

#include "conv_backward.hpp"
#include "ember/core/error.hpp"
#include "ember/gpu/ops.hpp"
#include "ember/tune/tune.hpp"
#include "kernels.hpp"
#ifdef EMBER_HAVE_CUDA
#include "../cuda/dnn.hpp"
#endif

namespace ember::gpu {

namespace {

using namespace detail::names;

/// The most iterations a kernel loop may take (Mesa's llvmpipe ends a loop after 65,535).
constexpr std::int64_t kMaxLoop = 65535;

/// The kernel for `name` and dtype `dt`, compiled once per device (its kernels need no
/// optional device feature).
template <class Make>
const kernel::CompiledKernel& compiled(kernel::ComputeDevice& dev, const std::string& name,
                                       DType dt, Make make) {
  const kernel::CompiledKernel* k =
      detail::compiled(dev, "conv|" + name + "|" + std::to_string(static_cast<int>(dt)), make);
  if (!k) throw UnsupportedError("[gpu conv] " + dev.properties().name + " cannot run " + name);
  return *k;
}

/// The geometry of one convolution, in 3-d: batch, groups, input channels per group, and per
/// spatial dim the input size, kernel size, output size, stride, padding and dilation.
struct Geometry {
  std::int64_t batch = 1, groups = 1, cg = 1;
  std::array<std::int64_t, 3> in{1, 1, 1}, k{1, 1, 1}, out{1, 1, 1};
  std::array<std::int64_t, 3> stride{1, 1, 1}, pad{0, 0, 0}, dil{1, 1, 1};
  std::int64_t taps() const { return k[0] * k[1] * k[2]; }
  std::int64_t positions() const { return out[0] * out[1] * out[2]; }
  std::int64_t spatial() const { return in[0] * in[1] * in[2]; }
  std::int64_t rows() const { return cg * taps(); }  // C/G * K
};

/// Strides (in elements) of the column matrix's logical dims (group, batch, row, position).
struct Layout {
  std::int64_t g, b, row, pos;
};

std::uint32_t u32(std::int64_t v, const char* what) {
  return detail::u32_index(v, "gpu conv", what);
}

/// The scalars both kernels take, in this order (names for the builder).
constexpr const char* kGeomNames[] = {"B",  "C",  "Cg", "K",  "L",  "D",  "H",  "W",  "KD", "KH",
                                      "KW", "OD", "OH", "OW", "sd", "sh", "sw", "pd", "ph", "pw",
                                      "dd", "dh", "dw", "lg", "lb", "lr", "lp", "x0"};
constexpr std::size_t kGeomCount = std::size(kGeomNames);

std::vector<Arg> geometry_args(const Geometry& g, const Layout& l, std::int64_t x_offset) {
  const std::int64_t v[kGeomCount] = {
      g.batch,     g.groups * g.cg, g.cg,        g.taps(), g.positions(), g.in[0],  g.in[1],
      g.in[2],     g.k[0],          g.k[1],      g.k[2],   g.out[0],      g.out[1], g.out[2],
      g.stride[0], g.stride[1],     g.stride[2], g.pad[0], g.pad[1],      g.pad[2], g.dil[0],
      g.dil[1],    g.dil[2],        l.g,         l.b,      l.row,         l.pos,    x_offset};
  std::vector<Arg> args;
  for (std::size_t i = 0; i < kGeomCount; ++i) args.push_back(Arg::u32(u32(v[i], kGeomNames[i])));
  return args;
}

struct GeomVals {
  Val B, C, Cg, K, L, D, H, W, KD, KH, KW, OD, OH, OW, sd, sh, sw, pd, ph, pw, dd, dh, dw, lg, lb,
      lr, lp, x0;
};
GeomVals geometry_scalars(KernelBuilder& kb) {
  Val v[kGeomCount];
  for (std::size_t i = 0; i < kGeomCount; ++i) v[i] = kb.scalar(kGeomNames[i], Elem::U32);
  return {v[0],  v[1],  v[2],  v[3],  v[4],  v[5],  v[6],  v[7],  v[8],  v[9],
          v[10], v[11], v[12], v[13], v[14], v[15], v[16], v[17], v[18], v[19],
          v[20], v[21], v[22], v[23], v[24], v[25], v[26], v[27]};
}

Val i32(Val v) {
  return kernel::cast(v, Elem::I32);
}

/// im2col: one thread per column element (g, b, row, pos) in that order; zero where the
/// patch reads padding.
kernel::Kernel build_im2col(DType dt) {
  const Elem e = elem_of(dt, "conv");
  const Elem reg = dt == DType::F64 ? Elem::F64 : Elem::F32;  // f16/bf16 load as f32
  KernelBuilder kb("conv_im2col", {kGroup, 1, 1});
  Mem x = kb.buffer("x", e, kernel::Access::Read);
  Mem cols = kb.buffer("cols", e, kernel::Access::Write);
  const GeomVals g = geometry_scalars(kb);
  Val n = kb.scalar("n", Elem::U32);
  Val pos = kb.absolute_pos();
  kb.if_in_bounds(pos, n, [&] {
    Val p = pos % g.L;
    Val t = pos / g.L;
    Val row = t % (g.Cg * g.K);
    t = t / (g.Cg * g.K);
    Val b = t % g.B;
    Val grp = t / g.B;
    Val tap = row % g.K, c = row / g.K;
    Val kw = tap % g.KW, kh = (tap / g.KW) % g.KH, kd = tap / (g.KW * g.KH);
    Val ow = p % g.OW, oh = (p / g.OW) % g.OH, od = p / (g.OW * g.OH);
    Val id = i32(od * g.sd + kd * g.dd) - i32(g.pd);
    Val ih = i32(oh * g.sh + kh * g.dh) - i32(g.ph);
    Val iw = i32(ow * g.sw + kw * g.dw) - i32(g.pw);
    Val inside =
        (id >= 0) & (id < i32(g.D)) & (ih >= 0) & (ih < i32(g.H)) & (iw >= 0) & (iw < i32(g.W));
    Var v = kb.var(kb.constant(reg, 0));
    kb.if_(inside, [&] {
      Val ch = b * g.C + grp * g.Cg + c;
      Val xi =
          ((ch * g.D + kernel::cast(id, Elem::U32)) * g.H + kernel::cast(ih, Elem::U32)) * g.W +
          kernel::cast(iw, Elem::U32);
      v = kernel::cast(x[g.x0 + xi], reg);
    });
    cols[grp * g.lg + b * g.lb + row * g.lr + p * g.lp] = kernel::cast(v.get(), e);
  });
  return kb.build();
}

/// col2im: one thread per input element (b, channel, d, h, w); sums the column entries of
/// every (tap, output position) whose patch reads it.
kernel::Kernel build_col2im(DType dt) {
  const Elem e = elem_of(dt, "conv");
  const Elem acc = dt == DType::F64 ? Elem::F64 : Elem::F32;
  KernelBuilder kb("conv_col2im", {kGroup, 1, 1});
  Mem cols = kb.buffer("cols", e, kernel::Access::Read);
  Mem x = kb.buffer("x", e, kernel::Access::Write);
  const GeomVals g = geometry_scalars(kb);
  Val n = kb.scalar("n", Elem::U32);
  Val pos = kb.absolute_pos();
  kb.if_in_bounds(pos, n, [&] {
    Val iw = pos % g.W;
    Val t = pos / g.W;
    Val ih = t % g.H;
    t = t / g.H;
    Val id = t % g.D;
    t = t / g.D;
    Val ch = t % g.C;
    Val b = t / g.C;
    Val grp = ch / g.Cg, c = ch % g.Cg;
    Var sum = kb.var(kb.constant(acc, 0));
    // One loop per kernel dim (taps in the same order as one loop over kd, kh, kw): llvmpipe
    // ends a loop after 65,535 iterations, and a 300 x 300 kernel has 90,000 taps.
    kb.for_(0u, g.KD, 1u, [&](Val kd) {
      kb.for_(0u, g.KH, 1u, [&](Val kh) {
        kb.for_(0u, g.KW, 1u, [&](Val kw) {
          Val tap = (kd * g.KH + kh) * g.KW + kw;
          Val nd = i32(id + g.pd) - i32(kd * g.dd);
          Val nh = i32(ih + g.ph) - i32(kh * g.dh);
          Val nw = i32(iw + g.pw) - i32(kw * g.dw);
          Val ok = (nd >= 0) & (nh >= 0) & (nw >= 0) & (nd % i32(g.sd) == 0) &
                   (nh % i32(g.sh) == 0) & (nw % i32(g.sw) == 0) & (nd / i32(g.sd) < i32(g.OD)) &
                   (nh / i32(g.sh) < i32(g.OH)) & (nw / i32(g.sw) < i32(g.OW));
          kb.if_(ok, [&] {
            Val od = kernel::cast(nd / i32(g.sd), Elem::U32);
            Val oh = kernel::cast(nh / i32(g.sh), Elem::U32);
            Val ow = kernel::cast(nw / i32(g.sw), Elem::U32);
            Val p = (od * g.OH + oh) * g.OW + ow;
            Val row = c * g.K + tap;
            sum =
                sum.get() + kernel::cast(cols[grp * g.lg + b * g.lb + row * g.lr + p * g.lp], acc);
          });
        });
      });
    });
    x[pos] = kernel::cast(sum.get(), e);
  });
  return kb.build();
}

/// Fills `cols` (from element 0, logical dims [G, batch, rows, L] at `layout`) with the
/// patches of `x` (contiguous [B, C, *S]) for the batch items [b0, b0 + g.batch).
void im2col(const GpuTensor& x, std::int64_t b0, std::int64_t channels, const Geometry& g,
            const Layout& layout, const GpuTensor& cols) {
  kernel::ComputeDevice& dev = x.compute();
  const std::int64_t n = g.groups * g.batch * g.rows() * g.positions();
  if (n == 0) return;
  std::vector<Arg> args{
      Arg::buf(x.buffer, 0, u32(x.offset + std::max<std::int64_t>(x.numel(), 1), "input span")),
      Arg::buf(cols.buffer, 0, u32(std::max<std::int64_t>(cols.numel(), 1), "column count"))};
  const std::int64_t x0 = x.offset + b0 * channels * g.spatial();
  for (Arg& a : geometry_args(g, layout, x0)) args.push_back(a);
  args.push_back(Arg::u32(u32(n, "column count")));
  const auto& k = compiled(dev, "im2col", x.dtype, [&] { return build_im2col(x.dtype); });
  dev.launch(k, kernel::grid_for(k.kernel(), static_cast<std::uint64_t>(n)), args);
}

/// Sums the columns (logical dims [G, batch, rows, L] at `layout`) into `out` (contiguous
/// [g.batch, C, *S], written whole).
void col2im(const GpuTensor& cols, const Geometry& g, const Layout& layout, const GpuTensor& out) {
  kernel::ComputeDevice& dev = cols.compute();
  if (cols.offset != 0) throw DeviceError("[gpu conv] col2im: columns must start at offset 0");
  const std::int64_t n = out.numel();
  if (n == 0) return;
  std::vector<Arg> args{
      Arg::buf(cols.buffer, 0, u32(std::max<std::int64_t>(cols.numel(), 1), "cols")),
      Arg::buf(out.buffer, 0, u32(n, "input element count"))};
  for (Arg& a : geometry_args(g, layout, 0)) args.push_back(a);
  args.push_back(Arg::u32(u32(n, "input element count")));
  const auto& k = compiled(dev, "col2im", cols.dtype, [&] { return build_col2im(cols.dtype); });
  dev.launch(k, kernel::grid_for(k.kernel(), static_cast<std::uint64_t>(n)), args);
}

/// The batch items per chunk: the columns of one chunk stay within the budget.
std::int64_t chunk_of(const Geometry& g, DType dt, kernel::ComputeDevice& dev) {
  const std::int64_t budget =
      dev.properties().kind == "cuda" ? std::int64_t{256} << 20 : std::int64_t{64} << 20;
  const std::int64_t per_item = std::max<std::int64_t>(
      g.groups * g.rows() * g.positions() * static_cast<std::int64_t>(dtype_size(dt)), 1);
  return std::clamp<std::int64_t>(budget / per_item, 1, std::max<std::int64_t>(g.batch, 1));
}

/// `t` (contiguous, logical [a, b, c, d]) with its first two dims swapped, contiguous.
GpuTensor swap01(const GpuTensor& t, std::int64_t a, std::int64_t b, std::int64_t c,
                 std::int64_t d) {
  if (a == 1 || b == 1) return reshape(t, Shape{b, a, c, d});
  GpuTensor v = reshape(t, Shape{a, b, c, d});
  v.shape = Shape{b, a, c, d};
  v.strides = {c * d, b * c * d, d, 1};
  return copy(v);
}

/// Batch items [b0, b0 + count) of the contiguous gradient dy [B, C_out, L], viewed
/// [count, G, C_out/G, L].
GpuTensor batch_part(const GpuTensor& dy, std::int64_t b0, std::int64_t count, std::int64_t G,
                     std::int64_t cog, std::int64_t L) {
  GpuTensor part = dy;
  part.offset += b0 * G * cog * L;
  part.shape = Shape{count, G, cog, L};
  part.strides = part.shape.contiguous_strides();
  return part;
}

/// Copies `src` (contiguous) into `dst` starting at element `at` (same dtype, one device).
void place(const GpuTensor& src, const GpuTensor& dst, std::int64_t at) {
  const std::size_t es = dtype_size(src.dtype);
  const auto bytes = static_cast<std::size_t>(src.numel()) * es;
  if (bytes == 0) return;
  src.compute().copy(src.buffer, static_cast<std::size_t>(src.offset) * es, dst.buffer,
                     static_cast<std::size_t>(dst.offset + at) * es, bytes);
}

/// The batch items [b0, b0 + g.batch) of y, contiguous [g.batch, C_out, L]: weight (as
/// [G, 1, C_out/G, R]) x the columns of x.
GpuTensor forward_chunk(const GpuTensor& x, const GpuTensor& w, std::int64_t b0,
                        std::int64_t channels, const Geometry& g, std::int64_t c_out) {
  kernel::ComputeDevice& dev = x.compute();
  const std::int64_t G = g.groups, R = g.rows(), L = g.positions();
  GpuTensor cols = empty(Shape{G, g.batch, R, L}, x.dtype, dev, x.device);
  im2col(x, b0, channels, g, {g.batch * R * L, R * L, L, 1}, cols);
  return swap01(matmul(w, cols), G, g.batch, c_out / G, L);  // [G, batch, ..] -> [batch, G, ..]
}

/// y [B, C_out, L] = weight x columns of `x`, chunked over the batch.
GpuTensor forward(const GpuTensor& x_in, const GpuTensor& w_in, const Geometry& geo,
                  std::int64_t c_out) {
  kernel::ComputeDevice& dev = x_in.compute();
  const GpuTensor x = contiguous(x_in);
  const std::int64_t G = geo.groups, cog = c_out / G, channels = G * geo.cg;
  const GpuTensor w = reshape(w_in, Shape{G, 1, cog, geo.rows()});
  const std::int64_t chunk = chunk_of(geo, x.dtype, dev);
  if (geo.batch == 0 || chunk < geo.batch) {
    GpuTensor y = empty(Shape{geo.batch, c_out, geo.positions()}, x.dtype, dev, x.device);
    for (std::int64_t b0 = 0; b0 < geo.batch; b0 += chunk) {
      Geometry g = geo;
      g.batch = std::min(chunk, geo.batch - b0);
      place(forward_chunk(x, w, b0, channels, g, c_out), y, b0 * c_out * g.positions());
    }
    return y;
  }
  return forward_chunk(x, w, 0, channels, geo, c_out);  // one chunk: its result is y
}

/// dx [B, C, *S] from dy [B, C_out, L]: (weight^T x dy) through col2im, chunked.
GpuTensor input_grad(const GpuTensor& dy_in, const GpuTensor& w_in, const Geometry& geo,
                     std::int64_t c_out) {
  kernel::ComputeDevice& dev = dy_in.compute();
  const GpuTensor dy = contiguous(dy_in);
  const std::int64_t G = geo.groups, cog = c_out / G, channels = G * geo.cg;
  GpuTensor wt = reshape(w_in, Shape{G, 1, cog, geo.rows()});
  wt.shape = Shape{G, 1, geo.rows(), cog};
  wt.strides = {cog * geo.rows(), cog * geo.rows(), 1, geo.rows()};
  wt = copy(wt);
  GpuTensor dx = empty(Shape{geo.batch, channels, geo.spatial()}, dy.dtype, dev, dy.device);
  const std::int64_t chunk = chunk_of(geo, dy.dtype, dev);
  const bool one_chunk = chunk >= geo.batch;  // col2im writes dx itself
  for (std::int64_t b0 = 0; b0 < geo.batch; b0 += chunk) {
    Geometry g = geo;
    g.batch = std::min(chunk, geo.batch - b0);
    const std::int64_t R = g.rows(), L = g.positions();
    const GpuTensor part = batch_part(dy, b0, g.batch, G, cog, L);
    GpuTensor dyg = swap01(contiguous(part), g.batch, G, cog, L);  // [G, batch, C_out/G, L]
    GpuTensor cols = matmul(wt, dyg);                              // [G, batch, R, L]
    const GpuTensor out =
        one_chunk ? dx : empty(Shape{g.batch, channels, g.spatial()}, dy.dtype, dev, dy.device);
    col2im(cols, g, {g.batch * R * L, R * L, L, 1}, out);
    if (!one_chunk) place(out, dx, b0 * channels * g.spatial());
  }
  return dx;
}

/// dw [G, C_out/G, R] = dy (as [G, C_out/G, B L]) x columns (as [G, B L, R]), chunked.
GpuTensor weight_grad(const GpuTensor& x_in, const GpuTensor& dy_in, const Geometry& geo,
                      std::int64_t c_out) {
  kernel::ComputeDevice& dev = x_in.compute();
  const GpuTensor x = contiguous(x_in), dy = contiguous(dy_in);
  const std::int64_t G = geo.groups, cog = c_out / G, channels = G * geo.cg;
  std::optional<GpuTensor> dw;
  const std::int64_t chunk = chunk_of(geo, x.dtype, dev);
  for (std::int64_t b0 = 0; b0 < geo.batch; b0 += chunk) {
    Geometry g = geo;
    g.batch = std::min(chunk, geo.batch - b0);
    const std::int64_t R = g.rows(), L = g.positions();
    GpuTensor cols = empty(Shape{G, g.batch * L, R}, x.dtype, dev, x.device);
    im2col(x, b0, channels, g, {g.batch * L * R, L * R, 1, R}, cols);
    // [batch, G, C_out/G, L] -> [G, C_out/G, batch, L]
    GpuTensor v = batch_part(dy, b0, g.batch, G, cog, L);
    v.shape = Shape{G, cog, g.batch, L};
    v.strides = {cog * L, L, c_out * L, 1};
    GpuTensor dyg = reshape(copy(v), Shape{G, cog, g.batch * L});
    GpuTensor p = matmul(dyg, cols);  // [G, C_out/G, R]
    if (!dw) {
      dw = p;
    } else {
      MapSpec add{"conv_acc", p.dtype, {}, [](auto in, auto) { return in[0] + in[1]; }};
      const GpuTensor both[2] = {*dw, p};
      dw = map(add, both, dw->shape, {}, 1u);
    }
  }
  if (!dw) {  // an empty batch: zeros
    GpuTensor z = empty(Shape{G, cog, geo.rows()}, x.dtype, dev, x.device);
    dev.write(
        z.buffer, 0,
        std::vector<std::uint8_t>(static_cast<std::size_t>(z.numel()) * dtype_size(z.dtype), 0)
            .data(),
        static_cast<std::size_t>(z.numel()) * dtype_size(z.dtype));
    dw = z;
  }
  return *dw;
}

template <std::size_t N>
Geometry geometry(const Shape& x, const Shape& w, const Shape& y, const ConvOptions<N>& o) {
  Geometry g;
  g.batch = x.dims[0];
  g.groups = o.groups;
  g.cg = x.dims[1] / o.groups;
  for (std::size_t i = 0; i < N; ++i) {
    const std::size_t d = 3 - N + i;
    g.in[d] = x.dims[2 + i];
    g.k[d] = w.dims[2 + i];
    g.out[d] = y.dims[2 + i];
    g.stride[d] = o.stride[i];
    g.pad[d] = o.padding[i];
    g.dil[d] = o.dilation[i];
  }
  return g;
}

/// The geometry as src/gpu/conv_backward.cpp takes it.
detail::ConvShape conv_shape(const Geometry& g, std::int64_t c_out) {
  detail::ConvShape s;
  s.batch = g.batch;
  s.groups = g.groups;
  s.cg = g.cg;
  s.cog = c_out / g.groups;
  s.in = g.in;
  s.k = g.k;
  s.out = g.out;
  s.stride = g.stride;
  s.pad = g.pad;
  s.dil = g.dil;
  return s;
}

GpuTensor add_bias(GpuTensor y, const GpuTensor& bias) {
  Shape s(std::vector<std::int64_t>(y.shape.dims.size(), 1));
  s.dims[1] = bias.shape.dims[0];
  GpuTensor b = reshape(bias, s);
  MapSpec add{"conv_bias", y.dtype, {}, [](auto in, auto) { return in[0] + in[1]; }};
  const GpuTensor both[2] = {y, b};
  return map(add, both, y.shape, {}, 1u);
}

Shape with_spatial(std::int64_t b, std::int64_t c, const std::int64_t* spatial, std::size_t n) {
  Shape s{b, c};
  for (std::size_t i = 0; i < n; ++i) s.dims.push_back(spatial[i]);
  return s;
}

/// The output size of a convolution along one dim (PyTorch's formula).
std::int64_t out_size(std::int64_t in, std::int64_t k, std::int64_t stride, std::int64_t pad,
                      std::int64_t dil) {
  return (in + 2 * pad - dil * (k - 1) - 1) / stride + 1;
}

/// Float dtypes the device has, one dtype, one device, 32-bit element counts.
bool dtypes_native(const GpuTensor& x, const GpuTensor& w) {
  return is_float(x.dtype) && x.dtype == w.dtype && native_dtype(x.dtype, x.compute()) &&
         &x.compute() == &w.compute() && x.numel() <= std::int64_t{0xffffffff};
}

/// unfold / fold of x [N, C, H, W] as the convolution with one group and a [1, C, kh, kw]
/// weight.
Geometry unfold_geometry(const Shape& x, const std::array<std::int64_t, 2>& k,
                         const UnfoldOptions& o) {
  ConvOptions<2> c;
  c.stride = o.stride;
  c.padding = o.padding;
  c.dilation = o.dilation;
  std::array<std::int64_t, 2> out{};
  for (std::size_t i = 0; i < 2; ++i)
    out[i] = out_size(x.dims[2 + i], k[i], o.stride[i], o.padding[i], o.dilation[i]);
  return geometry<2>(x, Shape{1, x.dims[1], k[0], k[1]}, with_spatial(x.dims[0], 1, out.data(), 2),
                     c);
}

/// The three functions a convolution candidate serves.
enum class ConvFn { Forward, InputGrad, WeightGrad };

const char* fn_name(ConvFn f) {
  return f == ConvFn::Forward     ? "conv"
         : f == ConvFn::InputGrad ? "conv_x_backward"
                                  : "conv_weight_backward";
}

/// EMBER_CONV_CANDIDATE: "" (autotune), "ember" or "cudnn"; ValueError otherwise.
std::string forced_candidate(ConvFn f) {
  const char* v = std::getenv("EMBER_CONV_CANDIDATE");
  if (!v || !*v) return "";
  const std::string s = v;
  if (s != "ember" && s != "cudnn")
    ember::detail::fail<ValueError>(fn_name(f), "EMBER_CONV_CANDIDATE=", s,
                                    ": expected ember or cudnn");
  return s;
}

#ifdef EMBER_HAVE_CUDA
/// The geometry as cuDNN's: N = 1 and 2 as 2-d (a 1-d convolution has a leading dim of 1).
template <std::size_t N>
cuda::dnn::ConvShape dnn_shape(const Geometry& g, std::int64_t c_out) {
  cuda::dnn::ConvShape s;
  s.spatial = N == 3 ? 3 : 2;
  s.batch = g.batch;
  s.in_channels = g.groups * g.cg;
  s.out_channels = c_out;
  s.groups = g.groups;
  for (int i = 0; i < s.spatial; ++i) {
    const auto d = static_cast<std::size_t>(3 - s.spatial + i), u = static_cast<std::size_t>(i);
    s.in[u] = g.in[d];
    s.kernel[u] = g.k[d];
    s.out[u] = g.out[d];
    s.stride[u] = g.stride[d];
    s.pad[u] = g.pad[d];
    s.dil[u] = g.dil[d];
  }
  return s;
}

cuda::dnn::Operand operand(const GpuTensor& t) {
  return {t.buffer.get(), static_cast<std::uint64_t>(t.offset)};
}
#endif

/// Runs `im2col` or, on CUDA with cuDNN, the candidate that EMBER_CONV_CANDIDATE forces or
/// autotune picks for (the function, N, the geometry's bucket, dtype, device). `vendor` fills
/// the result through cuDNN from packed operands (`own`, Ember's kernels, from any views).
template <std::size_t N>
void run_candidates(ConvFn f, kernel::ComputeDevice& dev, DType dt, const Geometry& g,
                    std::int64_t c_out, const std::function<void()>& own,
                    const std::function<void()>& vendor) {
  const std::string forced = forced_candidate(f);
  std::vector<tune::Candidate> candidates{{"ember", own}};
#ifdef EMBER_HAVE_CUDA
  // cuDNN is asked only when it may run: forced by name, or tuned (opt-in, tune.hpp).
  const bool wanted = forced == "cudnn" || (forced.empty() && tune::Tuner::vendor_enabled());
  if (wanted && dev.properties().kind == "cuda") {
    std::string why;
    if (cuda::dnn::available(&why)) {
      const auto op = f == ConvFn::Forward     ? cuda::dnn::ConvOp::Forward
                      : f == ConvFn::InputGrad ? cuda::dnn::ConvOp::BackwardData
                                               : cuda::dnn::ConvOp::BackwardFilter;
      // A case cuDNN refuses (a type or shape it has no algorithm for) is not offered; nor,
      // under autotune, one whose planning fails (e.g. cuDNN cannot start on this device).
      std::string refused;
      try {
        refused = cuda::dnn::refusal(dev, elem_of(dt, fn_name(f)), op, dnn_shape<N>(g, c_out));
      } catch (const Error&) {
        if (forced == "cudnn") throw;
        refused = "planning failed";
      }
      if (refused.empty()) candidates.push_back({"cudnn", vendor});
    } else if (forced == "cudnn") {
      ember::detail::fail<UnsupportedError>(fn_name(f), "EMBER_CONV_CANDIDATE=cudnn, but ", why);
    }
  }
#endif
  if (!forced.empty()) {
    for (const tune::Candidate& c : candidates)
      if (c.name == forced) {
        c.run();
        return;
      }
    candidates.front().run();  // not offered here (Vulkan; a case cuDNN refuses): Ember's
    return;
  }
  if (candidates.size() == 1) {
    candidates.front().run();
    return;
  }
  // (batch, C_in, C_out, groups, then per spatial dim: input, kernel, stride, padding,
  // dilation), each rounded up to a power of two by make_key.
  std::vector<std::uint64_t> dims{
      static_cast<std::uint64_t>(g.batch), static_cast<std::uint64_t>(g.groups * g.cg),
      static_cast<std::uint64_t>(c_out), static_cast<std::uint64_t>(g.groups)};
  for (const auto* a : {&g.in, &g.k, &g.stride, &g.pad, &g.dil})
    for (std::size_t i = 3 - N; i < 3; ++i) dims.push_back(static_cast<std::uint64_t>((*a)[i]));
  const std::string op = "conv" + std::to_string(N) + "d" +
                         (f == ConvFn::Forward     ? ""
                          : f == ConvFn::InputGrad ? "_x_backward"
                                                   : "_weight_backward");
  const tune::Key key = tune::make_key(op, dims, std::string(dtype_name(dt)), dev);
  candidates[tune::Tuner::global().choose(key, candidates, dev)].run();
}

}  // namespace

bool conv_native(const GpuTensor& x, const GpuTensor& w) {
  // col2im loops over each kernel dim: llvmpipe ends a loop after 65,535 iterations.
  for (std::size_t d = 2; d < w.shape.dims.size(); ++d)
    if (w.shape.dims[d] > kMaxLoop) return false;
  return dtypes_native(x, w);
}

template <std::size_t N>
GpuTensor conv(const GpuTensor& x, const GpuTensor& w, const std::optional<GpuTensor>& bias,
               const ConvOptions<N>& o) {
  std::array<std::int64_t, N> out{};
  for (std::size_t i = 0; i < N; ++i)
    out[i] = out_size(x.shape.dims[2 + i], w.shape.dims[2 + i], o.stride[i], o.padding[i],
                      o.dilation[i]);
  const Shape ys = with_spatial(x.shape.dims[0], w.shape.dims[0], out.data(), N);
  const Geometry g = geometry<N>(x.shape, w.shape, ys, o);
  const std::int64_t c_out = w.shape.dims[0];
  kernel::ComputeDevice& dev = x.compute();
  GpuTensor y;
  run_candidates<N>(
      ConvFn::Forward, dev, x.dtype, g, c_out, [&] { y = reshape(forward(x, w, g, c_out), ys); },
      [&] {
#ifdef EMBER_HAVE_CUDA
        const GpuTensor px = packed(x), pw = packed(w);
        y = empty(ys, x.dtype, dev, x.device);
        cuda::dnn::conv(dev, elem_of(x.dtype, "conv"), cuda::dnn::ConvOp::Forward,
                        dnn_shape<N>(g, c_out), operand(px), operand(pw), operand(y));
#endif
      });
  return bias ? add_bias(std::move(y), *bias) : y;
}

template <std::size_t N>
GpuTensor conv_x_backward(const GpuTensor& dy, const GpuTensor& w, const Shape& x_shape,
                          const ConvOptions<N>& o) {
  const Geometry g = geometry<N>(x_shape, w.shape, dy.shape, o);
  const std::int64_t c_out = w.shape.dims[0];
  kernel::ComputeDevice& dev = dy.compute();
  GpuTensor dx;
  run_candidates<N>(
      ConvFn::InputGrad, dev, dy.dtype, g, c_out,
      [&] {  // the implicit product, else (grid, llvmpipe's loop limit) im2col
        if (auto r = detail::conv_data_grad(dy, w, x_shape, conv_shape(g, c_out)))
          dx = std::move(*r);
        else
          dx = reshape(input_grad(dy, w, g, c_out), x_shape);
      },
      [&] {
#ifdef EMBER_HAVE_CUDA
        const GpuTensor pdy = packed(dy), pw = packed(w);
        dx = empty(x_shape, dy.dtype, dev, dy.device);
        cuda::dnn::conv(dev, elem_of(dy.dtype, "conv_x_backward"), cuda::dnn::ConvOp::BackwardData,
                        dnn_shape<N>(g, c_out), operand(dx), operand(pw), operand(pdy));
#endif
      });
  return dx;
}

template <std::size_t N>
GpuTensor conv_weight_backward(const GpuTensor& x, const GpuTensor& dy, const Shape& w_shape,
                               const ConvOptions<N>& o) {
  const Geometry g = geometry<N>(x.shape, w_shape, dy.shape, o);
  const std::int64_t c_out = w_shape.dims[0];
  kernel::ComputeDevice& dev = x.compute();
  GpuTensor dw;
  run_candidates<N>(
      ConvFn::WeightGrad, dev, x.dtype, g, c_out,
      [&] {
        if (auto r = detail::conv_weight_grad(x, dy, w_shape, conv_shape(g, c_out)))
          dw = std::move(*r);
        else
          dw = reshape(weight_grad(x, dy, g, c_out), w_shape);
      },
      [&] {
#ifdef EMBER_HAVE_CUDA
        const GpuTensor px = packed(x), pdy = packed(dy);
        dw = empty(w_shape, x.dtype, dev, x.device);
        cuda::dnn::conv(dev, elem_of(x.dtype, "conv_weight_backward"),
                        cuda::dnn::ConvOp::BackwardFilter, dnn_shape<N>(g, c_out), operand(px),
                        operand(dw), operand(pdy));
#endif
      });
  return dw;
}

template <std::size_t N>
GpuTensor conv_transpose(const GpuTensor& x, const GpuTensor& w,
                         const std::optional<GpuTensor>& bias, const ConvTransposeOptions<N>& o) {
  // The input gradient of the convolution y -> x whose weight is w ([C_in, C_out/G, *k]).
  std::array<std::int64_t, N> out{};
  for (std::size_t i = 0; i < N; ++i)
    out[i] = (x.shape.dims[2 + i] - 1) * o.stride[i] - 2 * o.padding[i] +
             o.dilation[i] * (w.shape.dims[2 + i] - 1) + o.padding_out[i] + 1;
  const Shape ys = with_spatial(x.shape.dims[0], w.shape.dims[1] * o.groups, out.data(), N);
  ConvOptions<N> c;
  c.stride = o.stride;
  c.padding = o.padding;
  c.dilation = o.dilation;
  c.groups = o.groups;
  GpuTensor y = conv_x_backward<N>(x, w, ys, c);
  return bias ? add_bias(std::move(y), *bias) : y;
}

std::optional<GpuTensor> unfold4d(const GpuTensor& x_in, const std::array<std::int64_t, 2>& k,
                                  const UnfoldOptions& o) {
  if (!dtypes_native(x_in, x_in) || x_in.shape.dims.size() != 4) return std::nullopt;
  const GpuTensor x = contiguous(x_in);
  const auto& d = x.shape.dims;
  const Geometry g = unfold_geometry(x.shape, k, o);
  const std::int64_t R = g.rows(), L = g.positions();
  GpuTensor cols = empty(Shape{d[0], R, L}, x.dtype, x.compute(), x.device);
  im2col(x, 0, d[1], g, {d[0] * R * L, R * L, L, 1}, cols);
  return cols;
}

std::optional<GpuTensor> fold4d(const GpuTensor& cols_in,
                                const std::array<std::int64_t, 2>& output_size,
                                const std::array<std::int64_t, 2>& k, const UnfoldOptions& o) {
  if (!dtypes_native(cols_in, cols_in) || cols_in.shape.dims.size() != 3 || k[0] > kMaxLoop ||
      k[1] > kMaxLoop)
    return std::nullopt;
  const GpuTensor cols = cols_in.offset == 0 && cols_in.is_contiguous() ? cols_in : copy(cols_in);
  const std::int64_t n = cols.shape.dims[0], R = cols.shape.dims[1], L = cols.shape.dims[2];
  const std::int64_t c = R / std::max<std::int64_t>(k[0] * k[1], 1);
  const Shape out_shape{n, c, output_size[0], output_size[1]};
  const Geometry g = unfold_geometry(out_shape, k, o);
  GpuTensor out = empty(out_shape, cols.dtype, cols.compute(), cols.device);
  col2im(cols, g, {n * R * L, R * L, L, 1}, out);
  return out;
}

#define EMBER_GPU_CONV_INSTANCES(N)                                                               \
  template GpuTensor conv<N>(const GpuTensor&, const GpuTensor&, const std::optional<GpuTensor>&, \
                             const ConvOptions<N>&);                                              \
  template GpuTensor conv_x_backward<N>(const GpuTensor&, const GpuTensor&, const Shape&,         \
                                        const ConvOptions<N>&);                                   \
  template GpuTensor conv_weight_backward<N>(const GpuTensor&, const GpuTensor&, const Shape&,    \
                                             const ConvOptions<N>&);                              \
  template GpuTensor conv_transpose<N>(const GpuTensor&, const GpuTensor&,                        \
                                       const std::optional<GpuTensor>&,                           \
                                       const ConvTransposeOptions<N>&);
EMBER_GPU_CONV_INSTANCES(1)
EMBER_GPU_CONV_INSTANCES(2)
EMBER_GPU_CONV_INSTANCES(3)
#undef EMBER_GPU_CONV_INSTANCES

}  // namespace ember::gpu
