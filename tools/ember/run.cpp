// Run configuration, datasets, batches and model files shared by the `ember` subcommands.
#include "run.hpp"

#include <cstdio>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string_view>

#include "ember/store/safetensors.hpp"
#include "ember/train/checkpoint.hpp"
#include "ember/train/history.hpp"

namespace ember::cli {

namespace fs = std::filesystem;

namespace {
constexpr const char* kFormat = "ember-run";
constexpr int kVersion = 1;
}  // namespace

nlohmann::json RunConfig::to_json() const {
  return {{"format", kFormat},
          {"version", kVersion},
          {"model", model.to_json()},
          {"data", nn::config_to_json(data)},
          {"train", nn::config_to_json(train)}};
}

RunConfig RunConfig::from_json(const nlohmann::json& j, const std::string& source) {
  if (!j.is_object() || j.value("format", "") != kFormat) {
    throw CliError(source + " is not an ember run configuration");
  }
  if (j.value("version", 0) != kVersion) {
    throw CliError(source + " has version " + j.value("version", nlohmann::json()).dump() +
                   "; this ember reads version " + std::to_string(kVersion));
  }
  try {
    RunConfig c;
    c.model = ModelSpec::from_json(j.at("model"));
    c.data = nn::config_from_json<DataSettings>(j.at("data"));
    c.train = nn::config_from_json<TrainSettings>(j.at("train"));
    // The bounds of the --keep option.
    if (c.train.keep < 1 || c.train.keep > TrainSettings::kMaxKeep) {
      throw std::runtime_error("train.keep " + std::to_string(c.train.keep) + " is outside 1.." +
                               std::to_string(TrainSettings::kMaxKeep));
    }
    // The values of the --mixed-precision option.
    const std::string& mp = c.train.mixed_precision;
    if (mp != "none" && mp != "bf16" && mp != "f16") {
      throw std::runtime_error("train.mixed_precision '" + mp + "' is not none, bf16 or f16");
    }
    return c;
  } catch (const std::exception& e) {
    throw CliError(source + " is damaged: " + first_line(e.what()));
  }
}

void RunConfig::save(const fs::path& dir) const {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw CliError("cannot create the run directory " + dir.string() + ": " + ec.message());
  nn::detail::write_text_atomic(run_file(dir), to_json().dump(2) + "\n");
}

RunConfig RunConfig::load(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw CliError("no run directory " + dir.string());
  const fs::path file = run_file(dir);
  if (!fs::is_regular_file(file, ec)) {
    throw CliError(dir.string() + " is not a run directory of `ember train` (no run.json)");
  }
  nlohmann::json j;
  try {
    j = nn::detail::parse_json(nn::detail::read_text(file, "ember: reading run.json"),
                               file.string());
  } catch (const Error& e) {
    throw CliError(first_line(e.what()));
  }
  return from_json(j, file.string());
}

DataSettings dataset_defaults(const std::string& name) {
  DataSettings d;
  d.name = name;
  if (name == "fashion-mnist") {
    d.mean = 0.2860;
    d.std = 0.3530;
    for (auto n : data::FashionMnist::class_names()) d.classes.emplace_back(n);
  } else if (name == "mnist") {
    d.mean = 0.1307;
    d.std = 0.3081;
    for (auto n : data::Mnist::class_names()) d.classes.emplace_back(n);
  } else {
    throw CliError("unknown dataset '" + name + "' (fashion-mnist, mnist)");
  }
  return d;
}

data::DatasetPtr<data::ImageU8> load_split(const DataSettings& d, data::Split split,
                                           std::size_t limit) {
  std::shared_ptr<data::MnistDataset> ds;
  try {
    if (d.name == "fashion-mnist") {
      ds = d.dir.empty() ? data::FashionMnist::load(split) : data::FashionMnist::load(split, d.dir);
    } else if (d.name == "mnist") {
      ds = d.dir.empty() ? data::Mnist::load(split) : data::Mnist::load(split, d.dir);
    } else {
      throw CliError("unknown dataset '" + d.name + "' (fashion-mnist, mnist)");
    }
  } catch (const IoError& e) {
    throw CliError(first_line(e.what()));
  }
  if (static_cast<std::int64_t>(ds->rows()) != d.size ||
      static_cast<std::int64_t>(ds->cols()) != d.size) {
    throw CliError("the " + d.name + " images are " + std::to_string(ds->rows()) + "x" +
                   std::to_string(ds->cols()) + ", the run expects " + std::to_string(d.size) +
                   "x" + std::to_string(d.size));
  }
  if (limit == 0 || limit >= ds->len()) return ds;
  return std::make_shared<data::PartialDataset<data::ImageU8>>(ds, 0, limit);
}

std::vector<data::DatasetPtr<data::ImageU8>> train_valid_split(const DataSettings& d,
                                                               std::uint64_t seed) {
  auto all = load_split(d, data::Split::Train, d.limit);
  const std::size_t n = all->len();
  const std::size_t valid = std::min(d.valid_size, n / 10);
  if (valid == 0) {
    throw CliError("too few training images (" + std::to_string(n) +
                   ") to hold out a validation set; use --limit 20 or more");
  }
  return data::random_split<data::ImageU8>(all, std::vector<std::size_t>{n - valid, valid}, seed);
}

NormalizingBatcher::NormalizingBatcher(Device device, double mean, double std)
    : device_(std::move(device)),
      mean_(static_cast<float>(mean)),
      inv_std_(static_cast<float>(1.0 / std)) {}

NormalizingBatcher::Batch NormalizingBatcher::operator()(std::vector<Item> items) const {
  if (items.empty()) ember::detail::fail<ValueError>("NormalizingBatcher", "empty batch");
  const Item& first = items.front();
  const std::size_t per = first.numel();
  std::vector<float> pixels(items.size() * per);
  std::vector<std::int64_t> labels(items.size());
  for (std::size_t i = 0; i < items.size(); ++i) {
    const Item& im = items[i];
    if (im.channels != first.channels || im.height != first.height || im.width != first.width) {
      ember::detail::fail<ShapeError>("NormalizingBatcher", "image ", i, " is [", im.channels, ", ",
                                      im.height, ", ", im.width, "], image 0 is [", first.channels,
                                      ", ", first.height, ", ", first.width, "]");
    }
    float* out = pixels.data() + i * per;
    for (std::size_t k = 0; k < per; ++k) {
      out[k] = (static_cast<float>(im.pixels[k]) * (1.0f / 255.0f) - mean_) * inv_std_;
    }
    labels[i] = im.label;
  }
  const auto n = static_cast<std::int64_t>(items.size());
  Shape shape{n, static_cast<std::int64_t>(first.channels), static_cast<std::int64_t>(first.height),
              static_cast<std::int64_t>(first.width)};
  return Batch{DTensor<4>::from_data(TensorData(std::move(pixels), shape), device_),
               DTensor<1, Int>::from_data(TensorData(std::move(labels), Shape{n}), device_)};
}

namespace {

/// The newest checkpoint folder of a run, nullopt when there is none.
std::optional<train::CheckpointId> newest_checkpoint(const fs::path& dir) {
  return train::CheckpointStore(dir / "checkpoints").latest();
}

std::string no_checkpoint_message(const fs::path& dir) {
  return "run " + dir.string() +
         " has no checkpoint yet (training stopped before the end of its first epoch); "
         "continue it with `ember train --resume --run-dir " +
         dir.string() + "`";
}

}  // namespace

ModelFile find_model_file(const fs::path& dir, const std::string& which) {
  std::error_code ec;
  const train::CheckpointStore store(dir / "checkpoints");
  const auto checkpoint = [&](const train::CheckpointId& id) {
    const fs::path p = store.path(id) / "model.safetensors";
    if (!fs::is_regular_file(p, ec)) {
      throw CliError("checkpoint " + id.name() + " of run " + dir.string() +
                     " has no model.safetensors");
    }
    return ModelFile{p, "checkpoint " + id.name()};
  };
  if (which.empty() || which == "final") {
    const fs::path final_model = dir / "model.safetensors";
    if (fs::is_regular_file(final_model, ec)) return {final_model, "final model"};
    const auto latest = newest_checkpoint(dir);
    if (!latest) throw CliError(no_checkpoint_message(dir));
    std::cerr << "note: training of " << dir.string()
              << " did not finish; using its newest checkpoint, " << latest->name() << "\n";
    return checkpoint(*latest);
  }
  if (which == "last") {
    const auto latest = newest_checkpoint(dir);
    if (!latest) throw CliError(no_checkpoint_message(dir));
    return checkpoint(*latest);
  }
  if (which == "best") {
    const auto history = train::MetricHistory::read_logs(dir);
    const auto best =
        train::best_epoch(history, train::Split::Valid, "Loss", train::Direction::Lowest);
    if (!best) throw CliError(no_checkpoint_message(dir));
    const train::CheckpointId id{*best, false, 0};
    if (!fs::is_directory(store.path(id), ec)) {
      throw CliError("the checkpoint of the best epoch (" + id.name() + ") of run " + dir.string() +
                     " is gone");
    }
    return checkpoint(id);
  }
  if (const auto id = train::CheckpointId::parse(which)) {
    if (!fs::is_directory(store.path(*id), ec)) {
      std::string present;
      for (const auto& c : store.list()) present += (present.empty() ? "" : ", ") + c.name();
      throw CliError("run " + dir.string() + " has no checkpoint " + which +
                     " (present: " + (present.empty() ? "none" : present) + ")");
    }
    return checkpoint(*id);
  }
  if (fs::is_regular_file(which, ec)) return {fs::path(which), which};
  throw CliError("--checkpoint " + which +
                 ": expected final, last, best, a checkpoint name (epoch-3) or a "
                 ".safetensors file");
}

void check_model_metadata(const ModelFile& file, const ModelSpec& spec) {
  store::NamedTensors tensors;
  try {
    tensors = store::read_safetensors(file.path);
  } catch (const Error& e) {
    throw CliError(first_line(e.what()));
  }
  const auto it = tensors.metadata.find("config");
  if (it == tensors.metadata.end()) return;  // a file from elsewhere: the load checks keys
  ModelSpec stored;
  try {
    stored = ModelSpec::from_json(nlohmann::json::parse(it->second));
  } catch (const std::exception&) {
    return;  // not an `ember train` model config
  }
  if (stored.name != spec.name || stored.config != spec.config) {
    throw CliError(file.path.string() + " holds a '" + stored.name +
                   "' model that differs from the run's '" + spec.name +
                   "' model (run.json); the file belongs to another run");
  }
}

std::string first_line(const std::string& message) {
  return message.substr(0, message.find('\n'));
}

std::string describe(const nn::LoadError& e) {
  std::ostringstream os;
  const auto list = [&](const char* what, const std::vector<std::string>& keys) {
    if (keys.empty()) return;
    if (os.tellp() > 0) os << ", ";
    os << keys.size() << " " << what << " (" << keys.front() << (keys.size() > 1 ? ", ..." : "")
       << ")";
  };
  list("missing keys", e.missing);
  list("unexpected keys", e.unexpected);
  list("mismatched", e.mismatched);
  return os.str();
}

}  // namespace ember::cli
