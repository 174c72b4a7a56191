// Shared pieces of the optimizer tests: the tiny model of tests/fixtures/gen_nn_optim.py
// (fc1 = Linear(4, 3), tanh, fc2 = Linear(3, 2)), its loss mean((model(x) - y)^2), and
// helpers to build it from the fixture on Autodiff<Cpu> or Dispatch (cpu+autodiff).
#pragma once

#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "ember/autodiff/cpu.hpp"
#include "ember/dispatch/dispatch.hpp"
#include "ember/module/module.hpp"
#include "ember/nn/linear.hpp"
#include "ember/optim/optim.hpp"
#include "fixtures.hpp"
#include "nn_device.hpp"

namespace ember::test::optim_support {

template <Backend B = Dispatch>
struct TinyNet {
  nn::Linear<B> fc1;
  nn::Linear<B> fc2;
  EMBER_MODULE(fc1, fc2)

  Tensor<B, 2> forward(const Tensor<B, 2>& x) const { return fc2.forward(fc1.forward(x).tanh()); }
};

/// The device the tests create tensors on: the backend's default, cpu+autodiff for Dispatch.
template <Backend B>
typename B::Device device() {
  if constexpr (std::is_same_v<B, Dispatch>) {
    return ember::test::nn_dispatch_device();
  } else {
    return typename B::Device{};
  }
}

inline FixtureCase find_case(const std::string& name) {
  for (const auto& c : fixture_cases("nn/optim", name)) {
    if (c.name == name) return c;
  }
  throw std::runtime_error("no fixture case " + name);
}

inline const FixtureCase& setup() {
  static const FixtureCase c = find_case("setup");
  return c;
}

/// Sets every parameter of `m` whose path is in `values` (others untouched).
template <class M>
void set_params(M& m, const std::map<std::string, TensorData>& values) {
  nn::visit_mut(m, [&](const std::string& path, auto& leaf) {
    using L = std::remove_cvref_t<decltype(leaf)>;
    if constexpr (nn::is_param_v<L>) {
      const auto it = values.find(path);
      if (it == values.end()) return;
      using T = typename L::Value;
      leaf.set(T::from_data(it->second, leaf.val().device()));
    }
  });
}

/// Every parameter of `m` by path, as host data.
template <class M>
std::map<std::string, TensorData> params_of(const M& m) {
  std::map<std::string, TensorData> out;
  nn::visit(m, [&](const std::string& path, const auto& leaf) {
    if constexpr (nn::is_param_v<std::remove_cvref_t<decltype(leaf)>>) {
      out.emplace(path, leaf.val().into_data());
    }
  });
  return out;
}

inline std::map<std::string, TensorData> tensors_of(const json& j) {
  std::map<std::string, TensorData> out;
  for (const auto& [k, v] : j.items()) out.emplace(k, fixture_tensor(v));
  return out;
}

/// The fixture's model with its initial parameters.
template <Backend B>
TinyNet<B> make_model() {
  const auto dev = device<B>();
  TinyNet<B> m{nn::LinearConfig{.d_input = 4, .d_output = 3}.init<B>(dev),
               nn::LinearConfig{.d_input = 3, .d_output = 2}.init<B>(dev)};
  set_params(m, tensors_of(setup().at("params")));
  return m;
}

/// Gradients of mean((m(x) - y)^2) for the fixture's x/y (suffix "" / "_a" / "_b").
template <Backend B>
optim::GradientsParams grads_of(const TinyNet<B>& m, const std::string& suffix = "") {
  const auto dev = device<B>();
  const auto x = Tensor<B, 2>::from_data(setup().tensor("x" + suffix), dev);
  const auto y = Tensor<B, 2>::from_data(setup().tensor("y" + suffix), dev);
  const auto loss = m.forward(x).sub(y).square().mean();
  return optim::GradientsParams::from_grads(loss.backward(), m);
}

/// The optimizer named `kind` ("sgd", "adam", ...) from its JSON config, passed to `f`.
template <class F>
void with_optimizer(const std::string& kind, const json& cfg, F&& f) {
  if (kind == "sgd") {
    auto o = cfg.get<optim::SgdConfig>().init();
    f(o);
  } else if (kind == "adam") {
    auto o = cfg.get<optim::AdamConfig>().init();
    f(o);
  } else if (kind == "adamw") {
    auto o = cfg.get<optim::AdamWConfig>().init();
    f(o);
  } else if (kind == "rmsprop") {
    auto o = cfg.get<optim::RmsPropConfig>().init();
    f(o);
  } else if (kind == "adagrad") {
    auto o = cfg.get<optim::AdaGradConfig>().init();
    f(o);
  } else {
    throw std::runtime_error("unknown optimizer " + kind);
  }
}

/// The tolerance of the optimizer fixtures (f32 parameters after 3 steps vs torch).
inline Tolerance optim_tol() {
  return Tolerance::rel_abs(1e-5, 1e-6);
}

}  // namespace ember::test::optim_support
