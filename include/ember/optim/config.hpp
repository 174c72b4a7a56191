// Options shared by the optimizers (Burn's burn-optim names): weight decay, momentum, gradient
// clipping, parameter groups. Plain structs with designated initializers; JSON via
// EMBER_CONFIG (missing keys keep the defaults, wrong JSON types throw ValueError).
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "ember/module/config_fwd.hpp"

namespace ember::optim {

/// L2 penalty added to the gradient, g += penalty * param (Burn's WeightDecayConfig; torch's
/// `weight_decay` of SGD/Adam/RMSprop/Adagrad).
struct WeightDecayConfig {
  double penalty = 1e-4;
};

/// Momentum of SGD (Burn's MomentumConfig; torch's formulas):
///   buf = g (first step), else buf = momentum * buf + (1 - dampening) * g
///   g = nesterov ? g + momentum * buf : buf
/// Defaults: momentum 0.9 (Burn), dampening 0 (torch; Burn's is 0.1), nesterov false.
struct MomentumConfig {
  double momentum = 0.9;
  double dampening = 0.0;
  bool nesterov = false;
};

/// Gradient clipping, applied to the gradients before the optimizer's rule (and before
/// weight decay), as the torch.nn.utils calls made between backward() and step():
/// - value(t):  each element clamped to [-t, t] (clip_grad_value_; Burn's Value).
/// - norm(m):   each parameter's gradient scaled by min(1, m / (||g||_2 + 1e-6))
///              (clip_grad_norm_ on that parameter alone; Burn's Norm).
/// - global_norm(m, p, error_if_nonfinite): the total p-norm over every updated gradient,
///              N = ||(||g_1||_p, ||g_2||_p, ...)||_p (p = inf: the largest |g|), and every
///              gradient scaled by min(1, m / (N + 1e-6)) (clip_grad_norm_ over all
///              parameters). With error_if_nonfinite a NaN/inf N throws ValueError before
///              any parameter changes.
struct GradientClippingConfig {
  enum class Kind { Value, Norm, GlobalNorm };
  Kind kind = Kind::Norm;
  /// The clamp bound (Value) or the maximal norm (Norm, GlobalNorm); must be > 0.
  double threshold = 1.0;
  /// GlobalNorm only: p > 0, or infinity for the max norm.
  double norm_type = 2.0;
  /// GlobalNorm only.
  bool error_if_nonfinite = false;

  static GradientClippingConfig value(double threshold) { return {Kind::Value, threshold}; }
  static GradientClippingConfig norm(double max_norm) { return {Kind::Norm, max_norm}; }
  static GradientClippingConfig global_norm(double max_norm, double norm_type = 2.0,
                                            bool error_if_nonfinite = false) {
    return {Kind::GlobalNorm, max_norm, norm_type, error_if_nonfinite};
  }
  /// Throws ValueError if the threshold is not > 0 or norm_type not > 0.
  void validate() const;
};

/// A parameter group: the parameters whose dotted path (e.g. "encoder.layers.0.fc1.weight")
/// matches `pattern` entirely (ECMAScript std::regex, std::regex_match; "fc1\\..*" selects
/// fc1's parameters, ".*\\.bias" every bias). A parameter belongs to the FIRST group that
/// matches, else to the default group (the optimizer's own options).
/// - learning rate: `lr` when set (fixed, the lr given to step() is ignored for the group),
///   else lr_scale * the lr given to step() (so schedulers scale every group alike, as torch
///   schedulers scale each group's base lr). Setting both is a ValueError.
/// - weight decay: `weight_decay` when set replaces the optimizer's penalty (0 disables it;
///   for AdamW it is the decoupled decay).
struct ParamGroupConfig {
  std::string pattern{};
  std::optional<double> lr{};
  double lr_scale = 1.0;
  std::optional<double> weight_decay{};
  /// Throws ValueError for an invalid regex, lr and lr_scale both set, or negative values.
  void validate() const;
};

EMBER_CONFIG(WeightDecayConfig, penalty)
EMBER_CONFIG(MomentumConfig, momentum, dampening, nesterov)
/// {"type": "value" | "norm" | "global_norm", "threshold" (value) or "max_norm",
///  "norm_type" (number or "inf"), "error_if_nonfinite"}.
void to_json(nlohmann::json& j, const GradientClippingConfig& c);
void from_json(const nlohmann::json& j, GradientClippingConfig& c);
EMBER_CONFIG(ParamGroupConfig, pattern, lr, lr_scale, weight_decay)

}  // namespace ember::optim
