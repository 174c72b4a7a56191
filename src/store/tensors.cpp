// NamedTensors helpers and regex key remapping.
#include "ember/store/tensors.hpp"

#include <regex>
#include <unordered_map>

namespace ember::store {

const TensorData* NamedTensors::find(std::string_view name) const {
  for (const auto& [k, v] : tensors) {
    if (k == name) return &v;
  }
  return nullptr;
}

std::vector<std::string> NamedTensors::names() const {
  std::vector<std::string> out;
  out.reserve(tensors.size());
  for (const auto& kv : tensors) out.push_back(kv.first);
  return out;
}

std::map<std::string, TensorData> NamedTensors::into_map() && {
  std::map<std::string, TensorData> out;
  for (auto& [k, v] : tensors) {
    if (!out.emplace(k, std::move(v)).second) {
      detail::fail<ValueError>("NamedTensors", "the name '", k, "' appears twice");
    }
  }
  tensors.clear();
  return out;
}

namespace {

std::vector<std::pair<std::regex, std::string>> compile(const KeyRemap& rules) {
  std::vector<std::pair<std::regex, std::string>> out;
  out.reserve(rules.size());
  for (const auto& [pattern, replacement] : rules) {
    try {
      out.emplace_back(std::regex(pattern, std::regex::ECMAScript), replacement);
    } catch (const std::regex_error& e) {
      detail::fail<ValueError>("remap_keys", "invalid regex '", pattern, "': ", e.what());
    }
  }
  return out;
}

std::string apply_rules(std::string key,
                        const std::vector<std::pair<std::regex, std::string>>& rs) {
  for (const auto& [re, replacement] : rs) key = std::regex_replace(key, re, replacement);
  return key;
}

}  // namespace

std::string remap_key(std::string_view key, const KeyRemap& rules) {
  return apply_rules(std::string(key), compile(rules));
}

void remap_keys(NamedTensors& tensors, const KeyRemap& rules) {
  if (rules.empty()) return;
  const auto compiled = compile(rules);
  std::vector<std::string> renamed;
  renamed.reserve(tensors.tensors.size());
  std::unordered_map<std::string, std::size_t> seen;
  for (std::size_t i = 0; i < tensors.tensors.size(); ++i) {
    const auto& original = tensors.tensors[i].first;
    std::string key = apply_rules(original, compiled);
    if (key.empty()) {
      detail::fail<ValueError>("remap_keys", "the key '", original, "' maps to an empty name");
    }
    auto [it, fresh] = seen.emplace(key, i);
    if (!fresh) {
      detail::fail<ValueError>("remap_keys", "the keys '", tensors.tensors[it->second].first,
                               "' and '", original, "' both map to '", key, "'");
    }
    renamed.push_back(std::move(key));
  }
  for (std::size_t i = 0; i < renamed.size(); ++i) {
    tensors.tensors[i].first = std::move(renamed[i]);
  }
}

}  // namespace ember::store
