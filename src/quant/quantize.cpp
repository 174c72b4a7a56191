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
  if (s.level == QuantLevel::Block) n += "-block" + std::to_string(s.block_size);
  if (s.param == QuantParam::F16) n += "-f16";
  return n;
}

std::map<std::string, QuantScheme> saved_schemes(const std::filesystem::path& path) {
  const store::WeightsReader file(path);
  std::map<std::string, QuantScheme> out;
  const auto& meta = file.metadata();
  const auto it = meta.find(kQuantMetadataKey);
  if (it == meta.end()) return out;
  const nlohmann::json j = nlohmann::json::parse(it->second, nullptr, false);
  if (!j.is_object()) {
    ember::detail::fail<ValueError>("quant::load", "the metadata '", kQuantMetadataKey, "' of ",
                                    path.string(), " is not a JSON object");
  }
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

}  // namespace ember::quant
