// What the `ember` subcommands share: the run configuration a run directory records
// (`run.json`), the datasets and their batches, and finding and loading a trained model.
//
// A run directory, as `ember train` leaves it:
//   run.json                 RunConfig: model (name + config), data and training settings
//   train.jsonl valid.jsonl  per-epoch metric logs (the Learner's)
//   summary.json summary.txt the metric summary (min / max and their epochs)
//   checkpoints/epoch-<n>/   model.safetensors, optimizer.safetensors, state.json
//   model.safetensors        the final model (after the last epoch), config in its metadata
//   eval.json confusion_matrix.csv   written by `ember eval`
//   model-quantized.safetensors      written by `ember quantize`
//   eval-quantized.json confusion_matrix-quantized.csv   by `ember eval --quantized`
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "ember/data/batcher.hpp"
#include "ember/data/dataset.hpp"
#include "ember/data/image.hpp"
#include "ember/data/mnist.hpp"
#include "ember/models/classifiers.hpp"
#include "ember/module/config.hpp"
#include "ember/quant/quantize.hpp"

namespace ember::cli {

// The built-in models (ember/models/classifiers.hpp) under their short names.
using models::Cnn;
using models::CnnConfig;
using models::Mlp;
using models::MlpConfig;
using models::model_names;
using models::ModelSpec;
using models::with_model;

/// A problem the user can fix (bad arguments, missing files, a run of another model): main
/// prints the message on one line and exits with status 1.
class CliError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The dataset of a run.
struct DataSettings {
  /// "fashion-mnist" or "mnist".
  std::string name = "fashion-mnist";
  /// Folder of the IDX files; empty: the dataset's default (environment variable, then the
  /// Debian package's folder).
  std::string dir{};
  /// Use only the first `limit` training images (0: all).
  std::size_t limit = 0;
  /// Training images held out for validation (at most a tenth of the training images).
  std::size_t valid_size = 5000;
  /// Normalisation applied to pixels scaled to [0, 1]: (x - mean) / std.
  double mean = 0.2860;
  double std = 0.3530;
  /// Image shape [channels, size, size] and the class names, by label.
  std::int64_t channels = 1;
  std::int64_t size = 28;
  std::vector<std::string> classes{};
  /// Images in the train and valid parts (recorded by `ember train`).
  std::size_t train_items = 0;
  std::size_t valid_items = 0;
};
EMBER_CONFIG(DataSettings, name, dir, limit, valid_size, mean, std, channels, size, classes,
             train_items, valid_items)

/// How the model is trained.
struct TrainSettings {
  std::size_t epochs = 5;
  std::size_t batch_size = 64;
  /// "adam", "adamw" or "sgd".
  std::string optimizer = "adam";
  double lr = 2e-3;
  double weight_decay = 0.0;
  /// "constant", "cosine" or "step" (x step_gamma every step_epochs epochs).
  std::string schedule = "cosine";
  /// Epochs of linear warmup from lr / 100 (may be fractional).
  double warmup_epochs = 0.0;
  std::size_t step_epochs = 2;
  double step_gamma = 0.1;
  /// Augmentation of the training images: "none", "flip" (horizontal flip with probability
  /// 0.5) or "crop-flip" (random 28x28 crop of the image padded by 2, then the flip).
  std::string augment = "none";
  /// Label smoothing of the cross-entropy loss, in [0, 1) (0: plain cross-entropy).
  double label_smoothing = 0.0;
  std::uint64_t seed = 42;
  /// Epoch checkpoints kept besides the best (--keep, 1..kMaxKeep); a resumed run keeps it
  /// unless given.
  std::size_t keep = 2;
  static constexpr std::size_t kMaxKeep = 100000;
  /// Data-parallel processes (`--nproc`, or WORLD_SIZE under `ember launch`); batch_size is
  /// per process. A resumed run keeps it: a rank's batches depend on the world size.
  std::size_t processes = 1;
  /// Mixed-precision training: "none" (f32), "bf16", or "f16" (with loss scaling); the
  /// parameters stay f32 (train::LearnerBuilder::mixed_precision).
  std::string mixed_precision = "none";
};
EMBER_CONFIG(TrainSettings, epochs, batch_size, optimizer, lr, weight_decay, schedule,
             warmup_epochs, step_epochs, step_gamma, augment, label_smoothing, seed, keep,
             processes, mixed_precision)

/// Everything that defines a run; saved as `<run>/run.json`.
struct RunConfig {
  ModelSpec model{};
  DataSettings data{};
  TrainSettings train{};

  /// {"format": "ember-run", "version": 1, "model": ..., "data": ..., "train": ...}.
  nlohmann::json to_json() const;
  /// Throws CliError naming `source` for JSON that is not a run configuration.
  static RunConfig from_json(const nlohmann::json& j, const std::string& source);
  /// Writes `<dir>/run.json` atomically.
  void save(const std::filesystem::path& dir) const;
  /// Reads `<dir>/run.json`. Throws CliError when the folder or the file is missing (saying
  /// that the folder is not an `ember train` run) or damaged.
  static RunConfig load(const std::filesystem::path& dir);
};

/// The run configuration file of a run directory.
inline std::filesystem::path run_file(const std::filesystem::path& dir) {
  return dir / "run.json";
}

/// Defaults of a dataset name: mean, std, shape and class names (dir, limit, valid_size
/// untouched). Throws CliError for an unknown name.
DataSettings dataset_defaults(const std::string& name);

/// The training or test images of the run's dataset, the first `limit` when limit > 0.
/// Throws CliError with the install hint when the files are missing, and when the images do
/// not have the run's shape or classes.
data::DatasetPtr<data::ImageU8> load_split(const DataSettings& data, data::Split split,
                                           std::size_t limit);

/// The training images split into {train, valid} as the run defines it (the validation part
/// drawn with the run's seed).
std::vector<data::DatasetPtr<data::ImageU8>> train_valid_split(const DataSettings& data,
                                                               std::uint64_t seed);

/// Turns uint8 images into a normalised ImageBatch on a device: images [N, C, H, W] f32 =
/// (pixel / 255 - mean) / std, targets [N] i64. Thread-safe (used by loader workers).
class NormalizingBatcher {
 public:
  using Item = data::ImageU8;
  using Batch = data::ImageBatch<>;

  NormalizingBatcher(Device device, double mean, double std);
  Batch operator()(std::vector<Item> items) const;

 private:
  Device device_;
  float mean_, inv_std_;
};

/// A trained model file of a run and how it was chosen.
struct ModelFile {
  std::filesystem::path path{};
  /// "final model", "checkpoint epoch-3", ...
  std::string description{};
};

/// The model file `which` of run `dir`: "final" (default: `model.safetensors` when training
/// finished, else the newest checkpoint, with a note on stderr), "last" (the newest
/// checkpoint), "best" (the checkpoint of the lowest validation loss), a checkpoint name
/// ("epoch-3") or a path to a .safetensors file. Throws CliError when it does not exist
/// (saying how to produce it).
ModelFile find_model_file(const std::filesystem::path& dir, const std::string& which);

/// Throws CliError unless the model config stored in the metadata of `file` (by the Learner
/// or `ember train`) is the run's: the weights must come from the model run.json describes.
void check_model_metadata(const ModelFile& file, const ModelSpec& spec);

/// The first line of an error message.
std::string first_line(const std::string& message);
/// A one-line account of a LoadError: "2 missing keys (conv1.weight, ...), 4 unexpected ...".
std::string describe(const nn::LoadError& e);

/// Loads `file` into `model` (built from `spec`; with quant::load when `quantized`), turning
/// nn::LoadError, IoError and a bad quantization record (ValueError) into a one-line CliError.
template <class M>
void load_weights(M& model, const ModelFile& file, const ModelSpec& spec, bool quantized = false) {
  try {
    if (quantized) {
      model = quant::load(std::move(model), file.path);
    } else {
      nn::load(model, file.path);
    }
  } catch (const nn::LoadError& e) {
    // quant::load says when the tensors contradict the file's own quantization record.
    const std::string what = e.what();
    const auto own = what.find("; the quantized tensors of ");
    if (quantized && own != std::string::npos) {
      throw CliError(file.path.string() + " is inconsistent: " + what.substr(own + 2) + " (" +
                     describe(e) + ")");
    }
    throw CliError("the weights in " + file.path.string() + " do not fit the run's model '" +
                   spec.name + "' (run.json): " + describe(e));
  } catch (const IoError& e) {
    throw CliError(first_line(e.what()));
  } catch (const ValueError& e) {
    throw CliError(first_line(e.what()));
  }
}

/// The file name of `ember eval`'s result in a run directory: eval.json, or
/// eval-quantized.json for the quantized model.
std::string eval_file(bool quantized);

/// RUN_DIR/model-quantized.safetensors, written by `ember quantize`.
std::filesystem::path quantized_model_path(const std::filesystem::path& dir);

/// The run's model with the weights of `which` loaded (or, when `quantized`, the model of
/// `ember quantize`), on a device without autodiff, in eval mode; checks `expect_model`
/// (when not empty) and the weights' recorded config.
template <class F>
decltype(auto) with_trained_model(const std::filesystem::path& dir, const RunConfig& cfg,
                                  const std::string& which, const std::string& expect_model,
                                  const Device& device, bool quantized, F&& f) {
  if (!expect_model.empty() && expect_model != cfg.model.name) {
    throw CliError("run " + dir.string() + " holds a '" + cfg.model.name + "' model, not '" +
                   expect_model + "' (run.json)");
  }
  ModelFile file;
  if (quantized) {
    std::error_code ec;
    file = {quantized_model_path(dir), "quantized model"};
    if (!std::filesystem::is_regular_file(file.path, ec)) {
      throw CliError("run " + dir.string() + " has no quantized model yet: make one with " +
                     "`ember quantize " + dir.string() + "`");
    }
  } else {
    file = find_model_file(dir, which);
  }
  check_model_metadata(file, cfg.model);
  return with_model(cfg.model, device.without_autodiff(), [&](auto model) {
    load_weights(model, file, cfg.model, quantized);
    model.eval();
    return f(model, file);
  });
}

}  // namespace ember::cli
