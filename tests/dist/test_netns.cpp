// Two "hosts" in network namespaces the test creates (root only; skipped otherwise): one
// `ember launch --nnodes 2` per namespace, joined by a veth pair with addresses 10.213.0.1 and
// 10.213.0.2, train the MLP with one process each. Rank 1 must find its own address from the
// route to the master (no EMBER_DIST_HOSTNAME), and the result must equal the same job run
// with two local processes.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>

#include "cli_test_util.hpp"
#include "ember/store/safetensors.hpp"

namespace ember::cli::testing {
namespace {

int sh(const std::string& command) {
  const int st = std::system((command + " >/dev/null 2>&1").c_str());
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/// Two namespaces joined by a veth pair; removed at destruction.
class TwoHosts {
 public:
  TwoHosts() {
    const std::string id = std::to_string(::getpid() % 100000);
    a_ = "ember-a-" + id;
    b_ = "ember-b-" + id;
    const std::string va = "eva" + id, vb = "evb" + id;
    ok_ = ::geteuid() == 0 && sh("ip netns add " + a_) == 0 && sh("ip netns add " + b_) == 0 &&
          sh("ip link add " + va + " type veth peer name " + vb) == 0 &&
          sh("ip link set " + va + " netns " + a_) == 0 &&
          sh("ip link set " + vb + " netns " + b_) == 0 &&
          sh("ip -n " + a_ + " addr add 10.213.0.1/24 dev " + va) == 0 &&
          sh("ip -n " + b_ + " addr add 10.213.0.2/24 dev " + vb) == 0 &&
          sh("ip -n " + a_ + " link set " + va + " up") == 0 &&
          sh("ip -n " + b_ + " link set " + vb + " up") == 0 &&
          sh("ip -n " + a_ + " link set lo up") == 0 && sh("ip -n " + b_ + " link set lo up") == 0;
  }
  ~TwoHosts() {
    sh("ip netns del " + a_);
    sh("ip netns del " + b_);
  }
  bool ok() const { return ok_; }
  const std::string& a() const { return a_; }
  const std::string& b() const { return b_; }

 private:
  std::string a_, b_;
  bool ok_ = false;
};

/// Runs `ip netns exec NS ember args...` with output to `log`.{out,err}; returns its pid.
pid_t start_in(const std::string& ns, const std::vector<std::string>& args, const fs::path& log) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int o = ::open((log.string() + ".out").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int e = ::open((log.string() + ".err").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(o, 1);
    ::dup2(e, 2);
    std::vector<std::string> all{"ip", "netns", "exec", ns, EMBER_CLI};
    all.insert(all.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& s : all) argv.push_back(s.data());
    argv.push_back(nullptr);
    ::execvp("ip", argv.data());
    ::_exit(127);
  }
  return pid;
}

int wait_for(pid_t pid) {
  int st = 0;
  ::waitpid(pid, &st, 0);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

TEST(DdpNetns, TwoHostsTrainLikeTwoLocalProcesses) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to create network namespaces";
  TwoHosts hosts;
  if (!hosts.ok()) GTEST_SKIP() << "cannot create network namespaces and a veth pair here";
  TempDir tmp("netns");
  fs::path data = installed_fashion_mnist();
  if (data.empty()) {
    data = tmp.path() / "data";
    write_synthetic_mnist(data, 1400, 100);
  }
  const auto train = [&](const fs::path& run) {
    return std::vector<std::string>{
        "train",        "--dataset", "fashion-mnist", data.string(), "--model",   "mlp",
        "--dropout",    "0",         "--optimizer",   "sgd",         "--lr",      "0.05",
        "--limit",      "1280",      "--valid-size",  "128",         "--epochs",  "1",
        "--batch-size", "32",        "--workers",     "0",           "--threads", "1",
        "--no-tui",     "--run-dir", run.string()};
  };
  auto local = train(tmp.path() / "local");
  local.insert(local.begin() + 1, {"--nproc", "2"});
  ASSERT_EQ(run_ember(local, tmp.path() / "local").status, 0);

  ::setenv("EMBER_DIST_TIMEOUT", "30", 1);
  std::vector<pid_t> nodes;
  for (int node = 0; node < 2; ++node) {
    std::vector<std::string> args = {
        "launch",   "--nproc",          "1", "--nnodes", "2", "--node-rank", std::to_string(node),
        "--master", "10.213.0.1:29577", "--"};
    args.push_back(EMBER_CLI);
    const auto t = train(tmp.path() / "hosts");
    args.insert(args.end(), t.begin(), t.end());
    nodes.push_back(start_in(node == 0 ? hosts.a() : hosts.b(), args,
                             tmp.path() / ("node" + std::to_string(node))));
  }
  const int s0 = wait_for(nodes[0]), s1 = wait_for(nodes[1]);
  ::unsetenv("EMBER_DIST_TIMEOUT");
  ASSERT_EQ(s0, 0) << slurp(tmp.path() / "node0.err");
  ASSERT_EQ(s1, 0) << slurp(tmp.path() / "node1.err");
  const auto a = store::read_safetensors(tmp.path() / "local" / "model.safetensors");
  const auto b = store::read_safetensors(tmp.path() / "hosts" / "model.safetensors");
  for (const auto& [name, t] : a.tensors) {
    ASSERT_NE(b.find(name), nullptr) << name;
    EXPECT_EQ(t, *b.find(name)) << name << ": the same job over two hosts gives the same bits";
  }
}

}  // namespace
}  // namespace ember::cli::testing
