// A read-only zip archive (libzip), as used for PyTorch files.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

struct zip;

namespace ember::store::internal {

class ZipReader {
 public:
  /// Opens `path` with libzip's consistency checks. Throws IoError "[op] '<file>': ..."
  /// naming libzip's reason (not a zip archive, truncated, inconsistent).
  ZipReader(const std::filesystem::path& path, std::string op);
  ZipReader(const ZipReader&) = delete;
  ZipReader& operator=(const ZipReader&) = delete;
  ~ZipReader();

  /// Every entry name, in archive order.
  std::vector<std::string> names() const;
  /// The index of the entry called `name`, if present.
  std::optional<std::uint64_t> find(const std::string& name) const;
  /// The entry's uncompressed size.
  std::uint64_t size(std::uint64_t index) const;
  /// The entry's bytes (CRC checked). Throws IoError.
  std::vector<std::uint8_t> read(std::uint64_t index) const;
  /// The same into `out` (resized to the entry's size; its capacity is reused, so a buffer
  /// read into again and again is neither reallocated nor zero-filled). `check` false skips
  /// the CRC of a stored entry (one verify() has checked it already).
  void read_into(std::uint64_t index, std::vector<std::uint8_t>& out, bool check = true) const;
  /// Reads the entry to its end without keeping it, checking its CRC and size. Throws
  /// IoError as read_into.
  void verify(std::uint64_t index) const;

 private:
  struct Stat {
    std::string name;
    std::uint64_t size = 0;
    std::uint32_t crc = 0;
    bool raw = false;  // stored with a CRC: read without libzip's CRC layer
  };
  Stat stat(std::uint64_t index) const;
  void read_libzip(std::uint64_t index, const std::string& entry, std::uint8_t* dst,
                   std::uint64_t n, bool keep) const;
  /// A stored entry read through partial windows of at most `piece` bytes, each into
  /// dst(offset); returns the CRC-32 of the bytes (libdeflate) when `crc`, else 0.
  std::uint32_t read_stored(std::uint64_t index, const Stat& st, std::uint64_t piece,
                            const std::function<std::uint8_t*(std::uint64_t)>& dst, bool crc) const;
  void check_crc(const Stat& st, std::uint32_t crc) const;

  zip* archive_ = nullptr;
  std::string file_;
  std::string op_;
};

}  // namespace ember::store::internal
