// The value-check policy (ember/backend/core.hpp, ember/tensor/ops/value_check.hpp): on a
// backend that defers value checks to its device (here a decorator of Cpu, built on the
// generated Forward, that accepts every check and records it), the front end never reads the
// values back and hands the check over, naming the op; on the CPU the same calls fail at once
// with the op's own error.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ember/backend/forward.hpp"
#include "ember/cpu/cpu.hpp"
#include "ember/tensor/loss.hpp"
#include "ember/tensor/module/nn.hpp"
#include "ember/tensor/tensor.hpp"

namespace ember::test {
namespace {

struct DeferringTypes {
  using FloatTensor = CpuTensor;
  using IntTensor = CpuTensor;
  using BoolTensor = CpuTensor;
  using Device = CpuDevice;
  static constexpr bool forward_float = true;
};

/// Cpu whose value checks are "queued": recorded with the number of bad elements, never
/// thrown; into_data calls are counted.
struct Deferring : Forward<Cpu, DeferringTypes, Deferring> {
  using Device = CpuDevice;
  using FloatTensor = CpuTensor;
  using IntTensor = CpuTensor;
  using BoolTensor = CpuTensor;
  static std::string name() { return "deferring_cpu"; }

  struct Check {
    std::string op;
    std::int64_t bad;
  };
  static std::vector<Check>& checks() {
    static std::vector<Check> c;
    return c;
  }
  static bool bool_check_none(const CpuTensor& bad, const char* op) {
    // A device would run this itself; the test counts the bad elements to see the mask.
    const auto v = Cpu::bool_into_data(bad).to_vec<std::uint8_t>();
    std::int64_t n = 0;
    for (auto b : v) n += b != 0;
    checks().push_back({op, n});
    return true;
  }
};
static_assert(Backend<Deferring>);

TEST(ValueChecks, DeferredOnABackendThatQueuesThem) {
  using B = Deferring;
  Deferring::checks().clear();
  const auto x = Tensor<B, 2>::from_floats({{1, 2, 3}, {4, 5, 6}});
  // An out-of-range index: handed over (one bad element), no error here.
  const auto idx = Tensor<B, 1, Int>::from_ints({0, 7});
  EXPECT_NO_THROW((void)x.select(1, Tensor<B, 1, Int>::from_ints({0, 2})));
  const auto w = Tensor<B, 2>::from_floats({{1, 1}, {2, 2}, {3, 3}});
  EXPECT_NO_THROW((void)module::embedding(w, Tensor<B, 1, Int>::from_ints({0, 3, 5})));
  EXPECT_NO_THROW((void)loss::cross_entropy_with_logits(x, Tensor<B, 1, Int>::from_ints({2, 9})));
  const auto& c = Deferring::checks();
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[0].op, "select");
  EXPECT_EQ(c[0].bad, 0);
  EXPECT_EQ(c[1].op, "embedding");
  EXPECT_EQ(c[1].bad, 2);
  EXPECT_EQ(c[2].op, "cross_entropy_with_logits");
  EXPECT_EQ(c[2].bad, 1);
  (void)idx;
}

TEST(ValueChecks, EagerOnTheCpu) {
  using B = Cpu;
  const auto x = Tensor<B, 2>::from_floats({{1, 2, 3}, {4, 5, 6}});
  EXPECT_THROW((void)x.select(1, Tensor<B, 1, Int>::from_ints({0, 7})), ShapeError);
  const auto w = Tensor<B, 2>::from_floats({{1, 1}, {2, 2}, {3, 3}});
  try {
    (void)module::embedding(w, Tensor<B, 1, Int>::from_ints({0, 3, 5}));
    FAIL() << "no error";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("index 3 (at flat position 1"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW((void)loss::cross_entropy_with_logits(x, Tensor<B, 1, Int>::from_ints({2, 9})),
               ValueError);
}

}  // namespace
}  // namespace ember::test
