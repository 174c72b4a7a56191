// Autodiff<Cpu>: gradient checks of reductions, scans and sorting (central differences in
// f64 on random inputs, contiguous and non-contiguous, with and without checkpointing),
// plus grad-of-grad for prod_dim, cumsum, cumprod and var.
#include <gtest/gtest.h>

#include <limits>

#include "ember/autodiff/cpu.hpp"
#include "ember/tensor/tensor.hpp"
#include "gradcheck.hpp"
#include "gradgrad_reduce.hpp"

namespace ember::test {
namespace {

using V2 = std::vector<Tensor<AD, 2>>;
using V3 = std::vector<Tensor<AD, 3>>;

/// random_data with the listed flat positions set to zero.
TensorData with_zeros(const Shape& s, std::uint64_t seed, std::vector<std::size_t> zeros,
                      double lo = -1.5, double hi = 1.5) {
  auto v = random_data(s, seed, lo, hi).to_vec<double>();
  for (auto z : zeros) v[z] = 0.0;
  return TensorData(std::move(v), s);
}

TEST(GradReduce, SumAndMean) {
  gradcheck<2>("sum", [](const V2& x) { return x[0].sum(); }, {random_data({3, 4}, 1)});
  gradcheck<2>("mean", [](const V2& x) { return x[0].mean(); }, {random_data({3, 4}, 2)});
  for (std::int64_t d : {0, 1, -1}) {
    gradcheck<2>("sum_dim", [d](const V2& x) { return x[0].sum_dim(d); }, {random_data({3, 4}, 3)});
    gradcheck<2>("mean_dim", [d](const V2& x) { return x[0].mean_dim(d); },
                 {random_data({3, 4}, 4)});
  }
  gradcheck<3>("sum_dim rank 3", [](const V3& x) { return x[0].sum_dim(1); },
               {random_data({2, 3, 4}, 5)});
  gradcheck<3>("mean_dim rank 3", [](const V3& x) { return x[0].mean_dim(2); },
               {random_data({2, 3, 4}, 6)});
}

TEST(GradReduce, ProdDim) {
  for (std::int64_t d : {0, 1, -1}) {
    gradcheck<2>("prod_dim", [d](const V2& x) { return x[0].prod_dim(d); },
                 {random_data({3, 4}, 10, 0.5, 1.5)});
  }
  gradcheck<3>("prod_dim rank 3", [](const V3& x) { return x[0].prod_dim(1); },
               {random_data({2, 4, 3}, 11, -1.5, 1.5)});
  gradcheck<2>("prod", [](const V2& x) { return x[0].prod(); },
               {random_data({2, 3}, 12, 0.5, 1.5)});
  // Zeros: the product is linear in each element, so central differences are exact there.
  // Rows of [4, 5]: one zero, two zeros, a zero at each end.
  const auto z = with_zeros({4, 5}, 13, {2, 5, 8, 10, 14, 19});
  gradcheck<2>("prod_dim with zeros", [](const V2& x) { return x[0].prod_dim(1); }, {z});
  gradcheck<2>("prod_dim with zeros, dim 0", [](const V2& x) { return x[0].prod_dim(0); }, {z});
  gradcheck<2>("prod_dim of size 1", [](const V2& x) { return x[0].prod_dim(1); },
               {random_data({3, 1}, 14)});
}

TEST(GradReduce, ProdWithZerosHandComputed) {
  // PyTorch: the gradient of prod at x_i is the product of the others.
  auto x = Tensor<AD, 1>::from_floats({2.0, 0.0, 3.0}).require_grad();
  auto g = x.prod().backward();
  EXPECT_EQ(x.grad(g)->to_vec<double>(), (std::vector<double>{0, 6, 0}));
  auto y = Tensor<AD, 1>::from_floats({0.0, 2.0, 0.0}).require_grad();
  auto g2 = y.prod().backward();
  EXPECT_EQ(y.grad(g2)->to_vec<double>(), (std::vector<double>{0, 0, 0}));
}

TEST(GradReduce, MaxMinDim) {
  for (std::int64_t d : {0, 1, -1}) {
    gradcheck<2>("max_dim", [d](const V2& x) { return x[0].max_dim(d); },
                 {random_data({4, 5}, 20)});
    gradcheck<2>("min_dim", [d](const V2& x) { return x[0].min_dim(d); },
                 {random_data({4, 5}, 21)});
    gradcheck<2>("max_dim_with_indices",
                 [d](const V2& x) { return x[0].max_dim_with_indices(d).first; },
                 {random_data({4, 5}, 22)});
    gradcheck<2>("min_dim_with_indices",
                 [d](const V2& x) { return x[0].min_dim_with_indices(d).first; },
                 {random_data({4, 5}, 23)});
    gradcheck<2>("max_abs_dim", [d](const V2& x) { return x[0].max_abs_dim(d); },
                 {random_data({4, 5}, 24)});
  }
  gradcheck<2>("max", [](const V2& x) { return x[0].max(); }, {random_data({3, 4}, 25)});
  gradcheck<2>("min", [](const V2& x) { return x[0].min(); }, {random_data({3, 4}, 26)});
  gradcheck<2>("max_abs", [](const V2& x) { return x[0].max_abs(); }, {random_data({3, 4}, 27)});
  gradcheck<3>("max_dim rank 3", [](const V3& x) { return x[0].max_dim(1); },
               {random_data({2, 3, 4}, 28)});
}

TEST(GradReduce, MaxTiesConventions) {
  // max(dim) (PyTorch's max(dim) convention): the whole gradient goes to the returned index,
  // the lowest among ties.
  auto x = Tensor<AD, 2>::from_floats({{1.0, 3.0, 3.0}, {2.0, 2.0, 0.0}}).require_grad();
  auto [v, i] = x.max_dim_with_indices(1);
  EXPECT_EQ(i.inner().to_vec<std::int64_t>(), (std::vector<std::int64_t>{1, 0}));
  auto g = v.sum().backward();
  EXPECT_EQ(x.grad(g)->to_vec<double>(), (std::vector<double>{0, 1, 0, 1, 0, 0}));
  auto y = Tensor<AD, 2>::from_floats({{1.0, -3.0, -3.0}, {0.0, 0.0, 5.0}}).require_grad();
  auto gm = y.min_dim(1).sum().backward();
  EXPECT_EQ(y.grad(gm)->to_vec<double>(), (std::vector<double>{0, 1, 0, 1, 0, 0}));
  // Ember's max() / min() without a dim run max_dim_with_indices on the flattened tensor:
  // the lowest tied index takes everything. (PyTorch's full max() splits evenly: 0.5, 0.5.)
  auto z = Tensor<AD, 1>::from_floats({3.0, 1.0, 3.0}).require_grad();
  auto gz = z.max().backward();
  EXPECT_EQ(z.grad(gz)->to_vec<double>(), (std::vector<double>{1, 0, 0}));
  auto gzm = (z * -1.0).min().backward();
  EXPECT_EQ(z.grad(gzm)->to_vec<double>(), (std::vector<double>{-1, 0, 0}));
  // max_abs_dim: to the lowest index of max |x|, times sign(x).
  auto a = Tensor<AD, 1>::from_floats({1.0, -3.0, 3.0}).require_grad();
  auto ga = a.max_abs().backward();
  EXPECT_EQ(a.grad(ga)->to_vec<double>(), (std::vector<double>{0, -1, 0}));
}

TEST(GradReduce, VarAndVarMean) {
  for (std::int64_t d : {0, 1, -1}) {
    gradcheck<2>("var", [d](const V2& x) { return x[0].var(d); }, {random_data({4, 5}, 30)});
    gradcheck<2>("var_bias", [d](const V2& x) { return x[0].var_bias(d); },
                 {random_data({4, 5}, 31)});
    gradcheck<2>("var_mean",
                 [d](const V2& x) {
                   auto [v, m] = x[0].var_mean(d);
                   return v + m * 3.0;
                 },
                 {random_data({4, 5}, 32)});
    gradcheck<2>("var_mean_bias",
                 [d](const V2& x) {
                   auto [v, m] = x[0].var_mean_bias(d);
                   return v * m;
                 },
                 {random_data({4, 5}, 33)});
  }
  gradcheck<2>("var_mean: mean only", [](const V2& x) { return x[0].var_mean(1).second; },
               {random_data({3, 4}, 34)});
  gradcheck<3>("var rank 3", [](const V3& x) { return x[0].var(1); }, {random_data({2, 3, 4}, 35)});
}

TEST(GradReduce, MedianSortTopk) {
  gradcheck<2>("median", [](const V2& x) { return x[0].median(); }, {random_data({3, 4}, 40)});
  for (std::int64_t d : {0, 1, -1}) {
    gradcheck<2>("median_dim", [d](const V2& x) { return x[0].median_dim(d); },
                 {random_data({4, 5}, 41)});
    gradcheck<2>("sort", [d](const V2& x) { return x[0].sort(d); }, {random_data({4, 5}, 42)});
    gradcheck<2>("sort descending", [d](const V2& x) { return x[0].sort(d, true); },
                 {random_data({4, 5}, 43)});
    gradcheck<2>("topk 2", [d](const V2& x) { return x[0].topk(2, d); }, {random_data({4, 5}, 44)});
  }
  gradcheck<2>("topk all", [](const V2& x) { return x[0].topk(5, 1); }, {random_data({3, 5}, 45)});
  gradcheck<2>("topk 0", [](const V2& x) { return x[0].topk(0, 1); }, {random_data({3, 5}, 46)});
  gradcheck<3>("sort rank 3", [](const V3& x) { return x[0].sort(1, true); },
               {random_data({2, 4, 3}, 47)});
}

TEST(GradReduce, SortMedianHandComputed) {
  auto x = Tensor<AD, 1>::from_floats({4.0, 1.0, 3.0, 2.0}).require_grad();
  auto w = Tensor<AD, 1>::from_floats({10.0, 20.0, 30.0, 40.0});
  // descending: [4, 3, 2, 1] from indices [0, 2, 3, 1]
  auto g = (x.sort(0, true) * w).sum().backward();
  EXPECT_EQ(x.grad(g)->to_vec<double>(), (std::vector<double>{10, 40, 20, 30}));
  // lower median of [4, 1, 3, 2] is 2 (index 3)
  auto gm = x.median().backward();
  EXPECT_EQ(x.grad(gm)->to_vec<double>(), (std::vector<double>{0, 0, 0, 1}));
  auto gt = (x.topk(2, 0) * Tensor<AD, 1>::from_floats({1.0, 5.0})).sum().backward();
  EXPECT_EQ(x.grad(gt)->to_vec<double>(), (std::vector<double>{1, 0, 5, 0}));
}

TEST(GradReduce, Scans) {
  for (std::int64_t d : {0, -1}) {
    gradcheck<2>("cumsum", [d](const V2& x) { return x[0].cumsum(d); }, {random_data({4, 5}, 50)});
    gradcheck<2>("cumprod", [d](const V2& x) { return x[0].cumprod(d); },
                 {random_data({4, 5}, 51, -1.5, 1.5)});
    gradcheck<2>("cummax", [d](const V2& x) { return x[0].cummax(d); }, {random_data({4, 5}, 52)});
    gradcheck<2>("cummin", [d](const V2& x) { return x[0].cummin(d); }, {random_data({4, 5}, 53)});
  }
  gradcheck<3>("cumsum rank 3", [](const V3& x) { return x[0].cumsum(1); },
               {random_data({2, 3, 4}, 54)});
  gradcheck<3>("cumprod rank 3", [](const V3& x) { return x[0].cumprod(1); },
               {random_data({2, 3, 4}, 55, -1.5, 1.5)});
  gradcheck<3>("cummax rank 3", [](const V3& x) { return x[0].cummax(2); },
               {random_data({2, 3, 4}, 56)});
}

TEST(GradReduce, CumprodWithZeros) {
  // cumprod is linear in each element: central differences are exact at zeros.
  // Rows of [4, 6]: a zero in the middle, two zeros, a zero first, a zero last.
  const auto z = with_zeros({4, 6}, 57, {2, 7, 10, 12, 23});
  gradcheck<2>("cumprod with zeros, dim -1", [](const V2& x) { return x[0].cumprod(-1); }, {z});
  gradcheck<2>("cumprod with zeros, dim 0", [](const V2& x) { return x[0].cumprod(0); }, {z});
  // Hand-computed (and torch): x = [2, 0, 3, 0, 4], w = [1, 2, 3, 4, 5]
  // -> grad = [1, 2 * (2 + 3 * 3), 0, 0, 0] = [1, 22, 0, 0, 0].
  auto x = Tensor<AD, 1>::from_floats({2.0, 0.0, 3.0, 0.0, 4.0}).require_grad();
  auto w = Tensor<AD, 1>::from_floats({1.0, 2.0, 3.0, 4.0, 5.0});
  auto g = (x.cumprod(0) * w).sum().backward();
  EXPECT_EQ(x.grad(g)->to_vec<double>(), (std::vector<double>{1, 22, 0, 0, 0}));
}

TEST(GradReduce, CummaxCumminTies) {
  // torch.cummax([1, 3, 3, 2, 3, 5, 5]).indices == [0, 1, 2, 2, 4, 5, 6]: a tie with the
  // running max moves the index to the later element. The gradient of each output goes to
  // its index (scatter-add).
  auto x = Tensor<AD, 1>::from_floats({1.0, 3.0, 3.0, 2.0, 3.0, 5.0, 5.0}).require_grad();
  auto w = Tensor<AD, 1>::from_floats({1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0});
  auto g = (x.cummax(0) * w).sum().backward();
  EXPECT_EQ(x.grad(g)->to_vec<double>(), (std::vector<double>{1, 2, 12, 0, 16, 32, 64}));
  auto gn = ((x * -1.0).cummin(0) * w).sum().backward();
  EXPECT_EQ(x.grad(gn)->to_vec<double>(), (std::vector<double>{-1, -2, -12, 0, -16, -32, -64}));
  // Along dim 0 of a matrix.
  auto y = Tensor<AD, 2>::from_floats({{2.0, 1.0}, {2.0, 0.0}, {1.0, 1.0}}).require_grad();
  auto gy = y.cummax(0).sum().backward();
  // column 0: indices [0, 1, 1]; column 1: indices [0, 0, 2]
  EXPECT_EQ(y.grad(gy)->to_vec<double>(), (std::vector<double>{1, 2, 2, 0, 0, 1}));
}

TEST(GradReduce, CummaxWithNaN) {
  // torch.cummax([1, nan, 2, nan, 0]).indices == [0, 1, 1, 3, 3] (NaN is the max; a later
  // NaN takes over); torch's gradient for w = [1, 2, 4, 8, 16] is [1, 6, 0, 24, 0].
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto x = Tensor<AD, 1>::from_floats({1.0, nan, 2.0, nan, 0.0}).require_grad();
  auto w = Tensor<AD, 1>::from_floats({1.0, 2.0, 4.0, 8.0, 16.0});
  auto g = (x.cummax(0) * w).sum_dim(0).backward();
  EXPECT_EQ(x.grad(g)->to_vec<double>(), (std::vector<double>{1, 6, 0, 24, 0}));
  auto gm = (x.cummin(0) * w).sum_dim(0).backward();
  EXPECT_EQ(x.grad(gm)->to_vec<double>(), (std::vector<double>{1, 6, 0, 24, 0}));
}

TEST(GradReduce, UntrackedForwardUnchanged) {
  const auto d = random_data({3, 4}, 60);
  auto a = Tensor<AD, 2>::from_data(d);
  auto b = Tensor<AD, 2>::from_data(d).require_grad();
  auto c = Tensor<ADInner, 2>::from_data(d);
  EXPECT_EQ(b.cumprod(1).inner().to_vec<double>(), c.cumprod(1).to_vec<double>());
  EXPECT_EQ(b.cummax(0).inner().to_vec<double>(), c.cummax(0).to_vec<double>());
  EXPECT_EQ(b.prod_dim(1).inner().to_vec<double>(), c.prod_dim(1).to_vec<double>());
  EXPECT_EQ(b.var_mean(1).first.inner().to_vec<double>(), c.var_mean(1).first.to_vec<double>());
  EXPECT_EQ(a.sort(1).inner().to_vec<double>(), c.sort(1).to_vec<double>());
  EXPECT_FALSE(a.cummin(1).is_require_grad());
  EXPECT_TRUE(b.cummin(1).is_require_grad());
}

TEST(GradReduce, GradOfGrad) {
  gradgradcheck_reduce<2>(
      "prod_dim", [](const Tensor<AD, 2>& x) { return x.prod_dim(1); },
      random_data({3, 4}, 70, 0.5, 1.5));
  gradgradcheck_reduce<2>(
      "cumsum", [](const Tensor<AD, 2>& x) { return x.cumsum(-1).square(); },
      random_data({3, 4}, 71));
  gradgradcheck_reduce<2>(
      "cumprod", [](const Tensor<AD, 2>& x) { return x.cumprod(1); },
      random_data({3, 4}, 72, 0.5, 1.5));
  // With zeros (a zero inside, two zeros, a zero first): cumprod switches to the O(n^2)
  // differentiable form when recording; prod_dim's rule is built on cumprod.
  const auto z = with_zeros({3, 4}, 75, {1, 4, 6, 8});
  gradgradcheck_reduce<2>(
      "cumprod with zeros, dim 1", [](const Tensor<AD, 2>& x) { return x.cumprod(1); }, z);
  gradgradcheck_reduce<2>(
      "cumprod with zeros, dim 0", [](const Tensor<AD, 2>& x) { return x.cumprod(0); }, z);
  gradgradcheck_reduce<2>(
      "prod_dim with zeros", [](const Tensor<AD, 2>& x) { return x.prod_dim(1); }, z);
  gradgradcheck_reduce<2>(
      "var", [](const Tensor<AD, 2>& x) { return x.var(1); }, random_data({3, 4}, 73));
  gradgradcheck_reduce<2>(
      "cummax", [](const Tensor<AD, 2>& x) { return x.cummax(1).square(); },
      random_data({3, 4}, 74));
}

}  // namespace
}  // namespace ember::test
