// Checkpoint folders of a run: `<run>/checkpoints/epoch-<n>/` after each epoch and
// `<run>/checkpoints/epoch-<n>-batch-<k>/` when training stops in the middle of epoch n (after
// k of its train batches). A checkpoint is written into a temporary folder
// (`.tmp-epoch-<n>-XXXXXX`), synced, and renamed into place, so a folder with a checkpoint's
// name is always complete: a crash before the rename leaves the previous checkpoint as the
// latest, and the temporary folder is removed by the next save.
//
// The Learner puts in each folder: model.safetensors (the config in the metadata),
// optimizer.safetensors (optim::save_record) and state.json (epoch, scheduler, seed, metric
// history, and for a stop in the middle of an epoch the metric accumulators).
#pragma once

#include <compare>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace ember::train {

/// Names a checkpoint: the end of epoch `epoch`, or (partial) the point after `batches`
/// train batches of it. Ordered by training progress: the partial checkpoints of an epoch come
/// before its end.
struct CheckpointId {
  std::size_t epoch = 0;
  bool partial = false;
  std::size_t batches = 0;

  /// "epoch-3" or "epoch-3-batch-120".
  std::string name() const;
  /// Inverse of name(); nullopt for any other folder name.
  static std::optional<CheckpointId> parse(const std::string& name);

  std::strong_ordering operator<=>(const CheckpointId& o) const;
  bool operator==(const CheckpointId& o) const = default;
};

/// The checkpoint folders under one directory (`<run>/checkpoints`).
class CheckpointStore {
 public:
  /// The folder is created by the first save().
  explicit CheckpointStore(std::filesystem::path dir);

  const std::filesystem::path& dir() const { return dir_; }
  /// dir() / id.name().
  std::filesystem::path path(const CheckpointId& id) const { return dir_ / id.name(); }

  /// The checkpoints present, oldest first (temporary folders and other files are ignored).
  std::vector<CheckpointId> list() const;
  /// The newest checkpoint, nullopt when there is none.
  std::optional<CheckpointId> latest() const;

  /// Writes checkpoint `id`: `write(folder)` fills a fresh temporary folder, which is then
  /// synced and renamed to path(id) (an existing checkpoint of that name is replaced).
  /// Temporary folders left by earlier interrupted saves are removed first. When `write` or
  /// the rename throws, the temporary folder is removed and the error propagates (IoError
  /// for file-system failures).
  void save(const CheckpointId& id, const std::function<void(const std::filesystem::path&)>& write);

  /// Removes checkpoints no longer needed and returns them: every partial checkpoint older than
  /// the newest checkpoint, and the complete ones except the `keep_last` newest and those of
  /// the epochs in `keep_epochs` (the best). Throws ValueError when keep_last is 0.
  std::vector<CheckpointId> prune(std::size_t keep_last,
                                  const std::vector<std::size_t>& keep_epochs = {});

  /// A function save() calls after the temporary folder is written and synced, just before
  /// the rename (tests use it to simulate a crash at that point).
  void set_before_commit(std::function<void(const std::filesystem::path&)> hook) {
    before_commit_ = std::move(hook);
  }

 private:
  void remove_temporaries() const;

  std::filesystem::path dir_;
  std::function<void(const std::filesystem::path&)> before_commit_;
};

/// fsync of a file or folder (for folders: their entries). Throws IoError naming `op`.
void sync_path(const std::filesystem::path& path, const char* op = "sync");

}  // namespace ember::train
