// Data-parallel training through the `ember` tool: 2 processes with batch 32 each end with the
// weights of 1 process with batch 64 (3 x 32 those of 1 x 96); a rank killed with SIGKILL stops the
// others with an error naming it within the collective timeout, and --resume then completes the run
// with the weights of an uninterrupted one (so does a SIGINT, which all ranks agree on); the
// launcher's environment, failure handling and bad arguments.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <thread>

#include "cli_test_util.hpp"
#include "ember/store/safetensors.hpp"

namespace ember::cli::testing {
namespace {

using namespace std::chrono_literals;

/// Fashion-MNIST when installed, else a synthetic set of the same shape.
fs::path data_dir(const TempDir& tmp) {
  fs::path data = installed_fashion_mnist();
  if (data.empty()) {
    data = tmp.path() / "data";
    write_synthetic_mnist(data, 1400, 100);
  }
  return data;
}

/// The largest absolute difference between the tensors of two model files (same keys).
double max_weight_diff(const fs::path& a, const fs::path& b) {
  const auto ta = store::read_safetensors(a), tb = store::read_safetensors(b);
  double worst = 0;
  EXPECT_EQ(ta.tensors.size(), tb.tensors.size());
  for (const auto& [name, data] : ta.tensors) {
    const TensorData* other = tb.find(name);
    if (other == nullptr) {
      ADD_FAILURE() << name << " missing";
      continue;
    }
    const auto x = data.to_vec<float>(), y = other->to_vec<float>();
    EXPECT_EQ(x.size(), y.size()) << name;
    for (std::size_t i = 0; i < std::min(x.size(), y.size()); ++i) {
      worst = std::max(worst, static_cast<double>(std::abs(x[i] - y[i])));
    }
  }
  return worst;
}

std::vector<std::string> train_args(const fs::path& data, const fs::path& run, int batch,
                                    std::size_t epochs = 1) {
  // MLP without dropout and SGD: no BatchNorm statistics (per rank, as in PyTorch's DDP
  // without SyncBatchNorm) and no per-rank dropout masks, so only rounding differs.
  return {"train",         "--dataset",
          "fashion-mnist", data.string(),
          "--model",       "mlp",
          "--dropout",     "0",
          "--optimizer",   "sgd",
          "--lr",          "0.05",
          "--limit",       "1280",
          "--valid-size",  "128",
          "--epochs",      std::to_string(epochs),
          "--batch-size",  std::to_string(batch),
          "--workers",     "0",
          "--threads",     "1",
          "--no-tui",      "--run-dir",
          run.string()};
}

TEST(DdpCli, TwoProcessesOfBatch32EqualOneProcessOfBatch64) {
  TempDir tmp("ddp");
  const fs::path data = data_dir(tmp);
  const auto one = run_ember(train_args(data, tmp.path() / "one", 64), tmp.path() / "one");
  ASSERT_EQ(one.status, 0) << one.err;
  auto args = train_args(data, tmp.path() / "two", 32);
  args.insert(args.begin() + 1, {"--nproc", "2"});
  const auto two = run_ember(args, tmp.path() / "two");
  ASSERT_EQ(two.status, 0) << two.err << two.out;
  EXPECT_NE(two.out.find("2 processes (global batch 64)"), std::string::npos) << two.out;
  EXPECT_NE(two.out.find("Gradient all-reduce:"), std::string::npos) << two.out;
  const double diff = max_weight_diff(tmp.path() / "one" / "model.safetensors",
                                      tmp.path() / "two" / "model.safetensors");
  EXPECT_LT(diff, 1e-5);
  std::cout << "max |w(1 x 64) - w(2 x 32)| = " << diff << "\n";
  // The validation metrics are those of the whole (global) batches.
  const auto valid_line = [](const std::string& out) {
    for (const auto& l : lines(out)) {
      if (l.find("| Valid | Accuracy") != std::string::npos) {
        std::istringstream is(l.substr(l.find("Accuracy") + 8));
        std::string bar, value;
        is >> bar >> value;  // "| 60.94"
        return value;
      }
    }
    return std::string();
  };
  EXPECT_EQ(valid_line(one.out), valid_line(two.out));
  EXPECT_FALSE(valid_line(one.out).empty()) << one.out;
}

TEST(DdpCli, ThreeProcessesOfBatch32EqualOneProcessOfBatch96) {
  TempDir tmp("ddp3");
  const fs::path data = data_dir(tmp);
  const auto one = run_ember(train_args(data, tmp.path() / "one", 96), tmp.path() / "one");
  ASSERT_EQ(one.status, 0) << one.err;
  auto args = train_args(data, tmp.path() / "three", 32);
  args.insert(args.begin() + 1, {"--nproc", "3"});
  const auto three = run_ember(args, tmp.path() / "three");
  ASSERT_EQ(three.status, 0) << three.err << three.out;
  const double diff = max_weight_diff(tmp.path() / "one" / "model.safetensors",
                                      tmp.path() / "three" / "model.safetensors");
  EXPECT_LT(diff, 1e-5);
  std::cout << "max |w(1 x 96) - w(3 x 32)| = " << diff << "\n";
}

/// The pid of the process with RANK=<rank> among the children of `launcher` (-1: none).
pid_t rank_pid(pid_t launcher, int rank) {
  const std::string children = slurp("/proc/" + std::to_string(launcher) + "/task/" +
                                     std::to_string(launcher) + "/children");
  std::istringstream is(children);
  for (pid_t p; is >> p;) {
    std::istringstream env(slurp("/proc/" + std::to_string(p) + "/environ"));
    for (std::string var; std::getline(env, var, '\0');) {
      if (var == "RANK=" + std::to_string(rank)) return p;
    }
  }
  return -1;
}

TEST(DdpCli, KilledRankStopsTheOthersAndResumeCompletes) {
  TempDir tmp("ddpkill");
  const fs::path data = data_dir(tmp);
  // The reference: an uninterrupted 2-process run of 3 epochs.
  auto ref_args = train_args(data, tmp.path() / "ref", 32, 3);
  ref_args.insert(ref_args.begin() + 1, {"--nproc", "2"});
  ASSERT_EQ(run_ember(ref_args, tmp.path() / "ref").status, 0);

  ::setenv("EMBER_DIST_TIMEOUT", "5", 1);
  auto args = train_args(data, tmp.path() / "run", 32, 3);
  args.insert(args.begin() + 1, {"--nproc", "2"});
  Child launcher(args, tmp.path() / "run");
  // Kill rank 1 once epoch 1's checkpoint exists.
  const auto start = std::chrono::steady_clock::now();
  while (!fs::exists(tmp.path() / "run" / "checkpoints" / "epoch-1") && launcher.running() &&
         std::chrono::steady_clock::now() - start < 120s) {
    std::this_thread::sleep_for(5ms);
  }
  pid_t victim = -1;
  // The launcher forked its ranks before the checkpoint: find rank 1.
  {
    std::string children;
    for (int tries = 0; tries < 100 && victim < 0; ++tries) {
      const std::string path = "/proc/" + std::to_string(::getpid()) + "/task/" +
                               std::to_string(::getpid()) + "/children";
      std::istringstream launchers(slurp(path));
      for (pid_t l; launchers >> l && victim < 0;) victim = rank_pid(l, 1);
      if (victim < 0) std::this_thread::sleep_for(10ms);
    }
  }
  ASSERT_GT(victim, 0) << "rank 1 not found";
  const auto killed_at = std::chrono::steady_clock::now();
  ::kill(victim, SIGKILL);
  const int status = launcher.wait();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - killed_at).count();
  ::unsetenv("EMBER_DIST_TIMEOUT");
  EXPECT_EQ(status, 1);
  const std::string err = launcher.err();
  EXPECT_NE(err.find("error: rank 1 of 2 was killed by signal SIGKILL"), std::string::npos) << err;
  EXPECT_LT(seconds, 5 + 10) << "the timeout (5 s) plus the launcher's grace period";

  // Resume on both ranks: the result equals the uninterrupted run.
  auto resume = args;
  resume.push_back("--resume");
  const auto r = run_ember(resume, tmp.path() / "resume");
  ASSERT_EQ(r.status, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("Resuming from"), std::string::npos) << r.out;
  EXPECT_EQ(max_weight_diff(tmp.path() / "ref" / "model.safetensors",
                            tmp.path() / "run" / "model.safetensors"),
            0.0);

  // SIGINT sent to the launcher reaches every rank; they agree to stop at the same step, rank
  // 0 writes a checkpoint, everyone exits 0, and --resume again ends at the reference.
  auto again = train_args(data, tmp.path() / "stop", 32, 3);
  again.insert(again.begin() + 1, {"--nproc", "2"});
  Child stopped(again, tmp.path() / "stop");
  const auto t0 = std::chrono::steady_clock::now();
  while (!fs::exists(tmp.path() / "stop" / "checkpoints" / "epoch-1") && stopped.running() &&
         std::chrono::steady_clock::now() - t0 < 120s) {
    std::this_thread::sleep_for(5ms);
  }
  stopped.kill(SIGINT);
  EXPECT_EQ(stopped.wait(), 0) << stopped.err();
  EXPECT_NE(stopped.out().find("Training stopped"), std::string::npos) << stopped.out();
  auto resume2 = again;
  resume2.push_back("--resume");
  const auto r2 = run_ember(resume2, tmp.path() / "resume2");
  ASSERT_EQ(r2.status, 0) << r2.err << r2.out;
  EXPECT_EQ(max_weight_diff(tmp.path() / "ref" / "model.safetensors",
                            tmp.path() / "stop" / "model.safetensors"),
            0.0);
}

TEST(DdpCli, LauncherSetsTheEnvironmentAndStopsTheOthersWhenOneFails) {
  TempDir tmp("launch");
  const fs::path out = tmp.path() / "env";
  const auto ok =
      run_ember({"launch", "--nproc", "3", "--", "/bin/sh", "-c",
                 "echo $RANK $LOCAL_RANK $WORLD_SIZE $LOCAL_WORLD_SIZE $MASTER_ADDR > " +
                     out.string() + ".$RANK"},
                tmp.path() / "ok");
  ASSERT_EQ(ok.status, 0) << ok.err;
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(slurp(out.string() + "." + std::to_string(r)),
              std::to_string(r) + " " + std::to_string(r) + " 3 3 127.0.0.1\n");
  }
  const auto t0 = std::chrono::steady_clock::now();
  const auto bad = run_ember({"launch", "--nproc", "2", "--grace", "2", "--", "/bin/sh", "-c",
                              "if [ $RANK = 1 ]; then exit 3; fi; exec sleep 60"},
                             tmp.path() / "bad");
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(bad.status, 1);
  EXPECT_NE(bad.err.find("ember launch: error: rank 1 of 2 exited with status 3"),
            std::string::npos)
      << bad.err;
  EXPECT_LT(s, 20.0);  // rank 0 (sleep 60) was stopped
}

TEST(DdpCli, LauncherRejectsBadArguments) {
  TempDir tmp("launchargs");
  auto r = run_ember({"launch", "--nnodes", "2", "--", "true"}, tmp.path() / "a");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("needs --master ADDR:PORT"), std::string::npos) << r.err;
  r = run_ember({"launch", "--nnodes", "2", "--node-rank", "2", "--master", "h:1", "--", "true"},
                tmp.path() / "b");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("--node-rank 2 is outside [0, 2)"), std::string::npos) << r.err;
  r = run_ember({"launch", "--nnodes", "2", "--master", "nohost", "--", "true"}, tmp.path() / "c");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("expected ADDR:PORT"), std::string::npos) << r.err;
  r = run_ember({"launch", "--nproc", "0", "--", "true"}, tmp.path() / "d");
  EXPECT_EQ(r.status, 2);
}

}  // namespace
}  // namespace ember::cli::testing
