// Configs (Burn's #[derive(Config)]): plain structs with defaults, built with designated
// initializers, saved and loaded as JSON.
//
//   struct LinearConfig { std::int64_t d_input = 0, d_output = 0; bool bias = true; ... };
//   EMBER_CONFIG(LinearConfig, d_input, d_output, bias, initializer)   // namespace scope
//
//   auto cfg = nn::LinearConfig{.d_input = 784, .d_output = 10, .bias = false};
//   nn::save_config(cfg, "linear.json");
//   auto again = nn::load_config<nn::LinearConfig>("linear.json");
//
// Keys missing from the JSON keep their defaults; a value of the wrong type throws.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "ember/module/macros.hpp"
#include "ember/tensor/error.hpp"

/// std::optional fields of configs: null (or an absent key) is nullopt.
template <class T>
struct nlohmann::adl_serializer<std::optional<T>> {
  static void to_json(json& j, const std::optional<T>& v) {
    if (v)
      j = *v;
    else
      j = nullptr;
  }
  static void from_json(const json& j, std::optional<T>& v) {
    if (j.is_null())
      v.reset();
    else
      v = j.get<T>();
  }
};

namespace ember::nn {

namespace detail {
/// Writes `text` to `path` atomically (temp file in the same folder, then rename).
/// Throws IoError.
void write_text_atomic(const std::filesystem::path& path, const std::string& text);
/// The whole file. Throws IoError "[<op>] '<path>' is a directory" or "[<op>] '<path>':
/// cannot open: <reason>" (or "read failed: <reason>").
std::string read_text(const std::filesystem::path& path, std::string_view op);
/// Parses JSON text; throws IoError naming `what` when it is not valid JSON.
nlohmann::json parse_json(const std::string& text, const std::string& what);
}  // namespace detail

namespace detail {
/// Sets `field` from j[key] when the key is present (missing keys keep the default). Throws
/// ValueError "[<type>] field '<key>': ..." when the value does not convert.
template <class T>
void read_config_field(const nlohmann::json& j, const char* type, const char* key, T& field) {
  const auto it = j.find(key);
  if (it == j.end()) return;
  try {
    it->get_to(field);
  } catch (const nlohmann::json::exception& e) {
    ember::detail::fail<ValueError>(type, "field '", key, "': ", e.what());
  }
}
/// Throws ValueError "[<type>] expected a JSON object" unless j is an object.
inline void check_config_object(const nlohmann::json& j, const char* type) {
  if (!j.is_object())
    ember::detail::fail<ValueError>(type, "expected a JSON object, got ", j.dump());
}
}  // namespace detail

/// The config as JSON.
template <class C>
nlohmann::json config_to_json(const C& config) {
  return nlohmann::json(config);
}
/// A config from JSON (missing keys keep defaults). Throws ValueError naming the type
/// problem.
template <class C>
C config_from_json(const nlohmann::json& j) {
  try {
    return j.get<C>();
  } catch (const nlohmann::json::exception& e) {
    ember::detail::fail<ValueError>("load_config", "invalid config: ", e.what());
  }
}
/// Writes the config as indented JSON, atomically. Throws IoError.
template <class C>
void save_config(const C& config, const std::filesystem::path& path) {
  detail::write_text_atomic(path, config_to_json(config).dump(2) + "\n");
}
/// Reads a config written by save_config. Throws IoError (missing file, not JSON) or
/// ValueError (a field of the wrong type).
template <class C>
C load_config(const std::filesystem::path& path) {
  return config_from_json<C>(
      detail::parse_json(detail::read_text(path, "load_config"), "'" + path.string() + "'"));
}

}  // namespace ember::nn

#define EMBER_CONFIG_TO_JSON_(field) j_[#field] = c_.field;
#define EMBER_CONFIG_FROM_JSON_(field) \
  ::ember::nn::detail::read_config_field(j_, type_, #field, c_.field);

/// JSON (de)serialisation of a config struct: list its fields (namespace scope, after the
/// struct). Fields missing from the JSON keep the struct's defaults; a field of the wrong type
/// throws ValueError "[Type] field 'name': ...". std::optional fields are null when empty.
#define EMBER_CONFIG(Type, ...)                               \
  inline void to_json(nlohmann::json& j_, const Type& c_) {   \
    j_ = nlohmann::json::object();                            \
    EMBER_PP_FOR_EACH(EMBER_CONFIG_TO_JSON_, __VA_ARGS__)     \
  }                                                           \
  inline void from_json(const nlohmann::json& j_, Type& c_) { \
    [[maybe_unused]] constexpr const char* type_ = #Type;     \
    ::ember::nn::detail::check_config_object(j_, type_);      \
    EMBER_PP_FOR_EACH(EMBER_CONFIG_FROM_JSON_, __VA_ARGS__)   \
  }
