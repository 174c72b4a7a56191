// Helpers shared by the activation / nn composite gradient tests (test_grad_activation*.cpp,
// test_grad_nn*.cpp): inputs away from non-smooth points and a grad-of-grad check.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "gradcheck.hpp"

namespace ember::test::nn_grad {

/// random_data in [lo, hi) with every value at least `margin` away from each of `kinks`
/// (values that fall closer are pushed to kink +- margin).
inline TensorData kink_free(const Shape& shape, std::uint64_t seed, double lo, double hi,
                            const std::vector<double>& kinks, double margin = 0.05) {
  auto v = random_data(shape, seed, lo, hi).to_vec<double>();
  for (auto& x : v) {
    for (double k : kinks) {
      if (std::abs(x - k) < margin) x = x >= k ? k + margin : k - margin;
    }
  }
  return TensorData(std::move(v), shape);
}

/// Second-order check: with g(x) = d/dx sum(f(x) * W) obtained by backward(create_graph) as
/// a tracked tensor, compares d/dx sum(g(x) * V) (a Hessian-vector product) with central
/// differences of g (plain backward) along each element, in f64.
template <std::size_t D, class F>
void gradgradcheck(const std::string& what, F f, const TensorData& input, double eps = 1e-5,
                   double rtol = 1e-6, double atol = 1e-8) {
  SCOPED_TRACE(what);
  const TensorData x0 = input.convert(DType::F64);
  const Shape xs = x0.shape();
  auto first = [&](const TensorData& xd) {
    auto x = Tensor<AD, D>::from_data(xd).require_grad();
    auto out = f(x);
    constexpr std::size_t E = decltype(out)::rank;
    const TensorData w = random_data(out.shape(), 977);
    auto grads = (out * Tensor<AD, E>::from_data(w)).sum().backward();
    return x.grad(grads)->template to_vec<double>();
  };
  const TensorData v = random_data(xs, 4242);
  const auto vv = v.to_vec<double>();
  // Analytic Hessian-vector product.
  auto x = Tensor<AD, D>::from_data(x0).require_grad();
  auto out = f(x);
  constexpr std::size_t E = decltype(out)::rank;
  const TensorData w = random_data(out.shape(), 977);
  auto g1 = (out * Tensor<AD, E>::from_data(w)).sum().backward(/*create_graph=*/true);
  auto gx = x.grad_graph(g1);
  ASSERT_TRUE(gx.has_value());
  ASSERT_TRUE(gx->is_require_grad()) << "the first gradient is not tracked";
  auto g2 = (*gx * Tensor<AD, D>::from_data(v)).sum().backward();
  const auto hv = x.grad(g2)->template to_vec<double>();
  // Numeric: d/dx_j sum_i g_i(x) v_i.
  const auto base = x0.to_vec<double>();
  for (std::size_t j = 0; j < base.size(); ++j) {
    auto at = [&](double delta) {
      std::vector<double> b = base;
      b[j] += delta;
      const auto g = first(TensorData(std::move(b), xs));
      double s = 0;
      for (std::size_t i = 0; i < g.size(); ++i) s += g[i] * vv[i];
      return s;
    };
    const double numeric = (at(eps) - at(-eps)) / (2 * eps);
    const double tol = rtol * std::max(std::abs(hv[j]), std::abs(numeric)) + atol;
    ASSERT_LE(std::abs(hv[j] - numeric), tol)
        << "element " << j << ": analytic " << hv[j] << " numeric " << numeric;
  }
}

/// The gradient of sum(f(x)) at the f32 values `xs` (rank 1).
template <class F>
std::vector<double> grad_at(F f, const std::vector<double>& xs, DType dtype = DType::F32) {
  auto x = Tensor<AD, 1>::from_data(
               TensorData(xs, Shape({static_cast<std::int64_t>(xs.size())})).convert(dtype))
               .require_grad();
  auto grads = f(x).sum().backward();
  return x.grad(grads)->template to_vec<double>();
}

}  // namespace ember::test::nn_grad
