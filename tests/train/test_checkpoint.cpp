// Checkpoint folders: names, order, atomic commit, pruning.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include "train_test_util.hpp"

namespace ember::train {
namespace {

namespace fs = std::filesystem;
using testing::slurp;
using testing::TempDir;

void write_marker(const fs::path& dir, const std::string& text) {
  std::ofstream(dir / "state.json") << text;
}

std::vector<std::string> names(const std::vector<CheckpointId>& ids) {
  std::vector<std::string> out;
  for (const auto& id : ids) out.push_back(id.name());
  return out;
}

std::vector<std::string> entries(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

TEST(TrainCheckpoint, Ids) {
  EXPECT_EQ((CheckpointId{3, false, 0}).name(), "epoch-3");
  EXPECT_EQ((CheckpointId{3, true, 120}).name(), "epoch-3-batch-120");
  EXPECT_EQ(CheckpointId::parse("epoch-12"), (CheckpointId{12, false, 0}));
  EXPECT_EQ(CheckpointId::parse("epoch-2-batch-7"), (CheckpointId{2, true, 7}));
  for (const char* bad : {"epoch-0", "epoch-", "epoch-01", "epoch-2-batch-", "epoch-2x",
                          ".tmp-epoch-2-abc", "model.safetensors"}) {
    EXPECT_FALSE(CheckpointId::parse(bad)) << bad;
  }
  // Progress order: partial checkpoints of an epoch before its end, then the next epoch.
  EXPECT_LT((CheckpointId{2, false, 0}), (CheckpointId{3, true, 1}));
  EXPECT_LT((CheckpointId{3, true, 1}), (CheckpointId{3, true, 20}));
  EXPECT_LT((CheckpointId{3, true, 20}), (CheckpointId{3, false, 0}));
}

TEST(TrainCheckpoint, SaveListPrune) {
  TempDir run("ckpt");
  CheckpointStore store(run.path() / "checkpoints");
  EXPECT_FALSE(store.latest());
  for (std::size_t e = 1; e <= 5; ++e) {
    store.save({e, false, 0}, [&](const fs::path& d) { write_marker(d, std::to_string(e)); });
  }
  EXPECT_EQ(slurp(store.path({3, false, 0}) / "state.json"), "3");
  EXPECT_EQ(names(store.list()),
            (std::vector<std::string>{"epoch-1", "epoch-2", "epoch-3", "epoch-4", "epoch-5"}));
  // Keep the last 2 and the best (epoch 2).
  EXPECT_EQ(names(store.prune(2, {2})), (std::vector<std::string>{"epoch-1", "epoch-3"}));
  EXPECT_EQ(names(store.list()), (std::vector<std::string>{"epoch-2", "epoch-4", "epoch-5"}));
  // A partial checkpoint is the latest; the next epoch's end makes it obsolete.
  store.save({6, true, 3}, [&](const fs::path& d) { write_marker(d, "6.3"); });
  store.save({6, true, 9}, [&](const fs::path& d) { write_marker(d, "6.9"); });
  EXPECT_EQ(store.latest(), (CheckpointId{6, true, 9}));
  EXPECT_EQ(names(store.prune(2, {2})), (std::vector<std::string>{"epoch-6-batch-3"}));
  store.save({6, false, 0}, [&](const fs::path& d) { write_marker(d, "6"); });
  EXPECT_EQ(names(store.prune(1, {})),
            (std::vector<std::string>{"epoch-2", "epoch-4", "epoch-5", "epoch-6-batch-9"}));
  EXPECT_EQ(entries(store.dir()), (std::vector<std::string>{"epoch-6"}));
  EXPECT_THROW(store.prune(0, {}), ValueError);
  // Saving an existing name replaces it.
  store.save({6, false, 0}, [&](const fs::path& d) { write_marker(d, "again"); });
  EXPECT_EQ(slurp(store.path({6, false, 0}) / "state.json"), "again");
  EXPECT_EQ(entries(store.dir()), (std::vector<std::string>{"epoch-6"}));
}

TEST(TrainCheckpoint, FailedWriteLeavesPrevious) {
  TempDir run("ckpt-fail");
  CheckpointStore store(run.path());
  store.save({1, false, 0}, [&](const fs::path& d) { write_marker(d, "1"); });
  EXPECT_THROW(store.save({2, false, 0},
                          [&](const fs::path& d) {
                            write_marker(d, "2");
                            throw IoError("[test] disk full");
                          }),
               IoError);
  EXPECT_EQ(store.latest(), (CheckpointId{1, false, 0}));
  EXPECT_EQ(entries(store.dir()), (std::vector<std::string>{"epoch-1"}));
}

TEST(TrainCheckpoint, CrashBeforeRenameKeepsPreviousLatest) {
  TempDir run("ckpt-crash");
  CheckpointStore store(run.path());
  store.save({1, false, 0}, [&](const fs::path& d) { write_marker(d, "1"); });
  // A child process (a fork: it only writes files) writes epoch 2 completely and dies just
  // before the rename.
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    try {
      CheckpointStore child(run.path());
      child.set_before_commit([](const fs::path&) { ::_exit(7); });
      child.save({2, false, 0}, [&](const fs::path& d) { write_marker(d, "2"); });
    } catch (...) {
      ::_exit(2);
    }
    ::_exit(1);  // not reached when the hook ran
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 7);
  // The half-done save is a temporary folder: invisible, and epoch 1 is still the latest.
  const auto left = entries(store.dir());
  ASSERT_EQ(left.size(), 2u);
  EXPECT_EQ(left[0].rfind(".tmp-epoch-2-", 0), 0u) << left[0];
  EXPECT_EQ(left[1], "epoch-1");
  EXPECT_EQ(store.latest(), (CheckpointId{1, false, 0}));
  EXPECT_EQ(slurp(store.path({1, false, 0}) / "state.json"), "1");
  // The next save cleans the temporary folder up.
  store.save({2, false, 0}, [&](const fs::path& d) { write_marker(d, "2"); });
  EXPECT_EQ(entries(store.dir()), (std::vector<std::string>{"epoch-1", "epoch-2"}));
}

}  // namespace
}  // namespace ember::train
