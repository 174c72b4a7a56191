// ember::dist: collectives with 2 and 3 processes on localhost (values asserted in every
// rank), bad options, a rank that never joins, an unreachable master, a killed and a hung peer.
#include <gtest/gtest.h>
#include <signal.h>

#include <cmath>
#include <thread>

#include "dist_test_util.hpp"

namespace ember::dist {
namespace {

using test::free_port;
using test::rank_options;
using test::RankResult;
using test::run_ranks;

/// Throws (failing the rank) unless `ok`.
void check(bool ok, const std::string& what) {
  if (!ok) throw std::runtime_error("check failed: " + what);
}

void expect_all_ok(const std::vector<RankResult>& results) {
  for (std::size_t r = 0; r < results.size(); ++r) {
    EXPECT_EQ(results[r].exit_code, 0) << "rank " << r << ": " << results[r].message;
  }
}

/// Runs `body(pg)` on `world` ranks of a fresh group.
void on_group(int world, const std::function<void(ProcessGroup&)>& body, double timeout_s = 20) {
  const int port = free_port();
  expect_all_ok(run_ranks(world, [&](int rank, const auto&) {
    auto pg = ProcessGroup::init(rank_options(port, rank, world, timeout_s));
    check(pg->rank() == rank && pg->world_size() == world, "rank / world size");
    body(*pg);
  }));
}

TensorData rank_tensor(int rank, std::int64_t n) {
  std::vector<float> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) v[i] = static_cast<float>((rank + 1) * (i + 1)) * 0.5f;
  return TensorData(std::move(v), Shape({n}));
}

class Collectives : public ::testing::TestWithParam<int> {};

TEST_P(Collectives, AllReduceSumAndMean) {
  const int world = GetParam();
  on_group(world, [world](ProcessGroup& pg) {
    // A size that is not a multiple of the ring's segments.
    const std::int64_t n = 1001;
    TensorData sum = rank_tensor(pg.rank(), n);
    pg.all_reduce(sum, ReduceOp::Sum);
    TensorData mean = rank_tensor(pg.rank(), n);
    pg.all_reduce(mean, ReduceOp::Mean);
    const double ranks = world * (world + 1) / 2.0;  // sum of (rank + 1)
    for (std::int64_t i = 0; i < n; ++i) {
      const double want = ranks * static_cast<double>(i + 1) * 0.5;
      check(sum.as_span<float>()[i] == static_cast<float>(want), "sum at " + std::to_string(i));
      check(std::abs(mean.as_span<float>()[i] - want / world) <= 1e-6 * want, "mean");
    }
    // f64 mean, i64 max and min, i32 sum.
    TensorData d(std::vector<double>{1.0 * pg.rank(), 2.0}, Shape({2}));
    pg.all_reduce(d, ReduceOp::Mean);
    check(d.as_span<double>()[0] == (world - 1) / 2.0 && d.as_span<double>()[1] == 2.0, "f64");
    TensorData mx(std::vector<std::int64_t>{pg.rank(), -pg.rank()}, Shape({2}));
    pg.all_reduce(mx, ReduceOp::Max);
    check(mx.as_span<std::int64_t>()[0] == world - 1 && mx.as_span<std::int64_t>()[1] == 0, "max");
    TensorData mn(std::vector<std::int64_t>{pg.rank(), -pg.rank()}, Shape({2}));
    pg.all_reduce(mn, ReduceOp::Min);
    check(mn.as_span<std::int64_t>()[0] == 0 && mn.as_span<std::int64_t>()[1] == 1 - world, "min");
    TensorData i32(std::vector<std::int32_t>{1, pg.rank()}, Shape({1, 2}));
    pg.all_reduce(i32);
    check(i32.as_span<std::int32_t>()[0] == world, "i32");
  });
}

TEST_P(Collectives, BroadcastAllGatherReduceScatterBarrier) {
  const int world = GetParam();
  on_group(world, [world](ProcessGroup& pg) {
    const int root = world - 1;
    TensorData b = rank_tensor(pg.rank(), 5);
    pg.broadcast(b, root);
    check(b == rank_tensor(root, 5), "broadcast from the last rank");
    // An empty receiver takes the root's shape and dtype.
    TensorData e;
    if (pg.rank() == 0) e = TensorData(std::vector<std::int64_t>{7, 8, 9, 10}, Shape({2, 2}));
    pg.broadcast(e, 0);
    check(
        e.shape() == Shape({2, 2}) && e.dtype() == DType::I64 && e.as_span<std::int64_t>()[3] == 10,
        "broadcast into an empty TensorData");

    const auto parts = pg.all_gather(rank_tensor(pg.rank(), 3));
    check(static_cast<int>(parts.size()) == world, "all_gather count");
    for (int r = 0; r < world; ++r) check(parts[r] == rank_tensor(r, 3), "all_gather part");

    // reduce_scatter of [world * 2, 3]: each rank gets its 2 rows of the sum.
    std::vector<float> v(static_cast<std::size_t>(world * 6));
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i) * (pg.rank() + 1);
    const TensorData block = pg.reduce_scatter(TensorData(v, Shape({world * 2, 3})));
    check(block.shape() == Shape({2, 3}), "reduce_scatter shape");
    const float ranks = world * (world + 1) / 2.0f;
    for (int i = 0; i < 6; ++i) {
      check(block.as_span<float>()[i] == static_cast<float>(pg.rank() * 6 + i) * ranks,
            "reduce_scatter value");
    }
    for (int i = 0; i < 3; ++i) pg.barrier();
  });
}

INSTANTIATE_TEST_SUITE_P(Dist, Collectives, ::testing::Values(2, 3),
                         [](const auto& info) { return std::to_string(info.param) + "ranks"; });

TEST(Dist, SingleProcessGroupIsTheIdentity) {
  auto pg = ProcessGroup::init(rank_options(free_port(), 0, 1, 5));
  TensorData t = rank_tensor(0, 4);
  pg->all_reduce(t, ReduceOp::Mean);
  EXPECT_EQ(t, rank_tensor(0, 4));
  EXPECT_EQ(pg->all_gather(t).size(), 1u);
  pg->barrier();
}

TEST(Dist, BadOptionsAreValueErrors) {
  const int port = free_port();
  auto o = rank_options(port, 0, 0, 1);
  EXPECT_THROW(ProcessGroup::init(o), ValueError);  // world size 0
  o = rank_options(port, 2, 2, 1);
  try {
    ProcessGroup::init(o);
    FAIL() << "rank 2 of 2 accepted";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("rank 2 is outside [0, 2)"), std::string::npos)
        << e.what();
  }
  o = rank_options(70000, 0, 1, 1);
  EXPECT_THROW(ProcessGroup::init(o), ValueError);
  ::setenv("WORLD_SIZE", "2", 1);
  ::setenv("RANK", "5", 1);
  EXPECT_THROW(ProcessGroupOptions::from_env(), ValueError);
  ::unsetenv("RANK");
  EXPECT_THROW(ProcessGroupOptions::from_env(), ValueError);  // RANK missing
  ::unsetenv("WORLD_SIZE");
  ::setenv("EMBER_DIST_TIMEOUT", "soon", 1);
  EXPECT_THROW(default_timeout(), ValueError);
  ::setenv("EMBER_DIST_TIMEOUT", "2.5", 1);
  EXPECT_EQ(default_timeout().count(), 2500);
  ::unsetenv("EMBER_DIST_TIMEOUT");
  EXPECT_EQ(default_timeout().count(), 300000);
}

TEST(Dist, MismatchedShapesFailOnEveryRank) {
  const int port = free_port();
  const auto res = run_ranks(2, [&](int rank, const auto&) {
    auto pg = ProcessGroup::init(rank_options(port, rank, 2, 10));
    TensorData t = rank_tensor(rank, rank == 0 ? 4 : 5);
    pg->all_reduce(t);
  });
  for (const auto& r : res) {
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.message.find("[all_reduce]"), std::string::npos) << r.message;
    EXPECT_NE(r.message.find("rank 0 f32 [4], rank 1 f32 [5]"), std::string::npos) << r.message;
  }
}

TEST(Dist, RankThatNeverJoinsTimesOut) {
  const int port = free_port();
  const auto res = run_ranks(
      3, [&](int rank, const auto&) { ProcessGroup::init(rank_options(port, rank, 3, 3)); }, 30,
      {2});
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(res[r].exit_code, 1) << res[r].message;
    EXPECT_NE(res[r].message.find("[init] rank " + std::to_string(r) +
                                  " of 3: rank(s) 2 did "
                                  "not join within the timeout of 3 s"),
              std::string::npos)
        << res[r].message;
    EXPECT_LT(res[r].seconds, 10.0);
  }
}

TEST(Dist, UnreachableMasterTimesOut) {
  const int port = free_port();
  const auto res = run_ranks(
      2, [&](int rank, const auto&) { ProcessGroup::init(rank_options(port, rank, 2, 1)); }, 30,
      {0});
  EXPECT_EQ(res[1].exit_code, 1);
  EXPECT_NE(res[1].message.find("cannot reach the master 127.0.0.1:" + std::to_string(port)),
            std::string::npos)
      << res[1].message;
}

TEST(Dist, KilledPeerGivesEveryOtherRankAnError) {
  const int port = free_port();
  const double timeout = 5;
  const auto res = run_ranks(3, [&](int rank, const auto&) {
    auto pg = ProcessGroup::init(rank_options(port, rank, 3, timeout));
    TensorData t = rank_tensor(rank, 1000);
    pg->all_reduce(t);
    if (rank == 1) ::kill(::getpid(), SIGKILL);
    for (int i = 0; i < 100; ++i) pg->all_reduce(t);
  });
  EXPECT_EQ(res[1].signal, SIGKILL);
  for (int r : {0, 2}) {
    EXPECT_EQ(res[r].exit_code, 1)
        << "rank " << r << " ended by signal " << res[r].signal << ": " << res[r].message;
    EXPECT_NE(res[r].message.find("[all_reduce] rank " + std::to_string(r) + " of 3"),
              std::string::npos)
        << res[r].message;
    EXPECT_NE(res[r].message.find("timeout 5 s"), std::string::npos) << res[r].message;
    EXPECT_LT(res[r].seconds, timeout + 10) << res[r].message;
  }
}

TEST(Dist, HungPeerTimesOut) {
  // Rank 1 joins, then stays silent until rank 0 has given up (a byte on `done`, at most 30 s):
  // rank 0 can only end by its own timeout, however slow the machine. Init gets a generous
  // timeout; the collective then runs with 1 s.
  const int port = free_port();
  int done[2];
  ASSERT_EQ(::pipe(done), 0);
  const auto res = run_ranks(2, [&](int rank, const auto& report) {
    auto pg = ProcessGroup::init(rank_options(port, rank, 2, 20));
    pg->set_timeout(std::chrono::milliseconds(1000));
    if (rank == 1) {
      pollfd p{done[0], POLLIN, 0};
      ::poll(&p, 1, 30000);  // alive but silent
      return;
    }
    TensorData t = rank_tensor(rank, 10);
    const auto start = std::chrono::steady_clock::now();
    try {
      pg->all_reduce(t);
    } catch (const DistError& e) {
      report("collective seconds: " +
             std::to_string(
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()));
      [[maybe_unused]] auto w = ::write(done[1], "x", 1);
      // The group is broken afterwards: later calls fail at once.
      try {
        pg->barrier();
      } catch (const DistError& again) {
        throw DistError(std::string(e.what()) + " | " + again.what());
      }
    }
    [[maybe_unused]] auto w = ::write(done[1], "x", 1);
  });
  ::close(done[0]);
  ::close(done[1]);
  EXPECT_EQ(res[0].exit_code, 1);
  EXPECT_NE(res[0].message.find("[all_reduce] rank 0 of 2: no answer from a peer within the "
                                "timeout (timeout 1 s"),
            std::string::npos)
      << res[0].message;
  EXPECT_NE(res[0].message.find("failed in an earlier collective"), std::string::npos);
  // The collective itself ended near its 1 s timeout (loose bound: CI machines are shared).
  const auto at = res[0].message.find("collective seconds: ");
  ASSERT_NE(at, std::string::npos) << res[0].message;
  const double seconds = std::stod(res[0].message.substr(at + 20));
  EXPECT_GE(seconds, 0.9);
  EXPECT_LT(seconds, 5.0);
}

}  // namespace
}  // namespace ember::dist
