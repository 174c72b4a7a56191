// JSON helpers of the optimizer and scheduler configs (not installed).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "ember/tensor/error.hpp"

namespace ember::optim {

/// Sets `field` from j[key] when the key is present (missing keys keep the default); throws
/// ValueError "[op] field 'key': ..." when the value has the wrong JSON type.
template <class T>
void read_field(const char* op, const nlohmann::json& j, const char* key, T& field) {
  if (!j.is_object()) ember::detail::fail<ValueError>(op, "expected a JSON object, got ", j.dump());
  const auto it = j.find(key);
  if (it == j.end()) return;
  try {
    field = it->template get<T>();
  } catch (const nlohmann::json::exception& e) {
    ember::detail::fail<ValueError>(op, "field '", key, "': ", e.what());
  }
}

}  // namespace ember::optim

namespace ember::optim {

/// Sets an optional field from j[key]: a missing key keeps it, null resets it.
template <class T>
void read_optional(const char* op, const nlohmann::json& j, const char* key,
                   std::optional<T>& field) {
  if (!j.is_object()) ember::detail::fail<ValueError>(op, "expected a JSON object, got ", j.dump());
  const auto it = j.find(key);
  if (it == j.end()) return;
  if (it->is_null()) {
    field.reset();
    return;
  }
  T v = field.value_or(T{});
  read_field(op, j, key, v);
  field = std::move(v);
}

/// j[key] = the value, or null.
template <class T>
void write_optional(nlohmann::json& j, const char* key, const std::optional<T>& field) {
  if (field) {
    j[key] = *field;
  } else {
    j[key] = nullptr;
  }
}

}  // namespace ember::optim
