#include "fixtures.hpp"

#include <fstream>
#include <limits>
#include <map>
#include <mutex>

#ifndef EMBER_FIXTURE_DIR
#error "EMBER_FIXTURE_DIR must be defined by the build"
#endif

namespace ember::test {

const json& load_fixture(const std::string& name) {
  static std::mutex mu;
  static std::map<std::string, json> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(name);
  if (it != cache.end()) return it->second;
  const std::string path = std::string(EMBER_FIXTURE_DIR) + "/" + name + ".json";
  std::ifstream in(path);
  if (!in) throw IoError("[load_fixture] cannot open " + path);
  json j;
  try {
    in >> j;
  } catch (const std::exception& e) {
    throw IoError("[load_fixture] " + path + " is not valid JSON: " + e.what());
  }
  return cache.emplace(name, std::move(j)).first->second;
}

namespace {
double to_double(const json& v) {
  if (v.is_string()) {
    const auto s = v.get<std::string>();
    if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
    if (s == "inf") return std::numeric_limits<double>::infinity();
    if (s == "-inf") return -std::numeric_limits<double>::infinity();
    throw IoError("[fixture_tensor] bad number string '" + s + "'");
  }
  if (v.is_boolean()) return v.get<bool>() ? 1.0 : 0.0;
  return v.get<double>();
}
}  // namespace

TensorData fixture_tensor(const json& j) {
  Shape shape(j.at("shape").get<std::vector<std::int64_t>>());
  const DType dtype = dtype_from_name(j.at("dtype").get<std::string>());
  const json& data = j.at("data");
  if (is_int(dtype)) {
    std::vector<std::int64_t> v;
    v.reserve(data.size());
    for (const auto& x : data) v.push_back(x.get<std::int64_t>());
    return TensorData(std::move(v), shape).convert(dtype);
  }
  std::vector<double> v;
  v.reserve(data.size());
  for (const auto& x : data) v.push_back(to_double(x));
  return TensorData(std::move(v), shape).convert(dtype);
}

std::vector<FixtureCase> fixture_cases(const std::string& file, const std::string& prefix) {
  const json& j = load_fixture(file);
  std::vector<FixtureCase> out;
  for (auto it = j.at("cases").begin(); it != j.at("cases").end(); ++it) {
    if (it.key().rfind(prefix, 0) == 0) out.push_back({it.key(), &it.value()});
  }
  return out;
}

}  // namespace ember::test
