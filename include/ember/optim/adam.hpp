// Adam and AdamW (Burn's Adam / AdamW; torch.optim.Adam / AdamW's formulas and defaults).
#pragma once

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "ember/optim/config.hpp"
#include "ember/optim/optimizer.hpp"

namespace ember::optim {

namespace detail {

/// The Adam rule of torch's _single_tensor_adam after weight decay (st.step already counts
/// this step): m = lerp(m, g, 1 - b1); v = b2 v + (1 - b2) g^2; vmax = max(vmax, v) with
/// amsgrad; p -= lr / (1 - b1^t) * m / (sqrt(v or vmax) / sqrt(1 - b2^t) + eps).
template <class T>
T adam_rule(const T& p, const T& g, ParamState& st, double lr, double beta_1, double beta_2,
            double epsilon, bool amsgrad) {
  const auto zeros = [&] { return g.zeros_like(); };
  T m = lerp(st.get_or<T>("exp_avg", zeros), g, 1.0 - beta_1);
  T v =
      st.get_or<T>("exp_avg_sq", zeros).mul_scalar(beta_2).add(g.square().mul_scalar(1.0 - beta_2));
  st.set("exp_avg", m);
  st.set("exp_avg_sq", v);
  const double t = static_cast<double>(st.step);
  const double step_size = lr / (1.0 - std::pow(beta_1, t));
  const double bc2_sqrt = std::sqrt(1.0 - std::pow(beta_2, t));
  if (amsgrad) {
    v = st.get_or<T>("max_exp_avg_sq", zeros).max_pair(v);
    st.set("max_exp_avg_sq", v);
  }
  T denom = std::move(v).sqrt().div_scalar(bc2_sqrt).add_scalar(epsilon);
  return p.sub(std::move(m).div(denom).mul_scalar(step_size));
}

}  // namespace detail

class Adam;
class AdamW;

/// Adam options (Burn's AdamConfig with torch's defaults: epsilon 1e-8, where Burn's is
/// 1e-5). weight_decay is the L2 penalty added to the gradient (g += penalty * p; torch
/// Adam's weight_decay). State: "exp_avg", "exp_avg_sq", "max_exp_avg_sq" (amsgrad).
/// init() throws ValueError unless 0 <= beta_1, beta_2 < 1 and epsilon, penalty >= 0.
struct AdamConfig {
  double beta_1 = 0.9;
  double beta_2 = 0.999;
  double epsilon = 1e-8;
  std::optional<WeightDecayConfig> weight_decay{};
  bool amsgrad = false;
  std::optional<GradientClippingConfig> gradient_clipping{};
  std::vector<ParamGroupConfig> param_groups{};
  Adam init() const;
};

/// Adam; step(lr, model, grads) updates the model in place (see Optimizer).
class Adam : public Optimizer<Adam> {
 public:
  using Config = AdamConfig;
  static constexpr const char* kName = "adam";

  explicit Adam(AdamConfig config = {});
  const AdamConfig& config() const { return cfg_; }
  void set_config(AdamConfig config);
  double weight_decay() const { return cfg_.weight_decay ? cfg_.weight_decay->penalty : 0.0; }
  std::vector<std::string> required_state() const;

  template <class T>
  T update(const T& p, T g, ParamState& st, const detail::StepOptions& o) const {
    if (o.weight_decay != 0.0) g = std::move(g).add(p.mul_scalar(o.weight_decay));
    return detail::adam_rule(p, g, st, o.lr, cfg_.beta_1, cfg_.beta_2, cfg_.epsilon, cfg_.amsgrad);
  }

 private:
  AdamConfig cfg_;
};

/// AdamW options (Burn's AdamWConfig, torch's defaults: epsilon 1e-8, weight_decay 1e-2).
/// The decay is decoupled: p *= 1 - lr * weight_decay, then the Adam rule without L2.
/// init() throws ValueError unless 0 <= beta_1, beta_2 < 1 and epsilon, weight_decay >= 0.
struct AdamWConfig {
  double beta_1 = 0.9;
  double beta_2 = 0.999;
  double epsilon = 1e-8;
  double weight_decay = 1e-2;
  bool amsgrad = false;
  std::optional<GradientClippingConfig> gradient_clipping{};
  std::vector<ParamGroupConfig> param_groups{};
  AdamW init() const;
};

/// AdamW; step(lr, model, grads) updates the model in place (see Optimizer).
class AdamW : public Optimizer<AdamW> {
 public:
  using Config = AdamWConfig;
  static constexpr const char* kName = "adamw";

  explicit AdamW(AdamWConfig config = {});
  const AdamWConfig& config() const { return cfg_; }
  void set_config(AdamWConfig config);
  double weight_decay() const { return cfg_.weight_decay; }
  std::vector<std::string> required_state() const;

  template <class T>
  T update(const T& p, T g, ParamState& st, const detail::StepOptions& o) const {
    const T decayed = o.weight_decay != 0.0 ? p.mul_scalar(1.0 - o.lr * o.weight_decay) : p;
    return detail::adam_rule(decayed, g, st, o.lr, cfg_.beta_1, cfg_.beta_2, cfg_.epsilon,
                             cfg_.amsgrad);
  }

 private:
  AdamWConfig cfg_;
};

inline Adam AdamConfig::init() const {
  return Adam(*this);
}
inline AdamW AdamWConfig::init() const {
  return AdamW(*this);
}

EMBER_CONFIG(AdamConfig, beta_1, beta_2, epsilon, weight_decay, amsgrad, gradient_clipping,
             param_groups)
EMBER_CONFIG(AdamWConfig, beta_1, beta_2, epsilon, weight_decay, amsgrad, gradient_clipping,
             param_groups)

}  // namespace ember::optim
