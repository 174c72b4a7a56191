// Autocast (ember/core/autocast.hpp) on Cpu and Autodiff<Cpu>: the guard's state, the ops
// that run in the autocast dtype and those that run in f32, and the dtypes of gradients.
// Values are chosen so that rounding to bf16/f16 shows: 1 + 2^-9 is 1 in bf16 (7 fraction
// bits) but exact in f16 (10 bits); 1 + 2^-12 is 1 in both. Every other input is exact in
// bf16, so the expected results are hand-computed and compared exactly.
#include <gtest/gtest.h>

#include <cmath>
#include <thread>

#include "ember/autodiff/cpu.hpp"
#include "ember/core/autocast.hpp"
#include "ember/nn.hpp"
#include "ember/quant/quantize.hpp"
#include "ember/tensor/activation.hpp"
#include "ember/tensor/loss.hpp"
#include "ember/tensor/module/conv.hpp"
#include "ember/tensor/module/nn.hpp"
#include "fixtures.hpp"

namespace ember::test {
namespace {

using C2 = Tensor<Cpu, 2>;
using AD = Autodiff<Cpu>;

const double kBf16Lost = 1.0 + std::ldexp(1.0, -9);   // bf16: 1, f16: exact
const double kBothLost = 1.0 + std::ldexp(1.0, -12);  // bf16 and f16: 1

double only(const auto& t) {
  return t.into_scalar();
}

TEST(Autocast, GuardSetsNestsAndRestoresTheThreadsState) {
  EXPECT_FALSE(is_autocast_enabled());
  {
    const Autocast outer(DType::BF16);
    EXPECT_EQ(autocast_dtype(), DType::BF16);
    {
      const Autocast inner(DType::F16);
      EXPECT_EQ(autocast_dtype(), DType::F16);
      {
        const Autocast off(DType::F16, false);
        EXPECT_FALSE(is_autocast_enabled());
      }
      EXPECT_EQ(autocast_dtype(), DType::F16);
    }
    EXPECT_EQ(autocast_dtype(), DType::BF16);
    std::optional<DType> other = DType::F16;
    std::thread([&] { other = autocast_dtype(); }).join();
    EXPECT_EQ(other, std::nullopt);  // per thread
    const Autocast none(std::optional<DType>{});
    EXPECT_FALSE(is_autocast_enabled());
  }
  EXPECT_FALSE(is_autocast_enabled());
}

TEST(Autocast, RejectsDtypesOtherThanF16AndBf16) {
  EMBER_EXPECT_THROW_MSG(Autocast{DType::F32}, ValueError, "f16 or bf16, got f32");
  EMBER_EXPECT_THROW_MSG(Autocast{DType::I64}, ValueError, "f16 or bf16");
  EXPECT_FALSE(is_autocast_enabled());
}

TEST(Autocast, MatmulRunsInTheAutocastDtype) {
  const C2 a = C2::from_floats({{kBf16Lost, 1.0}});
  const C2 b = C2::from_floats({{1.0}, {1.0}});
  EXPECT_EQ(only(a.matmul(b)), 2.0 + std::ldexp(1.0, -9));  // f32: exact
  {
    const Autocast amp(DType::BF16);
    const C2 y = a.matmul(b);
    EXPECT_EQ(y.dtype(), DType::BF16);
    EXPECT_EQ(only(y), 2.0);
  }
  {
    const Autocast amp(DType::F16);
    EXPECT_EQ(a.matmul(b).dtype(), DType::F16);
    EXPECT_EQ(only(a.matmul(b)), 2.0 + std::ldexp(1.0, -9));
    EXPECT_EQ(only(C2::from_floats({{kBothLost, 1.0}}).matmul(b)), 2.0);
  }
}

TEST(Autocast, LeavesF64AndIntegerMatmulsAlone) {
  const Autocast amp(DType::BF16);
  const C2 a = C2::from_floats({{kBothLost, 1.0}}, {}, DType::F64);
  const C2 b = C2::from_floats({{1.0}, {1.0}}, {}, DType::F64);
  EXPECT_EQ(a.matmul(b).dtype(), DType::F64);
  EXPECT_EQ(only(a.matmul(b)), 2.0 + std::ldexp(1.0, -12));
  const auto i = Tensor<Cpu, 2, Int>::from_ints({{300, 1}});
  const auto j = Tensor<Cpu, 2, Int>::from_ints({{1}, {1}});
  EXPECT_EQ(i.matmul(j).dtype(), DType::I64);
  EXPECT_EQ(i.matmul(j).into_scalar(), 301);
}

TEST(Autocast, LinearConvAndAttentionRunInTheAutocastDtype) {
  const Autocast amp(DType::BF16);
  // linear: x . w + b = (1 + 2^-9) + 2 + 0.25 in f32; 3.25 in bf16.
  const C2 x = C2::from_floats({{kBf16Lost, 2.0}});
  const C2 w = C2::from_floats({{1.0, 1.0}});
  const auto bias = Tensor<Cpu, 1>::from_floats({0.25});
  const C2 y = module::linear(x, w, bias);
  EXPECT_EQ(y.dtype(), DType::BF16);
  EXPECT_EQ(only(y), 3.25);
  // conv2d: a 1x2 kernel of ones over [1 + 2^-9, 1].
  using C4 = Tensor<Cpu, 4>;
  const C4 img = C4::from_floats({{{{kBf16Lost, 1.0}}}});
  const C4 k = C4::from_floats({{{{1.0, 1.0}}}});
  const C4 c = module::conv2d(img, k, Tensor<Cpu, 1>::from_floats({0.5}));
  EXPECT_EQ(c.dtype(), DType::BF16);
  EXPECT_EQ(only(c), 2.5);
  // attention with one key: the output is v, rounded to bf16.
  using C3 = Tensor<Cpu, 3>;
  const C3 q = C3::from_floats({{{1.0, 0.0}}}), key = C3::from_floats({{{0.5, 0.5}}});
  const C3 v = C3::from_floats({{{kBf16Lost, -3.0}}});
  const C3 o = module::scaled_dot_product_attention(q, key, v);
  EXPECT_EQ(o.dtype(), DType::BF16);
  EXPECT_EQ(o.to_vec<double>(), (std::vector<double>{1.0, -3.0}));
}

TEST(Autocast, SoftmaxNormsAndCrossEntropyRunInF32) {
  const C2 x = C2::from_floats({{1.0, 2.0, 4.0}}, {}, DType::BF16);
  EXPECT_EQ(activation::softmax(x, 1).dtype(), DType::BF16);  // autocast off: x's dtype
  const Autocast amp(DType::BF16);
  const C2 s = activation::softmax(x, 1);
  EXPECT_EQ(s.dtype(), DType::F32);
  const double z = std::exp(1.0) + std::exp(2.0) + std::exp(4.0);
  const std::vector<double> got = s.to_vec<double>();
  EXPECT_NEAR(got[2], std::exp(4.0) / z, 1e-7);  // f32 accuracy, not bf16's 4e-3
  const C2 ls = activation::log_softmax(x, 1);
  EXPECT_EQ(ls.dtype(), DType::F32);
  EXPECT_NEAR(ls.to_vec<double>()[0], 1.0 - std::log(z), 1e-6);
  const auto ce = loss::cross_entropy_with_logits(x, Tensor<Cpu, 1, Int>::from_ints({2}));
  EXPECT_EQ(ce.dtype(), DType::F32);
  EXPECT_NEAR(only(ce), std::log(z) - 4.0, 1e-6);
  const C2 ln = module::layer_norm(x, Tensor<Cpu, 1>::from_floats({1.0, 1.0, 1.0}));
  EXPECT_EQ(ln.dtype(), DType::F32);
  // mean 7/3, biased variance 14/9.
  EXPECT_NEAR(ln.to_vec<double>()[2], (4.0 - 7.0 / 3.0) / std::sqrt(14.0 / 9.0 + 1e-5), 1e-6);
  EXPECT_EQ(module::rms_norm(x).dtype(), DType::F32);
}

TEST(Autocast, LossesRunInF32) {
  // (300^2 + 300^2) / 2 = 90000 overflows f16 (max 65504) but not f32.
  using C2 = Tensor<Cpu, 2>;
  const C2 x = C2::from_floats({{300.0, -300.0}}, {}, DType::F16);
  const C2 zero = C2::zeros(Shape{1, 2}, {}, DType::F16);
  const Autocast amp(DType::F16);
  const auto mse = nn::loss::mse_loss(x, zero);
  EXPECT_EQ(mse.dtype(), DType::F32);
  EXPECT_EQ(only(mse), 90000.0);
  EXPECT_EQ(only(nn::loss::l1_loss(x, zero)), 300.0);
  const C2 p = C2::from_floats({{0.25, 0.5}}, {}, DType::BF16);
  EXPECT_EQ(nn::loss::binary_cross_entropy(p, C2::ones(Shape{1, 2})).dtype(), DType::F32);
  EXPECT_EQ(nn::loss::kl_div(p.log(), p).dtype(), DType::F32);
}

TEST(Autocast, F64OperandsKeepLinearAndAttentionInF64) {
  using C2 = Tensor<Cpu, 2>;
  const Autocast amp(DType::BF16);
  const C2 x = C2::from_floats({{kBothLost, 1.0}});
  const C2 w64 = C2::from_floats({{1.0, 1.0}}, {}, DType::F64);
  const C2 y = module::linear(x, w64);
  EXPECT_EQ(y.dtype(), DType::F64);
  EXPECT_EQ(only(y), 2.0 + std::ldexp(1.0, -12));  // x is f32-exact, the sum f64-exact
  using C3 = Tensor<Cpu, 3>;
  const C3 q = C3::from_floats({{{1.0, 0.0}}});
  const C3 k = C3::from_floats({{{0.5, 0.5}}}, {}, DType::F64);
  const C3 v = C3::from_floats({{{kBothLost, -3.0}}}, {}, DType::F64);
  const C3 o = module::scaled_dot_product_attention(q, k, v);
  EXPECT_EQ(o.dtype(), DType::F64);
  EXPECT_EQ(o.to_vec<double>(), (std::vector<double>{kBothLost, -3.0}));
}

TEST(Autocast, QuantizedLayersTakeALowerPrecisionInput) {
  auto fc = nn::LinearConfig{.d_input = 2, .d_output = 2}.init<Cpu>();
  const auto q = quant::quantize(fc, {});
  using DT = Tensor<Cpu, 2>;
  const DT x = DT::from_floats({{1.0, -2.0}});
  const std::vector<double> want = q.forward(x).to_vec<double>();
  const Autocast amp(DType::BF16);
  // An exact bf16 input: the quantized layer computes in f32 and gives the same values.
  const DT y = q.forward(x.cast(DType::BF16));
  EXPECT_EQ(y.to_vec<double>(), want);
}

TEST(Autocast, NnLinearTakesALowerPrecisionInputOnlyUnderAutocast) {
  using DT = Tensor<AD, 2>;
  auto fc = nn::LinearConfig{.d_input = 2, .d_output = 1}.init<AD>();
  const DT xb = DT::from_floats({{1.0, 2.0}}, {}, DType::BF16);
  EMBER_EXPECT_THROW_MSG(fc.forward(xb), DTypeError, "does not match the weight's dtype");
  const Autocast amp(DType::BF16);
  EXPECT_EQ(fc.forward(xb).dtype(), DType::BF16);
  EXPECT_EQ(fc.forward(xb.cast(DType::F32)).dtype(), DType::BF16);
}

TEST(Autocast, F32ParametersGetF32GradientsOfTheLowerPrecisionForward) {
  // loss = sum(x . w) over a bf16 matmul: dloss/dw[k][j] = sum_i x[i][k], exact in bf16.
  using A2 = Tensor<AD, 2>;
  const A2 x = A2::from_floats({{0.5, -2.0}, {1.25, 3.0}, {kBf16Lost, 0.75}});
  const A2 w = A2::from_floats({{1.0, -1.0, 0.5}, {2.0, 0.25, -4.0}}).require_grad();
  auto loss = [&] {
    const Autocast amp(DType::BF16);
    const A2 y = x.matmul(w);
    EXPECT_EQ(y.dtype(), DType::BF16);
    return y.cast(DType::F32).sum();
  }();
  auto grads = loss.backward();
  const auto g = w.grad(grads);
  ASSERT_TRUE(g.has_value());
  EXPECT_EQ(g->dtype(), DType::F32);
  // Column sums of x rounded to bf16: 0.5 + 1.25 + 1 and -2 + 3 + 0.75.
  EXPECT_EQ(g->to_vec<double>(), (std::vector<double>{2.75, 2.75, 2.75, 1.75, 1.75, 1.75}));
}

}  // namespace
}  // namespace ember::test
