// Helpers of the sequence-layer tests (test_layer_seq_*.cpp): the two backends, loading a
// PyTorch state dict from a fixture case into a module by its parameter paths, and
// comparing outputs and gradients with the fixture (tests/fixtures/gen_nn_seq.py).
//
// Tolerance: rel 1e-4 / abs 1e-5 (f32 results against f64 PyTorch references).
#pragma once

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <type_traits>

#include "ember/autodiff/cpu.hpp"
#include "ember/dispatch/dispatch.hpp"
#include "ember/module/module.hpp"
#include "fixtures.hpp"
#include "nn_device.hpp"

namespace ember::test::seq {

using AdCpu = Autodiff<Cpu>;

/// The device tests create tensors on: Autodiff<Cpu>'s default, Dispatch's cpu+autodiff.
template <class B>
typename B::Device dev() {
  if constexpr (std::is_same_v<B, Dispatch>)
    return ember::test::nn_dispatch_device();
  else
    return typename B::Device{};
}

inline Tolerance tol() {
  return Tolerance::rel_abs(1e-4, 1e-5);
}

template <class B, std::size_t D, class K = Float>
Tensor<B, D, K> ten(const FixtureCase& c, const std::string& key) {
  return Tensor<B, D, K>::from_data(c.tensor(key), dev<B>());
}

template <class B, std::size_t D, class K = Float>
std::optional<Tensor<B, D, K>> opt_ten(const FixtureCase& c, const std::string& key) {
  if (!c.has(key)) return std::nullopt;
  return ten<B, D, K>(c, key);
}

/// The keys of case `c` that start with `prefix`.
inline std::set<std::string> keys_with(const FixtureCase& c, const std::string& prefix) {
  std::set<std::string> out;
  for (auto it = c.body->begin(); it != c.body->end(); ++it) {
    if (it.key().rfind(prefix, 0) == 0) out.insert(it.key().substr(prefix.size()));
  }
  return out;
}

/// Sets every Param of `m` from the fixture key "p.<path>" and checks that the module's
/// parameter paths are exactly the state dict keys of the PyTorch module.
template <class M>
void load_params(M& m, const FixtureCase& c) {
  std::set<std::string> seen;
  nn::visit_mut(m, [&](const std::string& path, auto& leaf) {
    using L = std::remove_cvref_t<decltype(leaf)>;
    if constexpr (nn::is_param_v<L>) {
      using T = typename L::Value;
      seen.insert(path);
      const std::string key = "p." + path;
      if (!c.has(key)) {
        ADD_FAILURE() << "module parameter " << path << " is not in the PyTorch state dict";
        return;
      }
      using Bk = typename T::Backend;
      leaf.set(T::from_data(c.tensor(key), dev<Bk>()));
    }
  });
  EXPECT_EQ(seen, keys_with(c, "p.")) << "parameter paths differ from the PyTorch state dict";
}

/// Compares the gradient of every Param of `m` with the fixture's "g.<path>".
template <class M, class G>
void check_param_grads(const M& m, const G& grads, const FixtureCase& c) {
  std::size_t n = 0;
  nn::visit(m, [&](const std::string& path, const auto& leaf) {
    using L = std::remove_cvref_t<decltype(leaf)>;
    if constexpr (nn::is_param_v<L>) {
      SCOPED_TRACE("gradient of " + path);
      auto g = leaf.val().grad(grads);
      ASSERT_TRUE(g.has_value()) << "no gradient for " << path;
      expect_approx(g->into_data(), c.tensor("g." + path), tol());
      ++n;
    }
  });
  EXPECT_EQ(n, keys_with(c, "p.").size());
}

/// sum(out * w) for the fixture weight `wkey`.
template <class B, std::size_t D>
Tensor<B, 1> weighted(const Tensor<B, D>& out, const FixtureCase& c, const std::string& wkey) {
  return out.mul(ten<B, D>(c, wkey)).sum();
}

/// Registers one test per case of fixture `file` whose "kind" is `kind`, on both backends,
/// as "<suite>/<backend>.<case>".
template <template <class> class CaseRunner>
struct Registrar {
  Registrar(const std::string& suite, const std::string& file, const std::string& kind) {
    add<AdCpu>(suite, file, kind);
    add<Dispatch>(suite, file, kind);
  }
  template <class B>
  static void add(const std::string& suite, const std::string& file, const std::string& kind) {
    for (const auto& c : fixture_cases(file)) {
      if (c.param<std::string>("kind") != kind) continue;
      ::testing::RegisterTest((suite + "/" + B::name()).c_str(), c.name.c_str(), nullptr, nullptr,
                              __FILE__, __LINE__, [c]() -> ::testing::Test* {
                                struct T : ::testing::Test {
                                  FixtureCase fc;
                                  void TestBody() override { CaseRunner<B>{}(fc); }
                                };
                                auto* t = new T();
                                t->fc = c;
                                return t;
                              });
    }
  }
};

}  // namespace ember::test::seq
