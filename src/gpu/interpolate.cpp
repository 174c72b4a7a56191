// Interpolation (nearest, bilinear, bicubic) on the GPU backends. The per-axis taps (PyTorch's
// source indices and weights) are the CPU backend's (ember/cpu/interpolate_taps.hpp), computed
// on the host and uploaded as four small tables; one thread per output element blends them in
// the CPU's order: each of the nw source columns is first blended over the nh source rows,
// then the columns are blended (src/cpu/interpolate.cpp's separable loop).
#include <sstream>
#include <vector>

#include "ember/cpu/interpolate_taps.hpp"
#include "ember/gpu/ops.hpp"
#include "ember/gpu/pool.hpp"
#include "kernels.hpp"

namespace ember::gpu {

namespace {

using namespace detail::names;

/// `taps` source rows and columns per output element (1, 2 or 4).
kernel::Kernel build(Elem e, Elem acc, int taps) {
  KernelBuilder kb("interpolate", {kGroup, 1, 1});
  Mem x = kb.buffer("x", e, kernel::Access::Read);
  Mem hi = kb.buffer("hi", Elem::U32, kernel::Access::Read);
  Mem hw = kb.buffer("hw", acc, kernel::Access::Read);
  Mem wi = kb.buffer("wi", Elem::U32, kernel::Access::Read);
  Mem ww = kb.buffer("ww", acc, kernel::Access::Read);
  Mem y = kb.buffer("y", e, kernel::Access::Write);
  Val h = kb.scalar("h", Elem::U32), w = kb.scalar("w", Elem::U32);
  Val oh = kb.scalar("oh", Elem::U32), ow = kb.scalar("ow", Elem::U32);
  Val n = kb.scalar("n", Elem::U32);
  const auto n_taps = static_cast<std::uint32_t>(taps);
  Val pos = kb.absolute_pos();
  kb.if_in_bounds(pos, n, [&] {
    Val c = pos % ow, t = pos / ow;
    Val r = t % oh, plane = t / oh;
    Val base = plane * h * w;
    Val sum = kb.constant(acc, 0);
    for (int j = 0; j < taps; ++j) {
      Val col = wi[c * n_taps + static_cast<std::uint32_t>(j)];
      Val blend = kb.constant(acc, 0);
      for (int a = 0; a < taps; ++a) {
        Val tap = r * n_taps + static_cast<std::uint32_t>(a);
        Val v = Val(hw[tap]) * kernel::cast(x[base + Val(hi[tap]) * w + col], acc);
        blend = a == 0 ? v : blend + v;
      }
      Val v = Val(ww[c * n_taps + static_cast<std::uint32_t>(j)]) * blend;
      sum = j == 0 ? v : sum + v;
    }
    y[pos] = kernel::cast(sum, e);
  });
  return kb.build();
}

/// The taps of one axis as device tables (indices as u32, weights in the compute type).
template <class A>
std::pair<kernel::Buffer, kernel::Buffer> tables(kernel::ComputeDevice& dev,
                                                 const cpu::InterpolateTaps<A>& t) {
  std::vector<std::uint32_t> idx(t.idx.begin(), t.idx.end());
  return {dev.upload(idx.data(), idx.size() * sizeof(std::uint32_t)),
          dev.upload(t.w.data(), t.w.size() * sizeof(A))};
}

}  // namespace

std::optional<GpuTensor> interpolate(const GpuTensor& x_in,
                                     const std::array<std::int64_t, 2>& output_size,
                                     const InterpolateOptions& options) {
  const DType dt = x_in.dtype;
  kernel::ComputeDevice& dev = x_in.compute();
  if (!is_float(dt) || !native_dtype(dt, dev) || x_in.shape.dims.size() != 4) return std::nullopt;
  const std::int64_t H = x_in.shape.dims[2], W = x_in.shape.dims[3];
  const std::int64_t OH = output_size[0], OW = output_size[1];
  Shape out_shape = x_in.shape;
  out_shape.dims[2] = OH;
  out_shape.dims[3] = OW;
  if (x_in.numel() > std::int64_t{0xffffffff} || out_shape.numel() > std::int64_t{0xffffffff})
    return std::nullopt;
  const Elem e = elem_of(dt, "interpolate");
  const Elem acc = dt == DType::F64 ? Elem::F64 : Elem::F32;
  const int taps = options.mode == InterpolateMode::Nearest    ? 1
                   : options.mode == InterpolateMode::Bilinear ? 2
                                                               : 4;
  std::ostringstream key;
  key << "interpolate|" << static_cast<int>(e) << '|' << taps;
  const auto* k = compiled(dev, key.str(), [&] { return build(e, acc, taps); });
  if (!k) return std::nullopt;
  GpuTensor out = empty(out_shape, dt, dev, x_in.device);
  const auto n = static_cast<std::uint32_t>(out.numel());
  if (n == 0 || H == 0 || W == 0) return n == 0 ? std::optional(out) : std::nullopt;
  const GpuTensor x = packed(x_in);
  std::pair<kernel::Buffer, kernel::Buffer> th, tw;
  if (acc == Elem::F64) {
    th = tables(dev, cpu::interpolate_taps<double>(H, OH, options.mode, options.align_corners));
    tw = tables(dev, cpu::interpolate_taps<double>(W, OW, options.mode, options.align_corners));
  } else {
    th = tables(dev, cpu::interpolate_taps<float>(H, OH, options.mode, options.align_corners));
    tw = tables(dev, cpu::interpolate_taps<float>(W, OW, options.mode, options.align_corners));
  }
  const auto u = [](std::int64_t v) { return Arg::u32(static_cast<std::uint32_t>(v)); };
  const auto len = [](std::int64_t v) { return static_cast<std::uint64_t>(v); };
  dev.launch(*k, kernel::grid_for(k->kernel(), n),
             {Arg::buf(x.buffer, static_cast<std::uint64_t>(x.offset), len(x.numel())),
              Arg::buf(th.first, 0, len(OH * taps)), Arg::buf(th.second, 0, len(OH * taps)),
              Arg::buf(tw.first, 0, len(OW * taps)), Arg::buf(tw.second, 0, len(OW * taps)),
              Arg::buf(out.buffer, 0, n), u(H), u(W), u(OH), u(OW), u(n)});
  return out;
}

}  // namespace ember::gpu
