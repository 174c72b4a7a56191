// `ember launch`: starts the processes of a data-parallel job on this machine (torchrun's
// model), and `ember train --nproc N` through it.
//
//   ember launch --nproc 2 -- ember train --epochs 5
//   ember launch --nproc 2 --nnodes 2 --node-rank 0 --master 10.0.0.1:29500 -- ember train ...
//
// Each process gets MASTER_ADDR, MASTER_PORT, WORLD_SIZE (nproc * nnodes), RANK (node_rank *
// nproc + local rank), LOCAL_RANK, LOCAL_WORLD_SIZE and GROUP_RANK (the node rank), and,
// unless EMBER_NUM_THREADS or OMP_NUM_THREADS is set, EMBER_NUM_THREADS = cores / nproc (at
// least 1), so the processes do not oversubscribe the cores.
#include "launch.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <thread>

#include "commands.hpp"

namespace ember::cli {

namespace {

std::atomic<int> g_forward{0};  // a signal to forward to the ranks (0: none)

extern "C" void on_launcher_signal(int sig, siginfo_t* info, void*) {
  // A Ctrl-C at the terminal reaches every process of the foreground group, the ranks
  // included: forwarding it would deliver it twice (and a second SIGINT kills a rank). A
  // signal sent to the launcher alone (kill, SI_USER) is forwarded.
  if (sig == SIGINT && info != nullptr && info->si_code != SI_USER) return;
  g_forward.store(sig);
}

/// A free TCP port on this machine (for a single-node job without --master).
int free_local_port() {
  const int s = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (s < 0 || ::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::getsockname(s, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    if (s >= 0) ::close(s);
    return 29500;
  }
  ::close(s);
  return ntohs(a.sin_port);
}

std::string describe_status(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* name = sigabbrev_np(sig);
    return std::string("was killed by signal ") + (name ? "SIG" + std::string(name) : "") + " (" +
           std::to_string(sig) + ")";
  }
  return "exited with status " + std::to_string(WEXITSTATUS(status));
}

}  // namespace

namespace {
std::vector<std::string>& stored_command_line() {
  static std::vector<std::string> args;
  return args;
}
}  // namespace

void set_command_line(int argc, char** argv) {
  stored_command_line().assign(argv, argv + argc);
}

const std::vector<std::string>& command_line() {
  return stored_command_line();
}

std::pair<std::string, int> parse_master(const std::string& text) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) {
    throw CliError("--master " + text + ": expected ADDR:PORT (e.g. 10.0.0.1:29500)");
  }
  std::string addr = text.substr(0, colon);
  if (addr.size() > 2 && addr.front() == '[' && addr.back() == ']') {
    addr = addr.substr(1, addr.size() - 2);  // [::1]:29500
  }
  const std::string port = text.substr(colon + 1);
  char* end = nullptr;
  const long p = std::strtol(port.c_str(), &end, 10);
  if (*end != '\0' || p < 1 || p > 65535) {
    throw CliError("--master " + text + ": the port must be a number in 1..65535");
  }
  return {addr, static_cast<int>(p)};
}

int launch_processes(const LaunchSettings& s, const std::vector<std::string>& command) {
  if (command.empty()) throw CliError("no command to launch (give it after --)");
  if (s.nproc < 1) throw CliError("--nproc must be >= 1");
  if (s.nnodes < 1) throw CliError("--nnodes must be >= 1");
  if (s.node_rank < 0 || s.node_rank >= s.nnodes) {
    throw CliError("--node-rank " + std::to_string(s.node_rank) + " is outside [0, " +
                   std::to_string(s.nnodes) + ")");
  }
  std::string addr = "127.0.0.1";
  int port = 0;
  if (!s.master.empty()) {
    std::tie(addr, port) = parse_master(s.master);
  } else if (s.nnodes > 1) {
    throw CliError("--nnodes " + std::to_string(s.nnodes) +
                   " needs --master ADDR:PORT (rank 0's machine, the same on every node)");
  } else {
    port = free_local_port();
  }
  const int world = s.nproc * s.nnodes;
  const bool set_threads =
      std::getenv("EMBER_NUM_THREADS") == nullptr && std::getenv("OMP_NUM_THREADS") == nullptr;
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const unsigned threads = std::max(1u, cores / static_cast<unsigned>(s.nproc));

  struct sigaction sa {};
  sa.sa_sigaction = on_launcher_signal;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  struct sigaction old_int {
  }, old_term{}, old_hup{};
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);
  sigaction(SIGHUP, &sa, &old_hup);

  std::vector<pid_t> pids(static_cast<std::size_t>(s.nproc), -1);
  for (int local = 0; local < s.nproc; ++local) {
    const int rank = s.node_rank * s.nproc + local;
    const pid_t pid = ::fork();
    if (pid < 0) throw CliError(std::string("fork: ") + std::strerror(errno));
    if (pid == 0) {
      sigaction(SIGINT, &old_int, nullptr);
      sigaction(SIGTERM, &old_term, nullptr);
      sigaction(SIGHUP, &old_hup, nullptr);
      ::setenv("MASTER_ADDR", addr.c_str(), 1);
      ::setenv("MASTER_PORT", std::to_string(port).c_str(), 1);
      ::setenv("WORLD_SIZE", std::to_string(world).c_str(), 1);
      ::setenv("RANK", std::to_string(rank).c_str(), 1);
      ::setenv("LOCAL_RANK", std::to_string(local).c_str(), 1);
      ::setenv("LOCAL_WORLD_SIZE", std::to_string(s.nproc).c_str(), 1);
      ::setenv("GROUP_RANK", std::to_string(s.node_rank).c_str(), 1);
      if (set_threads) ::setenv("EMBER_NUM_THREADS", std::to_string(threads).c_str(), 1);
      std::vector<char*> argv;
      for (const auto& a : command) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      ::execvp(argv[0], argv.data());
      std::cerr << "ember launch: rank " << rank << ": cannot run " << command[0] << ": "
                << std::strerror(errno) << std::endl;
      ::_exit(127);
    }
    pids[static_cast<std::size_t>(local)] = pid;
  }

  // Failed ranks in the order they were reaped. When a rank dies, its peers see their
  // connections close and exit with an error a moment later, possibly before the launcher
  // reaps the first one: so the launcher waits a little after the first failure, then names
  // the rank killed by a signal if there is one (the likely cause), else the first one.
  struct Failure {
    int rank, status;
  };
  std::vector<Failure> failures;
  // The first rank killed by a signal, else the first that failed.
  const auto pick_cause = [&]() -> const Failure& {
    const auto signaled = std::find_if(failures.begin(), failures.end(),
                                       [](const Failure& f) { return WIFSIGNALED(f.status); });
    return signaled != failures.end() ? *signaled : failures.front();
  };
  int running = s.nproc;
  const auto now = [] { return std::chrono::steady_clock::now(); };
  std::chrono::steady_clock::time_point decide_at{}, kill_at{};
  bool decided = false, terminating = false;
  while (running > 0) {
    if (const int sig = g_forward.exchange(0)) {
      for (pid_t p : pids) {
        if (p > 0) ::kill(p, sig);
      }
    }
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid > 0) {
      const auto it = std::find(pids.begin(), pids.end(), pid);
      if (it == pids.end()) continue;
      const int rank = s.node_rank * s.nproc + static_cast<int>(it - pids.begin());
      *it = -1;
      --running;
      // Ranks ended by the launcher's own SIGTERM / SIGKILL are consequences, not causes.
      if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0) && !decided) {
        if (failures.empty()) decide_at = now() + std::chrono::milliseconds(300);
        failures.push_back({rank, status});
      }
      continue;
    }
    if (!failures.empty() && !decided && (now() >= decide_at || running == 0)) {
      decided = true;
      if (running > 0) {
        const Failure& cause = pick_cause();
        std::cerr << "ember launch: rank " << cause.rank << " " << describe_status(cause.status)
                  << "; stopping the other ranks" << std::endl;
        for (pid_t p : pids) {
          if (p > 0) ::kill(p, SIGTERM);
        }
        terminating = true;
        kill_at = now() + std::chrono::milliseconds(static_cast<long long>(s.grace_seconds * 1000));
      }
    }
    if (terminating && now() >= kill_at) {
      for (pid_t p : pids) {
        if (p > 0) ::kill(p, SIGKILL);
      }
      terminating = false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  sigaction(SIGHUP, &old_hup, nullptr);
  if (!failures.empty()) {
    const Failure& cause = pick_cause();
    std::string others;
    for (const Failure& f : failures) {
      if (&f == &cause) continue;
      others += (others.empty() ? "; then rank " : ", rank ") + std::to_string(f.rank) + " " +
                describe_status(f.status);
    }
    throw CliError("rank " + std::to_string(cause.rank) + " of " + std::to_string(world) + " " +
                   describe_status(cause.status) + others);
  }
  return 0;
}

CLI::App* add_launch_command(CLI::App& app, LaunchArgs& a) {
  CLI::App* sub = app.add_subcommand(
      "launch",
      "Run a command as the processes of a data-parallel job (torchrun's model): ember launch "
      "--nproc N -- ember train ...");
  sub->add_option("--nproc", a.settings.nproc, "Processes on this machine")
      ->check(whole_number_in(1, 1024))
      ->capture_default_str();
  sub->add_option("--nnodes", a.settings.nnodes, "Machines taking part")
      ->check(whole_number_in(1, 65536))
      ->capture_default_str();
  sub->add_option("--node-rank", a.settings.node_rank, "This machine's index, in [0, nnodes)")
      ->check(whole_number_in(0, 65535))
      ->capture_default_str();
  sub->add_option("--master", a.settings.master,
                  "ADDR:PORT of rank 0's machine (default on one machine: 127.0.0.1 and a free "
                  "port)");
  sub->add_option("--grace", a.settings.grace_seconds,
                  "Seconds the other ranks get to exit after one failed, before SIGKILL")
      ->check(non_negative_number())
      ->capture_default_str();
  sub->add_option("command", a.command, "The command each process runs (after --)")->required();
  return sub;
}

int run_launch(const LaunchArgs& a) {
  return launch_processes(a.settings, a.command);
}

}  // namespace ember::cli
