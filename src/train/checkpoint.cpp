#include "ember/train/checkpoint.hpp"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <set>

#include "ember/core/error.hpp"

namespace ember::train {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kTempPrefix = ".tmp-";

std::optional<std::size_t> parse_count(std::string_view s) {
  if (s.empty() || (s.size() > 1 && s[0] == '0')) return std::nullopt;
  std::size_t v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

[[noreturn]] void fail_errno(const char* op, const std::string& what, const fs::path& path,
                             int err) {
  ember::detail::fail<IoError>(op, what, " '", path.string(), "': ", std::strerror(err));
}

void remove_all_quietly(const fs::path& p) {
  std::error_code ec;
  fs::remove_all(p, ec);
}

}  // namespace

// ---- CheckpointId -------------------------------------------------------------------------

std::string CheckpointId::name() const {
  std::string n = "epoch-" + std::to_string(epoch);
  if (partial) n += "-batch-" + std::to_string(batches);
  return n;
}

std::optional<CheckpointId> CheckpointId::parse(const std::string& name) {
  constexpr std::string_view head = "epoch-", mid = "-batch-";
  std::string_view s(name);
  if (s.substr(0, head.size()) != head) return std::nullopt;
  s.remove_prefix(head.size());
  CheckpointId id;
  const std::size_t cut = s.find(mid);
  const auto epoch = parse_count(s.substr(0, cut));
  if (!epoch || *epoch == 0) return std::nullopt;
  id.epoch = *epoch;
  if (cut != std::string_view::npos) {
    const auto batches = parse_count(s.substr(cut + mid.size()));
    if (!batches) return std::nullopt;
    id.partial = true;
    id.batches = *batches;
  }
  return id;
}

std::strong_ordering CheckpointId::operator<=>(const CheckpointId& o) const {
  if (auto c = epoch <=> o.epoch; c != 0) return c;
  if (partial != o.partial)
    return partial ? std::strong_ordering::less : std::strong_ordering::greater;
  return partial ? batches <=> o.batches : std::strong_ordering::equal;
}

// ---- CheckpointStore ----------------------------------------------------------------------

CheckpointStore::CheckpointStore(fs::path dir) : dir_(std::move(dir)) {}

std::vector<CheckpointId> CheckpointStore::list() const {
  std::vector<CheckpointId> out;
  std::error_code ec;
  if (!fs::is_directory(dir_, ec)) return out;
  for (const auto& entry : fs::directory_iterator(dir_, ec)) {
    if (!entry.is_directory(ec)) continue;
    if (auto id = CheckpointId::parse(entry.path().filename().string())) out.push_back(*id);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::optional<CheckpointId> CheckpointStore::latest() const {
  const auto all = list();
  if (all.empty()) return std::nullopt;
  return all.back();
}

void CheckpointStore::remove_temporaries() const {
  std::error_code ec;
  if (!fs::is_directory(dir_, ec)) return;
  std::vector<fs::path> stale;
  for (const auto& entry : fs::directory_iterator(dir_, ec)) {
    if (entry.path().filename().string().rfind(kTempPrefix, 0) == 0) stale.push_back(entry.path());
  }
  for (const auto& p : stale) remove_all_quietly(p);
}

void sync_path(const fs::path& path, const char* op) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail_errno(op, "cannot open", path, errno);
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) fail_errno(op, "cannot sync", path, err);
}

void CheckpointStore::save(const CheckpointId& id,
                           const std::function<void(const fs::path&)>& write) {
  constexpr const char* op = "checkpoint";
  if (id.epoch == 0) ember::detail::fail<ValueError>(op, "epochs start at 1");
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) {
    ember::detail::fail<IoError>(op, "cannot create '", dir_.string(), "': ", ec.message());
  }
  remove_temporaries();
  std::string pattern = (dir_ / (std::string(kTempPrefix) + id.name() + "-XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr)
    fail_errno(op, "cannot create a folder in", dir_, errno);
  const fs::path tmp = pattern;
  const fs::path target = path(id);
  fs::path old;  // an existing checkpoint of the same name, moved aside
  try {
    write(tmp);
    for (const auto& entry : fs::directory_iterator(tmp)) {
      if (entry.is_regular_file()) sync_path(entry.path(), op);
    }
    sync_path(tmp, op);
    if (before_commit_) before_commit_(tmp);
    if (fs::exists(target, ec)) {
      std::string aside =
          (dir_ / (std::string(kTempPrefix) + "old-" + id.name() + "-XXXXXX")).string();
      if (::mkdtemp(aside.data()) == nullptr)
        fail_errno(op, "cannot create a folder in", dir_, errno);
      old = fs::path(aside) / "old";
      if (::rename(target.c_str(), old.c_str()) != 0)
        fail_errno(op, "cannot move aside", target, errno);
    }
    if (::rename(tmp.c_str(), target.c_str()) != 0)
      fail_errno(op, "cannot rename into", target, errno);
    sync_path(dir_, op);
  } catch (...) {
    remove_all_quietly(tmp);
    if (!old.empty() && !fs::exists(target, ec)) ::rename(old.c_str(), target.c_str());
    if (!old.empty()) remove_all_quietly(old.parent_path());
    throw;
  }
  if (!old.empty()) remove_all_quietly(old.parent_path());
}

std::vector<CheckpointId> CheckpointStore::prune(std::size_t keep_last,
                                                 const std::vector<std::size_t>& keep_epochs) {
  if (keep_last == 0) {
    ember::detail::fail<ValueError>("checkpoint",
                                    "keep_last must be >= 1 (the latest checkpoint "
                                    "is needed to resume)");
  }
  const auto all = list();
  if (all.empty()) return {};
  const CheckpointId newest = all.back();
  std::vector<CheckpointId> complete;
  for (const auto& id : all) {
    if (!id.partial) complete.push_back(id);
  }
  std::set<std::size_t> keep(keep_epochs.begin(), keep_epochs.end());
  for (std::size_t i = complete.size() > keep_last ? complete.size() - keep_last : 0;
       i < complete.size(); ++i) {
    keep.insert(complete[i].epoch);
  }
  std::vector<CheckpointId> removed;
  for (const auto& id : all) {
    const bool drop = id.partial ? id < newest : keep.count(id.epoch) == 0;
    if (drop) {
      remove_all_quietly(path(id));
      removed.push_back(id);
    }
  }
  return removed;
}

}  // namespace ember::train
