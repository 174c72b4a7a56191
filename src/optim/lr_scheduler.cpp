// Learning-rate schedulers: closed-form rates of an iteration counter.
#include "ember/optim/lr_scheduler.hpp"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <numbers>

#include "ember/core/error.hpp"

namespace ember::optim {

using ember::detail::fail;
using nlohmann::json;

namespace {

void check_rate(const char* op, const char* name, double v) {
  if (!std::isfinite(v) || v < 0.0) {
    fail<ValueError>(op, name, " must be finite and >= 0, got ", v);
  }
}

void check_count(const char* op, const char* name, std::int64_t v, std::int64_t min) {
  if (v < min) fail<ValueError>(op, name, " must be >= ", min, ", got ", v);
}

json counter_state(const char* type, std::int64_t iter) {
  return json{{"type", type}, {"iteration", iter}};
}

/// The iteration counter of a leaf scheduler's state; ValueError if the state is of another
/// scheduler or has no valid counter.
std::int64_t read_counter(const char* op, const char* type, const json& state) {
  if (!state.is_object() || !state.contains("type") || state.at("type") != type) {
    fail<ValueError>(op, "state is not of a '", type, "' scheduler: ", state.dump());
  }
  const auto it = state.find("iteration");
  if (it == state.end() || !it->is_number_integer() || it->get<std::int64_t>() < 0) {
    fail<ValueError>(op, "state has no valid 'iteration' counter: ", state.dump());
  }
  // Far beyond any run (2^53 steps), and below the point where step() would wrap the
  // counter (a corrupt or hand-edited state file).
  constexpr std::int64_t kMaxIteration = std::int64_t{1} << 53;
  if (it->get<std::int64_t>() > kMaxIteration) {
    fail<ValueError>(op, "state's 'iteration' counter ", it->get<std::int64_t>(), " exceeds 2^53 (",
                     kMaxIteration, "): ", state.dump());
  }
  return it->get<std::int64_t>();
}

/// Loads one state per child of a composed / sequential scheduler, all or nothing (into
/// copies, then commits). ValueError when the counts differ.
void load_children(const char* op, std::vector<LrScheduler>& schedulers, const json& children) {
  if (children.size() != schedulers.size()) {
    fail<ValueError>(op, "state has ", children.size(), " schedulers, this scheduler has ",
                     schedulers.size());
  }
  std::vector<LrScheduler> next = schedulers;
  for (std::size_t i = 0; i < next.size(); ++i) next[i].load_state(children[i]);
  schedulers = std::move(next);
}

}  // namespace

// ---- constant -------------------------------------------------------------------------------

ConstantLrScheduler::ConstantLrScheduler(double lr) : lr_(lr) {
  check_rate("ConstantLrScheduler", "lr", lr);
}
double ConstantLrScheduler::step() {
  ++iter_;
  return lr_;
}
json ConstantLrScheduler::state() const {
  return counter_state("constant", iter_);
}
void ConstantLrScheduler::load_state(const json& s) {
  iter_ = read_counter("ConstantLrScheduler::load_state", "constant", s);
}
ConstantLrScheduler ConstantLrSchedulerConfig::init() const {
  return ConstantLrScheduler(lr);
}

// ---- linear ---------------------------------------------------------------------------------

LinearLrScheduler::LinearLrScheduler(double initial_lr, double final_lr, std::int64_t num_iters)
    : initial_(initial_lr), final_(final_lr), num_iters_(num_iters) {
  check_rate("LinearLrScheduler", "initial_lr", initial_lr);
  check_rate("LinearLrScheduler", "final_lr", final_lr);
  check_count("LinearLrScheduler", "num_iters", num_iters, 1);
}
double LinearLrScheduler::step() {
  const std::int64_t k = iter_++;
  if (k == 0) return initial_;
  if (k >= num_iters_) return final_;
  return initial_ + (final_ - initial_) * static_cast<double>(k) / static_cast<double>(num_iters_);
}
json LinearLrScheduler::state() const {
  return counter_state("linear", iter_);
}
void LinearLrScheduler::load_state(const json& s) {
  iter_ = read_counter("LinearLrScheduler::load_state", "linear", s);
}
LinearLrScheduler LinearLrSchedulerConfig::init() const {
  return LinearLrScheduler(initial_lr, final_lr, num_iters);
}

// ---- step -----------------------------------------------------------------------------------

StepLrScheduler::StepLrScheduler(double initial_lr, std::int64_t step_size, double gamma)
    : initial_(initial_lr), step_size_(step_size), gamma_(gamma) {
  check_rate("StepLrScheduler", "initial_lr", initial_lr);
  check_count("StepLrScheduler", "step_size", step_size, 1);
  if (!std::isfinite(gamma) || gamma <= 0.0) {
    fail<ValueError>("StepLrScheduler", "gamma must be finite and > 0, got ", gamma);
  }
}
double StepLrScheduler::step() {
  const std::int64_t k = iter_++;
  return initial_ * std::pow(gamma_, static_cast<double>(k / step_size_));
}
json StepLrScheduler::state() const {
  return counter_state("step", iter_);
}
void StepLrScheduler::load_state(const json& s) {
  iter_ = read_counter("StepLrScheduler::load_state", "step", s);
}
StepLrScheduler StepLrSchedulerConfig::init() const {
  return StepLrScheduler(initial_lr, step_size, gamma);
}

// ---- exponential ----------------------------------------------------------------------------

ExponentialLrScheduler::ExponentialLrScheduler(double initial_lr, double gamma)
    : initial_(initial_lr), gamma_(gamma) {
  check_rate("ExponentialLrScheduler", "initial_lr", initial_lr);
  if (!(gamma > 0.0 && gamma <= 1.0)) {
    fail<ValueError>("ExponentialLrScheduler", "gamma must be in (0, 1], got ", gamma);
  }
}
double ExponentialLrScheduler::step() {
  const std::int64_t k = iter_++;
  return initial_ * std::pow(gamma_, static_cast<double>(k));
}
json ExponentialLrScheduler::state() const {
  return counter_state("exponential", iter_);
}
void ExponentialLrScheduler::load_state(const json& s) {
  iter_ = read_counter("ExponentialLrScheduler::load_state", "exponential", s);
}
ExponentialLrScheduler ExponentialLrSchedulerConfig::init() const {
  return ExponentialLrScheduler(initial_lr, gamma);
}

// ---- cosine ---------------------------------------------------------------------------------

CosineAnnealingLrScheduler::CosineAnnealingLrScheduler(double initial_lr, double min_lr,
                                                       std::int64_t num_iters,
                                                       std::int64_t warmup_iters,
                                                       double warmup_initial_lr)
    : initial_(initial_lr),
      min_(min_lr),
      num_iters_(num_iters),
      warmup_iters_(warmup_iters),
      warmup_initial_(warmup_initial_lr) {
  const char* op = "CosineAnnealingLrScheduler";
  check_rate(op, "initial_lr", initial_lr);
  check_rate(op, "min_lr", min_lr);
  if (min_lr > initial_lr) {
    fail<ValueError>(op, "min_lr must be <= initial_lr, got min_lr ", min_lr, " and initial_lr ",
                     initial_lr);
  }
  check_count(op, "num_iters", num_iters, 1);
  check_count(op, "warmup_iters", warmup_iters, 0);
  check_rate(op, "warmup_initial_lr", warmup_initial_lr);
}
double CosineAnnealingLrScheduler::step() {
  const std::int64_t k = iter_++;
  if (k < warmup_iters_) {
    return warmup_initial_ + (initial_ - warmup_initial_) * static_cast<double>(k) /
                                 static_cast<double>(warmup_iters_);
  }
  // Past num_iters the cosine goes on (back up to initial_lr at 2 num_iters), as torch.
  const std::int64_t j = k - warmup_iters_;
  const double c =
      std::cos(std::numbers::pi * static_cast<double>(j) / static_cast<double>(num_iters_));
  return min_ + 0.5 * (initial_ - min_) * (1.0 + c);
}
json CosineAnnealingLrScheduler::state() const {
  return counter_state("cosine", iter_);
}
void CosineAnnealingLrScheduler::load_state(const json& s) {
  iter_ = read_counter("CosineAnnealingLrScheduler::load_state", "cosine", s);
}
CosineAnnealingLrScheduler CosineAnnealingLrSchedulerConfig::init() const {
  return CosineAnnealingLrScheduler(initial_lr, min_lr, num_iters, warmup_iters, warmup_initial_lr);
}

// ---- cosine with warm restarts --------------------------------------------------------------

CosineAnnealingWarmRestartsLrScheduler::CosineAnnealingWarmRestartsLrScheduler(double initial_lr,
                                                                               std::int64_t t_0,
                                                                               std::int64_t t_mult,
                                                                               double min_lr)
    : initial_(initial_lr), min_(min_lr), t_0_(t_0), t_mult_(t_mult) {
  const char* op = "CosineAnnealingWarmRestartsLrScheduler";
  check_rate(op, "initial_lr", initial_lr);
  check_rate(op, "min_lr", min_lr);
  if (min_lr > initial_lr) {
    fail<ValueError>(op, "min_lr must be <= initial_lr, got min_lr ", min_lr, " and initial_lr ",
                     initial_lr);
  }
  check_count(op, "t_0", t_0, 1);
  check_count(op, "t_mult", t_mult, 1);
}
double CosineAnnealingWarmRestartsLrScheduler::step() {
  // The position t_cur in the current cycle and its length t_i, from the counter: cycles of
  // t_0, t_0 t_mult, t_0 t_mult^2, ... (logarithmically many when t_mult > 1).
  __int128 t_cur = iter_++;
  __int128 t_i = t_0_;
  if (t_mult_ == 1) {
    t_cur %= t_i;
  } else {
    while (t_cur >= t_i) {
      t_cur -= t_i;
      t_i *= t_mult_;
    }
  }
  const double c =
      std::cos(std::numbers::pi * static_cast<double>(t_cur) / static_cast<double>(t_i));
  return min_ + 0.5 * (initial_ - min_) * (1.0 + c);
}
json CosineAnnealingWarmRestartsLrScheduler::state() const {
  return counter_state("cosine_restarts", iter_);
}
void CosineAnnealingWarmRestartsLrScheduler::load_state(const json& s) {
  iter_ = read_counter("CosineAnnealingWarmRestartsLrScheduler::load_state", "cosine_restarts", s);
}
CosineAnnealingWarmRestartsLrScheduler CosineAnnealingWarmRestartsLrSchedulerConfig::init() const {
  return CosineAnnealingWarmRestartsLrScheduler(initial_lr, t_0, t_mult, min_lr);
}

// ---- noam -----------------------------------------------------------------------------------

NoamLrScheduler::NoamLrScheduler(double init_lr, std::int64_t warmup_steps, std::int64_t model_size)
    : init_lr_(init_lr), warmup_steps_(warmup_steps), model_size_(model_size) {
  check_rate("NoamLrScheduler", "init_lr", init_lr);
  check_count("NoamLrScheduler", "warmup_steps", warmup_steps, 1);
  check_count("NoamLrScheduler", "model_size", model_size, 1);
}
double NoamLrScheduler::step() {
  const double s = static_cast<double>(++iter_);
  const double a = std::pow(s, -0.5);
  const double b = s * std::pow(static_cast<double>(warmup_steps_), -1.5);
  return init_lr_ * std::pow(static_cast<double>(model_size_), -0.5) * std::min(a, b);
}
json NoamLrScheduler::state() const {
  return counter_state("noam", iter_);
}
void NoamLrScheduler::load_state(const json& s) {
  iter_ = read_counter("NoamLrScheduler::load_state", "noam", s);
}
NoamLrScheduler NoamLrSchedulerConfig::init() const {
  return NoamLrScheduler(init_lr, warmup_steps, model_size);
}

// ---- type-erased ---------------------------------------------------------------------------

json LrScheduler::state() const {
  json out;
  impl_->state(out);
  return out;
}
void LrScheduler::load_state(const json& state) {
  impl_->load_state(state);
}

// ---- composed -------------------------------------------------------------------------------

ComposedLrScheduler::ComposedLrScheduler(std::vector<LrScheduler> schedulers,
                                         SchedReduceType reduction)
    : schedulers_(std::move(schedulers)), reduction_(reduction) {
  if (schedulers_.empty()) fail<ValueError>("ComposedLrScheduler", "no schedulers given");
}
double ComposedLrScheduler::step() {
  double acc = reduction_ == SchedReduceType::Prod ? 1.0 : 0.0;
  for (auto& s : schedulers_) {
    const double r = s.step();
    acc = reduction_ == SchedReduceType::Prod ? acc * r : acc + r;
  }
  return acc;
}
json ComposedLrScheduler::state() const {
  json children = json::array();
  for (const auto& s : schedulers_) children.push_back(s.state());
  return json{{"type", "composed"}, {"schedulers", children}};
}
void ComposedLrScheduler::load_state(const json& s) {
  const char* op = "ComposedLrScheduler::load_state";
  if (!s.is_object() || s.value("type", "") != "composed" || !s.contains("schedulers") ||
      !s.at("schedulers").is_array()) {
    fail<ValueError>(op, "state is not of a 'composed' scheduler: ", s.dump());
  }
  load_children(op, schedulers_, s.at("schedulers"));
}

// ---- sequential -----------------------------------------------------------------------------

SequentialLrScheduler::SequentialLrScheduler(std::vector<LrScheduler> schedulers,
                                             std::vector<std::int64_t> milestones)
    : schedulers_(std::move(schedulers)), milestones_(std::move(milestones)) {
  const char* op = "SequentialLrScheduler";
  if (schedulers_.empty()) fail<ValueError>(op, "no schedulers given");
  if (milestones_.size() + 1 != schedulers_.size()) {
    fail<ValueError>(op, "expected ", schedulers_.size() - 1, " milestones for ",
                     schedulers_.size(), " schedulers, got ", milestones_.size());
  }
  for (std::size_t i = 0; i < milestones_.size(); ++i) {
    const std::int64_t prev = i == 0 ? 0 : milestones_[i - 1];
    if (milestones_[i] <= prev) {
      fail<ValueError>(op, "milestones must be positive and strictly increasing, got ",
                       milestones_[i], " at position ", i, " after ", prev);
    }
  }
}
double SequentialLrScheduler::step() {
  const std::int64_t t = iter_++;
  const auto idx = static_cast<std::size_t>(
      std::upper_bound(milestones_.begin(), milestones_.end(), t) - milestones_.begin());
  return schedulers_[idx].step();
}
json SequentialLrScheduler::state() const {
  json children = json::array();
  for (const auto& s : schedulers_) children.push_back(s.state());
  return json{{"type", "sequential"}, {"iteration", iter_}, {"schedulers", children}};
}
void SequentialLrScheduler::load_state(const json& s) {
  const char* op = "SequentialLrScheduler::load_state";
  const std::int64_t iter = read_counter(op, "sequential", s);
  if (!s.contains("schedulers") || !s.at("schedulers").is_array()) {
    fail<ValueError>(op, "state has no 'schedulers' array: ", s.dump());
  }
  load_children(op, schedulers_, s.at("schedulers"));
  iter_ = iter;
}

// ---- configs --------------------------------------------------------------------------------

struct LrSchedulerConfig::Holder {
  std::variant<ConstantLrSchedulerConfig, LinearLrSchedulerConfig, StepLrSchedulerConfig,
               ExponentialLrSchedulerConfig, CosineAnnealingLrSchedulerConfig,
               CosineAnnealingWarmRestartsLrSchedulerConfig, NoamLrSchedulerConfig,
               ComposedLrSchedulerConfig, SequentialLrSchedulerConfig>
      v;
};

LrSchedulerConfig::LrSchedulerConfig(ConstantLrSchedulerConfig c)
    : impl_(std::make_shared<Holder>(Holder{std::move(c)})) {}
LrSchedulerConfig::LrSchedulerConfig(LinearLrSchedulerConfig c)
    : impl_(std::make_shared<Holder>(Holder{std::move(c)})) {}
LrSchedulerConfig::LrSchedulerConfig(StepLrSchedulerConfig c)
    : impl_(std::make_shared<Holder>(Holder{std::move(c)})) {}
LrSchedulerConfig::LrSchedulerConfig(ExponentialLrSchedulerConfig c)
    : impl_(std::make_shared<Holder>(Holder{std::move(c)})) {}
LrSchedulerConfig::LrSchedulerConfig(CosineAnnealingLrSchedulerConfig c)
    : impl_(std::make_shared<Holder>(Holder{std::move(c)})) {}
LrSchedulerConfig::LrSchedulerConfig(CosineAnnealingWarmRestartsLrSchedulerConfig c)
    : impl_(std::make_shared<Holder>(Holder{std::move(c)})) {}
LrSchedulerConfig::LrSchedulerConfig(NoamLrSchedulerConfig c)
    : impl_(std::make_shared<Holder>(Holder{std::move(c)})) {}
LrSchedulerConfig::LrSchedulerConfig(ComposedLrSchedulerConfig c)
    : impl_(std::make_shared<Holder>(Holder{std::move(c)})) {}
LrSchedulerConfig::LrSchedulerConfig(SequentialLrSchedulerConfig c)
    : impl_(std::make_shared<Holder>(Holder{std::move(c)})) {}

LrScheduler LrSchedulerConfig::init() const {
  return std::visit([](const auto& c) { return LrScheduler(c.init()); }, impl_->v);
}

namespace {

template <class T>
constexpr const char* type_tag() {
  if constexpr (std::is_same_v<T, ConstantLrSchedulerConfig>) return "constant";
  if constexpr (std::is_same_v<T, LinearLrSchedulerConfig>) return "linear";
  if constexpr (std::is_same_v<T, StepLrSchedulerConfig>) return "step";
  if constexpr (std::is_same_v<T, ExponentialLrSchedulerConfig>) return "exponential";
  if constexpr (std::is_same_v<T, CosineAnnealingLrSchedulerConfig>) return "cosine";
  if constexpr (std::is_same_v<T, CosineAnnealingWarmRestartsLrSchedulerConfig>)
    return "cosine_restarts";
  if constexpr (std::is_same_v<T, NoamLrSchedulerConfig>) return "noam";
  if constexpr (std::is_same_v<T, ComposedLrSchedulerConfig>) return "composed";
  if constexpr (std::is_same_v<T, SequentialLrSchedulerConfig>) return "sequential";
}

template <class T>
LrSchedulerConfig parse_as(const json& j) {
  T c;
  json body = j;  // the config's own fields: the tag is not one of them
  body.erase("type");
  from_json(body, c);
  return LrSchedulerConfig(std::move(c));
}

std::vector<LrSchedulerConfig> parse_children(const char* op, const json& j) {
  std::vector<LrSchedulerConfig> out;
  if (!j.contains("schedulers")) return out;
  if (!j.at("schedulers").is_array()) fail<ValueError>(op, "'schedulers' must be an array");
  for (const auto& c : j.at("schedulers")) out.push_back(LrSchedulerConfig::from_json(c));
  return out;
}

}  // namespace

std::string LrSchedulerConfig::type() const {
  return std::visit(
      [](const auto& c) -> std::string { return type_tag<std::remove_cvref_t<decltype(c)>>(); },
      impl_->v);
}

json LrSchedulerConfig::to_json() const {
  return std::visit(
      [](const auto& c) {
        json j = c;
        j["type"] = type_tag<std::remove_cvref_t<decltype(c)>>();
        return j;
      },
      impl_->v);
}

LrSchedulerConfig LrSchedulerConfig::from_json(const json& j) {
  const char* op = "LrSchedulerConfig";
  if (!j.is_object() || !j.contains("type") || !j.at("type").is_string()) {
    fail<ValueError>(op, "expected an object with a string 'type', got ", j.dump());
  }
  const std::string t = j.at("type").get<std::string>();
  if (t == "constant") return parse_as<ConstantLrSchedulerConfig>(j);
  if (t == "linear") return parse_as<LinearLrSchedulerConfig>(j);
  if (t == "step") return parse_as<StepLrSchedulerConfig>(j);
  if (t == "exponential") return parse_as<ExponentialLrSchedulerConfig>(j);
  if (t == "cosine") return parse_as<CosineAnnealingLrSchedulerConfig>(j);
  if (t == "cosine_restarts") return parse_as<CosineAnnealingWarmRestartsLrSchedulerConfig>(j);
  if (t == "noam") return parse_as<NoamLrSchedulerConfig>(j);
  if (t == "composed") return parse_as<ComposedLrSchedulerConfig>(j);
  if (t == "sequential") return parse_as<SequentialLrSchedulerConfig>(j);
  fail<ValueError>(
      op, "unknown scheduler type '", t,
      "' (expected constant, linear, step, exponential, cosine, cosine_restarts, noam, "
      "composed or "
      "sequential)");
}

ComposedLrScheduler ComposedLrSchedulerConfig::init() const {
  std::vector<LrScheduler> s;
  for (const auto& c : schedulers) s.push_back(c.init());
  return ComposedLrScheduler(std::move(s), reduction);
}

SequentialLrScheduler SequentialLrSchedulerConfig::init() const {
  std::vector<LrScheduler> s;
  for (const auto& c : schedulers) s.push_back(c.init());
  return SequentialLrScheduler(std::move(s), milestones);
}

// ---- JSON -----------------------------------------------------------------------------------

void to_json(json& j, const ComposedLrSchedulerConfig& c) {
  json children = json::array();
  for (const auto& s : c.schedulers) children.push_back(s.to_json());
  j = json{{"schedulers", children},
           {"reduction", c.reduction == SchedReduceType::Prod ? "prod" : "sum"}};
}
void from_json(const json& j, ComposedLrSchedulerConfig& c) {
  const char* op = "ComposedLrSchedulerConfig";
  nn::detail::check_config_object(j, op);
  c.schedulers = parse_children(op, j);
  std::string r = c.reduction == SchedReduceType::Prod ? "prod" : "sum";
  nn::detail::read_config_field(j, op, "reduction", r);
  if (r == "prod") {
    c.reduction = SchedReduceType::Prod;
  } else if (r == "sum") {
    c.reduction = SchedReduceType::Sum;
  } else {
    fail<ValueError>(op, "reduction must be \"sum\" or \"prod\", got \"", r, "\"");
  }
}
void to_json(json& j, const SequentialLrSchedulerConfig& c) {
  json children = json::array();
  for (const auto& s : c.schedulers) children.push_back(s.to_json());
  j = json{{"schedulers", children}, {"milestones", c.milestones}};
}
void from_json(const json& j, SequentialLrSchedulerConfig& c) {
  const char* op = "SequentialLrSchedulerConfig";
  nn::detail::check_config_object(j, op);
  c.schedulers = parse_children(op, j);
  nn::detail::read_config_field(j, op, "milestones", c.milestones);
}

}  // namespace ember::optim

ember::optim::LrSchedulerConfig
nlohmann::adl_serializer<ember::optim::LrSchedulerConfig>::from_json(const nlohmann::json& j) {
  return ember::optim::LrSchedulerConfig::from_json(j);
}
void nlohmann::adl_serializer<ember::optim::LrSchedulerConfig>::to_json(
    nlohmann::json& j, const ember::optim::LrSchedulerConfig& c) {
  j = c.to_json();
}
