// Shared optimizer options: validation, and the JSON of gradient clipping.
#include "ember/optim/config.hpp"

#include <cmath>
#include <limits>
#include <regex>

#include "ember/optim/optimizer.hpp"

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
  using nn::detail::read_config_field;
  nn::detail::check_config_object(j, op);
  std::string type = "norm";
  read_config_field(j, op, "type", type);
  if (type == "value") {
    c.kind = K::Value;
    read_config_field(j, op, "threshold", c.threshold);
  } else if (type == "norm" || type == "global_norm") {
    c.kind = type == "norm" ? K::Norm : K::GlobalNorm;
    read_config_field(j, op, "max_norm", c.threshold);
    read_config_field(j, op, "error_if_nonfinite", c.error_if_nonfinite);
    const auto it = j.find("norm_type");
    if (it != j.end() && it->is_string()) {
      if (*it != "inf") fail<ValueError>(op, "norm_type must be a number or \"inf\", got ", *it);
      c.norm_type = std::numeric_limits<double>::infinity();
    } else {
      read_config_field(j, op, "norm_type", c.norm_type);
    }
  } else {
    fail<ValueError>(op, "type must be \"value\", \"norm\" or \"global_norm\", got \"", type, "\"");
  }
}

}  // namespace ember::optim
