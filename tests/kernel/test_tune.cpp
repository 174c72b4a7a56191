// Autotune: the fastest candidate wins, the result is persisted and reused, keys bucket
// shapes, EMBER_AUTOTUNE=0 turns it off, failing candidates are skipped.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "ember/kernel/builder.hpp"
#include "ember/tune/tune.hpp"

namespace ember::tune {
namespace {

using namespace ember::kernel;

/// A device whose timer reports the number of work units the timed code did: the tuner's
/// choice is then deterministic whatever the machine's load. Memory and kernels are the CPU's.
class CountingTimer final : public ComputeDevice {
 public:
  int units = 0;
  const DeviceProperties& properties() const override { return cpu_device().properties(); }
  void write(const Buffer&, std::size_t, const void*, std::size_t) override {}
  void read(const Buffer&, std::size_t, void*, std::size_t) override {}
  void copy(const Buffer&, std::size_t, const Buffer&, std::size_t, std::size_t) override {}
  CompiledPtr compile(const Kernel& k) override { return cpu_device().compile(k); }
  void sync() override {}
  double time_ms(const std::function<void()>& work) override {
    const int before = units;
    work();
    return units - before;
  }
  MemoryStats memory_stats() const override { return {}; }
  void release_memory() override {}
  void reset_peak_memory() override {}

 protected:
  CachingPool::Block allocate_block(std::size_t) override { return {}; }
  void free_block(const CachingPool::Block&) override {}
  void enqueue(const CompiledKernel&, Grid, std::span<const Arg>, const std::uint32_t*) override {}
};

struct Fixture {
  CountingTimer dev;
  /// A candidate that does `units` of work and counts its runs.
  Candidate make(const std::string& name, int units, int* runs) {
    return {name, [this, units, runs] {
              ++*runs;
              dev.units += units;
            }};
  }
};

TEST(Autotune, PicksTheFastestAndRemembersIt) {
  const auto file = std::filesystem::temp_directory_path() /
                    ("ember-tune-" + std::to_string(::getpid()) + ".json");
  std::filesystem::remove(file);
  Fixture f;
  int slow = 0, fast = 0, mid = 0;
  const Key key = make_key("unit_op", {1000, 3}, "f32", f.dev);
  EXPECT_EQ(key.shape, (std::vector<std::uint64_t>{1024, 4}));
  {
    Tuner t(file);
    const std::vector<Candidate> c = {f.make("slow", 12, &slow), f.make("fast", 1, &fast),
                                      f.make("mid", 4, &mid)};
    EXPECT_EQ(t.choose(key, c, f.dev), 1u);
    EXPECT_EQ(fast, 6);  // warm-up + 5 timed runs
    EXPECT_EQ(*t.winner(key), "fast");
    const auto times = t.timings(key);
    EXPECT_LT(times.at("fast"), times.at("slow"));
  }
  {
    Tuner t(file);  // a new process would load the file the same way
    int again = 0;
    const std::vector<Candidate> c = {f.make("slow", 12, &again), f.make("mid", 4, &again),
                                      f.make("fast", 1, &again)};
    EXPECT_EQ(t.choose(make_key("unit_op", {900, 4}, "f32", f.dev), c, f.dev), 2u);  // same bucket
    EXPECT_EQ(again, 0);                                                             // nothing ran
    std::ifstream in(file);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find("\"winner\": \"fast\""), std::string::npos) << text;
  }
  std::filesystem::remove(file);
}

TEST(Autotune, OffFailingAndEmpty) {
  Fixture f;
  Tuner t("");
  int runs = 0;
  ::setenv("EMBER_AUTOTUNE", "0", 1);
  EXPECT_EQ(t.choose(make_key("off", {8}, "f32", f.dev),
                     {f.make("a", 3, &runs), f.make("b", 1, &runs)}, f.dev),
            0u);
  EXPECT_EQ(runs, 0);
  ::unsetenv("EMBER_AUTOTUNE");
  const Candidate broken{"broken", [] { throw UnsupportedError("[unit] not here"); }};
  EXPECT_EQ(f.dev.time_ms([&] { f.dev.units += 3; }), 3.0);
  EXPECT_EQ(t.choose(make_key("skip", {8}, "f32", f.dev), {broken, f.make("ok", 1, &runs)}, f.dev),
            1u);
  EXPECT_THROW(t.choose(make_key("all_bad", {8}, "f32", f.dev), {broken}, f.dev), UnsupportedError);
  EXPECT_THROW(t.choose(make_key("none", {8}, "f32", f.dev), {}, f.dev), ValueError);
  EXPECT_EQ(bucket(0), 0u);
  EXPECT_EQ(bucket(1), 1u);
  EXPECT_EQ(bucket(65), 128u);
}

TEST(Autotune, NewCandidatesTuneAgainAndFailuresAreRemembered) {
  const auto file = std::filesystem::temp_directory_path() /
                    ("ember-tune-new-" + std::to_string(::getpid()) + ".json");
  std::filesystem::remove(file);
  Fixture f;
  int tiled = 0, vendor = 0, broken_runs = 0;
  const Key key = make_key("unit_matmul", {1, 64, 64, 64}, "f32", f.dev);
  const Candidate broken{"broken", [&] {
                           ++broken_runs;
                           throw UnsupportedError("[unit] no algorithm");
                         }};
  {
    Tuner t(file);
    EXPECT_EQ(t.choose(key, {f.make("tiled", 4, &tiled), broken}, f.dev), 0u);
    EXPECT_EQ(broken_runs, 1);  // the warm-up threw: not timed
  }
  {
    // A later process: the failure is remembered (no retry), the winner reused.
    Tuner t(file);
    EXPECT_EQ(t.choose(key, {f.make("tiled", 4, &tiled), broken}, f.dev), 0u);
    EXPECT_EQ(broken_runs, 1);
    EXPECT_EQ(tiled, 6);
    // A candidate that took no part (a vendor library installed since): the key tunes again.
    ::setenv("EMBER_AUTOTUNE_LOG", "1", 1);
    ::testing::internal::CaptureStderr();
    EXPECT_EQ(t.choose(key, {f.make("tiled", 4, &tiled), f.make("vendor", 1, &vendor)}, f.dev), 1u);
    const std::string log = ::testing::internal::GetCapturedStderr();
    ::unsetenv("EMBER_AUTOTUNE_LOG");
    EXPECT_EQ(vendor, 6);
    EXPECT_EQ(tiled, 12);
    EXPECT_EQ(*t.winner(key), "vendor");
    EXPECT_EQ(log, "[ember autotune] " + key.str() + ": tiled 4 ms, vendor 1 ms -> vendor\n");
  }
  {
    // The log names a winner reused from the file once per key and process.
    Tuner t(file);
    ::setenv("EMBER_AUTOTUNE_LOG", "1", 1);
    ::testing::internal::CaptureStderr();
    for (int i = 0; i < 3; ++i)
      EXPECT_EQ(t.choose(key, {f.make("tiled", 4, &tiled), f.make("vendor", 1, &vendor)}, f.dev),
                1u);
    const std::string log = ::testing::internal::GetCapturedStderr();
    ::unsetenv("EMBER_AUTOTUNE_LOG");
    EXPECT_EQ(log,
              "[ember autotune] " + key.str() + ": vendor (remembered; tiled 4 ms, vendor 1 ms)\n");
    EXPECT_EQ(vendor, 6);  // nothing ran
  }
  std::filesystem::remove(file);
}

TEST(Autotune, VendorCandidatesAreOptIn) {
  ::unsetenv("EMBER_VENDOR_CANDIDATES");
  EXPECT_FALSE(Tuner::vendor_enabled());
  ::setenv("EMBER_VENDOR_CANDIDATES", "0", 1);
  EXPECT_FALSE(Tuner::vendor_enabled());
  ::setenv("EMBER_VENDOR_CANDIDATES", "yes", 1);
  EXPECT_FALSE(Tuner::vendor_enabled());  // only "1" turns them on
  ::setenv("EMBER_VENDOR_CANDIDATES", "1", 1);
  EXPECT_TRUE(Tuner::vendor_enabled());
  ::unsetenv("EMBER_VENDOR_CANDIDATES");
}

}  // namespace
}  // namespace ember::tune
