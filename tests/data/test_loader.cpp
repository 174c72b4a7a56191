// DataLoader: order (in order, seeded shuffle per epoch), every item once per epoch for
// several worker counts and batch sizes, drop_last, the prefetch bound, worker errors reaching
// the caller, early exit without hanging, progress, augmentation seeding.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <numeric>
#include <ranges>
#include <set>
#include <stdexcept>
#include <thread>

#include "ember/data/loader.hpp"

using namespace ember;
using namespace ember::data;
using namespace std::chrono_literals;

namespace {

DatasetPtr<int> range_dataset(int n) {
  std::vector<int> v(static_cast<std::size_t>(n));
  std::iota(v.begin(), v.end(), 0);
  return std::make_shared<InMemoryDataset<int>>(v);
}

/// The batcher of most tests: the batch is the vector of items.
std::vector<int> identity(std::vector<int> items) {
  return items;
}

using IntLoaderBuilder = DataLoaderBuilder<int, std::vector<int>>;

/// Every batch of one epoch, in delivery order.
std::vector<std::vector<int>> run_epoch(const DataLoader<int, std::vector<int>>& loader,
                                        std::size_t epoch) {
  std::vector<std::vector<int>> out;
  for (auto& batch : loader.iter(epoch)) out.push_back(batch);
  return out;
}

std::vector<int> flatten(const std::vector<std::vector<int>>& batches) {
  std::vector<int> out;
  for (const auto& b : batches) out.insert(out.end(), b.begin(), b.end());
  return out;
}

/// Every loader test runs under a watchdog: a deadlock fails the test binary (with the test's
/// name) instead of hanging it.
class Loader : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    name_ = std::string(info->test_suite_name()) + "." + info->name();
    watchdog_ = std::thread([this] {
      std::unique_lock<std::mutex> lock(mu_);
      if (!cv_.wait_for(lock, 120s, [&] { return done_; })) {
        std::fprintf(stderr, "%s did not finish within 120 s (deadlock?)\n", name_.c_str());
        std::_Exit(1);
      }
    });
  }
  void TearDown() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    watchdog_.join();
  }

 private:
  std::string name_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread watchdog_;
};

/// A dataset that throws std::runtime_error (or IoError) when item `bad` is read, and counts
/// reads; optionally sleeps per item.
class FailingDataset final : public Dataset<int> {
 public:
  FailingDataset(std::size_t n, std::size_t bad, bool io_error = false,
                 std::chrono::microseconds delay = 0us)
      : n_(n), bad_(bad), io_error_(io_error), delay_(delay) {}
  std::optional<int> get(std::size_t index) const override {
    if (index >= n_) return std::nullopt;
    reads.fetch_add(1);
    if (delay_.count() > 0) std::this_thread::sleep_for(delay_);
    if (index == bad_) {
      if (io_error_) ember::detail::fail<IoError>("test", "cannot decode item ", index);
      throw std::runtime_error("item " + std::to_string(index) + " is broken");
    }
    return static_cast<int>(index);
  }
  std::size_t len() const override { return n_; }
  mutable std::atomic<std::size_t> reads{0};

 private:
  std::size_t n_, bad_;
  bool io_error_;
  std::chrono::microseconds delay_;
};

}  // namespace

static_assert(std::ranges::input_range<Epoch<int, std::vector<int>>>);

TEST_F(Loader, InOrderWithoutShuffle) {
  auto loader = IntLoaderBuilder(identity).batch_size(4).build(range_dataset(10));
  EXPECT_EQ(loader.num_batches(), 3u);
  EXPECT_EQ(loader.num_items(), 10u);
  const auto batches = run_epoch(loader, 0);
  ASSERT_EQ(batches.size(), 3u);
  EXPECT_EQ(batches[0], (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(batches[1], (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(batches[2], (std::vector<int>{8, 9}));
  EXPECT_EQ(run_epoch(loader, 3), batches);  // no shuffle: the epoch does not matter
}

TEST_F(Loader, DropLastDropsTheShortBatch) {
  auto loader =
      IntLoaderBuilder(identity).batch_size(4).drop_last().num_workers(2).build(range_dataset(10));
  EXPECT_EQ(loader.num_batches(), 2u);
  EXPECT_EQ(loader.num_items(), 8u);
  const auto batches = run_epoch(loader, 0);
  ASSERT_EQ(batches.size(), 2u);
  for (const auto& b : batches) EXPECT_EQ(b.size(), 4u);
  // Shorter than one batch: no batch at all.
  auto tiny = IntLoaderBuilder(identity).batch_size(4).drop_last().build(range_dataset(3));
  EXPECT_TRUE(run_epoch(tiny, 0).empty());
}

TEST_F(Loader, ShuffleIsSeededAndDiffersPerEpoch) {
  auto ds = range_dataset(200);
  auto make = [&](std::uint64_t seed, std::size_t workers) {
    return IntLoaderBuilder(identity).batch_size(16).shuffle(seed).num_workers(workers).build(ds);
  };
  const auto a0 = flatten(run_epoch(make(42, 2), 0));
  const auto a1 = flatten(run_epoch(make(42, 2), 1));
  // Reproducible: same seed and epoch, whatever the worker count or loader instance.
  EXPECT_EQ(flatten(run_epoch(make(42, 0), 0)), a0);
  EXPECT_EQ(flatten(run_epoch(make(42, 3), 0)), a0);
  EXPECT_EQ(flatten(run_epoch(make(42, 1), 1)), a1);
  // Different per epoch, different per seed, and not the identity order.
  EXPECT_NE(a0, a1);
  EXPECT_NE(flatten(run_epoch(make(43, 2), 0)), a0);
  std::vector<int> sorted(200);
  std::iota(sorted.begin(), sorted.end(), 0);
  EXPECT_NE(a0, sorted);
  // The documented order: permutation(len, mix(seed, epoch)).
  const auto expected = permutation(200, mix(42, 1));
  ASSERT_EQ(a1.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(a1[i], static_cast<int>(expected[i]));
  // Each epoch is still a permutation.
  std::vector<int> s0 = a0, s1 = a1;
  std::sort(s0.begin(), s0.end());
  std::sort(s1.begin(), s1.end());
  EXPECT_EQ(s0, sorted);
  EXPECT_EQ(s1, sorted);
}

TEST_F(Loader, EveryItemExactlyOncePerEpoch) {
  const int n = 103;  // prime: no batch size below divides it
  auto ds = range_dataset(n);
  for (std::size_t workers : {0, 1, 2, 3, 8}) {
    for (std::size_t batch : {1, 4, 10, 64, 200}) {
      for (bool shuffle : {false, true}) {
        auto builder = IntLoaderBuilder(identity).batch_size(batch).num_workers(workers);
        if (shuffle) builder.shuffle(7);
        auto loader = builder.build(ds);
        for (std::size_t epoch = 0; epoch < 2; ++epoch) {
          const auto batches = run_epoch(loader, epoch);
          ASSERT_EQ(batches.size(), (n + batch - 1) / batch);
          for (std::size_t k = 0; k + 1 < batches.size(); ++k) ASSERT_EQ(batches[k].size(), batch);
          std::multiset<int> seen;
          for (int v : flatten(batches)) seen.insert(v);
          ASSERT_EQ(seen.size(), static_cast<std::size_t>(n));
          for (int i = 0; i < n; ++i) {
            ASSERT_EQ(seen.count(i), 1u) << "item " << i << ", workers " << workers << ", batch "
                                         << batch << ", shuffle " << shuffle;
          }
        }
      }
    }
  }
}

namespace {
/// A batch that counts how many batches exist (moved-from batches do not count).
struct TrackedBatch {
  static std::atomic<int> live;
  static std::atomic<int> max_live;
  std::vector<int> items;
  bool counted = false;

  explicit TrackedBatch(std::vector<int> v) : items(std::move(v)), counted(true) {
    const int now = live.fetch_add(1) + 1;
    int seen = max_live.load();
    while (now > seen && !max_live.compare_exchange_weak(seen, now)) {
    }
  }
  TrackedBatch(TrackedBatch&& o) noexcept : items(std::move(o.items)), counted(o.counted) {
    o.counted = false;
  }
  TrackedBatch& operator=(TrackedBatch&& o) noexcept {
    if (this != &o) {
      if (counted) live.fetch_sub(1);
      items = std::move(o.items);
      counted = o.counted;
      o.counted = false;
    }
    return *this;
  }
  TrackedBatch(const TrackedBatch&) = delete;
  ~TrackedBatch() {
    if (counted) live.fetch_sub(1);
  }
};
std::atomic<int> TrackedBatch::live{0};
std::atomic<int> TrackedBatch::max_live{0};
}  // namespace

TEST_F(Loader, PrefetchBoundsLiveBatches) {
  for (std::size_t prefetch : {1, 2, 3}) {
    TrackedBatch::live = 0;
    TrackedBatch::max_live = 0;
    auto loader = DataLoaderBuilder<int, TrackedBatch>(
                      [](std::vector<int> items) { return TrackedBatch(std::move(items)); })
                      .batch_size(5)
                      .num_workers(4)
                      .prefetch(prefetch)
                      .build(range_dataset(200));
    std::size_t count = 0;
    {
      for (auto& batch : loader.iter(0)) {
        ASSERT_EQ(batch.items.size(), 5u);
        std::this_thread::sleep_for(2ms);  // a slow consumer: the workers fill every slot
        ++count;
      }
    }
    EXPECT_EQ(count, 40u);
    EXPECT_EQ(TrackedBatch::live.load(), 0);
    // `prefetch` batches in flight plus the one the consumer holds, never more.
    EXPECT_LE(TrackedBatch::max_live.load(), static_cast<int>(prefetch) + 1);
    EXPECT_EQ(TrackedBatch::max_live.load(), static_cast<int>(prefetch) + 1)
        << "the workers never filled the prefetch slots";
  }
}

TEST_F(Loader, WorkerErrorReachesTheCaller) {
  for (std::size_t workers : {0, 1, 3}) {
    auto ds = std::make_shared<FailingDataset>(100, 37);
    auto loader = IntLoaderBuilder(identity).batch_size(8).num_workers(workers).build(ds);
    std::vector<std::vector<int>> got;
    std::string message;
    {
      try {
        for (auto& batch : loader.iter(0)) got.push_back(batch);
      } catch (const std::runtime_error& e) {
        message = e.what();
      }
    }
    EXPECT_EQ(message, "item 37 is broken") << workers << " workers";
    // Item 37 is in batch 4: batches 0..3 arrive first, in order.
    ASSERT_EQ(got.size(), 4u) << workers << " workers";
    EXPECT_EQ(got[3].back(), 31);
  }
}

TEST_F(Loader, WorkerErrorKeepsItsTypeAndStopsTheEpoch) {
  auto ds = std::make_shared<FailingDataset>(64, 5, /*io_error=*/true);
  auto loader = IntLoaderBuilder(identity).batch_size(4).num_workers(2).shuffle(3).build(ds);
  {
    auto epoch = loader.iter(2);
    std::string message;
    std::size_t delivered = 0;
    try {
      while (auto batch = epoch.next()) ++delivered;
    } catch (const IoError& e) {
      message = e.what();
    }
    EXPECT_EQ(message, "[test] cannot decode item 5");
    // The failing item's position in the shuffled order decides how many batches came first.
    const auto& order = epoch.order();
    const auto pos = std::find(order.begin(), order.end(), 5u) - order.begin();
    EXPECT_EQ(delivered, static_cast<std::size_t>(pos) / 4);
    // After the error the epoch is over.
    EXPECT_FALSE(epoch.next().has_value());
  }
}

TEST_F(Loader, BatcherErrorReachesTheCaller) {
  auto loader = IntLoaderBuilder([](std::vector<int> items) -> std::vector<int> {
                  if (items.front() == 20) {
                    ember::detail::fail<ShapeError>("batcher", "batch starting at 20");
                  }
                  return items;
                })
                    .batch_size(10)
                    .num_workers(2)
                    .build(range_dataset(50));
  std::size_t delivered = 0;
  {
    EXPECT_THROW(
        {
          for (auto& batch : loader.iter(0)) {
            (void)batch;
            ++delivered;
          }
        },
        ShapeError);
  }
  EXPECT_EQ(delivered, 2u);
}

TEST_F(Loader, EarlyBreakStopsWorkersWithoutHanging) {
  // Slow items (1 ms each): abandoning the epoch must not wait for the rest of it.
  auto ds = std::make_shared<FailingDataset>(2000, 1u << 30, false, 1000us);
  auto loader = IntLoaderBuilder(identity).batch_size(10).num_workers(3).prefetch(3).build(ds);
  {
    std::size_t n = 0;
    for (auto& batch : loader.iter(0)) {
      EXPECT_EQ(batch.size(), 10u);
      if (++n == 2) break;
    }
  }
  // Batches 0..4 at most: 2 delivered and 3 in flight when the loop broke; no worker starts
  // another one after that (the whole epoch is 200 batches).
  EXPECT_LE(ds->reads.load(), 50u);
  // Abandoned before the first batch: the workers stop too.
  { auto epoch = loader.iter(1); }
}

TEST_F(Loader, ProgressCountsDeliveredItems) {
  auto loader = IntLoaderBuilder(identity).batch_size(4).num_workers(2).build(range_dataset(10));
  auto epoch = loader.iter(0);
  Progress p = epoch.progress();
  EXPECT_EQ(p.items_done, 0u);
  EXPECT_EQ(p.items_total, 10u);
  EXPECT_EQ(p.batches_total, 3u);
  std::vector<std::size_t> done;
  for (auto& batch : epoch) {
    (void)batch;
    done.push_back(epoch.progress().items_done);
  }
  EXPECT_EQ(done, (std::vector<std::size_t>{4, 8, 10}));
  p = epoch.progress();
  EXPECT_EQ(p.batches_done, 3u);
  EXPECT_DOUBLE_EQ(p.fraction(), 1.0);

  auto dropped =
      IntLoaderBuilder(identity).batch_size(4).drop_last().build(range_dataset(10)).iter(0);
  EXPECT_EQ(dropped.progress().items_total, 8u);
  EXPECT_EQ(dropped.progress().batches_total, 2u);
}

TEST_F(Loader, EmptyDatasetHasNoBatches) {
  auto loader =
      IntLoaderBuilder(identity).batch_size(4).num_workers(2).shuffle(1).build(range_dataset(0));
  EXPECT_EQ(loader.num_batches(), 0u);
  EXPECT_TRUE(run_epoch(loader, 0).empty());
  EXPECT_DOUBLE_EQ(loader.iter(0).progress().fraction(), 1.0);
}

TEST_F(Loader, AugmentIsSeededPerEpochAndItem) {
  // The augmentation adds 1000 * (a draw in 0..99) to each item.
  auto make = [](std::size_t workers, std::uint64_t seed) {
    return IntLoaderBuilder(identity)
        .batch_size(7)
        .num_workers(workers)
        .augment([](int x, Rng& rng) { return x + 1000 * static_cast<int>(rng.below(100)); }, seed)
        .build(range_dataset(50));
  };
  const auto e0 = flatten(run_epoch(make(2, 5), 0));
  EXPECT_EQ(flatten(run_epoch(make(0, 5), 0)), e0);
  EXPECT_EQ(flatten(run_epoch(make(3, 5), 0)), e0);
  EXPECT_NE(flatten(run_epoch(make(2, 5), 1)), e0);
  EXPECT_NE(flatten(run_epoch(make(2, 6), 0)), e0);
  // Item i drew from Rng(mix(mix(seed, epoch), i)).
  for (int i = 0; i < 50; ++i) {
    Rng rng(mix(mix(5, 0), static_cast<std::uint64_t>(i)));
    EXPECT_EQ(e0[static_cast<std::size_t>(i)], i + 1000 * static_cast<int>(rng.below(100)));
  }
}

TEST_F(Loader, RejectsBadSettings) {
  EXPECT_THROW(IntLoaderBuilder(identity).batch_size(0).build(range_dataset(3)), ValueError);
  EXPECT_THROW(IntLoaderBuilder(identity).build(DatasetPtr<int>()), ValueError);
}

TEST_F(Loader, BatchCanBeMovedOutAndEpochsRunConcurrently) {
  auto loader =
      IntLoaderBuilder(identity).batch_size(3).num_workers(2).shuffle(9).build(range_dataset(30));
  auto first = loader.iter(0);
  auto second = loader.iter(0);
  std::vector<int> a, b;
  for (auto& batch : first) {
    std::vector<int> taken = std::move(batch);
    a.insert(a.end(), taken.begin(), taken.end());
  }
  while (auto batch = second.next()) b.insert(b.end(), batch->begin(), batch->end());
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.size(), 30u);
}

// Issue 19: the item and batch types come from a lambda's or a function's signature.
TEST_F(Loader, DeducesItemAndBatchFromALambdaOrAFunction) {
  auto by_value = DataLoaderBuilder(
      [](std::vector<int> items) { return std::accumulate(items.begin(), items.end(), 0L); });
  static_assert(std::is_same_v<decltype(by_value), DataLoaderBuilder<int, long>>);
  auto sums = by_value.batch_size(4).build(range_dataset(10));
  std::vector<long> got;
  for (auto& s : sums.iter(0)) got.push_back(s);
  EXPECT_EQ(got, (std::vector<long>{0 + 1 + 2 + 3, 4 + 5 + 6 + 7, 8 + 9}));

  auto by_ref =
      DataLoaderBuilder([](const std::vector<int>& items) -> std::size_t { return items.size(); });
  static_assert(std::is_same_v<decltype(by_ref), DataLoaderBuilder<int, std::size_t>>);
  auto sizes = by_ref.batch_size(4).drop_last().build(range_dataset(10));
  EXPECT_EQ(sizes.iter(0).next().value(), 4u);

  auto from_function = DataLoaderBuilder(identity);
  static_assert(std::is_same_v<decltype(from_function), IntLoaderBuilder>);
  EXPECT_EQ(flatten(run_epoch(from_function.batch_size(3).build(range_dataset(5)), 0)),
            (std::vector<int>{0, 1, 2, 3, 4}));
}
