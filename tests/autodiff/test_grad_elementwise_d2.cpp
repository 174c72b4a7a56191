// Autodiff<Cpu>: second derivatives (backward(create_graph = true), then backward through
// the recorded gradient) of element-wise, layout and indexing rules, compared with
// hand-derived formulas.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "ember/autodiff/cpu.hpp"
#include "ember/tensor/tensor.hpp"
#include "gradcheck.hpp"

namespace ember::test {
namespace {

using T2 = Tensor<AD, 2>;

std::vector<double> values(const Tensor<ADInner, 2>& t) {
  return t.to_vec<double>();
}

void expect_near_all(const std::vector<double>& got, const std::vector<double>& want,
                     double tol = 1e-12) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], tol * (1 + std::abs(want[i]))) << "element " << i;
}

TEST(GradHigherOrder, Tanh) {
  // d/dx tanh = 1 - t^2; d2/dx2 = -2 t (1 - t^2).
  const auto data = random_data(Shape{2, 3}, 1, -2.0, 2.0);
  auto x = T2::from_data(data).require_grad();
  auto g1 = x.tanh().sum().backward(true);
  auto dx = *x.grad_graph(g1);
  ASSERT_TRUE(dx.is_require_grad());
  auto g2 = dx.sum().backward();
  std::vector<double> d1, d2;
  for (double v : data.to_vec<double>()) {
    const double t = std::tanh(v);
    d1.push_back(1 - t * t);
    d2.push_back(-2 * t * (1 - t * t));
  }
  expect_near_all(dx.inner().to_vec<double>(), d1);
  expect_near_all(values(*x.grad(g2)), d2);
}

TEST(GradHigherOrder, Div) {
  // L = sum(a / b): da = 1/b, db = -a/b^2. L2 = sum(da + db):
  // dL2/da = -1/b^2, dL2/db = -1/b^2 + 2a/b^3.
  const auto ad = random_data(Shape{2, 3}, 2), bd = random_data(Shape{2, 3}, 3, 0.5, 2.0);
  auto a = T2::from_data(ad).require_grad();
  auto b = T2::from_data(bd).require_grad();
  auto g1 = (a / b).sum().backward(true);
  auto g2 = (*a.grad_graph(g1) + *b.grad_graph(g1)).sum().backward();
  std::vector<double> wa, wb;
  const auto av = ad.to_vec<double>(), bv = bd.to_vec<double>();
  for (std::size_t i = 0; i < av.size(); ++i) {
    const double x = av[i], y = bv[i];
    wa.push_back(-1 / (y * y));
    wb.push_back(-1 / (y * y) + 2 * x / (y * y * y));
  }
  expect_near_all(values(*a.grad(g2)), wa);
  expect_near_all(values(*b.grad(g2)), wb);
}

TEST(GradHigherOrder, PowfTensor) {
  // L = sum(a^b): da = b a^(b-1), db = a^b ln a. L2 = sum(da + db):
  // dL2/da = b(b-1) a^(b-2) + b a^(b-1) ln a + a^(b-1)
  // dL2/db = a^(b-1) + b a^(b-1) ln a + a^b ln^2 a
  const auto ad = random_data(Shape{2, 3}, 4, 0.5, 2.0),
             bd = random_data(Shape{2, 3}, 5, -1.0, 2.5);
  auto a = T2::from_data(ad).require_grad();
  auto b = T2::from_data(bd).require_grad();
  auto g1 = a.powf(b).sum().backward(true);
  auto g2 = (*a.grad_graph(g1) + *b.grad_graph(g1)).sum().backward();
  std::vector<double> wa, wb;
  const auto av = ad.to_vec<double>(), bv = bd.to_vec<double>();
  for (std::size_t i = 0; i < av.size(); ++i) {
    const double x = av[i], y = bv[i], l = std::log(x);
    wa.push_back(y * (y - 1) * std::pow(x, y - 2) + y * std::pow(x, y - 1) * l +
                 std::pow(x, y - 1));
    wb.push_back(std::pow(x, y - 1) + y * std::pow(x, y - 1) * l + std::pow(x, y) * l * l);
  }
  expect_near_all(values(*a.grad(g2)), wa, 1e-10);
  expect_near_all(values(*b.grad(g2)), wb, 1e-10);
}

TEST(GradHigherOrder, PowfScalar) {
  // d2/dx2 x^2.5 = 2.5 * 1.5 x^0.5.
  const auto data = random_data(Shape{2, 3}, 6, 0.2, 2.0);
  auto x = T2::from_data(data).require_grad();
  auto dx = *x.grad_graph(x.powf_scalar(2.5).sum().backward(true));
  std::vector<double> want;
  for (double v : data.to_vec<double>()) want.push_back(3.75 * std::sqrt(v));
  expect_near_all(values(*x.grad(dx.sum().backward())), want, 1e-10);
}

TEST(GradHigherOrder, Atan2) {
  // L = sum(atan2(a, b)): da = b/r, db = -a/r with r = a^2 + b^2. L2 = sum((b - a)/r):
  // dL2/da = (-r - 2a(b - a))/r^2, dL2/db = (r - 2b(b - a))/r^2.
  const auto ad = random_data(Shape{2, 3}, 7), bd = random_data(Shape{2, 3}, 8);
  auto a = T2::from_data(ad).require_grad();
  auto b = T2::from_data(bd).require_grad();
  auto g1 = a.atan2(b).sum().backward(true);
  auto g2 = (*a.grad_graph(g1) + *b.grad_graph(g1)).sum().backward();
  std::vector<double> wa, wb;
  const auto av = ad.to_vec<double>(), bv = bd.to_vec<double>();
  for (std::size_t i = 0; i < av.size(); ++i) {
    const double x = av[i], y = bv[i], r = x * x + y * y;
    wa.push_back((-r - 2 * x * (y - x)) / (r * r));
    wb.push_back((r - 2 * y * (y - x)) / (r * r));
  }
  expect_near_all(values(*a.grad(g2)), wa, 1e-10);
  expect_near_all(values(*b.grad(g2)), wb, 1e-10);
}

TEST(GradHigherOrder, HypotAndBroadcastMul) {
  // h = hypot(a, b): dh/da = a/h; L2 = sum(a/h) over a [2, 1] broadcast against b [1, 3]:
  // d(a/h)/da = b^2/h^3, d(a/h)/db = -a b/h^3 (summed over the broadcast dims).
  const auto ad = random_data(Shape{2, 1}, 9, 0.3, 1.0),
             bd = random_data(Shape{1, 3}, 10, 0.3, 1.0);
  auto a = T2::from_data(ad).require_grad();
  auto b = T2::from_data(bd).require_grad();
  auto g1 = a.hypot(b).sum().backward(true);
  auto g2 = a.grad_graph(g1)->sum().backward();
  const auto av = ad.to_vec<double>(), bv = bd.to_vec<double>();
  std::vector<double> wa(2, 0.0), wb(3, 0.0);
  for (std::size_t i = 0; i < 2; ++i) {
    for (std::size_t j = 0; j < 3; ++j) {
      const double x = av[i], y = bv[j], h = std::hypot(x, y);
      wa[i] += y * y / (h * h * h);
      wb[j] += -x * y / (h * h * h);
    }
  }
  expect_near_all(values(*a.grad(g2)), wa);
  expect_near_all(values(*b.grad(g2)), wb);
}

TEST(GradHigherOrder, ThroughLayoutAndIndexing) {
  // L = sum(slice(x)^2) + sum(gather(x)^2): d2L/dx2 (diagonal, as a vector of row sums)
  // = 2 * (times the element is in the slice + times it is gathered).
  auto x = T2::from_data(random_data(Shape{2, 3}, 11)).require_grad();
  const auto idx = Tensor<AD, 2, Int>::from_ints({{0, 0}, {2, 1}});
  auto y = x.slice({s(), s(1, 3)}).square().sum() + x.gather(1, idx).square().sum() +
           x.flip({0}).permute({1, 0}).exp().sum();
  auto dx = *x.grad_graph(y.backward(true));
  auto g2 = dx.sum().backward();
  const auto xv = x.inner().to_vec<double>();
  // slice: columns 1, 2; gather: (0, 0) twice, (1, 2), (1, 1).
  const std::vector<double> count = {2, 1, 1, 0, 2, 2};
  std::vector<double> want;
  for (std::size_t i = 0; i < xv.size(); ++i) want.push_back(2 * count[i] + std::exp(xv[i]));
  expect_near_all(values(*x.grad(g2)), want);
}

TEST(GradHigherOrder, MaxPairAndClampAreLocallyLinear) {
  // Second derivatives of max_pair(a, b) * a and clamp(x)^2.
  auto a = T2::from_floats({{1.0, -2.0, 3.0}}, AD::Device{}, DType::F64).require_grad();
  auto b = T2::from_floats({{0.5, 1.0, 3.5}}, AD::Device{}, DType::F64).require_grad();
  // f = max(a, b) * a: where a wins f = a^2 (d2/da2 = 2), else f = b a (d2/da db = 1).
  auto g1 = (a.max_pair(b) * a).sum().backward(true);
  auto g2 = a.grad_graph(g1)->sum().backward();
  EXPECT_EQ(values(*a.grad(g2)), (std::vector<double>{2, 0, 0}));
  EXPECT_EQ(values(*b.grad(g2)), (std::vector<double>{0, 1, 1}));
  auto x = T2::from_floats({{-2.0, 0.5, 2.0}}, AD::Device{}, DType::F64).require_grad();
  auto dx = *x.grad_graph(x.clamp(-1.0, 1.0).square().sum().backward(true));
  EXPECT_EQ(values(*x.grad(dx.sum().backward())), (std::vector<double>{0, 2, 0}));
}

}  // namespace
}  // namespace ember::test
