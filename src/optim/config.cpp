// Shared optimizer options: validation and JSON.
#include "ember/optim/config.hpp"

#include <cmath>
#include <limits>
#include <regex>

#include "ember/optim/optimizer.hpp"
#include "json_util.hpp"

namespace ember::optim {

using ember::detail::fail;
using nlohmann::json;

namespace detail {

void check_min(const char* op, const char* name, double v, double lo, bool open) {
  if (std::isnan(v) || std::isinf(v) || (open ? v <= lo : v < lo)) {
    fail<ValueError>(op, name, " must be finite and ", open ? "> " : ">= ", lo, ", got ", v);
  }
}

void check_unit(const char* op, const char* name, double v) {
  if (!(v >= 0.0 && v < 1.0)) fail<ValueError>(op, name, " must be in [0, 1), got ", v);
}

std::vector<std::regex> compile_groups(const char* op, const std::vector<ParamGroupConfig>& g) {
  std::vector<std::regex> out;
  for (const auto& group : g) {
    group.validate();
    try {
      out.emplace_back(group.pattern, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      fail<ValueError>(op, "parameter group pattern '", group.pattern,
                       "' is not a valid regex: ", e.what());
    }
  }
  return out;
}

}  // namespace detail

void GradientClippingConfig::validate() const {
  const char* op = "GradientClippingConfig";
  detail::check_min(op, "threshold", threshold, 0.0, /*open=*/true);
  if (kind == Kind::GlobalNorm && !(norm_type > 0.0)) {
    fail<ValueError>(op, "norm_type must be > 0 (or infinity), got ", norm_type);
  }
}

void ParamGroupConfig::validate() const {
  const char* op = "ParamGroupConfig";
  if (lr && lr_scale != 1.0) {
    fail<ValueError>(op, "group '", pattern, "' sets both lr (", *lr, ") and lr_scale (", lr_scale,
                     "); give one");
  }
  if (lr) detail::check_min(op, "lr", *lr, 0.0);
  detail::check_min(op, "lr_scale", lr_scale, 0.0);
  if (weight_decay) detail::check_min(op, "weight_decay", *weight_decay, 0.0);
  try {
    std::regex r(pattern, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    fail<ValueError>(op, "pattern '", pattern, "' is not a valid regex: ", e.what());
  }
}

void to_json(json& j, const WeightDecayConfig& c) {
  j = json{{"penalty", c.penalty}};
}
void from_json(const json& j, WeightDecayConfig& c) {
  read_field("WeightDecayConfig", j, "penalty", c.penalty);
}

void to_json(json& j, const MomentumConfig& c) {
  j = json{{"momentum", c.momentum}, {"dampening", c.dampening}, {"nesterov", c.nesterov}};
}
void from_json(const json& j, MomentumConfig& c) {
  read_field("MomentumConfig", j, "momentum", c.momentum);
  read_field("MomentumConfig", j, "dampening", c.dampening);
  read_field("MomentumConfig", j, "nesterov", c.nesterov);
}

void to_json(json& j, const GradientClippingConfig& c) {
  using K = GradientClippingConfig::Kind;
  switch (c.kind) {
    case K::Value:
      j = json{{"type", "value"}, {"threshold", c.threshold}};
      return;
    case K::Norm:
      j = json{{"type", "norm"}, {"max_norm", c.threshold}};
      return;
    case K::GlobalNorm:
      j = json{{"type", "global_norm"},
               {"max_norm", c.threshold},
               {"error_if_nonfinite", c.error_if_nonfinite}};
      if (std::isinf(c.norm_type)) {
        j["norm_type"] = "inf";
      } else {
        j["norm_type"] = c.norm_type;
      }
      return;
  }
}

void from_json(const json& j, GradientClippingConfig& c) {
  const char* op = "GradientClippingConfig";
  using K = GradientClippingConfig::Kind;
  std::string type = "norm";
  read_field(op, j, "type", type);
  if (type == "value") {
    c.kind = K::Value;
    read_field(op, j, "threshold", c.threshold);
  } else if (type == "norm" || type == "global_norm") {
    c.kind = type == "norm" ? K::Norm : K::GlobalNorm;
    read_field(op, j, "max_norm", c.threshold);
    read_field(op, j, "error_if_nonfinite", c.error_if_nonfinite);
    const auto it = j.find("norm_type");
    if (it != j.end() && it->is_string()) {
      if (*it != "inf") fail<ValueError>(op, "norm_type must be a number or \"inf\", got ", *it);
      c.norm_type = std::numeric_limits<double>::infinity();
    } else {
      read_field(op, j, "norm_type", c.norm_type);
    }
  } else {
    fail<ValueError>(op, "type must be \"value\", \"norm\" or \"global_norm\", got \"", type, "\"");
  }
}

void to_json(json& j, const ParamGroupConfig& c) {
  j = json{{"pattern", c.pattern}, {"lr_scale", c.lr_scale}};
  write_optional(j, "lr", c.lr);
  write_optional(j, "weight_decay", c.weight_decay);
}
void from_json(const json& j, ParamGroupConfig& c) {
  const char* op = "ParamGroupConfig";
  read_field(op, j, "pattern", c.pattern);
  read_optional(op, j, "lr", c.lr);
  read_field(op, j, "lr_scale", c.lr_scale);
  read_optional(op, j, "weight_decay", c.weight_decay);
}

}  // namespace ember::optim
