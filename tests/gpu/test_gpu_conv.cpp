// Convolutions on the GPU backends (src/gpu/conv.cpp): on CUDA both candidates, Ember's
// im2col and cuDNN, each forced with EMBER_CONV_CANDIDATE, against the CPU backend for the
// forward convolution (with bias), the input gradient and the weight gradient, 1-d, 2-d and
// 3-d, with groups, stride, padding and dilation, in f32, f16, bf16 and f64, and the
// transposed convolution; the candidate autotune records and logs; on every GPU backend the
// switch's errors. The CUDA cases skip without a CUDA device or without cuDNN (CI).
//
// Tolerances, per element, relative to S = the same function of |x|, |w| and |dy| in f64 (the
// scale of a sum's rounding error; the CPU computes in f32 (f64 for f64) and rounds once):
// f32 2e-5 (fp32 sums of at most a few hundred terms in an order that differs from the CPU's;
// no TF32), f16 2e-3 and bf16 1.6e-2 (two units in the last place of the rounded result: both
// sides accumulate in f32 and may round to neighbours), f64 1e-12; plus 1e-6 of the largest
// S (cuDNN's FFT and Winograd algorithms spread their error over the whole output).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "ember/core/error.hpp"
#include "ember/tensor/tensor.hpp"
#include "ember/tune/tune.hpp"
#include "gpu_backends.hpp"
#include "gpu_test_util.hpp"
#ifdef EMBER_HAVE_CUDA
#include "cuda/dnn.hpp"
#include "ember/cuda/cuda.hpp"
#endif

using namespace ember;
using ember::test::EnvGuard;
using ember::test::host_calls;
using ember::test::spread;
using ember::test::values;

namespace {

double tolerance(DType dt) {
  switch (dt) {
    case DType::F16:
      return 2e-3;
    case DType::BF16:
      return 1.6e-2;
    case DType::F64:
      return 1e-12;
    default:
      return 2e-5;
  }
}

/// One convolution: x [B, C, *S], w [C_out, C/G, *k] and the options (N spatial dims).
template <std::size_t N>
struct Case {
  std::string name;
  std::vector<std::int64_t> x, w;
  ConvOptions<N> o;
};

TensorData data(const std::vector<std::int64_t>& dims, DType dt, float seed) {
  Shape s;
  s.dims = dims;
  const auto n = static_cast<std::size_t>(s.numel());
  std::vector<float> v = spread(n, -1, 1);
  for (std::size_t i = 0; i < n; ++i) v[i] = std::fmod(v[i] * seed + 2.0f, 2.0f) - 1.0f;
  return TensorData(v, s).convert(dt);
}

template <class B, std::size_t D>
typename B::FloatTensor on(const TensorData& d) {
  return Tensor<B, D>::from_data(d).primitive();
}

/// |d| in f64 on the CPU.
template <std::size_t D>
CpuTensor abs64(const TensorData& d) {
  return Tensor<Cpu, D>::from_data(d).cast(DType::F64).abs().primitive();
}

void expect_close(const char* what, const TensorData& got, const TensorData& want,
                  const TensorData& scale, DType dt) {
  SCOPED_TRACE(what);
  ASSERT_EQ(got.shape().dims, want.shape().dims);
  EXPECT_EQ(got.dtype(), dt);
  const std::vector<double> g = values(got), w = values(want), s = values(scale);
  const double smax = s.empty() ? 0.0 : *std::max_element(s.begin(), s.end());
  const double tol = tolerance(dt);
  int bad = 0;
  for (std::size_t i = 0; i < g.size() && bad < 5; ++i)
    if (!(std::fabs(g[i] - w[i]) <= tol * s[i] + 1e-6 * smax)) {
      ADD_FAILURE() << "element " << i << ": " << g[i] << " vs the CPU's " << w[i] << " (allowed "
                    << tol * s[i] + 1e-6 * smax << ")";
      ++bad;
    }
}

/// Expects `B`'s forward (with bias), input gradient and weight gradient to be the CPU's
/// within the tolerance, on the device (no host calls).
template <class B, std::size_t N>
void expect_like_cpu(const Case<N>& c, DType dt) {
  constexpr std::size_t D = N + 2;
  SCOPED_TRACE(c.name + " " + std::string(dtype_name(dt)));
  const TensorData xd = data(c.x, dt, 1.0f), wd = data(c.w, dt, 1.7f);
  const TensorData bd = data({c.w[0]}, dt, 0.3f);
  const CpuTensor cy = Cpu::template conv<N>(on<Cpu, D>(xd), on<Cpu, D>(wd), on<Cpu, 1>(bd), c.o);
  const Shape ys = Cpu::float_shape(cy);
  const TensorData dyd = data(ys.dims, dt, 2.3f);
  const std::uint64_t before = host_calls();
  const TensorData y =
      B::float_into_data(B::template conv<N>(on<B, D>(xd), on<B, D>(wd), on<B, 1>(bd), c.o));
  const TensorData dx = B::float_into_data(
      B::template conv_x_backward<N>(on<B, D>(dyd), on<B, D>(wd), xd.shape(), c.o));
  const TensorData dw = B::float_into_data(
      B::template conv_weight_backward<N>(on<B, D>(xd), on<B, D>(dyd), wd.shape(), c.o));
  EXPECT_EQ(host_calls(), before) << "a convolution ran on the host";
  // The scales: the same functions of the absolute values (the bias's |b| added to y's).
  const CpuTensor ys_scale = Cpu::template conv<N>(abs64<D>(xd), abs64<D>(wd), abs64<1>(bd), c.o);
  expect_close("forward", y, Cpu::float_into_data(cy), Cpu::float_into_data(ys_scale), dt);
  expect_close("input gradient", dx,
               Cpu::float_into_data(Cpu::template conv_x_backward<N>(
                   on<Cpu, D>(dyd), on<Cpu, D>(wd), xd.shape(), c.o)),
               Cpu::float_into_data(
                   Cpu::template conv_x_backward<N>(abs64<D>(dyd), abs64<D>(wd), xd.shape(), c.o)),
               dt);
  expect_close("weight gradient", dw,
               Cpu::float_into_data(Cpu::template conv_weight_backward<N>(
                   on<Cpu, D>(xd), on<Cpu, D>(dyd), wd.shape(), c.o)),
               Cpu::float_into_data(Cpu::template conv_weight_backward<N>(
                   abs64<D>(xd), abs64<D>(dyd), wd.shape(), c.o)),
               dt);
}

template <std::size_t N>
ConvOptions<N> opts(std::array<std::int64_t, N> stride, std::array<std::int64_t, N> pad,
                    std::array<std::int64_t, N> dil, std::int64_t groups) {
  ConvOptions<N> o;
  o.stride = stride;
  o.padding = pad;
  o.dilation = dil;
  o.groups = groups;
  return o;
}

const std::vector<Case<1>> kCases1{
    {"1d plain", {2, 4, 17}, {6, 4, 3}, opts<1>({1}, {1}, {1}, 1)},
    {"1d stride 2 pad 2 dilation 2 groups 2", {3, 6, 20}, {4, 3, 5}, opts<1>({2}, {2}, {2}, 2)},
};
const std::vector<Case<2>> kCases2{
    {"2d mixed, groups 2", {2, 4, 9, 7}, {6, 2, 3, 3}, opts<2>({2, 1}, {1, 2}, {1, 2}, 2)},
    {"2d 3x3 aligned", {4, 16, 14, 14}, {32, 16, 3, 3}, opts<2>({1, 1}, {1, 1}, {1, 1}, 1)},
    {"2d depthwise", {2, 8, 10, 10}, {8, 1, 3, 3}, opts<2>({1, 1}, {1, 1}, {1, 1}, 8)},
    {"2d 1x1", {2, 16, 5, 5}, {24, 16, 1, 1}, opts<2>({1, 1}, {0, 0}, {1, 1}, 1)},
    {"2d odd channels", {3, 5, 8, 11}, {7, 5, 2, 4}, opts<2>({3, 2}, {0, 1}, {2, 1}, 1)},
};
const std::vector<Case<3>> kCases3{
    {"3d mixed, groups 2",
     {2, 4, 6, 7, 5},
     {4, 2, 3, 2, 3},
     opts<3>({1, 2, 1}, {1, 0, 1}, {1, 1, 2}, 2)},
    {"3d 3x3x3", {1, 3, 5, 5, 5}, {5, 3, 3, 3, 3}, opts<3>({1, 1, 1}, {1, 1, 1}, {1, 1, 1}, 1)},
};

template <class B>
void expect_all_like_cpu(DType dt) {
  for (const auto& c : kCases1) expect_like_cpu<B, 1>(c, dt);
  for (const auto& c : kCases2) expect_like_cpu<B, 2>(c, dt);
  for (const auto& c : kCases3) expect_like_cpu<B, 3>(c, dt);
}

/// A transposed 2-d convolution (stride 2, output padding 1, groups 2) against the CPU.
template <class B>
void expect_transpose_like_cpu(DType dt) {
  SCOPED_TRACE("transposed " + std::string(dtype_name(dt)));
  ConvTransposeOptions<2> t;
  t.stride = {2, 2};
  t.padding = {1, 0};
  t.padding_out = {1, 0};
  t.groups = 2;
  const TensorData xd = data({2, 4, 5, 6}, dt, 1.0f), wd = data({4, 3, 3, 3}, dt, 1.3f);
  const TensorData got = B::float_into_data(
      B::template conv_transpose<2>(on<B, 4>(xd), on<B, 4>(wd), std::nullopt, t));
  const TensorData want = Cpu::float_into_data(
      Cpu::template conv_transpose<2>(on<Cpu, 4>(xd), on<Cpu, 4>(wd), std::nullopt, t));
  const TensorData scale = Cpu::float_into_data(
      Cpu::template conv_transpose<2>(abs64<4>(xd), abs64<4>(wd), std::nullopt, t));
  expect_close("conv_transpose", got, want, scale, dt);
}

/// A 1x1 convolution worked by hand: exact in every dtype.
template <class B>
void expect_hand_conv(DType dt) {
  const auto x =
      on<B, 4>(TensorData(std::vector<float>{1, 2, 3, 4}, Shape{1, 2, 1, 2}).convert(dt));
  const auto w = on<B, 4>(TensorData(std::vector<float>{5, 6}, Shape{1, 2, 1, 1}).convert(dt));
  EXPECT_EQ(values(B::float_into_data(B::template conv<2>(x, w, std::nullopt, ConvOptions<2>{}))),
            (std::vector<double>{23, 34}))
      << dtype_name(dt);
}

#ifdef EMBER_HAVE_CUDA
#define EMBER_NEED_CUDA()                                                         \
  do {                                                                            \
    std::string why;                                                              \
    if (cuda::device_count(&why) == 0) GTEST_SKIP() << "no CUDA device: " << why; \
  } while (false)
#define EMBER_NEED_CUDNN()                                                \
  do {                                                                    \
    EMBER_NEED_CUDA();                                                    \
    std::string why;                                                      \
    if (!cuda::dnn::available(&why)) GTEST_SKIP() << "no cuDNN: " << why; \
  } while (false)

const DType kDtypes[] = {DType::F32, DType::F16, DType::BF16, DType::F64};

/// cuDNN's view of a 2-d case (for its refusals).
cuda::dnn::ConvShape dnn_shape(const Case<2>& c, std::int64_t oh, std::int64_t ow) {
  cuda::dnn::ConvShape s;
  s.batch = c.x[0];
  s.in_channels = c.x[1];
  s.out_channels = c.w[0];
  s.groups = c.o.groups;
  s.in = {c.x[2], c.x[3], 1};
  s.kernel = {c.w[2], c.w[3], 1};
  s.out = {oh, ow, 1};
  s.stride = {c.o.stride[0], c.o.stride[1], 1};
  s.pad = {c.o.padding[0], c.o.padding[1], 1};
  s.dil = {c.o.dilation[0], c.o.dilation[1], 1};
  return s;
}

// cuDNN loads where it is installed (needs no device): version 9, a path.
TEST(CudaConv, CudnnLoads) {
  std::string why;
  if (!cuda::dnn::available(&why)) GTEST_SKIP() << "no cuDNN: " << why;
  std::printf("[ember gpu] cuDNN %zu from %s\n", cuda::dnn::version(),
              cuda::dnn::library_path().c_str());
  EXPECT_EQ(cuda::dnn::version() / 10000, 9u);
  EXPECT_NE(cuda::dnn::library_path().find("libcudnn.so.9"), std::string::npos);
}

TEST(CudaConv, EmberKernelsMatchTheCpu) {
  EMBER_NEED_CUDA();
  EnvGuard force("EMBER_CONV_CANDIDATE", "ember");
  for (DType dt : kDtypes) {
    expect_hand_conv<Cuda>(dt);
    expect_all_like_cpu<Cuda>(dt);
    expect_transpose_like_cpu<Cuda>(dt);
  }
}

TEST(CudaConv, CudnnMatchesTheCpu) {
  EMBER_NEED_CUDNN();
  std::printf("[ember gpu] cuDNN %zu from %s\n", cuda::dnn::version(),
              cuda::dnn::library_path().c_str());
  // cuDNN serves the f32 cases itself (not im2col in its place); other types it may refuse
  // are printed (they run im2col).
  kernel::ComputeDevice& dev = cuda::device(0);
  for (const auto& c : kCases2) {
    const auto oh =
        (c.x[2] + 2 * c.o.padding[0] - c.o.dilation[0] * (c.w[2] - 1) - 1) / c.o.stride[0] + 1;
    const auto ow =
        (c.x[3] + 2 * c.o.padding[1] - c.o.dilation[1] * (c.w[3] - 1) - 1) / c.o.stride[1] + 1;
    for (DType dt : kDtypes)
      for (auto op : {cuda::dnn::ConvOp::Forward, cuda::dnn::ConvOp::BackwardData,
                      cuda::dnn::ConvOp::BackwardFilter}) {
        const std::string why =
            cuda::dnn::refusal(dev, kernel::elem_of(dt), op, dnn_shape(c, oh, ow));
        if (dt == DType::F32)
          EXPECT_EQ(why, "") << c.name << " op " << static_cast<int>(op);
        else if (!why.empty())
          std::printf("[ember gpu] cuDNN refuses %s %s op %d: %s\n", c.name.c_str(),
                      std::string(dtype_name(dt)).c_str(), static_cast<int>(op), why.c_str());
      }
  }
  EnvGuard force("EMBER_CONV_CANDIDATE", "cudnn");
  for (DType dt : kDtypes) {
    expect_hand_conv<Cuda>(dt);
    expect_all_like_cpu<Cuda>(dt);
    expect_transpose_like_cpu<Cuda>(dt);
  }
}

TEST(CudaConv, AutotuneRecordsAndLogsItsChoice) {
  EMBER_NEED_CUDNN();
  if (!tune::Tuner::enabled()) GTEST_SKIP() << "EMBER_AUTOTUNE=0";
  EnvGuard unforced("EMBER_CONV_CANDIDATE", nullptr);
  EnvGuard vendor("EMBER_VENDOR_CANDIDATES", "1");
  EnvGuard log("EMBER_AUTOTUNE_LOG", "1");
  // x [8, 32, 12, 12], w [48, 32, 3, 3], stride 1, padding 1: the key's bucket is
  // 8 x 32 x 64 x 1 x 16 x 16 x 4 x 4 x 1 x 1 x 1 x 1 x 1 x 1.
  const Case<2> c{"tuned", {8, 32, 12, 12}, {48, 32, 3, 3}, opts<2>({1, 1}, {1, 1}, {1, 1}, 1)};
  ::testing::internal::CaptureStderr();
  expect_like_cpu<Cuda, 2>(c, DType::F32);
  const std::string err = ::testing::internal::GetCapturedStderr();
  for (const char* op : {"conv2d", "conv2d_x_backward", "conv2d_weight_backward"}) {
    SCOPED_TRACE(op);
    const tune::Key key =
        tune::make_key(op, {8, 32, 48, 1, 12, 12, 3, 3, 1, 1, 1, 1, 1, 1}, "f32", cuda::device(0));
    EXPECT_EQ(key.shape,
              (std::vector<std::uint64_t>{8, 32, 64, 1, 16, 16, 4, 4, 1, 1, 1, 1, 1, 1}));
    const auto winner = tune::Tuner::global().winner(key);
    ASSERT_TRUE(winner.has_value()) << key.str();
    const auto times = tune::Tuner::global().timings(key);
    ASSERT_EQ(times.size(), 2u) << key.str();
    const double own = times.at("ember"), dnn = times.at("cudnn");
    EXPECT_GT(own, 0.0);
    EXPECT_GT(dnn, 0.0);
    EXPECT_EQ(*winner, own <= dnn ? "ember" : "cudnn");
    const std::size_t at = err.find("[ember autotune] " + key.str() + ":");
    ASSERT_NE(at, std::string::npos) << err;
    const std::string line = err.substr(at, err.find('\n', at) - at);
    EXPECT_NE(line.find("ember"), std::string::npos) << line;
    EXPECT_NE(line.find("cudnn"), std::string::npos) << line;
    std::printf("[ember gpu] %s\n", line.c_str());
  }
}

TEST(CudaConv, LargeConvolutionMatchesTheCpuThroughEachCandidate) {
  EMBER_NEED_CUDNN();
  // 3x3, 64 channels, 28 x 28, batch 4, f32: algorithms with a workspace from the pool.
  for (const char* which : {"ember", "cudnn"}) {
    EnvGuard force("EMBER_CONV_CANDIDATE", which);
    SCOPED_TRACE(which);
    expect_like_cpu<Cuda, 2>(
        {"64ch 28x28", {4, 64, 28, 28}, {64, 64, 3, 3}, opts<2>({1, 1}, {1, 1}, {1, 1}, 1)},
        DType::F32);
  }
}
#endif

template <class B>
class GpuConv : public ::testing::Test {};
TYPED_TEST_SUITE(GpuConv, ember::test::GpuConformanceBackends, ember::test::GpuNames);

}  // namespace

// Every case in f32 as the backend runs it (on CUDA: the autotuned candidate; on Vulkan:
// im2col), and the transposed convolution.
TYPED_TEST(GpuConv, CasesMatchTheCpu) {
  using B = TypeParam;
  expect_hand_conv<B>(DType::F32);
  expect_all_like_cpu<B>(DType::F32);
  expect_transpose_like_cpu<B>(DType::F32);
}

// The forcing switch on every GPU backend: a name the device does not offer (cudnn on
// Vulkan) runs im2col; an unknown name is a ValueError naming the function and the choices.
TYPED_TEST(GpuConv, ForcingAndItsErrors) {
  using B = TypeParam;
  {
    EnvGuard force("EMBER_CONV_CANDIDATE", "ember");
    expect_hand_conv<B>(DType::F32);
    expect_like_cpu<B, 2>(kCases2[0], DType::F32);
  }
  if (B::name() != "cuda") {
    EnvGuard force("EMBER_CONV_CANDIDATE", "cudnn");
    expect_hand_conv<B>(DType::F32);
    expect_like_cpu<B, 1>(kCases1[1], DType::F32);
  }
  EnvGuard force("EMBER_CONV_CANDIDATE", "winograd");
  const TensorData xd = data({1, 2, 4, 4}, DType::F32, 1.0f),
                   wd = data({3, 2, 3, 3}, DType::F32, 1.f);
  const auto expect_error = [](const char* op, auto&& f) {
    try {
      f();
      ADD_FAILURE() << "no error for EMBER_CONV_CANDIDATE=winograd (" << op << ")";
    } catch (const ValueError& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find(std::string("[") + op + "] EMBER_CONV_CANDIDATE=winograd"),
                std::string::npos)
          << m;
      EXPECT_NE(m.find("ember or cudnn"), std::string::npos) << m;
    }
  };
  expect_error("conv", [&] {
    (void)B::float_into_data(
        B::template conv<2>(on<B, 4>(xd), on<B, 4>(wd), std::nullopt, ConvOptions<2>{}));
  });
  const TensorData dyd = data({1, 3, 2, 2}, DType::F32, 1.0f);
  expect_error("conv_x_backward", [&] {
    (void)B::float_into_data(
        B::template conv_x_backward<2>(on<B, 4>(dyd), on<B, 4>(wd), xd.shape(), ConvOptions<2>{}));
  });
  expect_error("conv_weight_backward", [&] {
    (void)B::float_into_data(B::template conv_weight_backward<2>(on<B, 4>(xd), on<B, 4>(dyd),
                                                                 wd.shape(), ConvOptions<2>{}));
  });
}
