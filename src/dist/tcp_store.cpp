#include "tcp_store.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "ember/dist/process_group.hpp"

namespace ember::dist::detail {

namespace {

constexpr char kSet = 1, kGet = 2, kHas = 3;
constexpr std::uint32_t kMaxField = 64u << 20;  // no rendezvous value comes near this

double seconds(std::chrono::milliseconds t) {
  return static_cast<double>(t.count()) / 1000.0;
}

}  // namespace

bool write_all(int fd, const void* data, std::size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

bool read_all(int fd, void* data, std::size_t n) {
  char* p = static_cast<char*>(data);
  while (n > 0) {
    const ssize_t r = ::recv(fd, p, n, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r;
    n -= static_cast<std::size_t>(r);
  }
  return true;
}

// ---- server -------------------------------------------------------------------------------

StoreServer::StoreServer(int port, int rank, std::chrono::milliseconds timeout) {
  listen_fd_ = ::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
  bool v6 = listen_fd_ >= 0;
  if (!v6) listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) {
    ember::detail::fail<DistError>("init", "rank ", rank,
                                   ": cannot create a socket: ", std::strerror(errno));
  }
  const int one = 1, zero = 0;
  ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  int rc;
  if (v6) {
    ::setsockopt(listen_fd_, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);  // v4 too
    sockaddr_in6 a{};
    a.sin6_family = AF_INET6;
    a.sin6_addr = in6addr_any;
    a.sin6_port = htons(static_cast<std::uint16_t>(port));
    rc = ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
  } else {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_ANY);
    a.sin_port = htons(static_cast<std::uint16_t>(port));
    rc = ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
  }
  if (rc != 0 || ::listen(listen_fd_, 128) != 0) {
    const int err = errno;
    ::close(listen_fd_);
    ember::detail::fail<DistError>(
        "init", "rank ", rank, ": the store cannot listen on port ", port, ": ", std::strerror(err),
        " (choose another MASTER_PORT; timeout ", seconds(timeout), " s)");
  }
  if (::pipe2(wake_, O_CLOEXEC) != 0) {
    ::close(listen_fd_);
    ember::detail::fail<DistError>("init", "rank ", rank, ": pipe: ", std::strerror(errno));
  }
  thread_ = std::thread([this] { loop(); });
}

StoreServer::~StoreServer() {
  const char c = 0;
  [[maybe_unused]] const ssize_t w = ::write(wake_[1], &c, 1);
  thread_.join();
  ::close(wake_[0]);
  ::close(wake_[1]);
  ::close(listen_fd_);
}

void StoreServer::loop() {
  std::vector<int> clients;
  for (;;) {
    std::vector<pollfd> fds;
    fds.push_back({wake_[0], POLLIN, 0});
    fds.push_back({listen_fd_, POLLIN, 0});
    for (int c : clients) fds.push_back({c, POLLIN, 0});
    if (::poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[0].revents != 0) break;
    std::vector<int> keep;
    for (std::size_t i = 2; i < fds.size(); ++i) {
      const int c = fds[i].fd;
      if (fds[i].revents != 0 && !serve(c)) {
        ::close(c);
      } else {
        keep.push_back(c);
      }
    }
    if (fds[1].revents & POLLIN) {
      const int c = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c >= 0) {
        const int one = 1;
        ::setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        keep.push_back(c);
      }
    }
    clients = std::move(keep);
  }
  for (int c : clients) ::close(c);
}

bool StoreServer::serve(int fd) {
  char op = 0;
  std::uint32_t klen = 0, vlen = 0;
  if (!read_all(fd, &op, 1) || !read_all(fd, &klen, 4) || klen > kMaxField) return false;
  std::string key(klen, '\0');
  if (!read_all(fd, key.data(), klen) || !read_all(fd, &vlen, 4) || vlen > kMaxField) return false;
  std::vector<char> value(vlen);
  if (!read_all(fd, value.data(), vlen)) return false;
  switch (op) {
    case kSet: {
      data_[key] = std::move(value);
      const char ok = 1;
      return write_all(fd, &ok, 1);
    }
    case kGet: {
      const auto it = data_.find(key);
      const char found = it != data_.end() ? 1 : 0;
      const std::uint32_t n = found ? static_cast<std::uint32_t>(it->second.size()) : 0;
      return write_all(fd, &found, 1) && write_all(fd, &n, 4) &&
             (n == 0 || write_all(fd, it->second.data(), n));
    }
    case kHas: {
      const char found = data_.count(key) != 0 ? 1 : 0;
      return write_all(fd, &found, 1);
    }
    default:
      return false;
  }
}

// ---- client -------------------------------------------------------------------------------

StoreClient::StoreClient(const std::string& addr, int port, int rank, int world_size,
                         std::chrono::milliseconds timeout)
    : rank_(rank), world_size_(world_size), timeout_(timeout) {
  where_ = addr + ":" + std::to_string(port);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string last = "no answer";
  while (fd_ < 0) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* res = nullptr;
    const int gai = ::getaddrinfo(addr.c_str(), std::to_string(port).c_str(), &hints, &res);
    if (gai != 0) {
      last = ::gai_strerror(gai);
    } else {
      for (addrinfo* ai = res; ai != nullptr && fd_ < 0; ai = ai->ai_next) {
        const int s = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (s < 0) continue;
        if (::connect(s, ai->ai_addr, ai->ai_addrlen) == 0) {
          fd_ = s;
        } else {
          last = std::strerror(errno);
          ::close(s);
        }
      }
      ::freeaddrinfo(res);
    }
    if (fd_ >= 0) break;
    if (std::chrono::steady_clock::now() >= deadline) {
      ember::detail::fail<DistError>("init", "rank ", rank, " of ", world_size,
                                     ": cannot reach the master ", where_, " (", last,
                                     ") within the timeout of ", seconds(timeout),
                                     " s; is rank 0 running, and MASTER_ADDR/MASTER_PORT right?");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const int one = 1;
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  // A store that stops answering must not block a request forever.
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(timeout.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((timeout.count() % 1000) * 1000);
  ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

StoreClient::~StoreClient() {
  if (fd_ >= 0) ::close(fd_);
}

void StoreClient::request(char op, const std::string& key, const std::vector<char>& value) {
  const auto klen = static_cast<std::uint32_t>(key.size());
  const auto vlen = static_cast<std::uint32_t>(value.size());
  if (!write_all(fd_, &op, 1) || !write_all(fd_, &klen, 4) || !write_all(fd_, key.data(), klen) ||
      !write_all(fd_, &vlen, 4) || (vlen > 0 && !write_all(fd_, value.data(), vlen))) {
    ember::detail::fail<DistError>("init", "rank ", rank_, " of ", world_size_, ": the store at ",
                                   where_, " went away (rank 0 failed?)");
  }
}

void StoreClient::set(const std::string& key, const std::vector<char>& data) {
  request(kSet, key, data);
  char ok = 0;
  if (!read_all(fd_, &ok, 1)) {
    ember::detail::fail<DistError>("init", "rank ", rank_, ": no answer from the store at ",
                                   where_);
  }
}

std::vector<char> StoreClient::get(const std::string& key) {
  wait({key}, timeout_);
  request(kGet, key, {});
  char found = 0;
  std::uint32_t n = 0;
  if (!read_all(fd_, &found, 1) || !read_all(fd_, &n, 4) || n > kMaxField) {
    ember::detail::fail<DistError>("init", "rank ", rank_, ": no answer from the store at ",
                                   where_);
  }
  std::vector<char> out(n);
  if (n > 0 && !read_all(fd_, out.data(), n)) {
    ember::detail::fail<DistError>("init", "rank ", rank_, ": no answer from the store at ",
                                   where_);
  }
  return out;
}

bool StoreClient::has(const std::string& key) {
  request(kHas, key, {});
  char found = 0;
  if (!read_all(fd_, &found, 1)) {
    ember::detail::fail<DistError>("init", "rank ", rank_, ": no answer from the store at ",
                                   where_);
  }
  return found != 0;
}

void StoreClient::wait(const std::vector<std::string>& keys,
                       const std::chrono::milliseconds& timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    std::string missing;
    for (const auto& k : keys) {
      if (!has(k)) missing += (missing.empty() ? "" : ", ") + k;
    }
    if (missing.empty()) return;
    if (std::chrono::steady_clock::now() >= deadline) {
      // Gloo's full mesh keys are the ranks' numbers.
      ember::detail::fail<DistError>("init", "rank ", rank_, " of ", world_size_, ": rank(s) ",
                                     missing, " did not join within the timeout of ",
                                     seconds(timeout), " s (EMBER_DIST_TIMEOUT)");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

}  // namespace ember::dist::detail
