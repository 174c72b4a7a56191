// Helpers of the ember::dist tests: run a function on N forked processes that form a process
// group on localhost, and collect each rank's exit status and error message.
#pragma once

#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "ember/dist/process_group.hpp"

namespace ember::dist::test {

/// A TCP port that was free a moment ago (bound to port 0, then released).
inline int free_port() {
  const int s = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  ::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(s, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(s);
  return ntohs(a.sin_port);
}

/// What one rank's process did.
struct RankResult {
  int exit_code = -1;   // -1 when killed by a signal
  int signal = 0;       // the signal that ended it
  std::string message;  // what it wrote to its message pipe (the error text)
  double seconds = 0;   // from the start until it ended
};

/// Options of one rank in a test group.
inline ProcessGroupOptions rank_options(int port, int rank, int world, double timeout_s) {
  ProcessGroupOptions o;
  o.master_addr = "127.0.0.1";
  o.master_port = port;
  o.rank = rank;
  o.world_size = world;
  o.local_rank = rank;
  o.timeout = std::chrono::milliseconds(static_cast<long long>(timeout_s * 1000));
  o.hostname = "127.0.0.1";
  return o;
}

/// Forks `world` processes (ranks 0..world-1); each runs `body(rank, report)` where `report`
/// writes a line to the parent; an exception's what() is reported and the rank exits with 1.
/// `skip` lists ranks that are not started (a rank that never joins). Ranks still running
/// after `deadline_s` are killed (SIGKILL) and reported with signal 9.
inline std::vector<RankResult> run_ranks(
    int world, const std::function<void(int rank, const std::function<void(std::string)>&)>& body,
    double deadline_s = 60, const std::vector<int>& skip = {}) {
  std::vector<pid_t> pids(world, -1);
  std::vector<int> pipes(world, -1);
  const auto start = std::chrono::steady_clock::now();
  for (int r = 0; r < world; ++r) {
    bool skipped = false;
    for (int s : skip) skipped = skipped || s == r;
    if (skipped) continue;
    int fds[2];
    if (::pipe(fds) != 0) return {};
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::close(fds[0]);
      const auto report = [fd = fds[1]](std::string text) {
        text += "\n";
        [[maybe_unused]] auto w = ::write(fd, text.data(), text.size());
      };
      int code = 0;
      try {
        body(r, report);
      } catch (const std::exception& e) {
        report(e.what());
        code = 1;
      }
      ::_exit(code);
    }
    ::close(fds[1]);
    ::fcntl(fds[0], F_SETFL, O_NONBLOCK);
    pids[r] = pid;
    pipes[r] = fds[0];
  }
  std::vector<RankResult> out(world);
  std::vector<bool> done(world, false);
  for (int r = 0; r < world; ++r) done[r] = pids[r] < 0;
  const auto drain = [&](int r) {
    char buf[4096];
    for (;;) {
      const ssize_t n = ::read(pipes[r], buf, sizeof buf);
      if (n <= 0) break;
      out[r].message.append(buf, static_cast<std::size_t>(n));
    }
  };
  for (;;) {
    bool all = true;
    for (int r = 0; r < world; ++r) {
      if (done[r]) continue;
      drain(r);
      int status = 0;
      if (::waitpid(pids[r], &status, WNOHANG) == pids[r]) {
        drain(r);
        done[r] = true;
        out[r].seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (WIFEXITED(status)) out[r].exit_code = WEXITSTATUS(status);
        if (WIFSIGNALED(status)) out[r].signal = WTERMSIG(status);
      } else {
        all = false;
      }
    }
    if (all) break;
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() >
        deadline_s) {
      for (int r = 0; r < world; ++r) {
        if (!done[r]) ::kill(pids[r], SIGKILL);
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  for (int p : pipes) {
    if (p >= 0) ::close(p);
  }
  return out;
}

}  // namespace ember::dist::test
