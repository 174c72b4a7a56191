// `ember quantize RUN_DIR`: post-training quantization of a run's trained weights
// (ember/quant/quantize.hpp) into RUN_DIR/model-quantized.safetensors, which
// `ember eval --quantized` and `ember infer --quantized` use.
#include "ember/quant/quantize.hpp"

#include <iomanip>
#include <iostream>

#include "commands.hpp"
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
                  "integer kernel), int8-affine, int4-block32 (weights only, blocks of 32 "
                  "with f32 scales), int4-block32-f16")
      ->capture_default_str();
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
  const RunConfig cfg = RunConfig::load(dir);
  QuantScheme scheme;
  try {
    scheme = parse_quant_scheme(a.scheme);
  } catch (const ValueError& e) {
    throw CliError(first_line(e.what()));
  }
  return with_trained_model(
      dir, cfg, a.checkpoint, "", Device::cpu(), false, [&](auto& model, const ModelFile& file) {
        quant::QuantizeReport report;
        const auto q = quant::quantize(
            model,
            {.weights = scheme,
             .modules = a.modules.empty() ? std::vector<std::string>{"*"} : a.modules},
            &report);
        if (report.quantized.empty()) {
          std::string why;
          for (const auto& [layer, reason] : report.skipped) why += "; " + layer + ": " + reason;
          throw CliError("no layer of " + dir.string() + " could be quantized with " +
                         scheme.to_string() +
                         (why.empty() ? " (no layer matches --modules)" : why));
        }
        auto metadata = store::WeightsReader(file.path).metadata();
        metadata.erase(quant::kQuantMetadataKey);
        metadata["ember.quantized.scheme"] = a.scheme;
        metadata["ember.quantized.from"] = file.description;
        const fs::path out = quantized_model_path(dir);
        quant::save(q, out, metadata);
        std::error_code ec;
        const auto before = fs::file_size(file.path, ec), after = fs::file_size(out, ec);
        std::cout << "ember quantize: " << cfg.model.name << " of " << dir.string() << " ("
                  << file.description << "), " << scheme.to_string() << "\n";
        for (const auto& layer : report.quantized) std::cout << "  quantized  " << layer << "\n";
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
