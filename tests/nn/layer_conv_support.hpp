// Shared helpers of the conv / pool / resampling layer tests (tests/nn/test_layer_conv*.cpp).
//
// Fixture cases come from tests/fixtures/gen_nn_conv.py (nn/conv.json, nn/pool.json): the
// torch module's state_dict keys and shapes, its f32 parameters, the inputs, the output and
// torch's gradients of sum(out * w) (computed in f64 from the same f32 values). Ember runs in
// f32 and is compared with |ember - torch| <= 1e-5 + 1e-4 |torch| (rel 1e-4, abs 1e-5).
//
// Each case runs on two backends: Autodiff<Cpu> and Dispatch on cpu+autodiff.
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "ember/autodiff/cpu.hpp"
#include "ember/dispatch/dispatch.hpp"
#include "ember/module/module.hpp"
#include "fixtures.hpp"
#include "nn_device.hpp"
#include "nn_test_util.hpp"

namespace ember::test::layer_conv {

const Tolerance kTol = Tolerance::rel_abs(1e-4, 1e-5);

/// Autodiff<Cpu> with its default device.
struct OnAutodiffCpu {
  using B = Autodiff<Cpu>;
  static B::Device device() { return {}; }
  static std::string name() { return "autodiff_cpu"; }
};
/// Dispatch on the device cpu+autodiff.
struct OnDispatch {
  using B = Dispatch;
  static Device device() { return ember::test::nn_dispatch_device(); }
  static std::string name() { return "dispatch_cpu_autodiff"; }
};

template <class B>
using GradsOf = typename B::Gradients;

/// Paths and shapes of every Param / Buffer of `m`, from nn::visit.
template <class M>
std::vector<std::pair<std::string, Shape>> leaf_shapes(const M& m) {
  std::vector<std::pair<std::string, Shape>> out;
  nn::visit(m, [&](const std::string& path, const auto& leaf) {
    out.emplace_back(path, leaf.val().shape());
  });
  return out;
}

/// torch's state_dict keys and shapes as written by the generator.
inline std::vector<std::pair<std::string, Shape>> torch_state_dict(const FixtureCase& c) {
  std::vector<std::pair<std::string, Shape>> out;
  for (const auto& kv : c.at("state_dict")) {
    out.emplace_back(kv.at(0).get<std::string>(), Shape(kv.at(1).get<std::vector<std::int64_t>>()));
  }
  return out;
}

/// Checks the module's paths/shapes and num_params against torch's, then sets every Param
/// to the fixture's value (param.set(Tensor::from_data(...))).
template <class M, class Dev>
void check_and_load_params(const FixtureCase& c, M& m, const Dev& device) {
  const auto ours = leaf_shapes(m);
  const auto torch = torch_state_dict(c);
  ASSERT_EQ(ours.size(), torch.size()) << "number of state_dict entries";
  for (std::size_t i = 0; i < ours.size(); ++i) {
    EXPECT_EQ(ours[i].first, torch[i].first) << "key " << i;
    EXPECT_EQ(ours[i].second, torch[i].second) << "shape of " << torch[i].first;
  }
  EXPECT_EQ(nn::num_params(m), c.param<std::int64_t>("num_params"));
  nn::visit_mut(m, [&](const std::string& path, auto& leaf) {
    using T = typename std::remove_cvref_t<decltype(leaf)>::Value;
    leaf.set(T::from_data(c.tensor("param_" + path), device));
  });
}

/// The differentiable inputs of a case and their gradients.
template <class B>
struct Inputs {
  const FixtureCase& c;
  typename B::Device device;
  FixtureGrads<B> grads;

  template <std::size_t D>
  Tensor<B, D> leaf(const std::string& key) {
    auto t = Tensor<B, D>::from_data(c.tensor(key), device).require_grad();
    grads.add(key, t);
    return t;
  }

  /// Compares `out` with torch's, runs backward of sum(out * w) and compares the gradient of
  /// every input and Param listed in the case's "grads".
  template <std::size_t E, class M>
  void check(const M& m, const Tensor<B, E>& out) {
    nn::visit(m, [&](const std::string& path, const auto& leaf) { grads.add(path, leaf.val()); });
    grads.check(c, out, Tensor<B, E>::from_data(c.tensor("w"), device), kTol);
  }
};

/// Loads m's parameters from the case (check_and_load_params), then checks m.forward(x),
/// x the case's rank-D input "x", and its gradients (Inputs::check).
template <std::size_t D, class On, class M>
void check_module_case(const FixtureCase& c, M& m) {
  check_and_load_params(c, m, On::device());
  if (::testing::Test::HasFatalFailure()) return;
  Inputs<typename On::B> in{c, On::device(), {}};
  auto x = in.template leaf<D>("x");
  in.check(m, m.forward(x));
}

}  // namespace ember::test::layer_conv
