// `ember summary RUN_DIR`: a run's settings, metric summary, best epoch and checkpoints.
#include <iomanip>
#include <iostream>
#include <sstream>

#include "commands.hpp"
#include "ember/store/weights.hpp"
#include "ember/train/train.hpp"

namespace ember::cli {

namespace fs = std::filesystem;

CLI::App* add_summary_command(CLI::App& app, SummaryArgs& a) {
  CLI::App* sub = app.add_subcommand(
      "summary",
      "Show a run: settings, metric summary table, best epoch, checkpoints, test "
      "accuracy (after `ember eval`)");
  sub->add_option("RUN_DIR", a.run_dir, "Run directory of `ember train`")->required();
  return sub;
}

namespace {
/// a / b with two decimals.
std::string ratio_text(std::uintmax_t a, std::uintmax_t b) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(2) << static_cast<double>(a) / static_cast<double>(b);
  return os.str();
}
}  // namespace

int run_summary(const SummaryArgs& a) {
  const fs::path dir = a.run_dir;
  const RunConfig cfg = RunConfig::load(dir);
  const TrainSettings& t = cfg.train;
  std::error_code ec;
  const std::int64_t params =
      with_model(cfg.model, Device::cpu(), [](const auto& m) { return nn::num_params(m); });

  std::ostringstream os;
  os << "Run " << dir.string() << "\n"
     << "  model     " << cfg.model.name << ", " << params << " parameters, config "
     << cfg.model.config.dump() << "\n"
     << "  data      " << cfg.data.name << " ("
     << (cfg.data.dir.empty() ? "default folder" : cfg.data.dir) << "), " << cfg.data.train_items
     << " train / " << cfg.data.valid_items << " valid images"
     << (cfg.data.limit == 0 ? std::string() : " (--limit " + std::to_string(cfg.data.limit) + ")")
     << ", normalised with mean " << cfg.data.mean << ", std " << cfg.data.std << "\n"
     << "  training  " << t.epochs << " epochs, batch " << t.batch_size << ", " << t.optimizer
     << " lr " << t.lr << (t.weight_decay > 0 ? " decay " + std::to_string(t.weight_decay) : "")
     << ", " << t.schedule << " schedule"
     << (t.warmup_epochs > 0 ? " after " + train::format_value(t.warmup_epochs) + " warmup epochs"
                             : "")
     << ", augmentation " << t.augment << ", label smoothing " << t.label_smoothing << ", seed "
     << t.seed << (t.mixed_precision != "none" ? ", mixed precision " + t.mixed_precision : "")
     << "\n";

  const auto history = train::MetricHistory::read_logs(dir);
  const std::size_t done = history.last_epoch();
  const bool finished = fs::is_regular_file(dir / "model.safetensors", ec);
  os << "  status    " << done << "/" << t.epochs << " epochs logged, "
     << (finished
             ? "finished (final model: model.safetensors)"
             : "not finished (continue with `ember train --resume --run-dir " + dir.string() + "`)")
     << "\n";
  const fs::path quantized = quantized_model_path(dir);
  if (finished && fs::is_regular_file(quantized, ec)) {
    const auto f32 = fs::file_size(dir / "model.safetensors", ec);
    const auto q = fs::file_size(quantized, ec);
    std::string scheme = "?";
    std::string damaged;
    try {
      const store::WeightsReader file(quantized);
      const auto& meta = file.metadata();
      if (const auto it = meta.find("ember.quantized.scheme"); it != meta.end())
        scheme = it->second;
    } catch (const Error& e) {
      damaged = first_line(e.what());
    }
    if (damaged.empty()) {
      os << "  size      model.safetensors " << f32 << " bytes; model-quantized.safetensors ("
         << scheme << ") " << q << " bytes, " << ratio_text(f32, q) << "x smaller\n";
    } else {
      os << "  size      model.safetensors " << f32 << " bytes; model-quantized.safetensors is "
         << "damaged (" << damaged << "): make it again with `ember quantize " << dir.string()
         << "`\n";
    }
  } else if (finished) {
    os << "  size      model.safetensors " << fs::file_size(dir / "model.safetensors", ec)
       << " bytes (no quantized model: `ember quantize " << dir.string() << "`)\n";
  }
  std::cout << os.str() << std::flush;
  os.str("");

  if (done > 0) {
    std::cout << "\n" << train::Summary::load(dir).table();
    const auto best_loss =
        train::best_epoch(history, train::Split::Valid, "Loss", train::Direction::Lowest);
    const auto best_acc =
        train::best_epoch(history, train::Split::Valid, "Accuracy", train::Direction::Highest);
    const auto at = [&](const char* metric, std::size_t epoch, const char* unit) {
      const auto v = history.value(train::Split::Valid, metric, epoch);
      return v ? train::format_value(*v, unit) : std::string("-");
    };
    if (best_loss) {
      os << "\nBest epoch by validation loss: " << *best_loss << " (loss "
         << at("Loss", *best_loss, "") << ", accuracy " << at("Accuracy", *best_loss, "%") << ")\n";
    }
    if (best_acc) {
      os << "Best epoch by validation accuracy: " << *best_acc << " ("
         << at("Accuracy", *best_acc, "%") << ")\n";
    }
  }
  const auto checkpoints = train::CheckpointStore(dir / "checkpoints").list();
  os << "\nCheckpoints (" << (dir / "checkpoints").string() << "): ";
  if (checkpoints.empty()) os << "none";
  for (std::size_t i = 0; i < checkpoints.size(); ++i)
    os << (i ? ", " : "") << checkpoints[i].name();
  os << "\n";
  // The float model's evaluation, then the quantized model's when there is one.
  for (const bool quantized : {false, true}) {
    const std::string name = eval_file(quantized);
    const std::string command =
        "`ember eval " + (quantized ? dir.string() + " --quantized" : dir.string()) + "`";
    if (fs::is_regular_file(dir / name, ec)) {
      try {
        const auto j = nlohmann::json::parse(nn::detail::read_text(dir / name, "ember summary"));
        os << "Test accuracy" << (quantized ? " (quantized)" : "") << ": "
           << train::format_value(100.0 * j.at("accuracy").get<double>(), "%") << " ("
           << j.at("items").get<std::size_t>() << " images, "
           << j.at("checkpoint").get<std::string>() << "; " << command << ")\n";
      } catch (const std::exception& e) {
        os << name << " is damaged: " << first_line(e.what()) << "\n";
      }
    } else if (!quantized) {
      os << "Test accuracy: not evaluated yet (" << command << ")\n";
    } else if (fs::is_regular_file(quantized_model_path(dir), ec)) {
      os << "Test accuracy (quantized): not evaluated yet (" << command << ")\n";
    }
  }
  std::cout << os.str() << std::flush;
  return 0;
}

}  // namespace ember::cli
