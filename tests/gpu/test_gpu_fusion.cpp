// Fusion<Vulkan> / Fusion<Cuda>: a recorded element-wise chain runs as one generated kernel
// (counted), with the values of the unfused GPU functions bit for bit (the same kernel
// expressions, no contraction; f16/bf16 rounded after each step as the unfused functions
// store them); the kernel is compiled once per block pattern, whatever the scalars; broadcast
// and strided operands, extra outputs, in-place reuse, the vector and scalar paths, and the
// gradients of Autodiff<Fusion<R>> against the formula.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "ember/fusion/fusion.hpp"
#include "ember/tensor/tensor.hpp"
#include "gpu_backends.hpp"
#include "gpu_test_util.hpp"
#ifdef EMBER_HAVE_VULKAN
#include "ember/autodiff/fusion_vulkan.hpp"
#endif
#ifdef EMBER_HAVE_CUDA
#include "ember/autodiff/fusion_cuda.hpp"
#endif

using namespace ember;
using ember::test::bits_of;
using ember::test::host_calls;

template <class B>
class GpuFusionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    was_ = fusion::enabled();
    fusion::set_enabled(true);
    fusion::reset_stats();
  }
  void TearDown() override { fusion::set_enabled(was_); }

 private:
  bool was_ = true;
};
TYPED_TEST_SUITE(GpuFusionTest, ember::test::GpuConformanceBackends, ember::test::GpuNames);

namespace {

template <class B, std::size_t D>
Tensor<B, D> custom_gelu(const Tensor<B, D>& x, double root = std::sqrt(2.0)) {
  return x.mul(x.div_scalar(root).erf().add_scalar(1.0)).div_scalar(2.0);
}

/// n values in [-4, 4) with a fixed irregular pattern, including 0 and exact halves.
std::vector<float> values(std::size_t n) {
  std::vector<float> v = ember::test::spread(n, -4.0f, 4.0f);
  if (n > 2) v[0] = 0.0f, v[1] = -0.5f;
  return v;
}

}  // namespace

// One block of five steps; every element equal to the unfused kernels' value, on the
// four-lane path (3 x 1000) and the one-lane path (7 x 13: 91 elements).
TYPED_TEST(GpuFusionTest, GeluChainIsOneKernelWithTheUnfusedValues) {
  using G = TypeParam;
  using FB = Fusion<G>;
  for (const Shape& shape : {Shape{3, 1000}, Shape{7, 13}}) {
    fusion::reset_stats();
    const TensorData data(values(static_cast<std::size_t>(shape.numel())), shape);
    const std::uint64_t host = host_calls();
    const auto x = Tensor<FB, 2>::from_data(data, typename FB::Device{0});
    const auto y = custom_gelu(x);
    EXPECT_TRUE(FB::float_is_pending(y.primitive()));
    const TensorData got = y.into_data();
    EXPECT_EQ(fusion::stats().blocks, 1u);
    EXPECT_EQ(fusion::stats().fused_ops, 5u);
    EXPECT_EQ(fusion::stats().replayed_ops, 0u);
    EXPECT_EQ(host_calls(), host) << "no step through the host";
    const TensorData want =
        custom_gelu(Tensor<G, 2>::from_data(data, typename G::Device{0})).into_data();
    EXPECT_EQ(bits_of(got), bits_of(want)) << shape.to_string();
    const std::vector<float> xs = data.template to_vec<float>(), ys = got.template to_vec<float>();
    for (std::size_t i = 0; i < xs.size(); ++i) {
      const double ref = 0.5 * xs[i] * (1.0 + std::erf(xs[i] / std::sqrt(2.0)));
      EXPECT_NEAR(ys[i], ref, 1e-6 * (1.0 + std::fabs(ref))) << i;
    }
  }
}

// The steps' scalars are arguments of the kernel: another divisor reuses it; another step
// order is another pattern.
TYPED_TEST(GpuFusionTest, APatternCompilesOnceWhateverItsScalars) {
  using FB = Fusion<TypeParam>;
  const TensorData data(values(4096), Shape{4, 1024});
  const auto x = Tensor<FB, 2>::from_data(data, typename FB::Device{0});
  (void)custom_gelu(x, 1.5).into_data();  // compiles the pattern (unless an earlier test did)
  const std::uint64_t before = gpu::fused_kernels_compiled();
  // (Not a power of two: a division by one becomes a multiplication, another pattern.)
  for (double root : {1.25, 3.0, 5.0}) {
    const std::vector<float> ys = custom_gelu(x, root).template to_vec<float>();
    const std::vector<float> xs = data.template to_vec<float>();
    for (std::size_t i = 0; i < xs.size(); i += 97) {
      const double ref = 0.5 * xs[i] * (1.0 + std::erf(xs[i] / root));
      EXPECT_NEAR(ys[i], ref, 1e-6 * (1.0 + std::fabs(ref))) << root << " " << i;
    }
  }
  EXPECT_EQ(gpu::fused_kernels_compiled(), before);
  // Two patterns of their own (new unless an earlier run in this process compiled them), then
  // the same two with other scalars: nothing new.
  (void)x.exp().add_scalar(1.0).into_data();
  (void)x.add_scalar(1.0).exp().into_data();
  const std::uint64_t after = gpu::fused_kernels_compiled();
  EXPECT_LE(after, before + 2);
  (void)x.exp().add_scalar(-7.5).into_data();
  (void)x.add_scalar(0.3).exp().into_data();
  EXPECT_EQ(gpu::fused_kernels_compiled(), after);
}

// Flat inputs at an offset: a multiple of 4 keeps the four-lane path, another offset takes the
// one-lane path; both give the unfused values.
TYPED_TEST(GpuFusionTest, FlatInputsAtAnOffset) {
  using G = TypeParam;
  using FB = Fusion<G>;
  const typename G::Device dev{0};
  const TensorData data(values(64), Shape{64});
  for (std::int64_t start : {4, 2, 3}) {
    const auto chain = [&](const auto& x) {
      const auto v = x.narrow(0, start, 48);
      return v.mul_scalar(0.75).add(v.exp()).tanh();
    };
    const TensorData got = chain(Tensor<FB, 1>::from_data(data, dev)).into_data();
    const TensorData want = chain(Tensor<G, 1>::from_data(data, dev)).into_data();
    EXPECT_EQ(bits_of(got), bits_of(want)) << "offset " << start;
  }
  EXPECT_EQ(fusion::stats().blocks, 3u);
}

// sync computes every pending value held, as one block per chain.
TYPED_TEST(GpuFusionTest, SyncComputesThePendingValues) {
  using FB = Fusion<TypeParam>;
  const typename FB::Device dev{0};
  const auto x = Tensor<FB, 2>::from_floats({{1.0, 4.0}, {9.0, 16.0}}, dev);
  const auto a = x.sqrt().add_scalar(1.0);
  const auto b = x.mul(x).neg();
  EXPECT_TRUE(FB::float_is_pending(a.primitive()));
  FB::sync(dev);
  EXPECT_FALSE(FB::float_is_pending(a.primitive()));
  EXPECT_FALSE(FB::float_is_pending(b.primitive()));
  EXPECT_EQ(fusion::stats().blocks, 2u);
  EXPECT_EQ(a.template to_vec<float>(), (std::vector<float>{2, 3, 4, 5}));
  EXPECT_EQ(b.template to_vec<float>(), (std::vector<float>{-1, -16, -81, -256}));
}

// A division by a power of two runs as the multiplication by its exact reciprocal: the same
// bits as the unfused division, for subnormal, huge, signed-zero and non-finite elements too.
TYPED_TEST(GpuFusionTest, DivisionByAPowerOfTwoKeepsEveryBit) {
  using G = TypeParam;
  using FB = Fusion<G>;
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const TensorData data(std::vector<float>{1.0f, -3.0f, 1e-45f, -1.2e-38f, 3.4e38f, -0.0f, 0.0f,
                                           inf, -inf, nan, 7.0f, 1e-40f},
                        Shape{3, 4});
  const typename G::Device dev{0};
  for (double d : {2.0, 0.25, -8.0, 3.0, 1e-30, std::ldexp(1.0, -130), std::ldexp(1.0, 127)}) {
    const TensorData got =
        Tensor<FB, 2>::from_data(data, dev).div_scalar(d).add_scalar(0.0).into_data();
    const TensorData want =
        Tensor<G, 2>::from_data(data, dev).div_scalar(d).add_scalar(0.0).into_data();
    EXPECT_EQ(bits_of(got), bits_of(want)) << "divisor " << d;
  }
  EXPECT_EQ(fusion::stats().blocks, 7u);
}

// f16 and bf16 compute in f32 and round every step's value to the dtype, as the unfused
// functions store it: bit for bit the unfused values.
TYPED_TEST(GpuFusionTest, HalfPrecisionChainsFuseWithTheUnfusedValues) {
  using G = TypeParam;
  using FB = Fusion<G>;
  const typename G::Device dev{0};
  for (DType dt : {DType::F16, DType::BF16}) {
    if (!gpu::native_dtype(
            dt, Tensor<G, 1>::from_floats({0.0}, typename G::Device{0}).primitive().compute()))
      continue;
    fusion::reset_stats();
    const TensorData data(values(1000), Shape{10, 100});
    const auto chain = [](const auto& x) {
      return x.mul_scalar(1.7).add(x.tanh()).exp().sub_scalar(0.3).clamp(-1.0, 5.0);
    };
    const TensorData got = chain(Tensor<FB, 2>::from_data(data, dev, dt)).into_data();
    EXPECT_EQ(got.dtype(), dt);
    EXPECT_EQ(fusion::stats().blocks, 1u) << dtype_name(dt);
    const TensorData want = chain(Tensor<G, 2>::from_data(data, dev, dt)).into_data();
    EXPECT_EQ(bits_of(got), bits_of(want)) << dtype_name(dt);
  }
}

// f64: fused where the device has f64 and its functions; otherwise the steps run one by one:
// either way the unfused values.
TYPED_TEST(GpuFusionTest, DoubleChainsHaveTheUnfusedValues) {
  using G = TypeParam;
  using FB = Fusion<G>;
  const typename G::Device dev{0};
  if (!gpu::native_dtype(
          DType::F64,
          Tensor<G, 1>::from_floats({0.0}, typename G::Device{0}).primitive().compute()))
    GTEST_SKIP() << "no f64";
  const TensorData data(values(256), Shape{16, 16});
  const auto chain = [](const auto& x) { return x.mul_scalar(0.1).add_scalar(2.0).sqrt().mul(x); };
  const TensorData got = chain(Tensor<FB, 2>::from_data(data, dev, DType::F64)).into_data();
  const TensorData want = chain(Tensor<G, 2>::from_data(data, dev, DType::F64)).into_data();
  EXPECT_EQ(bits_of(got), bits_of(want));
  EXPECT_EQ(fusion::stats().blocks, 1u);  // mul, add, sqrt: every device with f64 has them
  EXPECT_EQ(fusion::stats().replayed_ops, 0u);
}

// Broadcast operands of both kinds ([3, 1] and [1, 4]), scalars, and a transposed (strided)
// input: the strided kernel; values against the CPU backend.
TYPED_TEST(GpuFusionTest, BroadcastAndStridedOperands) {
  using FB = Fusion<TypeParam>;
  const typename FB::Device dev{0};
  const auto a = Tensor<FB, 2>::from_floats({{1.0}, {2.0}, {3.0}}, dev);
  const auto b = Tensor<FB, 2>::from_floats({{10.0, 20.0, 30.0, 40.0}}, dev);
  const auto y = a.add(b).mul_scalar(0.5).sub(a);
  EXPECT_EQ(y.template to_vec<float>(),
            (std::vector<float>{4.5, 9.5, 14.5, 19.5, 4, 9, 14, 19, 3.5, 8.5, 13.5, 18.5}));
  EXPECT_EQ(fusion::stats().blocks, 1u);
  const TensorData data(std::vector<float>{1, 2, 3, 4, 5, 6}, Shape{2, 3});
  const auto x = Tensor<FB, 2>::from_data(data, dev).transpose();  // [3, 2]
  const auto z = x.mul_scalar(3.0).add(x).clamp(2.0, 20.0);
  EXPECT_EQ(z.template to_vec<float>(), (std::vector<float>{4, 16, 8, 20, 12, 20}));
  EXPECT_EQ(fusion::stats().blocks, 2u);
}

// A pending value the test holds is a second output of the same kernel.
TYPED_TEST(GpuFusionTest, PendingValueHeldElsewhereIsASecondOutput) {
  using FB = Fusion<TypeParam>;
  const auto x = Tensor<FB, 2>::from_floats({{0.0, 1.0}, {2.0, -1.0}}, typename FB::Device{0});
  const auto e = x.exp();
  const auto z = e.add_scalar(1.0).log();
  const std::vector<float> zs = z.template to_vec<float>();
  EXPECT_EQ(fusion::stats().blocks, 1u);
  EXPECT_FALSE(FB::float_is_pending(e.primitive()));
  const std::vector<float> es = e.template to_vec<float>();
  EXPECT_EQ(fusion::stats().blocks, 1u);
  const float xs[] = {0.0f, 1.0f, 2.0f, -1.0f};
  for (int i = 0; i < 4; ++i) {
    EXPECT_NEAR(es[i], std::exp(xs[i]), 1e-6 * std::exp(xs[i]));
    EXPECT_NEAR(zs[i], std::log1p(std::exp(static_cast<double>(xs[i]))), 1e-6);
  }
}

// An input only the chain holds gives its buffer to the output; one held elsewhere does not.
TYPED_TEST(GpuFusionTest, AnInputUsedOnlyByTheChainGivesItsBuffer) {
  using FB = Fusion<TypeParam>;
  const typename FB::Device dev{0};
  auto x = Tensor<FB, 2>::from_floats({{1.0, 2.0}, {3.0, 4.0}}, dev);
  const void* buffer = FB::float_value(x.primitive()).buffer.get();
  const auto y = std::move(x).mul_scalar(2.0).add_scalar(1.0);
  EXPECT_EQ(FB::float_value(y.primitive()).buffer.get(), buffer);
  EXPECT_EQ(y.template to_vec<float>(), (std::vector<float>{3, 5, 7, 9}));
  const auto a = Tensor<FB, 2>::from_floats({{1.0, 2.0}}, dev);
  const auto b = a.mul_scalar(2.0).add_scalar(1.0);
  EXPECT_NE(FB::float_value(b.primitive()).buffer.get(),
            FB::float_value(a.primitive()).buffer.get());
  EXPECT_EQ(a.template to_vec<float>(), (std::vector<float>{1, 2}));
  EXPECT_EQ(b.template to_vec<float>(), (std::vector<float>{3, 5}));
}

// A chain over many inputs is cut every kMaxChainOperands operands (12): a sum of 40 tensors
// runs as 4 blocks, with the unfused values.
TYPED_TEST(GpuFusionTest, ChainsOverManyInputsAreCutIntoBlocks) {
  using FB = Fusion<TypeParam>;
  const typename FB::Device dev{0};
  std::vector<Tensor<FB, 1>> xs;
  for (int i = 0; i < 40; ++i)
    xs.push_back(Tensor<FB, 1>::from_floats({1.0 * i, 0.5, -2.0 * i}, dev));
  Tensor<FB, 1> sum = xs[0];
  for (int i = 1; i < 40; ++i) sum = sum.add(xs[i]);
  EXPECT_EQ(sum.template to_vec<float>(), (std::vector<float>{780, 20, -1560}));
  EXPECT_EQ(fusion::stats().blocks, 4u);
  EXPECT_EQ(fusion::stats().fused_ops, 39u);
  EXPECT_EQ(fusion::stats().replayed_ops, 0u);
}

// A block of the sum of n inputs of `shape` (steps add(s0, s1), add(s_n, s2), ...).
ir::FusedBlock sum_block(std::uint32_t n, const Shape& shape) {
  ir::FusedBlock blk;
  blk.shape = shape;
  blk.inputs = n;
  for (std::uint32_t k = 1; k < n; ++k)
    blk.steps.push_back(ir::FusedStep{ir::FusedKind::Binary,
                                      static_cast<std::uint16_t>(ir::op_index<ir::op::Add>),
                                      k == 1 ? 0u : n + k - 2, k});
  blk.outputs = {n - 2};
  return blk;
}

// The GPU's block function declines (nullopt: Fusion then runs the steps one by one) a block
// with more buffers than a kernel binds (30 with the outputs), and a strided rank-8 block
// whose inputs' shapes and strides pass a launch's information words (kernel::kMaxInfoWords);
// it runs the same blocks when they fit.
TYPED_TEST(GpuFusionTest, BlocksOverAKernelsBuffersOrArgumentsAreDeclined) {
  using G = TypeParam;
  const typename G::Device dev{0};
  const Shape rank8{1, 1, 1, 1, 1, 1, 2, 2};
  const auto run = [&](std::uint32_t n, bool strided) {
    std::vector<GpuTensor> ins;
    for (std::uint32_t i = 0; i < n; ++i) {
      const std::vector<float> v{1.0f * i, 2.0f, 3.0f, -1.0f * i};
      if (strided)
        ins.push_back(
            Tensor<G, 8>::from_data(TensorData(v, rank8), dev).swap_dims(6, 7).primitive());
      else
        ins.push_back(Tensor<G, 1>::from_data(TensorData(v, Shape{4}), dev).primitive());
    }
    return gpu::fused_elementwise(sum_block(n, ins[0].shape), ins);
  };
  EXPECT_FALSE(run(30, false).has_value());
  const auto fits = run(29, false);
  ASSERT_TRUE(fits.has_value());
  const auto v1 = Tensor<G, 1>((*fits)[0]).template to_vec<float>();
  EXPECT_EQ(v1, (std::vector<float>{406, 58, 87, -406}));
  EXPECT_FALSE(run(29, true).has_value());
  const auto fits8 = run(12, true);
  ASSERT_TRUE(fits8.has_value());
  // each input swapped: [[i, 3], [2, -i]]
  const auto v8 = Tensor<G, 8>((*fits8)[0]).template to_vec<float>();
  EXPECT_EQ(v8, (std::vector<float>{66, 36, 24, -66}));
}

// Autodiff<Fusion<R>>: the forward and the backward chains fuse; the gradient of the custom
// GELU is the formula's, Phi(x) + x phi(x).
TYPED_TEST(GpuFusionTest, AutodiffOverFusionFusesForwardAndBackward) {
  using AB = Autodiff<Fusion<TypeParam>>;
  const std::vector<float> xs{-2.0f, -0.5f, 0.0f, 0.75f, 3.0f, 1.25f, -4.0f, 0.125f};
  auto x =
      Tensor<AB, 1>::from_data(TensorData(xs, Shape{8}), typename AB::Device{0}).require_grad();
  const auto grads = custom_gelu(x).sum().backward();
  const std::vector<float> g = x.grad(grads)->template to_vec<float>();
  EXPECT_GE(fusion::stats().blocks, 2u);  // the forward chain, the backward chain
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const double v = xs[i];
    const double want = 0.5 * (1.0 + std::erf(v / std::sqrt(2.0))) +
                        v * std::exp(-0.5 * v * v) / std::sqrt(2.0 * M_PI);
    EXPECT_NEAR(g[i], want, 2e-6) << i;
  }
}
