// How the Learner shows progress: the terminal dashboard (ncurses) or plain progress lines.
//
// The training thread calls a Renderer after every batch and epoch; these calls only copy a
// few numbers under a mutex (the dashboard draws on its own thread, the text renderer prints
// at most one line every `interval` seconds), so training never waits on the terminal.
//
// Dashboard keys: Left/Right (or Up/Down) switch the plotted metric, `r` toggles the recent
// (last epoch) and full history, `q` asks "Stop training? (y/n)": `y` makes stop_requested()
// true (the Learner finishes the current iteration, writes a checkpoint and returns).
#pragma once

#include <cstddef>
#include <filesystem>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "ember/train/history.hpp"
#include "ember/train/metric.hpp"

namespace ember::train {

/// Which renderer the Learner uses. Auto: the dashboard when stdin and stdout are terminals,
/// TERM names a usable terminal and EMBER_NO_TUI is unset (or "0"); plain lines otherwise.
enum class RendererKind { Auto, Tui, Text, None };

/// One metric's numbers after a batch.
struct MetricValue {
  std::string name{};
  std::string unit{};
  /// The batch's value (plotted).
  double batch = 0.0;
  /// The epoch's value so far.
  double epoch = 0.0;
};

/// Where training stands after a batch.
struct ProgressInfo {
  Split split = Split::Train;
  /// 1-based epoch and the last epoch of the run.
  std::size_t epoch = 0, num_epochs = 0;
  /// Items and batches of this split done in this epoch, and its totals.
  std::size_t items_done = 0, items_total = 0;
  std::size_t batches_done = 0, batches_total = 0;
  /// Items per second of this split in this epoch.
  double items_per_second = 0.0;
  /// Estimated seconds until the end of the run (NaN while unknown).
  double eta_seconds = 0.0;
};

/// What a run is about to do.
struct TrainingInfo {
  std::filesystem::path run_dir{};
  /// The first epoch this call trains (> 1 after a resume) and the last.
  std::size_t first_epoch = 1, num_epochs = 1;
  std::vector<MetricInfo> train_metrics{}, valid_metrics{};
  /// Epoch values before first_epoch (from a checkpoint), for the plots.
  MetricHistory history{};
};

/// Receives the training loop's progress. Implementations must make every call cheap.
class Renderer {
 public:
  virtual ~Renderer() = default;
  /// Called once before the first batch.
  virtual void start(const TrainingInfo& info) = 0;
  /// After every batch.
  virtual void update(const ProgressInfo& progress, const std::vector<MetricValue>& metrics) = 0;
  /// After the last batch of a split in an epoch, with the epoch values and its duration.
  virtual void end_epoch(Split split, std::size_t epoch, const std::vector<MetricValue>& metrics,
                         double seconds) = 0;
  /// A status line ("checkpoint written: ...", "early stopping: ...").
  virtual void message(const std::string& text) = 0;
  /// True once the user asked to stop (dashboard `q` then `y`).
  virtual bool stop_requested() const { return false; }
  /// Called once at the end; restores the terminal. No call follows.
  virtual void finish() = 0;
};

/// Plain progress lines on `out`: one line at most every `interval_seconds` during an epoch,
/// one per split at the end of each epoch, and the messages. Throws ValueError when the
/// interval is negative.
std::unique_ptr<Renderer> make_text_renderer(std::ostream& out, double interval_seconds = 5.0);

/// The ncurses dashboard on the process's terminal (stdin/stdout); nullptr when the terminal
/// cannot be opened (unknown TERM, not a terminal).
std::unique_ptr<Renderer> make_tui_renderer();

/// The renderer of `kind` (Auto chooses as described at RendererKind; Tui falls back to text
/// when the terminal cannot be used; None gives a renderer that shows nothing). Text lines go
/// to std::cout.
std::unique_ptr<Renderer> make_renderer(RendererKind kind, double interval_seconds = 5.0);

/// "1h02m03s", "4m05s", "12s"; "?" for NaN or negative values.
std::string format_duration(double seconds);

}  // namespace ember::train
