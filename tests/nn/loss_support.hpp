// Shared helpers of the loss tests (tests/nn/test_loss*.cpp).
//
// The losses run on two backends: Autodiff<Cpu> and Dispatch on the device cpu+autodiff.
// Fixture cases (tests/fixtures/nn/loss.json, from tests/fixtures/gen_nn_loss.py) give f32
// inputs, torch's output (f64 math on the same f32 values) and torch's gradients of
// sum(out * w); Ember's output and gradients must match within the tolerance below.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <map>
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
    return Device::cpu().autodiff();
  else
    return {};
}

/// Deterministic values in [lo, hi) (splitmix64), as f64 data of `shape`.
inline TensorData loss_random_data(const Shape& shape, std::uint64_t seed, double lo = -1.0,
                                   double hi = 1.0) {
  std::vector<double> v(static_cast<std::size_t>(shape.numel()));
  std::uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  for (auto& x : v) {
    s += 0x9E3779B97F4A7C15ull;
    std::uint64_t z = s;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    x = lo + (hi - lo) * static_cast<double>(z >> 11) / 9007199254740992.0;
  }
  return TensorData(std::move(v), shape);
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
  using Grads = typename B::Gradients;
  explicit LossCase(const FixtureCase& fc) : c(fc) {}
  const FixtureCase& c;
  typename B::Device dev = loss_device<B>();
  std::map<std::string, std::function<std::optional<TensorData>(const Grads&)>> grad_of;

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
    grad_of[key] = [t](const Grads& g) -> std::optional<TensorData> {
      auto r = t.grad(g);
      if (!r) return std::nullopt;
      return r->into_data();
    };
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
    auto flat = out.template reshape<1>(Shape{out.numel()});
    expect_approx(flat.into_data(), c.tensor("out"), kLossTol);
    if (c.at("grads").empty()) return;
    auto grads = flat.mul(constant<1>("w")).sum().backward();
    for (const auto& name : c.at("grads")) {
      const std::string k = name.template get<std::string>();
      SCOPED_TRACE("gradient wrt " + k);
      ASSERT_TRUE(grad_of.count(k)) << "the test does not differentiate " << k;
      auto g = grad_of.at(k)(grads);
      ASSERT_TRUE(g.has_value()) << "no gradient";
      expect_approx(*g, c.tensor("grad_" + k), kLossTol);
    }
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
