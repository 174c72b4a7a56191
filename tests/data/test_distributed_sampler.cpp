// DistributedSampler: PyTorch's sharding (padding, drop_last, rank-strided positions), the
// same order as a shuffled DataLoader with one replica, a new order each epoch, and global
// batches equal to one process's batches of the summed batch size.
#include <gtest/gtest.h>

#include <numeric>
#include <set>

#include "ember/data/loader.hpp"

using namespace ember;
using namespace ember::data;

namespace {

DatasetPtr<int> range_dataset(int n) {
  std::vector<int> v(static_cast<std::size_t>(n));
  std::iota(v.begin(), v.end(), 0);
  return std::make_shared<InMemoryDataset<int>>(v);
}

using Loader = DataLoader<int, std::vector<int>>;
using Builder = DataLoaderBuilder<int, std::vector<int>>;

std::vector<std::vector<int>> batches(const Loader& loader, std::size_t epoch) {
  std::vector<std::vector<int>> out;
  auto e = loader.iter(epoch);
  while (auto b = e.next()) out.push_back(*b);
  return out;
}

std::vector<int> identity(std::vector<int> v) {
  return v;
}

TEST(DistributedSampler, ShardsPadAndDropLikePyTorch) {
  // len 10, 3 replicas: 4 each, positions 10 and 11 repeat positions 0 and 1.
  DistributedSampler s0{.num_replicas = 3, .rank = 0, .shuffle = false};
  DistributedSampler s1 = s0, s2 = s0;
  s1.rank = 1;
  s2.rank = 2;
  EXPECT_EQ(s0.indices(10, 0), (std::vector<std::size_t>{0, 3, 6, 9}));
  EXPECT_EQ(s1.indices(10, 0), (std::vector<std::size_t>{1, 4, 7, 0}));
  EXPECT_EQ(s2.indices(10, 0), (std::vector<std::size_t>{2, 5, 8, 1}));
  s0.drop_last = s1.drop_last = s2.drop_last = true;
  EXPECT_EQ(s0.indices(10, 0), (std::vector<std::size_t>{0, 3, 6}));
  EXPECT_EQ(s2.indices(10, 0), (std::vector<std::size_t>{2, 5, 8}));
  EXPECT_EQ(s1.num_samples(10), 3u);
  // More replicas than items: padding wraps around.
  const DistributedSampler tiny{.num_replicas = 4, .rank = 3, .shuffle = false};
  EXPECT_EQ(tiny.indices(2, 0), (std::vector<std::size_t>{1}));
}

TEST(DistributedSampler, ShuffledShardsCoverTheDatasetAndChangePerEpoch) {
  const std::size_t len = 103;
  for (std::size_t epoch : {0u, 1u}) {
    std::multiset<std::size_t> all;
    for (std::size_t r = 0; r < 4; ++r) {
      const DistributedSampler s{.num_replicas = 4, .rank = r, .seed = 7};
      const auto idx = s.indices(len, epoch);
      EXPECT_EQ(idx.size(), 26u);
      all.insert(idx.begin(), idx.end());
    }
    EXPECT_EQ(all.size(), 104u);
    for (std::size_t i = 0; i < len; ++i) EXPECT_GE(all.count(i), 1u) << i;
  }
  const DistributedSampler s{.num_replicas = 2, .rank = 1, .seed = 7};
  EXPECT_NE(s.indices(len, 0), s.indices(len, 1));
  EXPECT_EQ(s.indices(len, 3), s.indices(len, 3));
}

TEST(DistributedSampler, OneReplicaReadsWhatAShuffledLoaderReads) {
  const auto ds = range_dataset(50);
  const Loader plain = Builder(identity).batch_size(8).shuffle(11).build(ds);
  const Loader one =
      Builder(identity).batch_size(8).sampler({.num_replicas = 1, .rank = 0, .seed = 11}).build(ds);
  EXPECT_EQ(batches(plain, 2), batches(one, 2));
}

TEST(DistributedSampler, RankBatchesTogetherAreTheGlobalBatch) {
  const auto ds = range_dataset(64 * 3 + 10);
  const Loader global = Builder(identity).batch_size(64).shuffle(5).build(ds);
  std::vector<Loader> ranks;
  for (std::size_t r = 0; r < 2; ++r) {
    ranks.push_back(Builder(identity)
                        .batch_size(32)
                        .sampler({.num_replicas = 2, .rank = r, .seed = 5})
                        .build(ds));
  }
  EXPECT_EQ(ranks[0].num_batches(), global.num_batches());
  const auto g = batches(global, 1), a = batches(ranks[0], 1), b = batches(ranks[1], 1);
  ASSERT_EQ(a.size(), g.size());
  for (std::size_t k = 0; k < g.size(); ++k) {
    std::multiset<int> want(g[k].begin(), g[k].end()), got(a[k].begin(), a[k].end());
    got.insert(b[k].begin(), b[k].end());
    if (k + 1 < g.size()) {
      EXPECT_EQ(got, want) << "batch " << k;
    } else {
      EXPECT_EQ(got.size(), want.size()) << "the last batch (no padding needed: 202 is even)";
    }
  }
}

TEST(DistributedSampler, BadSettingsAreValueErrors) {
  const auto ds = range_dataset(10);
  EXPECT_THROW(Builder(identity).sampler({.num_replicas = 2, .rank = 2}).build(ds), ValueError);
  EXPECT_THROW(Builder(identity).sampler({.num_replicas = 0}).build(ds), ValueError);
  EXPECT_THROW(Builder(identity).shuffle(1).sampler({.num_replicas = 2}).build(ds), ValueError);
}

}  // namespace
