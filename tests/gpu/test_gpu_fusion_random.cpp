// Fusion<Vulkan> / Fusion<Cuda> against the unfused GPU backend on random element-wise programs:
// rank-3 shapes with broadcast dims, transposed (strided) inputs, flat ones on the four-lane and
// the one-lane paths, values read early, late or never (extra outputs, blocks of their own,
// values kept in registers); f32, f16, bf16, and f64 where the device has it. Tolerance: bit for
// bit (any NaN matches any NaN): a block evaluates the unfused kernels' own expressions in the
// same compute type, uncontracted, and rounds f16/bf16 after every step as they store it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "ember/fusion/fusion.hpp"
#include "ember/tensor/tensor.hpp"
#include "gpu_backends.hpp"
#include "gpu_test_util.hpp"
#ifdef EMBER_HAVE_VULKAN
#include "ember/fusion/vulkan.hpp"
#endif
#ifdef EMBER_HAVE_CUDA
#include "ember/fusion/cuda.hpp"
#endif

namespace ember::test {
namespace {

constexpr std::size_t kRank = 3;
template <class B>
using T3 = Tensor<B, kRank>;

/// Elements of the largest shape a program draws: with at most 3 inputs and 12 steps, a run
/// holds about 15 * 1024 elements (llvmpipe runs this in CI).
constexpr std::int64_t kMaxElements = 1024;
constexpr std::uint64_t kSeed = 20260314;

// ---- random draws (spelled out, so a seed gives the same program with any standard library) --

using Rng = std::mt19937_64;

std::size_t below(Rng& rng, std::size_t n) {
  return static_cast<std::size_t>(rng() % n);
}

/// A value in [lo, hi).
double uniform(Rng& rng, double lo, double hi) {
  return lo + (hi - lo) * (static_cast<double>(rng() >> 11) * 0x1.0p-53);
}

/// A step's scalar: a value in [lo, hi) with three decimals (printed as drawn).
double scalar(Rng& rng, double lo, double hi) {
  return std::round(uniform(rng, lo, hi) * 1000.0) / 1000.0;
}

// ---- the programs ---------------------------------------------------------------------------

// Steps with a kernel expression on the GPU (ember/gpu/expr.hpp) or clamp, so that no step of
// either run goes through the host. "(abs)": the operand's absolute value first (one more
// recorded step), to stay in the function's domain.
// clang-format off
enum UnaryOp : int {
  kExp, kLog, kLog1p, kSqrt, kErf, kSin, kCos, kTanh, kNeg, kAbs, kSquare, kRecip, kFloor,
  kRound, kCeil, kTrunc, kSign,
  kClamp,  // two scalars; the ones below take one
  kClampMin, kAddScalar, kSubScalar, kMulScalar, kDivScalar, kRemainderScalar, kPowScalar,
  kUnaryCount
};
constexpr const char* kUnaryNames[] = {
    "exp", "log(abs)", "log1p(abs)", "sqrt(abs)", "erf", "sin", "cos", "tanh", "neg", "abs",
    "square", "recip", "floor", "round", "ceil", "trunc", "sign",
    "clamp",
    "clamp_min", "add_scalar", "sub_scalar", "mul_scalar", "div_scalar", "remainder_scalar",
    "powf_scalar(abs)"};
// clang-format on
static_assert(std::size(kUnaryNames) == static_cast<std::size_t>(kUnaryCount));

enum BinaryOp : int { kAdd, kSub, kMul, kDiv, kMax, kMin, kRemainder, kPow, kBinaryCount };
constexpr const char* kBinaryNames[] = {
    "add", "sub", "mul", "div", "max_pair", "min_pair", "remainder", "powf(abs, clamp(-2, 3))"};
static_assert(std::size(kBinaryNames) == static_cast<std::size_t>(kBinaryCount));

/// The scalars unary op `op` takes.
int scalar_count(int op) {
  if (op == kClamp) return 2;
  return op > kClamp ? 1 : 0;
}

struct Step {
  bool binary = false;
  int op = 0;
  std::size_t a = 0, b = 0;   // operands: indices of earlier values
  double s0 = 0.0, s1 = 0.0;  // the scalars of the scalar forms and clamp
};

struct Input {
  Shape shape;              // as the program sees it (size-1 dims broadcast)
  bool transposed = false;  // stored with dims 0 and 2 swapped, read through swap_dims(0, 2)
  TensorData data;          // f32 values as stored, converted to the program's dtype
};

struct Read {
  std::size_t after;  // steps recorded when it is read (the last step's count: after drops)
  std::size_t value;
};

/// Values 0 .. inputs-1 are the inputs, then one value per step.
struct Program {
  std::uint64_t seed = 0;
  DType dtype = DType::F32;
  std::vector<Input> inputs;
  std::vector<Step> steps;
  std::vector<bool> kept;   // per value: held to the end (else dropped once all are recorded)
  std::vector<Read> reads;  // in the order they happen
};

// Flat programs (no broadcast, no transpose) with a multiple of 4 elements take the four-lane
// kernels, flat ones with another count the one-lane kernels, mixed ones mostly the strided.
enum class Layout { kFlatFourLanes, kFlatOneLane, kMixed };

Shape draw_shape(Rng& rng, Layout layout) {
  constexpr std::int64_t kDims[] = {1, 2, 3, 5, 8, 64};
  for (;;) {
    Shape s{kDims[below(rng, 6)], kDims[below(rng, 6)], kDims[below(rng, 6)]};
    const std::int64_t n = s.numel();
    if (n > kMaxElements) continue;
    if (layout == Layout::kFlatFourLanes && n % 4 != 0) continue;
    if (layout == Layout::kFlatOneLane && n % 4 == 0) continue;
    return s;
  }
}

Input draw_input(Rng& rng, const Shape& out, bool mixed) {
  Input in;
  in.shape = out;
  if (mixed && below(rng, 2) == 0)
    for (std::size_t d = 0; d < kRank; ++d)
      if (below(rng, 2) == 0) in.shape[d] = 1;
  in.transposed = mixed && below(rng, 3) == 0;
  Shape stored = in.shape;
  if (in.transposed) std::swap(stored[0], stored[2]);
  // Mostly (-2, 2); now and then a value where round, floor, sign and remainder have edges.
  constexpr float kEdges[] = {0.0f, -0.0f, 0.5f, -0.5f, 1.0f, -1.0f, 1.5f, -2.5f, 3.0f};
  std::vector<float> v(static_cast<std::size_t>(stored.numel()));
  for (float& x : v)
    x = below(rng, 16) == 0 ? kEdges[below(rng, std::size(kEdges))]
                            : static_cast<float>(uniform(rng, -2.0, 2.0));
  in.data = TensorData(std::move(v), stored);
  return in;
}

/// An operand among the first `values` values: half the time one of the last three (long
/// chains), else any.
std::size_t draw_operand(Rng& rng, std::size_t values) {
  if (below(rng, 2) == 0) return values - 1 - below(rng, std::min<std::size_t>(values, 3));
  return below(rng, values);
}

Step draw_step(Rng& rng, std::size_t values) {
  Step s;
  s.binary = below(rng, 5) < 2;
  s.a = draw_operand(rng, values);
  if (s.binary) {
    s.op = static_cast<int>(below(rng, kBinaryCount));
    s.b = draw_operand(rng, values);
    return s;
  }
  s.op = static_cast<int>(below(rng, kUnaryCount));
  const double sign = below(rng, 2) == 0 ? 1.0 : -1.0;
  switch (s.op) {
    case kClamp:
      s.s0 = scalar(rng, -2.0, 1.0);
      s.s1 = s.s0 + scalar(rng, 0.25, 3.0);
      break;
    case kClampMin:
      s.s0 = scalar(rng, -2.0, 1.0);
      break;
    case kDivScalar:
    case kRemainderScalar:
      s.s0 = sign * scalar(rng, 0.25, 3.0);
      break;
    case kPowScalar:
      s.s0 = scalar(rng, -2.0, 3.0);
      break;
    default:
      s.s0 = scalar(rng, -3.0, 3.0);
      break;
  }
  return s;
}

Program draw_program(std::uint64_t seed, DType dtype, Layout layout) {
  Rng rng(seed);
  Program p;
  p.seed = seed;
  p.dtype = dtype;
  const Shape out = draw_shape(rng, layout);
  const std::size_t inputs = 1 + below(rng, 3);
  for (std::size_t k = 0; k < inputs; ++k)
    p.inputs.push_back(draw_input(rng, out, layout == Layout::kMixed));
  const std::size_t steps = 3 + below(rng, 10);
  for (std::size_t i = 0; i < steps; ++i) {
    p.steps.push_back(draw_step(rng, inputs + i));
    // Now and then a value is read while later steps are still to come: it and the pending
    // values it needs run now, and later blocks load them as inputs.
    if (i + 1 < steps && below(rng, 6) == 0) p.reads.push_back({i + 1, below(rng, inputs + i + 1)});
  }
  // The last value and about three in four others stay held and are read at the end in a
  // random order; the others are dropped (inside a block they never reach memory).
  const std::size_t values = inputs + steps;
  std::vector<std::size_t> late;
  p.kept.resize(values);
  for (std::size_t i = 0; i < values; ++i) {
    p.kept[i] = i + 1 == values || below(rng, 4) != 0;
    if (p.kept[i]) late.push_back(i);
  }
  for (std::size_t i = late.size(); i > 1; --i) std::swap(late[i - 1], late[below(rng, i)]);
  for (std::size_t i : late) p.reads.push_back({steps, i});
  return p;
}

std::string describe(const Program& p) {
  std::ostringstream os;
  os << "program of seed " << p.seed << " (" << dtype_name(p.dtype) << "):";
  for (std::size_t i = 0; i < p.inputs.size(); ++i)
    os << "\n  v" << i << " = input " << p.inputs[i].shape.to_string()
       << (p.inputs[i].transposed ? " (transposed)" : "");
  for (std::size_t i = 0; i < p.steps.size(); ++i) {
    const Step& s = p.steps[i];
    os << "\n  v" << p.inputs.size() + i << " = "
       << (s.binary ? kBinaryNames[s.op] : kUnaryNames[s.op]) << "(v" << s.a;
    if (s.binary) os << ", v" << s.b;
    if (!s.binary && scalar_count(s.op) >= 1) os << ", " << s.s0;
    if (!s.binary && scalar_count(s.op) >= 2) os << ", " << s.s1;
    os << ")";
  }
  os << "\n  reads:";
  for (const Read& r : p.reads) {
    os << " v" << r.value;
    if (r.after < p.steps.size()) os << " (after step " << r.after << ")";
  }
  os << "\n  dropped:";
  for (std::size_t i = 0; i < p.kept.size(); ++i)
    if (!p.kept[i]) os << " v" << i;
  return os.str();
}

// ---- running a program ----------------------------------------------------------------------

template <class B>
T3<B> apply_step(const Step& s, const std::vector<std::optional<T3<B>>>& v) {
  const T3<B>& x = *v[s.a];
  if (s.binary) {
    const T3<B>& y = *v[s.b];
    switch (s.op) {
      case kAdd:
        return x.add(y);
      case kSub:
        return x.sub(y);
      case kMul:
        return x.mul(y);
      case kDiv:
        return x.div(y);
      case kMax:
        return x.max_pair(y);
      case kMin:
        return x.min_pair(y);
      case kRemainder:
        return x.remainder(y);
      default:
        return x.abs().powf(y.clamp(-2.0, 3.0));
    }
  }
  switch (s.op) {
    case kExp:
      return x.exp();
    case kLog:
      return x.abs().log();
    case kLog1p:
      return x.abs().log1p();
    case kSqrt:
      return x.abs().sqrt();
    case kErf:
      return x.erf();
    case kSin:
      return x.sin();
    case kCos:
      return x.cos();
    case kTanh:
      return x.tanh();
    case kNeg:
      return x.neg();
    case kAbs:
      return x.abs();
    case kSquare:
      return x.square();
    case kRecip:
      return x.recip();
    case kFloor:
      return x.floor();
    case kRound:
      return x.round();
    case kCeil:
      return x.ceil();
    case kTrunc:
      return x.trunc();
    case kSign:
      return x.sign();
    case kClamp:
      return x.clamp(s.s0, s.s1);
    case kClampMin:
      return x.clamp_min(s.s0);
    case kAddScalar:
      return x.add_scalar(s.s0);
    case kSubScalar:
      return x.sub_scalar(s.s0);
    case kMulScalar:
      return x.mul_scalar(s.s0);
    case kDivScalar:
      return x.div_scalar(s.s0);
    case kRemainderScalar:
      return x.remainder_scalar(s.s0);
    default:
      return x.abs().powf_scalar(s.s0);
  }
}

/// Runs program p on backend B: the values of p.reads, in order.
template <class B>
std::vector<TensorData> run_program(const Program& p) {
  const typename B::Device dev{0};
  std::vector<std::optional<T3<B>>> v;
  v.reserve(p.inputs.size() + p.steps.size());
  for (const Input& in : p.inputs) {
    T3<B> t = T3<B>::from_data(in.data, dev, p.dtype);
    v.emplace_back(in.transposed ? t.swap_dims(0, 2) : std::move(t));
  }
  std::vector<TensorData> got;
  std::size_t next = 0;
  const auto read_through = [&](std::size_t recorded) {
    for (; next < p.reads.size() && p.reads[next].after == recorded; ++next)
      got.push_back(v[p.reads[next].value]->into_data());
  };
  for (std::size_t i = 0; i < p.steps.size(); ++i) {
    T3<B> r = apply_step<B>(p.steps[i], v);
    v.emplace_back(std::move(r));
    if (i + 1 < p.steps.size()) read_through(i + 1);
  }
  for (std::size_t i = 0; i < v.size(); ++i)
    if (!p.kept[i]) v[i].reset();
  read_through(p.steps.size());
  return got;
}

// ---- comparing --------------------------------------------------------------------------------

/// The exponent and mantissa fields of a float dtype's bit pattern.
struct Fields {
  std::uint64_t exponent, mantissa;
};
Fields fields_of(DType dt) {
  switch (dt) {
    case DType::F16:
      return {0x7c00, 0x03ff};
    case DType::BF16:
      return {0x7f80, 0x007f};
    case DType::F64:
      return {0x7ff0000000000000ull, 0x000fffffffffffffull};
    default:
      return {0x7f800000, 0x007fffff};
  }
}

/// Elements compared, and how many of them were finite.
struct Tally {
  std::uint64_t elements = 0, finite = 0;
};

/// Empty when `got` is `want` bit for bit (two NaNs match whatever their sign and payload),
/// else the first difference.
std::string difference(const TensorData& got, const TensorData& want, Tally& tally) {
  if (got.dtype() != want.dtype())
    return "dtype " + std::string(dtype_name(got.dtype())) + ", unfused " +
           std::string(dtype_name(want.dtype()));
  if (!(got.shape() == want.shape()))
    return "shape " + got.shape().to_string() + ", unfused " + want.shape().to_string();
  const std::vector<std::uint64_t> g = bits_of(got), w = bits_of(want);
  if (g.size() != w.size()) return "byte counts differ";
  const Fields f = fields_of(want.dtype());
  const auto special = [&](std::uint64_t b) { return (b & f.exponent) == f.exponent; };
  const auto nan = [&](std::uint64_t b) { return special(b) && (b & f.mantissa) != 0; };
  for (std::size_t i = 0; i < g.size(); ++i) {
    ++tally.elements;
    if (!special(w[i])) ++tally.finite;
    if (g[i] == w[i] || (nan(g[i]) && nan(w[i]))) continue;
    const auto at = static_cast<std::int64_t>(i);
    std::ostringstream os;
    os.precision(17);
    os << "element " << i << ": fused " << got.value_as_double(at) << " (0x" << std::hex << g[i]
       << std::dec << "), unfused " << want.value_as_double(at) << " (0x" << std::hex << w[i]
       << ")";
    return os.str();
  }
  return "";
}

/// Whether the device of backend G has dtype dt (storage and kernels).
template <class G>
bool has_dtype(DType dt) {
  const auto probe = Tensor<G, 1>::from_floats({0.0}, typename G::Device{0});
  return gpu::native_dtype(dt, probe.primitive().compute());
}

/// Runs `count` programs of dtype dt (seeds first_seed, first_seed + 1, ...) on Fusion<G> and
/// on G and compares every value read.
template <class G>
void check_programs(DType dt, int count, std::uint64_t first_seed) {
  Tally tally;
  for (int trial = 0; trial < count; ++trial) {
    const Layout layout = trial % 4 == 0   ? Layout::kFlatFourLanes
                          : trial % 4 == 1 ? Layout::kFlatOneLane
                                           : Layout::kMixed;
    const Program p = draw_program(first_seed + static_cast<std::uint64_t>(trial), dt, layout);
    const std::string what = describe(p);

    const std::uint64_t host_unfused = host_calls();
    const std::vector<TensorData> want = run_program<G>(p);
    const std::uint64_t unfused_host_calls = host_calls() - host_unfused;

    fusion::reset_stats();
    const std::uint64_t host_fused = host_calls();
    const std::vector<TensorData> got = run_program<Fusion<G>>(p);
    const std::uint64_t fused_host_calls = host_calls() - host_fused;
    const fusion::Stats stats = fusion::stats();

    ASSERT_EQ(got.size(), want.size()) << what;
    for (std::size_t k = 0; k < got.size(); ++k) {
      const std::string diff = difference(got[k], want[k], tally);
      ASSERT_TRUE(diff.empty()) << "read " << k << " (v" << p.reads[k].value << "): " << diff
                                << "\n"
                                << what;
    }
    if (dt == DType::F64) {
      // A device without f64 functions (exp on Vulkan) declines the block: its steps run one
      // by one, through the host where the unfused ones do too, never more often.
      EXPECT_LE(fused_host_calls, unfused_host_calls) << what;
    } else {
      ASSERT_EQ(fused_host_calls, 0u) << "a step went through the host\n" << what;
      ASSERT_GE(stats.blocks, 1u) << what;
      ASSERT_EQ(stats.replayed_ops, 0u) << "steps ran one by one\n" << what;
    }
  }
  // Most compared elements are finite: the programs are not NaN against NaN.
  EXPECT_GT(tally.finite * 2, tally.elements)
      << tally.finite << " of " << tally.elements << " elements finite";
}

template <class B>
class GpuFusionRandomTest : public ::testing::Test {
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
TYPED_TEST_SUITE(GpuFusionRandomTest, GpuConformanceBackends, GpuNames);

TYPED_TEST(GpuFusionRandomTest, F32ProgramsHaveTheUnfusedValuesBitForBit) {
  check_programs<TypeParam>(DType::F32, 60, kSeed);
}

TYPED_TEST(GpuFusionRandomTest, Bf16ProgramsHaveTheUnfusedValuesBitForBit) {
  if (!has_dtype<TypeParam>(DType::BF16)) GTEST_SKIP() << "no bf16 on this device";
  check_programs<TypeParam>(DType::BF16, 30, kSeed + 1000);
}

// f16 takes the bf16 programs' path (both round each step to the dtype); fewer programs, as
// llvmpipe compiles f16 kernels slowly (about 5 s per program, against 0.3 s for bf16).
TYPED_TEST(GpuFusionRandomTest, F16ProgramsHaveTheUnfusedValuesBitForBit) {
  if (!has_dtype<TypeParam>(DType::F16)) GTEST_SKIP() << "no f16 on this device";
  check_programs<TypeParam>(DType::F16, 6, kSeed + 2000);
}

// f64: fused where the device has f64 and every step's function; else the block is declined
// and its steps run one by one: the same values either way.
TYPED_TEST(GpuFusionRandomTest, F64ProgramsHaveTheUnfusedValuesBitForBit) {
  if (!has_dtype<TypeParam>(DType::F64)) GTEST_SKIP() << "no f64 on this device";
  check_programs<TypeParam>(DType::F64, 20, kSeed + 3000);
}

}  // namespace
}  // namespace ember::test
