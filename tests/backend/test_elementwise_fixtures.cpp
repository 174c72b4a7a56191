// Element-wise ops against PyTorch: one test per case of tests/fixtures/elementwise.json
// (written by tests/fixtures/gen_elementwise.py).
#include <functional>
#include <map>
#include <string>

#include "backends.hpp"
#include "fixtures.hpp"

using namespace ember;
using ember::test::FixtureCase;

namespace {

template <class B, std::size_t D>
TensorData run_float(const std::string& op, const FixtureCase& c) {
  using T = Tensor<B, D, Float>;
  const T a = T::from_data(c.tensor("a"));
  auto b = [&] { return T::from_data(c.tensor("b")); };
  const double s = c.has("s") ? c.at("s").template get<double>() : 0.0;
  const double s2 = c.has("s2") ? c.at("s2").template get<double>() : 0.0;
  using F = std::function<TensorData()>;
#define U(name)                                 \
  {                                             \
#name, [&] { return a.name().into_data(); } \
  }
#define BI(name)                                   \
  {                                                \
#name, [&] { return a.name(b()).into_data(); } \
  }
#define SC(name)                                 \
  {                                              \
#name, [&] { return a.name(s).into_data(); } \
  }
#define CMP(name)                                               \
  {#name, [&] { return a.name(b()).into_data(); }}, {           \
#name "_elem", [&] { return a.name##_elem(s).into_data(); } \
  }
  const std::map<std::string, F> ops = {
      U(neg),
      U(abs),
      U(sign),
      U(square),
      U(recip),
      U(exp),
      U(log),
      U(log1p),
      U(sqrt),
      U(erf),
      U(sin),
      U(cos),
      U(tan),
      U(sinh),
      U(cosh),
      U(tanh),
      U(asin),
      U(acos),
      U(atan),
      U(asinh),
      U(acosh),
      U(atanh),
      U(round),
      U(floor),
      U(ceil),
      U(trunc),
      U(is_nan),
      U(is_inf),
      U(is_finite),
      BI(add),
      BI(sub),
      BI(mul),
      BI(div),
      BI(remainder),
      BI(powf),
      BI(atan2),
      BI(hypot),
      BI(fmod),
      BI(max_pair),
      BI(min_pair),
      SC(add_scalar),
      SC(sub_scalar),
      SC(mul_scalar),
      SC(div_scalar),
      SC(remainder_scalar),
      SC(powf_scalar),
      SC(fmod_scalar),
      SC(clamp_min),
      SC(clamp_max),
      SC(rsub_scalar),
      SC(rdiv_scalar),
      CMP(equal),
      CMP(not_equal),
      CMP(greater),
      CMP(greater_equal),
      CMP(lower),
      CMP(lower_equal),
      {"powi_scalar", [&] { return a.powi_scalar(static_cast<std::int64_t>(s)).into_data(); }},
      {"clamp", [&] { return a.clamp(s, s2).into_data(); }},
      {"powi", [&] { return a.powi(Tensor<B, D, Int>::from_data(c.tensor("b"))).into_data(); }},
      {"is_close", [&] { return a.is_close(b(), 1e-5, 1e-8, s != 0).into_data(); }},
      {"is_close_loose", [&] { return a.is_close(b(), 1e-3, 1e-6).into_data(); }},
  };
#undef U
#undef BI
#undef SC
#undef CMP
  return ops.at(op)();
}

template <class B, std::size_t D>
TensorData run_int(const std::string& op, const FixtureCase& c) {
  using T = Tensor<B, D, Int>;
  const T a = T::from_data(c.tensor("a"));
  auto b = [&] { return T::from_data(c.tensor("b")); };
  const std::int64_t s = c.has("s") ? c.at("s").template get<std::int64_t>() : 0;
  const std::int64_t s2 = c.has("s2") ? c.at("s2").template get<std::int64_t>() : 0;
  using F = std::function<TensorData()>;
#define U(name)                                 \
  {                                             \
#name, [&] { return a.name().into_data(); } \
  }
#define BI(name)                                   \
  {                                                \
#name, [&] { return a.name(b()).into_data(); } \
  }
#define SC(name)                                 \
  {                                              \
#name, [&] { return a.name(s).into_data(); } \
  }
#define CMP(name)                                               \
  {#name, [&] { return a.name(b()).into_data(); }}, {           \
#name "_elem", [&] { return a.name##_elem(s).into_data(); } \
  }
  const std::map<std::string, F> ops = {
      U(neg),
      U(abs),
      U(sign),
      U(square),
      U(bitwise_not),
      BI(add),
      BI(sub),
      BI(mul),
      BI(div),
      BI(remainder),
      BI(max_pair),
      BI(min_pair),
      BI(bitwise_and),
      BI(bitwise_or),
      BI(bitwise_xor),
      BI(bitwise_left_shift),
      BI(bitwise_right_shift),
      BI(powi),
      SC(add_scalar),
      SC(sub_scalar),
      SC(mul_scalar),
      SC(div_scalar),
      SC(remainder_scalar),
      SC(powi_scalar),
      SC(clamp_min),
      SC(clamp_max),
      SC(bitwise_and_scalar),
      SC(bitwise_or_scalar),
      SC(bitwise_xor_scalar),
      SC(bitwise_left_shift_scalar),
      SC(bitwise_right_shift_scalar),
      SC(rsub_scalar),
      SC(rdiv_scalar),
      SC(rremainder_scalar),
      CMP(equal),
      CMP(not_equal),
      CMP(greater),
      CMP(greater_equal),
      CMP(lower),
      CMP(lower_equal),
      {"clamp", [&] { return a.clamp(s, s2).into_data(); }},
  };
#undef U
#undef BI
#undef SC
#undef CMP
  return ops.at(op)();
}

template <class B, std::size_t D>
TensorData run_bool(const std::string& op, const FixtureCase& c) {
  using T = Tensor<B, D, Bool>;
  const T a = T::from_data(c.tensor("a"));
  auto b = [&] { return T::from_data(c.tensor("b")); };
  if (op == "bool_not") return a.bool_not().into_data();
  if (op == "bool_and") return a.bool_and(b()).into_data();
  if (op == "bool_or") return a.bool_or(b()).into_data();
  if (op == "bool_xor") return a.bool_xor(b()).into_data();
  if (op == "equal") return a.equal(b()).into_data();
  if (op == "not_equal") return a.not_equal(b()).into_data();
  if (op == "greater") return a.greater(b()).into_data();
  if (op == "greater_equal") return a.greater_equal(b()).into_data();
  if (op == "lower") return a.lower(b()).into_data();
  if (op == "lower_equal") return a.lower_equal(b()).into_data();
  throw std::runtime_error("unknown bool op " + op);
}

template <class B, std::size_t D>
TensorData run_rank(const FixtureCase& c) {
  const auto op = c.param<std::string>("op");
  const auto kind = c.param<std::string>("kind");
  if (kind == "float") return run_float<B, D>(op, c);
  if (kind == "int") return run_int<B, D>(op, c);
  return run_bool<B, D>(op, c);
}

template <class B>
void run_case(const FixtureCase& c) {
  const TensorData expected = c.tensor("out");
  const TensorData a = c.tensor("a");
  const TensorData actual = a.shape().rank() == 3 ? run_rank<B, 3>(c) : run_rank<B, 2>(c);
  EXPECT_EQ(actual.dtype(), expected.dtype());
  if (is_float(expected.dtype())) {
    const bool half = expected.dtype() == DType::F16 || expected.dtype() == DType::BF16;
    ember::test::expect_approx(
        actual, expected, half ? Tolerance::rel_abs(1e-2, 1e-3) : Tolerance::rel_abs(2e-5, 1e-6));
  } else {
    ember::test::expect_eq(actual, expected);
  }
}

const bool registered = [] {
  ember::test::for_each_backend([]<class B>() {
    ember::test::register_fixture_tests<B>("ElementwiseFixture", "elementwise", "",
                                           [](const FixtureCase& c) { run_case<B>(c); });
  });
  return true;
}();

}  // namespace
