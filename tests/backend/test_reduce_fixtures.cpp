// Reduce family: fixture-driven conformance cases (expected values from PyTorch, see
// tests/fixtures/gen_reduce.py). One test per case of reduce.json.
#include <string>

#include "backends.hpp"
#include "fixtures.hpp"

namespace {

using namespace ember;
using ember::test::FixtureCase;

template <class Tn>
void check_out(const Tn& actual, const FixtureCase& c, const std::string& key = "out") {
  const TensorData expected = c.tensor(key);
  const TensorData got = actual.into_data();
  EXPECT_EQ(got.dtype(), expected.dtype()) << c.name;
  if (is_float(expected.dtype())) {
    Tolerance tol = Tolerance::rel_abs(1e-5, 1e-6);
    if (c.has("tol"))
      tol = Tolerance::rel_abs(c.at("tol")[0].get<double>(), c.at("tol")[1].get<double>());
    ember::test::expect_approx(got, expected, tol);
  } else {
    ember::test::expect_eq(got, expected);
  }
}

template <class B, std::size_t D, class K>
void run_numeric(const FixtureCase& c, const Tensor<B, D, K>& x) {
  const std::string op = c.param<std::string>("op");
  const std::int64_t dim = c.has("dim") ? c.param<std::int64_t>("dim") : 0;
  if (op == "sum") return check_out(x.sum(), c);
  if (op == "sum_dim") return check_out(x.sum_dim(dim), c);
  if (op == "mean") return check_out(x.mean(), c);
  if (op == "mean_dim") return check_out(x.mean_dim(dim), c);
  if (op == "prod") return check_out(x.prod(), c);
  if (op == "prod_dim") return check_out(x.prod_dim(dim), c);
  if (op == "max") return check_out(x.max(), c);
  if (op == "min") return check_out(x.min(), c);
  if (op == "max_dim") return check_out(x.max_dim(dim), c);
  if (op == "min_dim") return check_out(x.min_dim(dim), c);
  if (op == "max_abs") return check_out(x.max_abs(), c);
  if (op == "max_abs_dim") return check_out(x.max_abs_dim(dim), c);
  if (op == "argmax") return check_out(x.argmax(dim), c);
  if (op == "argmin") return check_out(x.argmin(dim), c);
  if (op == "max_dim_with_indices" || op == "min_dim_with_indices") {
    auto [v, i] = op[1] == 'a' ? x.max_dim_with_indices(dim) : x.min_dim_with_indices(dim);
    check_out(v, c);
    return check_out(i, c, "indices");
  }
  if (op == "cumsum") return check_out(x.cumsum(dim), c);
  if (op == "cumprod") return check_out(x.cumprod(dim), c);
  if (op == "cummax") return check_out(x.cummax(dim), c);
  if (op == "cummin") return check_out(x.cummin(dim), c);
  if (op == "sort_with_indices") {
    const bool desc = c.param<bool>("descending");
    auto [v, i] = x.sort_with_indices(dim, desc);
    check_out(v, c);
    check_out(i, c, "indices");
    return check_out(x.sort(dim, desc), c);
  }
  if (op == "argsort") return check_out(x.argsort(dim, c.param<bool>("descending")), c);
  if (op == "topk_with_indices") {
    const auto k = c.param<std::int64_t>("k");
    auto [v, i] = x.topk_with_indices(k, dim);
    check_out(v, c);
    check_out(i, c, "indices");
    return check_out(x.topk(k, dim), c);
  }
  if (op == "median") return check_out(x.median(), c);
  if (op == "median_dim") return check_out(x.median_dim(dim), c);
  if (op == "median_dim_with_indices") {
    auto [v, i] = x.median_dim_with_indices(dim);
    check_out(v, c);
    return check_out(i, c, "indices");
  }
  if constexpr (std::is_same_v<K, Float>) {
    if (op == "var") return check_out(x.var(dim), c);
    if (op == "var_bias") return check_out(x.var_bias(dim), c);
    if (op == "var_mean" || op == "var_mean_bias") {
      auto [v, m] = op == "var_mean" ? x.var_mean(dim) : x.var_mean_bias(dim);
      check_out(v, c);
      return check_out(m, c, "mean");
    }
  }
  ADD_FAILURE() << "unknown op " << op << " in case " << c.name;
}

template <class B, std::size_t D, class K>
void run_kind(const FixtureCase& c) {
  const auto x = Tensor<B, D, K>::from_data(c.tensor("x"));
  const std::string op = c.param<std::string>("op");
  const std::int64_t dim = c.has("dim") ? c.param<std::int64_t>("dim") : 0;
  if (op == "any") return check_out(x.any(), c);
  if (op == "all") return check_out(x.all(), c);
  if (op == "any_dim") return check_out(x.any_dim(dim), c);
  if (op == "all_dim") return check_out(x.all_dim(dim), c);
  if constexpr (!std::is_same_v<K, Bool>) {
    run_numeric(c, x);
  } else {
    ADD_FAILURE() << "op " << op << " is not defined for Bool (case " << c.name << ")";
  }
}

template <class B, std::size_t D>
void run_rank(const FixtureCase& c) {
  const DType dt = c.tensor("x").dtype();
  if (is_float(dt))
    run_kind<B, D, Float>(c);
  else if (is_int(dt))
    run_kind<B, D, Int>(c);
  else
    run_kind<B, D, Bool>(c);
}

template <class B>
void run_case(const FixtureCase& c) {
  switch (c.tensor("x").shape().rank()) {
    case 1:
      return run_rank<B, 1>(c);
    case 2:
      return run_rank<B, 2>(c);
    case 3:
      return run_rank<B, 3>(c);
    default:
      ADD_FAILURE() << "unsupported rank in " << c.name;
  }
}

const bool registered = [] {
  ember::test::for_each_backend([]<class B>() {
    ember::test::register_fixture_tests<B>("ReduceFixture", "reduce", "",
                                           [](const FixtureCase& c) { run_case<B>(c); });
  });
  return true;
}();

}  // namespace
