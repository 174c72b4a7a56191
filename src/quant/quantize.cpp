// Post-training quantization: the schemes in a file's metadata (ember/quant/quantize.hpp).
#include "ember/quant/quantize.hpp"

#include <nlohmann/json.hpp>

#include "ember/store/weights.hpp"

namespace ember::quant {

namespace detail {

namespace {

const char* value_name(QuantValue v) {
  return v == QuantValue::Int8 ? "int8" : "int4";
}
const char* mode_name(QuantMode m) {
  return m == QuantMode::Symmetric ? "symmetric" : "affine";
}
const char* level_name(QuantLevel l) {
  return l == QuantLevel::Tensor ? "tensor" : l == QuantLevel::Channel ? "channel" : "block";
}

}  // namespace

std::string scheme_to_json(const QuantScheme& s) {
  nlohmann::json j = {{"value", value_name(s.value)},
                      {"mode", mode_name(s.mode)},
                      {"level", level_name(s.level)},
                      {"param", s.param == QuantParam::F16 ? "f16" : "f32"}};
  if (s.level == QuantLevel::Channel) j["axis"] = s.axis;
  if (s.level == QuantLevel::Block) j["block_size"] = s.block_size;
  return j.dump();
}

QuantScheme scheme_from_json(const std::string& text, const std::string& layer) {
  const auto bad = [&](const std::string& why) -> QuantScheme {
    ember::detail::fail<ValueError>("quant::load", "the scheme of layer '", layer, "' (", text,
                                    ") is malformed: ", why);
  };
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object()) return bad("not a JSON object");
  const auto str = [&](const char* key) -> std::string {
    if (!j.contains(key) || !j[key].is_string()) bad(std::string("no string \"") + key + "\"");
    return j[key].get<std::string>();
  };
  const auto integer = [&](const char* key) -> std::int64_t {
    if (!j.contains(key) || !j[key].is_number_integer())
      bad(std::string("no integer \"") + key + "\"");
    return j[key].get<std::int64_t>();
  };
  QuantScheme s;
  const std::string value = str("value"), mode = str("mode"), level = str("level"),
                    param = str("param");
  if (value == "int8")
    s.value = QuantValue::Int8;
  else if (value == "int4")
    s.value = QuantValue::Int4;
  else
    bad("value '" + value + "'");
  if (mode == "symmetric")
    s.mode = QuantMode::Symmetric;
  else if (mode == "affine")
    s.mode = QuantMode::Affine;
  else
    bad("mode '" + mode + "'");
  if (level == "tensor") {
    s.level = QuantLevel::Tensor;
  } else if (level == "channel") {
    s.level = QuantLevel::Channel;
    s.axis = integer("axis");
  } else if (level == "block") {
    s.level = QuantLevel::Block;
    s.block_size = integer("block_size");
    if (s.block_size < 1) bad("block_size < 1");
  } else {
    bad("level '" + level + "'");
  }
  if (param == "f32")
    s.param = QuantParam::F32;
  else if (param == "f16")
    s.param = QuantParam::F16;
  else
    bad("param '" + param + "'");
  return s;
}

}  // namespace detail

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
  for (const auto& [layer, scheme] : j.items()) {
    out.emplace(layer, detail::scheme_from_json(scheme.dump(), layer));
  }
  return out;
}

}  // namespace ember::quant
