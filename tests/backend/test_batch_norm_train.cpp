// Training-mode batch norm (module::batch_norm_train) on every backend stack, and on a CPU
// variant without the fused kernel (the front end's composite), against the formulas in
// f64; the CPU's float_batch_norm_train_backward against the gradient formulas; the
// front-end checks.
//
// Tolerances (|a - b| <= abs + rel |b|): f32 rel 1e-5 / abs 1e-5 (normalised values of
// order 1, sums in f32 lanes with f64 totals); f64 rel 1e-12 / abs 1e-12.
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "backends.hpp"
#include "ember/tensor/module/nn.hpp"
#include "fixtures.hpp"

using namespace ember;
using ember::test::expect_approx;

namespace {

using i64 = std::int64_t;

/// The CPU backend without its fused training batch norm: the front end's composite.
struct CpuNoFusedBn : Cpu {
  static std::string name() { return "cpu_no_fused_bn"; }
  static std::pair<CpuTensor, CpuTensor> float_batch_norm_train(const CpuTensor&,
                                                                const std::optional<CpuTensor>&,
                                                                const std::optional<CpuTensor>&,
                                                                double) = delete;
};
template <class B>
constexpr bool kHasFusedBn = requires(const typename B::FloatTensor& p,
                                      const std::optional<typename B::FloatTensor>& o) {
  B::float_batch_norm_train(p, o, o, 1e-5);
};
static_assert(kHasFusedBn<Cpu> && kHasFusedBn<Autodiff<Cpu>> && !kHasFusedBn<CpuNoFusedBn>);

std::vector<double> values(i64 n, std::uint64_t seed, double lo, double hi) {
  std::vector<double> v(static_cast<std::size_t>(n));
  std::uint64_t s = seed * 0x9E3779B97F4A7C15ull + 7;
  for (auto& x : v) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    x = lo + (hi - lo) * static_cast<double>(s >> 11) / static_cast<double>(1ull << 53);
  }
  return v;
}

/// f64 reference: y, mean, biased var of x [N, C, S] (flat), per-channel weight/bias.
struct Ref {
  std::vector<double> y, mean, var;
};
Ref reference(const std::vector<double>& x, i64 N, i64 C, i64 S, const std::vector<double>* w,
              const std::vector<double>* b, double eps) {
  Ref r{std::vector<double>(x.size()), std::vector<double>(C), std::vector<double>(C)};
  const double M = static_cast<double>(N * S);
  for (i64 c = 0; c < C; ++c) {
    double sum = 0, sq = 0;
    for (i64 n = 0; n < N; ++n)
      for (i64 i = 0; i < S; ++i) sum += x[static_cast<std::size_t>((n * C + c) * S + i)];
    const double m = sum / M;
    for (i64 n = 0; n < N; ++n)
      for (i64 i = 0; i < S; ++i) {
        const double d = x[static_cast<std::size_t>((n * C + c) * S + i)] - m;
        sq += d * d;
      }
    const double v = sq / M, is = 1.0 / std::sqrt(v + eps);
    r.mean[c] = m;
    r.var[c] = v;
    for (i64 n = 0; n < N; ++n)
      for (i64 i = 0; i < S; ++i) {
        const std::size_t k = static_cast<std::size_t>((n * C + c) * S + i);
        r.y[k] = (x[k] - m) * is * (w ? (*w)[c] : 1.0) + (b ? (*b)[c] : 0.0);
      }
  }
  return r;
}

template <class B, std::size_t D>
void check_shape(const Shape& xs, bool has_w, bool has_b, DType dt, Tolerance tol,
                 std::uint64_t seed) {
  SCOPED_TRACE(xs.to_string() + (has_w ? " weight" : "") + (has_b ? " bias" : ""));
  const i64 N = xs[0], C = xs[1], S = xs.numel() / (N * C);
  const auto xv = values(xs.numel(), seed, -3.0, 5.0);
  const auto wv = values(C, seed + 1, 0.5, 1.5), bv = values(C, seed + 2, -1.0, 1.0);
  const double eps = 1e-3;
  const Ref r = reference(xv, N, C, S, has_w ? &wv : nullptr, has_b ? &bv : nullptr, eps);
  const auto x = Tensor<B, D>::from_data(TensorData(xv, xs), {}, dt);
  std::optional<Tensor<B, 1>> w, b;
  if (has_w) w = Tensor<B, 1>::from_data(TensorData(wv, Shape{C}), {}, dt);
  if (has_b) b = Tensor<B, 1>::from_data(TensorData(bv, Shape{C}), {}, dt);
  const auto out = module::batch_norm_train(x, w, b, eps);
  EXPECT_EQ(out.output.dtype(), dt);
  expect_approx(out.output.into_data().convert(DType::F64), TensorData(r.y, xs), tol);
  expect_approx(out.mean.into_data().convert(DType::F64), TensorData(r.mean, Shape{C}), tol);
  expect_approx(out.var.into_data().convert(DType::F64), TensorData(r.var, Shape{C}), tol);
}

template <class B>
void check_all(DType dt, Tolerance tol) {
  std::uint64_t seed = 1;
  for (bool w : {true, false})
    for (bool b : {true, false}) {
      check_shape<B, 2>(Shape{6, 3}, w, b, dt, tol, seed += 3);
      check_shape<B, 3>(Shape{2, 3, 5}, w, b, dt, tol, seed += 3);
      check_shape<B, 4>(Shape{3, 2, 4, 5}, w, b, dt, tol, seed += 3);
    }
  // Rows longer than the CPU kernel's summing block, and enough channels for threads.
  check_shape<B, 4>(Shape{2, 3, 100, 90}, true, true, dt, tol, 99);
  check_shape<B, 4>(Shape{16, 32, 6, 6}, true, true, dt, tol, 98);
}

const Tolerance kF32 = Tolerance::rel_abs(1e-5, 1e-5);
const Tolerance kF64 = Tolerance::rel_abs(1e-12, 1e-12);

}  // namespace

template <class B>
class BatchNormTrainTest : public ::testing::Test {};
using BatchNormTrainBackends =
    ::testing::Types<ember::Cpu, CpuNoFusedBn, ember::Autodiff<ember::Cpu>, ember::Dispatch>;
TYPED_TEST_SUITE(BatchNormTrainTest, BatchNormTrainBackends, ember::test::BackendNames);

TYPED_TEST(BatchNormTrainTest, MatchesFormulasF32) {
  check_all<TypeParam>(DType::F32, kF32);
}

TYPED_TEST(BatchNormTrainTest, MatchesFormulasF64) {
  check_all<TypeParam>(DType::F64, kF64);
}

TYPED_TEST(BatchNormTrainTest, HalfDtypesComputeInF32) {
  check_shape<TypeParam, 3>(Shape{4, 3, 6}, true, true, DType::BF16, Tolerance::rel_abs(2e-2, 5e-2),
                            5);
}

TYPED_TEST(BatchNormTrainTest, Errors) {
  using B = TypeParam;
  const auto x = Tensor<B, 3>::ones(Shape{2, 3, 4});
  EXPECT_THROW(module::batch_norm_train(Tensor<B, 1>::ones(Shape{3})), ShapeError);
  EXPECT_THROW(module::batch_norm_train(x, Tensor<B, 1>::ones(Shape{4})), ShapeError);
  EXPECT_THROW(module::batch_norm_train(x, std::nullopt, Tensor<B, 1>::ones(Shape{2})), ShapeError);
  try {
    module::batch_norm_train(Tensor<B, 3>::ones(Shape{1, 3, 1}));
    ADD_FAILURE() << "no error for one value per channel";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("[batch_norm_train] expected more than 1 value"),
              std::string::npos)
        << e.what();
  }
}

// The CPU's backward kernel against the gradient formulas in f64 (xhat = (x - mean) * invstd):
// dbias = sum dy, dweight = sum dy xhat, dx = w invstd (dy - dbias / M - xhat dweight / M).
TEST(BatchNormTrainBackward, CpuKernelMatchesFormulas) {
  for (DType dt : {DType::F32, DType::F64}) {
    for (bool has_w : {true, false}) {
      SCOPED_TRACE(std::string(dtype_name(dt)) + (has_w ? " weight" : ""));
      const Shape xs{3, 4, 5, 6};
      const i64 N = 3, C = 4, S = 30;
      const double eps = 1e-3, M = static_cast<double>(N * S);
      const auto xv = values(xs.numel(), 11, -2.0, 3.0), gv = values(xs.numel(), 12, -1.0, 1.0);
      const auto wv = values(C, 13, 0.5, 1.5);
      const Ref r = reference(xv, N, C, S, nullptr, nullptr, eps);
      std::vector<double> dx(xv.size()), dw(C), db(C);
      for (i64 c = 0; c < C; ++c) {
        const double is = 1.0 / std::sqrt(r.var[c] + eps);
        double sg = 0, sgx = 0;
        for (i64 n = 0; n < N; ++n)
          for (i64 i = 0; i < S; ++i) {
            const std::size_t k = static_cast<std::size_t>((n * C + c) * S + i);
            sg += gv[k];
            sgx += gv[k] * (xv[k] - r.mean[c]) * is;
          }
        dw[c] = sgx;
        db[c] = sg;
        for (i64 n = 0; n < N; ++n)
          for (i64 i = 0; i < S; ++i) {
            const std::size_t k = static_cast<std::size_t>((n * C + c) * S + i);
            const double xhat = (xv[k] - r.mean[c]) * is;
            dx[k] = (has_w ? wv[c] : 1.0) * is * (gv[k] - sg / M - xhat * sgx / M);
          }
      }
      const auto make = [&](const std::vector<double>& v, const Shape& s) {
        return Cpu::float_from_data(TensorData(v, s).convert(dt), {});
      };
      std::vector<double> st = r.mean;
      st.insert(st.end(), r.var.begin(), r.var.end());
      std::optional<CpuTensor> w;
      if (has_w) w = make(wv, Shape{C});
      const auto [gx, gp] = Cpu::float_batch_norm_train_backward(make(xv, xs), make(gv, xs),
                                                                 make(st, Shape{2, C}), w, eps);
      const Tolerance tol = dt == DType::F64 ? kF64 : Tolerance::rel_abs(1e-5, 1e-5);
      expect_approx(Cpu::float_into_data(gx).convert(DType::F64), TensorData(dx, xs), tol);
      std::vector<double> dp = dw;
      dp.insert(dp.end(), db.begin(), db.end());
      expect_approx(Cpu::float_into_data(gp).convert(DType::F64), TensorData(dp, Shape{2, C}), tol);
    }
  }
}
