// Autodiff<Cpu>: graph behaviour (leaves, detach, no_grad, freeing, create_graph,
// checkpointing, threads, memory) with hand-computed values.
#include <gtest/gtest.h>

#include <fstream>
#include <thread>

#include "ember/autodiff/cpu.hpp"
#include "ember/tensor/activation.hpp"
#include "ember/tensor/tensor.hpp"
#include "fixtures.hpp"
#include "gradcheck.hpp"

namespace ember::test {
namespace {

using T2 = Tensor<AD, 2>;
using T1 = Tensor<AD, 1>;

std::vector<double> vec(const Tensor<ADInner, 1>& t) {
  return t.to_vec<double>();
}
std::vector<double> vec(const Tensor<ADInner, 2>& t) {
  return t.to_vec<double>();
}

TEST(AutodiffCore, SquareGradientIsTwoX) {
  auto x = T1::from_floats({1.0, -2.0, 3.0}).require_grad();
  auto y = (x * x).sum();
  EXPECT_DOUBLE_EQ(y.into_scalar(), 14.0);
  auto grads = y.backward();
  EXPECT_EQ(vec(*x.grad(grads)), (std::vector<double>{2.0, -4.0, 6.0}));
}

TEST(AutodiffCore, BroadcastGradientsAreSummedToOperandShape) {
  auto a = T2::from_floats({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}}).require_grad();
  auto b = T2::from_floats({{10.0, 20.0, 30.0}}).require_grad();  // [1, 3]
  auto c = T2::from_floats({{2.0}, {3.0}}).require_grad();        // [2, 1]
  auto grads = ((a + b) * c).sum().backward();
  EXPECT_EQ(vec(*a.grad(grads)), (std::vector<double>{2, 2, 2, 3, 3, 3}));
  EXPECT_EQ(a.grad(grads)->shape(), Shape({2, 3}));
  EXPECT_EQ(vec(*b.grad(grads)), (std::vector<double>{5, 5, 5}));
  EXPECT_EQ(b.grad(grads)->shape(), Shape({1, 3}));
  // dL/dc_i = sum_j (a_ij + b_j) = (11+22+33, 14+25+36)
  EXPECT_EQ(vec(*c.grad(grads)), (std::vector<double>{66, 75}));
}

TEST(AutodiffCore, MatmulGradients) {
  auto a = T2::from_floats({{1.0, 2.0}, {3.0, 4.0}}).require_grad();
  auto b = T2::from_floats({{5.0, 6.0}, {7.0, 8.0}}).require_grad();
  auto grads = a.matmul(b).sum().backward();
  // dA = ones @ B^T: row sums of B; dB = A^T @ ones: column sums of A per row.
  EXPECT_EQ(vec(*a.grad(grads)), (std::vector<double>{11, 15, 11, 15}));
  EXPECT_EQ(vec(*b.grad(grads)), (std::vector<double>{4, 4, 6, 6}));
}

TEST(AutodiffCore, SharedInputAccumulates) {
  auto x = T1::from_floats({2.0}).require_grad();
  auto y = x * x * x + x.exp() * 0.0 + x * 4.0;  // 3x^2 + 4 = 16
  auto grads = y.sum().backward();
  EXPECT_DOUBLE_EQ(vec(*x.grad(grads))[0], 16.0);
}

TEST(AutodiffCore, ConstantsAndDetachGetNoGradient) {
  auto x = T1::from_floats({1.0, 2.0}).require_grad();
  auto k = T1::from_floats({3.0, 4.0});
  EXPECT_TRUE(x.is_require_grad());
  EXPECT_FALSE(k.is_require_grad());
  EXPECT_FALSE((k * 2.0).is_require_grad());
  EXPECT_TRUE((k * x).is_require_grad());
  auto d = x.detach();
  EXPECT_FALSE(d.is_require_grad());
  auto grads = (x * d + k * x).sum().backward();
  // d is a constant copy of x: dL/dx = d + k
  EXPECT_EQ(vec(*x.grad(grads)), (std::vector<double>{4, 6}));
  EXPECT_FALSE(k.grad(grads).has_value());
  EXPECT_FALSE(d.grad(grads).has_value());
}

TEST(AutodiffCore, NoGradDoesNotRecord) {
  auto x = T1::from_floats({1.0, 2.0}).require_grad();
  {
    autodiff::NoGrad guard;
    auto y = x * 3.0;
    EXPECT_FALSE(y.is_require_grad());
  }
  EXPECT_TRUE((x * 3.0).is_require_grad());
}

TEST(AutodiffCore, BackwardOnUntrackedTensorThrows) {
  auto k = T1::from_floats({1.0});
  EMBER_EXPECT_THROW_MSG(k.backward(), Error, "[backward] the tensor does not require grad");
}

TEST(AutodiffCore, SecondBackwardThroughFreedGraphThrows) {
  auto x = T1::from_floats({1.0, 2.0}).require_grad();
  auto y = (x.exp() * x).sum();
  (void)y.backward();
  EMBER_EXPECT_THROW_MSG(y.backward(), Error, "already freed");
}

TEST(AutodiffCore, CreateGraphGivesSecondDerivative) {
  // y = x^3: dy/dx = 3x^2, d2y/dx2 = 6x.
  auto x = T1::from_floats({1.0, 2.0, -3.0}, AD::Device{}, DType::F64).require_grad();
  auto y = (x * x * x).sum();
  auto g1 = y.backward(/*create_graph=*/true);
  auto dx = *x.grad_graph(g1);
  EXPECT_TRUE(dx.is_require_grad());
  EXPECT_EQ(dx.inner().to_vec<double>(), (std::vector<double>{3, 12, 27}));
  auto g2 = dx.sum().backward();
  EXPECT_EQ(vec(*x.grad(g2)), (std::vector<double>{6, 12, -18}));
}

TEST(AutodiffCore, CreateGraphThroughExpAndSin) {
  // d2/dx2 exp(sin x) = exp(sin x) (cos^2 x - sin x)
  const double v = 0.7;
  auto x = T1::from_floats({v}, AD::Device{}, DType::F64).require_grad();
  auto y = x.sin().exp().sum();
  auto dx = *x.grad_graph(y.backward(true));
  auto d2 = vec(*x.grad(dx.sum().backward()))[0];
  EXPECT_NEAR(d2, std::exp(std::sin(v)) * (std::cos(v) * std::cos(v) - std::sin(v)), 1e-12);
}

TEST(AutodiffCore, GradRemoveAndReplace) {
  auto x = T1::from_floats({1.0, 2.0}).require_grad();
  auto grads = (x * 2.0).sum().backward();
  const auto inner_device = x.inner().device();  // gradients live on the inner backend
  x.grad_replace(grads, Tensor<ADInner, 1>::from_floats({7.0, 8.0}, inner_device));
  EXPECT_EQ(vec(*x.grad(grads)), (std::vector<double>{7, 8}));
  auto removed = x.grad_remove(grads);
  ASSERT_TRUE(removed.has_value());
  EXPECT_FALSE(x.grad(grads).has_value());
  EMBER_EXPECT_THROW_MSG(
      x.grad_replace(grads, Tensor<ADInner, 1>::from_floats({1.0}, inner_device)), ShapeError,
      "[grad_replace] gradient of shape [1] for a tensor of shape [2]");
}

TEST(AutodiffCore, GradReplaceChecksDtype) {
  auto x = T1::from_floats({1.0, 2.0}).require_grad();
  auto grads = (x * 2.0).sum().backward();
  EMBER_EXPECT_THROW_MSG(
      x.grad_replace(grads,
                     Tensor<ADInner, 1>::from_floats({1.0, 2.0}, x.inner().device(), DType::F64)),
      DTypeError, "[grad_replace] gradient of dtype f64 for a tensor of dtype f32");
}

TEST(AutodiffCore, RequireGradOnTrackedTensorIsANoOp) {
  auto x = T1::from_floats({1.0, 2.0}).require_grad();
  auto again = x.require_grad();              // the same leaf
  auto y = (x * 3.0).require_grad();          // stays in the graph of x
  auto grads = (again * y).sum().backward();  // d/dx 3x^2 = 6x
  EXPECT_EQ(vec(*x.grad(grads)), (std::vector<double>{6, 12}));
}

TEST(AutodiffCore, ReluFamilyGradientsAtKinksMatchTorch) {
  // torch: relu'(0) = 0, relu6'(0) = relu6'(6) = 0, leaky_relu'(0) = slope.
  auto x = T1::from_floats({-1.0, 0.0, 6.0, 7.0}).require_grad();
  auto g1 = ember::activation::relu(x).sum().backward();
  EXPECT_EQ(vec(*x.grad(g1)), (std::vector<double>{0, 0, 1, 1}));
  auto g2 = ember::activation::relu6(x).sum().backward();
  EXPECT_EQ(vec(*x.grad(g2)), (std::vector<double>{0, 0, 0, 0}));
  auto g3 = ember::activation::leaky_relu(x, 0.25).sum().backward();
  EXPECT_EQ(vec(*x.grad(g3)), (std::vector<double>{0.25, 0.25, 1, 1}));
}

TEST(AutodiffCore, InnerAndFromInner) {
  auto c = Tensor<ADInner, 2>::from_floats({{1.0, 2.0}});
  auto a = T2::from_inner(c);
  EXPECT_FALSE(a.is_require_grad());
  EXPECT_EQ(a.inner().to_vec<double>(), (std::vector<double>{1, 2}));
  auto i = Tensor<AD, 1, Int>::from_ints({1, 2});
  EXPECT_EQ(i.inner().to_vec<std::int64_t>(), (std::vector<std::int64_t>{1, 2}));
}

TEST(AutodiffCore, CheckpointingGivesIdenticalGradients) {
  auto run = [](bool ckpt) {
    auto x = T2::from_data(random_data({4, 5}, 1)).require_grad();
    auto w = T2::from_data(random_data({5, 3}, 2)).require_grad();
    std::optional<autodiff::Checkpointing> scope;
    if (ckpt) scope.emplace();
    auto h = x.matmul(w).tanh().exp() * 0.5 + 1.0;
    auto grads = (h * h).sum().backward();
    return std::pair{x.grad(grads)->to_vec<double>(), w.grad(grads)->to_vec<double>()};
  };
  EXPECT_EQ(run(false), run(true));
}

TEST(AutodiffCore, CheckpointingStackType) {
  // The checkpointing stack of the suite's backend (Cpu's behind Dispatch).
#if defined(EMBER_GRAD_VULKAN) || defined(EMBER_GRAD_CUDA)
  using ADC = Autodiff<ADInner, autodiff::BalancedCheckpointing>;
#else
  using ADC = Autodiff<Cpu, autodiff::BalancedCheckpointing>;
#endif
  auto x = Tensor<ADC, 1>::from_floats({0.5, 1.5}).require_grad();
  auto grads = x.exp().sin().sum().backward();
  const auto g = x.grad(grads)->to_vec<double>();
  EXPECT_NEAR(g[0], std::cos(std::exp(0.5f)) * std::exp(0.5f), 1e-5);
  EXPECT_NEAR(g[1], std::cos(std::exp(1.5f)) * std::exp(1.5f), 1e-5);
}

/// Fits y = a x + b by gradient descent; returns (a, b).
std::pair<double, double> fit_line(double a_true, double b_true, int steps) {
  std::vector<double> xs, ys;
  for (int i = 0; i < 16; ++i) {
    xs.push_back(i / 8.0 - 1.0);
    ys.push_back(a_true * xs.back() + b_true);
  }
  auto x = T1::from_data(TensorData(xs, Shape({16})));
  auto y = T1::from_data(TensorData(ys, Shape({16})));
  auto a = T1::from_floats({0.0}).require_grad();
  auto b = T1::from_floats({0.0}).require_grad();
  for (int s = 0; s < steps; ++s) {
    auto err = x * a + b - y;
    auto grads = (err * err).mean().backward();
    auto ga = T1::from_inner(*a.grad(grads));
    auto gb = T1::from_inner(*b.grad(grads));
    a = (a.detach() - ga * 0.3).require_grad();
    b = (b.detach() - gb * 0.3).require_grad();
  }
  return {a.into_scalar(), b.into_scalar()};
}

TEST(AutodiffCore, TwoThreadsTrainIndependently) {
  std::pair<double, double> r1, r2;
  std::thread t1([&] { r1 = fit_line(3.0, 2.0, 400); });
  std::thread t2([&] { r2 = fit_line(-1.5, 0.25, 400); });
  t1.join();
  t2.join();
  EXPECT_NEAR(r1.first, 3.0, 1e-4);
  EXPECT_NEAR(r1.second, 2.0, 1e-4);
  EXPECT_NEAR(r2.first, -1.5, 1e-4);
  EXPECT_NEAR(r2.second, 0.25, 1e-4);
  // And the same as on one thread.
  const auto s1 = fit_line(3.0, 2.0, 400);
  EXPECT_EQ(r1, s1);
}

std::size_t rss_bytes() {
  std::ifstream f("/proc/self/statm");
  std::size_t pages = 0, resident = 0;
  f >> pages >> resident;
  return resident * 4096;
}

TEST(AutodiffCore, TrainingLoopMemoryIsFlat) {
  auto w = T2::from_data(random_data({32, 32}, 3)).require_grad();
  auto x = T2::from_data(random_data({16, 32}, 4));
  auto step = [&] {
    auto h = x.matmul(w).tanh();
    auto grads = (h * h).mean().backward();
    auto g = T2::from_inner(*w.grad(grads));
    w = (w.detach() - g * 0.01).require_grad();
  };
  for (int i = 0; i < 200; ++i) step();
  const auto live0 = cpu::memory_stats().live_bytes;
  const auto rss0 = rss_bytes();
  for (int i = 0; i < 10000; ++i) step();
  const auto live1 = cpu::memory_stats().live_bytes;
  const auto rss1 = rss_bytes();
  EXPECT_EQ(live1, live0) << "tensor memory grew over 10,000 steps";
  EXPECT_LT(rss1, rss0 + 2 * 1024 * 1024) << "RSS grew from " << rss0 << " to " << rss1;
}

TEST(AutodiffCore, LongChainIsFreedWithoutDeepRecursion) {
  auto x = T1::from_floats({1.0}).require_grad();
  auto y = x;
  for (int i = 0; i < 200000; ++i) y = y + 0.0;
  auto grads = y.sum().backward();
  EXPECT_DOUBLE_EQ(x.grad(grads)->into_scalar(), 1.0);
  auto z = x;
  for (int i = 0; i < 200000; ++i) z = z * 1.0;
  // dropped without backward: the destructor must not recurse 200,000 deep
}

TEST(AutodiffCore, ForwardValuesUnchanged) {
  auto c = Tensor<ADInner, 2>::from_data(random_data({3, 4}, 5));
  auto a = T2::from_inner(c).require_grad();
  auto expect = (c.exp() * c - c.sin()).sum_dim(1).to_vec<double>();
  auto got = (a.exp() * a - a.sin()).sum_dim(1).inner().to_vec<double>();
  EXPECT_EQ(got, expect);
}

}  // namespace
}  // namespace ember::test
