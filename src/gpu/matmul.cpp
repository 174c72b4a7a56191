// Matrix products on the GPU backends: a tiled kernel of Ember's own (16 x 16 output tiles,
// 16-deep slices of A and B staged in shared memory), batched over the leading dims with
// broadcasting. f16/bf16 inputs accumulate in f32, f64 in f64.
//
// On CUDA devices with cuBLASLt (loaded at run time, src/cuda/blaslt.hpp) autotune chooses per
// (batches, m, n, k) bucket and dtype between the candidates "ember_tiled" (the default) and
// "cublaslt"; EMBER_AUTOTUNE_LOG=1 prints the choice, EMBER_MATMUL_CANDIDATE=ember_tiled or
// cublaslt forces one (tests, benchmarks). Vulkan runs the tiled kernel.
#include <algorithm>
#include <cstdlib>
#include <string>

#include "ember/core/error.hpp"
#include "ember/gpu/ops.hpp"
#include "ember/kernel/cache.hpp"
#include "ember/tune/tune.hpp"
#include "kernels.hpp"
#ifdef EMBER_HAVE_CUDA
#include "../cuda/blaslt.hpp"
#endif

namespace ember::gpu {

namespace {

using namespace detail::names;

constexpr std::uint32_t kTile = 16;

kernel::Kernel build(DType dt) {
  const Elem e = elem_of(dt, "matmul");
  const Elem acc = dt == DType::F64 ? Elem::F64 : Elem::F32;
  KernelBuilder kb("matmul_tiled", {kTile, kTile, 1});
  Mem a = kb.buffer("a", e, kernel::Access::Read);
  Mem b = kb.buffer("b", e, kernel::Access::Read);
  Mem c = kb.buffer("c", e, kernel::Access::Write);
  Val m = kb.scalar("m", Elem::U32), n = kb.scalar("n", Elem::U32), k = kb.scalar("k", Elem::U32);
  Val a_batch = kb.scalar("a_batch", Elem::U32);  // elements between batches (0: broadcast)
  Val b_batch = kb.scalar("b_batch", Elem::U32);
  Mem as = kb.shared(acc, kTile * kTile), bs = kb.shared(acc, kTile * kTile);
  Val tx = kb.thread_idx(0), ty = kb.thread_idx(1);
  Val col = kb.block_idx(0) * kTile + tx, row = kb.block_idx(1) * kTile + ty;
  Val batch = kb.block_idx(2);
  Val a0 = batch * a_batch, b0 = batch * b_batch;
  Var sum = kb.var(kb.constant(acc, 0));
  Val zero = kb.constant(acc, 0);
  kb.for_(0u, k, kTile, [&](Val k0) {
    Var va = kb.var(zero), vb = kb.var(zero);
    kb.if_((row < m) & (k0 + tx < k), [&] { va = kernel::cast(a[a0 + row * k + k0 + tx], acc); });
    kb.if_((col < n) & (k0 + ty < k), [&] { vb = kernel::cast(b[b0 + (k0 + ty) * n + col], acc); });
    as[ty * kTile + tx] = va.get();
    bs[ty * kTile + tx] = vb.get();
    kb.barrier();
    for (std::uint32_t i = 0; i < kTile; ++i)
      sum = sum.get() + Val(as[ty * kTile + i]) * Val(bs[kb.u32(i * kTile) + tx]);
    kb.barrier();
  });
  Val c0 = batch * m * n;
  kb.if_((row < m) & (col < n), [&] { c[c0 + row * n + col] = kernel::cast(sum.get(), e); });
  return kb.build();
}

kernel::LruCache<kernel::CompiledPtr>& cache() {
  static kernel::LruCache<kernel::CompiledPtr> c(64);
  return c;
}

/// `t` with its batch dims (all but the last two) expanded to `batch` and made contiguous,
/// unless they already match or are all 1 (then the kernel broadcasts with a zero stride).
GpuTensor batch_ready(const GpuTensor& t, const std::vector<std::int64_t>& batch) {
  const std::size_t r = t.shape.dims.size();
  bool all_one = true, same = true;
  for (std::size_t d = 0; d + 2 < r; ++d) {
    all_one = all_one && t.shape.dims[d] == 1;
    same = same && t.shape.dims[d] == batch[d];
  }
  if (same || all_one) return packed(t);
  GpuTensor v = t;
  for (std::size_t d = 0; d + 2 < r; ++d)
    if (t.shape.dims[d] == 1 && batch[d] != 1) {
      v.shape.dims[d] = batch[d];
      v.strides[d] = 0;
    }
  return copy(v);
}

/// EMBER_MATMUL_CANDIDATE: "" (autotune), "ember_tiled" or "cublaslt"; ValueError otherwise.
std::string forced_candidate() {
  const char* v = std::getenv("EMBER_MATMUL_CANDIDATE");
  if (!v || !*v) return "";
  const std::string s = v;
  if (s != "ember_tiled" && s != "cublaslt")
    ember::detail::fail<ValueError>("matmul", "EMBER_MATMUL_CANDIDATE=", s,
                                    ": expected ember_tiled or cublaslt");
  return s;
}

}  // namespace

bool matmul_native(const GpuTensor& a, const GpuTensor& b) {
  const bool is_float = a.dtype == DType::F32 || a.dtype == DType::F16 || a.dtype == DType::BF16 ||
                        a.dtype == DType::F64;
  return is_float && native_dtype(a.dtype, a.compute()) && a.numel() <= std::int64_t{0xffffffff} &&
         b.numel() <= std::int64_t{0xffffffff};
}

GpuTensor matmul(const GpuTensor& a_in, const GpuTensor& b_in) {
  const std::size_t r = a_in.shape.dims.size();
  std::vector<std::int64_t> batch(r - 2);
  std::int64_t batches = 1;
  for (std::size_t d = 0; d + 2 < r; ++d) {
    batch[d] = std::max(a_in.shape.dims[d], b_in.shape.dims[d]);
    if (a_in.shape.dims[d] == 0 || b_in.shape.dims[d] == 0) batch[d] = 0;
    batches *= batch[d];
  }
  const std::int64_t m = a_in.shape.dims[r - 2], k = a_in.shape.dims[r - 1],
                     n = b_in.shape.dims[r - 1];
  Shape out_shape;
  out_shape.dims = batch;
  out_shape.dims.push_back(m);
  out_shape.dims.push_back(n);
  kernel::ComputeDevice& dev = a_in.compute();
  GpuTensor out = empty(out_shape, a_in.dtype, dev, a_in.device);
  if (out.numel() == 0) return out;
  const bool tiled_fits =
      out.numel() <= std::int64_t{0xffffffff} && batches <= dev.properties().max_grid[2];
  const GpuTensor a = batch_ready(a_in, batch), b = batch_ready(b_in, batch);
  const auto batch_stride = [&](const GpuTensor& t, std::int64_t inner) -> std::uint32_t {
    return t.numel() == inner * batches && batches > 1 ? static_cast<std::uint32_t>(inner) : 0u;
  };
  const std::uint32_t a_stride = batch_stride(a, m * k), b_stride = batch_stride(b, k * n);
  const auto tiled = [&] {
    if (!tiled_fits)
      throw UnsupportedError("[matmul] the output " + std::to_string(out.numel()) +
                             " elements or batch " + std::to_string(batches) +
                             " exceeds the GPU kernel's grid");
    const std::string key = std::to_string(reinterpret_cast<std::uintptr_t>(&dev)) + "|" +
                            std::to_string(static_cast<int>(a.dtype));
    auto compiled = cache().get(key);
    if (!compiled) {
      compiled = dev.compile(build(a.dtype));
      cache().put(key, *compiled);
    }
    const Arg args[] = {Arg::buf(a.buffer, static_cast<std::uint64_t>(a.offset),
                                 static_cast<std::uint64_t>(std::max<std::int64_t>(a.numel(), 1))),
                        Arg::buf(b.buffer, static_cast<std::uint64_t>(b.offset),
                                 static_cast<std::uint64_t>(std::max<std::int64_t>(b.numel(), 1))),
                        Arg::buf(out.buffer, 0, static_cast<std::uint64_t>(out.numel())),
                        Arg::u32(static_cast<std::uint32_t>(m)),
                        Arg::u32(static_cast<std::uint32_t>(n)),
                        Arg::u32(static_cast<std::uint32_t>(k)),
                        Arg::u32(a_stride),
                        Arg::u32(b_stride)};
    const kernel::Grid grid{static_cast<std::uint32_t>((n + kTile - 1) / kTile),
                            static_cast<std::uint32_t>((m + kTile - 1) / kTile),
                            static_cast<std::uint32_t>(batches)};
    dev.launch(**compiled, grid, args);
  };
  std::vector<tune::Candidate> candidates{{"ember_tiled", tiled}};
  const std::string forced = forced_candidate();
#ifdef EMBER_HAVE_CUDA
  // cuBLASLt is opened only when it may run: forced by name, tuned (opt-in, tune.hpp), or
  // the only way to run a product beyond the tiled kernel's grid.
  const bool wanted =
      forced == "cublaslt" || (forced.empty() && (tune::Tuner::vendor_enabled() || !tiled_fits));
  if (wanted && dev.properties().kind == "cuda") {
    // k == 0 (an empty sum: zeros) stays with the tiled kernel; cuBLASLt is not asked.
    std::string why;
    if (k > 0 && cuda::blaslt::available(&why)) {
      candidates.push_back({"cublaslt", [&] {
                              cuda::blaslt::matmul(
                                  dev, elem_of(a.dtype, "matmul"), batches, m, n, k,
                                  {a.buffer.get(), static_cast<std::uint64_t>(a.offset), a_stride},
                                  {b.buffer.get(), static_cast<std::uint64_t>(b.offset), b_stride},
                                  {out.buffer.get(), 0, m * n});
                            }});
    } else if (k > 0 && forced == "cublaslt") {
      ember::detail::fail<UnsupportedError>("matmul", "EMBER_MATMUL_CANDIDATE=cublaslt, but ", why);
    }
  }
#endif
  if (!forced.empty()) {
    for (const tune::Candidate& c : candidates)
      if (c.name == forced) {
        c.run();
        return out;
      }
    candidates.front().run();  // not offered here (Vulkan; k == 0): the tiled kernel
    return out;
  }
  if (!tiled_fits && candidates.size() > 1) candidates.erase(candidates.begin());
  if (candidates.size() == 1) {
    candidates.front().run();
    return out;
  }
  const tune::Key key =
      tune::make_key("matmul",
                     {static_cast<std::uint64_t>(batches), static_cast<std::uint64_t>(m),
                      static_cast<std::uint64_t>(n), static_cast<std::uint64_t>(k)},
                     std::string(dtype_name(a.dtype)), dev);
  candidates[tune::Tuner::global().choose(key, candidates, dev)].run();
  return out;
}

}  // namespace ember::gpu
