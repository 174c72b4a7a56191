// Autodiff<Cpu> gradients of var_mean, prod (with zeros), cumprod (with zeros),
// cummax/cummin (with ties), vector_norm and cosine_similarity against PyTorch autograd
// (tests/fixtures/autograd_reduce.json, written by gen_autograd_reduce.py): gradients of
// L = sum(out * w), computed here in f32 and by torch in f64 from the same f32 inputs.
// Tolerance: |ember - torch| <= 1e-4 |torch| + 1e-5.
#include <gtest/gtest.h>

#include <limits>
#include <optional>
#include <string>

#include "ember/autodiff/cpu.hpp"
#include "ember/tensor/linalg.hpp"
#include "ember/tensor/tensor.hpp"
#include "fixtures.hpp"
#include "gradcheck.hpp"

namespace ember::test {
namespace {

double param_p(const FixtureCase& c) {
  const auto& j = c.at("p");
  if (j.is_string()) {
    return j.get<std::string>() == "inf" ? std::numeric_limits<double>::infinity()
                                         : -std::numeric_limits<double>::infinity();
  }
  return j.get<double>();
}

template <std::size_t D>
void run_case(const FixtureCase& c) {
  using T = Tensor<AD, D>;
  const std::string op = c.param<std::string>("op");
  auto x = T::from_data(c.tensor("x")).require_grad();
  const auto w = T::from_data(c.tensor("w"));
  const std::int64_t dim = c.param<std::int64_t>("dim");
  std::optional<T> y;
  T loss_terms = [&]() -> T {
    if (op == "var_mean") {
      const auto corr = c.param<std::int64_t>("correction");
      auto [v, m] = corr == 0 ? x.var_mean_bias(dim) : x.var_mean(dim);
      return v * w + m * T::from_data(c.tensor("w2"));
    }
    if (op == "prod_dim") return x.prod_dim(dim) * w;
    if (op == "cumprod") return x.cumprod(dim) * w;
    if (op == "cummax") return x.cummax(dim) * w;
    if (op == "cummin") return x.cummin(dim) * w;
    if (op == "vector_norm") return linalg::vector_norm(x, param_p(c), dim) * w;
    if (op == "cosine_similarity") {
      y = T::from_data(c.tensor("y")).require_grad();
      return linalg::cosine_similarity(x, *y, dim) * w;
    }
    ADD_FAILURE() << "unknown op " << op;
    return x;
  }();
  auto grads = loss_terms.sum().backward();
  const Tolerance tol = Tolerance::rel_abs(1e-4, 1e-5);
  auto gx = x.grad(grads);
  ASSERT_TRUE(gx.has_value());
  expect_approx(gx->into_data(), c.tensor("grad_x"), tol);
  if (y) {
    auto gy = y->grad(grads);
    ASSERT_TRUE(gy.has_value());
    expect_approx(gy->into_data(), c.tensor("grad_y"), tol);
  }
}

TEST(GradReduceTorch, MatchesAutograd) {
  const auto cases = fixture_cases("autograd_reduce");
  ASSERT_GE(cases.size(), 30u);
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const auto rank = c.tensor("x").shape().rank();
    if (rank == 2)
      run_case<2>(c);
    else if (rank == 3)
      run_case<3>(c);
    else
      ADD_FAILURE() << "unexpected rank " << rank;
  }
}

}  // namespace
}  // namespace ember::test
