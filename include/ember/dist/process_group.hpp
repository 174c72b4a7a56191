// A process group (PyTorch's torch.distributed ProcessGroup): N processes, each with a rank in
// [0, N), that run collectives on host data over TCP through Gloo.
//
//   // Each process, started by `ember launch --nproc 2 -- prog` (or torchrun-style variables):
//   auto pg = ember::dist::ProcessGroup::init_from_env();   // MASTER_ADDR, RANK, WORLD_SIZE...
//   TensorData g = ...;                                      // same dtype and shape everywhere
//   pg->all_reduce(g, dist::ReduceOp::Mean);                 // every rank: the mean of all g
//
// Rendezvous: rank 0 runs a small key-value server (a TCP store, as PyTorch's TCPStore) on
// MASTER_ADDR:MASTER_PORT; every rank publishes the address of its Gloo TCP device there and
// then connects to every other rank (a full mesh). The store is used only while connecting.
//
// Collectives are blocking and must be called by every rank in the same order. Every
// collective (and init) has a timeout (ProcessGroupOptions::timeout, default 300 s or
// EMBER_DIST_TIMEOUT seconds): when a peer dies (its sockets close) or stops answering, each
// waiting rank throws DistError naming the collective, its rank and the timeout, instead of
// hanging. After a DistError the group is broken: every later call throws again.
//
// Determinism: all_reduce uses Gloo's ring algorithm (reduce-scatter, then all-gather of the
// reduced segments): each element is reduced on one rank in an order fixed by the world size
// and the element's position, then copied to every rank, so all ranks hold bitwise the same
// result and a rerun with the same inputs gives the same bits. With 2 ranks every element is
// a0 + a1, one rounding.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ember/core/data.hpp"
#include "ember/core/error.hpp"

namespace ember::dist {

/// A collective failed: a peer died or did not answer within the timeout, a rank never joined,
/// the master could not be reached, or the ranks passed mismatched data. The message starts
/// with "[<collective>]" and names this process's rank and the timeout.
class DistError : public Error {
 public:
  using Error::Error;
};

/// The reduction of all_reduce / reduce_scatter. Mean is the sum divided by the world size
/// (float dtypes only; the division happens on each rank after the sum, identically).
enum class ReduceOp { Sum, Mean, Max, Min };

/// "sum", "mean", "max", "min".
const char* reduce_op_name(ReduceOp op);

/// The collective timeout from EMBER_DIST_TIMEOUT (seconds, > 0; fractions allowed), else
/// 300 s. Throws ValueError for a malformed value.
std::chrono::milliseconds default_timeout();

/// How a process joins a group (torchrun's model; see ProcessGroupOptions::from_env).
struct ProcessGroupOptions {
  /// Host name or IP address of rank 0's store (MASTER_ADDR).
  std::string master_addr = "127.0.0.1";
  /// TCP port of rank 0's store (MASTER_PORT), 1..65535.
  int master_port = 29500;
  /// This process's rank (RANK), in [0, world_size).
  int rank = 0;
  /// Number of processes (WORLD_SIZE), >= 1.
  int world_size = 1;
  /// Rank among the processes of this machine (LOCAL_RANK); informational on the CPU.
  int local_rank = 0;
  /// Timeout of init and of every collective.
  std::chrono::milliseconds timeout = default_timeout();
  /// The address this process's Gloo sockets listen on, as other ranks reach it. Empty: the
  /// EMBER_DIST_HOSTNAME variable, else the local address of the route to master_addr
  /// (127.0.0.1 when the master is on this machine's loopback).
  std::string hostname{};
  /// A network interface to listen on instead (EMBER_DIST_IFNAME, e.g. "eth0"); wins over
  /// hostname when set.
  std::string iface{};

  /// The options from the environment: MASTER_ADDR (default 127.0.0.1), MASTER_PORT
  /// (default 29500), RANK, WORLD_SIZE (both required), LOCAL_RANK (default RANK),
  /// EMBER_DIST_TIMEOUT, EMBER_DIST_HOSTNAME, EMBER_DIST_IFNAME. Throws ValueError naming the
  /// variable when one is missing or malformed.
  static ProcessGroupOptions from_env();
  /// True when WORLD_SIZE is set in the environment (the process was started by a launcher).
  static bool env_present();
};

/// A group of processes and its collectives (see the file comment). Not thread-safe: one
/// thread calls the collectives of a group.
class ProcessGroup {
 public:
  /// Joins the group: rank 0 starts the store, every rank connects to every other. Blocks
  /// until all world_size ranks joined. Throws ValueError for bad options (world size 0, rank
  /// outside [0, world size), port outside 1..65535, timeout <= 0); DistError when the store
  /// cannot listen (port in use), the master cannot be reached, or a rank does not join
  /// within the timeout. Sets SIGPIPE to be ignored when it has its default action (a write
  /// to a dead peer then fails with an error instead of ending the process, as in Python).
  static std::shared_ptr<ProcessGroup> init(const ProcessGroupOptions& options);
  /// init(ProcessGroupOptions::from_env()).
  static std::shared_ptr<ProcessGroup> init_from_env();

  ~ProcessGroup();
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  int rank() const { return rank_; }
  int world_size() const { return world_size_; }
  int local_rank() const { return local_rank_; }
  /// Timeout of each collective.
  std::chrono::milliseconds timeout() const { return timeout_; }
  /// Changes the timeout of later collectives (> 0, else ValueError).
  void set_timeout(std::chrono::milliseconds timeout);

  /// In place: every rank's `data` becomes the reduction over all ranks. Dtypes f32, f64, i32,
  /// i64 (Mean: f32/f64 only). The ranks' dtypes and shapes are compared first; DistError
  /// names them when they differ. Throws DTypeError / ValueError for an unsupported dtype / op.
  void all_reduce(TensorData& data, ReduceOp op = ReduceOp::Sum);
  /// In place over a raw buffer (no shape check: every rank must pass the same length).
  void all_reduce(std::span<float> data, ReduceOp op = ReduceOp::Sum);
  void all_reduce(std::span<double> data, ReduceOp op = ReduceOp::Sum);

  /// Every rank's `data` becomes root's (any dtype). A rank whose `data` is empty (a
  /// default-constructed TensorData) receives root's shape and dtype too; otherwise shapes
  /// and dtypes must match root's (DistError). ValueError when root is not a rank.
  void broadcast(TensorData& data, int root = 0);
  /// Raw bytes (every rank the same length).
  void broadcast(std::span<std::uint8_t> bytes, int root = 0);

  /// Every rank's `data`, indexed by rank (any dtype; all ranks the same dtype and shape,
  /// else DistError).
  std::vector<TensorData> all_gather(const TensorData& data);
  /// Raw bytes: out is [world_size * in.size()], rank r's bytes at [r * in.size(), ...).
  void all_gather(std::span<const std::uint8_t> in, std::span<std::uint8_t> out);

  /// Reduces `data` [world_size * k, ...] over all ranks and returns this rank's block of
  /// the result: rows [rank * k, (rank + 1) * k), shape [k, ...]. Same dtypes and ops as
  /// all_reduce. Implemented as an all_reduce followed by taking the block (Gloo 0.5 has no
  /// ring reduce-scatter for unbound buffers), so it moves as many bytes as an all_reduce.
  /// ShapeError when the first dim is not a multiple of world_size (or data is rank 0).
  TensorData reduce_scatter(const TensorData& data, ReduceOp op = ReduceOp::Sum);

  /// Returns once every rank called barrier().
  void barrier();

  /// The address of this rank's Gloo device ("host:port" as published), for diagnostics.
  std::string address() const;

  struct Impl;

 private:
  explicit ProcessGroup(std::unique_ptr<Impl> impl, const ProcessGroupOptions& options);
  void check_usable(const char* op) const;
  [[noreturn]] void fail_collective(const char* op, const std::exception& e);
  void gather_bytes(const char* op, std::span<const std::uint8_t> in, std::span<std::uint8_t> out);
  /// Compares dtype and shape across ranks; returns root's header for broadcast.
  std::vector<std::int64_t> exchange_header(const char* op, const TensorData& data, int root,
                                            bool allow_empty);

  std::unique_ptr<Impl> impl_;
  int rank_ = 0, world_size_ = 1, local_rank_ = 0;
  std::chrono::milliseconds timeout_;
  bool broken_ = false;
};

}  // namespace ember::dist
