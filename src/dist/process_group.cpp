#include "ember/dist/process_group.hpp"

#include <arpa/inet.h>
#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/transport/tcp/device.h>
#include <netdb.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "tcp_store.hpp"

namespace ember::dist {

namespace {

constexpr int kMaxHeaderDims = 12;
constexpr std::size_t kHeaderLen = 3 + kMaxHeaderDims;  // dtype, rank, numel, dims

double seconds(std::chrono::milliseconds t) {
  return static_cast<double>(t.count()) / 1000.0;
}

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : nullptr;
}

long env_int(const char* name, const char* fallback, long low, long high) {
  const char* v = env(name);
  if (v == nullptr) v = fallback;
  if (v == nullptr) {
    ember::detail::fail<ValueError>("init", name,
                                    " is not set (launch the processes with `ember launch`, or "
                                    "set MASTER_ADDR, MASTER_PORT, RANK and WORLD_SIZE)");
  }
  char* end = nullptr;
  errno = 0;
  const long x = std::strtol(v, &end, 10);
  if (errno != 0 || end == v || *end != '\0' || x < low || x > high) {
    ember::detail::fail<ValueError>("init", name, "='", v, "' is not a whole number in [", low,
                                    ", ", high, "]");
  }
  return x;
}

/// The local address of the route to `master` (no packet is sent: connecting a UDP socket
/// only picks the source address).
std::string route_source(const std::string& master, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* res = nullptr;
  if (::getaddrinfo(master.c_str(), std::to_string(port).c_str(), &hints, &res) != 0) return {};
  std::string out;
  for (addrinfo* ai = res; ai != nullptr && out.empty(); ai = ai->ai_next) {
    const int s = ::socket(ai->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s < 0) continue;
    sockaddr_storage local{};
    socklen_t len = sizeof local;
    if (::connect(s, ai->ai_addr, ai->ai_addrlen) == 0 &&
        ::getsockname(s, reinterpret_cast<sockaddr*>(&local), &len) == 0) {
      char host[NI_MAXHOST];
      if (::getnameinfo(reinterpret_cast<sockaddr*>(&local), len, host, sizeof host, nullptr, 0,
                        NI_NUMERICHOST) == 0) {
        out = host;
      }
    }
    ::close(s);
  }
  ::freeaddrinfo(res);
  return out;
}

template <class T>
gloo::AllreduceOptions::Func reduce_fn(ReduceOp op) {
  using F = void (*)(void*, const void*, const void*, std::size_t);
  switch (op) {
    case ReduceOp::Max:
      return static_cast<F>(&gloo::max<T>);
    case ReduceOp::Min:
      return static_cast<F>(&gloo::min<T>);
    default:
      return static_cast<F>(&gloo::sum<T>);
  }
}

}  // namespace

const char* reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum:
      return "sum";
    case ReduceOp::Mean:
      return "mean";
    case ReduceOp::Max:
      return "max";
    case ReduceOp::Min:
      return "min";
  }
  return "sum";
}

std::chrono::milliseconds default_timeout() {
  const char* v = env("EMBER_DIST_TIMEOUT");
  if (v == nullptr) return std::chrono::seconds(300);
  char* end = nullptr;
  const double s = std::strtod(v, &end);
  if (end == v || *end != '\0' || !std::isfinite(s) || s <= 0 || s > 1e7) {
    ember::detail::fail<ValueError>("init", "EMBER_DIST_TIMEOUT='", v,
                                    "' is not a number of seconds > 0");
  }
  return std::chrono::milliseconds(std::max<long long>(1, std::llround(s * 1000)));
}

ProcessGroupOptions ProcessGroupOptions::from_env() {
  ProcessGroupOptions o;
  if (const char* a = env("MASTER_ADDR")) o.master_addr = a;
  o.master_port = static_cast<int>(env_int("MASTER_PORT", "29500", 1, 65535));
  o.world_size = static_cast<int>(env_int("WORLD_SIZE", nullptr, 1, 1 << 20));
  o.rank = static_cast<int>(env_int("RANK", nullptr, 0, o.world_size - 1));
  o.local_rank = static_cast<int>(env_int("LOCAL_RANK", env("RANK"), 0, 1 << 20));
  o.timeout = default_timeout();
  if (const char* h = env("EMBER_DIST_HOSTNAME")) o.hostname = h;
  if (const char* i = env("EMBER_DIST_IFNAME")) o.iface = i;
  return o;
}

bool ProcessGroupOptions::env_present() {
  return env("WORLD_SIZE") != nullptr;
}

struct ProcessGroup::Impl {
  std::unique_ptr<detail::StoreServer> server;  // rank 0 only
  std::shared_ptr<gloo::transport::Device> device;
  std::shared_ptr<gloo::rendezvous::Context> context;
};

std::shared_ptr<ProcessGroup> ProcessGroup::init(const ProcessGroupOptions& o) {
  if (o.world_size < 1) {
    ember::detail::fail<ValueError>("init", "world size must be >= 1, got ", o.world_size);
  }
  if (o.rank < 0 || o.rank >= o.world_size) {
    ember::detail::fail<ValueError>("init", "rank ", o.rank, " is outside [0, ", o.world_size,
                                    ") (world size ", o.world_size, ")");
  }
  if (o.master_port < 1 || o.master_port > 65535) {
    ember::detail::fail<ValueError>("init", "master port ", o.master_port, " is outside 1..65535");
  }
  if (o.timeout.count() <= 0) ember::detail::fail<ValueError>("init", "timeout must be > 0");
  if (o.master_addr.empty()) ember::detail::fail<ValueError>("init", "master address is empty");

  // Gloo writes to its peers' sockets without MSG_NOSIGNAL: a write to a peer that died would
  // end this process with SIGPIPE (seen on CI: a rank killed mid all_reduce took another
  // with it) instead of the DistError below. Python ignores SIGPIPE, so PyTorch never meets
  // this; a C++ program must. Only the default action is replaced: a handler the program
  // installed itself stays.
  struct sigaction current {};
  if (::sigaction(SIGPIPE, nullptr, &current) == 0 && current.sa_handler == SIG_DFL) {
    ::signal(SIGPIPE, SIG_IGN);
  }

  auto impl = std::make_unique<Impl>();
  if (o.rank == 0)
    impl->server = std::make_unique<detail::StoreServer>(o.master_port, 0, o.timeout);
  detail::StoreClient store(o.master_addr, o.master_port, o.rank, o.world_size, o.timeout);

  gloo::transport::tcp::attr attr;
  if (!o.iface.empty()) {
    attr.iface = o.iface;
  } else {
    attr.hostname = o.hostname;
    if (attr.hostname.empty()) {
      if (const char* h = env("EMBER_DIST_HOSTNAME")) attr.hostname = h;
    }
    if (attr.hostname.empty()) attr.hostname = route_source(o.master_addr, o.master_port);
    if (attr.hostname.empty()) attr.hostname = "127.0.0.1";
  }
  try {
    impl->device = gloo::transport::tcp::CreateDevice(attr);
    impl->context = std::make_shared<gloo::rendezvous::Context>(o.rank, o.world_size);
    impl->context->setTimeout(o.timeout);
    impl->context->connectFullMesh(store, impl->device);
  } catch (const DistError&) {
    throw;
  } catch (const std::exception& e) {
    std::string what = e.what();
    if (const auto nl = what.find('\n'); nl != std::string::npos) what.resize(nl);
    ember::detail::fail<DistError>("init", "rank ", o.rank, " of ", o.world_size,
                                   ": connecting to the other ranks failed (address ",
                                   attr.iface.empty() ? attr.hostname : "interface " + attr.iface,
                                   "; timeout ", seconds(o.timeout), " s): ", what);
  }
  return std::shared_ptr<ProcessGroup>(new ProcessGroup(std::move(impl), o));
}

std::shared_ptr<ProcessGroup> ProcessGroup::init_from_env() {
  return init(ProcessGroupOptions::from_env());
}

ProcessGroup::ProcessGroup(std::unique_ptr<Impl> impl, const ProcessGroupOptions& o)
    : impl_(std::move(impl)),
      rank_(o.rank),
      world_size_(o.world_size),
      local_rank_(o.local_rank),
      timeout_(o.timeout) {}

ProcessGroup::~ProcessGroup() = default;

void ProcessGroup::set_timeout(std::chrono::milliseconds timeout) {
  if (timeout.count() <= 0) ember::detail::fail<ValueError>("set_timeout", "timeout must be > 0");
  timeout_ = timeout;
  impl_->context->setTimeout(timeout);
}

std::string ProcessGroup::address() const {
  return impl_->device ? impl_->device->str() : std::string();
}

void ProcessGroup::check_usable(const char* op) const {
  if (broken_) {
    ember::detail::fail<DistError>(op, "rank ", rank_, " of ", world_size_,
                                   ": the process group failed in an earlier collective");
  }
}

void ProcessGroup::fail_collective(const char* op, const std::exception& e) {
  broken_ = true;
  std::string what = e.what();
  if (const auto nl = what.find('\n'); nl != std::string::npos) what.resize(nl);
  const bool timed_out = what.find("imed out") != std::string::npos;
  const std::string why = timed_out ? "no answer from a peer within the timeout"
                                    : "a peer failed or exited (connection lost)";
  ember::detail::fail<DistError>(op, "rank ", rank_, " of ", world_size_, ": ", why, " (timeout ",
                                 seconds(timeout_), " s, EMBER_DIST_TIMEOUT): ", what);
}

std::vector<std::int64_t> ProcessGroup::exchange_header(const char* op, const TensorData& data,
                                                        int root, bool allow_empty) {
  const Shape& s = data.shape();
  if (s.rank() > kMaxHeaderDims) {
    ember::detail::fail<ShapeError>(op, "tensors of rank ", s.rank(), " (at most ", kMaxHeaderDims,
                                    ")");
  }
  std::vector<std::int64_t> mine(kHeaderLen, 0);
  const bool empty = data.bytes().empty() && s.rank() == 0 && data.numel() <= 1;
  mine[0] = empty ? -1 : static_cast<std::int64_t>(data.dtype());
  mine[1] = static_cast<std::int64_t>(s.rank());
  mine[2] = data.numel();
  for (std::size_t d = 0; d < s.rank(); ++d) mine[3 + d] = s[d];
  std::vector<std::int64_t> all(kHeaderLen * static_cast<std::size_t>(world_size_));
  gather_bytes(op, {reinterpret_cast<const std::uint8_t*>(mine.data()), kHeaderLen * 8},
               {reinterpret_cast<std::uint8_t*>(all.data()), all.size() * 8});
  const auto header = [&](int r) {
    return std::vector<std::int64_t>(all.begin() + r * kHeaderLen,
                                     all.begin() + (r + 1) * kHeaderLen);
  };
  const auto describe = [&](const std::vector<std::int64_t>& h) {
    if (h[0] < 0) return std::string("nothing");
    std::ostringstream os;
    os << dtype_name(static_cast<DType>(h[0])) << " [";
    for (std::int64_t d = 0; d < h[1]; ++d) os << (d ? ", " : "") << h[3 + d];
    os << "]";
    return os.str();
  };
  const std::vector<std::int64_t> ref = header(root);
  if (ref[0] < 0) {
    ember::detail::fail<DistError>(op, "rank ", rank_, " of ", world_size_, ": rank ", root,
                                   " passed no data");
  }
  for (int r = 0; r < world_size_; ++r) {
    const auto h = header(r);
    if (h == ref || (allow_empty && h[0] < 0)) continue;
    ember::detail::fail<DistError>(op, "rank ", rank_, " of ", world_size_,
                                   ": the ranks passed different tensors: rank ", root, " ",
                                   describe(ref), ", rank ", r, " ", describe(h));
  }
  return ref;
}

namespace {

template <class T>
void run_all_reduce(const std::shared_ptr<gloo::Context>& context, T* ptr, std::size_t n,
                    ReduceOp op, std::chrono::milliseconds timeout) {
  gloo::AllreduceOptions opts(context);
  opts.setInput(ptr, n);
  opts.setOutput(ptr, n);
  opts.setReduceFunction(reduce_fn<T>(op));
  opts.setTimeout(timeout);
  gloo::allreduce(opts);
}

}  // namespace

namespace {

/// all_reduce of `data` in place over `context` (world size `world`); `fail` turns a
/// collective's exception into the group's DistError. Mean divides the sum afterwards.
template <class T, class Fail>
void all_reduce_values(const std::shared_ptr<gloo::Context>& context, std::span<T> data,
                       ReduceOp op, std::chrono::milliseconds timeout, int world, Fail&& fail) {
  if (world <= 1) return;
  if (!data.empty()) {
    try {
      run_all_reduce(context, data.data(), data.size(), op, timeout);
    } catch (const std::exception& e) {
      fail(e);
    }
  }
  if (op == ReduceOp::Mean) {
    for (T& x : data) x /= static_cast<T>(world);
  }
}

}  // namespace

void ProcessGroup::all_reduce(std::span<float> data, ReduceOp op) {
  check_usable("all_reduce");
  all_reduce_values(impl_->context, data, op, timeout_, world_size_,
                    [&](const std::exception& e) { fail_collective("all_reduce", e); });
}

void ProcessGroup::all_reduce(std::span<double> data, ReduceOp op) {
  check_usable("all_reduce");
  all_reduce_values(impl_->context, data, op, timeout_, world_size_,
                    [&](const std::exception& e) { fail_collective("all_reduce", e); });
}

void ProcessGroup::all_reduce(TensorData& data, ReduceOp op) {
  check_usable("all_reduce");
  const DType dt = data.dtype();
  const bool is_float = dt == DType::F32 || dt == DType::F64;
  if (!is_float && dt != DType::I32 && dt != DType::I64) {
    ember::detail::fail<DTypeError>("all_reduce", "dtype ", dtype_name(dt),
                                    " is not supported (f32, f64, i32, i64)");
  }
  if (op == ReduceOp::Mean && !is_float) {
    ember::detail::fail<ValueError>("all_reduce", "mean of integer dtype ", dtype_name(dt),
                                    " (use sum)");
  }
  if (world_size_ > 1) exchange_header("all_reduce", data, 0, false);
  const auto n = static_cast<std::size_t>(data.numel());
  auto* bytes = data.bytes_mut().data();
  switch (dt) {
    case DType::F32:
      all_reduce(std::span<float>(reinterpret_cast<float*>(bytes), n), op);
      return;
    case DType::F64:
      all_reduce(std::span<double>(reinterpret_cast<double*>(bytes), n), op);
      return;
    default:
      break;
  }
  if (world_size_ == 1 || n == 0) return;
  try {
    if (dt == DType::I32) {
      run_all_reduce(impl_->context, reinterpret_cast<std::int32_t*>(bytes), n, op, timeout_);
    } else {
      run_all_reduce(impl_->context, reinterpret_cast<std::int64_t*>(bytes), n, op, timeout_);
    }
  } catch (const std::exception& e) {
    fail_collective("all_reduce", e);
  }
}

void ProcessGroup::broadcast(std::span<std::uint8_t> bytes, int root) {
  check_usable("broadcast");
  if (root < 0 || root >= world_size_) {
    ember::detail::fail<ValueError>("broadcast", "root ", root, " is not a rank of a group of ",
                                    world_size_);
  }
  if (world_size_ == 1 || bytes.empty()) return;
  try {
    gloo::BroadcastOptions opts(impl_->context);
    if (rank_ == root) opts.setInput(bytes.data(), bytes.size());
    opts.setOutput(bytes.data(), bytes.size());
    opts.setRoot(root);
    opts.setTimeout(timeout_);
    gloo::broadcast(opts);
  } catch (const std::exception& e) {
    fail_collective("broadcast", e);
  }
}

void ProcessGroup::broadcast(TensorData& data, int root) {
  check_usable("broadcast");
  if (root < 0 || root >= world_size_) {
    ember::detail::fail<ValueError>("broadcast", "root ", root, " is not a rank of a group of ",
                                    world_size_);
  }
  if (world_size_ == 1) return;
  const auto ref = exchange_header("broadcast", data, root, true);
  if (rank_ != root &&
      !(data.dtype() == static_cast<DType>(ref[0]) && data.numel() == ref[2] &&
        data.bytes().size() == static_cast<std::size_t>(ref[2]) * dtype_size(data.dtype()))) {
    std::vector<std::int64_t> dims(ref.begin() + 3, ref.begin() + 3 + ref[1]);
    data = TensorData::full(Shape(dims), 0.0, static_cast<DType>(ref[0]));
  }
  broadcast(std::span<std::uint8_t>(data.bytes_mut()), root);
}

void ProcessGroup::all_gather(std::span<const std::uint8_t> in, std::span<std::uint8_t> out) {
  gather_bytes("all_gather", in, out);
}

void ProcessGroup::gather_bytes(const char* op, std::span<const std::uint8_t> in,
                                std::span<std::uint8_t> out) {
  check_usable(op);
  if (out.size() != in.size() * static_cast<std::size_t>(world_size_)) {
    ember::detail::fail<ShapeError>(op, "output of ", out.size(), " bytes for ", world_size_,
                                    " ranks of ", in.size(), " bytes");
  }
  if (world_size_ == 1 || in.empty()) {
    std::copy(in.begin(), in.end(), out.begin());
    return;
  }
  try {
    gloo::AllgatherOptions opts(impl_->context);
    opts.setInput(const_cast<std::uint8_t*>(in.data()), in.size());
    opts.setOutput(out.data(), out.size());
    opts.setTimeout(timeout_);
    gloo::allgather(opts);
  } catch (const std::exception& e) {
    fail_collective(op, e);
  }
}

std::vector<TensorData> ProcessGroup::all_gather(const TensorData& data) {
  check_usable("all_gather");
  if (world_size_ == 1) return {data};
  exchange_header("all_gather", data, 0, false);
  const std::size_t n = data.bytes().size();
  std::vector<std::uint8_t> out(n * static_cast<std::size_t>(world_size_));
  all_gather(data.bytes(), out);
  std::vector<TensorData> parts;
  parts.reserve(static_cast<std::size_t>(world_size_));
  for (int r = 0; r < world_size_; ++r) {
    std::vector<std::uint8_t> b(out.begin() + r * n, out.begin() + (r + 1) * n);
    parts.push_back(TensorData::from_bytes(std::move(b), data.shape(), data.dtype()));
  }
  return parts;
}

TensorData ProcessGroup::reduce_scatter(const TensorData& data, ReduceOp op) {
  check_usable("reduce_scatter");
  const Shape& s = data.shape();
  if (s.rank() == 0 || s[0] % world_size_ != 0) {
    ember::detail::fail<ShapeError>("reduce_scatter", "the first dim of ", s,
                                    " must be a multiple of the world size ", world_size_);
  }
  TensorData all = data;
  all_reduce(all, op);
  std::vector<std::int64_t> dims(s.dims.begin(), s.dims.end());
  dims[0] /= world_size_;
  const std::size_t block = all.bytes().size() / static_cast<std::size_t>(world_size_);
  const auto first = all.bytes().begin() + static_cast<std::ptrdiff_t>(block) * rank_;
  return TensorData::from_bytes(std::vector<std::uint8_t>(first, first + block), Shape(dims),
                                data.dtype());
}

void ProcessGroup::barrier() {
  check_usable("barrier");
  if (world_size_ == 1) return;
  try {
    gloo::BarrierOptions opts(impl_->context);
    opts.setTimeout(timeout_);
    gloo::barrier(opts);
  } catch (const std::exception& e) {
    fail_collective("barrier", e);
  }
}

}  // namespace ember::dist
