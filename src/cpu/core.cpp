// CPU backend: storage, buffer pool, data in/out, creation, reshape, casts, random.
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <new>
#include <string>
#include <thread>

#include "ember/backend/views.hpp"
#include "ember/cpu/ops_core.hpp"
#include "ember/cpu/random.hpp"
#include "kernel.hpp"

namespace ember::cpu {

/// Bytes above which an allocation fails at once: 2^62 with a 64-bit size_t, 2^30 on wasm32.
constexpr std::size_t kMaxBytes = std::size_t{1} << (sizeof(std::size_t) * 8 - 2);

// ---- buffer pool ---------------------------------------------------------------------

namespace {

constexpr std::size_t kAlign = 64;
constexpr std::size_t kPoolMin = 1 << 16;  // buffers of 64 KiB and more are pooled

std::size_t pool_limit() {
  static const std::size_t limit = [] {
    if (const char* s = std::getenv("EMBER_CPU_POOL_BYTES"))
      return static_cast<std::size_t>(std::strtoull(s, nullptr, 10));
    return static_cast<std::size_t>(1) << 30;
  }();
  return limit;
}

/// Rounds up to 4 size classes per power of two (at most 25 % slack).
std::size_t size_class(std::size_t n) {
  if (n > kMaxBytes) throw std::bad_alloc();
  if (n < kPoolMin) return (n + kAlign - 1) / kAlign * kAlign;
  std::size_t p = 1;
  while (p * 2 <= n) p *= 2;
  const std::size_t q = p / 4;
  return (n + q - 1) / q * q;
}

struct Pool {
  std::mutex mu;
  std::multimap<std::size_t, void*> free;
  std::size_t cached = 0, hits = 0, misses = 0;

  void* take(std::size_t cap) {
    if (cap >= kPoolMin) {
      std::lock_guard<std::mutex> lock(mu);
      auto it = free.find(cap);
      if (it != free.end()) {
        void* p = it->second;
        free.erase(it);
        cached -= cap;
        ++hits;
        return p;
      }
      ++misses;
    }
    void* p = ::operator new(cap == 0 ? kAlign : cap, std::align_val_t(kAlign));
    return p;
  }
  void give(void* p, std::size_t cap) {
    if (cap >= kPoolMin) {
      std::lock_guard<std::mutex> lock(mu);
      if (cached + cap <= pool_limit()) {
        free.emplace(cap, p);
        cached += cap;
        return;
      }
    }
    ::operator delete(p, std::align_val_t(kAlign));
  }
  void clear() {
    std::lock_guard<std::mutex> lock(mu);
    for (auto& [cap, p] : free) ::operator delete(p, std::align_val_t(kAlign));
    free.clear();
    cached = 0;
  }
  ~Pool() { clear(); }
};

Pool& pool() {
  static Pool* p = new Pool();  // leaked on purpose: outlives static tensors
  return *p;
}

}  // namespace

namespace {
std::atomic<std::size_t> g_live_bytes{0};
std::atomic<std::size_t> g_peak_bytes{0};
}  // namespace

Storage::Storage(std::size_t bytes) : bytes_(bytes), capacity_(size_class(bytes)) {
  data_ = pool().take(capacity_);
  const std::size_t live = g_live_bytes.fetch_add(bytes_, std::memory_order_relaxed) + bytes_;
  std::size_t peak = g_peak_bytes.load(std::memory_order_relaxed);
  while (live > peak &&
         !g_peak_bytes.compare_exchange_weak(peak, live, std::memory_order_relaxed)) {
  }
}
Storage::~Storage() {
  g_live_bytes.fetch_sub(bytes_, std::memory_order_relaxed);
  pool().give(data_, capacity_);
}

MemoryStats memory_stats() {
  return {g_live_bytes.load(std::memory_order_relaxed),
          g_peak_bytes.load(std::memory_order_relaxed)};
}
void reset_peak_memory() {
  g_peak_bytes.store(g_live_bytes.load(std::memory_order_relaxed));
}

BufferPoolStats buffer_pool_stats() {
  auto& p = pool();
  std::lock_guard<std::mutex> lock(p.mu);
  return {p.cached, p.hits, p.misses};
}
void buffer_pool_clear() {
  pool().clear();
}

}  // namespace ember::cpu

namespace ember {

bool CpuTensor::is_contiguous() const {
  return views::is_contiguous(shape, strides);
}

bool CpuTensor::can_reuse() const {
  return storage && storage.use_count() == 1 && offset == 0 && is_contiguous() &&
         static_cast<std::size_t>(numel()) * dtype_size(dtype) == storage->bytes();
}

}  // namespace ember

namespace ember::cpu {

// ---- threads -------------------------------------------------------------------------

namespace {
std::atomic<int> g_threads{0};
}

int threads() {
#if !defined(_OPENMP) && !defined(__EMSCRIPTEN_PTHREADS__)
  return 1;  // the single-threaded WebAssembly build: kernels run on the calling thread
#endif
  int n = g_threads.load(std::memory_order_relaxed);
  if (n <= 0) {
    n = static_cast<int>(std::thread::hardware_concurrency());
    if (const char* s = std::getenv("EMBER_NUM_THREADS")) n = std::atoi(s);
    if (n <= 0) n = 1;
    g_threads.store(n);
  }
#ifdef __EMSCRIPTEN_PTHREADS__
  n = std::min(n, team::capacity());  // the threaded WebAssembly build: its team's size
#endif
  return n;
}

Isa cpu_isa() {
#if !EMBER_CPU_X86
  return Isa::Base;
#else
  static const Isa isa = [] {
    __builtin_cpu_init();
    Isa best = Isa::Base;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) best = Isa::Avx2;
    if (best == Isa::Avx2 && __builtin_cpu_supports("avx512f") &&
        __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512vl"))
      best = Isa::Avx512;
    if (const char* cap = std::getenv("EMBER_CPU_ISA")) {
      const std::string c(cap);
      const Isa want = c == "base" ? Isa::Base : c == "avx2" ? Isa::Avx2 : Isa::Avx512;
      if (static_cast<int>(want) < static_cast<int>(best)) best = want;
    }
    return best;
  }();
  return isa;
#endif
}

void CoreOps::set_num_threads(int n) {
  g_threads.store(n <= 0 ? 1 : n);
}
int CoreOps::num_threads() {
  return threads();
}

// ---- allocation and copies ----------------------------------------------------------

CpuTensor alloc(const Shape& shape, DType dtype) {
  CpuTensor t;
  const std::int64_t n = checked_numel("alloc", shape);
  std::size_t bytes = 0;
  // On 32-bit targets (WebAssembly) the element count itself may not fit in size_t: casting
  // first would wrap it (2^33 elements -> 0 bytes).
  bool too_big = false;
  if constexpr (sizeof(std::size_t) < sizeof(std::int64_t)) {
    too_big = static_cast<std::uint64_t>(n) > std::numeric_limits<std::size_t>::max();
  }
  if (too_big || __builtin_mul_overflow(static_cast<std::size_t>(n), dtype_size(dtype), &bytes) ||
      bytes > kMaxBytes) {
    detail::fail<OutOfMemoryError>("alloc", "a tensor of shape ", shape, " and dtype ", dtype,
                                   " needs more bytes than the CPU can address");
  }
  try {
    t.storage = std::make_shared<Storage>(bytes);
  } catch (const std::bad_alloc&) {
    detail::fail<OutOfMemoryError>("alloc", "out of memory allocating ", bytes,
                                   " bytes for a tensor of shape ", shape, " and dtype ", dtype);
  }
  t.shape = shape;
  t.strides = shape.contiguous_strides();
  t.offset = 0;
  t.dtype = dtype;
  return t;
}

void strided_copy(const CpuTensor& src, const CpuTensor& dst) {
  const std::size_t es = dtype_size(src.dtype);
  if (src.is_contiguous() && dst.is_contiguous()) {
    std::memcpy(dst.raw(), src.raw(), static_cast<std::size_t>(src.numel()) * es);
    return;
  }
  visit_dtype(src.dtype, [&]<class T>() {
    using U = std::conditional_t<std::is_same_v<T, bool>, std::uint8_t, T>;
    const U* s = reinterpret_cast<const U*>(src.storage->data());
    U* d = reinterpret_cast<U*>(dst.storage->data());
    if (dst.is_contiguous()) {
      U* out = d + dst.offset;
      std::int64_t k = 0;
      for_each_offset(src.shape, src.strides, src.offset, [&](std::int64_t o) { out[k++] = s[o]; });
    } else {
      std::vector<std::int64_t> offs;
      offs.reserve(static_cast<std::size_t>(src.numel()));
      for_each_offset(dst.shape, dst.strides, dst.offset,
                      [&](std::int64_t o) { offs.push_back(o); });
      std::size_t k = 0;
      for_each_offset(src.shape, src.strides, src.offset,
                      [&](std::int64_t o) { d[offs[k++]] = s[o]; });
    }
  });
}

CpuTensor contiguous(const CpuTensor& t) {
  if (t.is_contiguous()) return t;
  CpuTensor out = alloc(t.shape, t.dtype);
  strided_copy(t, out);
  return out;
}

// ---- core ops ------------------------------------------------------------------------

CpuTensor CoreOps::from_data(const TensorData& data, const CpuDevice&) {
  CpuTensor t = alloc(data.shape(), data.dtype());
  if (!data.bytes().empty()) std::memcpy(t.raw(), data.bytes().data(), data.bytes().size());
  return t;
}

TensorData CoreOps::into_data(const CpuTensor& t) {
  const CpuTensor c = contiguous(t);
  const std::size_t n = static_cast<std::size_t>(c.numel()) * dtype_size(c.dtype);
  std::vector<std::uint8_t> bytes(n);
  if (n) std::memcpy(bytes.data(), c.raw(), n);
  return TensorData::from_bytes(std::move(bytes), c.shape, c.dtype);
}

CpuTensor CoreOps::empty(const Shape& shape, const CpuDevice&, DType dtype) {
  return alloc(shape, dtype);
}

CpuTensor CoreOps::full(const Shape& shape, double value, const CpuDevice&, DType dtype) {
  CpuTensor t = alloc(shape, dtype);
  visit_dtype(dtype, [&]<class T>() {
    using U = std::conditional_t<std::is_same_v<T, bool>, std::uint8_t, T>;
    const U v = std::is_same_v<T, bool> ? U(value != 0.0) : detail::convert_value<U>(value);
    U* p = t.data<U>();
    parallel_for(t.numel(), kParallelGrain,
                 [&](std::int64_t b, std::int64_t e) { std::fill(p + b, p + e, v); });
  });
  return t;
}

CpuTensor CoreOps::reshape(CpuTensor t, const Shape& shape) {
  CpuTensor c = t.is_contiguous() ? std::move(t) : contiguous(t);
  c.shape = shape;
  c.strides = shape.contiguous_strides();
  return c;
}

CpuTensor CoreOps::cast(CpuTensor t, DType dtype) {
  if (t.dtype == dtype) return t;
  const CpuTensor src = contiguous(t);
  CpuTensor out = alloc(src.shape, dtype);
  visit_dtype(src.dtype, [&]<class S>() {
    visit_dtype(dtype, [&]<class T>() {
      using SU = std::conditional_t<std::is_same_v<S, bool>, std::uint8_t, S>;
      using TU = std::conditional_t<std::is_same_v<T, bool>, std::uint8_t, T>;
      const SU* s = src.data<SU>();
      TU* d = out.data<TU>();
      parallel_for(src.numel(), kParallelGrain, [&](std::int64_t b, std::int64_t e) {
        for (std::int64_t i = b; i < e; ++i) {
          if constexpr (std::is_same_v<T, bool>) {
            d[i] = static_cast<double>(compute_t<SU>(s[i])) != 0.0 ? 1 : 0;
          } else {
            d[i] = detail::convert_value<TU>(s[i]);
          }
        }
      });
    });
  });
  return out;
}

// ---- random --------------------------------------------------------------------------

namespace {
std::atomic<std::uint64_t> g_seed{0x853c49e6748fea9bULL};
std::atomic<std::uint64_t> g_counter{0};

inline std::uint64_t mix64(std::uint64_t z) {  // splitmix64 finaliser
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
inline double uniform01(std::uint64_t seed, std::uint64_t ctr) {
  const std::uint64_t r = mix64(seed ^ mix64(ctr + 0x9e3779b97f4a7c15ULL));
  return static_cast<double>(r >> 11) * 0x1.0p-53;  // [0, 1)
}
}  // namespace

void CoreOps::seed(std::uint64_t s) {
  g_seed.store(mix64(s));
  g_counter.store(0);
}

RandomStream reserve_random(std::int64_t n) {
  const std::uint64_t seed = g_seed.load();
  return {seed, g_counter.fetch_add(2 * static_cast<std::uint64_t>(n))};
}

CpuTensor CoreOps::float_random(const Shape& shape, Distribution dist, const CpuDevice&,
                                DType dtype) {
  CpuTensor out = alloc(shape, dtype);
  const std::int64_t n = out.numel();
  const RandomStream stream = reserve_random(n);
  const std::uint64_t seed = stream.seed, base = stream.base;
  visit_dtype(dtype, [&]<class T>() {
    if constexpr (is_float(dtype_of<T>())) {
      T* p = out.data<T>();
      parallel_for(n, 4096, [&](std::int64_t b, std::int64_t e) {
        for (std::int64_t i = b; i < e; ++i) {
          const std::uint64_t c = base + 2 * static_cast<std::uint64_t>(i);
          double v;
          switch (dist.kind) {
            case Distribution::Kind::Default:
              v = uniform01(seed, c);
              break;
            case Distribution::Kind::Uniform:
              v = dist.a + (dist.b - dist.a) * uniform01(seed, c);
              break;
            case Distribution::Kind::Normal: {  // Box-Muller
              const double u1 = 1.0 - uniform01(seed, c), u2 = uniform01(seed, c + 1);
              v = dist.a + dist.b * std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
              break;
            }
            case Distribution::Kind::Bernoulli:
              v = uniform01(seed, c) < dist.a ? 1.0 : 0.0;
              break;
            default:
              v = 0;
          }
          // keep U[low, high) half-open after rounding to a narrower type
          T tv = detail::convert_value<T>(v);
          if (dist.kind == Distribution::Kind::Uniform ||
              dist.kind == Distribution::Kind::Default) {
            const double hi = dist.kind == Distribution::Kind::Default ? 1.0 : dist.b;
            if (static_cast<double>(compute_t<T>(tv)) >= hi &&
                hi > (dist.kind == Distribution::Kind::Default ? 0.0 : dist.a))
              tv =
                  detail::convert_value<T>(dist.kind == Distribution::Kind::Default ? 0.0 : dist.a);
          }
          p[i] = tv;
        }
      });
    }
  });
  return out;
}

CpuTensor CoreOps::int_arange(std::int64_t start, std::int64_t end, std::int64_t step,
                              const CpuDevice&, DType dtype) {
  // ceil(|end - start| / |step|) without overflow
  std::int64_t n = 0;
  if ((step > 0 && end > start) || (step < 0 && end < start)) {
    const std::uint64_t span =
        step > 0 ? static_cast<std::uint64_t>(end) - static_cast<std::uint64_t>(start)
                 : static_cast<std::uint64_t>(start) - static_cast<std::uint64_t>(end);
    const std::uint64_t mag = step > 0 ? static_cast<std::uint64_t>(step)
                                       : std::uint64_t{0} - static_cast<std::uint64_t>(step);
    n = static_cast<std::int64_t>(1 + (span - 1) / mag);
  }
  CpuTensor out = alloc(Shape{n}, dtype);
  visit_dtype(dtype, [&]<class T>() {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      T* p = out.data<T>();
      for (std::int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(start + i * step);
    }
  });
  return out;
}

}  // namespace ember::cpu
