// Matrix products on the GPU backends (src/gpu/matmul.cpp): on CUDA both candidates, Ember's
// tiled kernel and cuBLASLt, each forced with EMBER_MATMUL_CANDIDATE, against the CPU backend
// in f32, f16, bf16 and f64 (odd and aligned shapes, batches, broadcast batch dims, transposed
// views, k == 0, vectors), and the candidate autotune records and logs; on every GPU backend
// the switch's errors. The CUDA cases skip without a CUDA device or without cuBLASLt (CI).
//
// Tolerances, per element, relative to S = sum_k |a_ik| |b_kj| (the scale of a dot product's
// rounding error; the CPU computes in f32 (f64 for f64) and rounds once, like both
// candidates): f32 1e-5 (fp32 sums of at most a few hundred terms: about k * 2^-24 * S at
// worst); f16 2e-3 and bf16 1.6e-2 (two units in the last place of the rounded result, 2^-10
// and 2^-7 of S: the two sides' f32 sums differ slightly and may round to neighbours); f64 1e-12.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "ember/core/error.hpp"
#include "ember/tensor/tensor.hpp"
#include "ember/tune/tune.hpp"
#include "gpu_backends.hpp"
#include "gpu_test_util.hpp"
#ifdef EMBER_HAVE_CUDA
#include "cuda/blaslt.hpp"
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
      return 1e-5;
  }
}

/// One product a [.., m, k] x b [.., k, n]: the shapes as stored, and whether the last two
/// dims of a (of b) are a transposed view of a tensor stored as [.., k, m] ([.., n, k]).
struct Case {
  std::string name;
  std::vector<std::int64_t> a, b;
  bool a_transposed = false, b_transposed = false;
};

template <class B, std::size_t D>
Tensor<B, D> make(const std::vector<std::int64_t>& dims, DType dt, bool transposed, float seed) {
  Shape s;
  s.dims = dims;
  const auto n = static_cast<std::size_t>(s.numel());
  std::vector<float> v = spread(n, -1, 1);
  for (std::size_t i = 0; i < n; ++i) v[i] = std::fmod(v[i] * seed + 2.0f, 2.0f) - 1.0f;
  auto t = Tensor<B, D>::from_data(TensorData(v, s).convert(dt));
  return transposed ? t.swap_dims(D - 2, D - 1) : t;
}

/// Expects `B`'s product to be the CPU's within tolerance(dt) * S per element; the output
/// shape, dtype and the absence of host calls are checked too.
template <class B, std::size_t D>
void expect_like_cpu(const Case& c, DType dt) {
  SCOPED_TRACE(c.name + " " + std::string(dtype_name(dt)));
  const auto ga = make<B, D>(c.a, dt, c.a_transposed, 1.0f);
  const auto gb = make<B, D>(c.b, dt, c.b_transposed, 1.7f);
  const auto ca = make<Cpu, D>(c.a, dt, c.a_transposed, 1.0f);
  const auto cb = make<Cpu, D>(c.b, dt, c.b_transposed, 1.7f);
  const std::uint64_t before = host_calls();
  const TensorData got = ga.matmul(gb).into_data();
  EXPECT_EQ(host_calls(), before) << "the product ran on the host";
  const TensorData want = ca.matmul(cb).into_data();
  const TensorData scale = ca.cast(DType::F64).abs().matmul(cb.cast(DType::F64).abs()).into_data();
  ASSERT_EQ(got.shape().dims, want.shape().dims);
  EXPECT_EQ(got.dtype(), dt);
  const std::vector<double> g = values(got), w = values(want), s = values(scale);
  const double tol = tolerance(dt);
  int bad = 0;
  for (std::size_t i = 0; i < g.size() && bad < 5; ++i)
    if (!(std::fabs(g[i] - w[i]) <= tol * s[i])) {
      ADD_FAILURE() << "element " << i << ": " << g[i] << " vs the CPU's " << w[i] << " (allowed "
                    << tol * s[i] << ")";
      ++bad;
    }
}

const std::vector<Case> kCases2{
    {"aligned 64", {64, 64}, {64, 64}},
    {"aligned 128x256x96", {128, 256}, {256, 96}},
    {"odd 37x29x21", {37, 29}, {29, 21}},
    {"row times column", {1, 300}, {300, 1}},
    {"column times row", {33, 1}, {1, 17}},
    {"transposed a", {29, 37}, {29, 21}, true, false},
    {"transposed b", {37, 29}, {21, 29}, false, true},
    {"transposed both", {64, 48}, {80, 64}, true, true},
    {"k 0", {5, 0}, {0, 7}},
};
const std::vector<Case> kCases3{
    {"batched", {3, 33, 17}, {3, 17, 45}},
    {"broadcast b", {4, 20, 31}, {1, 31, 12}},
    {"broadcast a", {1, 20, 31}, {4, 31, 12}},
    {"batched aligned", {2, 64, 128}, {2, 128, 32}},
    {"batched transposed a", {3, 17, 33}, {3, 17, 45}, true, false},
    {"batched k 0", {2, 4, 0}, {2, 0, 3}},
};
const std::vector<Case> kCases4{
    {"broadcast both", {2, 1, 9, 8}, {1, 3, 8, 7}},
};

template <class B>
void expect_all_like_cpu(DType dt) {
  for (const Case& c : kCases2) expect_like_cpu<B, 2>(c, dt);
  for (const Case& c : kCases3) expect_like_cpu<B, 3>(c, dt);
  for (const Case& c : kCases4) expect_like_cpu<B, 4>(c, dt);
}

/// A product worked by hand: exact in every dtype.
template <class B>
void expect_hand_product(DType dt) {
  const auto a = Tensor<B, 2>::from_data(
      TensorData(std::vector<float>{1, 2, 3, 4, 5, 6}, Shape{2, 3}).convert(dt));
  const auto b = Tensor<B, 2>::from_data(
      TensorData(std::vector<float>{7, 8, 9, 10, 11, 12}, Shape{3, 2}).convert(dt));
  EXPECT_EQ(values(a.matmul(b).into_data()), (std::vector<double>{58, 64, 139, 154}))
      << dtype_name(dt);
}

#ifdef EMBER_HAVE_CUDA
/// Skips the test unless there is a CUDA device (and cuBLASLt).
#define EMBER_NEED_CUDA()                                                         \
  do {                                                                            \
    std::string why;                                                              \
    if (cuda::device_count(&why) == 0) GTEST_SKIP() << "no CUDA device: " << why; \
  } while (false)
#define EMBER_NEED_CUBLASLT()                                                   \
  do {                                                                          \
    EMBER_NEED_CUDA();                                                          \
    std::string why;                                                            \
    if (!cuda::blaslt::available(&why)) GTEST_SKIP() << "no cuBLASLt: " << why; \
  } while (false)

const DType kDtypes[] = {DType::F32, DType::F16, DType::BF16, DType::F64};

TEST(CudaMatmul, TiledKernelMatchesTheCpu) {
  EMBER_NEED_CUDA();
  EnvGuard force("EMBER_MATMUL_CANDIDATE", "ember_tiled");
  for (DType dt : kDtypes) {
    expect_hand_product<Cuda>(dt);
    expect_all_like_cpu<Cuda>(dt);
  }
}

TEST(CudaMatmul, CublasLtMatchesTheCpu) {
  EMBER_NEED_CUBLASLT();
  std::printf("[ember gpu] cuBLASLt %zu from %s\n", cuda::blaslt::version(),
              cuda::blaslt::library_path().c_str());
  EnvGuard force("EMBER_MATMUL_CANDIDATE", "cublaslt");
  for (DType dt : kDtypes) {
    expect_hand_product<Cuda>(dt);
    expect_all_like_cpu<Cuda>(dt);
  }
}

TEST(CudaMatmul, AutotuneRecordsAndLogsItsChoice) {
  EMBER_NEED_CUBLASLT();
  if (!tune::Tuner::enabled()) GTEST_SKIP() << "EMBER_AUTOTUNE=0";
  EnvGuard unforced("EMBER_MATMUL_CANDIDATE", nullptr);
  EnvGuard vendor("EMBER_VENDOR_CANDIDATES", "1");
  EnvGuard log("EMBER_AUTOTUNE_LOG", "1");
  for (DType dt : {DType::F32, DType::F16}) {
    SCOPED_TRACE(std::string(dtype_name(dt)));
    // 3 x [200, 384] x [384, 136]: the key's bucket is 4 x 256 x 256 x 512.
    const Case c{"tuned", {3, 200, 384}, {3, 384, 136}};
    ::testing::internal::CaptureStderr();
    expect_like_cpu<Cuda, 3>(c, dt);
    const std::string err = ::testing::internal::GetCapturedStderr();
    const tune::Key key =
        tune::make_key("matmul", {3, 200, 136, 384}, std::string(dtype_name(dt)), cuda::device(0));
    EXPECT_EQ(key.shape, (std::vector<std::uint64_t>{4, 256, 256, 512}));
    const auto winner = tune::Tuner::global().winner(key);
    ASSERT_TRUE(winner.has_value()) << key.str();
    const auto times = tune::Tuner::global().timings(key);
    ASSERT_EQ(times.size(), 2u) << key.str();
    const double tiled = times.at("ember_tiled"), lt = times.at("cublaslt");
    EXPECT_GT(tiled, 0.0);
    EXPECT_GT(lt, 0.0);
    EXPECT_EQ(*winner, tiled <= lt ? "ember_tiled" : "cublaslt");
    // One line for the key: the key, each candidate's time and the winner.
    const std::size_t at = err.find("[ember autotune] " + key.str());
    ASSERT_NE(at, std::string::npos) << err;
    const std::string line = err.substr(at, err.find('\n', at) - at);
    EXPECT_NE(line.find("ember_tiled"), std::string::npos) << line;
    EXPECT_NE(line.find("cublaslt"), std::string::npos) << line;
    EXPECT_NE(line.find(*winner), std::string::npos) << line;
    std::printf("[ember gpu] %s\n", line.c_str());
  }
}

TEST(CudaMatmul, LargeProductMatchesTheCpuThroughEachCandidate) {
  EMBER_NEED_CUBLASLT();
  // 512 x 1024 x 768 f32 through each candidate against the CPU: a product where
  // cuBLASLt may split k (a workspace from the pool).
  for (const char* which : {"ember_tiled", "cublaslt"}) {
    EnvGuard force("EMBER_MATMUL_CANDIDATE", which);
    SCOPED_TRACE(which);
    expect_like_cpu<Cuda, 2>({"512x1024x768", {512, 1024}, {1024, 768}}, DType::F32);
  }
}
#endif

template <class B>
class GpuMatmul : public ::testing::Test {};
TYPED_TEST_SUITE(GpuMatmul, ember::test::GpuConformanceBackends, ember::test::GpuNames);

}  // namespace

// Every case in every dtype the device has, as the backend runs it (on CUDA: the autotuned
// candidate; on Vulkan: the tiled kernel).
TYPED_TEST(GpuMatmul, ProductsMatchTheCpu) {
  using B = TypeParam;
  kernel::ComputeDevice& dev = B::Device::runtime_type::device(0);
  for (DType dt : {DType::F32, DType::F16, DType::BF16, DType::F64}) {
    if (!gpu::native_dtype(dt, dev)) {
      std::printf("[ember gpu] %s: no %s products on %s\n", B::name().c_str(),
                  std::string(dtype_name(dt)).c_str(), dev.properties().name.c_str());
      continue;
    }
    expect_hand_product<B>(dt);
    expect_all_like_cpu<B>(dt);
  }
}

// The forcing switch on every GPU backend: a name the device does not offer (cublaslt on
// Vulkan) runs the tiled kernel; an unknown name is a ValueError naming the choices.
TYPED_TEST(GpuMatmul, ForcingAndItsErrors) {
  using B = TypeParam;
  {
    EnvGuard force("EMBER_MATMUL_CANDIDATE", "ember_tiled");
    expect_hand_product<B>(DType::F32);
    expect_like_cpu<B, 3>({"forced tiled", {2, 9, 5}, {1, 5, 4}}, DType::F32);
  }
  if (B::name() != "cuda") {
    EnvGuard force("EMBER_MATMUL_CANDIDATE", "cublaslt");
    expect_hand_product<B>(DType::F32);
  }
  EnvGuard force("EMBER_MATMUL_CANDIDATE", "mkl");
  const auto a = Tensor<B, 2>::from_data(TensorData(std::vector<float>{1, 2}, Shape{1, 2}));
  try {
    (void)a.matmul(a.swap_dims(0, 1)).into_data();
    ADD_FAILURE() << "no error for EMBER_MATMUL_CANDIDATE=mkl";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("[matmul] EMBER_MATMUL_CANDIDATE=mkl"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("ember_tiled or cublaslt"), std::string::npos) << e.what();
  }
}
