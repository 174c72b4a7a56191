// Quantization on the GPU backends (issue 17): the front end's composites
// (ember/tensor/quant_composite.hpp) run on the device and give the CPU kernels' integers,
// scales and zero points bit for bit, and the quantized linear / conv2d within 1e-5.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "ember/cpu/cpu.hpp"
#include "ember/tensor/tensor.hpp"
#include "fixtures.hpp"
#include "gpu_backends.hpp"
#include "gpu_test_util.hpp"

using namespace ember;
using ember::test::expect_approx;
using ember::test::expect_eq;
using ember::test::spread;

template <class B>
class GpuQuantTest : public ::testing::Test {};
TYPED_TEST_SUITE(GpuQuantTest, ember::test::GpuConformanceBackends, ember::test::GpuNames);

namespace {

template <class B, std::size_t D>
void expect_same_qtensor(const QTensor<B, D>& g, const QTensor<Cpu, D>& c) {
  expect_eq(g.values().into_data(), c.values().into_data());
  expect_eq(g.scales().into_data(), c.scales().into_data());
  ASSERT_EQ(g.zero_points().has_value(), c.zero_points().has_value());
  if (c.zero_points()) expect_eq(g.zero_points()->into_data(), c.zero_points()->into_data());
  expect_eq(g.dequantize().into_data(), c.dequantize().into_data());
}

}  // namespace

TYPED_TEST(GpuQuantTest, QuantizeAndDequantizeGiveTheCpuIntegers) {
  using B = TypeParam;
  const TensorData d(spread(6 * 64, -3, 2), Shape{6, 64});
  const auto g = Tensor<B, 2>::from_data(d);
  const auto c = Tensor<Cpu, 2>::from_data(d);
  for (const QuantScheme& s :
       {QuantScheme::int8(), QuantScheme::int8().affine(), QuantScheme::int8().per_channel(0),
        QuantScheme::int8().affine().per_channel(1), QuantScheme::int4().per_block(32),
        QuantScheme::int4().affine().per_block(16).with_f16_scales()}) {
    SCOPED_TRACE(s.to_string());
    expect_same_qtensor(g.quantize(s), c.quantize(s));
  }
  // Given parameters, and the static input quantization of a calibrated layer.
  const auto scales =
      Tensor<Cpu, 2>::from_floats({{0.02f}, {0.05f}, {0.01f}, {0.1f}, {0.03f}, {0.2f}});
  expect_same_qtensor(
      quantize(g, QuantScheme::int8().per_channel(0), Tensor<B, 2>::from_data(scales.into_data())),
      quantize(c, QuantScheme::int8().per_channel(0), scales));
  const ActivationQuant a{0.02f, 150};
  expect_eq(fake_quantize(g, a).into_data(), fake_quantize(c, a).into_data());
}

TYPED_TEST(GpuQuantTest, QuantizedLinearAndConv2dMatchTheCpuKernels) {
  using B = TypeParam;
  const TensorData x(spread(5 * 48, -2, 3), Shape{5, 48});
  const TensorData w(spread(24 * 48, -0.5f, 0.5f), Shape{24, 48});
  const TensorData b(spread(24, -1, 1), Shape{24});
  const Tolerance tol = Tolerance::rel_abs(1e-5, 1e-5);
  for (const std::optional<ActivationQuant>& input :
       {std::optional<ActivationQuant>{}, std::optional(ActivationQuant{0.025f, 90})}) {
    SCOPED_TRACE(input ? "static input" : "dynamic input");
    const auto gl =
        QuantizedLinear<B>::from_float(Tensor<B, 2>::from_data(w), Tensor<B, 1>::from_data(b),
                                       QuantScheme::int8().per_channel(0), input);
    const auto cl =
        QuantizedLinear<Cpu>::from_float(Tensor<Cpu, 2>::from_data(w), Tensor<Cpu, 1>::from_data(b),
                                         QuantScheme::int8().per_channel(0), input);
    expect_approx(gl.forward(Tensor<B, 2>::from_data(x)).into_data(),
                  cl.forward(Tensor<Cpu, 2>::from_data(x)).into_data(), tol);
  }
  // A strided, grouped conv2d with padding, statically quantized.
  const TensorData cx(spread(2 * 4 * 9 * 9, -1, 2), Shape{2, 4, 9, 9});
  const TensorData cw(spread(6 * 2 * 3 * 3, -0.4f, 0.4f), Shape{6, 2, 3, 3});
  const TensorData cb(spread(6, -0.5f, 0.5f), Shape{6});
  const ConvOptions<2> o{{2, 1}, {1, 1}, {1, 1}, 2};
  const ActivationQuant a{0.012f, 85};
  const auto s = QuantScheme::int8().per_channel(0);
  const Shape ws{6, 2, 3, 3};
  const auto gq = Tensor<B, 4>::from_data(cw).template reshape<2>({6, 18}).quantize(s);
  const auto cq = Tensor<Cpu, 4>::from_data(cw).template reshape<2>({6, 18}).quantize(s);
  expect_approx(
      quantized_conv2d(Tensor<B, 4>::from_data(cx), gq, ws, Tensor<B, 1>::from_data(cb), o, a)
          .into_data(),
      quantized_conv2d(Tensor<Cpu, 4>::from_data(cx), cq, ws, Tensor<Cpu, 1>::from_data(cb), o, a)
          .into_data(),
      tol);
}
