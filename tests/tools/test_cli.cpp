// End-to-end tests of the `ember` tool: train a small run, then eval, infer and summary on
// it, and the errors for bad input. Trains on the first 2000 images of Debian's
// Fashion-MNIST when it is installed, else on a small synthetic set of the same format.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <regex>

#include "cli_test_util.hpp"
#include "ember/data/image_folder.hpp"
#include "ember/data/mnist.hpp"
#include "ember/store/safetensors.hpp"

namespace ember::cli::testing {
namespace {

/// One trained CNN run shared by the tests of this file (training takes seconds).
class CliTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    tmp_ = new TempDir("suite");
    data_dir_ = installed_fashion_mnist();
    if (data_dir_.empty()) {
      data_dir_ = tmp_->path() / "data";
      write_synthetic_mnist(data_dir_, 1200, 400);
    }
    run_dir_ = tmp_->path() / "cnn";
    train_ =
        new Result(run_ember({"train", "--dataset", "fashion-mnist", data_dir_.string(), "--epochs",
                              "1", "--limit", "2000", "--no-tui", "--run-dir", run_dir_.string()},
                             tmp_->path() / "train"));
  }
  static void TearDownTestSuite() {
    delete train_;
    delete tmp_;
  }
  void SetUp() override { ASSERT_EQ(train_->status, 0) << train_->out << train_->err; }

  /// Runs ember with output files in the suite's folder.
  static Result ember(const std::vector<std::string>& args) {
    static int n = 0;
    return run_ember(args, tmp_->path() / ("cmd" + std::to_string(++n)));
  }
  /// A copy of the trained run in a new folder.
  static fs::path copy_run(const std::string& name) {
    const fs::path dst = tmp_->path() / name;
    fs::copy(run_dir_, dst, fs::copy_options::recursive);
    return dst;
  }
  /// A run of the MLP (1 epoch on 500 images), trained on first use.
  static const fs::path& mlp_run() {
    static const fs::path dir = [] {
      const fs::path d = tmp_->path() / "mlp";
      const Result r =
          ember({"train", "--model", "mlp", "--dataset", "fashion-mnist", data_dir_.string(),
                 "--epochs", "1", "--limit", "500", "--no-tui", "--run-dir", d.string()});
      EXPECT_EQ(r.status, 0) << r.err;
      return d;
    }();
    return dir;
  }
  /// The first test image of the dataset as a 28x28 gray PNG (written on first use).
  static const fs::path& test_png() {
    static const fs::path path = [] {
      const fs::path p = tmp_->path() / "item.png";
      data::write_png(p, data::FashionMnist::test(data_dir_)->at(0));
      return p;
    }();
    return path;
  }
  /// Checks a failure: the status, and one line on stderr containing every `parts`.
  static void expect_error(const Result& r, int status, const std::vector<std::string>& parts) {
    EXPECT_EQ(r.status, status) << r.out << r.err;
    EXPECT_EQ(lines(r.err).size(), 1u) << r.err;
    for (const auto& p : parts) EXPECT_NE(r.err.find(p), std::string::npos) << p << " in " << r.err;
  }

  static inline TempDir* tmp_ = nullptr;
  static inline fs::path data_dir_, run_dir_;
  static inline Result* train_ = nullptr;
};

TEST_F(CliTest, TrainWritesTheRunDirectory) {
  EXPECT_NE(train_->out.find("Trained 1 epochs"), std::string::npos) << train_->out;
  EXPECT_NE(train_->out.find("[valid] epoch 1 done"), std::string::npos) << train_->out;
  const auto run = nlohmann::json::parse(slurp(run_dir_ / "run.json"));
  EXPECT_EQ(run["format"], "ember-run");
  EXPECT_EQ(run["model"]["name"], "cnn");
  EXPECT_EQ(run["model"]["config"]["channels"], nlohmann::json({32, 64}));
  EXPECT_EQ(run["train"]["epochs"], 1);
  const std::size_t n =
      std::min<std::size_t>(2000, installed_fashion_mnist().empty() ? 1200 : 2000);
  EXPECT_EQ(
      run["data"]["train_items"].get<std::size_t>() + run["data"]["valid_items"].get<std::size_t>(),
      n);
  EXPECT_EQ(run["data"]["valid_items"], n / 10);
  EXPECT_EQ(run["data"]["classes"].size(), 10u);

  for (const char* f :
       {"train.jsonl", "valid.jsonl", "summary.json", "summary.txt", "model.safetensors",
        "checkpoints/epoch-1/model.safetensors", "checkpoints/epoch-1/optimizer.safetensors",
        "checkpoints/epoch-1/state.json"}) {
    EXPECT_TRUE(fs::is_regular_file(run_dir_ / f)) << f;
  }
  const std::string valid = slurp(run_dir_ / "valid.jsonl");
  EXPECT_NE(valid.find(R"("epoch":1,"metric":"Accuracy")"), std::string::npos) << valid;
  // The model files carry the run's model config in their metadata.
  for (const char* f : {"model.safetensors", "checkpoints/epoch-1/model.safetensors"}) {
    const auto tensors = store::read_safetensors(run_dir_ / f);
    ASSERT_TRUE(tensors.metadata.count("config")) << f;
    EXPECT_EQ(nlohmann::json::parse(tensors.metadata.at("config")), run["model"]) << f;
  }
}

TEST_F(CliTest, EvalReportsAccuracyAndWritesTheConfusionMatrix) {
  const Result r = ember({"eval", run_dir_.string(), "--limit", "1000"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("Test accuracy: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Ankle boot"), std::string::npos) << r.out;  // the per-class table
  const auto eval = nlohmann::json::parse(slurp(run_dir_ / "eval.json"));
  EXPECT_EQ(eval["items"], 1000);
  EXPECT_EQ(eval["checkpoint"], "final model");
  EXPECT_GT(eval["accuracy"].get<double>(), 0.5);  // far above chance (0.1) after one epoch
  EXPECT_LE(eval["accuracy"].get<double>(), 1.0);
  EXPECT_EQ(eval["per_class"].size(), 10u);

  const auto csv = lines(slurp(run_dir_ / "confusion_matrix.csv"));
  ASSERT_EQ(csv.size(), 11u);  // header + one row per class
  long total = 0, diagonal = 0;
  for (std::size_t row = 1; row < csv.size(); ++row) {
    std::stringstream ss(csv[row]);
    std::string cell;
    std::getline(ss, cell, ',');  // class name
    for (std::size_t col = 0; std::getline(ss, cell, ','); ++col) {
      total += std::stol(cell);
      if (col + 1 == row) diagonal += std::stol(cell);
    }
  }
  EXPECT_EQ(total, 1000);
  EXPECT_NEAR(static_cast<double>(diagonal) / 1000.0, eval["accuracy"].get<double>(), 1e-9);

  // The checkpoint of epoch 1 holds the same weights as the final model.
  const Result last = ember({"eval", run_dir_.string(), "--limit", "1000", "--checkpoint", "last"});
  ASSERT_EQ(last.status, 0) << last.err;
  const auto eval_last = nlohmann::json::parse(slurp(run_dir_ / "eval.json"));
  EXPECT_EQ(eval_last["checkpoint"], "checkpoint epoch-1");
  EXPECT_EQ(eval_last["accuracy"], eval["accuracy"]);
}

TEST_F(CliTest, InferResizesALargeImageWithoutAFloatCopyOfIt) {
  // Issue 19: a 3000x3000 gray PNG (9 MB of pixels) used to become 36 MB of floats, twice
  // (the host vector and the tensor), before being pooled down to 28x28.
  data::ImageU8 big(1, 3000, 3000);
  for (std::size_t y = 0; y < 3000; ++y)
    for (std::size_t x = 0; x < 3000; ++x)
      big.at(0, y, x) = static_cast<std::uint8_t>((x + y) / 24);
  const fs::path large = tmp_->path() / "large-3000.png";
  data::write_png(large, big);
  const auto peak_kib = [&](const fs::path& image) {
    Child c({"infer", run_dir_.string(), image.string()}, tmp_->path() / "infer-rss");
    EXPECT_EQ(c.wait(), 0) << c.err();
    const bool resized = c.out().find("resized from 3000x3000") != std::string::npos;
    EXPECT_EQ(resized, image == large) << c.out();
    return c.max_rss_kib();
  };
  const long small = peak_kib(test_png());
  const long extra = peak_kib(large) - small;
  // Decoding is the floor (stb's 9 MB of inflated rows, its 9 MB image, the 9 MB planar
  // copy); the float path added over 100 MB more (a float vector, its TensorData copy, the
  // tensor).
  EXPECT_LT(extra, 64 * 1024) << "infer of a 3000x3000 image took " << extra / 1024
                              << " MiB more than of a 28x28 one";
}

TEST_F(CliTest, InferPrintsClassAndProbabilities) {
  // A test image as a 28x28 gray PNG, and the same image 2x larger in RGB (area averaging
  // brings it back to the same pixels, so the prediction must be identical).
  const data::ImageU8 im = data::FashionMnist::test(data_dir_)->at(0);
  const fs::path& small = test_png();
  const fs::path large = tmp_->path() / "item-rgb-56.png";
  data::ImageU8 big(3, 56, 56);
  for (std::size_t c = 0; c < 3; ++c)
    for (std::size_t y = 0; y < 56; ++y)
      for (std::size_t x = 0; x < 56; ++x) big.at(c, y, x) = im.at(0, y / 2, x / 2);
  data::write_png(large, big);

  const Result r =
      ember({"infer", run_dir_.string(), small.string(), large.string(), "--top", "3"});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto out = lines(r.out);
  ASSERT_EQ(out.size(), 8u) << r.out;  // per image: the prediction and 3 probabilities
  const std::regex head(R"((.*): (.+) \((\d+\.\d) %\)( \[resized from 56x56\])?)");
  std::smatch m1, m2;
  ASSERT_TRUE(std::regex_match(out[0], m1, head)) << out[0];
  ASSERT_TRUE(std::regex_match(out[4], m2, head)) << out[4];
  EXPECT_EQ(m1[1], small.string());
  EXPECT_FALSE(m1[4].matched);
  EXPECT_TRUE(m2[4].matched) << out[4];
  EXPECT_EQ(m1[2], m2[2]);  // same class
  EXPECT_EQ(m1[3], m2[3]);  // same probability
  const auto& names = data::FashionMnist::class_names();
  EXPECT_NE(std::find(names.begin(), names.end(), m1[2].str()), names.end()) << m1[2];
  // The top-3 lines: descending probabilities, the first one the predicted class.
  const std::regex row(R"(\s+(\d+\.\d\d) %  (.+))");
  double previous = 101.0;
  for (std::size_t k = 1; k <= 3; ++k) {
    std::smatch m;
    ASSERT_TRUE(std::regex_match(out[k], m, row)) << out[k];
    const double p = std::stod(m[1]);
    EXPECT_LE(p, previous);
    previous = p;
    if (k == 1) {
      EXPECT_EQ(m[2], m1[2]);
    }
  }
}

TEST_F(CliTest, SummaryShowsSettingsMetricsAndCheckpoints) {
  ASSERT_EQ(ember({"eval", run_dir_.string(), "--limit", "200"}).status, 0);
  const Result r = ember({"summary", run_dir_.string()});
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* part :
       {"model     cnn, 421834 parameters", "1 epochs, batch 64, adam",
        "1/1 epochs logged, finished", "| Valid | Accuracy", "Best epoch by validation loss: 1",
        "Checkpoints (", "epoch-1", "Test accuracy: ", "200 images"}) {
    EXPECT_NE(r.out.find(part), std::string::npos) << part << " in\n" << r.out;
  }
}

TEST_F(CliTest, MissingDatasetSaysHowToInstallIt) {
  const fs::path dir = tmp_->path() / "no-data-run";
  const Result r = ember({"train", "--dataset", "fashion-mnist", "/nonexistent/fashion", "--no-tui",
                          "--run-dir", dir.string()});
  expect_error(
      r, 1,
      {"ember train: error:", "/nonexistent/fashion", "dataset-fashion-mnist", "scripts/setup.sh"});
  EXPECT_FALSE(fs::exists(dir));  // nothing written
}

TEST_F(CliTest, BadOptionsAreRejectedByTheParser) {
  expect_error(ember({"train", "--lr", "-1"}), 2, {"--lr", "must be > 0"});
  expect_error(ember({"train", "--model", "resnet"}), 2, {"--model", "resnet"});
  expect_error(ember({"train", "--epochs", "0"}), 2, {"--epochs"});
  expect_error(ember({"train", "--optimizer", "lion"}), 2, {"--optimizer"});
  expect_error(ember({"train", "--frobnicate"}), 2, {"--frobnicate"});
  expect_error(ember({"train", "--dataset", "cifar10"}), 1, {"unknown dataset 'cifar10'"});
  expect_error(ember({"eval"}), 2, {"RUN_DIR"});
  expect_error(ember({"infer", run_dir_.string()}), 2, {"IMAGE"});
  expect_error(ember({}), 2, {"subcommand"});
  expect_error(ember({"train", "--device", "tpu"}), 1, {"--device tpu"});
  // Without --device, EMBER_DEVICE names the device (as it does for Device{} in programs).
  ::setenv("EMBER_DEVICE", "tpu", 1);
  const Result from_env = ember({"train"});
  ::unsetenv("EMBER_DEVICE");
  expect_error(from_env, 1, {"--device tpu", "unknown device kind 'tpu'"});
}

TEST_F(CliTest, NonFiniteAndNegativeNumbersAreRejected) {
  // NaN used to pass the range checks and end up as null in run.json, which then no command
  // could read; negative values of unsigned options used to wrap around.
  for (const char* option : {"--step-gamma", "--label-smoothing", "--dropout"}) {
    expect_error(ember({"train", option, "nan"}), 2, {option, "'nan' is not a number"});
  }
  expect_error(ember({"train", "--dropout", "1"}), 2, {"--dropout", "must be in [0, 1)"});
  expect_error(ember({"train", "--label-smoothing", "1"}), 2,
               {"--label-smoothing", "must be in [0, 1)"});
  expect_error(ember({"train", "--seed", "-1"}), 2, {"--seed", "whole number", "'-1'"});
  expect_error(ember({"train", "--limit", "-5"}), 2, {"--limit", "whole number", "'-5'"});
  expect_error(ember({"eval", run_dir_.string(), "--limit", "-1"}), 2, {"--limit", "'-1'"});
  expect_error(ember({"train", "--resume", "--overwrite"}), 2, {"--resume excludes --overwrite"});
}

TEST_F(CliTest, ANewRunThatCannotStartLeavesNothingBehind) {
  const fs::path dir = tmp_->path() / "warmup-run";
  const std::vector<std::string> args = {
      "train",    "--dataset", "fashion-mnist", data_dir_.string(), "--limit",   "200",
      "--epochs", "1",         "--no-tui",      "--run-dir",        dir.string()};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> all = args;
    all.insert(all.end(), extra.begin(), extra.end());
    return all;
  };
  for (const char* warmup : {"1", "0.999", "1e300"}) {
    expect_error(ember(with({"--warmup", warmup})), 1, {"--warmup", "is not shorter than the run"});
    EXPECT_FALSE(fs::exists(dir)) << warmup;  // no run.json blocking the next try
  }
  // --overwrite replaces the old run only once the new one can start.
  const fs::path old = copy_run("overwritten");
  expect_error(ember({"train", "--overwrite", "--run-dir", old.string(), "--dataset",
                      "fashion-mnist", "/nonexistent/fashion", "--no-tui"}),
               1, {"/nonexistent/fashion"});
  expect_error(
      ember({"train", "--overwrite", "--run-dir", old.string(), "--dataset", "fashion-mnist",
             data_dir_.string(), "--limit", "200", "--warmup", "5", "--no-tui"}),
      1, {"--warmup"});
  for (const char* f : {"run.json", "model.safetensors", "train.jsonl", "checkpoints/epoch-1"}) {
    EXPECT_TRUE(fs::exists(old / f)) << f;
  }
}

TEST_F(CliTest, ARunDirectoryThatIsAFileIsReported) {
  const fs::path file = tmp_->path() / "a-file";
  std::ofstream(file) << "not a folder";
  for (const fs::path& dir : {file, file / "run"}) {
    expect_error(ember({"train", "--dataset", "fashion-mnist", data_dir_.string(), "--limit", "200",
                        "--epochs", "1", "--no-tui", "--run-dir", dir.string()}),
                 1, {"cannot create the run directory " + dir.string(), "Not a directory"});
  }
  EXPECT_EQ(slurp(file), "not a folder");
}

TEST_F(CliTest, ADivergedTrainingIsReported) {
  const fs::path dir = tmp_->path() / "diverged";
  const Result r =
      ember({"train", "--dataset", "fashion-mnist", data_dir_.string(), "--limit", "200",
             "--epochs", "1", "--lr", "1e30", "--no-tui", "--run-dir", dir.string()});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.err.find("warning: the training loss of epoch 1 is not a number"), std::string::npos)
      << r.err;
  // infer printed "-nan %" for every class.
  expect_error(ember({"infer", dir.string(), test_png().string()}), 1,
               {"are not finite numbers: its training diverged"});
}

TEST_F(CliTest, TwoTrainingsOfOneRunDirectoryAreRefused) {
  const fs::path dir = tmp_->path() / "busy";
  Child first({"train", "--dataset", "fashion-mnist", data_dir_.string(), "--limit", "2000",
               "--epochs", "100", "--threads", "1", "--no-tui", "--run-dir", dir.string()},
              tmp_->path() / "busy-first");
  for (int i = 0; i < 3000 && first.running() && !fs::exists(dir / "run.json"); ++i) {
    ::usleep(10000);
  }
  ASSERT_TRUE(first.running()) << first.err();
  expect_error(ember({"train", "--resume", "--run-dir", dir.string(), "--no-tui"}), 1,
               {dir.string() + " is in use by another `ember train`"});
  first.kill(SIGKILL);
  first.wait();
  // Once the first one is gone the run can be resumed (here: replaced, to keep it short).
  const Result r =
      ember({"train", "--overwrite", "--dataset", "fashion-mnist", data_dir_.string(), "--limit",
             "200", "--epochs", "1", "--no-tui", "--run-dir", dir.string()});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
}

TEST_F(CliTest, AMovedDatasetFolderIsReportedWithTheOptionThatFixesIt) {
  // The run's data folder (run.json) is gone: the install hint of the dataset would not help.
  const fs::path moved = copy_run("moved-data");
  auto run = nlohmann::json::parse(slurp(moved / "run.json"));
  run["data"]["dir"] = (tmp_->path() / "gone").string();
  std::ofstream(moved / "run.json") << run.dump(2);
  expect_error(ember({"eval", moved.string()}), 1, {"(run.json), is gone", "--data-dir DIR"});
  expect_error(ember({"train", "--resume", "--run-dir", moved.string(), "--no-tui"}), 1,
               {"(run.json), is gone", "--dataset fashion-mnist DIR"});
  const Result r =
      ember({"eval", moved.string(), "--data-dir", data_dir_.string(), "--limit", "50"});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
}

TEST_F(CliTest, MixedPrecisionTrainsAndIsPartOfTheRun) {
  const fs::path dir = tmp_->path() / "mlp-bf16";
  const Result r = ember({"train", "--model", "mlp", "--dataset", "fashion-mnist",
                          data_dir_.string(), "--epochs", "1", "--limit", "500", "--no-tui",
                          "--run-dir", dir.string(), "--mixed-precision", "bf16"});
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find(", mixed precision bf16,"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("Loss scaling"), std::string::npos) << r.out;  // f16 only
  EXPECT_EQ(nlohmann::json::parse(slurp(dir / "run.json"))["train"]["mixed_precision"], "bf16");
  // The parameters stay f32.
  const auto tensors = store::read_safetensors(dir / "model.safetensors");
  ASSERT_FALSE(tensors.tensors.empty());
  for (const auto& [name, t] : tensors.tensors) EXPECT_EQ(t.dtype(), DType::F32) << name;
  // A resumed run keeps it; another value is refused.
  expect_error(ember({"train", "--resume", "--run-dir", dir.string(), "--mixed-precision", "f16"}),
               1, {"--mixed-precision", "differs from the run's"});
  expect_error(ember({"train", "--mixed-precision", "f32"}), 2, {"--mixed-precision", "f32"});
  // f16 scales the loss and reports the scale.
  const fs::path f16 = tmp_->path() / "mlp-f16";
  const Result h = ember({"train", "--model", "mlp", "--dataset", "fashion-mnist",
                          data_dir_.string(), "--epochs", "1", "--limit", "300", "--no-tui",
                          "--run-dir", f16.string(), "--mixed-precision", "f16"});
  ASSERT_EQ(h.status, 0) << h.out << h.err;
  EXPECT_NE(h.out.find("Loss scaling (f16): scale "), std::string::npos) << h.out;
  EXPECT_TRUE(fs::is_regular_file(f16 / "checkpoints" / "epoch-1" / "grad_scaler.json"));
  // A damaged value in run.json is reported as such.
  auto j = nlohmann::json::parse(slurp(f16 / "run.json"));
  j["train"]["mixed_precision"] = "fp8";
  std::ofstream(f16 / "run.json") << j.dump(2);
  expect_error(ember({"train", "--resume", "--run-dir", f16.string(), "--no-tui"}), 1,
               {"run.json is damaged: train.mixed_precision 'fp8' is not none, bf16 or f16"});
}

TEST_F(CliTest, ResumeReadsModelOptionsAsTheRunsModel) {
  // --hidden on resuming an MLP run: the MLP's widths, not the (default) CNN's.
  const fs::path mlp = tmp_->path() / "mlp-resume";
  fs::copy(mlp_run(), mlp, fs::copy_options::recursive);
  const Result same =
      ember({"train", "--resume", "--run-dir", mlp.string(), "--hidden", "512", "256", "--no-tui"});
  EXPECT_EQ(same.status, 0) << same.out << same.err;
  expect_error(ember({"train", "--resume", "--run-dir", mlp.string(), "--hidden", "16"}), 1,
               {"cannot resume", "--hidden [16] differs from the run's [512,256]"});
  // Only the option given is compared, not the whole model config.
  expect_error(ember({"train", "--resume", "--run-dir", run_dir_.string(), "--dropout", "0.5"}), 1,
               {"--dropout 0.5 differs from the run's 0.25"});
}

TEST_F(CliTest, ResumeWithMoreEpochsExtendsTheRun) {
  // Issue 19: --resume --epochs N past the run's epochs trains on; fewer is refused.
  const fs::path mlp = tmp_->path() / "mlp-extend";
  fs::copy(mlp_run(), mlp, fs::copy_options::recursive);
  // --keep is part of the run (issue 19: it was not saved, so a resumed run fell back to the
  // default): a value in run.json survives a resume without --keep.
  auto saved = nlohmann::json::parse(slurp(mlp / "run.json"));
  EXPECT_EQ(saved["train"]["keep"], 2);
  saved["train"]["keep"] = 5;
  std::ofstream(mlp / "run.json") << saved.dump(2);
  // A quantized model of the 1-epoch model goes out of date with the new final model.
  ASSERT_EQ(ember({"quantize", mlp.string()}).status, 0);
  ASSERT_TRUE(fs::exists(mlp / "model-quantized.safetensors"));
  const Result r =
      ember({"train", "--resume", "--run-dir", mlp.string(), "--epochs", "2", "--no-tui"});
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_FALSE(fs::exists(mlp / "model-quantized.safetensors"));
  EXPECT_NE(r.out.find("Removed the out-of-date"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Extending the run from 1 to 2 epochs"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("[train] epoch 1 done"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("[train] epoch 2 done"), std::string::npos) << r.out;
  EXPECT_EQ(nlohmann::json::parse(slurp(mlp / "run.json"))["train"]["epochs"], 2);
  EXPECT_EQ(nlohmann::json::parse(slurp(mlp / "run.json"))["train"]["keep"], 5);
  // A keep outside the option's bounds makes run.json damaged.
  {
    const fs::path bad = tmp_->path() / "mlp-keep0";
    fs::copy(mlp_run(), bad, fs::copy_options::recursive);
    auto j = nlohmann::json::parse(slurp(bad / "run.json"));
    j["train"]["keep"] = 0;
    std::ofstream(bad / "run.json") << j.dump(2);
    expect_error(ember({"train", "--resume", "--run-dir", bad.string(), "--no-tui"}), 1,
                 {"run.json is damaged: train.keep 0 is outside 1..100000"});
  }
  EXPECT_NE(slurp(mlp / "valid.jsonl").find("\"epoch\":2"), std::string::npos);
  EXPECT_TRUE(fs::exists(mlp / "checkpoints" / "epoch-2"));
  expect_error(ember({"train", "--resume", "--run-dir", mlp.string(), "--epochs", "1"}), 1,
               {"--epochs 1 is fewer than the run's 2 (run.json)", "extend a run, not shorten"});
}

TEST_F(CliTest, ARunOfAnotherModelIsRefused) {
  // --model names the model the run must hold.
  expect_error(ember({"eval", mlp_run().string(), "--model", "cnn"}), 1,
               {"holds a 'mlp' model, not 'cnn'"});
  // Resuming with another model.
  expect_error(ember({"train", "--resume", "--run-dir", run_dir_.string(), "--model", "mlp"}), 1,
               {"cannot resume", "--model \"mlp\" differs from the run's \"cnn\""});
  // Weights of another run's model, by file or copied over the final model.
  expect_error(ember({"eval", run_dir_.string(), "--checkpoint",
                      (mlp_run() / "model.safetensors").string()}),
               1, {"holds a 'mlp' model that differs from the run's 'cnn' model"});
  const fs::path mixed = copy_run("mixed");
  fs::copy_file(mlp_run() / "model.safetensors", mixed / "model.safetensors",
                fs::copy_options::overwrite_existing);
  expect_error(ember({"eval", mixed.string()}), 1, {"holds a 'mlp' model"});
  // A file without a config: the key check names what does not fit.
  auto tensors = store::read_safetensors(mlp_run() / "model.safetensors");
  tensors.metadata.clear();
  store::write_safetensors(mixed / "model.safetensors", tensors);
  expect_error(ember({"infer", mixed.string(), test_png().string()}), 1,
               {"do not fit the run's model 'cnn'", "missing keys"});
}

TEST_F(CliTest, MissingRunsAndCheckpointsAreReported) {
  expect_error(ember({"eval", (tmp_->path() / "nowhere").string()}), 1, {"no run directory"});
  expect_error(ember({"summary", data_dir_.string()}), 1, {"not a run directory"});
  expect_error(ember({"eval", run_dir_.string(), "--checkpoint", "epoch-7"}), 1,
               {"has no checkpoint epoch-7", "present: epoch-1"});
  // A run killed before its first checkpoint: run.json only.
  const fs::path early = tmp_->path() / "early";
  fs::create_directories(early);
  fs::copy_file(run_dir_ / "run.json", early / "run.json");
  expect_error(ember({"eval", early.string()}), 1, {"has no checkpoint yet", "--resume"});
  // An existing run is neither resumed nor replaced silently.
  expect_error(ember({"train", "--run-dir", run_dir_.string(), "--no-tui"}), 1,
               {"already holds a run", "--resume", "--overwrite"});
  // A file that is not an image.
  const fs::path text = tmp_->path() / "not-an-image.png";
  std::ofstream(text) << "hello";
  expect_error(ember({"infer", run_dir_.string(), text.string()}), 1, {"cannot decode"});
  // Issue 19: a BMP with its header and no pixels was classified as a black image.
  const fs::path bmp = tmp_->path() / "header-only.bmp";
  {
    std::string h(54, '\0');
    const auto put32 = [&](std::size_t at, std::uint32_t v) {
      for (int i = 0; i < 4; ++i) h[at + i] = static_cast<char>((v >> (8 * i)) & 0xff);
    };
    h[0] = 'B';
    h[1] = 'M';
    put32(2, 54 + 28 * 28 * 3);  // file size as the header claims it
    put32(10, 54);               // pixel data offset
    put32(14, 40);               // BITMAPINFOHEADER
    put32(18, 28);               // width
    put32(22, 28);               // height
    h[26] = 1;                   // planes
    h[28] = 24;                  // bits per pixel
    std::ofstream(bmp, std::ios::binary) << h;
  }
  expect_error(ember({"infer", run_dir_.string(), bmp.string()}), 1,
               {"header-only.bmp: truncated (the image data ends before its 28x28 pixels do)"});
}

TEST_F(CliTest, QuantizeThenEvalAndInferTheQuantizedModel) {
  const fs::path q = run_dir_ / "model-quantized.safetensors";
  std::error_code ec;
  fs::remove(q, ec);
  expect_error(ember({"eval", run_dir_.string(), "--quantized", "--limit", "10"}), 1,
               {"has no quantized model yet", "ember quantize"});
  expect_error(ember({"quantize", run_dir_.string(), "--scheme", "int3"}), 1,
               {"unknown scheme 'int3'"});
  expect_error(ember({"quantize", run_dir_.string(), "--modules", "nothing*"}), 1,
               {"no layer", "--modules"});
  EXPECT_FALSE(fs::exists(q));

  const Result r = ember({"quantize", run_dir_.string()});
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* part : {"int8 symmetric per-channel(axis=0) f32", "quantized  conv1",
                           "quantized  fc2", "x smaller"}) {
    EXPECT_NE(r.out.find(part), std::string::npos) << part << " in\n" << r.out;
  }
  const auto file = store::read_safetensors(q);
  EXPECT_TRUE(file.metadata.count("config"));  // the run's model, as in model.safetensors
  EXPECT_TRUE(file.metadata.count("ember.quantized"));
  EXPECT_EQ(file.metadata.at("ember.quantized.scheme"), "int8-per-channel");
  const double ratio = static_cast<double>(fs::file_size(run_dir_ / "model.safetensors")) /
                       static_cast<double>(fs::file_size(q));
  EXPECT_GT(ratio, 3.7);

  const Result f32 = ember({"eval", run_dir_.string(), "--limit", "1000"});
  ASSERT_EQ(f32.status, 0) << f32.err;
  const double acc_f32 = nlohmann::json::parse(slurp(run_dir_ / "eval.json"))["accuracy"];
  const Result e = ember({"eval", run_dir_.string(), "--limit", "1000", "--quantized"});
  ASSERT_EQ(e.status, 0) << e.err;
  // Beside the float model's results, not over them.
  const auto eval = nlohmann::json::parse(slurp(run_dir_ / "eval-quantized.json"));
  EXPECT_EQ(eval["checkpoint"], "quantized model");
  EXPECT_NEAR(eval["accuracy"].get<double>(), acc_f32, 0.01);
  EXPECT_EQ(nlohmann::json::parse(slurp(run_dir_ / "eval.json"))["accuracy"].get<double>(),
            acc_f32);
  EXPECT_EQ(lines(slurp(run_dir_ / "confusion_matrix-quantized.csv")).size(), 11u);
  expect_error(ember({"eval", run_dir_.string(), "--quantized", "--checkpoint", "last"}), 2,
               {"--checkpoint excludes --quantized"});
  expect_error(ember({"infer", run_dir_.string(), "--quantized", "--checkpoint", "last",
                      test_png().string()}),
               2, {"--checkpoint excludes --quantized"});

  const Result i = ember({"infer", run_dir_.string(), "--quantized", test_png().string()});
  ASSERT_EQ(i.status, 0) << i.err;
  const Result i32 = ember({"infer", run_dir_.string(), test_png().string()});
  ASSERT_EQ(i32.status, 0) << i32.err;
  const std::string head = lines(i.out).at(0), head32 = lines(i32.out).at(0);
  EXPECT_EQ(head.substr(0, head.find('(')), head32.substr(0, head32.find('(')));  // same class

  const Result s = ember({"summary", run_dir_.string()});
  EXPECT_NE(s.out.find("model-quantized.safetensors (int8-per-channel)"), std::string::npos)
      << s.out;
  for (const char* part : {"Test accuracy: ", "Test accuracy (quantized): ",
                           "quantized model; "
                           "`ember eval "}) {
    EXPECT_NE(s.out.find(part), std::string::npos) << part << " in\n" << s.out;
  }

  // Bad arguments are refused before anything runs.
  expect_error(ember({"quantize", run_dir_.string(), "--calibrate", "abc"}), 2,
               {"--calibrate", "must be a whole number in [0, 100000], got 'abc'"});
  expect_error(ember({"quantize", run_dir_.string(), "--scheme", "int8-f16"}), 1,
               {"f16 scales are for the per-block level only"});
  expect_error(ember({"quantize", run_dir_.string(), "--modules", "nope*", "--calibrate", "2"}), 1,
               {"--modules matches no layer",
                "(its Linear and Conv layers: conv1, conv2, fc1, "
                "fc2)"});

  // Static quantization: the layers' inputs calibrated on 3 training batches.
  expect_error(ember({"quantize", run_dir_.string(), "--calibrate", "2", "--observer", "median"}),
               2, {"--observer: median not in"});
  expect_error(ember({"quantize", run_dir_.string(), "--observer", "percentile"}), 2,
               {"--observer requires --calibrate"});
  const Result rc =
      ember({"quantize", run_dir_.string(), "--calibrate", "3", "--observer", "percentile"});
  ASSERT_EQ(rc.status, 0) << rc.err;
  for (const char* part : {"Calibrated the layers' inputs on 3 training batches of", "(percentile)",
                           "quantized  fc1, input u8 affine per-tensor (scale="}) {
    EXPECT_NE(rc.out.find(part), std::string::npos) << part << " in\n" << rc.out;
  }
  const auto cal = store::read_safetensors(q);
  EXPECT_NE(cal.metadata.at("ember.quantized.calibration").find("3 training batches"),
            std::string::npos);
  const auto inputs = nlohmann::json::parse(cal.metadata.at("ember.quantized.inputs"));
  for (const char* layer : {"conv1", "conv2", "fc1", "fc2"}) {
    EXPECT_TRUE(inputs.contains(layer)) << layer << " in " << inputs.dump();
  }
  // conv1 sees normalised images: zero point where 0 falls in their range.
  EXPECT_GT(inputs["conv1"]["zero_point"].get<int>(), 0);
  const Result ec8 = ember({"eval", run_dir_.string(), "--limit", "1000", "--quantized"});
  ASSERT_EQ(ec8.status, 0) << ec8.err;
  EXPECT_NEAR(
      nlohmann::json::parse(slurp(run_dir_ / "eval-quantized.json"))["accuracy"].get<double>(),
      acc_f32, 0.02);

  // int4 blocks of 32 (f16 scales): conv1's row of 9 weights cannot be blocked and stays f32.
  const Result r4 = ember({"quantize", run_dir_.string(), "--scheme", "int4-block32"});
  ASSERT_EQ(r4.status, 0) << r4.err;
  EXPECT_NE(r4.out.find("kept f32   conv1"), std::string::npos) << r4.out;
  EXPECT_GT(static_cast<double>(fs::file_size(run_dir_ / "model.safetensors")) /
                static_cast<double>(fs::file_size(q)),
            6.5);
  // A new quantized model makes the earlier one's evaluation out of date: it is removed.
  EXPECT_FALSE(fs::exists(run_dir_ / "eval-quantized.json"));
  // Every --modules pattern must match a layer.
  expect_error(ember({"quantize", run_dir_.string(), "--modules", "fc1", "--modules", "typo"}), 1,
               {"--modules typo matches no layer"});
  // Resuming the finished run trains nothing: the quantized model stays.
  const Result again = ember({"train", "--resume", "--run-dir", run_dir_.string(), "--no-tui"});
  ASSERT_EQ(again.status, 0) << again.out << again.err;
  EXPECT_TRUE(fs::exists(q)) << again.out;
  // Weights only again: the earlier run's input record is gone.
  EXPECT_FALSE(store::read_safetensors(q).metadata.count("ember.quantized.inputs"));
  const Result e4 = ember({"eval", run_dir_.string(), "--limit", "1000", "--quantized"});
  ASSERT_EQ(e4.status, 0) << e4.err;
  EXPECT_NEAR(
      nlohmann::json::parse(slurp(run_dir_ / "eval-quantized.json"))["accuracy"].get<double>(),
      acc_f32, 0.05);
  // A damaged scheme record is reported, not guessed.
  auto damaged = store::read_safetensors(q);
  damaged.metadata["ember.quantized"] = R"({"fc1": {"value": "int8"}})";
  store::write_safetensors(q, damaged);
  expect_error(ember({"eval", run_dir_.string(), "--limit", "10", "--quantized"}), 1,
               {"scheme of layer 'fc1'", "malformed"});
  // A record that contradicts the tensors is named as such, not as another run's model.
  damaged.metadata["ember.quantized"] = R"({"fc1": "int8-per-channel0"})";
  store::write_safetensors(q, damaged);
  expect_error(ember({"eval", run_dir_.string(), "--limit", "10", "--quantized"}), 1,
               {"is inconsistent: the quantized tensors of fc1 (int8-per-channel0) do not fit"});
  fs::remove(q, ec);
  fs::remove(run_dir_ / "eval-quantized.json", ec);
  fs::remove(run_dir_ / "confusion_matrix-quantized.csv", ec);
}

}  // namespace
}  // namespace ember::cli::testing

namespace ember::cli::testing {
namespace {

TEST_F(CliTest, ModelAndTrainingOptionsAreRecordedAndChecked) {
  // A wider CNN with flips and label smoothing: run.json records every choice, and the model
  // has the parameters those widths give (hand count below).
  const fs::path dir = tmp_->path() / "options";
  const Result r = ember({"train",
                          "--dataset",
                          "fashion-mnist",
                          data_dir_.string(),
                          "--epochs",
                          "1",
                          "--limit",
                          "600",
                          "--no-tui",
                          "--run-dir",
                          dir.string(),
                          "--channels",
                          "8",
                          "16",
                          "--hidden",
                          "24",
                          "--dropout",
                          "0.5",
                          "--augment",
                          "flip",
                          "--label-smoothing",
                          "0.1"});
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const auto run = nlohmann::json::parse(slurp(dir / "run.json"));
  EXPECT_EQ(run["model"]["config"]["channels"], nlohmann::json({8, 16}));
  EXPECT_EQ(run["model"]["config"]["d_hidden"], 24);
  EXPECT_EQ(run["model"]["config"]["dropout"], 0.5);
  EXPECT_EQ(run["train"]["augment"], "flip");
  EXPECT_EQ(run["train"]["label_smoothing"], 0.1);
  // conv1 1*8*9+8, bn1 2*8, conv2 8*16*9+16, bn2 2*16, fc1 16*7*7*24+24, fc2 24*10+10.
  const std::size_t params = (72 + 8) + 16 + (1152 + 16) + 32 + (18816 + 24) + (240 + 10);
  EXPECT_NE(r.out.find("cnn (" + std::to_string(params) + " parameters)"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("augment flip, label smoothing 0.1"), std::string::npos) << r.out;
  // The same run without label smoothing trains on another loss: its first batches see the
  // same images and weights, so only the smoothing makes the logged train losses differ.
  const fs::path plain = tmp_->path() / "options-plain";
  ASSERT_EQ(ember({"train",     "--dataset", "fashion-mnist", data_dir_.string(),
                   "--epochs",  "1",         "--limit",       "600",
                   "--no-tui",  "--run-dir", plain.string(),  "--channels",
                   "8",         "16",        "--hidden",      "24",
                   "--dropout", "0.5",       "--augment",     "flip"})
                .status,
            0);
  const auto first_loss = [](const fs::path& log) {
    std::smatch m;
    const std::string text = slurp(log);
    EXPECT_TRUE(std::regex_search(
        text, m, std::regex(R"re("epoch":1,"metric":"Loss","value":([0-9.eE+-]+))re")))
        << text;
    return m.empty() ? 0.0 : std::stod(m[1].str());
  };
  EXPECT_NE(first_loss(dir / "train.jsonl"), first_loss(plain / "train.jsonl"));

  // Resuming with other model widths is refused; the options apply to the right model only.
  expect_error(
      ember({"train", "--resume", "--run-dir", dir.string(), "--hidden", "32", "--no-tui"}), 1,
      {"cannot resume", "--hidden"});
  expect_error(ember({"train", "--model", "mlp", "--channels", "8", "16"}), 1,
               {"--channels applies to the cnn model only"});
  expect_error(ember({"train", "--hidden", "64", "32"}), 1, {"--hidden", "one hidden Linear"});
  expect_error(ember({"train", "--augment", "rotate"}), 2, {"--augment", "rotate"});
  expect_error(ember({"train", "--label-smoothing", "1"}), 2, {"--label-smoothing"});
  expect_error(ember({"train", "--channels", "8"}), 2, {"--channels"});
  expect_error(ember({"train", "--dropout", "1.5"}), 2, {"--dropout"});
}

}  // namespace
}  // namespace ember::cli::testing
