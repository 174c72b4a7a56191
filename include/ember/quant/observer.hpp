// Calibration observers (torch.ao.quantization's observers): they watch the float tensors
// that will be quantized (a layer's activations over a few batches of a data loader) and
// give the scheme's scales and zero points from what they saw.
//
//   quant::Observer<B> obs(QuantScheme::int8().affine(), {.kind = quant::ObserverKind::MinMax});
//   for (auto& batch : calibration) obs.observe(model.features(batch.images));
//   QTensor<B, 4> q = obs.quantize(x);        // x's scales and zero points are the observer's
//
// Each observer keeps, per group of the scheme (ember/core/quant.hpp: one group per tensor,
// per index of the channel dim, or per block), a low and a high value:
//   MinMax         the smallest and largest value seen (torch's MinMaxObserver)
//   MovingAverage  the first batch's min and max, then lo += c (min(batch) - lo), the same for
//                  hi, c = averaging_constant (torch's MovingAverageMinMaxObserver, c = 0.01)
//   Percentile     per batch the `percentile`-th and (100 - percentile)-th percentile of the
//                  group's values (the element at rank floor((n - 1) p / 100) of the sorted
//                  group), averaged over batches (TensorRT's percentile calibration, on
//                  sorted values instead of a histogram): outliers do not stretch the scale
// and turns them into scales and zero points with the MinMax rule of QuantScheme (the range
// always contains 0).
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "ember/core/quant.hpp"
#include "ember/nn/quantized_weight.hpp"
#include "ember/tensor/quant_composite.hpp"
#include "ember/tensor/tensor.hpp"

namespace ember::quant {

/// How an observer turns batches into a range (see the header comment).
enum class ObserverKind { MinMax, MovingAverage, Percentile };

/// Settings of an Observer. ValueError from the Observer for a constant outside (0, 1] or a
/// percentile outside [50, 100].
struct ObserverConfig {
  ObserverKind kind = ObserverKind::MinMax;
  /// MovingAverage: weight of each new batch.
  double averaging_constant = 0.01;
  /// Percentile: the upper percentile kept, in percent (99.99, not 0.9999); the lower one is
  /// 100 - percentile.
  double percentile = 99.99;

  /// ValueError "[Observer] ..." for a constant outside (0, 1] or a percentile outside
  /// [50, 100] (of the kind that uses it).
  void check() const {
    if (kind == ObserverKind::MovingAverage &&
        !(averaging_constant > 0.0 && averaging_constant <= 1.0)) {
      detail::fail<ValueError>("Observer", "averaging_constant must be in (0, 1], got ",
                               averaging_constant);
    }
    if (kind == ObserverKind::Percentile && !(percentile >= 50.0 && percentile <= 100.0)) {
      detail::fail<ValueError>("Observer", "percentile must be in [50, 100], got ", percentile);
    }
  }
};

/// "min-max", "moving-average", "percentile"; ValueError for another name.
ObserverKind parse_observer_kind(const std::string& name);

/// Watches float tensors of one layout (the same group count each batch) and gives the
/// scheme's parameters for them.
template <class B>
class Observer {
 public:
  /// Throws ValueError for bad settings (see ObserverConfig).
  explicit Observer(QuantScheme scheme, ObserverConfig config = {})
      : scheme_(scheme), config_(config) {
    config_.check();
  }

  const QuantScheme& scheme() const { return scheme_; }
  const ObserverConfig& config() const { return config_; }
  /// Batches observed so far.
  std::int64_t batches() const { return batches_; }

  /// Records one batch. Throws as QuantScheme::check (an int tensor, a block size that does
  /// not divide the last dim), ShapeError when its group count differs from earlier batches,
  /// ValueError for NaN (the range would be NaN) or an empty tensor.
  template <std::size_t D>
  void observe(const Tensor<B, D>& x) {
    scheme_.check("observe", x.shape(), x.dtype());
    if (x.numel() == 0) {
      detail::fail<ValueError>("observe", "an empty tensor (shape ", x.shape(), ") has no range");
    }
    const Shape v = detail::quant::group_view(scheme_, x.shape());
    if (batches_ > 0 && v[1] != lo_->numel()) {
      detail::fail<ShapeError>("observe", "a tensor of shape ", x.shape(), " has ", v[1],
                               " groups under ", scheme_.to_string(), ", earlier batches had ",
                               lo_->numel());
    }
    // [G, n_g]: each group's values in one row.
    Tensor<B, 3> t(B::float_reshape(x.primitive(), v));
    if (t.dtype() != DType::F32) t = t.cast(DType::F32);
    if (t.is_nan().any().into_scalar()) {
      detail::fail<ValueError>("observe", "the batch contains NaN (shape ", x.shape(), ")");
    }
    const Tensor<B, 2> rows = t.swap_dims(0, 1).template reshape<2>({v[1], v[0] * v[2]});
    auto [blo, bhi] = [&]() -> std::pair<Tensor<B, 1>, Tensor<B, 1>> {
      if (config_.kind != ObserverKind::Percentile) {
        return {rows.min_dim(1).template reshape<1>({v[1]}),
                rows.max_dim(1).template reshape<1>({v[1]})};
      }
      const Tensor<B, 2> sorted = rows.sort(1);
      const std::int64_t n = v[0] * v[2];
      const auto rank = [&](double p) {
        return static_cast<std::int64_t>(std::floor(static_cast<double>(n - 1) * p / 100.0));
      };
      return {sorted.narrow(1, rank(100.0 - config_.percentile), 1).template reshape<1>({v[1]}),
              sorted.narrow(1, rank(config_.percentile), 1).template reshape<1>({v[1]})};
    }();
    if (batches_ == 0) {
      lo_ = blo;
      hi_ = bhi;
    } else if (config_.kind == ObserverKind::MinMax) {
      lo_ = lo_->min_pair(blo);
      hi_ = hi_->max_pair(bhi);
    } else if (config_.kind == ObserverKind::MovingAverage) {
      lo_ = *lo_ + (blo - *lo_).mul_scalar(config_.averaging_constant);
      hi_ = *hi_ + (bhi - *hi_).mul_scalar(config_.averaging_constant);
    } else {  // Percentile: the running mean of the batches' percentiles
      const double k = static_cast<double>(batches_);
      lo_ = (lo_->mul_scalar(k) + blo).div_scalar(k + 1.0);
      hi_ = (hi_->mul_scalar(k) + bhi).div_scalar(k + 1.0);
    }
    ++batches_;
  }

  /// The range per group so far: (lo [G], hi [G]) f32. ValueError before any batch.
  std::pair<Tensor<B, 1>, Tensor<B, 1>> range() const {
    require_batches("range");
    return {*lo_, *hi_};
  }

  /// Scales (and zero points for an affine scheme) of shape scheme.params_shape(shape) for a
  /// tensor of `shape`, from the observed range by QuantScheme's MinMax rule. Throws
  /// ValueError before any batch or when a scale is infinite, ShapeError when `shape` has
  /// another group count than the observed tensors.
  template <std::size_t D>
  std::pair<Tensor<B, D>, std::optional<Tensor<B, D, Int>>> params(const Shape& shape) const {
    require_batches("params");
    scheme_.check("params", shape, DType::F32);
    const Shape ps = scheme_.params_shape(shape);
    if (ps.numel() != lo_->numel()) {
      detail::fail<ShapeError>("params", "a tensor of shape ", shape, " has ", ps.numel(),
                               " groups under ", scheme_.to_string(), ", the observer saw ",
                               lo_->numel());
    }
    // Each group's (lo, hi) as a row of [G, 2]; its parameters are the range's.
    const auto g = lo_->numel();
    const Tensor<B, 2> ends =
        Tensor<B, 2>::cat({lo_->template reshape<2>({g, 1}), hi_->template reshape<2>({g, 1})}, 1);
    QuantScheme rows = scheme_;
    if (scheme_.level == QuantLevel::Block) {
      rows = rows.per_block(2);
    } else {
      rows = rows.per_channel(0);
      rows.param = QuantParam::F32;
    }
    auto [s, z] = detail::quant::quant_params<B>(ends.primitive(), rows);
    Tensor<B, D> scales(B::float_reshape(std::move(s), ps));
    std::optional<Tensor<B, D, Int>> zp;
    if (scheme_.mode == QuantMode::Affine) zp = Tensor<B, D, Int>(B::int_reshape(std::move(z), ps));
    return {std::move(scales), std::move(zp)};
  }

  /// x quantized with the observed parameters (values outside the range clamp): as
  /// ember::quantize(x, scheme, scales, zero_points), and the errors of params().
  template <std::size_t D>
  QTensor<B, D> quantize(const Tensor<B, D>& x) const {
    auto [s, z] = params<D>(x.shape());
    return ember::quantize(x, scheme_, s, z);
  }

 private:
  void require_batches(const char* op) const {
    if (batches_ == 0) {
      detail::fail<ValueError>(op, "the observer has seen no batch yet; call observe() first");
    }
  }

  QuantScheme scheme_;
  ObserverConfig config_;
  std::int64_t batches_ = 0;
  std::optional<Tensor<B, 1>> lo_, hi_;
};

/// The observer of static quantization's calibration (ember::quant::prepare puts one on each
/// chosen layer's input): one range over the whole tensor, kept on the host by the rules of
/// Observer (same kinds and settings), turned into the u8 ActivationQuant of the input.
class ActivationObserver final : public nn::InputObserver {
 public:
  /// Throws ValueError for bad settings (see ObserverConfig).
  explicit ActivationObserver(ObserverConfig config = {});

  /// Records one batch (any float dtype). DTypeError for an int or bool tensor, ValueError
  /// for an empty one or NaN.
  void observe(const TensorData& x) override;
  std::int64_t batches() const { return batches_; }
  /// The range so far (lo, hi); ValueError before any batch.
  std::pair<float, float> range() const;
  /// ActivationQuant::from_range(range()).
  ActivationQuant quant() const;

 private:
  ObserverConfig config_;
  std::int64_t batches_ = 0;
  float lo_ = 0.0f, hi_ = 0.0f;
};

inline ObserverKind parse_observer_kind(const std::string& name) {
  if (name == "min-max") return ObserverKind::MinMax;
  if (name == "moving-average") return ObserverKind::MovingAverage;
  if (name == "percentile") return ObserverKind::Percentile;
  detail::fail<ValueError>("observer", "unknown observer '", name,
                           "' (known: min-max, moving-average, percentile)");
}

}  // namespace ember::quant
