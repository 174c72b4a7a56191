// Learning-rate schedulers (Burn's burn-optim lr_scheduler; values as torch.optim.lr_scheduler).
//
//   auto sched = optim::CosineAnnealingLrSchedulerConfig{.initial_lr = 1e-3, .num_iters = 100}
//                    .init();
//   for (...) { double lr = sched.step(); optim.step(lr, model, grads); }
//
// A scheduler is a counter and a closed-form rate: the k-th call of step() (k = 0, 1, ...)
// returns the rate of iteration k, so the FIRST step() returns the initial rate (Burn's
// convention; torch's `get_last_lr()` before its k-th `scheduler.step()` gives the same
// sequence). Rates are computed from the counter (no accumulated products), so a scheduler
// restored with load_state() continues exactly where the saved one was.
//
// Every scheduler has `double step()`, `nlohmann::json state() const` (its counters, with a
// "type" tag) and `load_state(json)` (ValueError when the state is of another scheduler or
// malformed). `LrScheduler` holds any of them (value semantics, deep copies), and
// `LrSchedulerConfig` any of their configs (JSON round trip with a "type" tag).
// Configs validate their fields in init() and throw ValueError naming the bad value.
#pragma once

#include <concepts>
#include <cstdint>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "ember/module/config_fwd.hpp"

namespace ember::optim {

using LearningRate = double;

/// What every scheduler provides (LrScheduler accepts any such type).
template <class S>
concept LrSchedulerLike = std::copy_constructible<S> &&
    requires(S s, const S cs, const nlohmann::json& j) {
  { s.step() } -> std::convertible_to<double>;
  { cs.state() } -> std::same_as<nlohmann::json>;
  s.load_state(j);
};

// ---- leaf schedulers ------------------------------------------------------------------------

/// The same rate at every step (Burn: a plain LearningRate used as a scheduler).
class ConstantLrScheduler {
 public:
  explicit ConstantLrScheduler(double lr);
  double step();
  nlohmann::json state() const;
  void load_state(const nlohmann::json& state);

 private:
  double lr_;
  std::int64_t iter_ = 0;
};

/// Config of ConstantLrScheduler. Throws ValueError in init() if lr < 0 or not finite.
struct ConstantLrSchedulerConfig {
  double lr = 1e-3;
  ConstantLrScheduler init() const;
};

/// Linear interpolation from initial_lr (step 0) to final_lr (step num_iters), then final_lr:
///   lr_k = initial + (final - initial) * min(k, num_iters) / num_iters
/// (Burn's LinearLrScheduler; torch LinearLR with start_factor = 1,
/// end_factor = final / initial, total_iters = num_iters).
class LinearLrScheduler {
 public:
  LinearLrScheduler(double initial_lr, double final_lr, std::int64_t num_iters);
  double step();
  nlohmann::json state() const;
  void load_state(const nlohmann::json& state);

 private:
  double initial_, final_;
  std::int64_t num_iters_;
  std::int64_t iter_ = 0;
};

/// Config of LinearLrScheduler. Throws ValueError in init() if a rate is negative or not
/// finite, or num_iters < 1.
struct LinearLrSchedulerConfig {
  double initial_lr = 1e-3;
  double final_lr = 0.0;
  std::int64_t num_iters = 1;
  LinearLrScheduler init() const;
};

/// lr_k = initial_lr * gamma^floor(k / step_size) (torch StepLR, Burn's StepLrScheduler).
class StepLrScheduler {
 public:
  StepLrScheduler(double initial_lr, std::int64_t step_size, double gamma);
  double step();
  nlohmann::json state() const;
  void load_state(const nlohmann::json& state);

 private:
  double initial_;
  std::int64_t step_size_;
  double gamma_;
  std::int64_t iter_ = 0;
};

/// Config of StepLrScheduler (gamma defaults to 0.1 as torch and Burn). Throws ValueError in
/// init() if initial_lr < 0, step_size < 1 or gamma <= 0 (or a value is not finite).
struct StepLrSchedulerConfig {
  double initial_lr = 1e-3;
  std::int64_t step_size = 1;
  double gamma = 0.1;
  StepLrScheduler init() const;
};

/// lr_k = initial_lr * gamma^k (torch ExponentialLR, Burn's ExponentialLrScheduler).
class ExponentialLrScheduler {
 public:
  ExponentialLrScheduler(double initial_lr, double gamma);
  double step();
  nlohmann::json state() const;
  void load_state(const nlohmann::json& state);

 private:
  double initial_, gamma_;
  std::int64_t iter_ = 0;
};

/// Config of ExponentialLrScheduler. Throws ValueError in init() if initial_lr < 0 or gamma
/// is not in (0, 1].
struct ExponentialLrSchedulerConfig {
  double initial_lr = 1e-3;
  double gamma = 0.99;
  ExponentialLrScheduler init() const;
};

/// Cosine annealing (torch's CosineAnnealingLR; Loshchilov & Hutter 2017, without restarts)
/// after an optional linear warmup of warmup_iters steps W:
///   k < W:   lr_k = warmup_initial_lr + (initial_lr - warmup_initial_lr) * k / W
///   k >= W:  lr_k = min_lr + (initial_lr - min_lr) * (1 + cos(pi * (k - W) / num_iters)) / 2
/// Past the end (k - W > num_iters) the rate keeps following the cosine, back up towards
/// initial_lr, exactly as torch does (Burn's old wrap-around to initial_lr is gone; for
/// restarts use CosineAnnealingWarmRestartsLrScheduler). With warmup this is torch's
/// SequentialLR([LinearLR(start_factor = warmup_initial_lr / initial_lr, total_iters = W),
/// CosineAnnealingLR(T_max = num_iters, eta_min = min_lr)], milestones = [W]).
class CosineAnnealingLrScheduler {
 public:
  CosineAnnealingLrScheduler(double initial_lr, double min_lr, std::int64_t num_iters,
                             std::int64_t warmup_iters = 0, double warmup_initial_lr = 0.0);
  double step();
  nlohmann::json state() const;
  void load_state(const nlohmann::json& state);

 private:
  double initial_, min_;
  std::int64_t num_iters_, warmup_iters_;
  double warmup_initial_;
  std::int64_t iter_ = 0;
};

/// Config of CosineAnnealingLrScheduler (min_lr 0 and no warmup by default). Throws
/// ValueError in init() if initial_lr < 0, min_lr not in [0, initial_lr], num_iters < 1,
/// warmup_iters < 0 or warmup_initial_lr < 0 (or a value is not finite).
struct CosineAnnealingLrSchedulerConfig {
  double initial_lr = 1e-3;
  std::int64_t num_iters = 1;
  double min_lr = 0.0;
  std::int64_t warmup_iters = 0;
  double warmup_initial_lr = 0.0;
  CosineAnnealingLrScheduler init() const;
};

/// Cosine annealing with warm restarts (torch's CosineAnnealingWarmRestarts, SGDR by
/// Loshchilov & Hutter 2017): cycle i lasts T_i = t_0 * t_mult^i steps; at step t_cur of
/// its cycle
///   lr = min_lr + (initial_lr - min_lr) * (1 + cos(pi * t_cur / T_i)) / 2
/// so every cycle starts again at initial_lr (step 0, t_0, t_0 + t_0 t_mult, ...).
class CosineAnnealingWarmRestartsLrScheduler {
 public:
  CosineAnnealingWarmRestartsLrScheduler(double initial_lr, std::int64_t t_0,
                                         std::int64_t t_mult = 1, double min_lr = 0.0);
  double step();
  nlohmann::json state() const;
  void load_state(const nlohmann::json& state);

 private:
  double initial_, min_;
  std::int64_t t_0_, t_mult_;
  std::int64_t iter_ = 0;
};

/// Config of CosineAnnealingWarmRestartsLrScheduler (torch's T_0, T_mult = 1, eta_min = 0).
/// Throws ValueError in init() if initial_lr < 0, min_lr not in [0, initial_lr], t_0 < 1 or
/// t_mult < 1 (or a value is not finite).
struct CosineAnnealingWarmRestartsLrSchedulerConfig {
  double initial_lr = 1e-3;
  std::int64_t t_0 = 1;
  std::int64_t t_mult = 1;
  double min_lr = 0.0;
  CosineAnnealingWarmRestartsLrScheduler init() const;
};

/// The Transformer schedule ("Attention is all you need", Burn's NoamLrScheduler), s = k + 1:
///   lr_k = init_lr * model_size^-0.5 * min(s^-0.5, s * warmup_steps^-1.5)
/// torch has no equivalent; the test values are computed from this formula.
class NoamLrScheduler {
 public:
  NoamLrScheduler(double init_lr, std::int64_t warmup_steps, std::int64_t model_size);
  double step();
  nlohmann::json state() const;
  void load_state(const nlohmann::json& state);

 private:
  double init_lr_;
  std::int64_t warmup_steps_, model_size_;
  std::int64_t iter_ = 0;
};

/// Config of NoamLrScheduler (Burn's defaults: warmup_steps 4000, model_size 512). Throws
/// ValueError in init() if init_lr < 0 or not finite, warmup_steps < 1 or model_size < 1.
struct NoamLrSchedulerConfig {
  double init_lr = 1.0;
  std::int64_t warmup_steps = 4000;
  std::int64_t model_size = 512;
  NoamLrScheduler init() const;
};

// ---- type-erased scheduler ------------------------------------------------------------------

/// Any scheduler, by value (copies are deep: two copies step independently).
class LrScheduler {
 public:
  template <LrSchedulerLike S>
  requires(!std::same_as<std::remove_cvref_t<S>, LrScheduler>)
      LrScheduler(S s)  // NOLINT(google-explicit-constructor): any scheduler converts
      : impl_(std::make_unique<Model<S>>(std::move(s))) {}
  LrScheduler(const LrScheduler& o) : impl_(o.impl_->clone()) {}
  LrScheduler(LrScheduler&&) noexcept = default;
  LrScheduler& operator=(const LrScheduler& o) {
    if (this != &o) impl_ = o.impl_->clone();
    return *this;
  }
  LrScheduler& operator=(LrScheduler&&) noexcept = default;

  /// The rate of the current iteration, then advances the counter.
  double step() { return impl_->step(); }
  /// The counters (JSON with a "type" tag); restore with load_state().
  nlohmann::json state() const;
  /// Restores state(); throws ValueError if it belongs to another kind of scheduler.
  void load_state(const nlohmann::json& state);

 private:
  // state() fills a reference: a function returning JSON by value cannot be defined in a
  // template while the header sees only json_fwd.hpp.
  struct Concept {
    virtual ~Concept() = default;
    virtual double step() = 0;
    virtual void state(nlohmann::json& out) const = 0;
    virtual void load_state(const nlohmann::json&) = 0;
    virtual std::unique_ptr<Concept> clone() const = 0;
  };
  template <class S>
  struct Model final : Concept {
    explicit Model(S s) : s(std::move(s)) {}
    double step() override { return static_cast<double>(s.step()); }
    void state(nlohmann::json& out) const override { out = s.state(); }
    void load_state(const nlohmann::json& j) override { s.load_state(j); }
    std::unique_ptr<Concept> clone() const override { return std::make_unique<Model>(s); }
    S s;
  };
  std::unique_ptr<Concept> impl_;
};

// ---- composition ----------------------------------------------------------------------------

/// How ComposedLrScheduler combines its schedulers' rates (Burn's SchedReduceType).
enum class SchedReduceType { Sum, Prod };

/// Steps every scheduler each step() and returns the sum or product of their rates (Burn's
/// ComposedLrScheduler; Prod, the default, is torch's ChainedScheduler of multiplicative
/// factors). Throws ValueError if `schedulers` is empty.
class ComposedLrScheduler {
 public:
  explicit ComposedLrScheduler(std::vector<LrScheduler> schedulers,
                               SchedReduceType reduction = SchedReduceType::Prod);
  double step();
  nlohmann::json state() const;
  void load_state(const nlohmann::json& state);

 private:
  std::vector<LrScheduler> schedulers_;
  SchedReduceType reduction_;
};

/// torch's SequentialLR: scheduler i runs from milestone i-1 (0 for the first) up to
/// milestone i, each starting at its own first rate (iteration t uses scheduler i =
/// #{milestones <= t} at its iteration t - milestone_{i-1}). Only the active scheduler is
/// stepped. Throws ValueError unless milestones.size() == schedulers.size() - 1 and the
/// milestones are positive and strictly increasing.
class SequentialLrScheduler {
 public:
  SequentialLrScheduler(std::vector<LrScheduler> schedulers, std::vector<std::int64_t> milestones);
  double step();
  nlohmann::json state() const;
  void load_state(const nlohmann::json& state);

 private:
  std::vector<LrScheduler> schedulers_;
  std::vector<std::int64_t> milestones_;
  std::int64_t iter_ = 0;
};

// ---- configs as values ----------------------------------------------------------------------

struct ComposedLrSchedulerConfig;
struct SequentialLrSchedulerConfig;

/// Any scheduler config (immutable, cheap to copy). JSON: the config's fields plus
/// "type": "constant" | "linear" | "step" | "exponential" | "cosine" | "cosine_restarts" |
/// "noam" | "composed" | "sequential"; from_json throws ValueError for an unknown type.
class LrSchedulerConfig {
 public:
  LrSchedulerConfig(ConstantLrSchedulerConfig c);         // NOLINT(google-explicit-constructor)
  LrSchedulerConfig(LinearLrSchedulerConfig c);           // NOLINT(google-explicit-constructor)
  LrSchedulerConfig(StepLrSchedulerConfig c);             // NOLINT(google-explicit-constructor)
  LrSchedulerConfig(ExponentialLrSchedulerConfig c);      // NOLINT(google-explicit-constructor)
  LrSchedulerConfig(CosineAnnealingLrSchedulerConfig c);  // NOLINT(google-explicit-constructor)
  LrSchedulerConfig(CosineAnnealingWarmRestartsLrSchedulerConfig c);  // NOLINT
  LrSchedulerConfig(NoamLrSchedulerConfig c);        // NOLINT(google-explicit-constructor)
  LrSchedulerConfig(ComposedLrSchedulerConfig c);    // NOLINT(google-explicit-constructor)
  LrSchedulerConfig(SequentialLrSchedulerConfig c);  // NOLINT(google-explicit-constructor)

  /// The scheduler (validates the config; ValueError as the config's own init()).
  LrScheduler init() const;
  /// The "type" tag of the JSON form.
  std::string type() const;
  nlohmann::json to_json() const;
  static LrSchedulerConfig from_json(const nlohmann::json& j);

 private:
  struct Holder;
  std::shared_ptr<const Holder> impl_;
};

/// Config of ComposedLrScheduler (Burn's ComposedLrSchedulerConfig).
struct ComposedLrSchedulerConfig {
  std::vector<LrSchedulerConfig> schedulers{};
  SchedReduceType reduction = SchedReduceType::Prod;
  ComposedLrScheduler init() const;
};

/// Config of SequentialLrScheduler.
struct SequentialLrSchedulerConfig {
  std::vector<LrSchedulerConfig> schedulers{};
  std::vector<std::int64_t> milestones{};
  SequentialLrScheduler init() const;
};

// JSON of the configs (missing keys keep the defaults; a wrong type throws ValueError).
EMBER_CONFIG(ConstantLrSchedulerConfig, lr)
EMBER_CONFIG(LinearLrSchedulerConfig, initial_lr, final_lr, num_iters)
EMBER_CONFIG(StepLrSchedulerConfig, initial_lr, step_size, gamma)
EMBER_CONFIG(ExponentialLrSchedulerConfig, initial_lr, gamma)
EMBER_CONFIG(CosineAnnealingLrSchedulerConfig, initial_lr, num_iters, min_lr, warmup_iters,
             warmup_initial_lr)
EMBER_CONFIG(CosineAnnealingWarmRestartsLrSchedulerConfig, initial_lr, t_0, t_mult, min_lr)
EMBER_CONFIG(NoamLrSchedulerConfig, init_lr, warmup_steps, model_size)
/// {"schedulers": [...], "reduction": "prod" | "sum"}.
void to_json(nlohmann::json& j, const ComposedLrSchedulerConfig& c);
void from_json(const nlohmann::json& j, ComposedLrSchedulerConfig& c);
void to_json(nlohmann::json& j, const SequentialLrSchedulerConfig& c);
void from_json(const nlohmann::json& j, SequentialLrSchedulerConfig& c);

}  // namespace ember::optim

/// LrSchedulerConfig has no default value, so nlohmann builds it through from_json (this
/// makes j.get<LrSchedulerConfig>(), nn::load_config<LrSchedulerConfig>() and vectors of it
/// work).
template <>
struct nlohmann::adl_serializer<ember::optim::LrSchedulerConfig> {
  static ember::optim::LrSchedulerConfig from_json(const nlohmann::json& j);
  static void to_json(nlohmann::json& j, const ember::optim::LrSchedulerConfig& c);
};
