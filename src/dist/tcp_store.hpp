// The rendezvous store of ember::dist (internal): a key-value server that rank 0 runs on
// MASTER_PORT, and the client every rank (rank 0 included) talks to it through. Gloo's
// full-mesh connection publishes each rank's addresses under the key "<rank>" and waits for
// the others' keys. Debian's Gloo 0.5 ships only file, hash (in-process) and Redis stores,
// so this is a small TCP store in the manner of PyTorch's TCPStore.
//
// Wire format (one request per message, one reply): u8 op, u32 key length, key bytes, u32
// value length, value bytes (little endian). Ops: set (reply u8 1), get (reply u8 found, u32
// length, bytes), has (reply u8 0/1).
#pragma once

#include <gloo/rendezvous/store.h>

#include <atomic>
#include <chrono>
#include <map>
#include <string>
#include <thread>
#include <vector>

namespace ember::dist::detail {

/// The server: one thread polling the listening socket and the clients' sockets.
class StoreServer {
 public:
  /// Listens on all addresses at `port`. Throws DistError when the port cannot be bound.
  StoreServer(int port, int rank, std::chrono::milliseconds timeout);
  ~StoreServer();
  StoreServer(const StoreServer&) = delete;
  StoreServer& operator=(const StoreServer&) = delete;

 private:
  void loop();
  bool serve(int fd);  // false when the client closed or sent garbage

  int listen_fd_ = -1;
  int wake_[2] = {-1, -1};
  std::map<std::string, std::vector<char>> data_;
  std::thread thread_;
};

/// The client: a gloo Store whose wait() honours the timeout and names the missing ranks.
class StoreClient final : public gloo::rendezvous::Store {
 public:
  /// Connects to addr:port, retrying until `timeout`; DistError "[init] cannot reach the
  /// master ..." when it never answers.
  StoreClient(const std::string& addr, int port, int rank, int world_size,
              std::chrono::milliseconds timeout);
  ~StoreClient() override;

  void set(const std::string& key, const std::vector<char>& data) override;
  std::vector<char> get(const std::string& key) override;
  void wait(const std::vector<std::string>& keys) override { wait(keys, timeout_); }
  void wait(const std::vector<std::string>& keys,
            const std::chrono::milliseconds& timeout) override;

 private:
  bool has(const std::string& key);
  void request(char op, const std::string& key, const std::vector<char>& value);

  int fd_ = -1;
  int rank_, world_size_;
  std::chrono::milliseconds timeout_;
  std::string where_;
};

/// Writes all of `n` bytes (false on error or a closed peer).
bool write_all(int fd, const void* data, std::size_t n);
/// Reads exactly `n` bytes (false on error or end of stream).
bool read_all(int fd, void* data, std::size_t n);

}  // namespace ember::dist::detail
