// What a quantized layer derives from its stored tensors (nn::DerivedCache): the int8
// weight is packed once per stored value, not on every forward; replacing, loading or moving
// the tensors gives a fresh entry; copies share it; results equal a freshly packed
// QuantizedLinear exactly.
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "ember/cpu/cpu.hpp"
#include "ember/module/derived_cache.hpp"
#include "ember/quant/quantize.hpp"
#include "fixtures.hpp"

using namespace ember;

TEST(DerivedCache, ComputesOncePerKeyAndType) {
  nn::DerivedCache cache;
  int made = 0;
  const auto make = [&] {
    ++made;
    return std::string("packed");
  };
  const auto a = cache.get<std::string>({1, 2}, make);
  const auto b = cache.get<std::string>({1, 2}, make);
  EXPECT_EQ(a.get(), b.get());
  EXPECT_EQ(made, 1);
  // Another key or another type is another entry.
  const auto c = cache.get<std::string>({1, 3}, make);
  EXPECT_NE(a.get(), c.get());
  EXPECT_EQ(*cache.get<int>({1, 2}, [] { return 7; }), 7);
  EXPECT_EQ(made, 2);
  EXPECT_EQ(cache.size(), 3u);
}

TEST(DerivedCache, KeepsTheMostRecentEntriesAndNothingOnError) {
  nn::DerivedCache cache;
  for (std::uint64_t k = 0; k < nn::DerivedCache::kCapacity + 2; ++k)
    (void)cache.get<std::uint64_t>({k}, [k] { return k; });
  EXPECT_EQ(cache.size(), nn::DerivedCache::kCapacity);
  int made = 0;
  // The newest is kept, the oldest recomputed.
  (void)cache.get<std::uint64_t>({nn::DerivedCache::kCapacity + 1}, [&] { return ++made; });
  EXPECT_EQ(made, 0);
  (void)cache.get<std::uint64_t>({0}, [&] { return ++made; });
  EXPECT_EQ(made, 1);
  EXPECT_THROW((void)cache.get<int>({99}, []() -> int { throw std::runtime_error("no"); }),
               std::runtime_error);
  EXPECT_EQ(*cache.get<int>({99}, [] { return 5; }), 5);
}

TEST(DerivedCache, MakeMayUseTheCache) {
  // A packed weight is made from the checked one, through the same cache.
  nn::DerivedCache cache;
  const auto outer = cache.get<std::string>({1}, [&] {
    return *cache.get<std::string>({1, 1}, [] { return std::string("inner"); }) + "+outer";
  });
  EXPECT_EQ(*outer, "inner+outer");
  EXPECT_EQ(cache.size(), 2u);
}

TEST(QuantCache, LinearPacksOncePerStoredValue) {
  const auto fc = nn::LinearConfig{.d_input = 48, .d_output = 24}.init<Cpu>();
  const auto q = quant::quantize(fc, {.weights = QuantScheme::int8().per_channel(0)});
  const auto x = Tensor<Cpu, 2>::random({5, 48}, Distribution::normal(0, 1));
  const auto p1 = q.qweight->packed_linear();
  EXPECT_EQ(q.qweight->packed_linear().get(), p1.get());
  // A copy shares the packed weight (it shares the tensors).
  const auto copy = q;
  EXPECT_EQ(copy.qweight->packed_linear().get(), p1.get());
  // The layer's forward equals a QuantizedLinear packed from scratch, exactly, every call.
  const auto fresh = QuantizedLinear<Cpu>(q.qweight->qtensor(), q.bias->val());
  const auto want = fresh.forward(x).into_data();
  test::expect_eq(q.forward(x).into_data(), want);
  test::expect_eq(q.forward(x).into_data(), want);
  EXPECT_EQ(q.qweight->packed_linear().get(), p1.get());
  // Replacing the integers gives a new packed weight and new results.
  auto changed = q;
  changed.qweight->values.set(q.qweight->values.val().neg());
  EXPECT_NE(changed.qweight->packed_linear().get(), p1.get());
  const auto neg = QuantizedLinear<Cpu>(changed.qweight->qtensor(), q.bias->val());
  test::expect_eq(changed.forward(x).into_data(), neg.forward(x).into_data());
  // The original still uses its own.
  test::expect_eq(q.forward(x).into_data(), want);
  EXPECT_EQ(q.qweight->packed_linear().get(), p1.get());
  // So do a moved copy and a loaded model.
  const auto moved = q.to_device(CpuDevice{});
  EXPECT_NE(moved.qweight->packed_linear().get(), p1.get());
  test::expect_eq(moved.forward(x).into_data(), want);
}

TEST(QuantCache, LoadingReplacesTheDerivedData) {
  const auto fc = nn::LinearConfig{.d_input = 40, .d_output = 8}.init<Cpu>();
  const auto other = nn::LinearConfig{.d_input = 40, .d_output = 8}.init<Cpu>();
  const auto qa = quant::quantize(fc, {}), qb = quant::quantize(other, {});
  const auto x = Tensor<Cpu, 2>::random({3, 40}, Distribution::normal(0, 1));
  const auto dir = std::filesystem::temp_directory_path() / "ember_quant_tests";
  std::filesystem::create_directories(dir);
  const auto path = dir / "cache.safetensors";
  quant::save(qb, path);
  auto m = qa;
  (void)m.forward(x);  // packs qa's weight
  nn::load(m, path);   // same layer object, qb's tensors
  test::expect_eq(m.forward(x).into_data(), qb.forward(x).into_data());
}

TEST(QuantCache, ConcurrentForwardsAgree) {
  const auto fc = nn::LinearConfig{.d_input = 64, .d_output = 32}.init<Cpu>();
  const auto q = quant::quantize(fc, {});
  const auto x = Tensor<Cpu, 2>::random({4, 64}, Distribution::normal(0, 1));
  const auto want = QuantizedLinear<Cpu>(q.qweight->qtensor(), q.bias->val())
                        .forward(x)
                        .into_data()
                        .to_vec<float>();
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 5; ++i)
        if (q.forward(x).into_data().to_vec<float>() != want) ++bad;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(bad.load(), 0);
}

TEST(QuantCache, ConvChecksItsScalesOnce) {
  const auto conv = nn::Conv2dConfig{.channels = {2, 4}, .kernel_size = {3, 3}}.init<Cpu>();
  const auto q = quant::quantize(conv, {});
  const auto c1 = q.qweight->checked();
  EXPECT_EQ(q.qweight->checked().get(), c1.get());
  const auto x = Tensor<Cpu, 4>::random({1, 2, 6, 6}, Distribution::normal(0, 1));
  test::expect_eq(q.forward(x).into_data(),
                  module::conv2d(x, q.qweight->dequantize<4>(), q.bias->val()).into_data());
  EXPECT_EQ(q.qweight->checked().get(), c1.get());
}
