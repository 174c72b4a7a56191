// The real-model fixtures of tests/fixtures/onnx: each `.onnx` keeps its float weights as
// external data that is rebuilt here from the recipe in `<name>.json` (see
// gen_onnx_models.py), so the repository holds no large weight files.
#pragma once

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

namespace ember::onnx::testing {

/// Element i of the weights stream: splitmix64 of (seed + (i + 1) * golden gamma), its top
/// 24 bits as u in [0, 1), then float(lo + (hi - lo) * u).
inline float fixture_weight(std::uint64_t seed, std::uint64_t i, double lo, double hi) {
  std::uint64_t z = seed + (i + 1) * 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z ^= z >> 31;
  const double u = static_cast<double>(z >> 40) * (1.0 / 16777216.0);
  return static_cast<float>(lo + (hi - lo) * u);
}

/// Copies `<name>.onnx` from `fixture_dir` into `out_dir` and writes its weights file there;
/// returns the path of the copied model. Skips the work when the weights already exist
/// with the right size.
inline std::string materialize_fixture(const std::string& fixture_dir, const std::string& name,
                                       const std::string& out_dir) {
  namespace fs = std::filesystem;
  fs::create_directories(out_dir);
  std::ifstream jf(fs::path(fixture_dir) / (name + ".json"));
  if (!jf) throw std::runtime_error("missing fixture recipe " + name + ".json");
  const nlohmann::json j = nlohmann::json::parse(jf);
  const fs::path weights = fs::path(out_dir) / j.at("weights").get<std::string>();
  const auto bytes = j.at("bytes").get<std::uint64_t>();
  if (!fs::exists(weights) || fs::file_size(weights) != bytes) {
    const auto seed = j.at("seed").get<std::uint64_t>();
    std::vector<float> buf(bytes / 4);
    for (const auto& init : j.at("initializers")) {
      const auto off = init.at("offset").get<std::uint64_t>() / 4;
      const auto n = init.at("numel").get<std::uint64_t>();
      const double lo = init.at("lo").get<double>(), hi = init.at("hi").get<double>();
      for (std::uint64_t k = 0; k < n; ++k) buf[off + k] = fixture_weight(seed, off + k, lo, hi);
    }
    const fs::path tmp = weights.string() + ".tmp";
    std::ofstream wf(tmp, std::ios::binary);
    wf.write(reinterpret_cast<const char*>(buf.data()), static_cast<std::streamsize>(bytes));
    wf.close();
    fs::rename(tmp, weights);
  }
  const fs::path model = fs::path(out_dir) / (name + ".onnx");
  fs::copy_file(fs::path(fixture_dir) / (name + ".onnx"), model,
                fs::copy_options::overwrite_existing);
  return model.string();
}

}  // namespace ember::onnx::testing
