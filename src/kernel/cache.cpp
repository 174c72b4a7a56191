// The on-disk kernel cache (see cache.hpp).
#include "ember/kernel/cache.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <system_error>
#include <vector>

#include "ember/kernel/ir.hpp"

namespace ember::kernel {

namespace fs = std::filesystem;

fs::path cache_dir() {
  if (const char* off = std::getenv("EMBER_KERNEL_CACHE"); off && std::string(off) == "0")
    return {};
  if (const char* d = std::getenv("EMBER_CACHE_DIR"); d && *d) return fs::path(d);
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return fs::path(x) / "ember";
  if (const char* h = std::getenv("HOME"); h && *h) return fs::path(h) / ".cache" / "ember";
  return {};
}

std::string cache_key(const std::string& s) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(hash64(s)),
                static_cast<unsigned long long>(hash64(s, 0x9e3779b97f4a7c15ull)));
  return buf;
}

DiskCache::DiskCache(const std::string& target, std::uint64_t max_bytes) {
  const fs::path base = cache_dir();
  if (base.empty()) return;
  std::error_code ec;
  fs::create_directories(base / "kernels" / target, ec);
  if (ec) return;  // no cache rather than an error
  dir_ = base / "kernels" / target;
  max_bytes_ = max_bytes;
  if (max_bytes_ == 0) {
    max_bytes_ = 256ull << 20;
    if (const char* mb = std::getenv("EMBER_KERNEL_CACHE_MB"); mb && *mb)
      max_bytes_ = std::strtoull(mb, nullptr, 10) << 20;
  }
}

std::optional<std::string> DiskCache::get(const std::string& key) const {
  if (dir_.empty()) return std::nullopt;
  const fs::path p = dir_ / key;
  std::ifstream f(p, std::ios::binary);
  if (!f) return std::nullopt;
  std::ostringstream s;
  s << f.rdbuf();
  std::error_code ec;
  fs::last_write_time(p, fs::file_time_type::clock::now(), ec);  // mark as recently used
  return s.str();
}

void DiskCache::put(const std::string& key, const std::string& bytes) const {
  if (dir_.empty()) return;
  const fs::path tmp = dir_ / ("." + key + ".tmp" + std::to_string(::getpid()));
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) return;
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!f) {
      std::error_code ec;
      fs::remove(tmp, ec);
      return;
    }
  }
  std::error_code ec;
  fs::rename(tmp, dir_ / key, ec);
  if (ec) {
    fs::remove(tmp, ec);
    return;
  }
  // Evict the least recently used files beyond the bound.
  std::vector<std::pair<fs::file_time_type, fs::path>> files;
  std::uint64_t total = 0;
  for (const auto& e : fs::directory_iterator(dir_, ec)) {
    if (!e.is_regular_file(ec) || e.path().filename().string().starts_with(".")) continue;
    total += e.file_size(ec);
    files.emplace_back(e.last_write_time(ec), e.path());
  }
  if (total <= max_bytes_) return;
  std::sort(files.begin(), files.end());
  for (const auto& [t, p] : files) {
    if (total <= max_bytes_) break;
    const auto sz = fs::file_size(p, ec);
    if (fs::remove(p, ec)) total -= sz;
  }
}

}  // namespace ember::kernel
