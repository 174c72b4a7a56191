// Post-training quantization: the schemes in a file's metadata (ember/quant/quantize.hpp).
#include "ember/quant/quantize.hpp"

#include <nlohmann/json.hpp>

#include "ember/store/weights.hpp"

namespace ember::quant {

std::string scheme_name(const QuantScheme& s) {
  std::string n = s.value == QuantValue::Int8 ? "int8" : "int4";
  if (s.mode == QuantMode::Affine) n += "-affine";
  if (s.level == QuantLevel::Channel) {
    if (s.axis < 0) {
      ember::detail::fail<ValueError>("scheme_name", "channel axis ", s.axis,
                                      " is negative: normalise it first (", s.to_string(), ")");
    }
    n += "-per-channel" + std::to_string(s.axis);
  }
  if (s.level == QuantLevel::Block) {
    n += "-block" + std::to_string(s.block_size);
    if (s.param == QuantParam::F32) n += "-f32";  // blocks default to f16 scales
  } else if (s.param == QuantParam::F16) {
    n += "-f16";
  }
  return n;
}

namespace {
/// The JSON object under metadata `key` of the safetensors file at `path` (an empty object
/// when the key is absent). IoError for an unreadable file, ValueError when it is not an
/// object.
nlohmann::json metadata_object(const std::filesystem::path& path, const char* key) {
  const store::WeightsReader file(path);
  const auto& meta = file.metadata();
  const auto it = meta.find(key);
  if (it == meta.end()) return nlohmann::json::object();
  nlohmann::json j = nlohmann::json::parse(it->second, nullptr, false);
  if (!j.is_object()) {
    ember::detail::fail<ValueError>("quant::load", "the metadata '", key, "' of ", path.string(),
                                    " is not a JSON object");
  }
  return j;
}
}  // namespace

std::map<std::string, QuantScheme> saved_schemes(const std::filesystem::path& path) {
  std::map<std::string, QuantScheme> out;
  const nlohmann::json j = metadata_object(path, kQuantMetadataKey);
  for (const auto& [layer, name] : j.items()) {
    try {
      if (!name.is_string()) throw ValueError("not a scheme name");
      out.emplace(layer, parse_quant_scheme(name.get<std::string>()));
    } catch (const ValueError& e) {
      ember::detail::fail<ValueError>("quant::load", "the scheme of layer '", layer, "' (",
                                      name.dump(), ") in ", path.string(),
                                      " is malformed: ", e.what());
    }
  }
  return out;
}

std::map<std::string, ActivationQuant> saved_inputs(const std::filesystem::path& path) {
  std::map<std::string, ActivationQuant> out;
  const nlohmann::json j = metadata_object(path, kQuantInputsMetadataKey);
  for (const auto& [layer, v] : j.items()) {
    const auto bad = [&](const std::string& why) {
      ember::detail::fail<ValueError>("quant::load", "the input parameters of layer '", layer,
                                      "' (", v.dump(), ") in ", path.string(),
                                      " are malformed: ", why);
    };
    if (!v.is_object() || !v.contains("scale") || !v.contains("zero_point") ||
        !v["scale"].is_number() || !v["zero_point"].is_number_integer()) {
      bad("expected {\"scale\": number, \"zero_point\": integer}");
    }
    const auto zp = v["zero_point"].get<std::int64_t>();
    if (zp < 0 || zp > 255) bad("the zero point must be in [0, 255] (u8)");
    const ActivationQuant a{static_cast<float>(v["scale"].get<double>()),
                            static_cast<std::int32_t>(zp)};
    try {
      a.check("quant::load");
    } catch (const ValueError& e) {
      bad(e.what());
    }
    out.emplace(layer, a);
  }
  return out;
}

}  // namespace ember::quant
