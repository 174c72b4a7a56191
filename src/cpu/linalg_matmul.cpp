// CPU backend: matmul (f32 through oneDNN's sgemm when Ember is built with oneDNN, f64 and
// the fallback through OpenBLAS, int with an own kernel).
//
// Layout handling: each operand's last two dims are passed to BLAS as a row-major matrix
// (stride 1 along columns) or, when the view is a transposed matrix (stride 1 along rows),
// as the same buffer with the trans flag set; only other layouts (expanded or sliced with
// a step) are copied. Batch dims may have any strides, including 0 for broadcast dims.
//
// f32 GEMM: for large products (kDnnlMinGemm) oneDNN's `dnnl_sgemm` kernels (row-major
// BLAS-style API, AVX-512 JIT) in blocks on Ember's OpenMP threads (see dnnl_gemm), unless
// EMBER_MATMUL_IMPL=blas. Per core they are faster than Debian's OpenBLAS 0.3.21 there on the
// AVX-512 VM (docs/benchmarks.md). Smaller products and f64 (no oneDNN GEMM) use OpenBLAS.
//
// Threads: BLAS runs with Cpu::num_threads() threads for large matrices; when there are
// several small matrices, each thread computes whole matrices with single-threaded BLAS.
// When the rhs is shared by every batch and the lhs batches are stacked rows, the whole
// batch is one GEMM of (batch * m) rows.
#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "blas.hpp"

#ifdef EMBER_HAVE_DNNL
#include <oneapi/dnnl/dnnl.h>
#endif

#include "ember/cpu/ops_core.hpp"
#include "ember/cpu/ops_linalg.hpp"
#include "ember/ir/linalg.hpp"
#include "kernel.hpp"

namespace ember::cpu {

namespace {

using i64 = std::int64_t;

/// Products with m * n * k at most this are "small": batched, they run one matrix per thread.
constexpr double kSmallGemm = 128.0 * 128.0 * 128.0;

/// f32 products with m * n * k at least this go to oneDNN's sgemm (when built with it):
/// single-threaded, it was slower than OpenBLAS at 256^3 (0.63 vs 0.39 ms), about even at
/// 384^3-512^3 and faster from 1024^3 on (docs/benchmarks.md).
constexpr double kDnnlMinGemm = 512.0 * 512.0 * 512.0;

/// Thread count for the next GEMMs: OpenBLAS's pool size (f64, fallback) and the OpenMP
/// thread count oneDNN's sgemm uses (it reads omp_get_max_threads() of the calling thread).
thread_local int t_gemm_threads = 1;

void set_blas_threads(int n) {
  static std::atomic<int> current{-1};
  t_gemm_threads = n;
  if (current.exchange(n) != n) openblas_set_num_threads(n);
}

/// oneDNN's sgemm for f32 unless EMBER_MATMUL_IMPL=blas (to compare or bisect).
bool use_dnnl_sgemm() {
#ifdef EMBER_HAVE_DNNL
  static const bool on = [] {
    const char* v = std::getenv("EMBER_MATMUL_IMPL");
    return !(v && std::string(v) == "blas");
  }();
  return on;
#else
  return false;
#endif
}

#ifdef EMBER_HAVE_DNNL
/// One single-threaded dnnl_sgemm (row-major): C = op(A) op(B).
bool dnnl_gemm1(bool ta, bool tb, i64 m, i64 n, i64 k, const float* a, i64 lda, const float* b,
                i64 ldb, float* c, i64 ldc) {
  const int prev = omp_get_max_threads();
  if (prev != 1) omp_set_num_threads(1);
  const dnnl_status_t st =
      dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c, ldc);
  if (prev != 1) omp_set_num_threads(prev);
  return st == dnnl_success;
}

/// f32 C = op(A) op(B) through oneDNN's sgemm kernels; false when oneDNN rejects the call.
///
/// Threads: dnnl_sgemm does not thread itself here; the longer of m and n is cut into about 2
/// blocks per thread, handed out dynamically on Ember's OpenMP threads, each a single-threaded
/// dnnl_sgemm (each block packs the other operand again: a few % of the work at the sizes
/// that come here). On the 2-core VM with ~15 compilers running, this was about 1.5x faster
/// (median) than dnnl_sgemm's own threading at 1024 and 2048 (a thread descheduled by the
/// host no longer holds up a fixed half of the work).
bool dnnl_gemm(bool ta, bool tb, i64 m, i64 n, i64 k, const float* a, i64 lda, const float* b,
               i64 ldb, float* c, i64 ldc) {
  const int nt = omp_in_parallel() ? 1 : t_gemm_threads;
  const bool by_rows = m >= n;
  const i64 len = by_rows ? m : n;
  // Block sizes are multiples of 16 so that equal blocks stay equal (1024 rows: 4 x 256; with
  // multiples of the kernel's 48-row unroll it was 3 x 288 + 160, 12 % imbalance at 2 threads).
  const i64 align = 16;
  if (nt <= 1 || len < 4 * align) return dnnl_gemm1(ta, tb, m, n, k, a, lda, b, ldb, c, ldc);
  const i64 want = std::min<i64>(2 * nt, len / align);
  const i64 per = (len + want - 1) / want;
  const i64 step = (per + align - 1) / align * align;
  const i64 chunks = (len + step - 1) / step;
  const int team = static_cast<int>(std::min<i64>(nt, chunks));
  std::atomic<bool> ok{true};
#pragma omp parallel for num_threads(team) schedule(dynamic, 1)
  for (i64 ci = 0; ci < chunks; ++ci) {
    const i64 lo = ci * step, w = std::min(step, len - lo);
    bool r;
    if (by_rows) {  // rows lo.. of op(A) and C
      r = dnnl_gemm1(ta, tb, w, n, k, ta ? a + lo : a + lo * lda, lda, b, ldb, c + lo * ldc, ldc);
    } else {  // columns lo.. of op(B) and C
      r = dnnl_gemm1(ta, tb, m, w, k, a, lda, tb ? b + lo * ldb : b + lo, ldb, c + lo, ldc);
    }
    if (!r) ok = false;
  }
  return ok;
}
#endif

/// How a [rows, cols] matrix with strides (rs, cs) is handed to BLAS (row-major API).
struct MatLayout {
  bool trans = false;
  i64 ld = 1;
};

bool blas_layout(i64 rows, i64 cols, i64 rs, i64 cs, MatLayout& out) {
  if ((cs == 1 || cols <= 1) && (rows <= 1 || rs >= std::max<i64>(1, cols))) {
    out = {false, rows <= 1 ? std::max<i64>(1, cols) : rs};
    return out.ld <= INT_MAX;
  }
  if ((rs == 1 || rows <= 1) && (cols <= 1 || cs >= std::max<i64>(1, rows))) {
    out = {true, cols <= 1 ? std::max<i64>(1, rows) : cs};
    return out.ld <= INT_MAX;
  }
  return false;
}

/// Batch geometry shared by the float and int paths.
struct Batch {
  Shape out_shape;
  i64 m = 0, k = 0, n = 0, count = 1;
  std::vector<i64> loff, roff;  ///< element offsets of each batch's matrix
};

/// Offsets of every batch matrix of `t` (rank r, batch dims broadcast to `bshape`).
std::vector<i64> batch_offsets(const CpuTensor& t, const Shape& bshape) {
  const std::size_t nb = bshape.rank();
  std::vector<i64> strides(nb);
  for (std::size_t i = 0; i < nb; ++i) strides[i] = t.shape[i] == 1 ? 0 : t.strides[i];
  std::vector<i64> offs;
  offs.reserve(static_cast<std::size_t>(std::max<i64>(bshape.numel(), 1)));
  if (nb == 0) {
    offs.push_back(t.offset);
    return offs;
  }
  for_each_offset(bshape, strides, t.offset, [&](i64 o) { offs.push_back(o); });
  return offs;
}

Batch make_batch(const CpuTensor& a, const CpuTensor& b) {
  Batch g;
  const std::size_t r = a.shape.rank();
  // The output shape (and every check) is the description's (ember/ir/linalg.hpp).
  g.out_shape = ir::Matmul{}.infer({a.shape, a.dtype}, {b.shape, b.dtype}).shape;
  const Shape bshape(std::vector<i64>(g.out_shape.dims.begin(), g.out_shape.dims.end() - 2));
  g.m = a.shape[r - 2];
  g.k = a.shape[r - 1];
  g.n = b.shape[r - 1];
  g.count = bshape.numel();
  if (g.count > 0) {
    g.loff = batch_offsets(a, bshape);
    g.roff = batch_offsets(b, bshape);
  }
  return g;
}

template <class T>
void gemm(bool ta, bool tb, i64 m, i64 n, i64 k, const T* a, i64 lda, const T* b, i64 ldb, T* c,
          i64 ldc) {
  const auto TA = ta ? CblasTrans : CblasNoTrans, TB = tb ? CblasTrans : CblasNoTrans;
  if constexpr (std::is_same_v<T, float>) {
#ifdef EMBER_HAVE_DNNL
    if (use_dnnl_sgemm() && static_cast<double>(m) * n * k >= kDnnlMinGemm &&
        dnnl_gemm(ta, tb, m, n, k, a, lda, b, ldb, c, ldc))
      return;
#endif
    cblas_sgemm(CblasRowMajor, TA, TB, static_cast<int>(m), static_cast<int>(n),
                static_cast<int>(k), 1.0f, a, static_cast<int>(lda), b, static_cast<int>(ldb), 0.0f,
                c, static_cast<int>(ldc));
  } else {
    cblas_dgemm(CblasRowMajor, TA, TB, static_cast<int>(m), static_cast<int>(n),
                static_cast<int>(k), 1.0, a, static_cast<int>(lda), b, static_cast<int>(ldb), 0.0,
                c, static_cast<int>(ldc));
  }
}

/// Layout of the last two dims of `t`, copying `t` to contiguous when BLAS cannot read it.
MatLayout prepare(CpuTensor& t) {
  const std::size_t r = t.shape.rank();
  MatLayout L;
  if (!blas_layout(t.shape[r - 2], t.shape[r - 1], t.strides[r - 2], t.strides[r - 1], L)) {
    t = contiguous(t);
    blas_layout(t.shape[r - 2], t.shape[r - 1], t.strides[r - 2], t.strides[r - 1], L);
  }
  return L;
}

template <class T>
CpuTensor blas_matmul(CpuTensor a, CpuTensor b) {
  const MatLayout la = prepare(a), lb = prepare(b);
  const Batch g = make_batch(a, b);
  CpuTensor out = alloc(g.out_shape, a.dtype);
  if (out.numel() == 0) return out;
  T* c = out.data<T>();
  if (g.k == 0) {
    std::fill(c, c + out.numel(), T(0));
    return out;
  }
  const T* pa = reinterpret_cast<const T*>(a.storage->data());
  const T* pb = reinterpret_cast<const T*>(b.storage->data());
  const i64 mn = g.m * g.n;

  // rhs shared by every batch, lhs batches stacked as rows: one tall GEMM.
  if (g.count > 1 && !la.trans) {
    bool fold = g.count * g.m <= INT_MAX;
    for (i64 i = 1; fold && i < g.count; ++i) {
      fold = g.roff[i] == g.roff[0] && g.loff[i] == g.loff[0] + i * g.m * la.ld;
    }
    if (fold) {
      set_blas_threads(threads());
      gemm<T>(false, lb.trans, g.count * g.m, g.n, g.k, pa + g.loff[0], la.ld, pb + g.roff[0],
              lb.ld, c, g.n);
      return out;
    }
  }

  const int nt = threads();
  const bool small = static_cast<double>(g.m) * g.n * g.k <= kSmallGemm;
  if (g.count > 1 && nt > 1 && small && !omp_in_parallel()) {
    set_blas_threads(1);
    const int chunks = static_cast<int>(std::min<i64>(nt, g.count));
    // dynamic: on a loaded machine a descheduled thread does not hold up the others
    parallel_tasks(g.count, chunks, Schedule::Dynamic, [&](i64 i) {
      gemm<T>(la.trans, lb.trans, g.m, g.n, g.k, pa + g.loff[i], la.ld, pb + g.roff[i], lb.ld,
              c + i * mn, g.n);
    });
    return out;
  }
  set_blas_threads(omp_in_parallel() ? 1 : nt);
  for (i64 i = 0; i < g.count; ++i) {
    gemm<T>(la.trans, lb.trans, g.m, g.n, g.k, pa + g.loff[i], la.ld, pb + g.roff[i], lb.ld,
            c + i * mn, g.n);
  }
  return out;
}

/// Integer matmul: rows of the output in parallel, 64-bit wrapping accumulation
/// (the same result modulo 2^bits as torch's accumulation in the element type).
template <class T>
CpuTensor int_matmul_impl(const CpuTensor& a, const CpuTensor& b) {
  const Batch g = make_batch(a, b);
  CpuTensor out = alloc(g.out_shape, a.dtype);
  if (out.numel() == 0) return out;
  T* c = out.data<T>();
  const std::size_t r = a.shape.rank();
  const i64 ars = a.shape[r - 2] == 1 ? 0 : a.strides[r - 2], acs = a.strides[r - 1];
  const i64 brs = b.strides[r - 2], bcs = b.strides[r - 1];
  const T* pa = reinterpret_cast<const T*>(a.storage->data());
  const T* pb = reinterpret_cast<const T*>(b.storage->data());
  const i64 rows = g.count * g.m, n = g.n, k = g.k;
  const i64 grain = std::max<i64>(1, kParallelGrain / std::max<i64>(1, n * std::max<i64>(k, 1)));
  parallel_for(rows, grain, [&](i64 begin, i64 end) {
    std::vector<std::uint64_t> acc(static_cast<std::size_t>(n));
    for (i64 row = begin; row < end; ++row) {
      const i64 bi = row / g.m, i = row % g.m;
      std::fill(acc.begin(), acc.end(), 0);
      const T* arow = pa + g.loff[bi] + i * ars;
      const T* bm = pb + g.roff[bi];
      for (i64 p = 0; p < k; ++p) {
        const auto av = static_cast<std::uint64_t>(static_cast<i64>(arow[p * acs]));
        if (av == 0) continue;
        const T* brow = bm + p * brs;
        if (bcs == 1) {
          for (i64 j = 0; j < n; ++j)
            acc[j] += av * static_cast<std::uint64_t>(static_cast<i64>(brow[j]));
        } else {
          for (i64 j = 0; j < n; ++j)
            acc[j] += av * static_cast<std::uint64_t>(static_cast<i64>(brow[j * bcs]));
        }
      }
      T* crow = c + row * n;
      for (i64 j = 0; j < n; ++j) crow[j] = static_cast<T>(static_cast<i64>(acc[j]));
    }
  });
  return out;
}

}  // namespace

CpuTensor LinalgOps::float_matmul(const CpuTensor& lhs, const CpuTensor& rhs) {
  switch (lhs.dtype) {
    case DType::F32:
      return blas_matmul<float>(lhs, rhs);
    case DType::F64:
      return blas_matmul<double>(lhs, rhs);
    default: {  // f16 / bf16 through f32
      CpuTensor out =
          blas_matmul<float>(CoreOps::cast(lhs, DType::F32), CoreOps::cast(rhs, DType::F32));
      return CoreOps::cast(std::move(out), lhs.dtype);
    }
  }
}

CpuTensor LinalgOps::int_matmul(const CpuTensor& lhs, const CpuTensor& rhs) {
  return visit_dtype(lhs.dtype, [&]<class T>() -> CpuTensor {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      return int_matmul_impl<T>(lhs, rhs);
    } else {
      throw DTypeError("[int_matmul] not an int dtype");
    }
  });
}

}  // namespace ember::cpu
