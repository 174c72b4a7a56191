// Second-order check used by the reduce/linalg gradient tests: compares the gradient of
// s(x) = sum(dL/dx * V) obtained by backward(create_graph = true) then backward() with
// central differences of s computed from plain first-order gradients
// (L = sum(f(x) * W), W and V fixed pseudo-random weights).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "gradcheck.hpp"

namespace ember::test {

template <std::size_t D, class F>
void gradgradcheck_reduce(const std::string& what, F f, const TensorData& input, double rtol = 1e-6,
                          double atol = 1e-8) {
  SCOPED_TRACE(what);
  const TensorData xd = input.convert(DType::F64);
  const Shape shape = xd.shape();
  auto x = Tensor<AD, D>::from_data(xd).require_grad();
  auto out = f(x);
  constexpr std::size_t E = decltype(out)::rank;
  const TensorData w = random_data(out.shape(), 977);
  const TensorData v = random_data(shape, 555);
  auto g1 = (out * Tensor<AD, E>::from_data(w)).sum().backward(/*create_graph=*/true);
  auto dx = x.grad_graph(g1);
  ASSERT_TRUE(dx.has_value());
  auto s = (*dx * Tensor<AD, D>::from_data(v)).sum();
  std::vector<double> analytic(static_cast<std::size_t>(shape.numel()), 0.0);
  if (s.is_require_grad()) {
    auto g2 = s.backward();
    if (auto h = x.grad(g2)) analytic = h->template to_vec<double>();
  }
  const std::vector<double> vv = v.to_vec<double>();
  auto s_at = [&](std::vector<double> vals) {
    auto xx = Tensor<AD, D>::from_data(TensorData(std::move(vals), shape)).require_grad();
    auto o = f(xx);
    auto g = (o * Tensor<AD, E>::from_data(w)).sum().backward();
    const auto gx = xx.grad(g)->template to_vec<double>();
    double acc = 0;
    for (std::size_t i = 0; i < gx.size(); ++i) acc += gx[i] * vv[i];
    return acc;
  };
  const std::vector<double> base = xd.to_vec<double>();
  const double eps = 1e-5;
  for (std::size_t j = 0; j < base.size(); ++j) {
    auto up = base, down = base;
    up[j] += eps;
    down[j] -= eps;
    const double numeric = (s_at(up) - s_at(down)) / (2 * eps);
    const double a = analytic[j];
    ASSERT_LE(std::abs(a - numeric), rtol * std::max(std::abs(a), std::abs(numeric)) + atol)
        << "element " << j << ": analytic " << a << " numeric " << numeric;
  }
}

}  // namespace ember::test
