// Accuracy of the f32 polynomial approximations (exp, log, log1p, tanh, erf) against the
// f64 std:: functions rounded to f32, over a sweep of the whole f32 range plus extremes,
// subnormals, NaN and +-Inf. Checks both the vectorised tensor path and the scalar functor.
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string_view>
#include <vector>

#if EMBER_DISPATCH_VULKAN
#include "ember/gpu/vulkan.hpp"
#endif

#include "backends.hpp"
#include "ember/ir/scalar.hpp"
#include "fixtures.hpp"

using namespace ember;

namespace {

/// Distance in units in the last place between two floats (0 when both NaN; huge when
/// only one is NaN).
std::int64_t ulp_diff(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return (std::isnan(a) && std::isnan(b)) ? 0 : (1LL << 40);
  auto key = [](float f) {
    const std::int32_t i = std::bit_cast<std::int32_t>(f);
    return i < 0 ? static_cast<std::int64_t>(std::numeric_limits<std::int32_t>::min()) - i
                 : static_cast<std::int64_t>(i);
  };
  const std::int64_t d = key(a) - key(b);
  return d < 0 ? -d : d;
}

std::vector<float> sweep() {
  std::vector<float> v;
  for (std::uint64_t u = 0; u < (1ULL << 32); u += 2053) {
    const float f = std::bit_cast<float>(static_cast<std::uint32_t>(u));
    if (!std::isnan(f)) v.push_back(f);
  }
  const float inf = std::numeric_limits<float>::infinity();
  for (float f : {0.0f,
                  -0.0f,
                  inf,
                  -inf,
                  std::numeric_limits<float>::quiet_NaN(),
                  std::numeric_limits<float>::denorm_min(),
                  std::numeric_limits<float>::min(),
                  std::numeric_limits<float>::max(),
                  -std::numeric_limits<float>::max(),
                  88.72f,
                  88.73f,
                  -87.33f,
                  -103.9f,
                  -104.0f,
                  -1.0f,
                  1.0f,
                  0.625f,
                  -0.625f,
                  4.0f,
                  -4.0f})
    v.push_back(f);
  // dense near the interesting ranges
  for (int i = -20000; i <= 20000; ++i) v.push_back(static_cast<float>(i) * 0.005f);
  return v;
}

/// False on a GPU device that may flush f32 subnormals to zero (NVIDIA's Vulkan driver):
/// subnormal inputs and results are then left out of the tensor path's check, as in the
/// kernel tests (docs/gpu.md, "Numerics").
template <class B>
bool keeps_subnormals() {
  if constexpr (requires { typename B::Device::runtime_type; }) {
    return B::Device::runtime_type::device(0).properties().denormals;
  } else if constexpr (std::is_same_v<B, ember::Dispatch>) {
#if EMBER_DISPATCH_VULKAN
    const ember::Device d = ember::Device::default_();
    if (d.kind() == ember::DeviceKind::Vulkan)
      return ember::VulkanRuntime::device(d.index()).properties().denormals;
#endif
    return true;
  } else {
    return true;
  }
}

/// Extra ulp for the tensor path on Vulkan devices: Vulkan's f32 division is not correctly
/// rounded (up to 3 ulp, docs/gpu.md "Numerics"), which the polynomials' quotients inherit
/// (NVIDIA's driver: erf 7 ulp at x = 2.95).
template <class B>
std::int64_t driver_slack() {
  if constexpr (requires { typename B::Device::runtime_type; })
    return std::string_view(B::Device::runtime_type::name) == "vulkan" ? 2 : 0;
  else if constexpr (std::is_same_v<B, ember::Dispatch>)
    return ember::Device::default_().kind() == ember::DeviceKind::Vulkan ? 2 : 0;
  else
    return 0;
}

bool subnormal(float f) {
  return f != 0 && std::fabs(f) < std::numeric_limits<float>::min();
}

template <class B, class TensorFn, class ScalarFn, class RefFn>
void check(TensorFn tfn, ScalarFn sfn, RefFn ref, std::int64_t max_ulp, float lo, float hi) {
  const bool subnormals = keeps_subnormals<B>();
  std::vector<float> xs;
  for (float f : sweep())
    if (std::isnan(f) || (f >= lo && f <= hi) || std::isinf(f))
      if (subnormals || (!subnormal(f) && !subnormal(static_cast<float>(ref(f))))) xs.push_back(f);
  const auto n = static_cast<std::int64_t>(xs.size());
  auto t = Tensor<B, 1>::from_data(TensorData(xs, Shape{n}));
  const std::vector<float> got = tfn(t).template to_vec<float>();
  std::int64_t worst = 0, worst_s = 0;
  float worst_x = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const float want = static_cast<float>(ref(static_cast<double>(xs[i])));
    const std::int64_t d = ulp_diff(got[i], want);
    if (d > worst) {
      worst = d;
      worst_x = xs[i];
    }
    worst_s = std::max(worst_s, ulp_diff(sfn(xs[i]), want));
  }
  EXPECT_LE(worst, max_ulp + driver_slack<B>()) << "tensor path, worst at x = " << worst_x;
  EXPECT_LE(worst_s, max_ulp) << "scalar path";
}

}  // namespace

template <class B>
class ElementwiseAccuracy : public ::testing::Test {};
TYPED_TEST_SUITE(ElementwiseAccuracy, ember::test::ConformanceBackends, ember::test::BackendNames);

TYPED_TEST(ElementwiseAccuracy, ExpWithin2Ulp) {
  check<TypeParam>([](const auto& t) { return t.exp(); }, scalar::exp_f32,
                   [](double x) { return std::exp(x); }, 2, -1e30f, 1e30f);
}
TYPED_TEST(ElementwiseAccuracy, LogWithin2Ulp) {
  check<TypeParam>([](const auto& t) { return t.log(); }, scalar::log_f32,
                   [](double x) { return std::log(x); }, 2, -1e30f, 3.4e38f);
}
TYPED_TEST(ElementwiseAccuracy, Log1pWithin4Ulp) {
  check<TypeParam>([](const auto& t) { return t.log1p(); }, scalar::log1p_f32,
                   [](double x) { return std::log1p(x); }, 4, -2.0f, 3.4e38f);
}
TYPED_TEST(ElementwiseAccuracy, TanhWithin4Ulp) {
  check<TypeParam>([](const auto& t) { return t.tanh(); }, scalar::tanh_f32,
                   [](double x) { return std::tanh(x); }, 4, -1e30f, 1e30f);
}
TYPED_TEST(ElementwiseAccuracy, ErfWithin6Ulp) {
  check<TypeParam>([](const auto& t) { return t.erf(); }, scalar::erf_f32,
                   [](double x) { return std::erf(x); }, 6, -1e30f, 1e30f);
}

// expm1 (added with the op-description redesign): <= 4 ulp in f32 against the f64 libm
// expm1 over the sweep, exact where exp(x) - 1 loses everything, and the f64 path.
TYPED_TEST(ElementwiseAccuracy, Expm1Within4Ulp) {
  check<TypeParam>([](const auto& t) { return t.expm1(); },
                   [](float x) { return ir::op::Expm1{}(x); },
                   [](double x) { return std::expm1(x); }, 4, -1e30f, 1e30f);
}
TYPED_TEST(ElementwiseAccuracy, Expm1SmallArgumentsAndLimits) {
  using B = TypeParam;
  const float inf = std::numeric_limits<float>::infinity();
  const auto got = Tensor<B, 1>::from_floats({0.0, 1e-10, -1e-10, 1.0, -200.0, 100.0})
                       .expm1()
                       .template to_vec<float>();
  EXPECT_EQ(got[0], 0.0f);
  EXPECT_EQ(got[1], 1e-10f);  // exp(x) - 1 would give 0
  EXPECT_EQ(got[2], -1e-10f);
  EXPECT_NEAR(got[3], 1.7182817f, 2e-7f);
  EXPECT_EQ(got[4], -1.0f);
  EXPECT_EQ(got[5], inf);
  const auto special =
      Tensor<B, 1>::from_floats({static_cast<double>(-inf), static_cast<double>(inf), std::nan("")})
          .expm1()
          .template to_vec<float>();
  EXPECT_EQ(special[0], -1.0f);
  EXPECT_EQ(special[1], inf);
  EXPECT_TRUE(std::isnan(special[2]));
  const auto d = Tensor<B, 1>::from_floats({1e-300, 0.5}, typename B::Device{}, DType::F64)
                     .expm1()
                     .template to_vec<double>();
  EXPECT_EQ(d[0], 1e-300);
  EXPECT_DOUBLE_EQ(d[1], std::expm1(0.5));
}
