// Indexing conformance: one test per case of tests/fixtures/indexing.json (produced by
// tests/fixtures/gen_indexing.py from PyTorch/NumPy) and per backend.
#include <string>
#include <vector>

#include "backends.hpp"
#include "fixtures.hpp"

using namespace ember;
using ember::test::FixtureCase;

namespace {

/// Float outputs: same dtype and (indexing copies values) all but exact; others exact.
void check(const TensorData& actual, const TensorData& expected) {
  if (is_float(expected.dtype())) {
    EXPECT_EQ(actual.dtype(), expected.dtype());
    ember::test::expect_approx(actual, expected, Tolerance::rel_abs(1e-6, 1e-6));
  } else {
    ember::test::expect_eq(actual, expected);
  }
}

/// Calls f.template operator()<D, K>() for the rank and kind of `d` (ranks 1 to 3).
template <class F>
void with_rank_kind(const TensorData& d, F&& f) {
  auto by_kind = [&]<std::size_t D>() {
    if (is_float(d.dtype()))
      f.template operator()<D, Float>();
    else if (is_int(d.dtype()))
      f.template operator()<D, Int>();
    else
      f.template operator()<D, Bool>();
  };
  switch (d.shape().rank()) {
    case 1:
      by_kind.template operator()<1>();
      break;
    case 2:
      by_kind.template operator()<2>();
      break;
    case 3:
      by_kind.template operator()<3>();
      break;
    default:
      FAIL() << "unsupported rank " << d.shape().rank();
  }
}

std::vector<Slice> parse_slices(const test::json& j) {
  std::vector<Slice> out;
  for (const auto& s : j) {
    if (s.contains("all"))
      out.push_back(ember::s());
    else if (s.contains("index"))
      out.push_back(ember::s(s.at("index").get<std::int64_t>()));
    else if (s.at("stop").is_null())
      out.push_back(ember::s(s.at("start").get<std::int64_t>(), ember::end,
                             s.at("step").get<std::int64_t>()));
    else
      out.push_back(ember::s(s.at("start").get<std::int64_t>(), s.at("stop").get<std::int64_t>(),
                             s.at("step").get<std::int64_t>()));
  }
  return out;
}

double parse_value(const test::json& v) {
  if (v.is_string()) {
    const auto s = v.get<std::string>();
    if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
    if (s == "inf") return std::numeric_limits<double>::infinity();
    return -std::numeric_limits<double>::infinity();
  }
  return v.get<double>();
}

IndexUpdate parse_update(const FixtureCase& c) {
  return c.param<std::string>("update") == "add" ? IndexUpdate::Add : IndexUpdate::Assign;
}

template <class B>
void run_case(const FixtureCase& c) {
  const std::string op = c.param<std::string>("op");
  if (op == "tril_mask" || op == "triu_mask" || op == "diag_mask") {
    const Shape shape(c.param<std::vector<std::int64_t>>("shape"));
    const auto off = c.param<std::int64_t>("offset");
    auto run = [&]<std::size_t D>() {
      using M = Tensor<B, D, Bool>;
      const M m = op == "tril_mask"   ? M::tril_mask(shape, off)
                  : op == "triu_mask" ? M::triu_mask(shape, off)
                                      : M::diag_mask(shape, off);
      check(m.into_data(), c.tensor("out"));
    };
    if (shape.rank() == 2)
      run.template operator()<2>();
    else
      run.template operator()<3>();
    return;
  }
  if (op == "eye") {
    const DType dt = dtype_from_name(c.param<std::string>("dtype"));
    const auto n = c.param<std::int64_t>("n");
    if (is_float(dt))
      check(Tensor<B, 2>::eye(n, {}, dt).into_data(), c.tensor("out"));
    else
      check(Tensor<B, 2, Int>::eye(n, {}, dt).into_data(), c.tensor("out"));
    return;
  }
  const TensorData xd = c.tensor("x");
  with_rank_kind(xd, [&]<std::size_t D, class K>() {
    using T = Tensor<B, D, K>;
    const T x = T::from_data(xd);
    if (op == "select") {
      const auto idx = Tensor<B, 1, Int>::from_data(c.tensor("idx"));
      check(x.select(c.param<std::int64_t>("dim"), idx).into_data(), c.tensor("out"));
    } else if (op == "select_assign") {
      const auto idx = Tensor<B, 1, Int>::from_data(c.tensor("idx"));
      const T v = T::from_data(c.tensor("values"));
      check(x.select_assign(c.param<std::int64_t>("dim"), idx, v, parse_update(c)).into_data(),
            c.tensor("out"));
      // functional: the input is unchanged
      check(x.into_data(), xd);
    } else if (op == "gather") {
      const auto idx = Tensor<B, D, Int>::from_data(c.tensor("idx"));
      check(x.gather(c.param<std::int64_t>("dim"), idx).into_data(), c.tensor("out"));
    } else if (op == "scatter") {
      const auto idx = Tensor<B, D, Int>::from_data(c.tensor("idx"));
      const T v = T::from_data(c.tensor("values"));
      check(x.scatter(c.param<std::int64_t>("dim"), idx, v, parse_update(c)).into_data(),
            c.tensor("out"));
      check(x.into_data(), xd);
    } else if (op == "take") {
      const TensorData id = c.tensor("idx");
      const auto dim = c.param<std::int64_t>("dim");
      if (id.shape().rank() == 1) {
        check(x.template take<1>(dim, Tensor<B, 1, Int>::from_data(id)).into_data(),
              c.tensor("out"));
      } else {
        check(x.template take<2>(dim, Tensor<B, 2, Int>::from_data(id)).into_data(),
              c.tensor("out"));
      }
    } else if (op == "mask_where") {
      const auto m = Tensor<B, D, Bool>::from_data(c.tensor("mask"));
      check(x.mask_where(m, T::from_data(c.tensor("values"))).into_data(), c.tensor("out"));
    } else if (op == "mask_fill") {
      const auto m = Tensor<B, D, Bool>::from_data(c.tensor("mask"));
      check(x.mask_fill(m, parse_value(c.at("value"))).into_data(), c.tensor("out"));
      check(x.into_data(), xd);
    } else if (op == "mask_select") {
      const auto m = Tensor<B, D, Bool>::from_data(c.tensor("mask"));
      check(x.mask_select(m).into_data(), c.tensor("out"));
    } else if (op == "argwhere") {
      check(x.argwhere().into_data(), c.tensor("out"));
    } else if (op == "nonzero") {
      const auto nz = x.nonzero();
      ASSERT_EQ(nz.size(), D);
      for (std::size_t d = 0; d < D; ++d)
        check(nz[d].into_data(), c.tensor("out" + std::to_string(d)));
    } else if (op == "tril" || op == "triu") {
      if constexpr (D >= 2) {
        const auto k = c.param<std::int64_t>("diagonal");
        check((op == "tril" ? x.tril(k) : x.triu(k)).into_data(), c.tensor("out"));
      } else {
        FAIL() << "tril/triu case of rank 1";
      }
    } else if (op == "one_hot" || op == "one_hot_fill") {
      if constexpr (!std::is_same_v<K, Bool>) {
        const auto n = c.param<std::int64_t>("num_classes");
        const auto out = op == "one_hot"
                             ? x.one_hot(n)
                             : x.one_hot_fill(n, c.param<double>("on"), c.param<double>("off"),
                                              c.param<std::int64_t>("axis"));
        check(out.into_data(), c.tensor("out"));
      } else {
        FAIL() << "one_hot case on Bool";
      }
    } else if (op == "slice_assign") {
      const auto sl = parse_slices(c.at("slices"));
      check(x.slice_assign(sl, T::from_data(c.tensor("values"))).into_data(), c.tensor("out"));
      check(x.into_data(), xd);
    } else if (op == "slice_fill") {
      const auto sl = parse_slices(c.at("slices"));
      check(x.slice_fill(sl, c.param<double>("value")).into_data(), c.tensor("out"));
    } else {
      FAIL() << "unknown op " << op;
    }
  });
}

const bool registered = [] {
  ember::test::for_each_backend([]<class B>() {
    ember::test::register_fixture_tests<B>("IndexingFixture", "indexing", "", run_case<B>);
  });
  return true;
}();

}  // namespace
