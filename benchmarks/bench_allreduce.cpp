// All-reduce time of ember::dist on this machine: N processes (forked; default 2) on localhost
// average a float buffer of each size (default: 421,834 floats, the CNN of `ember train`, and
// 1 K / 100 K / 4 M for the shape of the curve), `reps` times after 5 warm-up rounds; rank 0
// prints the median and the best time per all_reduce (sum then mean, as the Learner does).
//
//   build/release/benchmarks/bench_allreduce [world=2] [reps=50] [floats...]
//
// Not a Google Benchmark binary: the ranks must run the same number of collectives, which
// Google Benchmark's adaptive iteration count would not give the other processes.
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <vector>

#include "ember/dist/process_group.hpp"

namespace {

int free_port() {
  const int s = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  ::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a);
  ::getsockname(s, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(s);
  return ntohs(a.sin_port);
}

int run_rank(int rank, int world, int port, int reps, const std::vector<std::size_t>& sizes) {
  ember::dist::ProcessGroupOptions o;
  o.master_port = port;
  o.rank = rank;
  o.world_size = world;
  o.hostname = "127.0.0.1";
  auto pg = ember::dist::ProcessGroup::init(o);
  for (std::size_t n : sizes) {
    std::vector<float> buf(n, 1.0f + static_cast<float>(rank));
    std::vector<double> ms;
    for (int i = 0; i < reps + 5; ++i) {
      pg->barrier();  // start together: time the all-reduce, not the other rank's lateness
      const auto t0 = std::chrono::steady_clock::now();
      pg->all_reduce(std::span<float>(buf), ember::dist::ReduceOp::Mean);
      const auto t1 = std::chrono::steady_clock::now();
      if (i >= 5) ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    }
    std::sort(ms.begin(), ms.end());
    if (rank == 0) {
      std::printf("all_reduce %zu floats (%.2f MB), %d processes: median %.3f ms, best %.3f ms\n",
                  n, static_cast<double>(n) * 4 / 1e6, world, ms[ms.size() / 2], ms.front());
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const int world = argc > 1 ? std::atoi(argv[1]) : 2;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 50;
  std::vector<std::size_t> sizes;
  for (int i = 3; i < argc; ++i) sizes.push_back(std::strtoull(argv[i], nullptr, 10));
  if (sizes.empty()) sizes = {1000, 100000, 421834, 4000000};
  const int port = free_port();
  std::vector<pid_t> pids;
  for (int r = 1; r < world; ++r) {
    const pid_t p = ::fork();
    if (p == 0) ::_exit(run_rank(r, world, port, reps, sizes));
    pids.push_back(p);
  }
  int rc = run_rank(0, world, port, reps, sizes);
  for (pid_t p : pids) {
    int st = 0;
    ::waitpid(p, &st, 0);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) rc = 1;
  }
  return rc;
}
