// `ember infer RUN_DIR IMAGE...`: the predicted class and top probabilities of image files.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <numeric>

#include "commands.hpp"
#include "ember/data/image.hpp"
#include "ember/data/image_folder.hpp"

namespace ember::cli {

namespace fs = std::filesystem;

CLI::App* add_infer_command(CLI::App& app, InferArgs& a) {
  CLI::App* sub = app.add_subcommand(
      "infer",
      "Classify image files (PNG, JPEG, BMP) with a trained run: predicted class and "
      "top probabilities");
  sub->add_option("RUN_DIR", a.run_dir, "Run directory of `ember train`")->required();
  sub->add_option("IMAGE", a.images,
                  "Image files; converted to the run's channels and resized to its image size "
                  "when needed")
      ->required();
  CLI::Option* checkpoint =
      sub->add_option("--checkpoint", a.checkpoint,
                      "final, last, best, a checkpoint name (epoch-3) or a .safetensors file")
          ->capture_default_str();
  sub->add_option("--top", a.top, "Probabilities shown per image")
      ->check(whole_number_in(std::size_t{1}, std::size_t{1000}))
      ->capture_default_str();
  sub->add_flag("--invert", a.invert,
                "Invert the pixels (for dark objects on a light background; Fashion-MNIST "
                "shows light objects on black)");
  sub->add_option("--device", a.device,
                  "Ember device: cpu, cuda[:N], vulkan[:N] (default: EMBER_DEVICE when set)")
      ->envname("EMBER_DEVICE")
      ->capture_default_str();
  sub->add_flag("--quantized", a.quantized,
                "Use the model of `ember quantize` (RUN_DIR/model-quantized.safetensors)")
      ->excludes(checkpoint);
  return sub;
}

namespace {

/// An image file as the model's input: the run's channel count (stb converts), resized to
/// size x size (area averaging when shrinking, bilinear when enlarging), optionally inverted.
/// `note` says what was done to it.
data::ImageU8 prepare_image(const fs::path& path, const DataSettings& d, bool invert,
                            std::string& note) {
  data::ImageU8 im;
  try {
    im = data::read_image(path, static_cast<int>(d.channels));
  } catch (const Error& e) {
    throw CliError(first_line(e.what()));
  }
  const auto size = static_cast<std::size_t>(d.size);
  if (im.height != size || im.width != size) {
    note = "resized from " + std::to_string(im.width) + "x" + std::to_string(im.height);
    // In 8 bits, straight from the decoded pixels: a 12000x12000 photo costs its own 144 MB,
    // not a float copy of it (issue 19).
    im = data::resize(im, size, size);
  }
  if (invert) {
    for (auto& p : im.pixels) p = static_cast<std::uint8_t>(255 - p);
    note += note.empty() ? "inverted" : ", inverted";
  }
  return im;
}

}  // namespace

int run_infer(const InferArgs& a) {
  const fs::path dir = a.run_dir;
  const RunConfig cfg = RunConfig::load(dir);
  const Device device = parse_device(a.device).without_autodiff();
  std::vector<data::ImageU8> images;
  std::vector<std::string> notes(a.images.size());
  for (std::size_t i = 0; i < a.images.size(); ++i) {
    images.push_back(prepare_image(a.images[i], cfg.data, a.invert, notes[i]));
  }
  return with_trained_model(
      dir, cfg, a.checkpoint, "", device, a.quantized, [&](auto& model, const ModelFile&) {
        const auto batch = NormalizingBatcher(device, cfg.data.mean, cfg.data.std)(images);
        const auto logits = model.forward(batch.images);
        const auto num_classes = static_cast<std::size_t>(logits.dim(1));
        const auto values = logits.into_data().template to_vec<float>();
        const std::size_t top = std::min(a.top, num_classes);
        for (std::size_t i = 0; i < images.size(); ++i) {
          // Softmax on the host, in double.
          const float* row = values.data() + i * num_classes;
          if (!std::all_of(row, row + num_classes, [](float v) { return std::isfinite(v); })) {
            throw CliError(
                "the model's outputs for " + a.images[i] + " are not finite numbers: " +
                (a.quantized ? "the quantized model's scales or its training are "
                               "broken (make it again with `ember quantize " +
                                   dir.string() + "`)"
                             : "its training diverged (see `ember summary " + dir.string() + "`)"));
          }
          const double mx = *std::max_element(row, row + num_classes);
          std::vector<double> p(num_classes);
          double sum = 0;
          for (std::size_t c = 0; c < num_classes; ++c) sum += p[c] = std::exp(row[c] - mx);
          for (double& v : p) v /= sum;
          std::vector<std::size_t> order(num_classes);
          std::iota(order.begin(), order.end(), std::size_t{0});
          std::stable_sort(order.begin(), order.end(),
                           [&](std::size_t x, std::size_t y) { return p[x] > p[y]; });
          const auto name = [&](std::size_t c) {
            return c < cfg.data.classes.size() ? cfg.data.classes[c] : std::to_string(c);
          };
          char pct[32];
          std::snprintf(pct, sizeof pct, "%.1f %%", 100.0 * p[order[0]]);
          std::cout << a.images[i] << ": " << name(order[0]) << " (" << pct << ")";
          if (!notes[i].empty()) std::cout << " [" << notes[i] << "]";
          std::cout << "\n";
          for (std::size_t k = 0; k < top; ++k) {
            std::snprintf(pct, sizeof pct, "%6.2f %%", 100.0 * p[order[k]]);
            std::cout << "  " << pct << "  " << name(order[k]) << "\n";
          }
        }
        std::cout << std::flush;
        return 0;
      });
}

}  // namespace ember::cli
