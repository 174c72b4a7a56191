// The Learner end to end on a tiny classifier: resume equivalence, early stopping, gradient
// accumulation, logs, checkpoints, errors, and the Evaluator.
#include <gtest/gtest.h>

#include <atomic>
#include <stop_token>

#include "ember/data/dataset.hpp"
#include "ember/data/loader.hpp"
#include "ember/store/safetensors.hpp"
#include "train_test_util.hpp"

namespace ember::train {
namespace {

namespace fs = std::filesystem;
using testing::classify;
using testing::make_data;
using testing::make_net;
using testing::params_of;
using testing::slurp;
using testing::TempDir;
using testing::TinyNet;
using testing::VecLoader;
using testing::XYBatch;

const Device kTrainDevice = Device::cpu().autodiff();

struct RunConfig {
  std::shared_ptr<const testing::Data> train = make_data(48, 7), valid = make_data(24, 8);
  std::size_t batch_size = 8;
  std::optional<std::uint64_t> shuffle = 11;
  double dropout = 0.3;
  std::size_t epochs = 3;
  std::size_t accumulation = 1;
  double lr = 0.05;
  bool adam = true;
};

/// A step that asks for a stop once it has run `stop_after` times.
struct StopAfter {
  std::stop_source source;
  std::size_t stop_after = 0;
  std::shared_ptr<std::atomic<std::size_t>> calls = std::make_shared<std::atomic<std::size_t>>(0);
  void tick() {
    if (++*calls == stop_after) source.request_stop();
  }
};

/// Trains a TinyNet with the Learner; `stop` (optional) requests a stop after that many
/// train (or, with in_valid, valid) steps.
template <class O>
std::pair<TinyNet<>, StopReason> run_with(O optim, const RunConfig& s, const fs::path& dir,
                                          bool resume, std::uint64_t init_seed,
                                          StopAfter* stop = nullptr, bool in_valid = false) {
  VecLoader train{s.train, s.batch_size, s.shuffle, kTrainDevice};
  VecLoader valid{s.valid, 8, std::nullopt, Device::cpu()};
  auto builder =
      LearnerBuilder(make_net(kTrainDevice, init_seed, s.dropout), std::move(optim), train, valid);
  builder
      .train_step([stop, in_valid](TinyNet<>& m, const XYBatch& b) {
        if (stop && !in_valid) stop->tick();
        return classify(m, b);
      })
      .valid_step([stop, in_valid](const TinyNet<>& m, const XYBatch& b) {
        if (stop && in_valid) stop->tick();
        return classify(m, b);
      })
      .lr_scheduler(
          optim::LinearLrSchedulerConfig{.initial_lr = s.lr, .final_lr = s.lr / 10, .num_iters = 15}
              .init())
      .metric(LossMetric{})
      .metric(AccuracyMetric{})
      .metric(LearningRateMetric{})
      .num_epochs(s.epochs)
      .grads_accumulation(s.accumulation)
      .seed(1234)
      .run_dir(dir)
      .resume(resume)
      .renderer(RendererKind::None)
      .handle_signals(false)
      .print_summary(false)
      .model_config({{"hidden", 8}});
  if (stop) builder.stop_token(stop->source.get_token());
  auto learner = builder.build();
  TinyNet<> model = learner.fit();
  return {model, learner.stop_reason()};
}

std::pair<TinyNet<>, StopReason> run(const RunConfig& s, const fs::path& dir, bool resume,
                                     std::uint64_t init_seed = 5, StopAfter* stop = nullptr,
                                     bool in_valid = false) {
  if (s.adam)
    return run_with(optim::AdamConfig{}.init(), s, dir, resume, init_seed, stop, in_valid);
  return run_with(optim::SgdConfig{}.init(), s, dir, resume, init_seed, stop, in_valid);
}

class TrainLearnerResume : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    straight_ = new TempDir("straight");
    auto [model, reason] = run(RunConfig{}, straight_->path(), false);
    ASSERT_EQ(reason, StopReason::Completed);
    params_ = new std::map<std::string, std::vector<double>>(params_of(model));
  }
  static void TearDownTestSuite() {
    delete straight_;
    delete params_;
  }

  /// The resumed run's parameters and logs are exactly those of the straight run.
  static void expect_same_as_straight(const TinyNet<>& model, const fs::path& dir) {
    EXPECT_EQ(params_of(model), *params_);
    EXPECT_EQ(slurp(dir / "train.jsonl"), slurp(straight_->path() / "train.jsonl"));
    EXPECT_EQ(slurp(dir / "valid.jsonl"), slurp(straight_->path() / "valid.jsonl"));
    EXPECT_EQ(slurp(dir / "summary.txt"), slurp(straight_->path() / "summary.txt"));
  }

  static TempDir* straight_;
  static std::map<std::string, std::vector<double>>* params_;
};
TempDir* TrainLearnerResume::straight_ = nullptr;
std::map<std::string, std::vector<double>>* TrainLearnerResume::params_ = nullptr;

TEST_F(TrainLearnerResume, StraightRunWritesLogsAndCheckpoints) {
  const fs::path dir = straight_->path();
  // 3 epochs x 3 train metrics, 3 epochs x 2 valid metrics (the learning rate is train only).
  const std::string train_log = slurp(dir / "train.jsonl");
  EXPECT_EQ(std::count(train_log.begin(), train_log.end(), '\n'), 9);
  EXPECT_EQ(train_log.rfind("{\"epoch\":1,\"metric\":\"Loss\",\"value\":", 0), 0u) << train_log;
  EXPECT_NE(train_log.find("{\"epoch\":3,\"metric\":\"Learning Rate\""), std::string::npos);
  const std::string valid_log = slurp(dir / "valid.jsonl");
  EXPECT_EQ(std::count(valid_log.begin(), valid_log.end(), '\n'), 6);
  const MetricHistory logs = MetricHistory::read_logs(dir);
  // Training on separable data lowers the loss.
  EXPECT_LT(*logs.value(Split::Valid, "Loss", 3), *logs.value(Split::Valid, "Loss", 1));
  // Learning rate: linear from 0.05 to 0.005 over 15 steps, 6 steps per epoch; epoch 1 uses
  // steps 0..5: mean of 0.05 - 0.003 k for k = 0..5.
  EXPECT_NEAR(*logs.value(Split::Train, "Learning Rate", 1), 0.05 - 0.003 * 2.5, 1e-12);

  // Checkpoints: the last 2 and the best by valid loss.
  CheckpointStore store(dir / "checkpoints");
  const auto ids = store.list();
  const auto best = best_epoch(logs, Split::Valid, "Loss", Direction::Lowest);
  std::vector<std::size_t> expect = {2, 3};
  if (*best == 1) expect.insert(expect.begin(), 1);
  std::vector<std::size_t> got;
  for (const auto& id : ids) got.push_back(id.epoch);
  EXPECT_EQ(got, expect);
  const fs::path last = store.path({3, false, 0});
  for (const char* f : {"model.safetensors", "optimizer.safetensors", "state.json"}) {
    EXPECT_TRUE(fs::exists(last / f)) << f;
  }
  const auto tensors = store::read_safetensors(last / "model.safetensors");
  EXPECT_EQ(tensors.metadata.at("config"), "{\"hidden\":8}");
  EXPECT_EQ(tensors.metadata.at("ember.epoch"), "3");
  const auto state = nlohmann::json::parse(slurp(last / "state.json"));
  EXPECT_EQ(state.at("epoch"), 3);
  EXPECT_EQ(state.at("partial"), false);
  EXPECT_EQ(state.at("scheduler").at("iteration"), 18);
  // Summary.
  const Summary summary = Summary::load(dir);
  EXPECT_EQ(summary.epochs, 3u);
  EXPECT_EQ(summary.rows.size(), 5u);
}

TEST_F(TrainLearnerResume, StopInTheMiddleOfAnEpochThenResume) {
  TempDir dir("resume-mid");
  StopAfter stop;
  stop.stop_after = 9;  // epoch 2, batch 3 of 6
  auto [partial, reason] = run(RunConfig{}, dir.path(), false, 5, &stop);
  EXPECT_EQ(reason, StopReason::Interrupted);
  EXPECT_EQ(*stop.calls, 9u);
  CheckpointStore store(dir.path() / "checkpoints");
  EXPECT_EQ(store.latest(), (CheckpointId{2, true, 3}));
  // Only epoch 1 is in the logs so far.
  EXPECT_EQ(MetricHistory::read_logs(dir.path()).last_epoch(), 1u);
  // A fresh process would build the model from another seed: resume loads it.
  auto [model, again] = run(RunConfig{}, dir.path(), true, 99);
  EXPECT_EQ(again, StopReason::Completed);
  expect_same_as_straight(model, dir.path());
  // The partial checkpoint is gone once epoch 2 ended.
  for (const auto& id : store.list()) EXPECT_FALSE(id.partial) << id.name();
}

TEST_F(TrainLearnerResume, StopAtAnEpochEndThenResume) {
  TempDir dir("resume-epoch");
  RunConfig two;
  two.epochs = 2;
  auto [first, r1] = run(two, dir.path(), false);
  EXPECT_EQ(r1, StopReason::Completed);
  auto [model, r2] = run(RunConfig{}, dir.path(), true, 42);
  EXPECT_EQ(r2, StopReason::Completed);
  expect_same_as_straight(model, dir.path());
  // Resuming a finished run trains nothing and gives the same model back.
  auto [same, r3] = run(RunConfig{}, dir.path(), true, 43);
  EXPECT_EQ(r3, StopReason::Completed);
  expect_same_as_straight(same, dir.path());
}

TEST_F(TrainLearnerResume, StopDuringValidationThenResume) {
  TempDir dir("resume-valid");
  StopAfter stop;
  stop.stop_after = 5;  // epoch 2, valid batch 2 of 3
  auto [partial, reason] = run(RunConfig{}, dir.path(), false, 5, &stop, true);
  EXPECT_EQ(reason, StopReason::Interrupted);
  CheckpointStore store(dir.path() / "checkpoints");
  EXPECT_EQ(store.latest(), (CheckpointId{2, true, 6}));
  const auto state = nlohmann::json::parse(slurp(store.path({2, true, 6}) / "state.json"));
  EXPECT_EQ(state.at("train_done"), true);
  auto [model, again] = run(RunConfig{}, dir.path(), true, 3);
  expect_same_as_straight(model, dir.path());
}

TEST_F(TrainLearnerResume, DamagedStateCountersAreRefused) {
  // Issue 19: counters edited or corrupted in state.json skipped epochs or restarted the run
  // silently; they must match the checkpoint folder's name.
  TempDir dir("resume-damaged");
  StopAfter stop;
  stop.stop_after = 9;  // epoch 2, batch 3 of 6: checkpoints epoch-1 and epoch-2-batch-3
  run(RunConfig{}, dir.path(), false, 5, &stop);
  const fs::path state_file = dir.path() / "checkpoints" / "epoch-2-batch-3" / "state.json";
  const auto good = nlohmann::json::parse(slurp(state_file));
  const std::vector<std::pair<nlohmann::json, std::string>> cases = {
      {{{"epoch", 100}}, "'epoch' 100 in the folder of epoch 2"},
      {{{"epoch", 1e30}}, "'epoch' is not a non-negative integer"},
      {{{"epoch", -2}}, "'epoch' is not a non-negative integer"},
      {{{"partial", false}}, "'partial' does not match the folder name epoch-2-batch-3"},
      {{{"batches", -1}}, "'batches' is not a non-negative integer"},
      {{{"batches", 5}}, "'batches' 5 in the folder of batch 3"},
      {{{"train_done", "no"}}, "'train_done' is not a boolean"}};
  for (const auto& [edit, want] : cases) {
    SCOPED_TRACE(edit.dump());
    nlohmann::json bad = good;
    bad.update(edit);
    std::ofstream(state_file) << bad.dump(2);
    std::string what;
    try {
      run(RunConfig{}, dir.path(), true);
    } catch (const IoError& e) {
      what = e.what();
    }
    EXPECT_NE(what.find("is damaged: " + want), std::string::npos) << what;
  }
  // Put back, the run resumes and ends as the straight one.
  std::ofstream(state_file) << good.dump(2);
  auto [model, again] = run(RunConfig{}, dir.path(), true, 99);
  EXPECT_EQ(again, StopReason::Completed);
  expect_same_as_straight(model, dir.path());
}

TEST_F(TrainLearnerResume, ResumeWithoutCheckpointStartsFresh) {
  TempDir dir("resume-none");
  auto [model, reason] = run(RunConfig{}, dir.path(), true);
  EXPECT_EQ(reason, StopReason::Completed);
  expect_same_as_straight(model, dir.path());
}

TEST(TrainLearner, RefusesAnotherRunUnlessOverwrite) {
  TempDir dir("overwrite");
  RunConfig one;
  one.epochs = 1;
  run(one, dir.path(), false);
  try {
    run(one, dir.path(), false);
    FAIL() << "no throw";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("already holds a run"), std::string::npos) << e.what();
  }
}

// The same resume property through ember::data's DataLoader (worker threads, seeded
// per-epoch shuffle), which the Learner takes directly.
TEST(TrainLearner, DataLoaderStopAndResume) {
  using Item = std::pair<std::array<float, 4>, std::int64_t>;
  const auto loader = [](std::shared_ptr<const testing::Data> d, Device dev,
                         std::optional<std::uint64_t> shuffle) {
    std::vector<Item> items;
    for (std::size_t i = 0; i < d->n; ++i) {
      Item it;
      std::copy_n(d->x.begin() + static_cast<std::ptrdiff_t>(4 * i), 4, it.first.begin());
      it.second = d->y[i];
      items.push_back(it);
    }
    auto batcher = [dev](std::vector<Item> batch) {
      std::vector<float> xs;
      std::vector<std::int64_t> ys;
      for (const auto& [x, y] : batch) {
        xs.insert(xs.end(), x.begin(), x.end());
        ys.push_back(y);
      }
      const auto n = static_cast<std::int64_t>(batch.size());
      return XYBatch{DTensor<2>::from_data(TensorData(std::move(xs), Shape{n, 4}), dev),
                     DTensor<1, Int>::from_data(TensorData(std::move(ys), Shape{n}), dev)};
    };
    data::DataLoaderBuilder<Item, XYBatch> b(batcher);
    b.batch_size(8).num_workers(2);
    if (shuffle) b.shuffle(*shuffle);
    return b.build(std::make_shared<data::InMemoryDataset<Item>>(std::move(items)));
  };
  const auto train = loader(make_data(48, 7), kTrainDevice, 21);
  const auto valid = loader(make_data(16, 8), Device::cpu(), std::nullopt);
  const auto fit = [&](const fs::path& dir, bool resume, std::stop_source* stop) {
    auto calls = std::make_shared<int>(0);
    auto builder =
        LearnerBuilder(make_net(kTrainDevice, 5, 0.2), optim::AdamConfig{}.init(), train, valid);
    builder
        .train_step([stop, calls](TinyNet<>& m, const XYBatch& b) {
          if (stop && ++*calls == 8) stop->request_stop();
          return classify(m, b);
        })
        .valid_step(classify)
        .learning_rate(0.02)
        .metric(LossMetric{})
        .metric(AccuracyMetric{})
        .num_epochs(2)
        .seed(99)
        .run_dir(dir)
        .resume(resume)
        .renderer(RendererKind::None)
        .handle_signals(false)
        .print_summary(false);
    if (stop) builder.stop_token(stop->get_token());
    auto learner = builder.build();
    const auto params = params_of(learner.fit());
    return std::make_pair(params, learner.stop_reason());
  };
  TempDir straight("dl-straight"), stopped("dl-stopped");
  const auto [expected, r0] = fit(straight.path(), false, nullptr);
  EXPECT_EQ(r0, StopReason::Completed);
  std::stop_source stop;
  const auto [partial, r1] = fit(stopped.path(), false, &stop);
  EXPECT_EQ(r1, StopReason::Interrupted);
  EXPECT_EQ(CheckpointStore(stopped.path() / "checkpoints").latest(), (CheckpointId{2, true, 2}));
  const auto [resumed, r2] = fit(stopped.path(), true, nullptr);
  EXPECT_EQ(r2, StopReason::Completed);
  EXPECT_EQ(resumed, expected);
  EXPECT_EQ(slurp(stopped.path() / "train.jsonl"), slurp(straight.path() / "train.jsonl"));
  EXPECT_EQ(slurp(stopped.path() / "valid.jsonl"), slurp(straight.path() / "valid.jsonl"));
}

TEST(TrainLearner, EarlyStoppingAndBestCheckpoint) {
  // Learning rate 0: the valid loss never changes, so it never improves after epoch 1.
  TempDir dir("early");
  VecLoader train{make_data(16, 1), 8, std::nullopt, kTrainDevice};
  VecLoader valid{make_data(8, 2), 8, std::nullopt, Device::cpu()};
  auto learner = LearnerBuilder(make_net(kTrainDevice, 1), optim::SgdConfig{}.init(), train, valid)
                     .train_step(classify)
                     .valid_step(classify)
                     .learning_rate(0.0)
                     .metric(LossMetric{})
                     .num_epochs(10)
                     .early_stopping({.metric = "Loss", .split = Split::Valid, .patience = 3})
                     .checkpoints(1)
                     .run_dir(dir.path())
                     .renderer(RendererKind::None)
                     .handle_signals(false)
                     .print_summary(false)
                     .build();
  learner.fit();
  // Epoch 1 is the best; epochs 2, 3, 4 do not improve: stop after epoch 4.
  EXPECT_EQ(learner.stop_reason(), StopReason::EarlyStopping);
  EXPECT_EQ(learner.history().last_epoch(), 4u);
  // Kept: the last one (4) and the best (1, the earliest of equal losses).
  std::vector<std::string> kept;
  for (const auto& id : learner.checkpoints().list()) kept.push_back(id.name());
  EXPECT_EQ(kept, (std::vector<std::string>{"epoch-1", "epoch-4"}));
}

TEST(TrainLearner, GradientAccumulationEqualsOneBigBatch) {
  // 20 items: batches of 4 accumulated by 2 -> steps over (8, 8, 4) items, as batches of 8.
  RunConfig acc;
  acc.train = make_data(20, 3);
  acc.batch_size = 4;
  acc.accumulation = 2;
  acc.shuffle.reset();
  acc.dropout = 0.0;
  acc.epochs = 2;
  acc.adam = false;
  acc.lr = 0.5;
  RunConfig big = acc;
  big.batch_size = 8;
  big.accumulation = 1;
  TempDir d1("accum"), d2("big");
  const auto p1 = params_of(run(acc, d1.path(), false).first);
  const auto p2 = params_of(run(big, d2.path(), false).first);
  const auto p0 = params_of(make_net(kTrainDevice, 5, 0.0));
  double moved = 0.0;
  for (const auto& [k, v] : p2) {
    ASSERT_EQ(p1.at(k).size(), v.size());
    for (std::size_t i = 0; i < v.size(); ++i) {
      EXPECT_NEAR(p1.at(k)[i], v[i], 1e-5) << k << "[" << i << "]";
      moved = std::max(moved, std::abs(v[i] - p0.at(k)[i]));
    }
  }
  EXPECT_GT(moved, 1e-2);  // the steps did change the parameters
  const auto h1 = MetricHistory::read_logs(d1.path()), h2 = MetricHistory::read_logs(d2.path());
  for (std::size_t e = 1; e <= 2; ++e) {
    EXPECT_NEAR(*h1.value(Split::Valid, "Loss", e), *h2.value(Split::Valid, "Loss", e), 1e-5);
    EXPECT_NEAR(*h1.value(Split::Train, "Loss", e), *h2.value(Split::Train, "Loss", e), 1e-5);
  }
  // One scheduler step per optimizer step: both runs end at the same point of the schedule.
  const auto s1 =
      nlohmann::json::parse(slurp(d1.path() / "checkpoints" / "epoch-2" / "state.json"));
  const auto s2 =
      nlohmann::json::parse(slurp(d2.path() / "checkpoints" / "epoch-2" / "state.json"));
  EXPECT_EQ(s1.at("scheduler"), s2.at("scheduler"));
  EXPECT_EQ(s1.at("scheduler").at("iteration"), 6);
}

/// Counts the calls a Learner makes.
struct CountingRenderer final : Renderer {
  int starts = 0, updates = 0, epochs = 0, finishes = 0;
  void start(const TrainingInfo&) override { ++starts; }
  void update(const ProgressInfo&, const std::vector<MetricValue>&) override { ++updates; }
  void end_epoch(Split, std::size_t, const std::vector<MetricValue>&, double) override { ++epochs; }
  void message(const std::string&) override {}
  void finish() override { ++finishes; }
};

TEST(TrainLearner, StepErrorsReachTheCallerAfterTheRendererCloses) {
  TempDir dir("step-error");
  VecLoader train{make_data(16, 1), 4, std::nullopt, kTrainDevice};
  VecLoader valid{make_data(8, 2), 4, std::nullopt, Device::cpu()};
  auto renderer = std::make_shared<CountingRenderer>();
  int calls = 0;
  auto learner = LearnerBuilder(make_net(kTrainDevice, 1), optim::SgdConfig{}.init(), train, valid)
                     .train_step([&](TinyNet<>& m, const XYBatch& b) {
                       if (++calls == 3) throw IoError("[test] bad batch");
                       return classify(m, b);
                     })
                     .valid_step(classify)
                     .metric(LossMetric{})
                     .run_dir(dir.path())
                     .renderer(renderer)
                     .handle_signals(false)
                     .print_summary(false)
                     .build();
  EXPECT_THROW(learner.fit(), IoError);
  EXPECT_EQ(renderer->starts, 1);
  EXPECT_EQ(renderer->updates, 2);
  EXPECT_EQ(renderer->finishes, 1);
  EXPECT_THROW(learner.fit(), ValueError);  // once per Learner
  // A model on a device without autodiff is refused before anything runs.
  auto plain = LearnerBuilder(make_net(Device::cpu(), 1), optim::SgdConfig{}.init(), train, valid)
                   .train_step(classify)
                   .valid_step(classify)
                   .run_dir(dir.path() / "plain")
                   .renderer(RendererKind::None)
                   .build();
  try {
    plain.fit();
    FAIL() << "no throw";
  } catch (const DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("create it on cpu+autodiff"), std::string::npos)
        << e.what();
  }
}

TEST(TrainLearner, OptionErrors) {
  TempDir dir("errors");
  VecLoader train{make_data(8, 1), 4, std::nullopt, kTrainDevice};
  VecLoader valid{make_data(8, 2), 4, std::nullopt, Device::cpu()};
  const auto builder = [&] {
    return LearnerBuilder(make_net(kTrainDevice, 1), optim::SgdConfig{}.init(), train, valid);
  };
  EXPECT_THROW(builder().train_step(classify).valid_step(classify).build(), ValueError);  // no dir
  EXPECT_THROW(builder().valid_step(classify).run_dir(dir.path()).build(), ValueError);   // no step
  EXPECT_THROW(builder()
                   .train_step(classify)
                   .valid_step(classify)
                   .run_dir(dir.path())
                   .metric(LossMetric{})
                   .metric(LossMetric{})
                   .build(),
               ValueError);
  try {
    builder()
        .train_step(classify)
        .valid_step(classify)
        .run_dir(dir.path())
        .metric(LossMetric{})
        .early_stopping({.metric = "Accuracy"})
        .build();
    FAIL() << "no throw";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("'Accuracy' is not registered for valid (registered: "
                                         "Loss)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(builder()
                   .train_step(classify)
                   .valid_step(classify)
                   .run_dir(dir.path())
                   .checkpoint_best({.metric = "Accuracy"})
                   .build(),
               ValueError);
  EXPECT_THROW(builder()
                   .grads_accumulation(0)
                   .train_step(classify)
                   .valid_step(classify)
                   .run_dir(dir.path())
                   .build(),
               ValueError);
  EXPECT_THROW(builder().devices({Device::cpu(), Device::cpu().autodiff()}), UnsupportedError);
  EXPECT_THROW(builder().devices({Device::cpu()}), DeviceError);
}

TEST(TrainLearner, DeviceAndTextRenderer) {
  // The model starts on the plain cpu device; devices() moves it to the autodiff one.
  TempDir dir("text");
  VecLoader train{make_data(16, 1), 8, std::nullopt, kTrainDevice};
  VecLoader valid{make_data(8, 2), 8, std::nullopt, Device::cpu()};
  auto out = std::make_shared<std::ostringstream>();
  auto learner = LearnerBuilder(make_net(Device::cpu(), 1), optim::SgdConfig{}.init(), train, valid)
                     .train_step(classify)
                     .valid_step(classify)
                     .devices({kTrainDevice})
                     .metric(LossMetric{})
                     .metric(AccuracyMetric{})
                     .num_epochs(2)
                     .run_dir(dir.path())
                     .renderer(std::shared_ptr<Renderer>(make_text_renderer(*out, 0.0)))
                     .handle_signals(false)
                     .print_summary(false)
                     .build();
  const TinyNet<> model = learner.fit();
  EXPECT_TRUE(model.fc1.weight.val().device().is_autodiff());
  const std::string text = out->str();
  EXPECT_NE(text.find("Training epochs 1-2 in"), std::string::npos) << text;
  EXPECT_NE(text.find("[train] epoch 1/2  100.0% (16/16)"), std::string::npos) << text;
  EXPECT_NE(text.find("[valid] epoch 2 done in"), std::string::npos) << text;
  EXPECT_NE(text.find("Accuracy"), std::string::npos) << text;
  EXPECT_NE(text.find("ETA"), std::string::npos) << text;
}

TEST(TrainLearner, Evaluator) {
  TempDir dir("eval");
  const TinyNet<> net = make_net(Device::cpu(), 3);
  VecLoader test{make_data(30, 4), 7, std::nullopt, Device::cpu()};
  std::ostringstream printed;
  auto report = Evaluator(net.valid(), classify)
                    .class_names({"alpha", "beta", "gamma"})
                    .output_dir(dir.path())
                    .print_to(&printed)
                    .eval(test);
  // The same numbers by hand.
  std::size_t correct = 0;
  std::vector<std::uint64_t> counts(9, 0);
  auto epoch = test.iter(0);
  while (auto b = epoch.next()) {
    const auto pred = net.forward(b->x).argmax(1).into_data().to_vec<std::int64_t>();
    const auto truth = b->y.into_data().to_vec<std::int64_t>();
    for (std::size_t i = 0; i < pred.size(); ++i) {
      correct += pred[i] == truth[i];
      ++counts[static_cast<std::size_t>(truth[i] * 3 + pred[i])];
    }
  }
  EXPECT_EQ(report.num_items, 30u);
  EXPECT_DOUBLE_EQ(report.accuracy(), static_cast<double>(correct) / 30.0);
  for (std::size_t t = 0; t < 3; ++t) {
    for (std::size_t p = 0; p < 3; ++p) EXPECT_EQ(report.confusion.count(t, p), counts[t * 3 + p]);
  }
  ASSERT_TRUE(report.loss);
  EXPECT_EQ(slurp(dir.path() / "confusion_matrix.csv"),
            report.confusion.csv({"alpha", "beta", "gamma"}));
  EXPECT_NE(printed.str().find("2 gamma"), std::string::npos) << printed.str();
  EXPECT_NE(printed.str().find("Loss: "), std::string::npos);
}

}  // namespace
}  // namespace ember::train
