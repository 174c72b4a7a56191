// Optimizer options: validation and required state of Sgd, Adam, AdamW, RmsProp and
// AdaGrad (the update rules and the EMBER_CONFIG JSON are in the headers).
#include "ember/optim/adagrad.hpp"
#include "ember/optim/adam.hpp"
#include "ember/optim/rmsprop.hpp"
#include "ember/optim/sgd.hpp"

namespace ember::optim {

using detail::check_min;
using detail::check_unit;
using ember::detail::fail;

namespace {

void check_weight_decay(const char* op, const std::optional<WeightDecayConfig>& wd) {
  if (wd) check_min(op, "weight_decay.penalty", wd->penalty, 0.0);
}

}  // namespace

// ---- SGD ------------------------------------------------------------------------------------

Sgd::Sgd(SgdConfig config) {
  set_config(std::move(config));
}

void Sgd::set_config(SgdConfig c) {
  const char* op = "SgdConfig";
  check_weight_decay(op, c.weight_decay);
  if (c.momentum) {
    check_min(op, "momentum.momentum", c.momentum->momentum, 0.0);
    check_min(op, "momentum.dampening", c.momentum->dampening, 0.0);
    if (c.momentum->nesterov && (c.momentum->momentum <= 0.0 || c.momentum->dampening != 0.0)) {
      fail<ValueError>(op, "Nesterov momentum requires momentum > 0 and dampening 0, got momentum ",
                       c.momentum->momentum, " and dampening ", c.momentum->dampening);
    }
  }
  set_common(c.gradient_clipping, c.param_groups);
  cfg_ = std::move(c);
}

std::vector<std::string> Sgd::required_state() const {
  if (cfg_.momentum) return {"momentum_buffer"};
  return {};
}

// ---- Adam / AdamW ---------------------------------------------------------------------------

namespace {

template <class C>
void check_adam(const char* op, const C& c) {
  check_unit(op, "beta_1", c.beta_1);
  check_unit(op, "beta_2", c.beta_2);
  check_min(op, "epsilon", c.epsilon, 0.0);
}

std::vector<std::string> adam_state(bool amsgrad) {
  if (amsgrad) return {"exp_avg", "exp_avg_sq", "max_exp_avg_sq"};
  return {"exp_avg", "exp_avg_sq"};
}

}  // namespace

Adam::Adam(AdamConfig config) {
  set_config(std::move(config));
}

void Adam::set_config(AdamConfig c) {
  check_adam("AdamConfig", c);
  check_weight_decay("AdamConfig", c.weight_decay);
  set_common(c.gradient_clipping, c.param_groups);
  cfg_ = std::move(c);
}

std::vector<std::string> Adam::required_state() const {
  return adam_state(cfg_.amsgrad);
}

AdamW::AdamW(AdamWConfig config) {
  set_config(std::move(config));
}

void AdamW::set_config(AdamWConfig c) {
  check_adam("AdamWConfig", c);
  check_min("AdamWConfig", "weight_decay", c.weight_decay, 0.0);
  set_common(c.gradient_clipping, c.param_groups);
  cfg_ = std::move(c);
}

std::vector<std::string> AdamW::required_state() const {
  return adam_state(cfg_.amsgrad);
}

// ---- RMSProp --------------------------------------------------------------------------------

RmsProp::RmsProp(RmsPropConfig config) {
  set_config(std::move(config));
}

void RmsProp::set_config(RmsPropConfig c) {
  const char* op = "RmsPropConfig";
  check_min(op, "alpha", c.alpha, 0.0);
  check_min(op, "epsilon", c.epsilon, 0.0);
  check_min(op, "momentum", c.momentum, 0.0);
  check_weight_decay(op, c.weight_decay);
  set_common(c.gradient_clipping, c.param_groups);
  cfg_ = std::move(c);
}

std::vector<std::string> RmsProp::required_state() const {
  std::vector<std::string> out{"square_avg"};
  if (cfg_.momentum > 0.0) out.emplace_back("momentum_buffer");
  if (cfg_.centered) out.emplace_back("grad_avg");
  return out;
}

// ---- AdaGrad --------------------------------------------------------------------------------

AdaGrad::AdaGrad(AdaGradConfig config) {
  set_config(std::move(config));
}

void AdaGrad::set_config(AdaGradConfig c) {
  const char* op = "AdaGradConfig";
  check_min(op, "lr_decay", c.lr_decay, 0.0);
  check_min(op, "epsilon", c.epsilon, 0.0);
  check_min(op, "initial_accumulator_value", c.initial_accumulator_value, 0.0);
  check_weight_decay(op, c.weight_decay);
  set_common(c.gradient_clipping, c.param_groups);
  cfg_ = std::move(c);
}

std::vector<std::string> AdaGrad::required_state() const {
  return {"sum"};
}

}  // namespace ember::optim
