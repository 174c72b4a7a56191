// Shared helpers of the normalisation / activation layer tests (test_layer_norm*.cpp,
// test_layer_activation.cpp): the two backends, fixture registration per backend, and the
// comparison of a layer's output and gradients with PyTorch's.
//
// Fixtures (tests/fixtures/gen_nn_norm.py) hold torch's output and its gradients of
// sum(out * w) wrt the input and every parameter, computed in f64 from f32 values. Ember runs
// in f32; everything is compared with |ember - torch| <= 1e-5 + 1e-4 |torch| (kTol).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ember/autodiff/cpu.hpp"
#include "ember/dispatch/dispatch.hpp"
#include "ember/module/module.hpp"
#include "ember/tensor/tensor.hpp"
#include "fixtures.hpp"
#include "nn_device.hpp"
#include "nn_test_util.hpp"

namespace ember::test::norm {

/// rel 1e-4, abs 1e-5 (f32 Ember against f64 torch).
inline const Tolerance kTol = Tolerance::rel_abs(1e-4, 1e-5);

/// The static autodiff backend.
struct AutodiffCpuEnv {
  using B = Autodiff<Cpu>;
  static B::Device device() { return {}; }
  static std::string name() { return "AutodiffCpu"; }
};

/// Dispatch on the cpu device with autodiff on ("cpu+autodiff").
struct DispatchEnv {
  using B = Dispatch;
  static Device device() { return ember::test::nn_dispatch_device(); }
  static std::string name() { return "Dispatch"; }
};

/// Registers one test per case of tests/fixtures/<file>.json whose name starts with
/// `prefix` for the backend of Env: suite "<suite>/<Env::name()>", test "<case name>".
template <class Env>
bool register_for(const std::string& suite, const std::string& file, const std::string& prefix,
                  void (*run)(const FixtureCase&)) {
  for (const auto& c : fixture_cases(file, prefix)) {
    ::testing::RegisterTest((suite + "/" + Env::name()).c_str(), c.name.c_str(), nullptr, nullptr,
                            __FILE__, __LINE__, [run, c]() -> ::testing::Test* {
                              struct T : ::testing::Test {
                                void (*f)(const FixtureCase&) = nullptr;
                                FixtureCase fc;
                                void TestBody() override { f(fc); }
                              };
                              auto* t = new T();
                              t->f = run;
                              t->fc = c;
                              return t;
                            });
  }
  return true;
}

/// Registers `fn<AutodiffCpuEnv>` and `fn<DispatchEnv>` for every case of `file` starting
/// with `prefix`, at static initialisation.
#define EMBER_NORM_FIXTURES(suite, file, prefix, fn)                          \
  [[maybe_unused]] static const bool ember_registered_##suite =               \
      ::ember::test::norm::register_for<::ember::test::norm::AutodiffCpuEnv>( \
          #suite, file, prefix, &fn<::ember::test::norm::AutodiffCpuEnv>) &&  \
      ::ember::test::norm::register_for<::ember::test::norm::DispatchEnv>(    \
          #suite, file, prefix, &fn<::ember::test::norm::DispatchEnv>)

/// Calls f.template operator()<D>() for the run-time rank r in [1, 5].
template <class F>
void with_rank(std::size_t r, F&& f) {
  switch (r) {
    case 1:
      f.template operator()<1>();
      break;
    case 2:
      f.template operator()<2>();
      break;
    case 3:
      f.template operator()<3>();
      break;
    case 4:
      f.template operator()<4>();
      break;
    case 5:
      f.template operator()<5>();
      break;
    default:
      FAIL() << "rank " << r << " not covered by the test";
  }
}

/// The differentiated tensors of one forward (FixtureGrads, which also takes Params and
/// optional Params here) and the comparison of their gradients with the fixture's.
template <class B>
struct Grads : FixtureGrads<B> {
  template <std::size_t D>
  void add(const std::string& name, const Tensor<B, D>& t) {
    FixtureGrads<B>::add(name, t);
  }
  template <class T>
  void add(const std::string& name, const nn::Param<T>& p) {
    add(name, p.val());
  }
  template <class T>
  void add(const std::string& name, const std::optional<nn::Param<T>>& p) {
    ASSERT_TRUE(p.has_value()) << "the layer has no " << name;
    add(name, p->val());
  }

  /// Adds a Param, or an optional Param when it is engaged.
  template <class T>
  void add_if(const std::string& name, const nn::Param<T>& p) {
    add(name, p.val());
  }
  template <class T>
  void add_if(const std::string& name, const std::optional<nn::Param<T>>& p) {
    if (p) add(name, p->val());
  }

  /// out against c[out_key], then backward of sum(out * c[w_key]) and every name in
  /// c["grads"] against c[grad_prefix + name].
  template <std::size_t E>
  void check(const FixtureCase& c, const Tensor<B, E>& out, const typename B::Device& dev,
             const std::string& out_key = "out", const std::string& w_key = "w",
             const std::string& grad_prefix = "grad_") const {
    FixtureGrads<B>::check(c, out, Tensor<B, E>::from_data(c.tensor(w_key), dev), kTol, out_key,
                           grad_prefix);
  }
};

/// Sets a Param (or an engaged optional Param) from the fixture tensor `key`.
template <class B, std::size_t D>
void set_param(nn::Param<Tensor<B, D>>& p, const FixtureCase& c, const std::string& key,
               const typename B::Device& dev) {
  p.set(Tensor<B, D>::from_data(c.tensor(key), dev));
}
template <class B, std::size_t D>
void set_param(std::optional<nn::Param<Tensor<B, D>>>& p, const FixtureCase& c,
               const std::string& key, const typename B::Device& dev) {
  ASSERT_TRUE(p.has_value()) << "the layer has no " << key;
  p->set(Tensor<B, D>::from_data(c.tensor(key), dev));
}

/// The module's state_dict names and shapes equal torch's (c["state"]: [[name, shape], ...]).
template <class M>
void expect_torch_state(const M& m, const FixtureCase& c) {
  std::vector<std::pair<std::string, std::vector<std::int64_t>>> want, got;
  for (const auto& e : c.at("state"))
    want.emplace_back(e.at(0).get<std::string>(), e.at(1).get<std::vector<std::int64_t>>());
  for (const auto& [name, data] : nn::state_dict(m)) got.emplace_back(name, data.shape().dims);
  std::sort(want.begin(), want.end());
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, want);
}

}  // namespace ember::test::norm
