// One case of the PyTorch quantization fixtures (tests/fixtures/gen_quant.py) on backend B:
// scales, zero points and integers exactly, dequantized values within 1e-5.
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "ember/tensor/tensor.hpp"
#include "fixtures.hpp"

namespace ember::test {

template <class B, std::size_t D>
void run_quant_case(const FixtureCase& c, const typename B::Device& device) {
  const QuantScheme scheme = parse_quant_scheme(c.param<std::string>("scheme"));
  const auto x = Tensor<B, D>::from_data(c.tensor("x").convert(DType::F32), device);
  const TensorData want_scales = c.tensor("scales"), want_zp = c.tensor("zero_points");
  const bool given = c.param<bool>("given");
  QTensor<B, D> q = [&] {
    if (!given) return x.quantize(scheme);
    auto scales = Tensor<B, D>::from_data(want_scales, device, scheme.scale_dtype());
    std::optional<Tensor<B, D, Int>> zp;
    if (scheme.mode == QuantMode::Affine)
      zp = Tensor<B, D, Int>::from_data(want_zp, device, DType::I32);
    return quantize(x, scheme, scales, zp);
  }();
  EXPECT_EQ(q.scheme(), scheme);
  EXPECT_EQ(q.shape(), x.shape());
  // Scales and zero points (exactly: both sides compute them in f32).
  expect_approx(q.scales().into_data(), want_scales, Tolerance::rel_abs(0, 0));
  if (scheme.mode == QuantMode::Affine) {
    ASSERT_TRUE(q.zero_points().has_value());
    expect_eq(q.zero_points()->into_data().convert(DType::I64), want_zp);
  } else {
    EXPECT_FALSE(q.zero_points().has_value());
  }
  // Integers exactly: int8 values, or the packed int4 bytes.
  if (scheme.value == QuantValue::Int8) {
    expect_eq(q.values().into_data().convert(DType::I64), c.tensor("q"));
  } else {
    expect_eq(q.values().into_data().convert(DType::I64), c.tensor("packed"));
  }
  // Dequantized values within 1e-5.
  expect_approx(q.dequantize().into_data(), c.tensor("dq"), Tolerance::rel_abs(0, 1e-5));
}

/// Runs the case at its rank on `device` (B's default device when omitted).
template <class B>
void run_quant_fixture(const FixtureCase& c, const typename B::Device& device) {
  switch (c.tensor("x").shape().rank()) {
    case 1:
      return run_quant_case<B, 1>(c, device);
    case 2:
      return run_quant_case<B, 2>(c, device);
    default:
      return run_quant_case<B, 3>(c, device);
  }
}
template <class B>
void run_quant_fixture(const FixtureCase& c) {
  run_quant_fixture<B>(c, typename B::Device{});
}

}  // namespace ember::test
