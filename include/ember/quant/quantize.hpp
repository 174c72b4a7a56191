// Post-training quantization of a module (torch.ao.quantization's quantize_dynamic and
// prepare / convert, Burn's Module::quantize_weights):
//
//   auto report = quant::QuantizeReport{};
//   auto q = quant::quantize(model, {.weights = QuantScheme::int8().per_channel(0)}, &report);
//   quant::save(q, "model-int8.safetensors");              // the scheme goes in the metadata
//   auto back = quant::load(CnnConfig{}.init(), "model-int8.safetensors");   // exactly q
//
//   // Static: the layers' inputs too, with parameters calibrated on a few batches.
//   auto s = quant::quantize(model, {.activations = true},
//                            [&](const Net& m) { for (auto& b : calib) m.forward(b.images); });
//
// Every nn::Linear and nn::Conv1d/2d/3d whose path matches one of `modules` gets its weight
// quantized into `qweight` (see ember/nn/quantized_weight.hpp) and its float Param emptied;
// biases, norms and every other tensor stay float. A layer whose weight does not fit the
// scheme (a block size that does not divide the weight's row) is left float and listed in
// the report. With `activations`, prepare() puts an ActivationObserver on each chosen layer's
// input, the caller runs the model on calibration data, and convert() gives each quantized
// layer the calibrated u8 parameters of its input (`input_quant`): int8 Linears then quantize
// their input by them instead of per row, the other layers fake-quantize it.
#pragma once

#include <concepts>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "ember/core/quant.hpp"
#include "ember/module/module.hpp"
#include "ember/nn/conv.hpp"
#include "ember/nn/linear.hpp"
#include "ember/quant/observer.hpp"

namespace ember::quant {

namespace detail {
/// The default of QuantizeConfig::modules: every layer. (A function because g++ 12 crashes
/// on a braced default member there when the config is designated-initialised inside a
/// template.)
inline std::vector<std::string> every_layer() {
  return {"*"};
}
}  // namespace detail

/// Which layers to quantize and how.
struct QuantizeConfig {
  /// The weights' scheme (per_channel(0) is per output channel).
  QuantScheme weights = QuantScheme::int8().per_channel(0);
  /// Glob patterns of module paths ("fc1", "encoder.*"); a layer is quantized when one
  /// matches. The default matches every layer.
  std::vector<std::string> modules = detail::every_layer();
  /// Layer types to quantize.
  bool linear = true;
  bool conv = true;
  /// Static quantization of the chosen layers' inputs (u8 affine per tensor) with
  /// parameters from calibration: needs quantize(model, config, calibrate) or prepare /
  /// convert.
  bool activations = false;
  /// How calibration takes each input's range.
  ObserverConfig observer = {};
};

/// What quantize() did: the layers quantized, those left float (with the reason), and the
/// bytes of every Param and Buffer before and after.
struct QuantizeReport {
  std::vector<std::string> quantized;
  std::vector<std::pair<std::string, std::string>> skipped;
  std::int64_t bytes_before = 0;
  std::int64_t bytes_after = 0;
};

/// The bytes of a module's Params and Buffers (their dtypes' sizes; int4 values count as
/// the packed bytes they are).
template <class M>
std::int64_t state_bytes(const M& m) {
  std::int64_t n = 0;
  nn::visit(m, [&](const std::string&, const auto& leaf) {
    n += leaf.val().numel() * static_cast<std::int64_t>(dtype_size(leaf.val().dtype()));
  });
  return n;
}

namespace detail {
template <class T>
inline constexpr bool is_linear_v = false;
template <class B>
inline constexpr bool is_linear_v<nn::Linear<B>> = true;
template <class T>
inline constexpr bool is_conv_v = false;
template <class B, std::size_t N>
inline constexpr bool is_conv_v<nn::Conv<B, N>> = true;

/// Quantizes one layer's weight in place; "" on success, else why it was left float.
template <class L>
std::string quantize_layer(L& layer, const QuantScheme& scheme) {
  if (!layer.weight.has_value()) return "already quantized";
  try {
    auto q = nn::QuantizedWeight<typename nn::detail::BackendOf<L>::type>::from_float(
        layer.weight.val(), scheme);
    layer.qweight = std::move(q);
  } catch (const ShapeError& e) {
    return e.what();
  }
  layer.weight = {};
  return "";
}

}  // namespace detail

/// The short name of a scheme that parse_quant_scheme reads back: "int8",
/// "int8-per-channel0", "int4-affine-block32-f16". ValueError for a negative channel axis
/// (the name has no sign; QuantizedWeight stores its axis normalised).
std::string scheme_name(const QuantScheme& s);

namespace detail {
/// Calls f(path, layer) for each Linear / Conv of `model` that `config` chooses.
template <class M, class F>
void for_chosen_layers(M& model, const QuantizeConfig& config, F&& f) {
  const auto chosen = [&](const std::string& path) {
    for (const auto& p : config.modules)
      if (nn::detail::glob_match(p, path)) return true;
    return false;
  };
  nn::visit_modules(model, [&](const std::string& path, auto& mod) {
    using T = std::remove_cvref_t<decltype(mod)>;
    constexpr bool lin = is_linear_v<T>, conv = is_conv_v<T>;
    if constexpr (lin || conv) {
      if ((lin && !config.linear) || (conv && !config.conv) || !chosen(path)) return;
      f(path, mod);
    }
  });
}
}  // namespace detail

/// A copy of `model` with an ActivationObserver (config.observer's kind) on the input of each
/// chosen layer: run it on calibration data, then convert(). Throws ValueError for bad
/// observer settings.
template <class M>
M prepare(M model, const QuantizeConfig& config) {
  config.observer.check();
  detail::for_chosen_layers(model, config, [&](const std::string&, auto& layer) {
    if (layer.weight.has_value())
      layer.input_observer = std::make_shared<ActivationObserver>(config.observer);
  });
  return model;
}

/// A copy of `model` with the weights of the chosen layers quantized (see the header
/// comment); a layer whose weight does not fit the scheme (or is quantized already) is left
/// as it is and listed in `report` (optional) with the reason. With config.activations, a
/// layer with an observer (prepare) gets its input's parameters from it; observers are
/// removed either way. Throws ValueError when
/// config.activations is set and a chosen layer has no observer or one that saw no batch
/// (calibration did not run).
template <class M>
M convert(M model, const QuantizeConfig& config, QuantizeReport* report = nullptr) {
  QuantizeReport r;
  r.bytes_before = state_bytes(model);
  detail::for_chosen_layers(model, config, [&](const std::string& path, auto& layer) {
    std::optional<ActivationQuant> input;
    if (const auto* obs = dynamic_cast<const ActivationObserver*>(layer.input_observer.get())) {
      if (obs->batches() == 0) {
        ember::detail::fail<ValueError>("quantize", "the observer of layer '", path,
                                        "' saw no batch: the calibration function must run "
                                        "the model it is given");
      }
      input = obs->quant();
    } else if (config.activations && layer.weight.has_value()) {
      ember::detail::fail<ValueError>("quantize", "layer '", path,
                                      "' was not calibrated (static activations need "
                                      "quantize(model, config, calibrate) or prepare first)");
    }
    layer.input_observer.reset();
    const std::string why = detail::quantize_layer(layer, config.weights);
    if (why.empty()) {
      r.quantized.push_back(path);
      if (config.activations) layer.input_quant = input;
    } else {
      r.skipped.emplace_back(path, why);
    }
  });
  r.bytes_after = state_bytes(model);
  if (report) *report = std::move(r);
  return model;
}

/// Weights only (dynamic quantization of the int8 Linears' inputs): convert() without
/// calibration. ValueError when config.activations is set (use the overload below).
template <class M>
M quantize(M model, const QuantizeConfig& config, QuantizeReport* report = nullptr) {
  if (config.activations) {
    ember::detail::fail<ValueError>("quantize",
                                    "static activations need calibration: call "
                                    "quant::quantize(model, config, calibrate, report)");
  }
  return convert(std::move(model), config, report);
}

/// Static quantization: prepare(model), calibrate(prepared) (which runs the prepared model
/// on calibration batches), then convert(). Throws as prepare and convert, and whatever
/// `calibrate` throws.
template <class M, class F>
requires std::invocable<F&, const M&> M quantize(const M& model, const QuantizeConfig& config,
                                                 F&& calibrate, QuantizeReport* report = nullptr) {
  M prepared = prepare(model, config);
  calibrate(std::as_const(prepared));
  return convert(std::move(prepared), config, report);
}

/// The metadata key holding {"<layer path>": "<scheme_name>", ...}.
inline constexpr const char* kQuantMetadataKey = "ember.quantized";
/// The metadata key holding the statically quantized inputs:
/// {"<layer path>": {"scale": s, "zero_point": z}, ...}.
inline constexpr const char* kQuantInputsMetadataKey = "ember.quantized.inputs";

/// Saves a (partly) quantized module as safetensors: the Params and Buffers (quantized
/// weights as "<layer>.qweight.values/.scales/.zero_points") and, in the metadata, each
/// quantized layer's scheme; `metadata` is added. Throws as nn::save.
template <class M>
void save(const M& model, const std::filesystem::path& path,
          std::map<std::string, std::string> metadata = {}) {
  nlohmann::json schemes = nlohmann::json::object(), inputs = nlohmann::json::object();
  nn::visit_modules(model, [&](const std::string& path_, const auto& mod) {
    using T = std::remove_cvref_t<decltype(mod)>;
    if constexpr (detail::is_linear_v<T> || detail::is_conv_v<T>) {
      if (mod.qweight) schemes[path_] = scheme_name(mod.qweight->scheme);
      if (mod.qweight && mod.input_quant) {
        inputs[path_] = {{"scale", static_cast<double>(mod.input_quant->scale)},
                         {"zero_point", mod.input_quant->zero_point}};
      }
    }
  });
  metadata[kQuantMetadataKey] = schemes.dump();
  if (inputs.empty())
    metadata.erase(kQuantInputsMetadataKey);
  else
    metadata[kQuantInputsMetadataKey] = inputs.dump();
  nn::save(model, path, metadata);
}

/// The layers and schemes recorded in a file written by quant::save (empty for a float
/// file). Throws IoError for an unreadable file, ValueError for a malformed record.
std::map<std::string, QuantScheme> saved_schemes(const std::filesystem::path& path);
/// The statically quantized inputs recorded by quant::save (empty when none). Throws
/// IoError for an unreadable file, ValueError for a malformed record or bad parameters.
std::map<std::string, ActivationQuant> saved_inputs(const std::filesystem::path& path);

/// Loads a file written by quant::save into `model` (built float, e.g. from its config):
/// the recorded layers are quantized with their schemes, then every tensor is loaded, so
/// the result equals the saved module exactly. Throws IoError / LoadError as nn::load
/// (`model` unchanged; the LoadError names the quantized layers whose tensors do not fit the
/// recorded scheme), ValueError when a recorded layer is not a Linear or Conv of `model` or
/// a stored scale is zero, negative, NaN or too large or a zero point outside the scheme's
/// integer range (naming the layer and the file).
template <class M>
M load(M model, const std::filesystem::path& path, const nn::LoadOptions& options = {}) {
  const auto schemes = saved_schemes(path);
  const auto inputs = saved_inputs(path);
  for (const auto& [k, a] : inputs) {
    if (!schemes.contains(k)) {
      ember::detail::fail<ValueError>("quant::load", path.string(), " records the input of layer '",
                                      k, "' but not its weights' scheme");
    }
  }
  std::map<std::string, bool> found;
  for (const auto& [k, s] : schemes) found[k] = false;
  nn::visit_modules(model, [&](const std::string& path_, auto& mod) {
    using T = std::remove_cvref_t<decltype(mod)>;
    if constexpr (detail::is_linear_v<T> || detail::is_conv_v<T>) {
      const auto it = schemes.find(path_);
      if (it == schemes.end()) return;
      found[path_] = true;
      const std::string why = detail::quantize_layer(mod, it->second);
      if (!why.empty()) {
        ember::detail::fail<ValueError>("quant::load", "layer '", path_, "' of ", path.string(),
                                        " cannot hold ", it->second.to_string(), ": ", why);
      }
      const auto in = inputs.find(path_);
      mod.input_quant = in == inputs.end() ? std::nullopt : std::optional(in->second);
    }
  });
  for (const auto& [k, ok] : found) {
    if (!ok) {
      ember::detail::fail<ValueError>("quant::load", path.string(), " has a quantized layer '", k,
                                      "' that is not a Linear or Conv of the model");
    }
  }
  try {
    nn::load(model, path, options);
  } catch (const nn::LoadError& e) {
    // Name the quantized layers whose tensors do not fit: the file's metadata may contradict
    // its tensors rather than the model being another one.
    std::string layers;
    const auto about = [&](const std::string& layer) {
      const std::string prefix = layer + ".qweight.";
      for (const auto* keys : {&e.missing, &e.unexpected, &e.mismatched})
        for (const auto& k : *keys)
          if (k.starts_with(prefix)) return true;
      return false;
    };
    for (const auto& [k, s] : schemes)
      if (about(k)) layers += (layers.empty() ? "" : ", ") + k + " (" + scheme_name(s) + ")";
    if (layers.empty()) throw;
    throw nn::LoadError(std::string(e.what()) + "; the quantized tensors of " + layers +
                            " do not fit the scheme " + path.string() +
                            "'s metadata records for them",
                        e.missing, e.unexpected, e.mismatched);
  }
  // The scales and zero points are checked here, naming the layer and the file, not at the
  // first forward.
  nn::visit_modules(model, [&](const std::string& path_, const auto& mod) {
    using T = std::remove_cvref_t<decltype(mod)>;
    if constexpr (detail::is_linear_v<T> || detail::is_conv_v<T>) {
      if (!mod.qweight) return;
      try {
        (void)mod.qweight->checked();
        if (mod.qweight->zero_points) {
          const QuantScheme& s = mod.qweight->scheme;
          const auto z =
              mod.qweight->zero_points->val().into_data().template to_vec<std::int64_t>();
          for (std::size_t i = 0; i < z.size(); ++i) {
            if (z[i] < s.qmin() || z[i] > s.qmax()) {
              ember::detail::fail<ValueError>("quantize", "zero point ", i, " of ", z.size(),
                                              " is ", z[i], "; it must be in [", s.qmin(), ", ",
                                              s.qmax(), "] (", s.to_string(), ")");
            }
          }
        }
      } catch (const Error& e) {
        ember::detail::fail<ValueError>("quant::load", "the quantized weight of layer '", path_,
                                        "' in ", path.string(), " is invalid: ", e.what());
      }
    }
  });
  return model;
}

}  // namespace ember::quant
