// Module I/O helpers: glob matching, LoadError messages, reading text and JSON files, the
// checks of config JSON.
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "ember/module/config.hpp"
#include "ember/module/module.hpp"
#include "ember/store/file.hpp"

namespace ember::nn::detail {

bool glob_match(std::string_view pattern, std::string_view text) {
  // Iterative wildcard match with backtracking to the last '*'.
  std::size_t p = 0, t = 0, star = std::string_view::npos, mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
      ++p;
      ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

void throw_load_error(std::vector<std::string> missing, std::vector<std::string> unexpected,
                      std::vector<std::string> mismatched) {
  std::ostringstream os;
  os << "[load_state_dict] the tensors do not fit the module (nothing was changed):";
  auto list = [&](const char* title, const std::vector<std::string>& keys) {
    if (keys.empty()) return;
    os << "\n  " << title << " (" << keys.size() << "):";
    for (const auto& k : keys) os << "\n    " << k;
  };
  list("missing keys", missing);
  list("unexpected keys", unexpected);
  list("mismatched", mismatched);
  // A common prefix on the file's keys ("model.fc.weight" for "fc.weight"): say how to drop it.
  if (!missing.empty() && !unexpected.empty()) {
    const std::string& k = unexpected.front();
    const auto dot = k.find('.');
    if (dot != std::string::npos) {
      const std::string prefix = k.substr(0, dot + 1);
      bool all = true;
      for (const auto& u : unexpected) all = all && u.compare(0, prefix.size(), prefix) == 0;
      bool explains = false;
      for (const auto& mk : missing) explains = explains || k.substr(dot + 1) == mk;
      if (all && explains) {
        os << "\n  hint: the file's keys start with '" << prefix
           << "': load with LoadOptions{.select = \"" << k.substr(0, dot) << "\"}";
      }
    }
  }
  throw LoadError(os.str(), std::move(missing), std::move(unexpected), std::move(mismatched));
}

std::string read_text(const std::filesystem::path& path, std::string_view op) {
  std::ifstream in = store::open_for_reading(path, op);
  errno = 0;
  std::ostringstream os;
  if (in.peek() != std::ifstream::traits_type::eof()) os << in.rdbuf();
  if (in.bad() || !os) {
    ember::detail::fail<IoError>(op, "'", path.string(),
                                 "': read failed: ", std::strerror(errno != 0 ? errno : EIO));
  }
  return os.str();
}

nlohmann::json parse_json(const std::string& text, const std::string& what) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    ember::detail::fail<IoError>("load_config", what, " is not valid JSON: ", e.what());
  }
}

void check_config_object(const nlohmann::json& j, const char* type) {
  if (!j.is_object())
    ember::detail::fail<ValueError>(type, "expected a JSON object, got ", j.dump());
}

void check_config_keys(const nlohmann::json& j, const char* type,
                       std::span<const char* const> fields) {
  for (const auto& [key, value] : j.items()) {
    bool known = false;
    for (const char* f : fields) known = known || key == f;
    if (known) continue;
    std::string list;
    for (const char* f : fields) list += (list.empty() ? "" : ", ") + std::string(f);
    ember::detail::fail<ValueError>(type, "unknown field '", key, "' (fields: ", list, ")");
  }
}

}  // namespace ember::nn::detail
