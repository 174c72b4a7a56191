// `ember eval RUN_DIR`: test accuracy, the per-class table and the confusion matrix of a run
// (RUN_DIR/eval.json, confusion_matrix.csv; with --quantized, of the model of `ember quantize`:
// eval-quantized.json, confusion_matrix-quantized.csv, beside the float model's).
#include <cmath>
#include <iostream>

#include "commands.hpp"
#include "ember/data/loader.hpp"
#include "ember/store/file.hpp"
#include "ember/train/train.hpp"

namespace ember::cli {

namespace fs = std::filesystem;

CLI::App* add_eval_command(CLI::App& app, EvalArgs& a) {
  CLI::App* sub =
      app.add_subcommand("eval",
                         "Evaluate a trained run on the test split: accuracy, per-class table, "
                         "confusion matrix (RUN_DIR/confusion_matrix.csv)");
  sub->add_option("RUN_DIR", a.run_dir, "Run directory of `ember train`")->required();
  CLI::Option* checkpoint =
      sub->add_option("--checkpoint", a.checkpoint,
                      "final (the trained model, else the newest checkpoint), last, best (lowest "
                      "validation loss), a checkpoint name (epoch-3) or a .safetensors file")
          ->capture_default_str();
  sub->add_option("--model", a.model, "Fail unless the run's model is this one")
      ->check(CLI::IsMember(model_names()));
  sub->add_option("--device", a.device,
                  "Ember device: cpu, cuda[:N], vulkan[:N] (default: EMBER_DEVICE when set)")
      ->envname("EMBER_DEVICE")
      ->capture_default_str();
  sub->add_option("--data-dir", a.data_dir,
                  "Folder of the dataset's IDX files (default: the one the run used)");
  sub->add_option("--batch-size", a.batch_size, "Images per batch")
      ->check(whole_number_in(std::size_t{1}, std::size_t{65536}))
      ->capture_default_str();
  sub->add_option("--limit", a.limit, "Evaluate only the first N test images (0: all)")
      ->check(whole_number())
      ->capture_default_str();
  sub->add_option("--threads", a.threads, "CPU kernel threads")->check(whole_number_in(1, 1024));
  sub->add_flag("--quantized", a.quantized,
                "Evaluate the model of `ember quantize` (RUN_DIR/model-quantized.safetensors) "
                "into eval-quantized.json and confusion_matrix-quantized.csv")
      ->excludes(checkpoint);
  return sub;
}

std::string eval_file(bool quantized) {
  return quantized ? "eval-quantized.json" : "eval.json";
}

int run_eval(const EvalArgs& a) {
  const fs::path dir = a.run_dir;
  RunConfig cfg = RunConfig::load(dir);
  std::error_code ec;
  if (!a.data_dir.empty()) {
    cfg.data.dir = fs::absolute(a.data_dir).string();
  } else if (!cfg.data.dir.empty() && !fs::is_directory(cfg.data.dir, ec)) {
    throw CliError("the " + cfg.data.name + " folder of run " + dir.string() + ", " + cfg.data.dir +
                   " (run.json), is gone: give its new place with --data-dir DIR");
  }
  const Device device = parse_device(a.device).without_autodiff();
  set_threads(device, a.threads);
  return with_trained_model(
      dir, cfg, a.checkpoint, a.model, device, a.quantized,
      [&](auto& model, const ModelFile& file) {
        auto test = load_split(cfg.data, data::Split::Test, a.limit);
        auto loader =
            data::DataLoaderBuilder(NormalizingBatcher(device, cfg.data.mean, cfg.data.std))
                .batch_size(a.batch_size)
                .num_workers(1)
                .build(test);
        std::cout << "ember eval: " << cfg.model.name << " of " << dir.string() << " ("
                  << file.description << ") on " << test->len() << " " << cfg.data.name
                  << " test images\n";
        using M = std::remove_cvref_t<decltype(model)>;
        auto step = [](const M& m, const data::ImageBatch<>& b) {
          auto logits = m.forward(b.images);
          auto loss =
              nn::CrossEntropyLossConfig{}.init(b.images.device()).forward(logits, b.targets);
          return train::ClassificationOutput<Dispatch>{loss, logits, b.targets};
        };
        const auto report =
            train::Evaluator(model, step).class_names(cfg.data.classes).eval(loader);
        if (report.loss && !std::isfinite(*report.loss)) {
          throw CliError(
              "the model's outputs on the test images are not finite numbers (loss " +
              std::to_string(*report.loss) + "): " +
              (a.quantized ? "the quantized model or the training it came from is broken (make "
                             "it again with `ember quantize " +
                                 dir.string() + "`)"
                           : "its training diverged (see `ember summary " + dir.string() + "`)"));
        }
        const fs::path csv =
            dir / (a.quantized ? "confusion_matrix-quantized.csv" : "confusion_matrix.csv");
        report.confusion.write_csv(csv, cfg.data.classes);
        nlohmann::json per_class = nlohmann::json::array();
        for (std::size_t c = 0; c < report.confusion.num_classes(); ++c) {
          per_class.push_back({{"class", cfg.data.classes.at(c)},
                               {"precision", report.confusion.precision(c)},
                               {"recall", report.confusion.recall(c)},
                               {"f1", report.confusion.f1(c)},
                               {"support", report.confusion.support(c)}});
        }
        const nlohmann::json out = {{"accuracy", report.accuracy()},
                                    {"loss", report.loss ? nlohmann::json(*report.loss) : nullptr},
                                    {"items", report.num_items},
                                    {"model_file", file.path.string()},
                                    {"checkpoint", file.description},
                                    {"per_class", per_class}};
        store::write_file_atomic(dir / eval_file(a.quantized), out.dump(2) + "\n");
        std::cout << "Test accuracy: " << train::format_value(100.0 * report.accuracy(), "%")
                  << " (" << report.num_items << " images, " << file.description
                  << "); confusion matrix: " << csv.string() << std::endl;
        return 0;
      });
}

}  // namespace ember::cli
