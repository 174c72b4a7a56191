// `ember train`: trains a built-in model on Fashion-MNIST or MNIST with the Learner.
#include "ember/train/train.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstring>
#include <iostream>
#include <map>
#include <sstream>

#include "commands.hpp"
#include "ember/data/loader.hpp"
#include "ember/dist/process_group.hpp"
#include "ember/optim/optim.hpp"
#include "ember/store/weights.hpp"
#include "launch.hpp"
#include "optimizer.hpp"

namespace ember::cli {

namespace fs = std::filesystem;

Device parse_device(const std::string& text) {
  try {
    return Device::parse(text);
  } catch (const Error& e) {
    throw CliError("--device " + text + ": " + first_line(e.what()));
  }
}

void set_threads(const Device& device, int n) {
  if (n > 0) set_num_threads(device, n);
}

namespace {
/// A validator of finite numbers; `problem(v)` says what is wrong with `v` ("" when nothing).
template <class F>
CLI::Validator finite_number(const std::string& description, F problem) {
  return CLI::Validator(
      [problem](std::string& text) -> std::string {
        double v = 0;
        if (!CLI::detail::lexical_cast(text, v) || !std::isfinite(v)) {
          return "'" + text + "' is not a number";
        }
        const std::string p = problem(v);
        return p.empty() ? p : p + ", got " + text;
      },
      description);
}
}  // namespace

CLI::Validator positive_number() {
  return finite_number("POSITIVE",
                       [](double v) { return v > 0 ? "" : std::string("must be > 0"); });
}
CLI::Validator non_negative_number() {
  return finite_number("NONNEGATIVE",
                       [](double v) { return v >= 0 ? "" : std::string("must be >= 0"); });
}

CLI::Validator number_in(double low, double high, bool high_included) {
  const std::string range = "[" + CLI::detail::to_string(low) + ", " +
                            CLI::detail::to_string(high) + (high_included ? "]" : ")");
  return finite_number("NUMBER in " + range, [=](double v) {
    const bool inside = v >= low && (high_included ? v <= high : v < high);
    return inside ? std::string() : "must be in " + range;
  });
}

CLI::Validator whole_number() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) {
          return "must be a whole number >= 0, got '" + text + "'";
        }
        return {};
      },
      "UINT");
}

CLI::Validator whole_number_in(std::int64_t low, std::int64_t high) {
  const std::string range = "[" + std::to_string(low) + ", " + std::to_string(high) + "]";
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        std::int64_t v = 0;
        const char* end = text.data() + text.size();
        const auto [p, ec] = std::from_chars(text.data(), end, v);
        if (text.empty() || ec != std::errc() || p != end || v < low || v > high) {
          return "must be a whole number in " + range + ", got '" + text + "'";
        }
        return {};
      },
      "INT in " + range);
}

CLI::App* add_train_command(CLI::App& app, TrainArgs& a) {
  CLI::App* sub = app.add_subcommand(
      "train", "Train a built-in model (default: the CNN on Fashion-MNIST) into a run directory");
  sub->add_option("--dataset", a.dataset,
                  "fashion-mnist or mnist, optionally followed by the folder of its IDX files")
      ->expected(1, 2)
      ->capture_default_str();
  sub->add_option("--model", a.model, "Built-in model")
      ->check(CLI::IsMember(model_names()))
      ->capture_default_str();
  sub->add_option("--epochs", a.epochs,
                  "Epochs to train (with --resume: more than the run's extends it)")
      ->check(whole_number_in(std::size_t{1}, std::size_t{100000}))
      ->capture_default_str();
  sub->add_option("--batch-size", a.batch_size, "Images per batch")
      ->check(whole_number_in(std::size_t{1}, std::size_t{65536}))
      ->capture_default_str();
  sub->add_option("--optimizer", a.optimizer, "Optimizer")
      ->check(CLI::IsMember({"adam", "adamw", "sgd"}))
      ->capture_default_str();
  sub->add_option("--lr", a.lr, "Peak learning rate")
      ->check(positive_number())
      ->capture_default_str();
  sub->add_option("--weight-decay", a.weight_decay,
                  "Weight decay (decoupled for adamw, an L2 penalty otherwise)")
      ->check(non_negative_number())
      ->capture_default_str();
  sub->add_option("--schedule", a.schedule,
                  "Learning-rate schedule: constant, cosine (to 0 at the end) or step")
      ->check(CLI::IsMember({"constant", "cosine", "step"}))
      ->capture_default_str();
  sub->add_option("--warmup", a.warmup_epochs,
                  "Epochs of linear warmup from lr/100 (fractions allowed)")
      ->check(non_negative_number())
      ->capture_default_str();
  sub->add_option("--step-epochs", a.step_epochs, "step schedule: epochs between decays")
      ->check(whole_number_in(std::size_t{1}, std::size_t{100000}))
      ->capture_default_str();
  sub->add_option("--step-gamma", a.step_gamma, "step schedule: factor of each decay")
      ->check(number_in(0.0, 1.0, true))
      ->capture_default_str();
  sub->add_option("--augment", a.augment,
                  "Training-image augmentation: none, flip (horizontal, p = 0.5) or crop-flip "
                  "(random crop of the image padded by 2, then the flip)")
      ->check(CLI::IsMember({"none", "flip", "crop-flip"}))
      ->capture_default_str();
  sub->add_option("--label-smoothing", a.label_smoothing,
                  "Label smoothing of the cross-entropy loss, in [0, 1)")
      ->check(number_in(0.0, 1.0, false))
      ->capture_default_str();
  sub->add_option("--channels", a.channels, "cnn: the widths of its two conv blocks (e.g. 32 64)")
      ->expected(2)
      ->check(whole_number_in(std::int64_t{1}, std::int64_t{4096}));
  sub->add_option("--hidden", a.hidden,
                  "cnn: the width of its hidden Linear layer; mlp: the widths of its hidden "
                  "layers (e.g. 512 256)")
      ->expected(1, 16)
      ->check(whole_number_in(std::int64_t{1}, std::int64_t{1} << 20));
  sub->add_option("--dropout", a.dropout,
                  "Dropout probability of the model's classifier, in [0, 1)")
      ->check(number_in(0.0, 1.0, false));
  sub->add_option("--seed", a.seed, "Seed of initialisation, shuffling, dropout, augmentation")
      ->check(whole_number())
      ->capture_default_str();
  sub->add_option("--limit", a.limit, "Use only the first N training images (0: all)")
      ->check(whole_number())
      ->capture_default_str();
  sub->add_option("--valid-size", a.valid_size,
                  "Training images held out for validation (at most a tenth of them)")
      ->check(whole_number_in(std::size_t{1}, std::size_t{1} << 30))
      ->capture_default_str();
  sub->add_option("--mixed-precision", a.mixed_precision,
                  "Mixed-precision training: none (f32), bf16, or f16 with loss scaling "
                  "(matmul/conv in that dtype, parameters and optimizer in f32)")
      ->check(CLI::IsMember({"none", "bf16", "f16"}))
      ->capture_default_str();
  sub->add_option("--device", a.device,
                  "Ember device: cpu, cuda[:N], vulkan[:N] (autodiff is added; default: "
                  "EMBER_DEVICE when set)")
      ->envname("EMBER_DEVICE")
      ->capture_default_str();
  sub->add_option("--run-dir", a.run_dir, "Run directory (default: runs/<dataset>-<model>)");
  CLI::Option* resume =
      sub->add_flag("--resume", a.resume,
                    "Continue the run in --run-dir from its newest checkpoint, with its settings");
  sub->add_flag("--overwrite", a.overwrite, "Replace a run already in --run-dir")->excludes(resume);
  sub->add_option("--workers", a.workers, "Threads preparing batches")
      ->check(whole_number_in(std::size_t{0}, std::size_t{64}))
      ->capture_default_str();
  sub->add_option("--threads", a.threads,
                  "CPU kernel threads (default: EMBER_NUM_THREADS or all cores)")
      ->check(whole_number_in(1, 1024));
  sub->add_option("--keep", a.keep, "Epoch checkpoints to keep besides the best")
      ->check(whole_number_in(std::size_t{1}, TrainSettings::kMaxKeep))
      ->capture_default_str();
  sub->add_flag("--no-tui", a.no_tui, "Plain progress lines instead of the dashboard");
  sub->add_option("--nproc", a.nproc,
                  "Data-parallel processes on this machine (short for `ember launch --nproc N "
                  "-- ember train ...`); --batch-size is per process")
      ->check(whole_number_in(1, 1024))
      ->capture_default_str();
  return sub;
}

namespace {

/// The options whose values must match a run being resumed: option name -> JSON pointer
/// into RunConfig::to_json().
const std::map<std::string, std::string>& resume_checked_options() {
  static const std::map<std::string, std::string> m = {
      {"--model", "/model/name"},
      {"--batch-size", "/train/batch_size"},
      {"--optimizer", "/train/optimizer"},
      {"--lr", "/train/lr"},
      {"--weight-decay", "/train/weight_decay"},
      {"--schedule", "/train/schedule"},
      {"--warmup", "/train/warmup_epochs"},
      {"--step-epochs", "/train/step_epochs"},
      {"--step-gamma", "/train/step_gamma"},
      {"--augment", "/train/augment"},
      {"--label-smoothing", "/train/label_smoothing"},
      {"--channels", "/model/config/channels"},
      {"--dropout", "/model/config/dropout"},
      {"--seed", "/train/seed"},
      {"--limit", "/data/limit"},
      {"--valid-size", "/data/valid_size"},
      {"--dataset", "/data/name"},
      {"--mixed-precision", "/train/mixed_precision"}};
  return m;
}

/// The run configuration the options describe.
RunConfig config_from_args(const TrainArgs& a) {
  RunConfig c;
  c.data = dataset_defaults(a.dataset.at(0));
  if (a.dataset.size() > 1) c.data.dir = fs::absolute(a.dataset[1]).string();
  c.data.limit = a.limit;
  c.data.valid_size = a.valid_size;
  c.model = ModelSpec::defaults(a.model, c.data.channels, c.data.size,
                                static_cast<std::int64_t>(c.data.classes.size()));
  nlohmann::json& mc = c.model.config;
  if (!a.channels.empty()) {
    if (a.model != "cnn") throw CliError("--channels applies to the cnn model only");
    mc["channels"] = a.channels;
  }
  if (!a.hidden.empty()) {
    if (a.model == "cnn" && a.hidden.size() != 1) {
      throw CliError("--hidden: the cnn has one hidden Linear layer, got " +
                     std::to_string(a.hidden.size()) + " widths");
    }
    if (a.model == "cnn") {
      mc["d_hidden"] = a.hidden[0];
    } else {
      mc["hidden"] = a.hidden;
    }
  }
  if (a.dropout >= 0) mc["dropout"] = a.dropout;
  c.train = {.epochs = a.epochs,
             .batch_size = a.batch_size,
             .optimizer = a.optimizer,
             .lr = a.lr,
             .weight_decay = a.weight_decay,
             .schedule = a.schedule,
             .warmup_epochs = a.warmup_epochs,
             .step_epochs = a.step_epochs,
             .step_gamma = a.step_gamma,
             .augment = a.augment,
             .label_smoothing = a.label_smoothing,
             .seed = a.seed,
             .keep = a.keep,
             .mixed_precision = a.mixed_precision};
  return c;
}

/// Whether training wrote anything into a run directory (checkpoints, logs, the final model).
bool holds_training_output(const fs::path& dir) {
  std::error_code ec;
  for (const char* f : {"checkpoints", "train.jsonl", "valid.jsonl", "model.safetensors"}) {
    if (fs::exists(dir / f, ec)) return true;
  }
  return false;
}

/// A run directory holds a run when it has a run.json or training output.
bool holds_run(const fs::path& dir) {
  std::error_code ec;
  return fs::exists(run_file(dir), ec) || holds_training_output(dir);
}

/// The settings of the run to train: a fresh one from the options, or the saved one on
/// resume (options given on the command line must agree with it).
RunConfig prepare_run(const TrainArgs& a, const CLI::App& sub, const fs::path& dir) {
  std::error_code ec;
  if (a.resume && fs::exists(run_file(dir), ec)) {
    RunConfig saved = RunConfig::load(dir);
    // Options not given take the run's model and dataset, so that e.g. --hidden is read as
    // the widths of the run's model.
    TrainArgs given = a;
    if (sub.count("--model") == 0) given.model = saved.model.name;
    if (sub.count("--dataset") == 0) given.dataset = {saved.data.name};
    const RunConfig wanted = config_from_args(given);
    const nlohmann::json have = saved.to_json(), want = wanted.to_json();
    auto checked = resume_checked_options();
    if (sub.count("--epochs") != 0 && a.epochs != saved.train.epochs) {
      // --epochs may extend a resumed run (train on after its last epoch), not shorten it.
      if (a.epochs < saved.train.epochs) {
        throw CliError("cannot resume " + dir.string() + ": --epochs " + std::to_string(a.epochs) +
                       " is fewer than the run's " + std::to_string(saved.train.epochs) +
                       " (run.json); --resume can extend a run, not shorten it");
      }
      std::cout << "Extending the run from " << saved.train.epochs << " to " << a.epochs
                << " epochs"
                << (saved.train.schedule != "constant"
                        ? "; the " + saved.train.schedule +
                              " schedule is recomputed for the new length"
                        : std::string())
                << std::endl;
      saved.train.epochs = a.epochs;
    }
    // --keep changes no result: a resumed run takes a new value, else the saved one.
    if (sub.count("--keep") != 0) saved.train.keep = a.keep;
    checked["--hidden"] = given.model == "cnn" ? "/model/config/d_hidden" : "/model/config/hidden";
    for (const auto& [option, pointer] : checked) {
      const nlohmann::json::json_pointer p(pointer);
      if (sub.count(option) == 0) continue;
      const auto h = have.contains(p) ? have.at(p) : nlohmann::json();
      const auto w = want.contains(p) ? want.at(p) : nlohmann::json();
      if (h != w) {
        throw CliError("cannot resume " + dir.string() + ": " + option + " " + w.dump() +
                       " differs from the run's " + h.dump() +
                       " (run.json); a resumed run keeps its settings");
      }
    }
    if (a.dataset.size() > 1) {
      saved.data.dir = wanted.data.dir;
    } else if (!saved.data.dir.empty() && !fs::is_directory(saved.data.dir, ec)) {
      throw CliError("the " + saved.data.name + " folder of run " + dir.string() + ", " +
                     saved.data.dir + " (run.json), is gone: give its new place with --dataset " +
                     saved.data.name + " DIR");
    }
    return saved;
  }
  RunConfig wanted = config_from_args(a);
  if (!a.resume && !a.overwrite && holds_run(dir)) {
    throw CliError(dir.string() +
                   " already holds a run: continue it with --resume, replace it with "
                   "--overwrite, or choose another --run-dir");
  }
  if (a.resume && holds_run(dir)) {
    throw CliError(dir.string() +
                   " holds checkpoints or logs but no run.json: it was not "
                   "written by `ember train`");
  }
  return wanted;
}

/// An exclusive lock on a run directory (flock on the folder itself), held while it lives, so
/// that two `ember train` processes never write into the same run.
class RunDirLock {
 public:
  explicit RunDirLock(const fs::path& dir)
      : fd_(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) {
    if (fd_ < 0) {
      throw CliError("cannot open the run directory " + dir.string() + ": " + std::strerror(errno));
    }
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      ::close(fd_);
      throw CliError(dir.string() +
                     " is in use by another `ember train`: wait for it to end, or choose "
                     "another --run-dir");
    }
  }
  RunDirLock(const RunDirLock&) = delete;
  RunDirLock& operator=(const RunDirLock&) = delete;
  ~RunDirLock() { ::close(fd_); }

 private:
  int fd_;
};

/// The learning-rate schedule over the run's optimizer steps.
optim::LrScheduler make_scheduler(const TrainSettings& t, std::size_t batches_per_epoch) {
  const auto total = static_cast<std::int64_t>(t.epochs * batches_per_epoch);
  const auto too_long = [&] {
    std::ostringstream os;
    os << "--warmup " << t.warmup_epochs << " epochs is not shorter than the run (" << t.epochs
       << " epochs)";
    return CliError(os.str());
  };
  if (t.warmup_epochs >= static_cast<double>(t.epochs)) throw too_long();
  const auto warm = static_cast<std::int64_t>(
      std::llround(t.warmup_epochs * static_cast<double>(batches_per_epoch)));
  if (warm >= total) throw too_long();
  const double start = t.lr / 100;
  if (t.schedule == "cosine") {
    return optim::CosineAnnealingLrSchedulerConfig{.initial_lr = t.lr,
                                                   .num_iters = total - warm,
                                                   .min_lr = 0.0,
                                                   .warmup_iters = warm,
                                                   .warmup_initial_lr = start}
        .init();
  }
  optim::LrSchedulerConfig main = optim::ConstantLrSchedulerConfig{.lr = t.lr};
  if (t.schedule == "step") {
    main = optim::StepLrSchedulerConfig{
        .initial_lr = t.lr,
        .step_size = static_cast<std::int64_t>(t.step_epochs * batches_per_epoch),
        .gamma = t.step_gamma};
  } else if (t.schedule != "constant") {
    throw CliError("unknown schedule '" + t.schedule + "' (constant, cosine, step)");
  }
  if (warm == 0) return main.init();
  return optim::SequentialLrSchedulerConfig{
      .schedulers = {optim::LinearLrSchedulerConfig{
                         .initial_lr = start, .final_lr = t.lr, .num_iters = warm},
                     main},
      .milestones = {warm}}
      .init();
}

/// The train step and the valid step: cross-entropy over the logits, with label smoothing
/// `smoothing` (0 for the validation loss, which is then comparable across runs).
train::ClassificationOutput<Dispatch> classify(const auto& model, const data::ImageBatch<>& b,
                                               double smoothing) {
  auto logits = model.forward(b.images);
  nn::CrossEntropyLossConfig loss_config;
  if (smoothing > 0) loss_config.smoothing = smoothing;
  auto loss = loss_config.init(b.images.device()).forward(logits, b.targets);
  return {loss, logits, b.targets};
}

/// The Learner's mixed-precision dtype of --mixed-precision ("none", "bf16", "f16").
std::optional<DType> mixed_precision_dtype(const std::string& name) {
  if (name == "bf16") return DType::BF16;
  if (name == "f16") return DType::F16;
  if (name == "none") return std::nullopt;
  throw CliError("--mixed-precision: expected none, bf16 or f16, got '" + name + "'");
}

/// Everything fit() needs besides the model.
struct Job {
  const RunConfig& config;
  const TrainArgs& args;
  fs::path dir;
  Device device;
  std::vector<data::DatasetPtr<data::ImageU8>> parts;  // {train, valid}
  std::shared_ptr<dist::ProcessGroup> pg;              // data parallel (null: one process)
};

template <class M>
int fit(M model, const Job& job) {
  const RunConfig& cfg = job.config;
  const TrainSettings& t = cfg.train;
  const auto& parts = job.parts;
  const Device plain = job.device.without_autodiff();

  const bool main_rank = !job.pg || job.pg->rank() == 0;
  const std::size_t world = job.pg ? static_cast<std::size_t>(job.pg->world_size()) : 1;
  const std::size_t rank = job.pg ? static_cast<std::size_t>(job.pg->rank()) : 0;
  auto train_builder =
      data::DataLoaderBuilder(NormalizingBatcher(job.device, cfg.data.mean, cfg.data.std))
          .batch_size(t.batch_size)
          .num_workers(job.args.workers);
  if (job.pg) {
    // Each rank reads its shard of the epoch's shuffle (data::DistributedSampler).
    train_builder.sampler({.num_replicas = world, .rank = rank, .shuffle = true, .seed = t.seed});
  } else {
    train_builder.shuffle(t.seed);
  }
  if (t.augment == "crop-flip") {
    const auto size = static_cast<std::size_t>(cfg.data.size);
    train_builder.augment(
        [size](data::ImageU8 im, data::Rng& rng) {
          return data::HorizontalFlip{0.5}(data::RandomCrop{size, size, 2}(im, rng), rng);
        },
        t.seed);
  } else if (t.augment == "flip") {
    train_builder.augment(
        [](data::ImageU8 im, data::Rng& rng) { return data::HorizontalFlip{0.5}(im, rng); },
        t.seed);
  } else if (t.augment != "none") {
    throw CliError("unknown augmentation '" + t.augment + "' (none, flip, crop-flip)");
  }
  auto train_loader = train_builder.build(parts[0]);
  auto valid_builder =
      data::DataLoaderBuilder(NormalizingBatcher(plain, cfg.data.mean, cfg.data.std))
          .batch_size(std::max<std::size_t>(t.batch_size, 256))
          .num_workers(job.args.workers);
  if (job.pg) valid_builder.sampler({.num_replicas = world, .rank = rank, .shuffle = false});
  auto valid_loader = valid_builder.build(parts[1]);

  const std::size_t nb = train_loader.num_batches();
  if (main_rank) {
    std::cout << "ember train: " << cfg.model.name << " (" << nn::num_params(model)
              << " parameters) on " << cfg.data.name << ": " << parts[0]->len() << " train / "
              << parts[1]->len() << " valid images, " << t.epochs << " epochs of " << nb
              << " batches of " << t.batch_size << ", " << t.optimizer << " lr " << t.lr << " "
              << t.schedule << (t.augment != "none" ? ", augment " + t.augment : std::string())
              << (t.label_smoothing > 0
                      ? ", label smoothing " + train::format_value(t.label_smoothing, "")
                      : std::string())
              << (t.mixed_precision != "none" ? ", mixed precision " + t.mixed_precision
                                              : std::string())
              << ", device " << job.device.to_string() << ", " << num_threads(job.device)
              << " threads"
              << (job.pg ? ", " + std::to_string(world) + " processes (global batch " +
                               std::to_string(world * t.batch_size) + ")"
                         : std::string())
              << "\n"
              << "run directory: " << job.dir.string() << std::endl;
  }

  using Batch = data::ImageBatch<>;
  auto builder = train::LearnerBuilder(std::move(model), AnyOptimizer(t.optimizer, t.weight_decay),
                                       train_loader, valid_loader);
  // On a GPU the dashboard shows the device memory held by tensors beside the host's.
  if (job.device.kind() != DeviceKind::Cpu) builder.metric(train::TensorMemoryMetric{});
  auto learner =
      builder
          .train_step(
              [smoothing = t.label_smoothing](M& m, Batch& b) { return classify(m, b, smoothing); })
          .valid_step([](const M& m, Batch& b) { return classify(m, b, 0.0); })
          .lr_scheduler(make_scheduler(t, nb))
          .metric(train::LossMetric{})
          .metric(train::AccuracyMetric{})
          .metric(train::LearningRateMetric{})
          .metric(train::ThroughputMetric{})
          .metric(train::CpuMemoryMetric{})
          .num_epochs(t.epochs)
          .seed(t.seed)
          .run_dir(job.dir)
          .checkpoints(t.keep)
          .resume(job.args.resume)
          .overwrite(job.args.overwrite)
          .model_config(cfg.model.to_json())
          .renderer(job.args.no_tui ? train::RendererKind::Text : train::RendererKind::Auto)
          .process_group(job.pg)
          .mixed_precision(mixed_precision_dtype(t.mixed_precision))
          .build();

  const auto start = std::chrono::steady_clock::now();
  M trained = learner.fit();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  if (!main_rank) return 0;  // rank 0 writes the model and reports
  if (job.pg && learner.allreduce_steps() > 0) {
    // Includes waiting for the slowest rank to finish its backward pass.
    std::ostringstream ms;
    ms.setf(std::ios::fixed);
    ms.precision(2);
    ms << 1000.0 * learner.allreduce_seconds() / static_cast<double>(learner.allreduce_steps());
    std::cout << "Gradient all-reduce: " << ms.str() << " ms per step over "
              << learner.allreduce_steps() << " steps, waiting for the slowest rank included"
              << std::endl;
  }
  if (const auto scale = learner.loss_scale()) {
    std::cout << "Loss scaling (f16): scale " << *scale << " at the end, "
              << learner.skipped_steps() << " batches left out for inf/NaN gradients" << std::endl;
  }
  const auto reason = learner.stop_reason();
  const auto& history = learner.history();
  const std::size_t last = history.last_epoch();
  const auto acc = history.value(train::Split::Valid, "Accuracy", last);
  if (reason == train::StopReason::Interrupted) {
    std::cout << "Stopped after " << train::format_duration(seconds) << "; checkpoint "
              << learner.last_checkpoint().string() << ". Continue with: ember train --resume "
              << "--run-dir " << job.dir.string() << std::endl;
    return 0;
  }
  const fs::path final_model = job.dir / "model.safetensors";
  // A resumed run that had finished trains no epoch: its final model, and a quantized model
  // made from it, stay as they are.
  bool unchanged = false;
  std::error_code final_ec;
  if (job.args.resume && fs::is_regular_file(final_model, final_ec)) {
    try {
      const auto meta = store::WeightsReader(final_model).metadata();
      const auto it = meta.find("ember.epoch");
      unchanged = it != meta.end() && it->second == std::to_string(last);
    } catch (const Error&) {
    }
  }
  if (!unchanged) {
    nn::save(trained, final_model,
             {{"config", cfg.model.to_json().dump()}, {"ember.epoch", std::to_string(last)}});
    // A quantized model of the earlier final model (`ember quantize`) is out of date now.
    if (fs::remove(quantized_model_path(job.dir), final_ec)) {
      std::cout << "Removed the out-of-date " << quantized_model_path(job.dir).string()
                << " (make a new one with `ember quantize " << job.dir.string() << "`)\n";
    }
    for (const char* f : {"eval-quantized.json", "confusion_matrix-quantized.csv"})
      fs::remove(job.dir / f, final_ec);
  }
  std::cout << "Trained " << last << " epochs in " << train::format_duration(seconds);
  if (acc) std::cout << "; validation accuracy " << train::format_value(*acc, "%");
  std::cout << ".\nFinal model: " << final_model.string() << "\nTest it: ember eval "
            << job.dir.string() << std::endl;
  const auto loss = history.value(train::Split::Train, "Loss", last);
  if (loss && !std::isfinite(*loss)) {
    std::cerr << "warning: the training loss of epoch " << last
              << " is not a number: the training diverged (try a smaller --lr)" << std::endl;
  }
  return 0;
}

}  // namespace

/// `ember train --nproc N`: this command line without --nproc, run by `ember launch`.
int relaunch(const TrainArgs& a) {
  std::vector<std::string> cmd = {"/proc/self/exe"};
  char self[4096];
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (n > 0) cmd[0] = std::string(self, static_cast<std::size_t>(n));
  const auto& args = command_line();
  for (std::size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--nproc") {
      ++i;  // and its value
      continue;
    }
    if (args[i].rfind("--nproc=", 0) == 0) continue;
    cmd.push_back(args[i]);
  }
  return launch_processes({.nproc = a.nproc}, cmd);
}

/// Rank r > 0 of a data-parallel run: once rank 0 prepared the run directory, the same run
/// (read from its run.json), writing nothing.
int run_train_replica(const TrainArgs& a, const fs::path& dir,
                      std::shared_ptr<dist::ProcessGroup> pg, const Device& device) {
  pg->barrier();  // rank 0 checked the options and wrote run.json
  RunConfig cfg = RunConfig::load(dir);
  auto parts = train_valid_split(cfg.data, cfg.train.seed);
  cfg.data.train_items = parts[0]->len();
  cfg.data.valid_items = parts[1]->len();
  Dispatch::seed(cfg.train.seed);
  const Job job{cfg, a, dir, device, std::move(parts), std::move(pg)};
  return with_model(cfg.model, device, [&](auto model) { return fit(std::move(model), job); });
}

int run_train(const TrainArgs& a, const CLI::App& sub) {
  if (a.nproc > 1 && !dist::ProcessGroupOptions::env_present()) return relaunch(a);
  if (a.dataset.empty()) throw CliError("--dataset needs a name");
  dataset_defaults(a.dataset[0]);  // rejects an unknown name before anything else
  const fs::path dir =
      a.run_dir.empty() ? fs::path("runs") / (a.dataset[0] + "-" + a.model) : fs::path(a.run_dir);
  Device device = parse_device(a.device);
  if (!device.is_autodiff()) device = device.autodiff();
  set_threads(device, a.threads);
  // Started by `ember launch` (WORLD_SIZE set): data parallel; rank 0 does what a single
  // process does, the other ranks train along and write nothing.
  std::shared_ptr<dist::ProcessGroup> pg;
  if (dist::ProcessGroupOptions::env_present()) {
    pg = dist::ProcessGroup::init_from_env();
    if (pg->world_size() == 1) pg.reset();
  }
  if (pg && pg->rank() != 0) return run_train_replica(a, dir, pg, device);
  RunConfig cfg = prepare_run(a, sub, dir);
  const std::size_t world = pg ? static_cast<std::size_t>(pg->world_size()) : 1;
  std::error_code exists_ec;
  if (a.resume && fs::exists(run_file(dir), exists_ec) && cfg.train.processes != world) {
    throw CliError("cannot resume " + dir.string() + " with " + std::to_string(world) +
                   " process(es): it was trained with " + std::to_string(cfg.train.processes) +
                   " (run.json; each process's batches depend on their number): use --nproc " +
                   std::to_string(cfg.train.processes));
  }
  cfg.train.processes = world;
  // Load the data before writing anything, so a missing dataset leaves no run behind.
  auto parts = train_valid_split(cfg.data, cfg.train.seed);
  cfg.data.train_items = parts[0]->len();
  cfg.data.valid_items = parts[1]->len();
  // A schedule that does not fit the run (the loader's batches per epoch) fails here, before
  // anything is written or replaced.
  make_scheduler(cfg.train,
                 (cfg.data.train_items + cfg.train.batch_size - 1) / cfg.train.batch_size);
  std::error_code ec;
  const bool had_dir = fs::exists(dir, ec);
  fs::create_directories(dir, ec);
  if (ec) throw CliError("cannot create the run directory " + dir.string() + ": " + ec.message());
  const RunDirLock lock(dir);
  if (a.overwrite) {
    // The run being replaced goes only now, once the new one's data has loaded.
    for (const char* f :
         {"run.json", "model.safetensors", "model-quantized.safetensors", "eval.json",
          "confusion_matrix.csv", "eval-quantized.json", "confusion_matrix-quantized.csv",
          "train.jsonl", "valid.jsonl", "summary.json", "summary.txt"}) {
      fs::remove(dir / f, ec);
    }
    fs::remove_all(dir / "checkpoints", ec);
  }
  const bool had_run_file = fs::exists(run_file(dir), ec);
  cfg.save(dir);
  try {
    if (pg) pg->barrier();           // the other ranks read run.json now
    Dispatch::seed(cfg.train.seed);  // the initial weights depend only on the seed
    const Job job{cfg, a, dir, device, std::move(parts), pg};
    return with_model(cfg.model, device, [&](auto model) { return fit(std::move(model), job); });
  } catch (...) {
    // A new run that failed before its first checkpoint or log (a bad setting, a model too
    // large for memory) leaves nothing behind: no run.json that would block the next try.
    if (!had_run_file && !holds_training_output(dir)) {
      fs::remove(run_file(dir), ec);
      if (!had_dir) fs::remove(dir, ec);  // only when empty
    }
    throw;
  }
}

}  // namespace ember::cli
