// Optimizer options: validation, required state and JSON of Sgd, Adam, AdamW, RmsProp and
// AdaGrad (the update rules are templates in the headers).
#include "ember/optim/adagrad.hpp"
#include "ember/optim/adam.hpp"
#include "ember/optim/rmsprop.hpp"
#include "ember/optim/sgd.hpp"
#include "json_util.hpp"

namespace ember::optim {

using detail::check_min;
using detail::check_unit;
using ember::detail::fail;
using nlohmann::json;

namespace {

void check_weight_decay(const char* op, const std::optional<WeightDecayConfig>& wd) {
  if (wd) check_min(op, "weight_decay.penalty", wd->penalty, 0.0);
}

template <class C>
void write_common(json& j, const C& c) {
  write_optional(j, "gradient_clipping", c.gradient_clipping);
  j["param_groups"] = c.param_groups;
}

template <class C>
void read_common(const char* op, const json& j, C& c) {
  read_optional(op, j, "gradient_clipping", c.gradient_clipping);
  read_field(op, j, "param_groups", c.param_groups);
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

void to_json(json& j, const SgdConfig& c) {
  j = json::object();
  write_optional(j, "weight_decay", c.weight_decay);
  write_optional(j, "momentum", c.momentum);
  write_common(j, c);
}
void from_json(const json& j, SgdConfig& c) {
  const char* op = "SgdConfig";
  read_optional(op, j, "weight_decay", c.weight_decay);
  read_optional(op, j, "momentum", c.momentum);
  read_common(op, j, c);
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

template <class C>
void write_adam(json& j, const C& c) {
  j["beta_1"] = c.beta_1;
  j["beta_2"] = c.beta_2;
  j["epsilon"] = c.epsilon;
  j["amsgrad"] = c.amsgrad;
}

template <class C>
void read_adam(const char* op, const json& j, C& c) {
  read_field(op, j, "beta_1", c.beta_1);
  read_field(op, j, "beta_2", c.beta_2);
  read_field(op, j, "epsilon", c.epsilon);
  read_field(op, j, "amsgrad", c.amsgrad);
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

void to_json(json& j, const AdamConfig& c) {
  j = json::object();
  write_adam(j, c);
  write_optional(j, "weight_decay", c.weight_decay);
  write_common(j, c);
}
void from_json(const json& j, AdamConfig& c) {
  read_adam("AdamConfig", j, c);
  read_optional("AdamConfig", j, "weight_decay", c.weight_decay);
  read_common("AdamConfig", j, c);
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

void to_json(json& j, const AdamWConfig& c) {
  j = json::object();
  write_adam(j, c);
  j["weight_decay"] = c.weight_decay;
  write_common(j, c);
}
void from_json(const json& j, AdamWConfig& c) {
  read_adam("AdamWConfig", j, c);
  read_field("AdamWConfig", j, "weight_decay", c.weight_decay);
  read_common("AdamWConfig", j, c);
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

void to_json(json& j, const RmsPropConfig& c) {
  j = json{{"alpha", c.alpha},
           {"epsilon", c.epsilon},
           {"centered", c.centered},
           {"momentum", c.momentum}};
  write_optional(j, "weight_decay", c.weight_decay);
  write_common(j, c);
}
void from_json(const json& j, RmsPropConfig& c) {
  const char* op = "RmsPropConfig";
  read_field(op, j, "alpha", c.alpha);
  read_field(op, j, "epsilon", c.epsilon);
  read_field(op, j, "centered", c.centered);
  read_field(op, j, "momentum", c.momentum);
  read_optional(op, j, "weight_decay", c.weight_decay);
  read_common(op, j, c);
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

void to_json(json& j, const AdaGradConfig& c) {
  j = json{{"lr_decay", c.lr_decay},
           {"epsilon", c.epsilon},
           {"initial_accumulator_value", c.initial_accumulator_value}};
  write_optional(j, "weight_decay", c.weight_decay);
  write_common(j, c);
}
void from_json(const json& j, AdaGradConfig& c) {
  const char* op = "AdaGradConfig";
  read_field(op, j, "lr_decay", c.lr_decay);
  read_field(op, j, "epsilon", c.epsilon);
  read_field(op, j, "initial_accumulator_value", c.initial_accumulator_value);
  read_optional(op, j, "weight_decay", c.weight_decay);
  read_common(op, j, c);
}

}  // namespace ember::optim
