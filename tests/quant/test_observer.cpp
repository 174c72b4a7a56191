// Calibration observers (ember/quant/observer.hpp): ranges by hand, parameters equal to
// quantizing everything seen at once, and the errors of bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "ember/cpu/cpu.hpp"
#include "ember/dispatch/dispatch.hpp"
#include "ember/quant/observer.hpp"
#include "fixtures.hpp"

using namespace ember;
using quant::Observer;
using quant::ObserverConfig;
using quant::ObserverKind;

namespace {

Tensor<Cpu, 2> t2(std::vector<float> v, std::int64_t rows) {
  const auto cols = static_cast<std::int64_t>(v.size()) / rows;
  return Tensor<Cpu, 2>::from_data(TensorData(std::move(v), Shape{rows, cols}));
}

std::vector<float> vec(const Tensor<Cpu, 1>& t) {
  return t.to_vec<float>();
}

}  // namespace

TEST(Observer, MinMaxEqualsQuantizingEverythingAtOnce) {
  const auto a = Tensor<Cpu, 2>::random({4, 6}, Distribution::normal(0.5, 2.0));
  const auto b = Tensor<Cpu, 2>::random({3, 6}, Distribution::normal(-1.0, 3.0));
  const auto all = Tensor<Cpu, 2>::cat({a, b}, 0);
  for (const QuantScheme& s : {QuantScheme::int8().affine(), QuantScheme::int8().per_channel(1),
                               QuantScheme::int4().affine().per_channel(-1)}) {
    SCOPED_TRACE(s.to_string());
    Observer<Cpu> obs(s);
    obs.observe(a);
    obs.observe(b);
    EXPECT_EQ(obs.batches(), 2);
    const auto want = all.quantize(s);
    const auto [scales, zp] = obs.params<2>(all.shape());
    test::expect_eq(scales.into_data(), want.scales().into_data());
    ASSERT_EQ(zp.has_value(), want.zero_points().has_value());
    if (zp) test::expect_eq(zp->into_data(), want.zero_points()->into_data());
    // quantize() with the observer's parameters: the same integers for every batch.
    test::expect_eq(obs.quantize(b).values().into_data(),
                    quantize(b, s, scales, zp).values().into_data());
  }
}

TEST(Observer, MinMaxRangeByHand) {
  Observer<Cpu> obs(QuantScheme::int8().affine().per_channel(1));
  obs.observe(t2({1, -2, 3, 0.5f}, 2));     // columns {1, 3}, {-2, 0.5}
  obs.observe(t2({-4, 1, 2, 7, 0, 0}, 3));  // columns {-4, 2, 0}, {1, 7, 0}
  const auto [lo, hi] = obs.range();
  EXPECT_EQ(vec(lo), (std::vector<float>{-4, -2}));
  EXPECT_EQ(vec(hi), (std::vector<float>{3, 7}));
  // Affine int8, column 0: scale (3 - -4) / 255, zero point -128 - round(-4 / scale).
  const auto [s, z] = obs.params<2>(Shape{5, 2});
  const float s0 = 7.0f / 255.0f;
  EXPECT_FLOAT_EQ(s.to_vec<float>()[0], s0);
  EXPECT_EQ(z->to_vec<std::int64_t>()[0],
            -128 - static_cast<std::int64_t>(std::nearbyint(-4.0f / s0)));
}

TEST(Observer, MovingAverageByHand) {
  Observer<Cpu> obs(QuantScheme::int8().affine(),
                    {.kind = ObserverKind::MovingAverage, .averaging_constant = 0.5});
  obs.observe(t2({-1, 2}, 1));
  obs.observe(t2({-3, 4}, 1));
  obs.observe(t2({-3, 4}, 1));
  const auto [lo, hi] = obs.range();
  // lo: -1, then -1 + 0.5 (-3 + 1) = -2, then -2 + 0.5 (-3 + 2) = -2.5; hi: 2, 3, 3.5.
  EXPECT_EQ(vec(lo), (std::vector<float>{-2.5f}));
  EXPECT_EQ(vec(hi), (std::vector<float>{3.5f}));
}

TEST(Observer, PercentileIgnoresOutliers) {
  std::vector<float> v;
  for (int i = 0; i <= 100; ++i) v.push_back(static_cast<float>(i));
  v[57] = 1e4f;  // an outlier: the sorted values are 0..56, 58..100, 1e4
  Observer<Cpu> obs(QuantScheme::int8(), {.kind = ObserverKind::Percentile, .percentile = 99.0});
  obs.observe(t2(v, 1));
  // 101 values: ranks floor(100 * 0.01) = 1 and floor(100 * 0.99) = 99.
  auto [lo, hi] = obs.range();
  EXPECT_EQ(vec(lo), (std::vector<float>{1}));
  EXPECT_EQ(vec(hi), (std::vector<float>{100}));
  for (float& x : v) x *= 2;
  obs.observe(t2(v, 1));
  std::tie(lo, hi) = obs.range();  // the mean of the batches' percentiles
  EXPECT_EQ(vec(lo), (std::vector<float>{1.5f}));
  EXPECT_EQ(vec(hi), (std::vector<float>{150}));
  // Symmetric int8: scale max(|lo|, |hi|) / 127.5 with lo, hi widened to contain 0.
  EXPECT_FLOAT_EQ(obs.params<2>(Shape{3, 4}).first.to_vec<float>()[0], 150.0f / 127.5f);
}

TEST(Observer, BlocksWithF16Scales) {
  const QuantScheme s = QuantScheme::int4().affine().per_block(4).with_f16_scales();
  const auto x = Tensor<Cpu, 2>::random({3, 8}, Distribution::uniform(-5, 3));
  Observer<Cpu> obs(s);
  obs.observe(x);
  const auto want = x.quantize(s);
  const auto got = obs.quantize(x);
  EXPECT_EQ(got.scales().dtype(), DType::F16);
  test::expect_eq(got.scales().into_data(), want.scales().into_data());
  test::expect_eq(got.values().into_data(), want.values().into_data());
}

TEST(Observer, OnDispatch) {
  const auto x = Tensor<Cpu, 2>::random({5, 3}, Distribution::normal(0, 1));
  Observer<Dispatch> obs(QuantScheme::int8().affine().per_channel(1));
  obs.observe(Tensor<Dispatch, 2>::from_data(x.into_data()));
  const auto want = x.quantize(QuantScheme::int8().affine().per_channel(1));
  test::expect_eq(obs.params<2>(x.shape()).first.into_data(), want.scales().into_data());
}

TEST(ObserverErrors, BadInput) {
  EXPECT_THROW(Observer<Cpu>(QuantScheme::int8(),
                             {.kind = ObserverKind::MovingAverage, .averaging_constant = 0.0}),
               ValueError);
  EXPECT_THROW(
      Observer<Cpu>(QuantScheme::int8(), {.kind = ObserverKind::Percentile, .percentile = 120.0}),
      ValueError);
  EXPECT_THROW(quant::parse_observer_kind("histogram"), ValueError);
  EXPECT_EQ(quant::parse_observer_kind("moving-average"), ObserverKind::MovingAverage);

  Observer<Cpu> obs(QuantScheme::int8().per_channel(1));
  EXPECT_THROW((void)obs.range(), ValueError);  // nothing observed yet
  EXPECT_THROW((void)obs.params<2>(Shape{2, 3}), ValueError);
  EXPECT_THROW(obs.observe(Tensor<Cpu, 2>::zeros({0, 3})), ValueError);  // empty
  EXPECT_THROW(obs.observe(t2({1, std::nanf(""), 2, 3}, 2)), ValueError);
  EXPECT_EQ(obs.batches(), 0);                                 // a refused batch changes nothing
  obs.observe(t2({1, 2, 3, 4, 5, 6}, 2));                      // 3 channels
  EXPECT_THROW(obs.observe(t2({1, 2, 3, 4}, 2)), ShapeError);  // 2 channels
  EXPECT_THROW((void)obs.params<2>(Shape{4, 5}), ShapeError);
  EXPECT_EQ(obs.batches(), 1);

  Observer<Cpu> blocks(QuantScheme::int4().per_block(4));
  EXPECT_THROW(blocks.observe(Tensor<Cpu, 2>::ones({2, 6})), ShapeError);  // 4 does not divide 6
}

TEST(ActivationQuant, FromRangeByHand) {
  // [-1, 3]: scale 4 / 255, zero point round(1 / scale) = round(63.75) = 64.
  const auto a = ActivationQuant::from_range(-1.0f, 3.0f);
  EXPECT_FLOAT_EQ(a.scale, 4.0f / 255.0f);
  EXPECT_EQ(a.zero_point, 64);
  // The range is widened to contain 0.
  const auto pos = ActivationQuant::from_range(2.0f, 5.1f);
  EXPECT_FLOAT_EQ(pos.scale, 5.1f / 255.0f);
  EXPECT_EQ(pos.zero_point, 0);
  const auto neg = ActivationQuant::from_range(-6.0f, -1.0f);
  EXPECT_EQ(neg.zero_point, 255);
  // A constant zero input: the smallest scale (f32 epsilon).
  EXPECT_EQ(ActivationQuant::from_range(0.0f, 0.0f).scale, std::numeric_limits<float>::epsilon());
  EXPECT_EQ(a.to_string(), "u8 affine per-tensor (scale=0.0156862754, zero_point=64)");
  EMBER_EXPECT_THROW_MSG((void)ActivationQuant::from_range(2.0f, 1.0f), ValueError,
                         "[calibrate] invalid activation range [2, 1]");
  EXPECT_THROW((void)ActivationQuant::from_range(std::nanf(""), 1.0f), ValueError);
  EMBER_EXPECT_THROW_MSG((void)ActivationQuant::from_range(-3e38f, 3e38f), ValueError,
                         "overflows the f32 scale");
}

TEST(ActivationObserver, SameRangesAsTheTensorObserver) {
  // The host observer on whole tensors gives the per-tensor Observer's range for every kind.
  const auto a = Tensor<Cpu, 2>::random({8, 50}, Distribution::normal(0.5, 2.0));
  const auto b = Tensor<Cpu, 2>::random({8, 50}, Distribution::normal(-1.0, 3.0));
  for (const ObserverConfig& c :
       {ObserverConfig{}, ObserverConfig{.kind = ObserverKind::MovingAverage},
        ObserverConfig{.kind = ObserverKind::Percentile, .percentile = 99.0}}) {
    quant::ActivationObserver host(c);
    Observer<Cpu> dev(QuantScheme::int8().affine(), c);
    for (const auto& t : {a, b, a}) {
      host.observe(t.into_data());
      dev.observe(t);
    }
    EXPECT_EQ(host.batches(), 3);
    const auto [lo, hi] = dev.range();
    const auto [hlo, hhi] = host.range();
    EXPECT_NEAR(hlo, vec(lo)[0], 1e-6 * std::abs(hlo));
    EXPECT_NEAR(hhi, vec(hi)[0], 1e-6 * std::abs(hhi));
    // The u8 parameters are the int8 affine ones with the zero point moved by 128.
    const auto q = host.quant();
    const auto [s, z] = dev.params<2>(a.shape());
    EXPECT_NEAR(q.scale, s.to_vec<float>()[0], 1e-6f * q.scale);
    EXPECT_NEAR(q.zero_point, z->to_vec<std::int64_t>()[0] + 128, 1);
  }
}

TEST(ActivationObserver, MinMaxByHandAndErrors) {
  quant::ActivationObserver obs;
  EMBER_EXPECT_THROW_MSG((void)obs.quant(), ValueError, "the observer has seen no batch");
  obs.observe(TensorData(std::vector<float>{0.5f, 2.0f, -1.0f}, Shape{3}));
  obs.observe(TensorData(std::vector<double>{3.0, 0.0}, Shape{2}));  // f64 too
  EXPECT_EQ(obs.range(), (std::pair<float, float>{-1.0f, 3.0f}));
  EXPECT_EQ(obs.quant(), ActivationQuant::from_range(-1.0f, 3.0f));
  EMBER_EXPECT_THROW_MSG(obs.observe(TensorData(std::vector<float>{1.0f, std::nanf("")}, Shape{2})),
                         ValueError, "the batch contains NaN");
  EMBER_EXPECT_THROW_MSG(obs.observe(TensorData(std::vector<std::int32_t>{1, 2}, Shape{2})),
                         DTypeError, "cannot be calibrated (float inputs only)");
  EMBER_EXPECT_THROW_MSG(obs.observe(TensorData(std::vector<float>{}, Shape{0})), ValueError,
                         "has no range");
  EXPECT_EQ(obs.batches(), 2);  // the failed batches left it as it was
  EMBER_EXPECT_THROW_MSG(
      quant::ActivationObserver({.kind = ObserverKind::Percentile, .percentile = 20}), ValueError,
      "percentile must be in [50, 100], got 20");
}
