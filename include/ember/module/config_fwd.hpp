// Configs (Burn's #[derive(Config)]): plain structs with defaults, built with designated
// initializers, saved and loaded as JSON.
//
// This header needs only <nlohmann/json_fwd.hpp>: the headers that define configs (ember/nn,
// ember/optim) include it. Every function here that touches a JSON value is a template over
// the JSON type, so the full <nlohmann/json.hpp> is needed only in a source file that
// converts a config; include "ember/module/config.hpp" (this header plus the full JSON)
// there.
//
//   struct LinearConfig { std::int64_t d_input = 0, d_output = 0; bool bias = true; ... };
//   EMBER_CONFIG(LinearConfig, d_input, d_output, bias, initializer)   // namespace scope
//
//   auto cfg = nn::LinearConfig{.d_input = 784, .d_output = 10, .bias = false};
//   nn::save_config(cfg, "linear.json");
//   auto again = nn::load_config<nn::LinearConfig>("linear.json");
//
// Keys missing from the JSON keep their defaults; an unknown key, or a value of the wrong
// type, out of range or with the wrong number of elements, throws ValueError. Enums are
// written by name (EMBER_CONFIG_ENUM), and an unknown name throws.
#pragma once

#include <array>
#include <concepts>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "ember/core/error.hpp"
#include "ember/module/macros.hpp"

/// std::optional fields of configs: null (or an absent key) is nullopt.
template <class T>
struct nlohmann::adl_serializer<std::optional<T>> {
  template <class Json>
  static void to_json(Json& j, const std::optional<T>& v) {
    if (v)
      j = *v;
    else
      j = nullptr;
  }
  template <class Json>
  static void from_json(const Json& j, std::optional<T>& v) {
    if (j.is_null())
      v.reset();
    else
      v = j.template get<T>();
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
/// Throws ValueError "[<type>] expected a JSON object" unless j is an object.
void check_config_object(const nlohmann::json& j, const char* type);
/// Throws ValueError "[<type>] unknown field 'x' (fields: a, b)" for a key of `j` that is not
/// one of `fields` (a misspelt key would otherwise be ignored silently).
void check_config_keys(const nlohmann::json& j, const char* type,
                       std::span<const char* const> fields);

/// True when the full <nlohmann/json.hpp> is included (Json is complete).
template <class Json>
concept complete_json = requires {
  sizeof(Json);
};
}  // namespace detail

namespace detail {

template <class T>
constexpr bool is_std_array = false;
template <class T, std::size_t N>
constexpr bool is_std_array<std::array<T, N>> = true;
// Vectors and optionals whose elements read_config_value can build (default-constructible).
template <class T>
constexpr bool is_element_vector = false;
template <class T, class A>
constexpr bool is_element_vector<std::vector<T, A>> = std::is_default_constructible_v<T>;
template <class T>
constexpr bool is_element_optional = false;
template <class T>
constexpr bool is_element_optional<std::optional<T>> = std::is_default_constructible_v<T>;

/// Converts the JSON value of a config field into `out`, strictly: integers need a JSON
/// integer within the type's range (no 64.7, no 1e30), floating-point values a number, bool
/// true or false, std::array exactly N elements and std::vector an array (each element read
/// the same way), std::optional null or a value; any other type goes through its own
/// from_json. Returns "" or what is wrong ("expected an integer, got 64.7"); `out` is left
/// as it was when the value is refused.
template <class Json, class T>
std::string read_config_value(const Json& j, T& out) {
  if constexpr (std::is_same_v<T, bool>) {
    if (!j.is_boolean()) return "expected true or false, got " + j.dump();
    out = j.template get<bool>();
  } else if constexpr (std::is_integral_v<T>) {
    if (!j.is_number_integer()) return "expected an integer, got " + j.dump();
    const bool fits = j.is_number_unsigned() ? std::in_range<T>(j.template get<std::uint64_t>())
                                             : std::in_range<T>(j.template get<std::int64_t>());
    if (!fits) {
      return "the integer " + j.dump() + " is out of range [" +
             std::to_string(std::numeric_limits<T>::min()) + ", " +
             std::to_string(std::numeric_limits<T>::max()) + "]";
    }
    out = j.is_number_unsigned() ? static_cast<T>(j.template get<std::uint64_t>())
                                 : static_cast<T>(j.template get<std::int64_t>());
  } else if constexpr (std::is_floating_point_v<T>) {
    if (!j.is_number()) return "expected a number, got " + j.dump();
    out = j.template get<T>();
  } else if constexpr (is_std_array<T>) {
    if (!j.is_array() || j.size() != std::tuple_size_v<T>) {
      return "expected an array of " + std::to_string(std::tuple_size_v<T>) + " elements, got " +
             j.dump();
    }
    T v = out;
    for (std::size_t i = 0; i < v.size(); ++i) {
      std::string e = read_config_value(j[i], v[i]);
      if (!e.empty()) return "element " + std::to_string(i) + ": " + e;
    }
    out = std::move(v);
  } else if constexpr (is_element_vector<T>) {
    if (!j.is_array()) return "expected an array, got " + j.dump();
    T v;
    v.reserve(j.size());
    for (std::size_t i = 0; i < j.size(); ++i) {
      typename T::value_type x{};
      std::string e = read_config_value(j[i], x);
      if (!e.empty()) return "element " + std::to_string(i) + ": " + e;
      v.push_back(std::move(x));
    }
    out = std::move(v);
  } else if constexpr (is_element_optional<T>) {
    if (j.is_null()) {
      out.reset();
    } else {
      typename T::value_type x{};
      std::string e = read_config_value(j, x);
      if (!e.empty()) return e;
      out = std::move(x);
    }
  } else {
    try {
      T v = j.template get<T>();
      out = std::move(v);
    } catch (const typename Json::exception& e) {
      return e.what();
    } catch (const ValueError& e) {
      return e.what();  // a nested config or enum: "[Type] ..."
    }
  }
  return "";
}

/// Sets `field` from j[key] when the key is present (missing keys keep the default). Throws
/// ValueError "[<type>] field '<key>': ..." when the value does not convert (see
/// read_config_value).
template <class Json, class T>
void read_config_field(const Json& j, const char* type, const char* key, T& field) {
  const auto it = j.find(key);
  if (it == j.end()) return;
  const std::string e = read_config_value(*it, field);
  if (!e.empty()) ember::detail::fail<ValueError>(type, "field '", key, "': ", e);
}
/// JSON of an enum value by name (EMBER_CONFIG_ENUM). Throws ValueError for a value without
/// a name (a cast out of the enum's range).
template <class Json, class E>
void enum_to_json(Json& j, E v, const char* type,
                  std::span<const std::pair<E, const char*>> names) {
  for (const auto& [value, name] : names) {
    if (value == v) {
      j = name;
      return;
    }
  }
  ember::detail::fail<ValueError>(
      type, "no name for the value ",
      static_cast<long long>(static_cast<std::underlying_type_t<E>>(v)));
}
/// An enum value from its name. Throws ValueError "[<type>] unknown value 'GELU' (expected
/// one of: relu, gelu)"; names are case-sensitive.
template <class Json, class E>
void enum_from_json(const Json& j, E& v, const char* type,
                    std::span<const std::pair<E, const char*>> names) {
  if (j.is_string()) {
    const auto& s = j.template get_ref<const std::string&>();
    for (const auto& [value, name] : names) {
      if (s == name) {
        v = value;
        return;
      }
    }
  }
  std::string list;
  for (const auto& [value, name] : names) list += (list.empty() ? "" : ", ") + std::string(name);
  ember::detail::fail<ValueError>(
      type, "unknown value ", j.is_string() ? "'" + j.template get<std::string>() + "'" : j.dump(),
      " (expected one of: ", list, ")");
}

}  // namespace detail

// The four functions below need the full JSON where they are called (ember/module/config.hpp).
#define EMBER_CONFIG_NEEDS_JSON_(Json)                              \
  static_assert(::ember::nn::detail::complete_json<Json>,           \
                "converting a config needs the full JSON: include " \
                "\"ember/module/config.hpp\" (or <nlohmann/json.hpp>)")

/// The config as JSON.
template <class C, class Json = nlohmann::json>
Json config_to_json(const C& config) {
  EMBER_CONFIG_NEEDS_JSON_(Json);
  return Json(config);
}
/// A config from JSON (missing keys keep defaults). Throws ValueError naming the type
/// problem.
template <class C, class Json = nlohmann::json>
C config_from_json(const Json& j) {
  EMBER_CONFIG_NEEDS_JSON_(Json);
  try {
    return j.template get<C>();
  } catch (const typename Json::exception& e) {
    ember::detail::fail<ValueError>("load_config", "invalid config: ", e.what());
  }
}
/// Writes the config as indented JSON, atomically. Throws IoError.
template <class C, class Json = nlohmann::json>
void save_config(const C& config, const std::filesystem::path& path) {
  EMBER_CONFIG_NEEDS_JSON_(Json);
  detail::write_text_atomic(path, config_to_json<C, Json>(config).dump(2) + "\n");
}
/// Reads a config written by save_config. Throws IoError (missing file, not JSON) or
/// ValueError (a field of the wrong type).
template <class C, class Json = nlohmann::json>
C load_config(const std::filesystem::path& path) {
  EMBER_CONFIG_NEEDS_JSON_(Json);
  const Json j =
      detail::parse_json(detail::read_text(path, "load_config"), "'" + path.string() + "'");
  return config_from_json<C, Json>(j);
}

}  // namespace ember::nn

#define EMBER_CONFIG_TO_JSON_(field) j_[#field] = c_.field;
#define EMBER_CONFIG_FROM_JSON_(field) \
  ::ember::nn::detail::read_config_field(j_, type_, #field, c_.field);
#define EMBER_CONFIG_NAME_(field) #field,

/// JSON (de)serialisation of a config struct: list its fields (namespace scope, after the
/// struct). Fields missing from the JSON keep the struct's defaults; an unknown key throws
/// ValueError "[Type] unknown field 'name' (fields: ...)", a value that does not convert
/// "[Type] field 'name': ..." (see detail::read_config_value). std::optional fields are null
/// when empty. The functions are templates over the JSON type (nlohmann's ADL hooks), so a
/// header may use the macro with only <nlohmann/json_fwd.hpp>; they are compiled where a
/// config is converted.
#define EMBER_CONFIG(Type, ...)                                                    \
  template <class Json_>                                                           \
  requires std::same_as<Json_, ::nlohmann::json>                                   \
  void to_json(Json_& j_, const Type& c_) {                                        \
    j_ = Json_::object();                                                          \
    EMBER_PP_FOR_EACH(EMBER_CONFIG_TO_JSON_, __VA_ARGS__)                          \
  }                                                                                \
  template <class Json_>                                                           \
  requires std::same_as<Json_, ::nlohmann::json>                                   \
  void from_json(const Json_& j_, Type& c_) {                                      \
    [[maybe_unused]] constexpr const char* type_ = #Type;                          \
    static constexpr const char* fields_[] = {                                     \
        EMBER_PP_FOR_EACH(EMBER_CONFIG_NAME_, __VA_ARGS__) nullptr};               \
    ::ember::nn::detail::check_config_object(j_, type_);                           \
    ::ember::nn::detail::check_config_keys(                                        \
        j_, type_, std::span<const char* const>(fields_, std::size(fields_) - 1)); \
    EMBER_PP_FOR_EACH(EMBER_CONFIG_FROM_JSON_, __VA_ARGS__)                        \
  }

/// JSON of an enum by name, strictly (namespace scope, after the enum):
///   EMBER_CONFIG_ENUM(TransformerActivation, {TransformerActivation::Relu, "relu"},
///                     {TransformerActivation::Gelu, "gelu"})
/// An unknown name throws ValueError "[TransformerActivation] unknown value 'GELU' (expected
/// one of: relu, gelu)" (nlohmann's NLOHMANN_JSON_SERIALIZE_ENUM would give the first value).
#define EMBER_CONFIG_ENUM(Type, ...)                                         \
  template <class Json_>                                                     \
  requires std::same_as<Json_, ::nlohmann::json>                             \
  void to_json(Json_& j_, const Type& v_) {                                  \
    static constexpr std::pair<Type, const char*> names_[] = {__VA_ARGS__};  \
    ::ember::nn::detail::enum_to_json<Json_, Type>(j_, v_, #Type, names_);   \
  }                                                                          \
  template <class Json_>                                                     \
  requires std::same_as<Json_, ::nlohmann::json>                             \
  void from_json(const Json_& j_, Type& v_) {                                \
    static constexpr std::pair<Type, const char*> names_[] = {__VA_ARGS__};  \
    ::ember::nn::detail::enum_from_json<Json_, Type>(j_, v_, #Type, names_); \
  }
