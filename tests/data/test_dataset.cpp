// Datasets: in-memory, mapped, partial, random split, shuffled, composed, sampler, windows,
// and the seeded generator under them.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <string>

#include "ember/data/dataset.hpp"
#include "ember/data/rng.hpp"

using namespace ember;
using namespace ember::data;

namespace {

DatasetPtr<int> range_dataset(int n) {
  std::vector<int> v(static_cast<std::size_t>(n));
  std::iota(v.begin(), v.end(), 0);
  return std::make_shared<InMemoryDataset<int>>(v);
}

std::vector<int> all_items(const Dataset<int>& ds) {
  std::vector<int> out;
  for (std::size_t i = 0; i < ds.len(); ++i) out.push_back(ds.at(i));
  return out;
}

template <class Fn>
std::string value_error(Fn&& f) {
  try {
    f();
  } catch (const ValueError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(Rng, ReproducibleAndMixSeparatesStreams) {
  Rng a(7), b(7), c(8);
  const auto a1 = a(), b1 = b(), c1 = c();
  EXPECT_EQ(a1, b1);
  EXPECT_NE(a1, c1);
  EXPECT_EQ(mix(1, 2), mix(1, 2));
  EXPECT_NE(mix(1, 2), mix(1, 3));
  EXPECT_NE(mix(1, 2), mix(2, 1));
  // splitmix64 reference value: the first output of the sequence seeded with 0
  // (Vigna's splitmix64.c).
  Rng zero(0);
  EXPECT_EQ(zero(), 0xE220A8397B1DCDAFULL);
}

TEST(Rng, BelowIsInRangeAndRoughlyUniform) {
  Rng rng(3);
  std::vector<int> counts(6, 0);
  for (int i = 0; i < 60000; ++i) {
    const auto v = rng.below(6);
    ASSERT_LT(v, 6u);
    ++counts[v];
  }
  for (int c : counts) EXPECT_NEAR(c, 10000, 500);
  EXPECT_EQ(rng.below(0), 0u);
  EXPECT_EQ(rng.below(1), 0u);
  for (int i = 0; i < 1000; ++i) {
    const double u = rng.uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
  }
}

TEST(Rng, PermutationIsAPermutationAndSeeded) {
  const auto p = permutation(100, 5);
  std::vector<std::size_t> sorted = p;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 0; i < 100; ++i) EXPECT_EQ(sorted[i], i);
  EXPECT_EQ(p, permutation(100, 5));
  EXPECT_NE(p, permutation(100, 6));
  EXPECT_TRUE(permutation(0, 1).empty());
}

TEST(Dataset, InMemoryGetAndAt) {
  InMemoryDataset<std::string> ds({"a", "b"});
  EXPECT_EQ(ds.len(), 2u);
  EXPECT_FALSE(ds.empty());
  EXPECT_EQ(*ds.get(1), "b");
  EXPECT_FALSE(ds.get(2).has_value());
  const std::string msg = value_error([&] { ds.at(5); });
  EXPECT_EQ(msg, "[dataset] index 5 is out of range for a dataset of 2 items");
  EXPECT_TRUE(InMemoryDataset<int>({}).empty());
}

TEST(Dataset, MapperAppliesFunctionAndDeducesType) {
  auto base = range_dataset(4);
  auto strings = mapped(base, [](int x) { return std::to_string(x * 10); });
  static_assert(std::is_same_v<decltype(strings)::element_type, MapperDataset<int, std::string>>);
  EXPECT_EQ(strings->len(), 4u);
  EXPECT_EQ(*strings->get(3), "30");
  EXPECT_FALSE(strings->get(4).has_value());
  // From a concrete dataset type.
  auto concrete = std::make_shared<InMemoryDataset<int>>(std::vector<int>{1, 2});
  auto doubled = mapped(concrete, [](int x) { return 2.0 * x; });
  EXPECT_DOUBLE_EQ(*doubled->get(1), 4.0);
  EXPECT_NE(value_error([] { MapperDataset<int, int>(nullptr, [](int x) { return x; }); }), "");
}

TEST(Dataset, PartialRangeAndBounds) {
  auto base = range_dataset(10);
  PartialDataset<int> part(base, 3, 7);
  EXPECT_EQ(all_items(part), (std::vector<int>{3, 4, 5, 6}));
  EXPECT_FALSE(part.get(4).has_value());
  EXPECT_EQ(PartialDataset<int>(base, 10, 10).len(), 0u);
  EXPECT_EQ(value_error([&] { PartialDataset<int>(base, 4, 11); }),
            "[partial_dataset] range [4, 11) is not inside a dataset of 10 items");
  EXPECT_NE(value_error([&] { PartialDataset<int>(base, 5, 4); }), "");
}

TEST(Dataset, ShuffledIsSeededPermutation) {
  auto base = range_dataset(50);
  ShuffledDataset<int> a(base, 1), b(base, 1), c(base, 2);
  const auto ia = all_items(a);
  EXPECT_EQ(ia, all_items(b));
  EXPECT_NE(ia, all_items(c));
  EXPECT_NE(ia, all_items(*base));
  std::vector<int> sorted = ia;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, all_items(*base));
  for (std::size_t i = 0; i < a.len(); ++i) EXPECT_EQ(ia[i], static_cast<int>(a.order()[i]));
}

TEST(Dataset, RandomSplitBySizesIsDisjointAndCovering) {
  auto base = range_dataset(20);
  auto parts = random_split<int>(base, std::vector<std::size_t>{12, 5, 3}, 9);
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[0]->len(), 12u);
  EXPECT_EQ(parts[1]->len(), 5u);
  EXPECT_EQ(parts[2]->len(), 3u);
  std::set<int> seen;
  for (const auto& p : parts) {
    for (int v : all_items(*p)) EXPECT_TRUE(seen.insert(v).second) << v << " in two parts";
  }
  EXPECT_EQ(seen.size(), 20u);
  // Same seed, same split; another seed, another split.
  auto again = random_split<int>(base, std::vector<std::size_t>{12, 5, 3}, 9);
  EXPECT_EQ(all_items(*again[1]), all_items(*parts[1]));
  auto other = random_split<int>(base, std::vector<std::size_t>{12, 5, 3}, 10);
  EXPECT_NE(all_items(*other[0]), all_items(*parts[0]));
  EXPECT_EQ(value_error([&] {
              random_split<int>(base, std::vector<std::size_t>{5, 5}, 1);
            }),
            "[random_split] part sizes add up to 10 but the dataset has 20 items");
}

TEST(Dataset, RandomSplitByFractionsDistributesRemainder) {
  auto base = range_dataset(10);
  // floor(3.33) = 3 each, the remaining 1 goes to the first part (PyTorch's rule).
  auto parts = random_split<int>(base, std::vector<double>{1.0 / 3, 1.0 / 3, 1.0 / 3}, 0);
  EXPECT_EQ(parts[0]->len(), 4u);
  EXPECT_EQ(parts[1]->len(), 3u);
  EXPECT_EQ(parts[2]->len(), 3u);
  auto halves = random_split<int>(base, std::vector<double>{0.8, 0.2}, 0);
  EXPECT_EQ(halves[0]->len(), 8u);
  EXPECT_EQ(halves[1]->len(), 2u);
  EXPECT_EQ(value_error([&] {
              random_split<int>(base, std::vector<double>{0.5, 0.4}, 0);
            }),
            "[random_split] fractions add up to 0.9, expected 1");
  EXPECT_NE(value_error([&] { random_split<int>(base, std::vector<double>{1.5, -0.5}, 0); }), "");
}

TEST(Dataset, ComposedConcatenates) {
  auto a = range_dataset(3);
  auto empty = range_dataset(0);
  auto b = mapped(range_dataset(2), [](int x) { return 100 + x; });
  ComposedDataset<int> ds({a, empty, b});
  EXPECT_EQ(ds.len(), 5u);
  EXPECT_EQ(all_items(ds), (std::vector<int>{0, 1, 2, 100, 101}));
  EXPECT_FALSE(ds.get(5).has_value());
  EXPECT_EQ(ComposedDataset<int>({}).len(), 0u);
  EXPECT_FALSE(ComposedDataset<int>({}).get(0).has_value());
}

TEST(Dataset, SamplerWithReplacementIsSeededAndInRange) {
  auto base = range_dataset(5);
  SamplerDataset<int> s(base, 1000, true, 4);
  EXPECT_EQ(s.len(), 1000u);
  std::map<int, int> counts;
  for (int v : all_items(s)) {
    ASSERT_GE(v, 0);
    ASSERT_LT(v, 5);
    ++counts[v];
  }
  EXPECT_EQ(counts.size(), 5u);
  for (auto [v, c] : counts) EXPECT_NEAR(c, 200, 60) << v;
  EXPECT_EQ(all_items(s), all_items(SamplerDataset<int>(base, 1000, true, 4)));
  EXPECT_NE(all_items(s), all_items(SamplerDataset<int>(base, 1000, true, 5)));
}

TEST(Dataset, SamplerWithoutReplacementCyclesPermutations) {
  auto base = range_dataset(6);
  SamplerDataset<int> s(base, 14, false, 11);
  const auto items = all_items(s);
  ASSERT_EQ(items.size(), 14u);
  // Items 0..5 and 6..11 are each a permutation; 12..13 start a third one.
  for (std::size_t block = 0; block < 2; ++block) {
    std::vector<int> part(items.begin() + 6 * block, items.begin() + 6 * (block + 1));
    std::sort(part.begin(), part.end());
    EXPECT_EQ(part, (std::vector<int>{0, 1, 2, 3, 4, 5}));
  }
  EXPECT_NE(items[12], items[13]);
  EXPECT_EQ(value_error([] { SamplerDataset<int>(range_dataset(0), 3, true, 0); }),
            "[sampler_dataset] cannot draw 3 items from an empty dataset");
  EXPECT_EQ(SamplerDataset<int>(range_dataset(0), 0, false, 0).len(), 0u);
}

TEST(Dataset, WindowsSlide) {
  auto base = range_dataset(5);
  WindowsDataset<int> w(base, 3);
  EXPECT_EQ(w.len(), 3u);
  EXPECT_EQ(*w.get(0), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(*w.get(2), (std::vector<int>{2, 3, 4}));
  EXPECT_FALSE(w.get(3).has_value());
  EXPECT_EQ(WindowsDataset<int>(base, 5).len(), 1u);
  EXPECT_EQ(WindowsDataset<int>(base, 6).len(), 0u);
  EXPECT_EQ(value_error([&] { WindowsDataset<int>(base, 0); }),
            "[windows_dataset] window size must be > 0");
}
