// RMSProp (Burn's RmsProp; torch.optim.RMSprop's formulas and defaults).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ember/optim/config.hpp"
#include "ember/optim/optimizer.hpp"

namespace ember::optim {

class RmsProp;

/// RMSProp options (Burn's RmsPropConfig names; torch's defaults: epsilon 1e-8, Burn's is
/// 1e-5). Per parameter (torch's _single_tensor_rmsprop):
///   g += penalty * p
///   square_avg = alpha * square_avg + (1 - alpha) g^2
///   centered:  grad_avg = lerp(grad_avg, g, 1 - alpha); avg = sqrt(square_avg - grad_avg^2)
///   else:      avg = sqrt(square_avg)
///   avg += epsilon
///   momentum > 0: buf = momentum * buf + g / avg; p -= lr * buf   (state "momentum_buffer")
///   else:         p -= lr * g / avg
/// init() throws ValueError for a negative alpha, epsilon, momentum or penalty.
struct RmsPropConfig {
  double alpha = 0.99;
  double epsilon = 1e-8;
  bool centered = false;
  double momentum = 0.0;
  std::optional<WeightDecayConfig> weight_decay{};
  std::optional<GradientClippingConfig> gradient_clipping{};
  std::vector<ParamGroupConfig> param_groups{};
  RmsProp init() const;
};

/// RMSProp; step(lr, model, grads) updates the model in place (see Optimizer).
class RmsProp : public Optimizer<RmsProp> {
 public:
  using Config = RmsPropConfig;
  static constexpr const char* kName = "rmsprop";

  explicit RmsProp(RmsPropConfig config = {});
  const RmsPropConfig& config() const { return cfg_; }
  void set_config(RmsPropConfig config);
  double weight_decay() const { return cfg_.weight_decay ? cfg_.weight_decay->penalty : 0.0; }
  std::vector<std::string> required_state() const;

  template <class T>
  T update(const T& p, T g, ParamState& st, const detail::StepOptions& o) const {
    const auto zeros = [&] { return g.zeros_like(); };
    if (o.weight_decay != 0.0) g = std::move(g).add(p.mul_scalar(o.weight_decay));
    T sq = st.get_or<T>("square_avg", zeros)
               .mul_scalar(cfg_.alpha)
               .add(g.square().mul_scalar(1.0 - cfg_.alpha));
    st.set("square_avg", sq);
    T avg = [&] {
      if (!cfg_.centered) return sq.sqrt();
      T ga = detail::lerp(st.get_or<T>("grad_avg", zeros), g, 1.0 - cfg_.alpha);
      st.set("grad_avg", ga);
      return sq.sub(ga.square()).sqrt();
    }();
    avg = std::move(avg).add_scalar(cfg_.epsilon);
    if (cfg_.momentum > 0.0) {
      T buf = st.get_or<T>("momentum_buffer", zeros).mul_scalar(cfg_.momentum).add(g.div(avg));
      st.set("momentum_buffer", buf);
      return p.sub(std::move(buf).mul_scalar(o.lr));
    }
    return p.sub(std::move(g).div(avg).mul_scalar(o.lr));
  }

 private:
  RmsPropConfig cfg_;
};

inline RmsProp RmsPropConfig::init() const {
  return RmsProp(*this);
}

EMBER_CONFIG(RmsPropConfig, alpha, epsilon, centered, momentum, weight_decay, gradient_clipping,
             param_groups)

}  // namespace ember::optim
