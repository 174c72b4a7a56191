// Runtimes: the caching pool (with a counting driver, and on every device), copies,
// asynchronous launches, timers, kernel caches, and device errors.
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <random>

#include "ember/kernel/cache.hpp"
#include "kernel_test.hpp"

namespace ember::kernel::test {
namespace {

// A driver that counts and can run out of memory.
struct CountingDriver : CachingPool::Driver {
  std::uint64_t next = 1, live_bytes = 0, budget = ~0ull, allocs = 0, frees = 0, waits = 0;
  std::map<std::uint64_t, std::size_t> live;
  std::optional<std::uint64_t> allocate(std::size_t bytes) override {
    if (live_bytes + bytes > budget) return std::nullopt;
    ++allocs;
    live_bytes += bytes;
    live[next] = bytes;
    return next++;
  }
  void free(std::uint64_t h, std::size_t bytes) override {
    EXPECT_EQ(live.at(h), bytes);
    live.erase(h);
    live_bytes -= bytes;
    ++frees;
  }
  void wait_idle() override { ++waits; }
};

TEST(KernelPool, SizeClassesAndReuse) {
  CountingDriver d;
  CachingPool pool(d);
  EXPECT_EQ(pool.class_size(1), 256u);
  EXPECT_EQ(pool.class_size(257), 512u);
  EXPECT_EQ(pool.class_size(1000), 1024u);
  EXPECT_EQ(pool.class_size(1025), 1280u);               // 4 classes per octave below 1 MiB
  EXPECT_EQ(pool.class_size((1u << 20) + 1), 1179648u);  // 8 per octave above
  EXPECT_EQ(pool.class_size(1u << 30), 1u << 30);
  const auto a = pool.allocate(1000), b = pool.allocate(1000);
  EXPECT_EQ(a.handle, b.handle);  // two slots of one 2 MiB slab
  EXPECT_NE(a.offset, b.offset);
  EXPECT_EQ(d.allocs, 1u);
  pool.free(a);
  const auto c = pool.allocate(900);  // same class: the freed slot again
  EXPECT_EQ(c.handle, a.handle);
  EXPECT_EQ(c.offset, a.offset);
  const auto big = pool.allocate(5u << 20);
  EXPECT_EQ(d.allocs, 2u);
  pool.free(big);
  const auto big2 = pool.allocate((5u << 20) - 1000);
  EXPECT_EQ(big2.handle, big.handle);
  EXPECT_EQ(d.allocs, 2u);
  const MemoryStats s = pool.stats();
  EXPECT_EQ(s.allocs, 5u);
  EXPECT_EQ(s.cache_hits, 3u);  // b (slab slot), c, big2
  EXPECT_EQ(s.bytes_in_use, 1024u * 2 + pool.class_size(5u << 20));
  pool.free(b);
  pool.free(c);
  pool.free(big2);
  pool.release();
  EXPECT_EQ(d.live_bytes, 0u);
  EXPECT_EQ(pool.stats().bytes_reserved, 0u);
  EXPECT_GE(d.waits, 1u);
}

TEST(KernelPool, OutOfMemoryReleasesCacheThenRetries) {
  CountingDriver d;
  d.budget = 12u << 20;
  CachingPool pool(d);
  auto a = pool.allocate(8u << 20);
  pool.free(a);                       // cached: 8 MiB held
  auto b = pool.allocate(10u << 20);  // does not fit beside the cache: release, retry
  EXPECT_EQ(pool.stats().oom_retries, 1u);
  EXPECT_EQ(d.live_bytes, pool.class_size(10u << 20));
  try {
    pool.allocate(4u << 20, "grow");
    ADD_FAILURE() << "expected OutOfMemoryError";
  } catch (const OutOfMemoryError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("[grow] out of device memory allocating", 0), 0u)
        << e.what();
  }
  pool.free(b);
}

TEST(KernelPool, MixedCyclesMakeNoDriverCallsAfterWarmUp) {
  CountingDriver d;
  CachingPool pool(d);
  const std::size_t sizes[] = {100, 3000, 70000, 1500000, 9000000, 40000000};
  std::mt19937 rng(7);
  std::vector<CachingPool::Block> live;
  const auto cycle = [&] {
    live.push_back(pool.allocate(sizes[rng() % 6]));
    if (live.size() > 16 || rng() % 2) {
      const std::size_t k = rng() % live.size();
      pool.free(live[k]);
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(k));
    }
  };
  // warm-up: the peak of the workload, 17 live buffers of each size, once
  for (std::size_t sz : sizes) {
    std::vector<CachingPool::Block> peak;
    for (int k = 0; k < 17; ++k) peak.push_back(pool.allocate(sz));
    for (auto& b : peak) pool.free(b);
  }
  const std::uint64_t allocs = d.allocs, reserved = pool.stats().bytes_reserved;
  for (int c = 0; c < 10000; ++c) cycle();
  EXPECT_EQ(d.allocs, allocs);
  EXPECT_EQ(pool.stats().bytes_reserved, reserved);
  EXPECT_EQ(d.frees, 0u);
}

// ---- on every device -----------------------------------------------------------------------

class Runtime : public KernelTest {};

TEST_P(Runtime, Properties) {
  const DeviceProperties& p = props();
  std::printf(
      "[ %s ] %s (%s), driver %s, %.1f GiB, %u compute units, subgroup %u, f16 %d bf16 %d f64 %d "
      "i64 %d u8 %d f64-math %d f32-atomics %d i64-atomics %d subgroups %d matrix %d denormals %d "
      "nans %d\n",
      target().c_str(), p.name.c_str(), p.kind.c_str(), p.driver.c_str(),
      static_cast<double>(p.total_memory) / (1u << 30), p.compute_units, p.subgroup_size, p.f16,
      p.bf16, p.f64, p.i64, p.u8, p.f64_math, p.float_atomics, p.i64_atomics, p.subgroups, p.matrix,
      p.denormals, p.nans);
  EXPECT_FALSE(p.name.empty());
  EXPECT_GT(p.total_memory, 0u);
  EXPECT_GE(p.subgroup_size, 1u);
  EXPECT_GE(p.max_workgroup_threads, 64u);
}

TEST_P(Runtime, PoolCyclesStayOffTheDriver) {
  const std::size_t sizes[] = {100, 3000, 70000, 1500000, 9000000};
  std::mt19937 rng(11);
  std::vector<Buffer> live;
  const auto cycle = [&] {
    live.push_back(dev().alloc(sizes[rng() % 5]));
    if (live.size() > 12 || rng() % 2)
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(rng() % live.size()));
  };
  for (std::size_t sz : sizes) {  // warm-up: the workload's peak (13 live of one size), once
    std::vector<Buffer> peak;
    for (int k = 0; k < 13; ++k) peak.push_back(dev().alloc(sz));
  }
  const MemoryStats before = dev().memory_stats();
  for (int c = 0; c < 10000; ++c) cycle();
  const MemoryStats after = dev().memory_stats();
  std::printf(
      "[ %s ] pool: 10000 mixed alloc/free cycles after warm-up: driver allocations %llu -> %llu, "
      "bytes held %llu -> %llu, driver-reported free memory %llu -> %llu\n",
      target().c_str(), static_cast<unsigned long long>(before.driver_allocs),
      static_cast<unsigned long long>(after.driver_allocs),
      static_cast<unsigned long long>(before.bytes_reserved),
      static_cast<unsigned long long>(after.bytes_reserved),
      static_cast<unsigned long long>(before.device_free),
      static_cast<unsigned long long>(after.device_free));
  EXPECT_EQ(after.driver_allocs, before.driver_allocs) << "driver allocations after warm-up";
  EXPECT_EQ(after.bytes_reserved, before.bytes_reserved);
  EXPECT_EQ(after.allocs - before.allocs, 10000u);
  if (before.device_free) {
    EXPECT_EQ(after.device_free, before.device_free);
  }
  live.clear();
  dev().release_memory();
  EXPECT_EQ(dev().memory_stats().bytes_in_use, 0u);
}

TEST_P(Runtime, CopiesRoundTrip) {
  // more than one staging chunk on the GPU runtimes (32 MiB CUDA, 64 MiB Vulkan)
  const std::size_t n = target() == "cpu" || target() == "nvrtc" ? (1u << 20) : (40u << 20);
  std::vector<std::uint32_t> v(n);
  for (std::size_t j = 0; j < n; ++j) v[j] = static_cast<std::uint32_t>(j * 2654435761u);
  Buffer a = up(v), b = dev().alloc(n * 4);
  dev().copy(a, 4, b, 0, (n - 1) * 4);
  dev().write(b, (n - 1) * 4, &v[0], 4);
  std::vector<std::uint32_t> got(n);
  dev().read(b, 0, got.data(), n * 4);
  for (std::size_t j = 0; j + 1 < n; ++j) ASSERT_EQ(got[j], v[j + 1]) << j;
  EXPECT_EQ(got[n - 1], v[0]);
  std::uint32_t mid = 0;
  dev().read(a, 4 * 12345, &mid, 4);
  EXPECT_EQ(mid, v[12345]);
}

// Launches return before the device has finished (GPU runtimes); results are right after
// sync(). The CPU target runs launches as they come.
TEST_P(Runtime, LaunchesAreAsynchronous) {
  KernelBuilder kb("spin_add", {64, 1, 1});
  {
    Mem y = kb.buffer("y", Elem::U32, Access::ReadWrite);
    Mem sink = kb.buffer("sink", Elem::U32, Access::Write);
    Val iters = kb.scalar("iters", Elem::U32);
    Val i = kb.absolute_pos();
    kb.if_in_bounds(i, y.len(), [&] {
      Var h = kb.var(y[i]);
      kb.for_(0u, iters, 1u, [&](Val k) { h = (Val(h) * 1664525u + k) ^ (Val(h) >> 7u); });
      sink[i] = h;  // keeps the loop alive
      y[i] = y[i] + 1u;
    });
  }
  const Kernel k = kb.build();
  auto c = compile(k);
  const std::uint32_t launches = 1000;
  const bool cpu_like = target() == "cpu" || target() == "nvrtc" ||
                        props().name.find("llvmpipe") != std::string::npos;
  // llvmpipe: enough work per launch that execution clearly outlasts the enqueueing
  const bool interp = target() == "cpu" || target() == "nvrtc";
  const std::uint32_t iters = interp ? 4 : cpu_like ? 24 : 20000, n = cpu_like ? 1024 : 4096;
  Buffer y = up(std::vector<std::uint32_t>(n, 5)), sink = dev().alloc(n * 4);
  dev().sync();
  const auto t0 = std::chrono::steady_clock::now();
  for (std::uint32_t l = 0; l < launches; ++l)
    dev().launch(*c, grid_for(k, n), {Arg::buf(y), Arg::buf(sink), Arg::u32(iters)});
  const auto t1 = std::chrono::steady_clock::now();
  dev().sync();
  const auto t2 = std::chrono::steady_clock::now();
  const double enqueue = std::chrono::duration<double, std::milli>(t1 - t0).count();
  const double total = std::chrono::duration<double, std::milli>(t2 - t0).count();
  std::printf("[ %s ] enqueue of %u launches: %.2f ms; until synced: %.2f ms\n", target().c_str(),
              launches, enqueue, total);
  const auto got = down<std::uint32_t>(y, n);
  for (std::uint32_t j = 0; j < n; ++j) ASSERT_EQ(got[j], 5 + launches) << j;
  if (target() == "cuda" || target() == "vulkan") {
    EXPECT_LT(enqueue, 0.5 * total);
  }
}

TEST_P(Runtime, DeviceTimerMeasuresWork) {
  KernelBuilder kb("timed", {64, 1, 1});
  {
    Mem y = kb.buffer("y", Elem::F32, Access::ReadWrite);
    Val i = kb.absolute_pos();
    kb.if_in_bounds(i, y.len(), [&] { y[i] = exp(y[i]) * 0.5f; });
  }
  const Kernel k = kb.build();
  auto c = compile(k);
  Buffer y = up(std::vector<float>(1 << 16, 0.5f));
  dev().launch(*c, grid_for(k, 1 << 16), {Arg::buf(y)});  // warm-up (first-use compilation)
  dev().sync();
  const double one = dev().time_ms([&] { dev().launch(*c, grid_for(k, 1 << 16), {Arg::buf(y)}); });
  const double many = dev().time_ms([&] {
    for (int r = 0; r < 50; ++r) dev().launch(*c, grid_for(k, 1 << 16), {Arg::buf(y)});
  });
  EXPECT_GT(one, 0.0);
  EXPECT_GT(many, one);
}

TEST_P(Runtime, ErrorsNameTheOperation) {
  KernelBuilder kb("errs", {32, 1, 1});
  Mem y = kb.buffer("y", Elem::F32, Access::ReadWrite);
  y[0u] = 1.0f;
  auto c = compile(kb.build());
  if (&dev() != &cpu_device()) {
    Buffer host = cpu_device().alloc(64);
    try {
      dev().launch(*c, Grid{}, {Arg::buf(host)});
      ADD_FAILURE() << "expected DeviceError";
    } catch (const DeviceError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("[launch errs] argument 0 'y' is on cpu", 0), 0u)
          << e.what();
    }
  }
  if (!props().matrix) {
    KernelBuilder m("needs_mma", {32, 1, 1});
    m.fragment({MatrixUse::Acc, 16, 16, 16}, Elem::F32);
    try {
      (void)dev().compile(m.build());
      ADD_FAILURE() << "expected UnsupportedError";
    } catch (const UnsupportedError& e) {
      EXPECT_NE(std::string(e.what()).find("[compile needs_mma]"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW((void)dev().alloc(0), ValueError);
}

EMBER_KERNEL_INSTANTIATE(Runtime);

// ---- caches ----------------------------------------------------------------------------------

TEST(KernelCache, DiskCacheIsBoundedAndAtomic) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("ember-cache-test-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  ::setenv("EMBER_CACHE_DIR", dir.c_str(), 1);
  {
    DiskCache c("unit", 3000);
    ASSERT_TRUE(c.enabled());
    EXPECT_FALSE(c.get("k1").has_value());
    c.put("k1", std::string(1000, 'a'));
    c.put("k2", std::string(1000, 'b'));
    EXPECT_EQ(*c.get("k1"), std::string(1000, 'a'));  // k1 is now the most recent
    std::filesystem::last_write_time(
        dir / "kernels" / "unit" / "k2",
        std::filesystem::file_time_type::clock::now() - std::chrono::hours(1));
    c.put("k3", std::string(1500, 'c'));  // over 3000 bytes: the oldest (k2) goes
    EXPECT_FALSE(c.get("k2").has_value());
    EXPECT_TRUE(c.get("k1").has_value());
    EXPECT_TRUE(c.get("k3").has_value());
    EXPECT_EQ(cache_key("a"), cache_key("a"));
    EXPECT_NE(cache_key("a"), cache_key("b"));
    EXPECT_EQ(cache_key("a").size(), 32u);
  }
  ::setenv("EMBER_KERNEL_CACHE", "0", 1);
  EXPECT_FALSE(DiskCache("unit").enabled());
  ::unsetenv("EMBER_KERNEL_CACHE");
  ::unsetenv("EMBER_CACHE_DIR");
  std::filesystem::remove_all(dir);
}

TEST(KernelCache, LruDropsTheLeastRecentlyUsed) {
  LruCache<int> c(2);
  c.put("a", 1);
  c.put("b", 2);
  EXPECT_EQ(*c.get("a"), 1);
  c.put("c", 3);
  EXPECT_FALSE(c.get("b").has_value());
  EXPECT_EQ(*c.get("a"), 1);
  EXPECT_EQ(*c.get("c"), 3);
  EXPECT_EQ(c.size(), 2u);
}

TEST_P(Runtime, CompiledKernelsAreCached) {
  KernelBuilder kb("cached_k", {32, 1, 1});
  Mem y = kb.buffer("y", Elem::F32, Access::ReadWrite);
  y[kb.absolute_pos()] = 3.0f;
  const Kernel k = kb.build();
  auto a = dev().compile(k), b = dev().compile(k);
  EXPECT_EQ(a.get(), b.get());  // the in-memory cache
  if (target() == "vulkan" || target() == "cuda") {
    EXPECT_FALSE(a->source().empty());
    const auto dir = cache_dir();
    if (!dir.empty()) {
      EXPECT_TRUE(std::filesystem::exists(dir / "kernels" / target()));
    }
  }
}

}  // namespace
}  // namespace ember::kernel::test
