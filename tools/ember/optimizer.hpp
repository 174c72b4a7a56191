// AnyOptimizer: one of the optimizers `ember train --optimizer` offers (Adam, AdamW, SGD with
// momentum), chosen at run time, with the interface the Learner uses. One Learner type per
// model then serves every optimizer.
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <variant>

#include "ember/optim/optim.hpp"

namespace ember::cli {

/// An optimizer chosen at run time; forwards step / state_dict / load to the one it holds.
class AnyOptimizer {
 public:
  /// "adam" (PyTorch's defaults; `weight_decay` as an L2 penalty when > 0), "adamw"
  /// (decoupled decay `weight_decay`) or "sgd" (momentum 0.9, L2 penalty `weight_decay`).
  /// Throws ValueError for another name or a negative decay.
  AnyOptimizer(const std::string& name, double weight_decay) {
    if (weight_decay < 0) {
      ember::detail::fail<ValueError>("optimizer", "weight decay must be >= 0, got ", weight_decay);
    }
    const auto l2 = weight_decay > 0
                        ? std::optional<optim::WeightDecayConfig>({.penalty = weight_decay})
                        : std::nullopt;
    if (name == "adam") {
      opt_ = optim::AdamConfig{.weight_decay = l2}.init();
    } else if (name == "adamw") {
      opt_ = optim::AdamWConfig{.weight_decay = weight_decay}.init();
    } else if (name == "sgd") {
      opt_ = optim::SgdConfig{.weight_decay = l2, .momentum = optim::MomentumConfig{}}.init();
    } else {
      ember::detail::fail<ValueError>("optimizer", "unknown optimizer '", name,
                                      "' (adam, adamw, sgd)");
    }
  }

  /// One update of `model` with learning rate `lr` (see optim::Optimizer::step).
  template <class M>
  void step(double lr, M& model, const optim::GradientsParams& grads) {
    std::visit([&](auto& o) { o.step(lr, model, grads); }, opt_);
  }
  /// The optimizer state keyed by parameter path.
  template <class M>
  optim::OptimizerRecord state_dict(const M& model) const {
    return std::visit([&](const auto& o) { return o.state_dict(model); }, opt_);
  }
  /// Restores a state written by the same kind of optimizer (ValueError for another kind).
  template <class M>
  void load(const std::filesystem::path& path, const M& model) {
    std::visit([&](auto& o) { o.load(path, model); }, opt_);
  }

 private:
  std::variant<optim::Adam, optim::AdamW, optim::Sgd> opt_;
};

}  // namespace ember::cli
