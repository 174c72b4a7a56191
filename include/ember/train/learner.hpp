// The Learner (Burn's burn-train Learner): the training loop with validation, metrics, logs,
// checkpoints, resume, early stopping, gradient accumulation and a dashboard.
//
//   using Batch = data::ImageBatch<>;
//   auto learner =
//       train::LearnerBuilder(model, optim::AdamConfig{}.init(), train_loader, valid_loader)
//           .lr_scheduler(optim::CosineAnnealingLrSchedulerConfig{.initial_lr = 1e-3,
//                                                                  .num_iters = 5000}.init())
//           .train_step([&](Cnn<>& m, const Batch& b) { return m.forward_classification(b); })
//           .valid_step([&](const Cnn<>& m, const Batch& b) { return m.forward_classification(b);
//           }) .metric(train::LossMetric{}) .metric(train::AccuracyMetric{}) .num_epochs(10)
//           .run_dir("runs/cnn")
//           .build();
//   Cnn<> trained = learner.fit();
//
// Each epoch e (1-based): the train loader's iter(e - 1) batches go through the train step on
// the model (which lives on an autodiff device); the Learner differentiates the step's loss,
// steps the optimizer with the scheduler's rate (every `grads_accumulation` batches), and
// updates the train metrics. Then `model.valid()` (no autodiff, eval mode) runs the valid step
// over the valid loader. After each epoch: a checkpoint `<run>/checkpoints/epoch-<e>/`, the
// logs `<run>/train.jsonl` / `valid.jsonl`, old checkpoints pruned (the last N and the best are
// kept), and the early-stopping rule. At the end the summary table is printed and saved.
//
// Stopping (dashboard `q` + `y`, SIGINT/SIGTERM, or the stop token) takes effect after the
// current optimizer step: a checkpoint of that point (`epoch-<e>-batch-<k>`) is written and
// fit() returns. With resume, fit() continues from the latest checkpoint; with a seed and
// loaders whose order depends only on the epoch, the resumed run computes exactly what an
// uninterrupted run computes.
//
// Data parallel (PyTorch's DDP): with process_group(pg), every rank runs fit() on its shard
// of the data (a loader with a data::DistributedSampler). At the start the parameters and
// buffers are broadcast from rank 0; after each backward pass the gradients are averaged
// across ranks (dist::all_reduce_gradients, in buckets, after backward); the metrics see the
// global batch (every rank's outputs gathered); BatchNorm buffers are taken from rank 0
// before each validation; stop requests are agreed by all ranks; only rank 0 writes
// checkpoints, logs and the summary and shows progress. Resume reads the checkpoint on every
// rank (the run directory must be visible to all of them).
//
// Mixed precision (mixed_precision(DType::BF16 or F16); torch.autocast + torch.amp.GradScaler,
// Lightning's precision="bf16-mixed" / "16-mixed"): the train and valid steps run under
// ember::Autocast (matmul, linear, conv and attention in that dtype, softmax, norms and
// cross-entropy in f32; ember/core/autocast.hpp) while the parameters and the optimizer
// stay f32. With f16 the loss is scaled before backward by an optim::GradScaler: the
// gradients are unscaled (after the data-parallel average), a batch whose gradients hold
// inf/NaN is left out of the step (with accumulation: out of its window) and the scale
// adapts; its state is saved in the checkpoints (`grad_scaler.json`).
#pragma once

#include <array>
#include <chrono>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <stop_token>
#include <type_traits>
#include <utility>
#include <vector>

#include "ember/backend/autodiff.hpp"
#include "ember/core/autocast.hpp"
#include "ember/dispatch/dispatch.hpp"
#include "ember/dist/ddp.hpp"
#include "ember/module/module.hpp"
#include "ember/optim/grad_scaler.hpp"
#include "ember/optim/gradients.hpp"
#include "ember/optim/lr_scheduler.hpp"
#include "ember/optim/record.hpp"
#include "ember/train/distributed.hpp"
#include "ember/train/loader.hpp"
#include "ember/train/output.hpp"
#include "ember/train/session.hpp"

namespace ember::train {

template <class M, class O, class TB, class VB>
class LearnerBuilder;

namespace detail {

/// Multiplies every parameter gradient of `model` held in `grads` by `factor`.
template <class M>
void scale_gradients(const M& model, optim::GradientsParams& grads, double factor) {
  nn::visit(model, [&](const std::string&, const auto& leaf) {
    if constexpr (optim::detail::is_float_param<decltype(leaf)>()) {
      using T = optim::detail::LeafTensor<decltype(leaf)>;
      using I = optim::detail::Inner<typename T::Backend>;
      if (auto g = grads.get_flat<I>(leaf.id())) {
        grads.insert_flat(leaf.id(), g->mul_scalar(factor), *grads.shape(leaf.id()));
      }
    }
  });
}

}  // namespace detail

/// The training loop over model M (a module template on an autodiff backend, e.g. Mlp<> on a
/// "cpu+autodiff" Dispatch device), optimizer O (optim::Adam, optim::Sgd, ...), train batches
/// TB and valid batches VB. Built by LearnerBuilder; fit() runs once.
template <class M, class O, class TB, class VB = TB>
class Learner {
 public:
  using Backend = typename nn::detail::BackendOf<M>::type;
  static_assert(!std::is_void_v<Backend>,
                "Learner: the model must be a template over its backend (template <Backend B = "
                "Dispatch> struct Model), so that valid() can rebuild it without autodiff");
  static_assert(AutodiffBackend<Backend>,
                "Learner: the model's backend must record gradients (Dispatch on a +autodiff "
                "device, or Autodiff<B>)");
  /// The model as validation sees it (nn::valid: inner backend, eval mode).
  using ValidModel = decltype(nn::valid(std::declval<const M&>()));
  using Device = typename Backend::Device;
  /// A train step after the Learner's wrapping: the gradients and the metrics' input, from
  /// the model, the batch, the autocast dtype (none: f32) and the loss scale.
  using TrainStepFn = std::function<std::pair<optim::GradientsParams, MetricInput>(
      M&, TB&, std::optional<DType>, double)>;
  using ValidStepFn = std::function<MetricInput(const ValidModel&, VB&)>;

  Learner(Learner&&) noexcept = default;
  Learner& operator=(Learner&&) noexcept = default;

  /// Trains (see the file comment) and returns the trained model. Throws what the steps,
  /// loaders, optimizer and file writes throw (the dashboard is closed first); ValueError when
  /// called twice or when the run directory holds another run; DeviceError when the model
  /// does not record gradients; IoError / nn::LoadError when a checkpoint to resume from
  /// cannot be read or does not fit the model.
  M fit() {
    detail::Session& s = *session_;
    if (device_) model_ = nn::fork(model_, *device_);
    check_trainable();
    allreduce_seconds_ = 0.0;
    allreduce_steps_ = 0;
    s.set_device(model_device());
    try {
      run(s);
    } catch (...) {
      s.abort();  // closes the dashboard before the error reaches the caller
      throw;
    }
    return model_;
  }

  /// The model as it is now (trained once fit() returned).
  const M& model() const { return model_; }
  /// Epoch values of every metric (after fit(): the whole run, resumed epochs included).
  const MetricHistory& history() const { return session_->history(); }
  /// The summary written at the end of fit().
  const Summary& summary() const { return session_->summary(); }
  /// Why fit() returned.
  StopReason stop_reason() const { return reason_; }
  /// The checkpoint folder written last (empty before the first).
  const std::filesystem::path& last_checkpoint() const { return session_->last_checkpoint(); }
  /// The checkpoint folders of the run.
  const CheckpointStore& checkpoints() const { return session_->checkpoints(); }
  const LearnerOptions& options() const { return session_->options(); }
  /// The dtype of mixed-precision training (nullopt: f32).
  std::optional<DType> mixed_precision() const { return autocast_; }
  /// f16 mixed precision: the loss scale now, and the batches left out of the optimizer
  /// steps for inf/NaN gradients (the whole run, resumed checkpoints included); nullopt and
  /// 0 otherwise.
  std::optional<double> loss_scale() const {
    return scaler_ ? std::optional<double>(scaler_->get_scale()) : std::nullopt;
  }
  std::size_t skipped_steps() const { return scaler_ ? scaler_->skipped_steps() : 0; }
  /// Data parallel: seconds spent averaging gradients across ranks, and the optimizer
  /// steps they were averaged for (0 without a process group).
  double allreduce_seconds() const { return allreduce_seconds_; }
  std::size_t allreduce_steps() const { return allreduce_steps_; }

 private:
  friend class LearnerBuilder<M, O, TB, VB>;

  Learner(M model, O optim, optim::LrScheduler scheduler, BatchLoader<TB> train,
          BatchLoader<VB> valid, TrainStepFn train_step, ValidStepFn valid_step,
          std::optional<Device> device, std::unique_ptr<detail::Session> session,
          std::shared_ptr<dist::ProcessGroup> pg, std::size_t bucket_bytes,
          std::optional<DType> autocast, std::optional<optim::GradScaler> scaler)
      : model_(std::move(model)),
        optim_(std::move(optim)),
        scheduler_(std::move(scheduler)),
        train_(std::move(train)),
        valid_(std::move(valid)),
        train_step_(std::move(train_step)),
        valid_step_(std::move(valid_step)),
        device_(std::move(device)),
        session_(std::move(session)),
        pg_(std::move(pg)),
        bucket_bytes_(bucket_bytes),
        autocast_(autocast),
        scaler_(std::move(scaler)) {}

  void run(detail::Session& s) {
    const detail::StartPoint start = s.begin(
        {train_.num_items(), train_.num_batches(), valid_.num_items(), valid_.num_batches()});
    if (start.checkpoint) load_checkpoint(*start.checkpoint, start.scheduler_state);
    if (pg_) start_replicas(start);
    reason_ = StopReason::Completed;
    for (std::size_t e = start.epoch; e <= s.options().num_epochs; ++e) {
      const bool train_done = e == start.epoch && start.train_done;
      if (!train_done && !train_epoch(e, e == start.epoch ? start.skip_batches : 0)) {
        reason_ = StopReason::Interrupted;
        break;
      }
      if (!valid_epoch(e)) {
        reason_ = StopReason::Interrupted;
        break;
      }
      save(CheckpointId{e, false, 0}, true);
      if (s.end_epoch(e)) {
        reason_ = StopReason::EarlyStopping;
        break;
      }
      if (e < s.options().num_epochs && stop_agreed()) {
        reason_ = StopReason::Interrupted;
        break;
      }
    }
    s.finish(reason_);
  }

  /// The device of the model's parameters (Dispatch), else the CPU (the static backends of
  /// this build run there); the Tensor Memory metric reports that device's memory.
  Device model_device() const {
    std::optional<Device> found;
    if constexpr (std::is_same_v<Backend, Dispatch>) {
      nn::visit(model_, [&](const std::string&, const auto& leaf) {
        if constexpr (nn::is_param_v<std::remove_cvref_t<decltype(leaf)>>) {
          if (!found) found = leaf.val().device();
        }
      });
    }
    return found.value_or(Device::cpu());
  }

  /// DeviceError unless the model's parameters record gradients (a Dispatch model on a device
  /// without "+autodiff" would only fail at the first backward pass).
  void check_trainable() const {
    if constexpr (std::is_same_v<Backend, Dispatch>) {
      std::optional<Device> plain;
      nn::visit(model_, [&](const std::string&, const auto& leaf) {
        if constexpr (nn::is_param_v<std::remove_cvref_t<decltype(leaf)>>) {
          const Device d = leaf.val().device();
          if (!plain && !d.is_autodiff()) plain = d;
        }
      });
      if (plain) {
        ember::detail::fail<DeviceError>("Learner", "the model is on ", plain->to_string(),
                                         ", which does not record gradients; create it on ",
                                         plain->autodiff().to_string(),
                                         " or pass that device to devices()");
      }
    }
  }

  /// Data parallel: all ranks must start at the same point (they read the same checkpoint);
  /// then every rank takes rank 0's parameters and buffers.
  void start_replicas(const detail::StartPoint& start) {
    const std::array<std::int64_t, 3> mine = {static_cast<std::int64_t>(start.epoch),
                                              static_cast<std::int64_t>(start.skip_batches),
                                              start.train_done ? 1 : 0};
    std::array<std::int64_t, 3> root = mine;
    pg_->broadcast(
        std::span<std::uint8_t>(reinterpret_cast<std::uint8_t*>(root.data()), sizeof root), 0);
    if (root != mine) {
      ember::detail::fail<dist::DistError>(
          "Learner", "rank ", pg_->rank(), " would start at epoch ", mine[0], ", batch ", mine[1],
          " but rank 0 at epoch ", root[0], ", batch ", root[1],
          ": all ranks must see the same run directory (checkpoints)");
    }
    dist::broadcast_module(*pg_, model_, 0);
  }

  /// A stop request: this process's, or (data parallel) any rank's, agreed by all ranks.
  bool stop_agreed() {
    const bool local = session_->stop_requested();
    return pg_ ? detail::any_rank(*pg_, local) : local;
  }

  /// The metric input of the global batch (data parallel) or this one, and the stop request
  /// (agreed by all ranks in the same exchange).
  detail::GatheredInput global_input(const MetricInput& input) {
    const bool local = session_->stop_requested();
    return pg_ ? detail::gather_metric_input(*pg_, input, local)
               : detail::GatheredInput{input, local};
  }

  /// Averages the step's gradients across ranks (data parallel).
  void average_gradients(optim::GradientsParams& grads) {
    if (!pg_) return;
    const auto t0 = std::chrono::steady_clock::now();
    dist::all_reduce_gradients(*pg_, model_, grads, bucket_bytes_);
    allreduce_seconds_ +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ++allreduce_steps_;
  }

  void reseed(std::size_t epoch, std::size_t batch) {
    if (const auto& seed = session_->options().seed) {
      // Rank 0 draws what a single process draws; other ranks draw other masks.
      const std::uint64_t rank = pg_ ? static_cast<std::uint64_t>(pg_->rank()) : 0;
      const std::uint64_t s = detail::mix_seed(*seed, epoch, batch);
      Backend::seed(rank == 0 ? s : detail::mix_seed(s, rank, 0));
    }
  }

  /// Trains epoch e from batch `skip`; false when a stop was requested (checkpoint written).
  bool train_epoch(std::size_t e, std::size_t skip) {
    detail::Session& s = *session_;
    const std::size_t nb = train_.num_batches();
    const std::size_t accum = s.options().grad_accumulation;
    s.start_split(Split::Train, e, skip);
    nn::set_training(model_, true);
    auto epoch = train_.iter(e - 1);
    std::size_t b = 0;
    while (b < skip && epoch.next()) ++b;
    optim::GradientsAccumulator acc;
    std::size_t in_window = 0;
    double window_items = 0.0, lr = 0.0;
    const auto apply = [&] {
      if (window_items == 0.0) {  // every batch of the window had inf/NaN gradients (f16)
        in_window = 0;
        return;
      }
      auto grads = acc.grads();
      detail::scale_gradients(model_, grads, 1.0 / window_items);
      optim_.step(lr, model_, grads);
      in_window = 0;
      window_items = 0.0;
    };
    while (auto batch = epoch.next()) {
      if (in_window == 0) lr = scheduler_.step();
      reseed(e, b);
      auto [grads, local_input] =
          train_step_(model_, *batch, autocast_, scaler_ ? scaler_->get_scale() : 1.0);
      batch.reset();
      ++b;
      average_gradients(grads);
      const bool finite = unscale(grads);
      const auto [input, stop] = global_input(local_input);
      if (accum == 1) {
        if (finite) optim_.step(lr, model_, grads);
      } else {
        const auto w = static_cast<double>(input.batch_size);
        if (finite) {
          detail::scale_gradients(model_, grads, w);
          acc.accumulate(model_, grads);
          window_items += w;
        }
        if (++in_window == accum) apply();
      }
      s.record(input, lr);
      if (in_window == 0 && b < nb && (pg_ ? stop : s.stop_requested())) {
        save(CheckpointId{e, true, b}, false);
        return false;
      }
    }
    if (in_window > 0) apply();
    s.end_split();
    // Data parallel: the ranks' BatchNorm statistics differ (each saw its shard); validation
    // and checkpoints use rank 0's on every rank.
    if (pg_) broadcast_buffers();
    if (stop_agreed()) {
      save(CheckpointId{e, true, nb}, true);
      return false;
    }
    return true;
  }

  /// f16 mixed precision: divides the gradients by the loss scale, adapts the scale, and says
  /// whether they are finite (the batch takes part in the step). Always true otherwise.
  bool unscale(optim::GradientsParams& grads) {
    if (!scaler_ || grads.empty()) return true;  // nothing to check, nothing learnt about S
    const bool finite = scaler_->unscale(model_, grads);
    scaler_->update(finite);
    return finite;
  }

  /// Validates epoch e; false when a stop was requested (checkpoint written).
  bool valid_epoch(std::size_t e) {
    detail::Session& s = *session_;
    s.start_split(Split::Valid, e, 0);
    reseed(e, std::numeric_limits<std::size_t>::max());
    const ValidModel vm = nn::valid(model_);
    auto epoch = valid_.iter(e - 1);
    while (auto batch = epoch.next()) {
      const auto [input, stop] = global_input([&] {
        const Autocast amp(autocast_);
        return valid_step_(vm, *batch);
      }());
      s.record(input, std::numeric_limits<double>::quiet_NaN());
      if (pg_ ? stop : s.stop_requested()) {
        save(CheckpointId{e, true, train_.num_batches()}, true);
        return false;
      }
    }
    s.end_split();
    return true;
  }

  /// Every rank takes rank 0's buffers (BatchNorm running statistics).
  void broadcast_buffers() {
    nn::visit_mut(model_, [&](const std::string&, auto& leaf) {
      using L = std::remove_cvref_t<decltype(leaf)>;
      if constexpr (nn::is_buffer_v<L>) {
        if (!leaf.has_value()) return;
        TensorData data = leaf.val().into_data();
        pg_->broadcast(data, 0);
        leaf.set(L::Value::from_data(data, leaf.val().device()));
      }
    });
  }

  void save(const CheckpointId& id, bool train_done) {
    if (pg_ && pg_->rank() != 0) return;  // rank 0 writes the checkpoints
    const auto meta = session_->model_metadata(id);
    session_->save_checkpoint(
        id, train_done,
        [&](const std::filesystem::path& dir) {
          nn::save(model_, dir / "model.safetensors", meta);
          optim::save_record(optim_.state_dict(model_), dir / "optimizer.safetensors");
          if (scaler_) {
            nn::detail::write_text_atomic(dir / "grad_scaler.json", scaler_->state().dump() + "\n");
          }
        },
        scheduler_.state());
  }

  void load_checkpoint(const std::filesystem::path& dir, const nlohmann::json& scheduler_state) {
    nn::load(model_, dir / "model.safetensors");
    optim_.load(dir / "optimizer.safetensors", model_);
    scheduler_.load_state(scheduler_state);
    // A checkpoint of a run without f16 loss scaling has none: the scale starts afresh.
    if (const auto path = dir / "grad_scaler.json"; scaler_ && std::filesystem::exists(path)) {
      std::string problem;
      try {
        std::ifstream f(path);
        const nlohmann::json state = nlohmann::json::parse(f, nullptr, false);
        if (state.is_discarded()) problem = "not JSON";
        if (problem.empty()) scaler_->load_state(state);
      } catch (const std::exception& e) {
        problem = e.what();
      }
      if (!problem.empty()) {
        ember::detail::fail<IoError>("Learner", "damaged checkpoint file ", path, ": ", problem);
      }
    }
  }

  M model_;
  O optim_;
  optim::LrScheduler scheduler_;
  BatchLoader<TB> train_;
  BatchLoader<VB> valid_;
  TrainStepFn train_step_;
  ValidStepFn valid_step_;
  std::optional<Device> device_;
  std::unique_ptr<detail::Session> session_;
  std::shared_ptr<dist::ProcessGroup> pg_;
  std::size_t bucket_bytes_ = dist::kDefaultBucketBytes;
  std::optional<DType> autocast_;
  std::optional<optim::GradScaler> scaler_;
  double allreduce_seconds_ = 0.0;
  std::size_t allreduce_steps_ = 0;
  StopReason reason_ = StopReason::Completed;
};

/// Configures a Learner (Burn's LearnerBuilder). The batch types come from the loaders:
/// `LearnerBuilder(model, optimizer, train_loader, valid_loader)` deduces everything.
template <class M, class O, class TB, class VB = TB>
class LearnerBuilder {
 public:
  using LearnerType = Learner<M, O, TB, VB>;
  using ValidModel = typename LearnerType::ValidModel;
  using Device = typename LearnerType::Device;

  /// `model` on an autodiff device, an optimizer (optim::AdamConfig{}.init(), ...), and the
  /// loaders (ember::data::DataLoader or any BatchLoaderLike).
  LearnerBuilder(M model, O optimizer, BatchLoader<TB> train_loader, BatchLoader<VB> valid_loader)
      : model_(std::move(model)),
        optim_(std::move(optimizer)),
        train_(std::move(train_loader)),
        valid_(std::move(valid_loader)) {}

  /// The learning-rate schedule, stepped once per optimizer step (default: constant 1e-3).
  LearnerBuilder& lr_scheduler(optim::LrScheduler scheduler) {
    scheduler_ = std::move(scheduler);
    return *this;
  }
  /// A constant learning rate. Throws ValueError when negative or not finite.
  LearnerBuilder& learning_rate(double lr) {
    scheduler_ = optim::ConstantLrSchedulerConfig{.lr = lr}.init();
    return *this;
  }

  /// The train step: `f(M&, TB&)` (or const TB&) returning a ClassificationOutput,
  /// RegressionOutput, TrainOutput, or a type with a `loss` tensor and `metric_input()`.
  /// Default: the model's member `train_step(batch)` when it has one.
  template <class F>
  requires std::invocable<F&, M&, TB&> LearnerBuilder& train_step(F f) {
    train_step_ = [f = std::move(f)](M& model, TB& batch, std::optional<DType> amp,
                                     double loss_scale) mutable {
      auto out = [&] {
        const Autocast guard(amp);  // the forward pass; backward runs in its dtypes
        return std::invoke(f, model, batch);
      }();
      return detail::differentiate(model, std::move(out), loss_scale);
    };
    return *this;
  }
  /// The valid step: `f(const ValidModel&, VB&)` returning an output with `metric_input()` or
  /// a MetricInput. Default: the valid model's member `valid_step(batch)`.
  template <class F>
  requires std::invocable<F&, const ValidModel&, VB&> LearnerBuilder& valid_step(F f) {
    valid_step_ = [f = std::move(f)](const ValidModel& model, VB& batch) mutable {
      return to_metric_input(std::invoke(f, model, batch));
    };
    return *this;
  }

  /// Mixed-precision training (see the file comment): DType::BF16, or DType::F16 with loss
  /// scaling by a GradScaler made from `scaler`; nullopt: f32 (the default). Throws
  /// ValueError for another dtype, and as GradScalerConfig::init.
  LearnerBuilder& mixed_precision(std::optional<DType> dtype,
                                  const optim::GradScalerConfig& scaler = {}) {
    if (dtype && *dtype != DType::BF16 && *dtype != DType::F16) {
      ember::detail::fail<ValueError>("Learner", "mixed precision is bf16 or f16, got ", *dtype);
    }
    autocast_ = dtype;
    scaler_.reset();
    if (dtype == DType::F16) scaler_ = scaler.init();
    return *this;
  }

  /// Epochs to train (default 1); with resume, the last epoch of the whole run.
  LearnerBuilder& num_epochs(std::size_t n) {
    options_.num_epochs = n;
    return *this;
  }
  /// Registers a metric for both splits (train only when metric.train_only()).
  LearnerBuilder& metric(const Metric& metric) {
    metric_train(metric);
    if (!metric.train_only()) metric_valid(metric);
    return *this;
  }
  /// Registers a metric for the train split.
  LearnerBuilder& metric_train(const Metric& metric) {
    train_metrics_.push_back(metric.clone());
    return *this;
  }
  /// Registers a metric for the valid split.
  LearnerBuilder& metric_valid(const Metric& metric) {
    valid_metrics_.push_back(metric.clone());
    return *this;
  }
  /// Where logs, checkpoints and the summary go (required).
  LearnerBuilder& run_dir(std::filesystem::path dir) {
    options_.run_dir = std::move(dir);
    return *this;
  }
  /// Keep the `keep_last` newest epoch checkpoints (default 2, >= 1) besides the best.
  LearnerBuilder& checkpoints(std::size_t keep_last) {
    options_.keep_last = keep_last;
    return *this;
  }
  /// Also keep the checkpoint of the best epoch by this metric (default: valid Loss, when
  /// registered). ValueError at build() when the metric is not registered for its split.
  LearnerBuilder& checkpoint_best(BestCheckpointConfig best) {
    options_.best = std::move(best);
    options_.best_explicit = true;
    return *this;
  }
  /// Keep only the last checkpoints (no best).
  LearnerBuilder& no_best_checkpoint() {
    options_.best.reset();
    options_.best_explicit = true;
    return *this;
  }
  /// Continue from the latest checkpoint of the run directory (fresh start when none).
  LearnerBuilder& resume(bool on = true) {
    options_.resume = on;
    return *this;
  }
  /// Without resume, delete an earlier run in the run directory instead of refusing it.
  LearnerBuilder& overwrite(bool on = true) {
    options_.overwrite = on;
    return *this;
  }
  /// Stop when a metric stops improving (see EarlyStoppingConfig).
  LearnerBuilder& early_stopping(EarlyStoppingConfig config) {
    options_.early_stopping = std::move(config);
    return *this;
  }
  /// Combine the gradients of `n` batches into one optimizer step: the gradients are averaged
  /// weighted by batch sizes, so with a loss that is a mean over items the step equals one
  /// step on the n batches together. The scheduler steps once per optimizer step.
  LearnerBuilder& grads_accumulation(std::size_t n) {
    options_.grad_accumulation = n;
    return *this;
  }
  /// The device to train on: the model is moved there (nn::fork) when fit() starts. One
  /// device; with Dispatch it must record gradients ("cpu+autodiff"). Throws
  /// UnsupportedError for several devices, DeviceError for a Dispatch device without autodiff.
  LearnerBuilder& devices(std::vector<Device> devices) {
    if (devices.size() > 1) {
      ember::detail::fail<UnsupportedError>(
          "Learner", "training on ", devices.size(),
          " devices at once in one process is not supported; give one device (for data "
          "parallel training over processes, see process_group())");
    }
    if (devices.empty()) {
      device_.reset();
      return *this;
    }
    if constexpr (std::is_same_v<typename LearnerType::Backend, Dispatch>) {
      if (!devices[0].is_autodiff()) {
        ember::detail::fail<DeviceError>("Learner",
                                         "training needs a device that records "
                                         "gradients; got ",
                                         devices[0].to_string(), ", use ",
                                         devices[0].autodiff().to_string());
      }
    }
    device_ = devices[0];
    return *this;
  }
  /// Data-parallel training over `pg` (see the file comment): give each rank a train and a
  /// valid loader with a data::DistributedSampler of this group, the same model config and
  /// seed. Gradients are averaged in buckets of about `bucket_bytes`. A null group (or one of
  /// a single process) trains as usual.
  LearnerBuilder& process_group(std::shared_ptr<dist::ProcessGroup> pg,
                                std::size_t bucket_bytes = dist::kDefaultBucketBytes) {
    pg_ = std::move(pg);
    bucket_bytes_ = bucket_bytes;
    return *this;
  }
  /// Reseed the backend before every batch from (seed, epoch, batch) (see LearnerOptions).
  LearnerBuilder& seed(std::uint64_t seed) {
    options_.seed = seed;
    return *this;
  }
  /// Dashboard, plain lines, nothing, or automatic (default; see RendererKind).
  LearnerBuilder& renderer(RendererKind kind) {
    options_.renderer = kind;
    renderer_.reset();
    return *this;
  }
  /// A renderer of your own (e.g. make_text_renderer on a string stream).
  LearnerBuilder& renderer(std::shared_ptr<Renderer> renderer) {
    renderer_ = std::move(renderer);
    return *this;
  }
  /// Seconds between plain progress lines (default 5).
  LearnerBuilder& progress_interval(double seconds) {
    options_.progress_interval = seconds;
    return *this;
  }
  /// The model config JSON, stored in the checkpoints' model files.
  LearnerBuilder& model_config(nlohmann::json config) {
    options_.model_config = std::move(config);
    return *this;
  }
  /// A token whose stop request stops training like the dashboard's `q` + `y`.
  LearnerBuilder& stop_token(std::stop_token token) {
    stop_ = std::move(token);
    return *this;
  }
  /// Turn SIGINT/SIGTERM into a graceful stop during fit() (default on).
  LearnerBuilder& handle_signals(bool on) {
    options_.handle_signals = on;
    return *this;
  }
  /// Print the summary table at the end (default on).
  LearnerBuilder& print_summary(bool on) {
    options_.print_summary = on;
    return *this;
  }

  /// The Learner; the builder's metrics move into it. Throws ValueError for a missing run
  /// directory or step, and the option errors listed at detail::Session.
  LearnerType build() {
    if (!train_step_) {
      if constexpr (requires(M & m, TB & b) { m.train_step(b); }) {
        train_step([](M& m, TB& b) { return m.train_step(b); });
      } else {
        ember::detail::fail<ValueError>("Learner",
                                        "no train step: call train_step(fn) or give "
                                        "the model a train_step(batch) member");
      }
    }
    if (!valid_step_) {
      if constexpr (requires(const ValidModel& m, VB& b) { m.valid_step(b); }) {
        valid_step([](const ValidModel& m, VB& b) { return m.valid_step(b); });
      } else {
        ember::detail::fail<ValueError>("Learner",
                                        "no valid step: call valid_step(fn) or give "
                                        "the model a valid_step(batch) member");
      }
    }
    if (!train_ || !valid_) ember::detail::fail<ValueError>("Learner", "a loader is missing");
    LearnerOptions options = options_;
    std::shared_ptr<Renderer> renderer = renderer_;
    if (pg_ && pg_->rank() != 0) {
      options.write_files = false;  // rank 0 writes and shows progress
      options.print_summary = false;
      renderer = make_renderer(RendererKind::None, options.progress_interval);
    }
    auto session = std::make_unique<detail::Session>(options, std::move(train_metrics_),
                                                     std::move(valid_metrics_), renderer, stop_);
    train_metrics_.clear();
    valid_metrics_.clear();
    return LearnerType(model_, optim_, scheduler_, train_, valid_, train_step_, valid_step_,
                       device_, std::move(session), pg_, bucket_bytes_, autocast_, scaler_);
  }

 private:
  template <class Out>
  static MetricInput to_metric_input(Out&& out) {
    if constexpr (std::same_as<std::remove_cvref_t<Out>, MetricInput>) {
      return std::forward<Out>(out);
    } else {
      static_assert(detail::HasMetricInput<std::remove_cvref_t<Out>>,
                    "a valid step must return a MetricInput or a type with metric_input()");
      return out.metric_input();
    }
  }

  M model_;
  O optim_;
  optim::LrScheduler scheduler_ = optim::ConstantLrSchedulerConfig{.lr = 1e-3}.init();
  BatchLoader<TB> train_;
  BatchLoader<VB> valid_;
  typename LearnerType::TrainStepFn train_step_;
  typename LearnerType::ValidStepFn valid_step_;
  std::optional<Device> device_;
  LearnerOptions options_;
  std::vector<std::unique_ptr<Metric>> train_metrics_, valid_metrics_;
  std::shared_ptr<Renderer> renderer_;
  std::stop_token stop_;
  std::shared_ptr<dist::ProcessGroup> pg_;
  std::size_t bucket_bytes_ = dist::kDefaultBucketBytes;
  std::optional<DType> autocast_;
  std::optional<optim::GradScaler> scaler_;
};

template <class M, class O, class TL, class VL>
requires BatchLoaderLike<TL> && BatchLoaderLike<VL> LearnerBuilder(M, O, TL, VL)
->LearnerBuilder<M, O, loader_batch_t<TL>, loader_batch_t<VL>>;

}  // namespace ember::train
