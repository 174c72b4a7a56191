// Linalg conformance: fixture-driven cases (expected values from tests/fixtures/gen_linalg.py,
// PyTorch): matmul, dot, outer, cross, diag, trace, vector_norm, cosine_similarity.
#include "linalg_support.hpp"

using namespace ember;
using ember::test::FixtureCase;
using namespace ember::test::linalg;

namespace {

template <class B, class F>
void by_kind(const FixtureCase& c, F&& f) {
  if (is_int(c.tensor("out").dtype()))
    f.template operator()<Int>();
  else
    f.template operator()<Float>();
}

template <class B>
void run_matmul(const FixtureCase& c) {
  const TensorData out = c.tensor("out");
  by_kind<B>(c, [&]<class K>() {
    with_rank(out.shape().rank(), [&]<std::size_t R>() {
      if constexpr (R >= 2) {
        const auto a = operand<B, R, K>(c, "lhs");
        const auto b = operand<B, R, K>(c, "rhs");
        check(a.matmul(b).into_data(), out);
      }
    });
  });
}

template <class B>
void run_dot(const FixtureCase& c) {
  by_kind<B>(c, [&]<class K>() {
    const auto a = Tensor<B, 1, K>::from_data(c.tensor("lhs"));
    const auto b = Tensor<B, 1, K>::from_data(c.tensor("rhs"));
    check(a.dot(b).into_data(), c.tensor("out"));
  });
}

template <class B>
void run_outer(const FixtureCase& c) {
  by_kind<B>(c, [&]<class K>() {
    with_rank(c.tensor("lhs").shape().rank(), [&]<std::size_t R>() {
      if constexpr (R <= 3) {
        const auto a = Tensor<B, R, K>::from_data(c.tensor("lhs"));
        const auto b = Tensor<B, R, K>::from_data(c.tensor("rhs"));
        check(a.outer(b).into_data(), c.tensor("out"));
        check(ember::linalg::outer(a, b).into_data(), c.tensor("out"));
      }
    });
  });
}

template <class B>
void run_cross(const FixtureCase& c) {
  by_kind<B>(c, [&]<class K>() {
    with_rank(c.tensor("lhs").shape().rank(), [&]<std::size_t R>() {
      const auto a = Tensor<B, R, K>::from_data(c.tensor("lhs"));
      const auto b = Tensor<B, R, K>::from_data(c.tensor("rhs"));
      check(a.cross(b, c.param<std::int64_t>("dim")).into_data(), c.tensor("out"));
    });
  });
}

template <class B>
void run_diag_trace(const FixtureCase& c, bool trace) {
  by_kind<B>(c, [&]<class K>() {
    with_rank(c.tensor("x").shape().rank(), [&]<std::size_t R>() {
      if constexpr (R >= 2) {
        const auto x = Tensor<B, R, K>::from_data(c.tensor("x"));
        check((trace ? x.trace() : x.diag()).into_data(), c.tensor("out"));
      }
    });
  });
}

template <class B>
void run_vector_norm(const FixtureCase& c) {
  with_rank(c.tensor("x").shape().rank(), [&]<std::size_t R>() {
    const auto x = Tensor<B, R>::from_data(c.tensor("x"));
    const double p = param_double(c, "p");
    check(ember::linalg::vector_norm(x, p, c.param<std::int64_t>("dim")).into_data(),
          c.tensor("out"));
  });
}

template <class B>
void run_cosine(const FixtureCase& c) {
  with_rank(c.tensor("lhs").shape().rank(), [&]<std::size_t R>() {
    const auto a = Tensor<B, R>::from_data(c.tensor("lhs"));
    const auto b = Tensor<B, R>::from_data(c.tensor("rhs"));
    check(
        ember::linalg::cosine_similarity(a, b, c.param<std::int64_t>("dim"), c.param<double>("eps"))
            .into_data(),
        c.tensor("out"));
  });
}

const bool registered = [] {
  ember::test::for_each_backend([]<class B>() {
    using ember::test::register_fixture_tests;
    register_fixture_tests<B>("LinalgMatmulFixture", "linalg", "matmul_", run_matmul<B>);
    register_fixture_tests<B>("LinalgDotFixture", "linalg", "dot_", run_dot<B>);
    register_fixture_tests<B>("LinalgOuterFixture", "linalg", "outer_", run_outer<B>);
    register_fixture_tests<B>("LinalgCrossFixture", "linalg", "cross_", run_cross<B>);
    register_fixture_tests<B>("LinalgDiagFixture", "linalg", "diag_",
                              [](const FixtureCase& c) { run_diag_trace<B>(c, false); });
    register_fixture_tests<B>("LinalgTraceFixture", "linalg", "trace_",
                              [](const FixtureCase& c) { run_diag_trace<B>(c, true); });
    register_fixture_tests<B>("LinalgVectorNormFixture", "linalg", "vector_norm_",
                              run_vector_norm<B>);
    register_fixture_tests<B>("LinalgCosineFixture", "linalg", "cosine_similarity_", run_cosine<B>);
  });
  return true;
}();

}  // namespace
