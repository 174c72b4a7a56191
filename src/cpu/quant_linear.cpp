// CPU backend: the int8 linear (ember/cpu/ops_quant.hpp): u8 quantization of the input (per
// row, dynamic; or with the given static scale and zero point), u8 x s8 products summed
// exactly in i32 with AVX512-VNNI (vpdpbusd), and the zero-point compensation and scales in
// the epilogue.
//
// Packed weight (int_quantized_linear_pack): the output columns are padded to a multiple of
// 64 (kPanel) and the inputs to a multiple of 64 (one AMX tile row); panel p holds columns [64p,
// 64p + 64) as Kq = Kp / 4 steps of 256 bytes, step kq being, for each of the 64 columns, its 4
// weights k = 4kq .. 4kq + 3. One vpdpbusd multiplies 4 u8 inputs (broadcast) with 16 columns x 4
// weights and adds the 16 sums of 4 products to 16 i32 lanes (no saturation). After the
// panels come the column sums of W as i32 [Np]: sum_k qx[k] qw[k] - zx * colsum gives
// sum_k (qx[k] - zx) qw[k] exactly.
//
// With AMX-INT8 (Sapphire Rapids and later; Linux grants the tile state on request), the
// same layout feeds tdpbusd: a B tile is 16 kq steps of 16 columns (rows 256 bytes apart), an
// A tile 16 rows of 64 inputs; 2 x 2 tiles of 16 x 16 sums per (32 rows, 32 columns).
// Inputs of fewer than 32 rows, and EMBER_CPU_AMX=0, take the VNNI kernel (tests run both).
//
// Other targets (WebAssembly, ARM) build only the portable loop: EMBER_QUANT_X86 is 0 and the
// x86 kernels below are replaced by stand-ins that are never called (have_amx and have_vnni
// are false there).
#if defined(__x86_64__) || defined(__i386__)
#define EMBER_QUANT_X86 1
#else
#define EMBER_QUANT_X86 0
#endif

#include <cstdlib>
#include <string>
#if EMBER_QUANT_X86
#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>
// GCC 12 warns that the intrinsics' own _mm512_undefined_*() operands are uninitialised
// (GCC bug 105593, fixed in GCC 13).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "ember/cpu/ops_core.hpp"
#include "ember/cpu/ops_quant.hpp"
#include "kernel.hpp"

namespace ember::cpu {

namespace {

constexpr std::int64_t kPanel = 64;  // output columns per panel (4 zmm of 16 i32)
constexpr std::int64_t kRows = 64;   // input rows per task (the panel stays in L2)
constexpr std::int64_t kSteps = 32;  // kq steps per K chunk: 8 KiB of panel, 8 KiB of rows (L1)

struct Dims {
  std::int64_t n, k, np, kp, kq;
  explicit Dims(std::int64_t out, std::int64_t in)
      : n(out),
        k(in),
        np((out + kPanel - 1) / kPanel * kPanel),
        kp((in + 63) / 64 * 64),
        kq((in + 63) / 64 * 16) {}
  std::int64_t panel_bytes() const { return kq * kPanel * 4; }
  std::int64_t packed_bytes() const { return np * kp + np * 4; }
};

#if EMBER_QUANT_X86
/// AMX-INT8 usable: the CPU has it (CPUID 7.0 EDX bits 24, 25), the ISA cap allows AVX-512,
/// EMBER_CPU_AMX is not 0, and Linux granted this process the tile data state
/// (arch_prctl ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA).
bool have_amx() {
  static const bool v = [] {
    if (cpu_isa() != Isa::Avx512) return false;
    if (const char* e = std::getenv("EMBER_CPU_AMX"); e && std::string(e) == "0") return false;
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
    if (!(d & bit_AMX_TILE) || !(d & bit_AMX_INT8)) return false;
    constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
    return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
  }();
  return v;
}

bool have_vnni() {
  static const bool v = [] {
    __builtin_cpu_init();
    return cpu_isa() == Isa::Avx512 && __builtin_cpu_supports("avx512vnni");
  }();
  return v;
}
#else
bool have_amx() {
  return false;
}
bool have_vnni() {
  return false;
}
#endif

/// Quantizes one row of `k` floats to u8 (affine [0, 255]) into `q` (padded with zeros to
/// `kp`) with `fixed`'s scale and zero point, or (null) the row's own by the MinMax rule;
/// returns (scale, zero point).
std::pair<float, std::int32_t> quantize_row_scalar(const float* x, std::int64_t k, std::int64_t kp,
                                                   std::uint8_t* q, const ActivationQuant* fixed) {
  float s, z;
  if (fixed) {
    s = fixed->scale;
    z = static_cast<float>(fixed->zero_point);
  } else {
    float lo = 0.0f, hi = 0.0f;
    for (std::int64_t i = 0; i < k; ++i) {
      lo = std::min(lo, x[i]);
      hi = std::max(hi, x[i]);
    }
    s = std::max((hi - lo) / 255.0f, std::numeric_limits<float>::epsilon());
    z = std::min(std::max(-std::nearbyint(lo / s), 0.0f), 255.0f);
  }
  const float inv = 1.0f / s;
  for (std::int64_t i = 0; i < k; ++i) {
    const float r = std::min(std::max(std::nearbyint(x[i] * inv) + z, 0.0f), 255.0f);
    q[i] = static_cast<std::uint8_t>(r);
  }
  for (std::int64_t i = k; i < kp; ++i) q[i] = 0;
  return {s, static_cast<std::int32_t>(z)};
}

#if EMBER_QUANT_X86
#define EMBER_VNNI_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni")))

/// quantize_row_scalar with AVX-512 (the same values: cvtps rounds half to even).
EMBER_VNNI_TARGET std::pair<float, std::int32_t> quantize_row_avx512(const float* x, std::int64_t k,
                                                                     std::int64_t kp,
                                                                     std::uint8_t* q,
                                                                     const ActivationQuant* fixed) {
  std::int64_t i = 0;
  float s, z;
  if (fixed) {
    s = fixed->scale;
    z = static_cast<float>(fixed->zero_point);
  } else {
    __m512 vlo = _mm512_setzero_ps(), vhi = _mm512_setzero_ps();
    for (; i + 16 <= k; i += 16) {
      const __m512 v = _mm512_loadu_ps(x + i);
      vlo = _mm512_min_ps(vlo, v);
      vhi = _mm512_max_ps(vhi, v);
    }
    if (i < k) {
      const __mmask16 m = static_cast<__mmask16>((1u << (k - i)) - 1);
      const __m512 v = _mm512_maskz_loadu_ps(m, x + i);  // zeros do not move lo <= 0 <= hi
      vlo = _mm512_min_ps(vlo, v);
      vhi = _mm512_max_ps(vhi, v);
    }
    const float lo = _mm512_reduce_min_ps(vlo), hi = _mm512_reduce_max_ps(vhi);
    s = std::max((hi - lo) / 255.0f, std::numeric_limits<float>::epsilon());
    z = std::min(std::max(-std::nearbyint(lo / s), 0.0f), 255.0f);
  }
  const __m512 inv = _mm512_set1_ps(1.0f / s);
  const __m512i vz = _mm512_set1_epi32(static_cast<int>(z));
  const __m512i zero = _mm512_setzero_si512(), top = _mm512_set1_epi32(255);
  for (i = 0; i < k; i += 16) {
    const std::int64_t left = k - i;
    const __mmask16 m =
        left >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << left) - 1);
    const __m512 v = _mm512_maskz_loadu_ps(m, x + i);
    __m512i r = _mm512_add_epi32(_mm512_cvtps_epi32(_mm512_mul_ps(v, inv)), vz);
    r = _mm512_min_epi32(_mm512_max_epi32(r, zero), top);
    _mm_mask_storeu_epi8(q + i, m, _mm512_cvtepi32_epi8(r));
  }
  for (i = k; i < kp; ++i) q[i] = 0;
  return {s, static_cast<std::int32_t>(z)};
}

/// acc[r][0..64) (+)= sum over `steps` kq steps of a[r] (u8) x panel (s8), for MR rows; the
/// sums start from zero when `first`, else from acc.
template <int MR>
EMBER_VNNI_TARGET void panel_kernel_vnni(const std::uint8_t* a, std::int64_t lda,
                                         const std::int8_t* panel, std::int64_t steps, bool first,
                                         std::int32_t* acc) {
  __m512i c[MR][4];
  for (int r = 0; r < MR; ++r)
    for (int j = 0; j < 4; ++j)
      c[r][j] = first ? _mm512_setzero_si512() : _mm512_loadu_si512(acc + r * kPanel + 16 * j);
  for (std::int64_t s = 0; s < steps; ++s) {
    const std::int8_t* b = panel + s * 256;
    const __m512i b0 = _mm512_loadu_si512(b);
    const __m512i b1 = _mm512_loadu_si512(b + 64);
    const __m512i b2 = _mm512_loadu_si512(b + 128);
    const __m512i b3 = _mm512_loadu_si512(b + 192);
    for (int r = 0; r < MR; ++r) {
      std::int32_t a4;
      std::memcpy(&a4, a + r * lda + s * 4, 4);
      const __m512i va = _mm512_set1_epi32(a4);
      c[r][0] = _mm512_dpbusd_epi32(c[r][0], va, b0);
      c[r][1] = _mm512_dpbusd_epi32(c[r][1], va, b1);
      c[r][2] = _mm512_dpbusd_epi32(c[r][2], va, b2);
      c[r][3] = _mm512_dpbusd_epi32(c[r][3], va, b3);
    }
  }
  for (int r = 0; r < MR; ++r)
    for (int j = 0; j < 4; ++j) _mm512_storeu_si512(acc + r * kPanel + 16 * j, c[r][j]);
}
#endif  // EMBER_QUANT_X86

/// The same sums without SIMD (any CPU).
void panel_kernel_scalar(const std::uint8_t* a, std::int64_t lda, const std::int8_t* panel,
                         std::int64_t steps, bool first, int mr, std::int32_t* acc) {
  for (int r = 0; r < mr; ++r) {
    std::int32_t* c = acc + r * kPanel;
    if (first) std::fill(c, c + kPanel, 0);
    const std::uint8_t* ar = a + r * lda;
    for (std::int64_t s = 0; s < steps; ++s) {
      const std::int8_t* b = panel + s * 256;
      for (std::int64_t j = 0; j < kPanel; ++j)
        for (int t = 0; t < 4; ++t)
          c[j] +=
              static_cast<std::int32_t>(ar[s * 4 + t]) * static_cast<std::int32_t>(b[j * 4 + t]);
    }
  }
}

constexpr int kMr = 6;  // rows per register block: 6 x 4 accumulators + 4 weights + 1 input

#if EMBER_QUANT_X86
void rows_vnni(const std::uint8_t* a, std::int64_t lda, const std::int8_t* panel,
               std::int64_t steps, bool first, int mr, std::int32_t* acc) {
  switch (mr) {
    case 6:
      return panel_kernel_vnni<6>(a, lda, panel, steps, first, acc);
    case 5:
      return panel_kernel_vnni<5>(a, lda, panel, steps, first, acc);
    case 4:
      return panel_kernel_vnni<4>(a, lda, panel, steps, first, acc);
    case 3:
      return panel_kernel_vnni<3>(a, lda, panel, steps, first, acc);
    case 2:
      return panel_kernel_vnni<2>(a, lda, panel, steps, first, acc);
    default:
      return panel_kernel_vnni<1>(a, lda, panel, steps, first, acc);
  }
}

/// The tile configuration (palette 1): tiles 0-3 sums (16 x 16 i32), 4-5 rows of x (16 x 64
/// u8), 6-7 weights (16 kq steps x 16 columns x 4).
struct alignas(64) TileConfig {
  std::uint8_t palette = 1, start_row = 0, reserved[14] = {};
  std::uint16_t colsb[16] = {64, 64, 64, 64, 64, 64, 64, 64};
  std::uint8_t rows[16] = {16, 16, 16, 16, 16, 16, 16, 16};
};

__attribute__((target("amx-tile,amx-int8"))) inline void amx_begin() {
  static const TileConfig cfg;
  __asm__ volatile("ldtilecfg %0" ::"m"(cfg));
}
__attribute__((target("amx-tile,amx-int8"))) inline void amx_end() {
  __asm__ volatile("tilerelease" ::);
}

/// acc [32 rows x 64 columns] i32 = a [32 rows, kp] (u8, row stride lda) x the panel, by
/// column halves of 32 (2 x 2 tiles each).
__attribute__((target("amx-tile,amx-int8"))) void panel_kernel_amx(const std::uint8_t* a,
                                                                   std::int64_t lda,
                                                                   const std::int8_t* panel,
                                                                   std::int64_t kq,
                                                                   std::int32_t* acc) {
  constexpr long kAccStride = kPanel * 4, kPanelStride = 256;
  const long sa = static_cast<long>(lda);
  for (int h = 0; h < 2; ++h) {
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
    for (std::int64_t s = 0; s < kq; s += 16) {
      _tile_loadd(4, a + s * 4, sa);
      _tile_loadd(5, a + 16 * lda + s * 4, sa);
      _tile_loadd(6, panel + s * 256 + (2 * h) * 64, kPanelStride);
      _tile_loadd(7, panel + s * 256 + (2 * h + 1) * 64, kPanelStride);
      _tile_dpbusd(0, 4, 6);
      _tile_dpbusd(1, 4, 7);
      _tile_dpbusd(2, 5, 6);
      _tile_dpbusd(3, 5, 7);
    }
    std::int32_t* c = acc + 32 * h;
    _tile_stored(0, c, kAccStride);
    _tile_stored(1, c + 16, kAccStride);
    _tile_stored(2, c + 16 * kPanel, kAccStride);
    _tile_stored(3, c + 16 * kPanel + 16, kAccStride);
  }
}

#else
// Stand-ins of the x86 kernels (never called: have_amx() and have_vnni() are false).
std::pair<float, std::int32_t> quantize_row_avx512(const float* x, std::int64_t k, std::int64_t kp,
                                                   std::uint8_t* q, const ActivationQuant* fixed) {
  return quantize_row_scalar(x, k, kp, q, fixed);
}
void rows_vnni(const std::uint8_t*, std::int64_t, const std::int8_t*, std::int64_t, bool, int,
               std::int32_t*) {}
void amx_begin() {}
void amx_end() {}
void panel_kernel_amx(const std::uint8_t*, std::int64_t, const std::int8_t*, std::int64_t,
                      std::int32_t*) {}
#endif  // EMBER_QUANT_X86

}  // namespace

CpuTensor QuantOps::int_quantized_linear_pack(const CpuTensor& weight) {
  const CpuTensor w = contiguous(weight);
  const Dims d(w.shape[0], w.shape[1]);
  CpuTensor out = alloc(Shape{d.packed_bytes()}, DType::I8);
  std::int8_t* p = out.data<std::int8_t>();
  std::memset(p, 0, static_cast<std::size_t>(d.packed_bytes()));
  const std::int8_t* src = w.data<std::int8_t>();
  auto* colsum = reinterpret_cast<std::int32_t*>(p + d.np * d.kp);
  parallel_for(d.n, 64, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t o = b; o < e; ++o) {
      const std::int64_t panel = o / kPanel, j = o % kPanel;
      std::int8_t* dst = p + panel * d.panel_bytes() + j * 4;
      std::int32_t sum = 0;
      for (std::int64_t k = 0; k < d.k; ++k) {
        const std::int8_t v = src[o * d.k + k];
        dst[(k / 4) * 256 + (k % 4)] = v;
        sum += v;
      }
      colsum[o] = sum;
    }
  });
  for (std::int64_t o = d.n; o < d.np; ++o) colsum[o] = 0;
  return out;
}

CpuTensor QuantOps::float_quantized_linear(const CpuTensor& x, const CpuTensor& packed,
                                           const CpuTensor& weight_scales,
                                           const std::optional<CpuTensor>& bias,
                                           const QuantScheme& /*scheme*/, const Shape& weight,
                                           const std::optional<ActivationQuant>& input) {
  const std::int64_t out = weight[0], in = weight[1];
  const Dims d(out, in);
  const CpuTensor xc = contiguous(x);
  const std::int64_t m = in == 0 ? 0 : xc.numel() / in;
  Shape ys = x.shape;
  ys[ys.rank() - 1] = out;
  CpuTensor y = alloc(ys, DType::F32);
  if (m == 0 || out == 0) return y;
  // AMX computes rows 32 at a time: below 32 rows the VNNI kernel is faster (measured).
  const bool amx = m >= 32 && have_amx();
  const bool vnni = amx || have_vnni();

  // Per-tensor or per-channel weight scales, as `out` floats; the bias as `out` floats.
  const CpuTensor wsc = contiguous(weight_scales);
  std::vector<float> sw(static_cast<std::size_t>(out));
  for (std::int64_t o = 0; o < out; ++o)
    sw[static_cast<std::size_t>(o)] = wsc.data<float>()[wsc.numel() == 1 ? 0 : o];
  std::vector<float> bv(static_cast<std::size_t>(out), 0.0f);
  if (bias) {
    const CpuTensor bc = contiguous(*bias);
    std::memcpy(bv.data(), bc.data<float>(), bv.size() * sizeof(float));
  }

  // 1. The rows of x to u8, with their scale and zero point (each row's own, or the input's).
  const ActivationQuant* fixed = input ? &*input : nullptr;
  // AMX reads rows 32 at a time: the rows past m are zeros, their sums unused.
  const std::int64_t mp = amx ? (m + 31) / 32 * 32 : m;
  // Rows lda = kp + 64 bytes apart: a multiple of 4 KiB would put a tile's 16 rows in one L1
  // set.
  const std::int64_t lda = d.kp + 64;
  std::vector<std::uint8_t> qx(static_cast<std::size_t>(mp * lda), 0);
  std::vector<float> sx(static_cast<std::size_t>(m));
  std::vector<std::int32_t> zx(static_cast<std::size_t>(m));
  const float* xv = xc.data<float>();
  parallel_for(m, std::max<std::int64_t>(1, kParallelGrain / std::max<std::int64_t>(1, in)),
               [&](std::int64_t b, std::int64_t e) {
                 for (std::int64_t r = b; r < e; ++r) {
                   std::uint8_t* q = qx.data() + r * lda;
                   const auto [s, z] = vnni ? quantize_row_avx512(xv + r * in, in, d.kp, q, fixed)
                                            : quantize_row_scalar(xv + r * in, in, d.kp, q, fixed);
                   sx[static_cast<std::size_t>(r)] = s;
                   zx[static_cast<std::size_t>(r)] = z;
                 }
               });

  // 2. Tasks (panel, block of kRows rows), panel-major so a thread's panels stay in L2.
  const std::int8_t* pw = packed.data<std::int8_t>();
  const auto* colsum = reinterpret_cast<const std::int32_t*>(pw + d.np * d.kp);
  const std::int64_t panels = d.np / kPanel, mblocks = (m + kRows - 1) / kRows;
  const std::int64_t tasks = panels * mblocks;
  const double work = static_cast<double>(m) * static_cast<double>(out) * static_cast<double>(in);
  [[maybe_unused]] const int nt =
      work < 1e6 ? 1 : static_cast<int>(std::min<std::int64_t>(threads(), tasks));
  float* yv = y.data<float>();
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1) if (nt > 1)
  for (std::int64_t t = 0; t < tasks; ++t) {
    const std::int64_t p = t / mblocks, mb = t % mblocks;
    const std::int8_t* panel = pw + p * d.panel_bytes();
    alignas(64) std::int32_t acc[kRows * kPanel];
    const std::int64_t r_begin = mb * kRows, r_end = std::min(m, r_begin + kRows);
    const std::int64_t cols = std::min(kPanel, out - p * kPanel);
    if (amx) {
      amx_begin();
      for (std::int64_t r0 = r_begin; r0 < r_end; r0 += 32)
        panel_kernel_amx(qx.data() + r0 * lda, lda, panel, d.kq, acc + (r0 - r_begin) * kPanel);
      amx_end();
    }
    // K in chunks whose panel slice and row slices stay in L1 while every row block runs.
    for (std::int64_t s0 = 0; !amx && s0 < d.kq; s0 += kSteps) {
      const std::int64_t steps = std::min(kSteps, d.kq - s0);
      for (std::int64_t r0 = r_begin; r0 < r_end; r0 += kMr) {
        const int mr = static_cast<int>(std::min<std::int64_t>(kMr, r_end - r0));
        const std::uint8_t* a = qx.data() + r0 * lda + s0 * 4;
        std::int32_t* c = acc + (r0 - r_begin) * kPanel;
        if (vnni) {
          rows_vnni(a, lda, panel + s0 * 256, steps, s0 == 0, mr, c);
        } else {
          panel_kernel_scalar(a, lda, panel + s0 * 256, steps, s0 == 0, mr, c);
        }
      }
    }
    for (std::int64_t r = r_begin; r < r_end; ++r) {
      const auto row = static_cast<std::size_t>(r);
      const float s = sx[row];
      const std::int32_t z = zx[row];
      float* yr = yv + r * out + p * kPanel;
      const std::int32_t* c = acc + (r - r_begin) * kPanel;
      for (std::int64_t j = 0; j < cols; ++j) {
        const std::int64_t o = p * kPanel + j;
        const std::int32_t exact = c[j] - z * colsum[o];
        yr[j] = static_cast<float>(exact) * (s * sw[static_cast<std::size_t>(o)]) +
                bv[static_cast<std::size_t>(o)];
      }
    }
  }
  return y;
}

}  // namespace ember::cpu
