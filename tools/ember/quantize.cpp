// `ember quantize RUN_DIR`: post-training quantization of a run's trained weights
// (ember/quant/quantize.hpp) into RUN_DIR/model-quantized.safetensors, which
// `ember eval --quantized` and `ember infer --quantized` use. With --calibrate N the layers'
// inputs are quantized too (static quantization), with ranges observed on N training
// batches.
#include "ember/quant/quantize.hpp"

#include <algorithm>
#include <iomanip>
#include <iostream>

#include "commands.hpp"
#include "ember/data/loader.hpp"
#include "ember/store/weights.hpp"

namespace ember::cli {

namespace fs = std::filesystem;

CLI::App* add_quantize_command(CLI::App& app, QuantizeArgs& a) {
  CLI::App* sub = app.add_subcommand(
      "quantize",
      "Quantize a trained run's weights (Linear and Conv layers) into "
      "RUN_DIR/model-quantized.safetensors, for `ember eval --quantized` and `ember infer "
      "--quantized`");
  sub->add_option("RUN_DIR", a.run_dir, "Run directory of `ember train`")->required();
  sub->add_option("--scheme", a.scheme,
                  "int8 (symmetric, per tensor), int8-per-channel (per output channel; the "
                  "integer kernel), int8-affine, int4-block32 (blocks of 32 with f16 scales), "
                  "int4-block32-f32")
      ->capture_default_str();
  CLI::Option* calibrate =
      sub->add_option("--calibrate", a.calibrate,
                      "Also quantize each layer's input (u8, static) with ranges observed on N "
                      "batches of the run's training images (its batch size, without the "
                      "validation images; 0: weights only, int8 Linear inputs are then "
                      "quantized per row on the fly)")
          ->check(whole_number_in(std::size_t{0}, std::size_t{100000}))
          ->capture_default_str();
  sub->add_option("--observer", a.observer,
                  "How --calibrate takes a range: min-max, moving-average or percentile "
                  "(99.99th)")
      ->check(CLI::IsMember({"min-max", "moving-average", "percentile"}))
      ->capture_default_str()
      ->needs(calibrate);
  sub->add_option("--data-dir", a.data_dir,
                  "Folder of the dataset's IDX files for --calibrate (default: the one the run "
                  "used)")
      ->needs(calibrate);
  sub->add_option("--checkpoint", a.checkpoint,
                  "Weights to quantize: final, last, best, a checkpoint name or a .safetensors "
                  "file")
      ->capture_default_str();
  sub->add_option("--modules", a.modules,
                  "Glob patterns of the layers to quantize (fc1, conv*); default: all");
  return sub;
}

fs::path quantized_model_path(const fs::path& dir) {
  return dir / "model-quantized.safetensors";
}

int run_quantize(const QuantizeArgs& a) {
  const fs::path dir = a.run_dir;
  RunConfig cfg = RunConfig::load(dir);
  QuantScheme scheme;
  try {
    scheme = parse_quant_scheme(a.scheme);
  } catch (const ValueError& e) {
    throw CliError(first_line(e.what()));
  }
  std::error_code ec;
  if (!a.data_dir.empty()) {
    cfg.data.dir = fs::absolute(a.data_dir).string();
  } else if (a.calibrate > 0 && !cfg.data.dir.empty() && !fs::is_directory(cfg.data.dir, ec)) {
    throw CliError("the " + cfg.data.name + " folder of run " + dir.string() + ", " + cfg.data.dir +
                   " (run.json), is gone: give its new place with --data-dir DIR");
  }
  const quant::QuantizeConfig qc{
      .weights = scheme,
      .modules = a.modules.empty() ? std::vector<std::string>{"*"} : a.modules,
      .activations = a.calibrate > 0,
      .observer = {.kind = quant::parse_observer_kind(a.observer)}};
  const Device device = Device::cpu();
  return with_trained_model(
      dir, cfg, a.checkpoint, "", device, false, [&](auto& model, const ModelFile& file) {
        using M = std::remove_cvref_t<decltype(model)>;
        // --modules that choose no layer fail before any calibration runs.
        std::vector<std::string> layers;
        std::size_t chosen = 0;
        nn::visit_modules(model, [&](const std::string& path, const auto& mod) {
          using T = std::remove_cvref_t<decltype(mod)>;
          if constexpr (quant::detail::is_linear_v<T> || quant::detail::is_conv_v<T>)
            layers.push_back(path);
        });
        quant::detail::for_chosen_layers(model, qc, [&](const std::string&, auto&) { ++chosen; });
        std::string names;
        for (const auto& l : layers) names += (names.empty() ? "" : ", ") + l;
        if (chosen == 0) {
          throw CliError("--modules matches no layer of the run's '" + cfg.model.name +
                         "' model (its Linear and Conv layers: " + names + ")");
        }
        for (const auto& pattern : a.modules) {
          if (std::none_of(layers.begin(), layers.end(), [&](const std::string& l) {
                return nn::detail::glob_match(pattern, l);
              })) {
            throw CliError("--modules " + pattern + " matches no layer of the run's '" +
                           cfg.model.name + "' model (its Linear and Conv layers: " + names + ")");
          }
        }
        quant::QuantizeReport report;
        std::size_t calibrated = 0;
        const auto q = [&] {
          if (a.calibrate == 0) return quant::quantize(model, qc, &report);
          // N batches of the run's training part (its --limit, without the validation
          // images) in its shuffled order of epoch 0, normalised as in training, without
          // augmentation.
          auto train = train_valid_split(cfg.data, cfg.train.seed).at(0);
          const auto loader =
              data::DataLoaderBuilder(NormalizingBatcher(device, cfg.data.mean, cfg.data.std))
                  .batch_size(cfg.train.batch_size)
                  .shuffle(cfg.train.seed)
                  .num_workers(1)
                  .build(train);
          return quant::quantize(
              model, qc,
              [&](const M& prepared) {
                for (auto& batch : loader.iter(0)) {
                  if (calibrated == a.calibrate) break;
                  (void)prepared.forward(batch.images);
                  calibrated += batch.images.dim(0) > 0 ? 1 : 0;
                }
              },
              &report);
        }();
        if (report.quantized.empty()) {
          std::string why;
          for (const auto& [layer, reason] : report.skipped) why += "; " + layer + ": " + reason;
          throw CliError("no layer of " + dir.string() + " could be quantized with " +
                         scheme.to_string() +
                         (why.empty() ? " (no layer matches --modules)" : why));
        }
        auto metadata = store::WeightsReader(file.path).metadata();
        metadata.erase(quant::kQuantMetadataKey);
        metadata.erase(quant::kQuantInputsMetadataKey);
        metadata["ember.quantized.scheme"] = a.scheme;
        metadata["ember.quantized.from"] = file.description;
        if (a.calibrate > 0) {
          metadata["ember.quantized.calibration"] =
              std::to_string(calibrated) + " training batches of " +
              std::to_string(cfg.train.batch_size) + ", " + a.observer;
        }
        const fs::path out = quantized_model_path(dir);
        quant::save(q, out, metadata);
        // The evaluation of an earlier quantized model is out of date now.
        for (const char* f : {"eval-quantized.json", "confusion_matrix-quantized.csv"})
          fs::remove(dir / f, ec);
        std::error_code ec;
        const auto before = fs::file_size(file.path, ec), after = fs::file_size(out, ec);
        std::cout << "ember quantize: " << cfg.model.name << " of " << dir.string() << " ("
                  << file.description << "), " << scheme.to_string() << "\n";
        if (a.calibrate > 0) {
          std::cout << "Calibrated the layers' inputs on " << calibrated << " training batches of "
                    << cfg.train.batch_size << " (" << a.observer << ")";
          if (calibrated < a.calibrate) {
            std::cout << ": all the training images (" << a.calibrate << " batches asked for)";
          }
          std::cout << "\n";
        }
        for (const auto& layer : report.quantized) {
          std::cout << "  quantized  " << layer;
          nn::visit_modules(q, [&](const std::string& path, const auto& mod) {
            using T = std::remove_cvref_t<decltype(mod)>;
            if constexpr (quant::detail::is_linear_v<T> || quant::detail::is_conv_v<T>) {
              if (path == layer && mod.input_quant) std::cout << ", input " << *mod.input_quant;
            }
          });
          std::cout << "\n";
        }
        for (const auto& [layer, reason] : report.skipped)
          std::cout << "  kept f32   " << layer << " (" << first_line(reason) << ")\n";
        std::cout << "Wrote " << out.string() << ": " << after << " bytes, " << before
                  << " bytes in f32 (" << std::fixed << std::setprecision(2)
                  << static_cast<double>(before) / static_cast<double>(after)
                  << "x smaller); evaluate it with `ember eval " << dir.string() << " --quantized`"
                  << std::endl;
        return 0;
      });
}

}  // namespace ember::cli
