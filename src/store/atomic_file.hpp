// AtomicFile: writes a file through a temporary sibling that is synced and renamed into
// place on commit(), and removed if commit() is never reached.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>

namespace ember::store::internal {

class AtomicFile {
 public:
  /// Creates the temporary file "<dir>/.<name>.tmp-XXXXXX" next to `target`.
  /// `op` prefixes error messages. Throws IoError if it cannot be created.
  AtomicFile(std::filesystem::path target, std::string op);
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  /// Removes the temporary file unless commit() succeeded.
  ~AtomicFile();

  /// Appends `n` bytes. Throws IoError (disk full, file size limit, ...).
  void write(const void* data, std::size_t n);
  /// fsync, close, rename over the target, fsync the directory. Throws IoError.
  void commit();

  /// The temporary file's path (for tests and messages).
  const std::filesystem::path& temp_path() const { return temp_; }

 private:
  [[noreturn]] void fail(const std::string& what, int err);
  void discard() noexcept;

  std::filesystem::path target_;
  std::filesystem::path temp_;
  std::string op_;
  int fd_ = -1;
  bool committed_ = false;
};

}  // namespace ember::store::internal
