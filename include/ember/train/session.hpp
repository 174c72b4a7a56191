// The Learner's options and the non-template part of its training loop (metrics, history,
// logs, checkpoint folders and their state.json, renderer, stop requests, summary). The
// Learner template (learner.hpp) adds what depends on the model, optimizer and batch types.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "ember/train/checkpoint.hpp"
#include "ember/train/history.hpp"
#include "ember/train/metric.hpp"
#include "ember/train/renderer.hpp"

namespace ember::train {

/// Which checkpoint is kept besides the last ones: the best epoch by a metric.
struct BestCheckpointConfig {
  std::string metric = "Loss";
  Split split = Split::Valid;
  /// nullopt: the metric's own direction (lowest loss, highest accuracy).
  std::optional<Direction> direction{};
};

/// Why fit() returned.
enum class StopReason {
  /// Every epoch ran.
  Completed,
  /// The early-stopping rule fired.
  EarlyStopping,
  /// A stop was requested (dashboard `q` + `y`, SIGINT/SIGTERM, the stop token); a
  /// checkpoint of the point reached was written.
  Interrupted,
};

/// "completed", "early stopping" or "interrupted".
std::string_view stop_reason_name(StopReason reason);

/// The Learner's settings (see the LearnerBuilder methods of the same names).
struct LearnerOptions {
  std::filesystem::path run_dir{};
  std::size_t num_epochs = 1;
  /// Complete-epoch checkpoints kept (the newest ones), >= 1.
  std::size_t keep_last = 2;
  /// The best checkpoint, also kept; default: the lowest valid Loss when a Loss metric is
  /// registered for validation (best_explicit false: silently none otherwise).
  std::optional<BestCheckpointConfig> best = BestCheckpointConfig{};
  bool best_explicit = false;
  std::optional<EarlyStoppingConfig> early_stopping{};
  /// Continue from the latest checkpoint of run_dir (a fresh start when there is none).
  bool resume = false;
  /// Without resume, a run_dir holding checkpoints or logs is an error unless overwrite is
  /// set (then they are deleted).
  bool overwrite = false;
  /// Batches whose gradients are combined into one optimizer step (>= 1).
  std::size_t grad_accumulation = 1;
  /// Reseeds the backend's generator before each batch with a value derived from (seed,
  /// epoch, batch), so dropout and other random ops repeat exactly after a resume.
  std::optional<std::uint64_t> seed{};
  RendererKind renderer = RendererKind::Auto;
  /// Seconds between plain progress lines.
  double progress_interval = 5.0;
  /// Turn SIGINT/SIGTERM into a graceful stop while fit() runs (a second signal kills).
  bool handle_signals = true;
  /// Model config stored in the checkpoints' safetensors metadata under "config" (null: none).
  nlohmann::json model_config{};
  /// Print the summary table to stdout at the end.
  bool print_summary = true;
  /// Write checkpoints, logs and the summary (false on the ranks other than 0 of a
  /// data-parallel run: they only read the run directory, to resume).
  bool write_files = true;
};

namespace detail {

/// A 64-bit value mixing seed, epoch and batch (splitmix64 steps); used to reseed per batch.
std::uint64_t mix_seed(std::uint64_t seed, std::uint64_t epoch, std::uint64_t batch);

/// Where fit() starts after Session::begin.
struct StartPoint {
  /// First epoch to run (1-based; num_epochs + 1 when nothing is left).
  std::size_t epoch = 1;
  /// Train batches of `epoch` already done (a checkpoint from the middle of an epoch).
  std::size_t skip_batches = 0;
  /// Training of `epoch` is done; only its validation is left.
  bool train_done = false;
  /// Folder of the checkpoint to load the model and optimizer from (none for a fresh run).
  std::optional<std::filesystem::path> checkpoint{};
  /// The scheduler state saved with it.
  nlohmann::json scheduler_state{};
};

/// Batches and items per epoch of the two loaders.
struct EpochSizes {
  std::size_t train_items = 0, train_batches = 0, valid_items = 0, valid_batches = 0;
};

/// The training loop's bookkeeping. Not thread-safe except stop_requested().
class Session {
 public:
  /// Throws ValueError for bad options (epochs 0, keep_last 0, accumulation 0, duplicate
  /// metric names, an early-stopping or best-checkpoint metric that is not registered).
  Session(LearnerOptions options, std::vector<std::unique_ptr<Metric>> train_metrics,
          std::vector<std::unique_ptr<Metric>> valid_metrics,
          std::shared_ptr<Renderer> renderer = nullptr, std::stop_token stop = {});
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  const LearnerOptions& options() const { return options_; }
  /// The device the metrics are told the model runs on (MetricContext::device).
  void set_device(const Device& device) { device_ = device; }

  /// Prepares the run folder (see LearnerOptions::resume/overwrite; ValueError when it holds
  /// another run), reads the checkpoint to resume from (IoError / ValueError for a damaged
  /// state.json), installs the signal handlers and starts the renderer.
  StartPoint begin(const EpochSizes& sizes);

  /// Starts a split of an epoch: resets its metrics (or restores the accumulators saved by a
  /// checkpoint from the middle of this epoch when batches_done > 0).
  void start_split(Split split, std::size_t epoch, std::size_t batches_done);
  /// Adds one batch to the metrics of the split in progress and tells the renderer.
  /// `learning_rate` is NaN during validation.
  void record(const MetricInput& input, double learning_rate);
  /// Ends the split in progress: its epoch values go to the history and the renderer.
  void end_split();

  /// True once a stop was requested by the renderer, a signal or the stop token.
  bool stop_requested() const;

  /// Writes checkpoint `id`: `write(folder)` adds the model and optimizer files, then
  /// state.json is written with the scheduler state, the history and (for a checkpoint in
  /// the middle of training an epoch) the train metric accumulators.
  void save_checkpoint(const CheckpointId& id, bool train_done,
                       const std::function<void(const std::filesystem::path&)>& write,
                       const nlohmann::json& scheduler_state);
  /// The safetensors metadata of a checkpoint's model file (config, epoch).
  std::map<std::string, std::string> model_metadata(const CheckpointId& id) const;

  /// After the checkpoint of a complete epoch: prunes old checkpoints, rewrites the logs and
  /// returns true when early stopping fires.
  bool end_epoch(std::size_t epoch);

  /// Ends the run: writes the summary (summary.json, summary.txt), stops the renderer, prints
  /// the summary table (print_summary) and a line saying why training stopped.
  void finish(StopReason reason);

  /// Ends a run that failed: stops the renderer (restoring the terminal) and the signal
  /// handlers; writes nothing. No effect after finish().
  void abort() noexcept;

  const MetricHistory& history() const { return history_; }
  const Summary& summary() const { return summary_; }
  const CheckpointStore& checkpoints() const { return store_; }
  /// The checkpoint folder written last (empty before the first).
  const std::filesystem::path& last_checkpoint() const { return last_checkpoint_; }
  /// A status line for the renderer.
  void message(const std::string& text);

 private:
  std::vector<std::unique_ptr<Metric>>& metrics(Split s) {
    return s == Split::Train ? train_metrics_ : valid_metrics_;
  }
  std::vector<MetricValue> values(Split s, bool batch_values) const;
  double eta_seconds() const;
  void restore_signals();

  Device device_ = Device::cpu();
  LearnerOptions options_;
  std::vector<std::unique_ptr<Metric>> train_metrics_, valid_metrics_;
  std::shared_ptr<Renderer> renderer_;
  std::stop_token stop_;
  CheckpointStore store_;
  MetricHistory history_;
  Summary summary_;
  EpochSizes sizes_;
  std::filesystem::path last_checkpoint_;
  nlohmann::json pending_train_state_;  // accumulators to restore at the resumed epoch
  std::size_t pending_epoch_ = 0;

  // The split in progress.
  Split split_ = Split::Train;
  std::size_t epoch_ = 0, batches_done_ = 0, items_done_ = 0, batches_total_ = 0, items_total_ = 0,
              start_batches_ = 0;
  std::vector<double> last_batch_values_;
  std::chrono::steady_clock::time_point split_start_{}, session_start_{};
  double work_done_ = 0.0;  // items processed by this session (train + valid)
  std::size_t first_epoch_ = 1;

  bool started_ = false, finished_ = false, signals_installed_ = false;
};

}  // namespace detail
}  // namespace ember::train
