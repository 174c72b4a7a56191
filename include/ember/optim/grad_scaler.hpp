// Dynamic loss scaling for f16 mixed-precision training (torch.amp.GradScaler; Micikevicius
// et al. 2018, "Mixed Precision Training", section 3.2). f16 gradients below 2^-24 flush to
// zero; multiplying the loss by a large factor S before backward keeps them representable,
// and dividing the parameters' gradients by S before the optimizer step undoes it. S adapts:
// a step whose gradients hold inf/NaN (S too large: something overflowed) is skipped and S
// is multiplied by backoff_factor; after growth_interval finite steps in a row S is
// multiplied by growth_factor.
//
//   optim::GradScaler scaler;                      // S = 65536
//   {
//     ember::Autocast amp(DType::F16);
//     loss = cross_entropy(model.forward(x), y);
//   }
//   auto grads = optim::GradientsParams::from_grads(scaler.scale(loss).backward(), model);
//   scaler.step(optim, lr, model, grads);          // unscale, skip on inf/NaN, update S
//
// bf16 has f32's exponent range and needs no scaling (torch does not scale it either).
#pragma once

#include <cmath>
#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "ember/module/module.hpp"
#include "ember/optim/gradients.hpp"
#include "ember/tensor/tensor.hpp"

namespace ember::optim {

class GradScaler;

/// GradScaler's settings (torch.amp.GradScaler's arguments and defaults).
struct GradScalerConfig {
  /// The first loss scale S (2^16); in f32's normal range [2^-126, f32 max].
  double init_scale = 65536.0;
  /// Factor of S after growth_interval finite steps in a row (> 1).
  double growth_factor = 2.0;
  /// Factor of S after a step with inf/NaN gradients (in (0, 1)).
  double backoff_factor = 0.5;
  /// Finite steps in a row before S grows (>= 1).
  std::size_t growth_interval = 2000;
  /// Throws ValueError for a setting outside its range.
  GradScaler init() const;
};

/// Dynamic loss scaling (see the file comment). Not thread-safe.
class GradScaler {
 public:
  /// Throws ValueError as GradScalerConfig::init.
  explicit GradScaler(const GradScalerConfig& config = {});

  /// The current loss scale S (torch's get_scale).
  double get_scale() const { return scale_; }
  /// Finite steps since the last change of S.
  std::size_t growth_tracker() const { return tracker_; }
  /// Steps skipped for inf/NaN gradients since construction (or the loaded state's).
  std::size_t skipped_steps() const { return skipped_; }
  const GradScalerConfig& config() const { return config_; }

  /// loss * S, to call backward() on. Any float tensor (its dtype is kept).
  template <class B, std::size_t D>
  Tensor<B, D> scale(const Tensor<B, D>& loss) const {
    return loss.mul_scalar(scale_);
  }

  /// Divides each gradient in `grads` of a parameter of `model` by S (in place in `grads`)
  /// and says whether all of them are finite (torch's unscale_ with its inf check: one
  /// read of the device for all parameters). Does not change S.
  template <class M>
  bool unscale(const M& model, GradientsParams& grads) const {
    using Back = typename nn::detail::BackendOf<M>::type;
    using I = detail::Inner<Back>;
    const double inv = 1.0 / scale_;
    std::optional<Tensor<I, 1, Bool>> finite;
    nn::visit(model, [&](const std::string&, const auto& leaf) {
      if constexpr (detail::is_float_param<decltype(leaf)>()) {
        auto g = grads.get_flat<I>(leaf.id());
        if (!g) return;
        Tensor<I, 1> u = g->mul_scalar(inv);
        Tensor<I, 1, Bool> ok = u.is_finite().all();
        finite = finite ? finite->bool_and(ok.to_device(finite->device())) : ok;
        grads.insert_flat(leaf.id(), u, *grads.shape(leaf.id()));
      }
    });
    return !finite || finite->into_scalar();
  }

  /// Adapts S after a step: finite false multiplies it by backoff_factor (not below 2^-126;
  /// and counts a skipped step); growth_interval finite steps in a row multiply it by
  /// growth_factor (S stays when that would pass f32's largest value, as torch).
  void update(bool finite);

  /// unscale(), then optim.step(lr, model, grads) when every gradient is finite, then
  /// update(). Returns whether the optimizer stepped. Throws ValueError when `grads` is
  /// empty (nothing was checked, as torch's "No inf checks were recorded"), and what
  /// optim.step throws.
  template <class O, class M>
  bool step(O& optim, double lr, M& model, GradientsParams grads) {
    if (grads.empty()) {
      ember::detail::fail<ValueError>("GradScaler.step",
                                      "no gradients to unscale (did backward run on scale(loss)?)");
    }
    const bool finite = unscale(model, grads);
    if (finite) optim.step(lr, model, grads);
    update(finite);
    return finite;
  }

  /// {"scale", "growth_tracker", "skipped_steps"}: what a checkpoint keeps to resume.
  nlohmann::json state() const;
  /// Restores state(). Throws ValueError naming the field for JSON that is not one
  /// (missing fields, a scale that is not finite and > 0).
  void load_state(const nlohmann::json& state);

 private:
  GradScalerConfig config_;
  double scale_;
  std::size_t tracker_ = 0;
  std::size_t skipped_ = 0;
};

}  // namespace ember::optim
