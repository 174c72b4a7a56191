// AtomicFile: temporary sibling + fsync + rename (POSIX).
#include "atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <vector>

#include "ember/core/error.hpp"
#include "ember/store/file.hpp"

namespace ember::store::internal {

namespace {

// The process umask, read without changing it (Linux /proc), 022 if unavailable.
mode_t current_umask() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("Umask:", 0) == 0) {
      try {
        return static_cast<mode_t>(std::stoul(line.substr(6), nullptr, 8));
      } catch (const std::exception&) {
        break;
      }
    }
  }
  return 022;
}

// The mode the finished file gets: the existing file's, or 0666 minus the umask.
mode_t final_mode(const std::filesystem::path& target) {
  struct stat st {};
  if (::stat(target.c_str(), &st) == 0 && S_ISREG(st.st_mode)) return st.st_mode & 07777;
  return 0666 & ~current_umask();
}

}  // namespace

AtomicFile::AtomicFile(std::filesystem::path target, std::string op)
    : target_(std::move(target)), op_(std::move(op)) {
  if (target_.filename().empty()) {
    detail::fail<IoError>(op_, "'", target_.string(), "': not a file path");
  }
  std::filesystem::path dir = target_.parent_path();
  if (dir.empty()) dir = ".";
  std::string name = ".";  // (built piecewise: GCC 12 warns falsely on a + chain here)
  name += target_.filename().string();
  name += ".tmp-XXXXXX";
  const std::string pattern = (dir / name).string();
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  fd_ = ::mkstemp(buf.data());
  if (fd_ < 0) {
    const int err = errno;
    detail::fail<IoError>(op_, "'", target_.string(), "': cannot create a temporary file in '",
                          dir.string(), "': ", std::strerror(err));
  }
  temp_ = buf.data();
  if (::fchmod(fd_, final_mode(target_)) != 0) fail("cannot set the file mode", errno);
}

AtomicFile::~AtomicFile() {
  if (!committed_) discard();
}

void AtomicFile::discard() noexcept {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
  if (!temp_.empty()) {
    ::unlink(temp_.c_str());
    temp_.clear();
  }
}

void AtomicFile::fail(const std::string& what, int err) {
  discard();
  detail::fail<IoError>(op_, "'", target_.string(), "': ", what, ": ", std::strerror(err));
}

void AtomicFile::write(const void* data, std::size_t n) {
  if (fd_ < 0) detail::fail<IoError>(op_, "'", target_.string(), "': file is closed");
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = ::write(fd_, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      fail("write failed", errno);
    }
    p += w;
    n -= static_cast<std::size_t>(w);
  }
}

void AtomicFile::commit() {
  if (fd_ < 0) detail::fail<IoError>(op_, "'", target_.string(), "': file is closed");
  if (::fsync(fd_) != 0) fail("fsync failed", errno);
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) fail("close failed", errno);
  if (::rename(temp_.c_str(), target_.c_str()) != 0)
    fail("cannot rename the temporary file", errno);
  committed_ = true;
  temp_.clear();
  // Make the rename itself durable; a failure here leaves a complete file in place.
  std::filesystem::path dir = target_.parent_path();
  if (dir.empty()) dir = ".";
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

}  // namespace ember::store::internal

namespace ember::store {

void write_file_atomic(const std::filesystem::path& path, std::string_view bytes,
                       std::string_view op) {
  internal::AtomicFile file(path, std::string(op));
  file.write(bytes.data(), bytes.size());
  file.commit();
}

}  // namespace ember::store
