// The optimizer machinery shared by Sgd, Adam, AdamW, RmsProp and AdaGrad (Burn's
// OptimizerAdaptor): gradient clipping, parameter groups, per-parameter state, the step over
// a module, and state save/restore.
//
//   auto optim = optim::AdamConfig{.weight_decay = optim::WeightDecayConfig{1e-4}}.init();
//   auto gp = optim::GradientsParams::from_grads(loss.backward(), model);
//   optim.step(1e-3, model, gp);          // updates `model` in place
//   auto record = optim.state_dict(model); // {"fc1.weight.exp_avg": ..., ...} + JSON
//
// step() updates the module IN PLACE (Burn's step consumes the module and returns the new
// one; here each Param is set() to its new value, which re-tracks it on autodiff devices).
// The update rules run on the inner backend, on the parameters flattened to rank 1, in the
// parameter's dtype; the per-parameter state (moments, step counter) is keyed by ParamId, so
// it follows the parameters through copies of the module.
#pragma once

#include <algorithm>
#include <any>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ember/core/data.hpp"
#include "ember/optim/config.hpp"
#include "ember/optim/gradients.hpp"
#include "ember/optim/record.hpp"
#include "ember/tensor/ops/value_check.hpp"

namespace ember::optim {

/// The state of one parameter: its step counter and named rank-1 tensors on the inner
/// backend (std::any holding Tensor<Inner, 1>).
struct ParamState {
  std::int64_t step = 0;
  std::map<std::string, std::any> tensors;

  /// The tensor `name`, or nullptr when absent. Throws ValueError when it is held for
  /// another backend (the model moved to another backend since the state was made).
  template <class T>
  const T* find(const std::string& name) const {
    const auto it = tensors.find(name);
    if (it == tensors.end()) return nullptr;
    const T* t = std::any_cast<T>(&it->second);
    if (t == nullptr) {
      ember::detail::fail<ValueError>("optimizer state", "'", name,
                                      "' is held for another backend than the parameter's; "
                                      "call reset_state() after moving a model to another "
                                      "backend");
    }
    return t;
  }
  /// The tensor `name`, created with `make()` when absent.
  template <class T, class F>
  T get_or(const std::string& name, F&& make) const {
    const T* t = find<T>(name);
    return t != nullptr ? *t : make();
  }
  template <class T>
  void set(const std::string& name, T value) {
    tensors.insert_or_assign(name, std::any(std::move(value)));
  }
};

namespace detail {

/// The options an update rule sees for one parameter (after parameter groups).
struct StepOptions {
  double lr;
  double weight_decay;
};

/// torch's lerp_(end, weight) of `self`, with the same two-sided formula (exact at both
/// ends): weight < 0.5 ? self + weight * (end - self) : end - (end - self) * (1 - weight).
template <class T>
T lerp(const T& self, const T& end, double weight) {
  T diff = end.sub(self);
  if (weight < 0.5) return self.add(std::move(diff).mul_scalar(weight));
  return end.sub(std::move(diff).mul_scalar(1.0 - weight));
}

/// Throws ValueError unless lo <= v (or lo < v when `open`) and v is finite.
void check_min(const char* op, const char* name, double v, double lo, bool open = false);
/// Throws ValueError unless 0 <= v < 1.
void check_unit(const char* op, const char* name, double v);
/// Validates and compiles parameter groups (ValueError naming the bad group).
std::vector<std::regex> compile_groups(const char* op, const std::vector<ParamGroupConfig>& g);

}  // namespace detail

/// CRTP base of the optimizers. Derived provides:
///   static constexpr const char* kName;                 // "adam", ...
///   const Config& config() const; void set_config(Config);  (validates)
///   double weight_decay() const;                        // the default group's penalty
///   std::vector<std::string> required_state() const;    // names a stepped parameter holds
///   template <class T> T update(const T& p, T g, ParamState&, const StepOptions&) const;
/// where Config has `gradient_clipping` and `param_groups` and JSON functions.
template <class Derived>
class Optimizer {
 public:
  /// One optimization step with learning rate `lr` (before parameter groups): every
  /// parameter of `model` that requires grad and has a gradient in `grads` is clipped,
  /// updated by the rule and set() in place. Throws ValueError if lr is negative or not
  /// finite, ShapeError if a gradient's shape differs from its parameter's, ValueError
  /// for a non-finite global norm with error_if_nonfinite; all checks run before any
  /// parameter changes.
  template <class M>
  void step(double lr, M& model, const GradientsParams& grads) {
    if (!std::isfinite(lr) || lr < 0.0) {
      ember::detail::fail<ValueError>(std::string(Derived::kName) + ".step",
                                      "learning rate must be finite and >= 0, got ", lr);
    }
    nn::check_unique_ids(model, std::string(Derived::kName) + ".step");
    const std::any coef = check_and_global_coef(model, grads);
    std::size_t used = 0;
    nn::visit_mut(model, [&](const std::string& path, auto& leaf) {
      if constexpr (detail::is_float_param<decltype(leaf)>()) {
        using T = detail::LeafTensor<decltype(leaf)>;
        using I = detail::Inner<typename T::Backend>;
        if (!leaf.has_value() || !leaf.require_grad()) return;
        auto g = grads.get_flat<I>(leaf.id());
        if (!g) return;
        ++used;
        const T& value = leaf.val();
        const Shape shape = value.shape();
        auto p = detail::to_inner(value).reshape({shape.numel()});
        auto clipped = clip(std::move(*g), coef);
        ParamState& st = state_[leaf.id()];
        ++st.step;
        auto next = self().update(p, std::move(clipped), st, options_for(path, lr));
        leaf.set(detail::from_inner<typename T::Backend, T::rank>(
            next.template reshape<T::rank>(shape), value));
      }
    });
    if (used == 0 && grads.size() > 0) {
      ember::detail::fail<ValueError>(std::string(Derived::kName) + ".step", "none of the ",
                                      grads.size(),
                                      " gradients belongs to a parameter of this model (were "
                                      "they taken from another model?)");
    }
  }

  /// The state of every parameter of `model` that has state, keyed by path (see
  /// OptimizerRecord), with the config.
  template <class M>
  OptimizerRecord state_dict(const M& model) const {
    OptimizerRecord rec;
    nlohmann::json params = nlohmann::json::object();
    nn::visit(model, [&](const std::string& path, const auto& leaf) {
      if constexpr (detail::is_float_param<decltype(leaf)>()) {
        using T = detail::LeafTensor<decltype(leaf)>;
        using I = detail::Inner<typename T::Backend>;
        const auto it = state_.find(leaf.id());
        if (it == state_.end() || !leaf.has_value()) return;
        const Shape shape = leaf.val().shape();
        nlohmann::json names = nlohmann::json::array();
        for (const auto& entry : it->second.tensors) {
          const std::string& name = entry.first;
          const auto& t = *it->second.template find<Tensor<I, 1>>(name);
          rec.tensors.emplace(path + "." + name, t.template reshape<T::rank>(shape).into_data());
          names.push_back(name);
        }
        params[path] = nlohmann::json{{"step", it->second.step}, {"state", names}};
      }
    });
    rec.meta = nlohmann::json{
        {"optimizer", Derived::kName}, {"config", self().config()}, {"params", params}};
    return rec;
  }

  /// Restores state_dict() output onto the parameters of `model` (matched by path) and the
  /// config it holds (as torch's load_state_dict restores the param groups). Parameters of
  /// `model` absent from the record start without state. Throws ValueError if the record is
  /// of another optimizer, names a parameter `model` does not have, lacks a tensor its JSON
  /// lists or the config requires, or holds tensors nothing refers to; ShapeError if a
  /// tensor's shape differs from its parameter's. Nothing changes when it throws.
  template <class M>
  void load_state_dict(const M& model, const OptimizerRecord& rec) {
    const std::string op = std::string(Derived::kName) + ".load_state_dict";
    const nlohmann::json& meta = rec.meta;
    if (!meta.is_object() || meta.value("optimizer", std::string()) != Derived::kName) {
      ember::detail::fail<ValueError>(
          op, "record is not of a '", Derived::kName, "' optimizer (optimizer: ",
          meta.is_object() && meta.contains("optimizer") ? meta.at("optimizer").dump()
                                                         : std::string("none"),
          ")");
    }
    if (!meta.contains("config") || !meta.contains("params") || !meta.at("params").is_object()) {
      ember::detail::fail<ValueError>(op, "record has no 'config' or 'params'");
    }
    Derived next_cfg = self();
    next_cfg.set_config(read_config<typename Derived::Config>(op, meta.at("config")));
    const std::vector<std::string> required = next_cfg.required_state();

    std::unordered_map<nn::ParamId, ParamState> next;
    std::map<std::string, bool> seen;  // path -> found in the model
    for (const auto& [path, _] : meta.at("params").items()) seen[path] = false;
    std::set<std::string> used;
    nn::visit(model, [&](const std::string& path, const auto& leaf) {
      if constexpr (detail::is_float_param<decltype(leaf)>()) {
        using T = detail::LeafTensor<decltype(leaf)>;
        using I = detail::Inner<typename T::Backend>;
        const auto pit = meta.at("params").find(path);
        if (pit == meta.at("params").end() || !leaf.has_value()) return;
        seen[path] = true;
        const nlohmann::json& pj = *pit;
        if (!pj.is_object() || !pj.contains("step") || !pj.at("step").is_number_integer() ||
            pj.at("step").template get<std::int64_t>() < 0 || !pj.contains("state") ||
            !pj.at("state").is_array()) {
          ember::detail::fail<ValueError>(op, "malformed state of '", path, "': ", pj.dump());
        }
        ParamState st;
        st.step = pj.at("step").template get<std::int64_t>();
        const T& value = leaf.val();
        const Shape shape = value.shape();
        const auto device = detail::to_inner(value).device();
        std::vector<std::string> names;
        for (const auto& n : pj.at("state")) {
          if (!n.is_string())
            ember::detail::fail<ValueError>(op, "malformed state of '", path, "'");
          names.push_back(n.template get<std::string>());
        }
        if (st.step > 0) {
          for (const auto& r : required) {
            if (std::find(names.begin(), names.end(), r) == names.end()) names.push_back(r);
          }
        }
        for (const auto& name : names) {
          const std::string key = path + "." + name;
          const auto tit = rec.tensors.find(key);
          if (tit == rec.tensors.end()) {
            ember::detail::fail<ValueError>(op, "missing state tensor '", key, "'");
          }
          if (!(tit->second.shape() == shape)) {
            ember::detail::fail<ShapeError>(op, "state tensor '", key, "' has shape ",
                                            tit->second.shape(), ", parameter '", path,
                                            "' has shape ", shape);
          }
          const TensorData& d = tit->second;
          const TensorData conv = d.dtype() == value.dtype() ? d : d.convert(value.dtype());
          st.set(name, Tensor<I, T::rank>::from_data(conv, device).reshape({shape.numel()}));
          used.insert(key);
        }
        next.emplace(leaf.id(), std::move(st));
      }
    });
    for (const auto& [path, found] : seen) {
      if (!found) {
        ember::detail::fail<ValueError>(op, "record has state for '", path,
                                        "', which is not a parameter of the model");
      }
    }
    for (const auto& [key, d] : rec.tensors) {
      if (used.count(key) == 0) {
        ember::detail::fail<ValueError>(op, "unexpected state tensor '", key,
                                        "' (not listed in the record's JSON)");
      }
    }
    self_mut() = std::move(next_cfg);
    state_ = std::move(next);
  }

  /// Writes state_dict(model) to a safetensors file (see save_record). Throws IoError.
  template <class M>
  void save(const std::filesystem::path& path, const M& model) const {
    save_record(state_dict(model), path);
  }
  /// load_state_dict(model, load_record(path)): IoError for a bad file, then as
  /// load_state_dict.
  template <class M>
  void load(const std::filesystem::path& path, const M& model) {
    load_state_dict(model, load_record(path));
  }

  /// The state of parameter `id` (nullptr before its first step).
  const ParamState* state(nn::ParamId id) const {
    const auto it = state_.find(id);
    return it == state_.end() ? nullptr : &it->second;
  }
  /// Forgets every parameter's state (the next step starts afresh).
  void reset_state() { state_.clear(); }

 protected:
  /// Called by Derived::set_config with the config's clipping and groups (validates them).
  void set_common(const std::optional<GradientClippingConfig>& clipping,
                  const std::vector<ParamGroupConfig>& groups) {
    if (clipping) clipping->validate();
    group_regex_ = detail::compile_groups(Derived::kName, groups);
    clipping_ = clipping;
    groups_ = groups;
  }

 private:
  const Derived& self() const { return static_cast<const Derived&>(*this); }
  Derived& self_mut() { return static_cast<Derived&>(*this); }

  template <class C>
  static C read_config(const std::string& op, const nlohmann::json& j) {
    C c;
    from_json(j, c);
    return c;
  }

  detail::StepOptions options_for(const std::string& path, double lr) const {
    for (std::size_t i = 0; i < groups_.size(); ++i) {
      if (std::regex_match(path, group_regex_[i])) {
        const ParamGroupConfig& g = groups_[i];
        return {g.lr ? *g.lr : lr * g.lr_scale,
                g.weight_decay ? *g.weight_decay : self().weight_decay()};
      }
    }
    return {lr, self().weight_decay()};
  }

  /// Checks every gradient's shape against its parameter and, for global-norm clipping,
  /// returns the scale factor min(1, max_norm / (total + 1e-6)) as a [1] tensor of the
  /// gradients' backend (in a std::any; empty without global-norm clipping or gradients).
  /// Everything stays on the device: no value is read back (ember/backend/core.hpp), except
  /// for error_if_nonfinite on a host device.
  template <class M>
  std::any check_and_global_coef(const M& model, const GradientsParams& grads) const {
    const bool global = clipping_ && clipping_->kind == GradientClippingConfig::Kind::GlobalNorm;
    const double p = global ? clipping_->norm_type : 2.0;
    std::any coef;
    std::function<void(std::any&)> finish;
    nn::visit(model, [&](const std::string& path, const auto& leaf) {
      if constexpr (detail::is_float_param<decltype(leaf)>()) {
        using T = detail::LeafTensor<decltype(leaf)>;
        using I = detail::Inner<typename T::Backend>;
        if (!leaf.has_value() || !leaf.require_grad() || !grads.contains(leaf.id())) return;
        const Shape shape = leaf.val().shape();
        if (!(*grads.shape(leaf.id()) == shape)) {
          ember::detail::fail<ShapeError>(std::string(Derived::kName) + ".step", "gradient of '",
                                          path, "' has shape ", *grads.shape(leaf.id()),
                                          ", the parameter has shape ", shape);
        }
        if (!global) return;
        const auto g = *grads.get_flat<I>(leaf.id());
        if (g.numel() == 0) return;
        // The running total: max |g| for p = inf, else sum |g|^p, in the first gradient's
        // dtype.
        auto part = norm_pow(g, p);
        if (!coef.has_value()) {
          coef = part;
          // The gradients' type is known here: the step that turns the total into the scale.
          finish = [this, p](std::any& c) {
            auto& total = std::any_cast<Tensor<I, 1>&>(c);
            const Tensor<I, 1> n = (std::isinf(p) || p == 1.0) ? total
                                   : p == 2.0                  ? total.sqrt()
                                                               : total.powf_scalar(1.0 / p);
            if (clipping_->error_if_nonfinite) {
              const std::string op = std::string(Derived::kName) + ".step";
              ember::detail::check_values(
                  op.c_str(), n, [](const Tensor<I, 1>& x) { return x.is_finite().bool_not(); },
                  [&](double v, std::size_t) {
                    ember::detail::fail<ValueError>(op, "the total ", p,
                                                    "-norm of the gradients is ", v,
                                                    " (error_if_nonfinite)");
                  });
            }
            total = scale_for(n);
          };
        } else {
          auto& total = std::any_cast<Tensor<I, 1>&>(coef);
          part = part.cast(total.dtype());
          total = std::isinf(p) ? total.max_pair(part) : total.add(part);
        }
      }
    });
    if (finish) finish(coef);
    return coef;
  }

  /// The [1] tensor max |g| (p = inf), or sum |g|^p.
  template <class T>
  static T norm_pow(const T& g, double p) {
    if (std::isinf(p)) return g.abs().max();
    if (p == 2.0) return g.square().sum();
    if (p == 1.0) return g.abs().sum();
    return g.abs().powf_scalar(p).sum();
  }
  /// ||g||_p as a [1] tensor.
  template <class T>
  static T norm(const T& g, double p) {
    const T s = norm_pow(g, p);
    if (std::isinf(p) || p == 1.0) return s;
    return p == 2.0 ? s.sqrt() : s.powf_scalar(1.0 / p);
  }
  /// min(1, max_norm / (n + 1e-6)) for the norm n (a [1] tensor); as torch, a NaN norm makes
  /// the scale NaN (clamp keeps NaN) and an infinite one makes it 0.
  template <class T>
  T scale_for(const T& n) const {
    return n.add_scalar(1e-6).recip().mul_scalar(clipping_->threshold).clamp_max(1.0);
  }
  template <class T>
  T clip(T g, const std::any& global_coef) const {
    if (!clipping_) return g;
    switch (clipping_->kind) {
      case GradientClippingConfig::Kind::Value:
        return std::move(g).clamp(-clipping_->threshold, clipping_->threshold);
      case GradientClippingConfig::Kind::Norm: {
        if (g.numel() == 0) return g;
        const T c = scale_for(norm(g, 2.0));
        return std::move(g).mul(c.cast(g.dtype()));
      }
      case GradientClippingConfig::Kind::GlobalNorm:
        if (!global_coef.has_value()) return g;
        return std::move(g).mul(std::any_cast<const T&>(global_coef).cast(g.dtype()));
    }
    return g;
  }

  std::optional<GradientClippingConfig> clipping_;
  std::vector<ParamGroupConfig> groups_;
  std::vector<std::regex> group_regex_;
  std::unordered_map<nn::ParamId, ParamState> state_;
};

}  // namespace ember::optim
