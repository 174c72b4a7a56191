// Static quantization's calibration observer on the host (ember/quant/observer.hpp).
#include "ember/quant/observer.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace ember::quant {

ActivationObserver::ActivationObserver(ObserverConfig config) : config_(config) {
  config_.check();
}

void ActivationObserver::observe(const TensorData& x) {
  if (!is_float(x.dtype())) {
    detail::fail<DTypeError>("observe", "a layer input of dtype ", x.dtype(),
                             " cannot be calibrated (float inputs only)");
  }
  std::vector<float> v = x.to_vec<float>();
  if (v.empty()) {
    detail::fail<ValueError>("observe", "an empty tensor (shape ", x.shape(), ") has no range");
  }
  if (std::any_of(v.begin(), v.end(), [](float f) { return std::isnan(f); })) {
    detail::fail<ValueError>("observe", "the batch contains NaN (shape ", x.shape(), ")");
  }
  float blo, bhi;
  if (config_.kind != ObserverKind::Percentile) {
    const auto [mn, mx] = std::minmax_element(v.begin(), v.end());
    blo = *mn;
    bhi = *mx;
  } else {
    // The elements at ranks floor((n - 1) p / 100) of the sorted batch, as Observer.
    const auto n = static_cast<std::int64_t>(v.size());
    const auto rank = [&](double p) {
      return static_cast<std::int64_t>(std::floor(static_cast<double>(n - 1) * p / 100.0));
    };
    const auto at = [&](std::int64_t r) {
      std::nth_element(v.begin(), v.begin() + r, v.end());
      return v[static_cast<std::size_t>(r)];
    };
    blo = at(rank(100.0 - config_.percentile));
    bhi = at(rank(config_.percentile));
  }
  if (batches_ == 0) {
    lo_ = blo;
    hi_ = bhi;
  } else if (config_.kind == ObserverKind::MinMax) {
    lo_ = std::min(lo_, blo);
    hi_ = std::max(hi_, bhi);
  } else if (config_.kind == ObserverKind::MovingAverage) {
    const auto c = static_cast<float>(config_.averaging_constant);
    lo_ = lo_ + (blo - lo_) * c;
    hi_ = hi_ + (bhi - hi_) * c;
  } else {  // Percentile: the running mean of the batches' percentiles
    const auto k = static_cast<float>(batches_);
    lo_ = (lo_ * k + blo) / (k + 1.0f);
    hi_ = (hi_ * k + bhi) / (k + 1.0f);
  }
  ++batches_;
}

std::pair<float, float> ActivationObserver::range() const {
  if (batches_ == 0) {
    detail::fail<ValueError>("calibrate",
                             "the observer has seen no batch: run the prepared model on "
                             "calibration data first");
  }
  return {lo_, hi_};
}

ActivationQuant ActivationObserver::quant() const {
  const auto [lo, hi] = range();
  return ActivationQuant::from_range(lo, hi);
}

}  // namespace ember::quant
