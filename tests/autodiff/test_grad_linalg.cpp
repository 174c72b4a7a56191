// Autodiff<Cpu>: gradient checks of the linalg ops (matmul with broadcast batch dims, dot,
// outer, cross, diag, trace, vector_norm, cosine_similarity) and grad-of-grad of matmul,
// cross and vector_norm.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ember/autodiff/cpu.hpp"
#include "ember/tensor/linalg.hpp"
#include "ember/tensor/tensor.hpp"
#include "gradcheck.hpp"
#include "gradgrad_reduce.hpp"

namespace ember::test {
namespace {

using V1 = std::vector<Tensor<AD, 1>>;
using V2 = std::vector<Tensor<AD, 2>>;
using V3 = std::vector<Tensor<AD, 3>>;
using V4 = std::vector<Tensor<AD, 4>>;
constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(GradLinalg, Matmul) {
  gradcheck<2>("matmul 2-D", [](const V2& x) { return x[0].matmul(x[1]); },
               {random_data({3, 4}, 1), random_data({4, 2}, 2)});
  gradcheck<3>("matmul batched", [](const V3& x) { return x[0].matmul(x[1]); },
               {random_data({2, 3, 4}, 3), random_data({2, 4, 5}, 4)});
  gradcheck<4>("matmul broadcast batch", [](const V4& x) { return x[0].matmul(x[1]); },
               {random_data({2, 1, 3, 4}, 5), random_data({1, 5, 4, 2}, 6)});
  gradcheck<3>("matmul batch 1 x batch 2", [](const V3& x) { return x[0].matmul(x[1]); },
               {random_data({1, 3, 4}, 7), random_data({2, 4, 5}, 8)});
  gradcheck<3>("matmul batch 2 x batch 1", [](const V3& x) { return x[0].matmul(x[1]); },
               {random_data({2, 3, 4}, 9), random_data({1, 4, 5}, 10)});
  gradcheck<2>(
      "matmul one constant operand", [](const V2& x) { return x[0].matmul(x[1]); },
      {random_data({3, 4}, 11), random_data({4, 2}, 12)}, GradCheckOptions{.constant_inputs = {1}});
}

TEST(GradLinalg, DotOuterTrace) {
  gradcheck<1>("dot", [](const V1& x) { return x[0].dot(x[1]); },
               {random_data({5}, 20), random_data({5}, 21)});
  gradcheck<1>("outer", [](const V1& x) { return x[0].outer(x[1]); },
               {random_data({3}, 22), random_data({4}, 23)});
  gradcheck<2>("outer batched", [](const V2& x) { return x[0].outer(x[1]); },
               {random_data({2, 3}, 24), random_data({1, 4}, 25)});
  gradcheck<2>("trace", [](const V2& x) { return x[0].trace(); }, {random_data({3, 4}, 26)});
  gradcheck<3>("trace batched", [](const V3& x) { return x[0].trace(); },
               {random_data({2, 4, 3}, 27)});
}

TEST(GradLinalg, Diag) {
  gradcheck<2>("diag wide", [](const V2& x) { return x[0].diag(); }, {random_data({3, 4}, 30)});
  gradcheck<2>("diag tall", [](const V2& x) { return x[0].diag(); }, {random_data({4, 2}, 31)});
  gradcheck<3>("diag batched", [](const V3& x) { return x[0].diag(); },
               {random_data({2, 4, 3}, 32)});
  auto x = Tensor<AD, 2>::from_floats({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}}).require_grad();
  auto g = (x.diag() * Tensor<AD, 1>::from_floats({10.0, 20.0})).sum().backward();
  EXPECT_EQ(x.grad(g)->to_vec<double>(), (std::vector<double>{10, 0, 0, 0, 20, 0}));
}

TEST(GradLinalg, Cross) {
  gradcheck<2>("cross dim -1", [](const V2& x) { return x[0].cross(x[1], -1); },
               {random_data({4, 3}, 40), random_data({4, 3}, 41)});
  gradcheck<2>("cross dim 0", [](const V2& x) { return x[0].cross(x[1], 0); },
               {random_data({3, 4}, 42), random_data({3, 4}, 43)});
  gradcheck<2>("cross broadcast", [](const V2& x) { return x[0].cross(x[1], 1); },
               {random_data({4, 3}, 44), random_data({1, 3}, 45)});
}

TEST(GradLinalg, VectorNorm) {
  for (double p : {1.0, 2.0, 3.0, 1.5, 0.5, kInf, -kInf}) {
    for (std::int64_t d : {0, -1}) {
      gradcheck<2>("vector_norm p=" + std::to_string(p),
                   [p, d](const V2& x) { return linalg::vector_norm(x[0], p, d); },
                   {random_data({4, 5}, 50 + static_cast<std::uint64_t>(d + 1))});
    }
  }
  gradcheck<3>("vector_norm rank 3", [](const V3& x) { return linalg::vector_norm(x[0], 2.0, 1); },
               {random_data({2, 3, 4}, 53)});
  // p = 0 counts non-zeros: zero gradient.
  auto x = Tensor<AD, 1>::from_floats({1.0, 0.0, -2.0}).require_grad();
  auto g0 = linalg::vector_norm(x, 0.0, 0).backward();
  EXPECT_EQ(x.grad(g0)->to_vec<double>(), (std::vector<double>{0, 0, 0}));
  // inf-norm ties split evenly, times sign (torch's norm_backward).
  auto t = Tensor<AD, 1>::from_floats({3.0, -3.0, 1.0}).require_grad();
  auto gi = linalg::vector_norm(t, kInf, 0).backward();
  EXPECT_EQ(t.grad(gi)->to_vec<double>(), (std::vector<double>{0.5, -0.5, 0}));
  auto gm = linalg::vector_norm(t, -kInf, 0).backward();
  EXPECT_EQ(t.grad(gm)->to_vec<double>(), (std::vector<double>{0, 0, 1}));
  // 2-norm of a zero vector: zero gradient (masked), no NaN.
  auto z = Tensor<AD, 1>::from_floats({0.0, 0.0}).require_grad();
  auto gz = linalg::l2_norm(z, 0).backward();
  EXPECT_EQ(z.grad(gz)->to_vec<double>(), (std::vector<double>{0, 0}));
  // 1-norm at zero: sign(0) = 0.
  auto g1 = linalg::l1_norm(x, 0).backward();
  EXPECT_EQ(x.grad(g1)->to_vec<double>(), (std::vector<double>{1, 0, -1}));
}

TEST(GradLinalg, CosineSimilarity) {
  gradcheck<2>("cosine_similarity dim 1",
               [](const V2& x) { return linalg::cosine_similarity(x[0], x[1], 1); },
               {random_data({3, 4}, 60), random_data({3, 4}, 61)});
  gradcheck<2>("cosine_similarity dim 0",
               [](const V2& x) { return linalg::cosine_similarity(x[0], x[1], 0); },
               {random_data({3, 4}, 62), random_data({3, 4}, 63)});
  gradcheck<3>("cosine_similarity broadcast",
               [](const V3& x) { return linalg::cosine_similarity(x[0], x[1], -1); },
               {random_data({2, 1, 4}, 64), random_data({1, 3, 4}, 65)});
  // A zero vector (torch): its clamped norm is a constant, so d/da = b / (eps |b|) and
  // d/db = 0.
  const double eps = 1e-8;
  auto a = Tensor<AD, 1>::from_floats({0.0, 0.0, 0.0}, AD::Device{}, DType::F64).require_grad();
  auto b = Tensor<AD, 1>::from_floats({1.0, 2.0, 2.0}, AD::Device{}, DType::F64).require_grad();
  auto g = linalg::cosine_similarity(a, b, 0, eps).backward();
  const auto ga = a.grad(g)->to_vec<double>();
  EXPECT_NEAR(ga[0], 1.0 / (eps * 3.0), 1e-6 / eps);
  EXPECT_NEAR(ga[1], 2.0 / (eps * 3.0), 1e-6 / eps);
  EXPECT_EQ(b.grad(g)->to_vec<double>(), (std::vector<double>{0, 0, 0}));
}

TEST(GradLinalg, GradOfGrad) {
  gradgradcheck_reduce<2>(
      "matmul x x", [](const Tensor<AD, 2>& x) { return x.matmul(x); }, random_data({3, 3}, 70));
  gradgradcheck_reduce<3>(
      "batched matmul x x^T", [](const Tensor<AD, 3>& x) { return x.matmul(x.swap_dims(1, 2)); },
      random_data({2, 3, 4}, 71));
  gradgradcheck_reduce<2>(
      "cross", [](const Tensor<AD, 2>& x) { return x.cross(x.exp(), 1); }, random_data({2, 3}, 72));
  gradgradcheck_reduce<2>(
      "vector_norm p=2", [](const Tensor<AD, 2>& x) { return linalg::vector_norm(x, 2.0, 1); },
      random_data({3, 4}, 73));
  gradgradcheck_reduce<2>(
      "vector_norm p=3", [](const Tensor<AD, 2>& x) { return linalg::vector_norm(x, 3.0, 1); },
      random_data({3, 4}, 74));
  gradgradcheck_reduce<2>(
      "cosine_similarity",
      [](const Tensor<AD, 2>& x) { return linalg::cosine_similarity(x, x.sin(), 1); },
      random_data({3, 4}, 75));
  gradgradcheck_reduce<2>(
      "trace of x x", [](const Tensor<AD, 2>& x) { return x.matmul(x).trace(); },
      random_data({3, 3}, 76));
}

}  // namespace
}  // namespace ember::test
