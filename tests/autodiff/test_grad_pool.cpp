// Autodiff<Cpu>: gradients of max_pool2d, avg_pool2d, adaptive_avg_pool2d and interpolate
// (finite-difference gradchecks over option grids, hand-computed ties, grad of grad).
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "ember/autodiff/cpu.hpp"
#include "ember/tensor/module/interpolate.hpp"
#include "ember/tensor/module/pool.hpp"
#include "ember/tensor/tensor.hpp"
#include "fixtures.hpp"
#include "gradcheck.hpp"

namespace ember::test {
namespace {

using T4 = Tensor<AD, 4>;
using V = std::vector<T4>;

std::string pool_name(const char* op, PoolArg2 k, PoolArg2 s, PoolArg2 p, PoolArg2 d, bool ceil) {
  return std::string(op) + " k" + std::to_string(k[0]) + "x" + std::to_string(k[1]) + " s" +
         std::to_string(s[0]) + "x" + std::to_string(s[1]) + " p" + std::to_string(p[0]) + "x" +
         std::to_string(p[1]) + " d" + std::to_string(d[0]) + "x" + std::to_string(d[1]) +
         (ceil ? " ceil" : "");
}

/// Grad of grad: gradchecks x -> d/dx sum(f(x)^2 * w2) (differentiable only if the rule of
/// f is recorded with create_graph).
template <class F>
void gradcheck_second(const std::string& what, F f, const Shape& shape, std::uint64_t seed) {
  gradcheck<4>(what + " (grad of grad)",
               [f](const V& v) {
                 auto x = v[0].is_require_grad() ? v[0] : v[0].require_grad();
                 auto y = f(x);
                 auto w2 = T4::from_data(random_data(y.shape(), 31));
                 auto grads = (y * y * w2).sum().backward(/*create_graph=*/true);
                 return *x.grad_graph(grads);
               },
               {random_data(shape, seed)});
}

// ---- max_pool2d ---------------------------------------------------------------------------

struct MaxCfg {
  PoolArg2 k, s, p, d;
  bool ceil;
};

TEST(GradPool, MaxPool2dGradcheck) {
  const std::vector<MaxCfg> cfgs = {
      {{3, 3}, {1, 1}, {0, 0}, {1, 1}, false}, {{2, 2}, {2, 2}, {0, 0}, {1, 1}, true},
      {{3, 3}, {2, 2}, {1, 1}, {1, 1}, true},  {{3, 2}, {2, 1}, {1, 1}, {2, 1}, true},
      {{2, 3}, {1, 2}, {1, 0}, {1, 2}, false}, {{2, 2}, {3, 3}, {1, 0}, {1, 1}, true},
  };
  std::uint64_t seed = 1;
  for (const auto& c : cfgs) {
    gradcheck<4>(pool_name("max_pool2d", c.k, c.s, c.p, c.d, c.ceil),
                 [c](const V& v) { return module::max_pool2d(v[0], c.k, c.s, c.p, c.d, c.ceil); },
                 {random_data(Shape({2, 2, 7, 6}), seed++)});
    gradcheck<4>(pool_name("max_pool2d_with_indices", c.k, c.s, c.p, c.d, c.ceil),
                 [c](const V& v) {
                   return module::max_pool2d_with_indices(v[0], c.k, c.s, c.p, c.d, c.ceil).first;
                 },
                 {random_data(Shape({1, 3, 5, 7}), seed++)});
  }
}

TEST(GradPool, MaxPool2dTiesGoToTheReturnedIndex) {
  // Windows of 2x2, stride 1: maxima 3 at (0,1), (0,1), (1,1), (1,1) (first index wins).
  auto x =
      T4::from_data(TensorData(std::vector<double>{1, 3, 3, 2, 3, 0, 3, 1, 1}, Shape({1, 1, 3, 3})))
          .require_grad();
  auto w = T4::from_data(TensorData(std::vector<double>{1, 2, 3, 4}, Shape({1, 1, 2, 2})));
  auto [out, idx] = module::max_pool2d_with_indices(x, {2, 2}, {1, 1});
  EXPECT_EQ(idx.to_vec<std::int64_t>(), (std::vector<std::int64_t>{1, 1, 4, 4}));
  auto grads = (out * w).sum().backward();
  EXPECT_EQ(x.grad(grads)->to_vec<double>(), (std::vector<double>{0, 3, 0, 0, 7, 0, 0, 0, 0}));
  // Same through max_pool2d, and a constant plane with padding: every window's first element.
  auto y =
      T4::from_data(TensorData(std::vector<double>(9, 2.0), Shape({1, 1, 3, 3}))).require_grad();
  auto g2 = module::max_pool2d(y, {2, 2}, {2, 2}, {1, 1}).sum().backward();
  // Windows (with padding 1) start at -1, 1: their first in-bounds elements are (0,0),
  // (0,1), (1,0), (1,1).
  EXPECT_EQ(y.grad(g2)->to_vec<double>(), (std::vector<double>{1, 1, 0, 1, 1, 0, 0, 0, 0}));
  auto g3 = module::max_pool2d(x, {2, 2}, {1, 1}).sum().backward();
  EXPECT_EQ(x.grad(g3)->to_vec<double>(), (std::vector<double>{0, 2, 0, 0, 2, 0, 0, 0, 0}));
}

TEST(GradPool, MaxPool2dGradOfGrad) {
  gradcheck_second(
      "max_pool2d",
      [](const T4& x) {
        return module::max_pool2d(x, {3, 2}, {2, 2}, {1, 1}, {1, 1}, true);
      },
      Shape({1, 2, 5, 6}), 7);
}

// ---- avg_pool2d ---------------------------------------------------------------------------

struct AvgCfg {
  PoolArg2 k, s, p;
};

TEST(GradPool, AvgPool2dGradcheck) {
  const std::vector<AvgCfg> cfgs = {
      {{2, 2}, {2, 2}, {0, 0}}, {{3, 3}, {2, 2}, {1, 1}}, {{3, 2}, {2, 3}, {1, 1}},
      {{2, 3}, {1, 2}, {1, 1}}, {{3, 3}, {3, 2}, {0, 1}},
  };
  std::uint64_t seed = 100;
  for (const auto& c : cfgs) {
    for (bool cip : {true, false}) {
      for (bool ceil : {false, true}) {
        gradcheck<4>(
            pool_name("avg_pool2d", c.k, c.s, c.p, {1, 1}, ceil) + (cip ? " cip" : " no-cip"),
            [c, cip, ceil](const V& v) {
              return module::avg_pool2d(v[0], c.k, c.s, c.p, cip, ceil);
            },
            {random_data(Shape({2, 2, 6, 7}), seed++)});
      }
    }
  }
}

TEST(GradPool, AvgPool2dHandComputedCeilAndPadding) {
  // 1-row check along W: in 5, k 2, s 2, p 1, ceil: windows [-1,1), [1,3), [3,5) -> 3
  // outputs. count_include_pad: divisors 2, 2, 2; without: 1, 2, 2.
  for (bool cip : {true, false}) {
    auto x =
        T4::from_data(TensorData(std::vector<double>(5, 1.0), Shape({1, 1, 1, 5}))).require_grad();
    auto out = module::avg_pool2d(x, {1, 2}, {1, 2}, {0, 1}, cip, true);
    ASSERT_EQ(out.shape(), Shape({1, 1, 1, 3}));
    auto grads = out.sum().backward();
    const std::vector<double> want = cip ? std::vector<double>{0.5, 0.5, 0.5, 0.5, 0.5}
                                         : std::vector<double>{1, 0.5, 0.5, 0.5, 0.5};
    EXPECT_EQ(x.grad(grads)->to_vec<double>(), want) << "count_include_pad " << cip;
  }
  // in 6, k 3, s 2, p 1, ceil: windows [-1,2), [1,4), [3,6), [5,8) (clipped to [5,7) with
  // padding, [5,6) without): divisors 3,3,3,2 / 2,3,3,1.
  for (bool cip : {true, false}) {
    auto x =
        T4::from_data(TensorData(std::vector<double>(6, 1.0), Shape({1, 1, 6, 1}))).require_grad();
    auto out = module::avg_pool2d(x, {3, 1}, {2, 1}, {1, 0}, cip, true);
    ASSERT_EQ(out.shape(), Shape({1, 1, 4, 1}));
    auto grads = out.sum().backward();
    const auto g = x.grad(grads)->to_vec<double>();
    const std::vector<double> want =
        cip ? std::vector<double>{1. / 3, 2. / 3, 1. / 3, 2. / 3, 1. / 3, 1. / 3 + 1. / 2}
            : std::vector<double>{1. / 2, 1. / 2 + 1. / 3, 1. / 3, 2. / 3, 1. / 3, 1. / 3 + 1};
    for (std::size_t i = 0; i < want.size(); ++i)
      EXPECT_NEAR(g[i], want[i], 1e-6) << "count_include_pad " << cip << " at " << i;
  }
}

TEST(GradPool, AvgPool2dGradOfGrad) {
  gradcheck_second(
      "avg_pool2d",
      [](const T4& x) {
        return module::avg_pool2d(x, {3, 3}, {2, 2}, {1, 1}, false, true);
      },
      Shape({1, 2, 6, 5}), 8);
}

// ---- adaptive_avg_pool2d ------------------------------------------------------------------

TEST(GradPool, AdaptiveAvgPool2dGradcheck) {
  const std::vector<std::pair<Shape, PoolArg2>> cfgs = {
      {Shape({2, 2, 5, 5}), {3, 3}},
      {Shape({1, 3, 6, 7}), {4, 3}},
      {Shape({1, 2, 4, 3}), {6, 5}},  // output larger than input: overlapping windows
      {Shape({2, 1, 5, 4}), {1, 1}},
  };
  std::uint64_t seed = 200;
  for (const auto& [shape, os] : cfgs) {
    gradcheck<4>("adaptive_avg_pool2d " + std::to_string(shape[2]) + "x" +
                     std::to_string(shape[3]) + "->" + std::to_string(os[0]) + "x" +
                     std::to_string(os[1]),
                 [os = os](const V& v) { return module::adaptive_avg_pool2d(v[0], os); },
                 {random_data(shape, seed++)});
  }
}

TEST(GradPool, AdaptiveAvgPool2dGradOfGrad) {
  gradcheck_second(
      "adaptive_avg_pool2d",
      [](const T4& x) {
        return module::adaptive_avg_pool2d(x, {3, 2});
      },
      Shape({1, 2, 5, 4}), 9);
}

// ---- interpolate --------------------------------------------------------------------------

TEST(GradPool, InterpolateGradcheck) {
  const std::vector<std::pair<Shape, PoolArg2>> cfgs = {
      {Shape({1, 2, 4, 5}), {7, 9}},                                 // up
      {Shape({2, 1, 7, 6}), {4, 3}},                                 // down
      {Shape({1, 2, 5, 3}), {5, 6}},                                 // mixed, same H
      {Shape({1, 1, 3, 4}), {1, 1}}, {Shape({1, 1, 4, 4}), {8, 8}},  // exact 2x
  };
  std::uint64_t seed = 300;
  for (auto mode :
       {InterpolateMode::Nearest, InterpolateMode::Bilinear, InterpolateMode::Bicubic}) {
    for (bool align : {false, true}) {
      for (const auto& [shape, os] : cfgs) {
        const InterpolateOptions opt = InterpolateOptions{mode}.with_align_corners(align);
        gradcheck<4>("interpolate mode " + std::to_string(static_cast<int>(mode)) + " align " +
                         std::to_string(align) + " " + std::to_string(shape[2]) + "x" +
                         std::to_string(shape[3]) + "->" + std::to_string(os[0]) + "x" +
                         std::to_string(os[1]),
                     [os = os, opt](const V& v) { return module::interpolate(v[0], os, opt); },
                     {random_data(shape, seed++)});
      }
    }
  }
}

TEST(GradPool, InterpolateGradOfGrad) {
  for (auto mode : {InterpolateMode::Bilinear, InterpolateMode::Bicubic}) {
    const InterpolateOptions opt = InterpolateOptions{mode}.with_align_corners(false);
    gradcheck_second(
        "interpolate mode " + std::to_string(static_cast<int>(mode)),
        [opt](const T4& x) {
          return module::interpolate(x, {5, 7}, opt);
        },
        Shape({1, 2, 3, 4}), 10);
  }
}

TEST(GradPool, Pool1dGradcheck) {
  // The 1-d ops run the 2-d kernels on [N, C, 1, L].
  using V3 = std::vector<Tensor<AD, 3>>;
  const auto x = random_data(Shape({2, 2, 9}), 400);
  gradcheck<3>("max_pool1d", [](const V3& v) { return module::max_pool1d(v[0], 3, 2, 1, 2, true); },
               {x});
  gradcheck<3>("avg_pool1d",
               [](const V3& v) { return module::avg_pool1d(v[0], 3, 2, 1, false, true); }, {x});
  gradcheck<3>("adaptive_avg_pool1d",
               [](const V3& v) { return module::adaptive_avg_pool1d(v[0], 4); }, {x});
}

TEST(GradPool, MaxPool2dNanGetsTheGradient) {
  // A NaN wins its window and takes the index of the last NaN (as the forward's index).
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto x = T4::from_data(TensorData(std::vector<double>{1, nan, 3, nan}, Shape({1, 1, 2, 2})))
               .require_grad();
  auto grads = module::max_pool2d(x, {2, 2}, {2, 2}).sum().backward();
  EXPECT_EQ(x.grad(grads)->to_vec<double>(), (std::vector<double>{0, 0, 0, 1}));
}

TEST(GradPool, EmptyBatchGradients) {
  auto x = T4::from_data(TensorData(std::vector<double>{}, Shape({0, 2, 4, 5}))).require_grad();
  auto grid = T4::from_data(TensorData(std::vector<double>{}, Shape({0, 3, 2, 2}))).require_grad();
  auto y = module::max_pool2d(x, {2, 2}, {2, 2}).sum() +
           module::avg_pool2d(x, {3, 3}, {2, 2}, {1, 1}, false, true).sum() +
           module::adaptive_avg_pool2d(x, {3, 2}).sum() +
           module::interpolate(x, {7, 3}, InterpolateOptions{InterpolateMode::Bicubic}).sum() +
           module::grid_sample_2d(x, grid).sum();
  auto grads = y.backward();
  EXPECT_EQ(x.grad(grads)->shape(), Shape({0, 2, 4, 5}));
  EXPECT_EQ(grid.grad(grads)->shape(), Shape({0, 3, 2, 2}));
}

TEST(GradPool, NoGradAndUntrackedInputsRecordNothing) {
  auto x = T4::from_data(random_data(Shape({1, 1, 4, 4}), 11));
  EXPECT_FALSE(module::max_pool2d(x, {2, 2}, {2, 2}).is_require_grad());
  EXPECT_FALSE(module::avg_pool2d(x, {2, 2}, {2, 2}).is_require_grad());
  auto xr = x.require_grad();
  EXPECT_TRUE(module::interpolate(xr, {3, 3}).is_require_grad());
  autodiff::NoGrad ng;
  EXPECT_FALSE(module::max_pool2d_with_indices(xr, {2, 2}, {2, 2}).first.is_require_grad());
  EXPECT_FALSE(module::adaptive_avg_pool2d(xr, {2, 2}).is_require_grad());
}

}  // namespace
}  // namespace ember::test
