// Native Ember's predictions for the WebAssembly tests (tests/wasm/node_test.js and
// browser_test.js compare the module's against them): the first COUNT Fashion-MNIST test
// images through web::Classifier (the class the module wraps) on the native CPU backend
// (OpenBLAS/oneDNN, one thread), written as JSON with the time per image.
//
//   ember_web_reference RUN_DIR IDX_GZ COUNT OUT.json
#include <zlib.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "ember/core/error.hpp"
#include "ember/cpu/cpu.hpp"
#include "ember/web/classifier.hpp"

namespace {

std::vector<std::uint8_t> read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot open " + path);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

/// The first `count` images of a gzipped IDX3 file as values in [0, 1].
std::vector<float> read_idx_images(const std::string& path, std::size_t count, std::size_t& per) {
  gzFile g = gzopen(path.c_str(), "rb");
  if (!g) throw std::runtime_error("cannot open " + path);
  unsigned char head[16];
  if (gzread(g, head, 16) != 16 || head[2] != 8 || head[3] != 3) {
    gzclose(g);
    throw std::runtime_error(path + " is not an IDX3 u8 file");
  }
  const auto be = [&](int o) {
    return (std::size_t{head[o]} << 24) | (std::size_t{head[o + 1]} << 16) |
           (std::size_t{head[o + 2]} << 8) | head[o + 3];
  };
  per = be(8) * be(12);
  std::vector<unsigned char> raw(count * per);
  const int got = gzread(g, raw.data(), static_cast<unsigned>(raw.size()));
  gzclose(g);
  if (got != static_cast<int>(raw.size())) throw std::runtime_error(path + ": too few images");
  std::vector<float> px(raw.size());
  // The value JavaScript computes: Math.fround(byte / 255).
  for (std::size_t i = 0; i < raw.size(); ++i) px[i] = static_cast<float>(raw[i] / 255.0);
  return px;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::cerr << "usage: ember_web_reference RUN_DIR IDX_GZ COUNT OUT.json\n";
    return 2;
  }
  try {
    // One thread, as the module runs (and OpenMP threads only slow tiny batches down).
    ember::Cpu::set_num_threads(1);
    const std::string dir = argv[1];
    const auto weights = read_file(dir + "/model.safetensors");
    const auto run = read_file(dir + "/run.json");
    const ember::web::Classifier c(weights, std::string(run.begin(), run.end()));
    const std::size_t count = std::stoul(argv[3]);
    std::size_t per = 0;
    const auto px = read_idx_images(argv[2], count, per);
    // One image per call, as the page classifies them; the first call is a warm-up.
    nlohmann::json probs = nlohmann::json::array();
    c.predict(std::span<const float>(px.data(), per), 1);
    const auto t0 = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < count; ++i) {
      probs.push_back(c.predict(std::span<const float>(px.data() + i * per, per), 1));
    }
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    const nlohmann::json out = {{"model", c.model_name()},
                                {"count", count},
                                {"ms_per_image", ms / static_cast<double>(count)},
                                {"probs", probs}};
    std::ofstream(argv[4]) << out.dump() << "\n";
    std::cout << "native: " << count << " images, " << ms / static_cast<double>(count)
              << " ms per image (" << c.model_name() << ")\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "ember_web_reference: " << e.what() << "\n";
    return 1;
  }
}
