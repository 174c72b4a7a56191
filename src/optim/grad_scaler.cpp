// GradScaler's settings and the update of the loss scale (ember/optim/grad_scaler.hpp).
#include "ember/optim/grad_scaler.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "ember/core/error.hpp"

namespace ember::optim {

namespace {
/// S scales an f32 loss: it must be an f32 normal number, or the product under- or overflows.
bool in_f32_range(double s) {
  return s >= static_cast<double>(std::numeric_limits<float>::min()) &&
         s <= static_cast<double>(std::numeric_limits<float>::max());
}
}  // namespace

GradScaler GradScalerConfig::init() const {
  return GradScaler(*this);
}

GradScaler::GradScaler(const GradScalerConfig& config)
    : config_(config), scale_(config.init_scale) {
  const char* op = "GradScaler";
  if (!in_f32_range(config.init_scale)) {
    ember::detail::fail<ValueError>(op, "init_scale must be in f32's normal range [2^-126, ",
                                    std::numeric_limits<float>::max(), "], got ",
                                    config.init_scale);
  }
  if (!std::isfinite(config.growth_factor) || config.growth_factor <= 1.0) {
    ember::detail::fail<ValueError>(op, "growth_factor must be finite and > 1, got ",
                                    config.growth_factor);
  }
  if (!(config.backoff_factor > 0.0 && config.backoff_factor < 1.0)) {
    ember::detail::fail<ValueError>(op, "backoff_factor must be in (0, 1), got ",
                                    config.backoff_factor);
  }
  if (config.growth_interval == 0) {
    ember::detail::fail<ValueError>(op, "growth_interval must be >= 1, got 0");
  }
}

void GradScaler::update(bool finite) {
  if (!finite) {
    // Never down to 0 (the loss would vanish and every later step look finite).
    scale_ = std::max(scale_ * config_.backoff_factor,
                      static_cast<double>(std::numeric_limits<float>::min()));
    tracker_ = 0;
    ++skipped_;
    return;
  }
  if (++tracker_ >= config_.growth_interval) {
    // Growth past f32's range keeps S (torch does the same).
    if (in_f32_range(scale_ * config_.growth_factor)) scale_ *= config_.growth_factor;
    tracker_ = 0;
  }
}

nlohmann::json GradScaler::state() const {
  return {{"scale", scale_}, {"growth_tracker", tracker_}, {"skipped_steps", skipped_}};
}

void GradScaler::load_state(const nlohmann::json& state) {
  const char* op = "GradScaler.load_state";
  if (!state.is_object()) ember::detail::fail<ValueError>(op, "expected a JSON object");
  for (const char* key : {"scale", "growth_tracker", "skipped_steps"}) {
    if (!state.contains(key)) ember::detail::fail<ValueError>(op, "missing field '", key, "'");
  }
  if (!state["scale"].is_number()) ember::detail::fail<ValueError>(op, "'scale' is not a number");
  const double s = state["scale"].get<double>();
  if (!in_f32_range(s)) {
    ember::detail::fail<ValueError>(
        op, "'scale' must be finite and > 0 (an f32 normal number), got ", s);
  }
  for (const char* key : {"growth_tracker", "skipped_steps"}) {
    const nlohmann::json& v = state[key];
    // Parsed text holds 0 as unsigned, JSON built in code as signed: both are fine.
    if (!v.is_number_integer() || (!v.is_number_unsigned() && v.get<std::int64_t>() < 0)) {
      ember::detail::fail<ValueError>(op, "'", key, "' is not a whole number >= 0");
    }
  }
  scale_ = s;
  tracker_ = state["growth_tracker"].get<std::size_t>();
  skipped_ = state["skipped_steps"].get<std::size_t>();
}

}  // namespace ember::optim
