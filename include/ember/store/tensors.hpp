// NamedTensors: an ordered list of named host tensors plus string metadata, the common
// currency of ember::store (what readers return and writers take), and key remapping.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ember/core/data.hpp"

namespace ember::store {

/// Named tensors in file order (safetensors header order, or the pickled dict's order for
/// PyTorch files) and the file's string metadata (safetensors `__metadata__`).
struct NamedTensors {
  std::vector<std::pair<std::string, TensorData>> tensors;
  std::map<std::string, std::string> metadata;

  /// The tensor called `name`, or nullptr.
  const TensorData* find(std::string_view name) const;
  /// The names, in order.
  std::vector<std::string> names() const;
  /// The tensors keyed by name (moved out). Throws ValueError naming a duplicated name.
  std::map<std::string, TensorData> into_map() &&;
};

/// Key remapping rules: (regex, replacement) pairs applied in order to every key. Each rule
/// is an ECMAScript std::regex; every match in the key is replaced (std::regex_replace, so
/// the replacement may use $1..$9 and $&). Example: {{"^module\\.", ""}, {"^fc(\\d)",
/// "layers.$1"}} turns "module.fc1.weight" into "layers.1.weight".
using KeyRemap = std::vector<std::pair<std::string, std::string>>;

/// `key` after every rule of `rules`. Throws ValueError naming a pattern that is not a
/// valid regex.
std::string remap_key(std::string_view key, const KeyRemap& rules);

/// Renames every tensor of `tensors` by `rules` (order kept). Throws ValueError for an
/// invalid pattern, for a key that maps to "", or when two keys map to the same name (both
/// original keys named); `tensors` is unchanged on error.
void remap_keys(NamedTensors& tensors, const KeyRemap& rules);

}  // namespace ember::store
