// JSON helpers of the optimizer and scheduler configs (not installed).
#pragma once

#include <nlohmann/json.hpp>
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
