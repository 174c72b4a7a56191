// Per-epoch metric values of a run: the history the Learner keeps and checkpoints, its log
// files (`train.jsonl`, `valid.jsonl`), the end-of-training summary table, and the rules that
// read it (best epoch, early stopping).
//
// Log format: one JSON object per line, `{"epoch": 3, "metric": "Loss", "value": 0.3121}`,
// epochs in order and, within an epoch, metrics in registration order; a value that is not
// finite is written as null. The files are rewritten whole and atomically after every
// epoch, so a killed process never leaves a broken line.
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ember/train/metric.hpp"

namespace ember::train {

/// A metric as the history and the summary show it.
struct MetricInfo {
  std::string name{};
  std::string unit{};
  Direction direction = Direction::Lowest;
};

/// The epoch values of every metric of both splits.
class MetricHistory {
 public:
  /// Declares a metric of `split` (kept in declaration order; declaring it again updates its
  /// unit and direction).
  void declare(Split split, const MetricInfo& info);
  /// Records the value of metric `name` (declared or not) at `epoch` (1-based), replacing a
  /// value already recorded for that epoch. Throws ValueError when epoch is 0.
  void record(Split split, const std::string& name, std::size_t epoch, double value);

  /// The metrics of `split`, in declaration order.
  const std::vector<MetricInfo>& metrics(Split split) const;
  /// The info of metric `name`, nullopt when it is not declared for `split`.
  std::optional<MetricInfo> info(Split split, const std::string& name) const;
  /// (epoch, value) pairs of a metric, epochs ascending; empty when there are none.
  std::vector<std::pair<std::size_t, double>> values(Split split, const std::string& name) const;
  /// The value at `epoch`, nullopt when none was recorded.
  std::optional<double> value(Split split, const std::string& name, std::size_t epoch) const;
  /// The largest epoch with a value of any metric (0 when empty).
  std::size_t last_epoch() const;
  /// Forgets values of epochs after `epoch`.
  void truncate(std::size_t epoch);
  bool empty() const { return last_epoch() == 0; }

  /// {"train": [{"name", "unit", "direction", "values": [[epoch, value|null], ...]}], "valid": ...}
  nlohmann::json to_json() const;
  /// Inverse of to_json. Throws ValueError for malformed JSON.
  static MetricHistory from_json(const nlohmann::json& j);

  /// The log of `split` in the JSON Lines format above.
  std::string jsonl(Split split) const;
  /// Writes `<run_dir>/train.jsonl` and `valid.jsonl` (atomic rewrites). Throws IoError.
  void write_logs(const std::filesystem::path& run_dir) const;
  /// Reads the logs written by write_logs (a missing file is an empty split). Directions and
  /// units are not in the logs: metrics get Direction::Lowest and no unit unless `known` (e.g.
  /// the names of the built-in metrics) says otherwise. Throws IoError for a line that is not
  /// a log entry (naming the file and line).
  static MetricHistory read_logs(const std::filesystem::path& run_dir,
                                 const std::vector<MetricInfo>& known = builtin_metric_infos());

  /// Names, units and directions of the built-in metrics (for read_logs).
  static std::vector<MetricInfo> builtin_metric_infos();

 private:
  struct SplitData {
    std::vector<MetricInfo> infos;
    std::vector<std::map<std::size_t, double>> values;  // parallel to infos
  };
  SplitData& data(Split split) { return data_[split == Split::Train ? 0 : 1]; }
  const SplitData& data(Split split) const { return data_[split == Split::Train ? 0 : 1]; }
  /// Index of `name` in data(split).infos, or -1.
  std::ptrdiff_t find(Split split, const std::string& name) const;

  SplitData data_[2];
};

/// The epoch with the best value of a metric (the earliest on ties; NaN values never win),
/// nullopt when it has no finite value.
std::optional<std::size_t> best_epoch(const MetricHistory& history, Split split,
                                      const std::string& metric, Direction direction);

/// Early stopping on a metric (Burn's MetricEarlyStoppingStrategy with
/// NoImprovementSince{patience}): training stops after an epoch when the metric has not
/// improved by more than min_delta for `patience` epochs in a row.
struct EarlyStoppingConfig {
  /// The metric's name ("Loss", "Accuracy", ...).
  std::string metric = "Loss";
  Split split = Split::Valid;
  /// Which values are better; nullopt: the metric's own direction.
  std::optional<Direction> direction{};
  /// Epochs without improvement before stopping (>= 1).
  std::size_t patience = 3;
  /// Smallest change that counts as an improvement (>= 0, in the metric's units).
  double min_delta = 0.0;
};

/// Whether training should stop after the last epoch of `history`: walking the epochs in
/// order, an epoch improves when its value beats the best so far by more than min_delta
/// (lower for Lowest, higher for Highest; NaN never improves), and the answer is true once
/// `patience` epochs in a row did not improve. Throws ValueError when patience is 0 or
/// min_delta is negative.
bool should_stop_early(const MetricHistory& history, const EarlyStoppingConfig& config,
                       Direction direction);

/// One row of the summary: a metric of a split over the epochs of a run.
struct SummaryRow {
  Split split = Split::Train;
  std::string metric{};
  std::string unit{};
  double min = 0.0;
  std::size_t min_epoch = 0;
  double max = 0.0;
  std::size_t max_epoch = 0;
  double last = 0.0;
  std::size_t last_epoch = 0;
};

/// The end-of-training table (Burn's learner summary): for each metric and split, its
/// minimum and maximum and the epochs where they were reached (the earliest on ties).
struct Summary {
  std::size_t epochs = 0;
  std::vector<SummaryRow> rows{};

  /// Rows for every metric with at least one finite value, train split first.
  static Summary from_history(const MetricHistory& history);
  /// The table as text:
  ///   | Split | Metric   | Min.   | Epoch | Max.   | Epoch |
  std::string table() const;
  /// {"epochs": n, "metrics": [{"split", "metric", "unit", "min", "min_epoch", "max",
  /// "max_epoch", "last", "last_epoch"}]}.
  nlohmann::json to_json() const;
  /// Inverse of to_json. Throws ValueError for malformed JSON.
  static Summary from_json(const nlohmann::json& j);
  /// Writes `<run_dir>/summary.json` and `summary.txt` (atomic). Throws IoError.
  void save(const std::filesystem::path& run_dir) const;
  /// Reads `<run_dir>/summary.json`, or builds the summary from the logs when there is none
  /// (a run that was killed). Throws IoError when neither exists.
  static Summary load(const std::filesystem::path& run_dir);
};

/// "0.3121", "85.20 %", "1234 items/s": a value with its unit and precision adapted to its
/// magnitude; "-" for NaN.
std::string format_value(double value, const std::string& unit = {});

}  // namespace ember::train
