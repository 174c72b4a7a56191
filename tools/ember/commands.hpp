// The `ember` subcommands: their options (filled by CLI11) and entry points. Each add_*
// function registers a subcommand on the app; each run_* function returns the exit status
// and throws CliError (or ember::Error) for problems main reports on one line.
#pragma once

#include <CLI/CLI.hpp>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "run.hpp"

namespace ember::cli {

/// Options of `ember train` (defaults from RunConfig's).
struct TrainArgs {
  std::vector<std::string> dataset{"fashion-mnist"};  // name [dir]
  std::string model = "cnn";
  std::size_t epochs = TrainSettings{}.epochs;
  std::size_t batch_size = TrainSettings{}.batch_size;
  std::string optimizer = TrainSettings{}.optimizer;
  double lr = TrainSettings{}.lr;
  double weight_decay = TrainSettings{}.weight_decay;
  std::string schedule = TrainSettings{}.schedule;
  double warmup_epochs = TrainSettings{}.warmup_epochs;
  std::size_t step_epochs = TrainSettings{}.step_epochs;
  double step_gamma = TrainSettings{}.step_gamma;
  std::string augment = TrainSettings{}.augment;
  double label_smoothing = TrainSettings{}.label_smoothing;
  std::string mixed_precision = TrainSettings{}.mixed_precision;
  std::vector<std::int64_t> channels{};  // cnn: the two conv widths (empty: the default)
  std::vector<std::int64_t> hidden{};    // cnn: one classifier width; mlp: the hidden widths
  double dropout = -1;                   // < 0: the model's default
  std::uint64_t seed = TrainSettings{}.seed;
  std::size_t limit = 0;
  std::size_t valid_size = DataSettings{}.valid_size;
  std::string device = "cpu+autodiff";
  std::string run_dir{};
  bool resume = false;
  bool overwrite = false;
  std::size_t workers = 1;
  int threads = 0;
  std::size_t keep = 2;
  bool no_tui = false;
  int nproc = 1;  // > 1: run through `ember launch` with this many processes
};

/// Options of `ember eval`.
struct EvalArgs {
  std::string run_dir{};
  std::string checkpoint = "final";
  std::string model{};
  std::string device = "cpu";
  std::string data_dir{};
  std::size_t batch_size = 256;
  std::size_t limit = 0;
  int threads = 0;
  bool quantized = false;
};

/// Options of `ember infer`.
struct InferArgs {
  std::string run_dir{};
  std::vector<std::string> images{};
  std::string checkpoint = "final";
  std::string device = "cpu";
  std::size_t top = 3;
  bool invert = false;
  bool quantized = false;
};

/// Options of `ember quantize`.
struct QuantizeArgs {
  std::string run_dir{};
  std::string scheme = "int8-per-channel";
  std::string checkpoint = "final";
  std::vector<std::string> modules{};
  /// Training batches for calibrating the layers' inputs (0: weights only, dynamic inputs).
  std::size_t calibrate = 0;
  std::string observer = "min-max";
  std::string data_dir{};
};

/// Options of `ember summary`.
struct SummaryArgs {
  std::string run_dir{};
};

CLI::App* add_train_command(CLI::App& app, TrainArgs& args);
CLI::App* add_eval_command(CLI::App& app, EvalArgs& args);
CLI::App* add_infer_command(CLI::App& app, InferArgs& args);
CLI::App* add_summary_command(CLI::App& app, SummaryArgs& args);
CLI::App* add_quantize_command(CLI::App& app, QuantizeArgs& args);

/// `sub` is the parsed subcommand (to tell options given on the command line from defaults).
int run_train(const TrainArgs& args, const CLI::App& sub);
int run_eval(const EvalArgs& args);
int run_infer(const InferArgs& args);
int run_summary(const SummaryArgs& args);
int run_quantize(const QuantizeArgs& args);

/// CLI11 validators with short messages: a number > 0, and a number >= 0.
CLI::Validator positive_number();
CLI::Validator non_negative_number();
/// A finite number in [low, high] (or [low, high) when !high_included); rejects NaN.
CLI::Validator number_in(double low, double high, bool high_included);
/// A whole number >= 0 (unsigned options: CLI11 would wrap "-1" around).
CLI::Validator whole_number();
/// A whole number in [low, high]: "must be a whole number in [1, 1024], got 'abc'" (CLI11's
/// Range says "Value abc not in range" for text that is no number).
CLI::Validator whole_number_in(std::int64_t low, std::int64_t high);
template <class L, class H>
CLI::Validator whole_number_in(L low, H high) {
  return whole_number_in(static_cast<std::int64_t>(low), static_cast<std::int64_t>(high));
}

/// The tool's command line as main received it (`ember train --nproc` relaunches it).
void set_command_line(int argc, char** argv);
const std::vector<std::string>& command_line();

/// Device::parse with a CliError for a bad string.
Device parse_device(const std::string& text);
/// Sets the host threads of `device`'s kernels when n > 0 (ember::set_num_threads).
void set_threads(const Device& device, int n);

}  // namespace ember::cli
