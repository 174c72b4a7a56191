// Optimizers against torch.optim (tests/fixtures/gen_nn_optim.py, cases "optim_*"), on
// Autodiff<Cpu> and Dispatch (cpu+autodiff): the parameters after each of 3 steps, torch's
// optimizer state after step 3 (same names), and a save/restore after step 1 into a fresh
// model and optimizer that must continue bit-identically to the uninterrupted run.
// Tolerance vs torch: rel 1e-5 / abs 1e-6 (f32).
#include <gtest/gtest.h>

#include "optim_support.hpp"

namespace ember::test {
namespace {

using namespace optim_support;

template <Backend B>
optim::GradientsParams step_grads(const TinyNet<B>& m, bool accumulate) {
  if (!accumulate) return grads_of(m);
  optim::GradientsAccumulator acc;
  acc.accumulate(m, grads_of(m, "_a"));
  acc.accumulate(m, grads_of(m, "_b"));
  EXPECT_EQ(acc.count(), 2u);
  return acc.grads();
}

template <Backend B>
void freeze(TinyNet<B>& m, const std::vector<std::string>& frozen) {
  nn::visit_mut(m, [&](const std::string& path, auto& leaf) {
    if constexpr (nn::is_param_v<std::remove_cvref_t<decltype(leaf)>>) {
      if (std::find(frozen.begin(), frozen.end(), path) != frozen.end()) {
        leaf.set_require_grad(false);
      }
    }
  });
}

template <Backend B>
void run_case(const FixtureCase& c) {
  const auto lrs = c.param<std::vector<double>>("lrs");
  const bool accumulate = c.param<bool>("accumulate");
  const auto frozen = c.param<std::vector<std::string>>("frozen");
  const json& after = c.at("after");
  ASSERT_EQ(lrs.size(), after.size());

  with_optimizer(c.param<std::string>("optim"), c.at("config"), [&](auto& optim) {
    auto model = make_model<B>();
    freeze(model, frozen);
    std::optional<optim::OptimizerRecord> saved;
    std::map<std::string, TensorData> saved_params;
    for (std::size_t k = 0; k < lrs.size(); ++k) {
      optim.step(lrs[k], model, step_grads(model, accumulate));
      const auto got = params_of(model);
      for (const auto& [path, want] : tensors_of(after[k])) {
        SCOPED_TRACE("step " + std::to_string(k + 1) + ", " + path);
        ASSERT_TRUE(got.count(path));
        expect_approx(got.at(path), want, optim_tol());
      }
      if (k == 0) {
        saved = optim.state_dict(model);
        saved_params = got;
      }
    }

    // torch's state after the last step: the same tensors under the same names.
    const optim::OptimizerRecord rec = optim.state_dict(model);
    const auto want_state = tensors_of(c.at("state"));
    EXPECT_EQ(rec.tensors.size(), want_state.size());
    // State tensors: rel 1e-5 and an absolute tolerance of 1e-6 times the tensor's largest
    // magnitude (RMSProp's momentum buffer sums terms of size ~|g / sqrt(v)| ~ 10 that
    // cancel to ~0.2, so its f32 rounding is relative to the terms, not to the result).
    for (const auto& [key, want] : want_state) {
      SCOPED_TRACE("state " + key);
      ASSERT_TRUE(rec.tensors.count(key));
      double scale = 0.0;
      for (double v : want.template to_vec<double>()) scale = std::max(scale, std::abs(v));
      expect_approx(rec.tensors.at(key), want,
                    Tolerance::rel_abs(1e-5, 1e-6 * std::max(1.0, scale)));
    }
    for (const auto& [path, step] : c.at("steps").items()) {
      EXPECT_EQ(rec.meta.at("params").at(path).at("step"), step) << path;
    }

    // Resume from the record of step 1 (through its JSON text) in a new model (new ParamIds)
    // and an optimizer built with default options: load_state_dict restores the options, and
    // steps 2 and 3 give exactly the uninterrupted run's parameters.
    auto model2 = make_model<B>();
    freeze(model2, frozen);
    set_params(model2, saved_params);
    std::remove_cvref_t<decltype(optim)> optim2;
    optim::OptimizerRecord copy{saved->tensors, json::parse(saved->meta.dump())};
    optim2.load_state_dict(model2, copy);
    EXPECT_EQ(json(optim2.config()), json(optim.config()));
    for (std::size_t k = 1; k < lrs.size(); ++k) {
      optim2.step(lrs[k], model2, step_grads(model2, accumulate));
    }
    const auto resumed = params_of(model2);
    for (const auto& [path, value] : params_of(model)) {
      SCOPED_TRACE("resumed " + path);
      expect_eq(resumed.at(path), value);
    }
  });
}

[[maybe_unused]] const bool registered = [] {
  register_fixture_tests<Autodiff<Cpu>>("OptimFixture", "nn/optim", "optim_",
                                        run_case<Autodiff<Cpu>>);
  register_fixture_tests<Dispatch>("OptimFixture", "nn/optim", "optim_", run_case<Dispatch>);
  return true;
}();

}  // namespace
}  // namespace ember::test
