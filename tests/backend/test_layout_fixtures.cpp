// Layout ops against PyTorch/NumPy: one test per case of tests/fixtures/layout.json
// (written by tests/fixtures/gen_layout.py) and backend. Layout ops move values without
// arithmetic, so results must match exactly, dtype included.
//
// The cases also run on `CpuComposite`, the CPU backend with its optional layout functions
// hidden, so the front end's default compositions (unfold, pad, squeeze/unsqueeze through
// reshape) are checked too.
#include <string>
#include <utility>
#include <vector>

#include "backends.hpp"
#include "fixtures.hpp"

namespace {

using namespace ember;
using ember::test::expect_eq;
using ember::test::FixtureCase;
using Dims = std::vector<std::int64_t>;

constexpr std::size_t kMaxRank = 5;

/// ember::Cpu without its optional layout overrides: a deleted function of another
/// signature hides the inherited one, so the front end's requires-expression fails.
struct CpuComposite : Cpu {
  static std::string name() { return "cpu_composite"; }
  static void float_unfold() = delete;
  static void int_unfold() = delete;
  static void bool_unfold() = delete;
  static void float_pad() = delete;
  static void int_pad() = delete;
  static void bool_pad() = delete;
  static void float_squeeze_dims() = delete;
  static void int_squeeze_dims() = delete;
  static void bool_squeeze_dims() = delete;
  static void float_unsqueeze_dims() = delete;
  static void int_unsqueeze_dims() = delete;
  static void bool_unsqueeze_dims() = delete;
};
template <class B>
concept HasUnfold = requires(const CpuTensor& p) {
  B::float_unfold(p, std::size_t{0}, std::int64_t{1}, std::int64_t{1});
};
static_assert(HasUnfold<Cpu> && !HasUnfold<CpuComposite>);

/// Calls f.template operator()<R>() for the run-time rank r in [1, kMaxRank].
template <class F, std::size_t... Rs>
void with_rank_impl(std::size_t r, F&& f, std::index_sequence<Rs...>) {
  const bool done = ((r == Rs + 1 ? (f.template operator()<Rs + 1>(), true) : false) || ...);
  if (!done) ADD_FAILURE() << "unsupported rank " << r;
}
template <class F>
void with_rank(std::size_t r, F&& f) {
  with_rank_impl(r, std::forward<F>(f), std::make_index_sequence<kMaxRank>{});
}

std::vector<Slice> parse_slices(const ember::test::json& j) {
  std::vector<Slice> out;
  for (const auto& sp : j) {
    if (sp.empty()) {
      out.push_back(s());
    } else if (sp.size() == 1) {
      out.push_back(s(sp[0].get<std::int64_t>()));
    } else if (sp[1].is_null()) {
      out.push_back(s(sp[0].get<std::int64_t>(), end, sp[2].get<std::int64_t>()));
    } else {
      out.push_back(
          s(sp[0].get<std::int64_t>(), sp[1].get<std::int64_t>(), sp[2].get<std::int64_t>()));
    }
  }
  return out;
}

PadMode parse_mode(const std::string& m) {
  if (m == "reflect") return PadMode::Reflect;
  if (m == "edge") return PadMode::Edge;
  return PadMode::Constant;
}

template <class T>
void expect_out(const FixtureCase& c, const T& actual) {
  EXPECT_EQ(actual.shape(), c.tensor("out").shape());
  expect_eq(actual.into_data(), c.tensor("out"));
}

template <class T>
void expect_outs(const FixtureCase& c, const std::vector<T>& actual) {
  const auto& outs = c.at("outs");
  ASSERT_EQ(actual.size(), outs.size());
  for (std::size_t i = 0; i < actual.size(); ++i) {
    expect_eq(actual[i].into_data(), ember::test::fixture_tensor(outs[i]));
  }
}

template <class B, std::size_t D, class K>
void run_case(const FixtureCase& c) {
  using T = Tensor<B, D, K>;
  const std::string op = c.param<std::string>("op");
  const std::size_t out_rank = c.has("out") ? c.tensor("out").shape().rank() : D;
  auto get = [&](const char* k) { return c.param<std::int64_t>(k); };
  auto dims = [&](const char* k) { return c.param<Dims>(k); };
  if (op == "cat" || op == "stack") {
    std::vector<T> xs;
    for (const auto& j : c.at("xs")) xs.push_back(T::from_data(ember::test::fixture_tensor(j)));
    if (op == "cat")
      expect_out(c, T::cat(xs, get("dim")));
    else
      expect_out(c, T::stack(xs, get("dim")));
    return;
  }
  const T x = T::from_data(c.tensor("x"));
  if (op == "permute") {
    expect_out(c, x.permute(dims("dims")));
  } else if (op == "transpose") {
    if constexpr (D >= 2)
      expect_out(c, x.transpose());
    else
      ADD_FAILURE() << "transpose needs rank >= 2";
  } else if (op == "swap_dims") {
    expect_out(c, x.swap_dims(get("a"), get("b")));
  } else if (op == "movedim") {
    expect_out(c, x.movedim(get("src"), get("dst")));
  } else if (op == "movedim_list") {
    expect_out(c, x.movedim(dims("src"), dims("dst")));
  } else if (op == "flip") {
    expect_out(c, x.flip(dims("dims")));
  } else if (op == "flatten") {
    with_rank(out_rank, [&]<std::size_t R>() {
      expect_out(c, x.template flatten<R>(get("start"), get("end")));
    });
  } else if (op == "squeeze") {
    with_rank(out_rank, [&]<std::size_t R>() { expect_out(c, x.template squeeze<R>()); });
  } else if (op == "squeeze_dim") {
    if constexpr (D >= 2)
      expect_out(c, x.squeeze_dim(get("dim")));
    else
      ADD_FAILURE() << "squeeze_dim needs rank >= 2";
  } else if (op == "squeeze_dims") {
    with_rank(out_rank,
              [&]<std::size_t R>() { expect_out(c, x.template squeeze_dims<R>(dims("dims"))); });
  } else if (op == "unsqueeze") {
    with_rank(out_rank, [&]<std::size_t R>() {
      if constexpr (R >= D)
        expect_out(c, x.template unsqueeze<R>());
      else
        ADD_FAILURE() << "bad rank";
    });
  } else if (op == "unsqueeze_dim") {
    expect_out(c, x.unsqueeze_dim(get("dim")));
  } else if (op == "unsqueeze_dims") {
    with_rank(out_rank, [&]<std::size_t R>() {
      if constexpr (R >= D)
        expect_out(c, x.template unsqueeze_dims<R>(dims("dims")));
      else
        ADD_FAILURE() << "bad rank";
    });
  } else if (op == "expand") {
    with_rank(out_rank, [&]<std::size_t R>() {
      if constexpr (R >= D)
        expect_out(c, x.template expand<R>(Shape(dims("shape"))));
      else
        ADD_FAILURE() << "bad rank";
    });
  } else if (op == "repeat") {
    expect_out(c, x.repeat(dims("sizes")));
  } else if (op == "repeat_dim") {
    expect_out(c, x.repeat_dim(get("dim"), get("times")));
  } else if (op == "roll") {
    expect_out(c, x.roll(dims("shifts"), dims("dims")));
  } else if (op == "roll_dim") {
    expect_out(c, x.roll_dim(get("shift"), get("dim")));
  } else if (op == "unfold") {
    expect_out(c, x.unfold(get("dim"), get("size"), get("step")));
  } else if (op == "narrow") {
    expect_out(c, x.narrow(get("dim"), get("start"), get("length")));
  } else if (op == "chunk") {
    expect_outs(c, x.chunk(get("chunks"), get("dim")));
  } else if (op == "split") {
    expect_outs(c, x.split(get("size"), get("dim")));
  } else if (op == "split_with_sizes") {
    expect_outs(c, x.split_with_sizes(dims("sizes"), get("dim")));
  } else if (op == "pad") {
    expect_out(
        c, x.pad(dims("pads"), parse_mode(c.param<std::string>("mode")), c.param<double>("value")));
  } else if (op == "slice") {
    expect_out(c, x.slice(parse_slices(c.at("slices"))));
  } else if (op == "chain_permute_slice_expand") {
    if constexpr (D == 3) {
      expect_out(c, x.template expand<3>(Shape(dims("shape")))
                        .slice(parse_slices(c.at("slices")))
                        .permute(dims("dims")));
    } else {
      ADD_FAILURE() << "chain case needs rank 3";
    }
  } else if (op == "chain_slice_transpose_flip") {
    if constexpr (D == 2) {
      expect_out(c, x.flip(dims("dims")).transpose().slice(parse_slices(c.at("slices"))));
    } else {
      ADD_FAILURE() << "chain case needs rank 2";
    }
  } else if (op == "chain_flip_unfold_transpose") {
    if constexpr (D == 2) {
      expect_out(c, x.transpose().unfold(get("dim"), get("size"), get("step")).flip({0}));
    } else {
      ADD_FAILURE() << "chain case needs rank 2";
    }
  } else if (op == "chain_expand_cat_views") {
    if constexpr (D == 2) {
      const auto t = x.transpose();
      expect_out(c, T::cat({t.narrow(0, 1, 2), t.flip({0})}, 0).unsqueeze_dim(0).expand({2, 5, 2}));
    } else {
      ADD_FAILURE() << "chain case needs rank 2";
    }
  } else {
    ADD_FAILURE() << "unknown op " << op;
  }
}

template <class B>
void run_any(const FixtureCase& c) {
  const auto& x = c.has("x") ? c.at("x") : c.at("xs")[0];
  const std::size_t rank = x.at("shape").size();
  const DType dt = dtype_from_name(x.at("dtype").get<std::string>());
  if (rank < 1 || rank > 4) {
    ADD_FAILURE() << "unsupported input rank " << rank;
    return;
  }
  auto go = [&]<class K>() {
    switch (rank) {
      case 1:
        return run_case<B, 1, K>(c);
      case 2:
        return run_case<B, 2, K>(c);
      case 3:
        return run_case<B, 3, K>(c);
      default:
        return run_case<B, 4, K>(c);
    }
  };
  if (is_bool(dt))
    go.template operator()<Bool>();
  else if (is_int(dt))
    go.template operator()<Int>();
  else
    go.template operator()<Float>();
}

const bool registered = [] {
  ember::test::for_each_backend([]<class B>() {
    ember::test::register_fixture_tests<B>("LayoutFixture", "layout", "",
                                           [](const FixtureCase& c) { run_any<B>(c); });
  });
  ember::test::register_fixture_tests<CpuComposite>(
      "LayoutFixture", "layout", "", [](const FixtureCase& c) { run_any<CpuComposite>(c); });
  return true;
}();

}  // namespace
