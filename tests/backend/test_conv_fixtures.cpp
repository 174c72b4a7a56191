// Conv family conformance against PyTorch fixtures (tests/fixtures/gen_conv.py -> conv.json):
// conv1d/2d/3d, conv_transpose1d/2d/3d, deform_conv2d, unfold4d, fold4d.
#include <array>
#include <optional>

#include "backends.hpp"
#include "ember/tensor/module/conv.hpp"
#include "fixtures.hpp"

namespace {

using namespace ember;
using ember::test::FixtureCase;

template <std::size_t N>
std::array<std::int64_t, N> arr(const FixtureCase& c, const char* key) {
  const auto v = c.param<std::vector<std::int64_t>>(key);
  std::array<std::int64_t, N> a{};
  for (std::size_t i = 0; i < N; ++i) a[i] = v.at(i);
  return a;
}

template <class B, std::size_t D>
Tensor<B, D> ten(const FixtureCase& c, const char* key) {
  return Tensor<B, D>::from_data(c.tensor(key));
}

template <class B, std::size_t D>
std::optional<Tensor<B, D>> opt(const FixtureCase& c, const char* key) {
  if (!c.has(key)) return std::nullopt;
  return ten<B, D>(c, key);
}

Tolerance tol_for(const TensorData& expected) {
  return expected.dtype() == DType::F64 ? Tolerance::rel_abs(1e-9, 1e-9)
                                        : Tolerance::rel_abs(1e-4, 1e-4);
}

void check(const TensorData& actual, const TensorData& expected) {
  EXPECT_EQ(actual.dtype(), expected.dtype());
  ember::test::expect_approx(actual, expected, tol_for(expected));
}

template <class B, std::size_t N>
void run_conv(const FixtureCase& c) {
  constexpr std::size_t D = N + 2;
  ConvOptions<N> o{arr<N>(c, "stride"), arr<N>(c, "padding"), arr<N>(c, "dilation"),
                   c.param<std::int64_t>("groups")};
  const auto x = ten<B, D>(c, "x");
  const auto w = ten<B, D>(c, "w");
  const auto b = opt<B, 1>(c, "b");
  if constexpr (N == 1) check(module::conv1d(x, w, b, o).into_data(), c.tensor("out"));
  if constexpr (N == 2) check(module::conv2d(x, w, b, o).into_data(), c.tensor("out"));
  if constexpr (N == 3) check(module::conv3d(x, w, b, o).into_data(), c.tensor("out"));
}

template <class B, std::size_t N>
void run_conv_transpose(const FixtureCase& c) {
  constexpr std::size_t D = N + 2;
  ConvTransposeOptions<N> o{arr<N>(c, "stride"), arr<N>(c, "padding"), arr<N>(c, "padding_out"),
                            arr<N>(c, "dilation"), c.param<std::int64_t>("groups")};
  const auto x = ten<B, D>(c, "x");
  const auto w = ten<B, D>(c, "w");
  const auto b = opt<B, 1>(c, "b");
  if constexpr (N == 1) check(module::conv_transpose1d(x, w, b, o).into_data(), c.tensor("out"));
  if constexpr (N == 2) check(module::conv_transpose2d(x, w, b, o).into_data(), c.tensor("out"));
  if constexpr (N == 3) check(module::conv_transpose3d(x, w, b, o).into_data(), c.tensor("out"));
}

template <class B>
void run_case(const FixtureCase& c) {
  const auto op = c.param<std::string>("op");
  if (op == "conv1d") return run_conv<B, 1>(c);
  if (op == "conv2d") return run_conv<B, 2>(c);
  if (op == "conv3d") return run_conv<B, 3>(c);
  if (op == "conv_transpose1d") return run_conv_transpose<B, 1>(c);
  if (op == "conv_transpose2d") return run_conv_transpose<B, 2>(c);
  if (op == "conv_transpose3d") return run_conv_transpose<B, 3>(c);
  if (op == "deform_conv2d") {
    DeformConvOptions o{arr<2>(c, "stride"), arr<2>(c, "padding"), arr<2>(c, "dilation"),
                        c.param<std::int64_t>("weight_groups"),
                        c.param<std::int64_t>("offset_groups")};
    const auto out =
        module::deform_conv2d(ten<B, 4>(c, "x"), ten<B, 4>(c, "offset"), ten<B, 4>(c, "w"),
                              opt<B, 4>(c, "mask"), opt<B, 1>(c, "b"), o);
    return check(out.into_data(), c.tensor("out"));
  }
  UnfoldOptions uo{arr<2>(c, "stride"), arr<2>(c, "padding"), arr<2>(c, "dilation")};
  if (op == "unfold4d") {
    return check(module::unfold4d(ten<B, 4>(c, "x"), arr<2>(c, "kernel"), uo).into_data(),
                 c.tensor("out"));
  }
  if (op == "fold4d") {
    const auto hw = arr<2>(c, "output_size");
    const auto k = arr<2>(c, "kernel");
    check(module::fold4d(ten<B, 3>(c, "x"), hw, k, uo).into_data(), c.tensor("out"));
    // fold(unfold(y)) multiplies each pixel by the number of blocks covering it.
    const auto rt = module::fold4d(module::unfold4d(ten<B, 4>(c, "y"), k, uo), hw, k, uo);
    return check(rt.into_data(), c.tensor("roundtrip"));
  }
  ADD_FAILURE() << "unknown op " << op;
}

const bool registered = [] {
  ember::test::for_each_backend([]<class B>() {
    ember::test::register_fixture_tests<B>("ConvFixture", "conv", "", run_case<B>);
  });
  return true;
}();

}  // namespace
