// Stochastic gradient descent (Burn's Sgd; torch.optim.SGD's formulas).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ember/optim/config.hpp"
#include "ember/optim/optimizer.hpp"

namespace ember::optim {

class Sgd;

/// SGD options (Burn's SgdConfig). Per parameter, with g its (clipped) gradient:
///   g += penalty * p                       (weight_decay)
///   momentum: see MomentumConfig           (state "momentum_buffer")
///   p -= lr * g
/// No momentum and no weight decay by default. init() throws ValueError for a negative
/// momentum, dampening or penalty, or nesterov without momentum or with dampening (torch).
struct SgdConfig {
  std::optional<WeightDecayConfig> weight_decay{};
  std::optional<MomentumConfig> momentum{};
  std::optional<GradientClippingConfig> gradient_clipping{};
  std::vector<ParamGroupConfig> param_groups{};
  Sgd init() const;
};

/// SGD; step(lr, model, grads) updates the model in place (see Optimizer).
class Sgd : public Optimizer<Sgd> {
 public:
  using Config = SgdConfig;
  static constexpr const char* kName = "sgd";

  explicit Sgd(SgdConfig config = {});
  const SgdConfig& config() const { return cfg_; }
  /// Replaces the options (validated; the state is kept).
  void set_config(SgdConfig config);
  double weight_decay() const { return cfg_.weight_decay ? cfg_.weight_decay->penalty : 0.0; }
  std::vector<std::string> required_state() const;

  /// One parameter's update (p, g flattened; see SgdConfig).
  template <class T>
  T update(const T& p, T g, ParamState& st, const detail::StepOptions& o) const {
    if (o.weight_decay != 0.0) g = std::move(g).add(p.mul_scalar(o.weight_decay));
    if (cfg_.momentum) {
      const MomentumConfig& m = *cfg_.momentum;
      const T* buf = st.find<T>("momentum_buffer");
      T next =
          buf == nullptr ? g : buf->mul_scalar(m.momentum).add(g.mul_scalar(1.0 - m.dampening));
      st.set("momentum_buffer", next);
      g = m.nesterov ? std::move(g).add(next.mul_scalar(m.momentum)) : std::move(next);
    }
    return p.sub(std::move(g).mul_scalar(o.lr));
  }

 private:
  SgdConfig cfg_;
};

inline Sgd SgdConfig::init() const {
  return Sgd(*this);
}

EMBER_CONFIG(SgdConfig, weight_decay, momentum, gradient_clipping, param_groups)

}  // namespace ember::optim
