// Shared helpers of the loss tests (tests/nn/test_loss*.cpp).
//
// The losses run on two backends: Autodiff<Cpu> and Dispatch on the device cpu+autodiff.
// Fixture cases (tests/fixtures/nn/loss.json, from tests/fixtures/gen_nn_loss.py) give f32
// inputs, torch's output (f64 math on the same f32 values) and torch's gradients of
// sum(out * w); Ember's output and gradients must match within the tolerance below.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "ember/autodiff/cpu.hpp"
#include "ember/dispatch/dispatch.hpp"
#include "ember/nn/loss.hpp"
#include "ember/tensor/tensor.hpp"
#include "fixtures.hpp"
#include "nn_device.hpp"
#include "nn_test_util.hpp"

namespace ember::test {

namespace loss = ember::nn::loss;
using AdCpu = Autodiff<Cpu>;

/// Tolerance of every fixture comparison: |ember - torch| <= 1e-5 + 1e-4 |torch| (Ember
/// computes in f32, torch in f64 on the same f32 inputs).
inline const Tolerance kLossTol = Tolerance::rel_abs(1e-4, 1e-5);

/// The device the tests create tensors on: Autodiff<Cpu>'s only device, or Dispatch's
/// cpu+autodiff (tensors there record gradients).
template <class B>
typename B::Device loss_device() {
  if constexpr (std::is_same_v<B, Dispatch>)
    return ember::test::nn_dispatch_device();
  else
    return {};
}

/// Calls f(std::integral_constant<std::size_t, R>{}) for the R in Ranks equal to `rank`;
/// fails the test for another rank.
template <std::size_t... Ranks, class F>
void with_rank(std::size_t rank, F&& f) {
  bool done = false;
  ((rank == Ranks ? (f(std::integral_constant<std::size_t, Ranks>{}), done = true) : false), ...);
  if (!done) ADD_FAILURE() << "the test does not handle rank " << rank;
}

/// One fixture case on backend B: builds its tensors and checks an output against torch's.
template <class B>
struct LossCase {
  explicit LossCase(const FixtureCase& fc) : c(fc) {}
  const FixtureCase& c;
  typename B::Device dev = loss_device<B>();
  FixtureGrads<B> grads;

  std::size_t rank(const std::string& key) const { return c.tensor(key).shape().rank(); }
  std::string str(const std::string& key) const { return c.param<std::string>(key); }
  double num(const std::string& key) const { return c.param<double>(key); }
  bool flag(const std::string& key) const { return c.param<bool>(key); }
  loss::Reduction reduction() const { return loss::parse_reduction(str("reduction")); }

  /// A float input: a leaf that requires grad when torch differentiates it, else a constant.
  template <std::size_t D>
  Tensor<B, D> input(const std::string& key) {
    auto t = Tensor<B, D>::from_data(c.tensor(key), dev);
    bool differentiated = false;
    for (const auto& g : c.at("grads")) differentiated = differentiated || g == key;
    if (!differentiated) return t;
    t = t.require_grad();
    grads.add(key, t);
    return t;
  }
  template <std::size_t D, class K = Float>
  Tensor<B, D, K> constant(const std::string& key) const {
    return Tensor<B, D, K>::from_data(c.tensor(key), dev);
  }
  template <std::size_t D>
  std::optional<Tensor<B, D>> optional(const std::string& key) const {
    if (!c.has(key)) return std::nullopt;
    return constant<D>(key);
  }

  /// Compares `out` (any rank; flattened) with torch's output, then every gradient of
  /// sum(out * w) with torch's. With `check_shape`, out's shape must be torch's.
  template <std::size_t E>
  void check(const Tensor<B, E>& out, bool check_shape = false) {
    if (check_shape) {
      Shape expect(c.at("out_shape").template get<std::vector<std::int64_t>>());
      EXPECT_EQ(out.shape(), expect) << "unreduced output shape";
    }
    grads.check(c, out.template reshape<1>(Shape{out.numel()}), constant<1>("w"), kLossTol);
  }

  /// Checks a loss whose reduction comes from the case: for "none" the unreduced form
  /// (`shaped()`, torch's shape, with gradients) and the flattened form (`reduced()`, values
  /// only); otherwise `reduced()` with gradients.
  template <class Reduced, class Shaped>
  void check_reduction(Reduced&& reduced, Shaped&& shaped) {
    if (reduction() == loss::Reduction::None) {
      check(shaped(), /*check_shape=*/true);
      expect_approx(reduced().into_data(), c.tensor("out"), kLossTol);
    } else {
      check(reduced());
    }
  }
};

/// Registers every case of nn/loss.json whose name starts with one of `prefixes` as a test
/// "<suite>/<backend>.<case>" for Autodiff<Cpu> and Dispatch; `run<B>(case)` runs one.
template <template <class> class Runner>
bool register_loss_cases(const std::string& suite, const std::vector<std::string>& prefixes) {
  for (const auto& p : prefixes) {
    register_fixture_tests<AdCpu>(suite, "nn/loss", p, [](const FixtureCase& c) {
      LossCase<AdCpu> L(c);
      Runner<AdCpu>::run(L);
    });
    register_fixture_tests<Dispatch>(suite, "nn/loss", p, [](const FixtureCase& c) {
      LossCase<Dispatch> L(c);
      Runner<Dispatch>::run(L);
    });
  }
  return true;
}

}  // namespace ember::test
