// Helpers shared by the nn test support headers (loss_support.hpp, norm_test_support.hpp,
// layer_conv_support.hpp): deterministic random data, and the comparison of an output and
// its gradients with a fixture case (torch's output and its gradients of sum(out * w)).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ember/tensor/tensor.hpp"
#include "fixtures.hpp"

namespace ember::test {

/// Deterministic values in [lo, hi) (splitmix64), as f64 data of `shape`.
inline TensorData random_data(const Shape& shape, std::uint64_t seed, double lo = -1.0,
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

/// The differentiated tensors of one forward, by fixture name, and the comparison of the
/// output and their gradients with a fixture case.
template <class B>
struct FixtureGrads {
  using Getter = std::function<std::optional<TensorData>(const typename B::Gradients&)>;
  /// A later add() of the same name replaces the earlier one.
  std::map<std::string, Getter> leaves;

  /// Records tensor t (a leaf or a Param's value) under `name`; an Int or Bool tensor (a
  /// quantized weight's integers) has no gradient.
  template <class T>
  void add(const std::string& name, const T& t) {
    leaves[name] = [t](const typename B::Gradients& g) -> std::optional<TensorData> {
      if constexpr (requires { t.grad(g); }) {
        auto r = t.grad(g);
        if (!r) return std::nullopt;
        return r->into_data();
      } else {
        return std::nullopt;
      }
    };
  }

  /// `out` against c[out_key]; then, unless c["grads"] is empty, backward of sum(out * w)
  /// and the gradient of every name in c["grads"] against c[grad_prefix + name].
  template <std::size_t E>
  void check(const FixtureCase& c, const Tensor<B, E>& out, const Tensor<B, E>& w,
             const Tolerance& tol, const std::string& out_key = "out",
             const std::string& grad_prefix = "grad_") const {
    {
      SCOPED_TRACE("output " + out_key);
      expect_approx(out.into_data(), c.tensor(out_key), tol);
    }
    if (c.at("grads").empty()) return;
    auto grads = out.mul(w).sum().backward();
    for (const auto& n : c.at("grads")) {
      const std::string k = n.template get<std::string>();
      SCOPED_TRACE("gradient of " + k + " (" + grad_prefix + k + ")");
      const auto it = leaves.find(k);
      ASSERT_NE(it, leaves.end()) << "the test does not differentiate " << k;
      auto got = it->second(grads);
      ASSERT_TRUE(got.has_value()) << "no gradient";
      expect_approx(*got, c.tensor(grad_prefix + k), tol);
    }
  }
};

}  // namespace ember::test
