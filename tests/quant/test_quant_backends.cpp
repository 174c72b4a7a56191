// Quantization on every path of the contract (ember/ir/quant.hpp's OPT rows): the CPU
// kernels under Checking (each description's infer against the kernel's result) and through
// Dispatch; the front end's composites (ember/tensor/quant_composite.hpp) on a backend
// without the kernels, on Autodiff<Cpu> and on Dispatch's autodiff device. Each against the
// PyTorch fixtures, and the composites against the kernels on random data: the same scales,
// zero points and integers, bit for bit.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "checking_backend.hpp"
#include "ember/autodiff/autodiff.hpp"
#include "ember/cpu/cpu.hpp"
#include "ember/dispatch/dispatch.hpp"
#include "ember/tensor/tensor.hpp"
#include "fixtures.hpp"
#include "no_quant_kernels.hpp"
#include "quant_fixture.hpp"

using namespace ember;
using test::FixtureCase;

namespace {

using test::NoQuantKernels;

template <class B>
concept HasQuantParams = requires(const typename B::FloatTensor& x, const QuantScheme& s) {
  B::float_quant_params(x, s);
};
static_assert(!HasQuantParams<NoQuantKernels>);
static_assert(HasQuantParams<test::Checking<Cpu>>);
static_assert(HasQuantParams<Dispatch> && !HasQuantParams<Autodiff<Cpu>>);

const bool registered = [] {
  const auto reg = []<class B>() {
    test::register_fixture_tests<B>("QuantFixture", "quant", "",
                                    [](const FixtureCase& c) { test::run_quant_fixture<B>(c); });
  };
  reg.template operator()<test::Checking<Cpu>>();
  reg.template operator()<NoQuantKernels>();
  reg.template operator()<Autodiff<Cpu>>();
  reg.template operator()<Dispatch>();
  return true;
}();

std::vector<QuantScheme> schemes() {
  return {QuantScheme::int8(),
          QuantScheme::int8().affine(),
          QuantScheme::int8().per_channel(1),
          QuantScheme::int8().affine().per_channel(-1),
          QuantScheme::int4(),
          QuantScheme::int4().affine().per_channel(0),
          QuantScheme::int4().per_block(3),
          QuantScheme::int4().affine().per_block(2).with_f16_scales(),
          QuantScheme::int8().per_block(6)};
}

/// Quantizes the same values on Cpu (kernels) and on B at `device`; asserts equal parts and
/// equal dequantized values.
template <class B>
void same_as_kernels(const typename B::Device& device) {
  // Odd last dim (int4 padding), halves (round half to even), a large outlier per row.
  std::vector<float> v;
  for (int i = 0; i < 5 * 4 * 6; ++i) v.push_back(0.37f * static_cast<float>((i * 37) % 23 - 11));
  v[7] = 9.5f;
  v[50] = -13.25f;
  for (const auto& shape : {Shape{5, 4, 6}, Shape{10, 2, 6}}) {
    const TensorData d(v, shape);
    for (const QuantScheme& s : schemes()) {
      SCOPED_TRACE(s.to_string() + " shape " + shape.to_string());
      const auto want = Tensor<Cpu, 3>::from_data(d).quantize(s);
      const auto got = Tensor<B, 3>::from_data(d, device).quantize(s);
      test::expect_eq(got.values().into_data(), want.values().into_data());
      test::expect_eq(got.scales().into_data(), want.scales().into_data());
      ASSERT_EQ(got.zero_points().has_value(), want.zero_points().has_value());
      if (want.zero_points()) {
        test::expect_eq(got.zero_points()->into_data().convert(DType::I64),
                        want.zero_points()->into_data().convert(DType::I64));
      }
      test::expect_eq(got.dequantize().into_data(), want.dequantize().into_data());
    }
  }
  // int4 with an odd last dim: the padding nibble is zero.
  const TensorData odd(std::vector<float>{-1.0f, 0.5f, 1.0f, -0.25f, 0.75f}, Shape{1, 5});
  const auto want = Tensor<Cpu, 2>::from_data(odd).quantize(QuantScheme::int4());
  const auto got = Tensor<B, 2>::from_data(odd, device).quantize(QuantScheme::int4());
  test::expect_eq(got.values().into_data(), want.values().into_data());
  test::expect_eq(got.dequantize().into_data(), want.dequantize().into_data());
}

/// QuantizedLinear on B against the CPU kernel: the same integer sums, so equal up to the
/// f32 epilogue's rounding (dynamic, or with static `input` parameters).
template <class B>
void linear_as_kernel(const typename B::Device& device, bool per_channel,
                      const std::optional<ActivationQuant>& input = std::nullopt) {
  const auto x = Tensor<Cpu, 3>::random({2, 3, 70}, Distribution::normal(0.2, 1.5));
  const auto w = Tensor<Cpu, 2>::random({9, 70}, Distribution::uniform(-0.4, 0.4));
  const auto b = Tensor<Cpu, 1>::random({9}, Distribution::normal(0, 1));
  const QuantScheme s = per_channel ? QuantScheme::int8().per_channel(0) : QuantScheme::int8();
  const auto want = QuantizedLinear<Cpu>::from_float(w, b, s, input).forward(x);
  const auto lin =
      QuantizedLinear<B>::from_float(Tensor<B, 2>::from_data(w.into_data(), device),
                                     Tensor<B, 1>::from_data(b.into_data(), device), s, input);
  const auto got = lin.forward(Tensor<B, 3>::from_data(x.into_data(), device));
  ASSERT_EQ(got.shape(), want.shape());
  test::expect_approx(got.into_data(), want.into_data(), Tolerance::rel_abs(1e-6, 1e-6));
  // Without a bias, and an empty batch.
  const auto nob = QuantizedLinear<B>::from_float(Tensor<B, 2>::from_data(w.into_data(), device),
                                                  std::nullopt, s, input);
  const auto want_nob = QuantizedLinear<Cpu>::from_float(w, std::nullopt, s, input).forward(x);
  test::expect_approx(nob.forward(Tensor<B, 3>::from_data(x.into_data(), device)).into_data(),
                      want_nob.into_data(), Tolerance::rel_abs(1e-6, 1e-6));
  const auto empty = nob.forward(Tensor<B, 2>::zeros({0, 70}, device));
  EXPECT_EQ(empty.shape(), (Shape{0, 9}));
}

}  // namespace

TEST(QuantComposite, SameAsKernelsWithoutThem) {
  same_as_kernels<NoQuantKernels>({});
}
TEST(QuantComposite, SameAsKernelsOnAutodiff) {
  same_as_kernels<Autodiff<Cpu>>({});
}
TEST(QuantComposite, SameAsKernelsOnDispatchAutodiffDevice) {
  same_as_kernels<Dispatch>(Device::cpu().autodiff());
}
TEST(QuantComposite, KernelsThroughDispatchAndChecking) {
  same_as_kernels<Dispatch>(Device::cpu());
  same_as_kernels<test::Checking<Cpu>>({});
}

TEST(QuantComposite, LinearWithoutKernels) {
  linear_as_kernel<NoQuantKernels>({}, true);
  linear_as_kernel<NoQuantKernels>({}, false);
  // Static input parameters whose range clips N(0.2, 1.5) inputs.
  linear_as_kernel<NoQuantKernels>({}, true, ActivationQuant::from_range(-3.0f, 3.5f));
  linear_as_kernel<NoQuantKernels>({}, false, ActivationQuant{0.02f, 128});
}
TEST(QuantComposite, LinearOnAutodiffAndDispatch) {
  linear_as_kernel<Autodiff<Cpu>>({}, true);
  linear_as_kernel<Dispatch>(Device::cpu(), true);
  linear_as_kernel<Dispatch>(Device::cpu().autodiff(), false);
  linear_as_kernel<test::Checking<Cpu>>({}, true);
  const auto a = ActivationQuant::from_range(-3.0f, 3.5f);
  linear_as_kernel<Autodiff<Cpu>>({}, true, a);
  linear_as_kernel<Dispatch>(Device::cpu(), true, a);
  linear_as_kernel<Dispatch>(Device::cpu().autodiff(), false, a);
}

TEST(QuantComposite, NaNAndInfiniteScaleErrorsSayTheSameAsTheKernel) {
  // The composite names the group as the CPU kernel does: one message on every backend.
  const auto message = []<class B>(const TensorData& d, const QuantScheme& s) {
    try {
      (void)Tensor<B, 2>::from_data(d).quantize(s);
    } catch (const ValueError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const TensorData nan(std::vector<float>{1.0f, 2.0f, 3.0f, std::nanf("")}, Shape{2, 2});
  const auto per_row = QuantScheme::int8().per_channel(0);
  EXPECT_EQ(message.template operator()<NoQuantKernels>(nan, per_row),
            message.template operator()<Cpu>(nan, per_row));
  EXPECT_NE(message.template operator()<NoQuantKernels>(nan, per_row)
                .find("group 1 of 2 contains NaN, so its scale would be NaN"),
            std::string::npos);
  const TensorData big(std::vector<float>{1.0f, 2.0f, 1e6f, -3e5f}, Shape{2, 2});
  const auto blocks = QuantScheme::int4().per_block(2).with_f16_scales();
  EXPECT_EQ(message.template operator()<NoQuantKernels>(big, blocks),
            message.template operator()<Cpu>(big, blocks));
  EXPECT_NE(message.template operator()<NoQuantKernels>(big, blocks)
                .find("the scale of group 1 of 2 is infinite (values too large for f16 scales"),
            std::string::npos);
}
