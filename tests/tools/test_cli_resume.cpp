// `ember train` killed with SIGKILL during epoch 3, then rerun with --resume: it continues
// from the checkpoint of epoch 2 and ends exactly where an uninterrupted run with the same
// seed ends (the Learner reseeds every batch and the loader's order depends only on the
// seed and the epoch, so the resumed run repeats the same computations).
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "cli_test_util.hpp"
#include "ember/store/safetensors.hpp"

namespace ember::cli::testing {
namespace {

using Clock = std::chrono::steady_clock;

/// (metric, epoch) -> value of a log file, and how often each (metric, epoch) occurs.
struct Log {
  std::map<std::pair<std::string, int>, nlohmann::json> values;
  std::map<std::pair<std::string, int>, int> count;
};

Log read_log(const fs::path& file) {
  Log log;
  for (const auto& line : lines(slurp(file))) {
    const auto j = nlohmann::json::parse(line);
    const auto key = std::make_pair(j["metric"].get<std::string>(), j["epoch"].get<int>());
    log.values[key] = j["value"];
    ++log.count[key];
  }
  return log;
}

/// Waits until `path` exists (true) or `seconds` pass or the child exits (false).
bool wait_for_path(const fs::path& path, Child& child, double seconds) {
  const auto end = Clock::now() + std::chrono::duration<double>(seconds);
  while (Clock::now() < end) {
    if (fs::exists(path)) return true;
    if (!child.running()) return fs::exists(path);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

TEST(CliResume, SigkillDuringEpoch3ThenResumeEqualsAnUninterruptedRun) {
  TempDir tmp("resume");
  fs::path data = installed_fashion_mnist();
  if (data.empty()) {
    data = tmp.path() / "data";
    write_synthetic_mnist(data, 1200, 200);
  }
  const std::vector<std::string> common = {"train",    "--dataset", "fashion-mnist", data.string(),
                                           "--epochs", "4",         "--limit",       "1200",
                                           "--seed",   "7",         "--no-tui"};
  const auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = common;
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };

  // The reference: four epochs without interruption.
  const fs::path ref = tmp.path() / "reference";
  const Result full = run_ember(with({"--run-dir", ref.string()}), tmp.path() / "full");
  ASSERT_EQ(full.status, 0) << full.out << full.err;

  // The same run, killed a tenth of an epoch after the checkpoint of epoch 2 appeared: inside
  // epoch 3 even when the machine's load drops and later epochs run several times faster
  // (a third of an epoch once let epoch 3, or the whole run, end first on a loaded machine).
  const fs::path run = tmp.path() / "killed";
  {
    Child child(with({"--run-dir", run.string()}), tmp.path() / "killed");
    ASSERT_TRUE(wait_for_path(run / "checkpoints" / "epoch-1", child, 600)) << child.err();
    const auto t1 = Clock::now();
    ASSERT_TRUE(wait_for_path(run / "checkpoints" / "epoch-2", child, 600)) << child.err();
    const auto epoch_time = Clock::now() - t1;
    std::this_thread::sleep_for(epoch_time / 10);
    ASSERT_TRUE(child.running()) << "training ended before it could be killed";
    child.kill(SIGKILL);
    EXPECT_EQ(child.wait(), 128 + SIGKILL);
  }
  EXPECT_TRUE(fs::exists(run / "checkpoints" / "epoch-2"));
  EXPECT_FALSE(fs::exists(run / "checkpoints" / "epoch-3"));
  EXPECT_FALSE(fs::exists(run / "model.safetensors"));
  const Log before = read_log(run / "train.jsonl");
  EXPECT_TRUE(before.count.count({"Loss", 2}));
  EXPECT_FALSE(before.count.count({"Loss", 3}));

  // Resume: only --run-dir and --resume, the settings come from run.json.
  const Result resumed = run_ember({"train", "--resume", "--run-dir", run.string(), "--no-tui"},
                                   tmp.path() / "resumed");
  ASSERT_EQ(resumed.status, 0) << resumed.out << resumed.err;
  EXPECT_NE(resumed.out.find("Resuming from " + (run / "checkpoints" / "epoch-2").string()),
            std::string::npos)
      << resumed.out;
  EXPECT_EQ(resumed.out.find("[train] epoch 2 done"), std::string::npos) << resumed.out;
  EXPECT_NE(resumed.out.find("[train] epoch 3 done"), std::string::npos) << resumed.out;
  EXPECT_NE(resumed.out.find("[train] epoch 4 done"), std::string::npos) << resumed.out;

  // Logs: every epoch once; the loss and accuracy of every epoch equal the reference's.
  for (const char* split : {"train.jsonl", "valid.jsonl"}) {
    const Log got = read_log(run / split), want = read_log(ref / split);
    for (const char* metric : {"Loss", "Accuracy"}) {
      for (int e = 1; e <= 4; ++e) {
        const auto key = std::make_pair(std::string(metric), e);
        EXPECT_EQ(got.count.at(key), 1) << split << " " << metric << " " << e;
        EXPECT_EQ(got.values.at(key), want.values.at(key)) << split << " " << metric << " " << e;
      }
      EXPECT_FALSE(got.count.count({metric, 5}));
    }
  }
  // Checkpoints continue after epoch 2; the final weights equal the reference's bit for bit.
  EXPECT_TRUE(fs::exists(run / "checkpoints" / "epoch-3"));
  EXPECT_TRUE(fs::exists(run / "checkpoints" / "epoch-4"));
  const auto a = store::read_safetensors(run / "model.safetensors");
  const auto b = store::read_safetensors(ref / "model.safetensors");
  ASSERT_EQ(a.tensors.size(), b.tensors.size());
  for (std::size_t i = 0; i < a.tensors.size(); ++i) {
    EXPECT_EQ(a.tensors[i].first, b.tensors[i].first);
    EXPECT_TRUE(a.tensors[i].second.bytes() == b.tensors[i].second.bytes()) << a.tensors[i].first;
  }
}

}  // namespace
}  // namespace ember::cli::testing
