// AdaGrad (Burn's AdaGrad; torch.optim.Adagrad's formulas and defaults).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ember/optim/config.hpp"
#include "ember/optim/optimizer.hpp"

namespace ember::optim {

class AdaGrad;

/// AdaGrad options (Burn's AdaGradConfig names plus torch's initial_accumulator_value;
/// torch's defaults: epsilon 1e-10, Burn's is 1e-5). Per parameter, t = its step count:
///   g += penalty * p
///   clr = lr / (1 + (t - 1) * lr_decay)
///   sum += g^2                        (state "sum", starts at initial_accumulator_value)
///   p -= clr * g / (sqrt(sum) + epsilon)
/// init() throws ValueError for a negative lr_decay, epsilon, initial_accumulator_value or
/// penalty.
struct AdaGradConfig {
  double lr_decay = 0.0;
  double epsilon = 1e-10;
  double initial_accumulator_value = 0.0;
  std::optional<WeightDecayConfig> weight_decay{};
  std::optional<GradientClippingConfig> gradient_clipping{};
  std::vector<ParamGroupConfig> param_groups{};
  AdaGrad init() const;
};

/// AdaGrad; step(lr, model, grads) updates the model in place (see Optimizer).
class AdaGrad : public Optimizer<AdaGrad> {
 public:
  using Config = AdaGradConfig;
  static constexpr const char* kName = "adagrad";

  explicit AdaGrad(AdaGradConfig config = {});
  const AdaGradConfig& config() const { return cfg_; }
  void set_config(AdaGradConfig config);
  double weight_decay() const { return cfg_.weight_decay ? cfg_.weight_decay->penalty : 0.0; }
  std::vector<std::string> required_state() const;

  template <class T>
  T update(const T& p, T g, ParamState& st, const detail::StepOptions& o) const {
    if (o.weight_decay != 0.0) g = std::move(g).add(p.mul_scalar(o.weight_decay));
    const double clr = o.lr / (1.0 + static_cast<double>(st.step - 1) * cfg_.lr_decay);
    T sum = st.get_or<T>("sum", [&] {
                return g.full_like(cfg_.initial_accumulator_value);
              }).add(g.square());
    st.set("sum", sum);
    T denom = std::move(sum).sqrt().add_scalar(cfg_.epsilon);
    return p.sub(std::move(g).div(denom).mul_scalar(clr));
  }

 private:
  AdaGradConfig cfg_;
};

inline AdaGrad AdaGradConfig::init() const {
  return AdaGrad(*this);
}

EMBER_CONFIG(AdaGradConfig, lr_decay, epsilon, initial_accumulator_value, weight_decay,
             gradient_clipping, param_groups)

}  // namespace ember::optim
