// ZipReader: libzip behind a small RAII wrapper.
#include "pytorch_zip.hpp"

#include <libdeflate.h>
#include <zip.h>

#include <algorithm>
#include <functional>
#include <string>

#include "ember/core/error.hpp"

namespace ember::store::internal {

namespace {
// Entries larger than this are refused (a corrupt size field, or a zip bomb).
constexpr std::uint64_t kMaxEntry = 1ull << 40;
}  // namespace

ZipReader::ZipReader(const std::filesystem::path& path, std::string op)
    : file_(path.string()), op_(std::move(op)) {
  int code = 0;
  archive_ = zip_open(path.c_str(), ZIP_RDONLY | ZIP_CHECKCONS, &code);
  if (archive_ == nullptr) {
    zip_error_t err;
    zip_error_init_with_code(&err, code);
    const std::string reason = zip_error_strerror(&err);
    zip_error_fini(&err);
    if (code == ZIP_ER_NOENT || code == ZIP_ER_OPEN || code == ZIP_ER_READ) {
      detail::fail<IoError>(op_, "'", file_, "': cannot open: ", reason);
    }
    detail::fail<IoError>(op_, "'", file_,
                          "': not a valid zip archive (truncated or corrupt): ", reason);
  }
}

ZipReader::~ZipReader() {
  if (archive_ != nullptr) zip_discard(archive_);
}

std::vector<std::string> ZipReader::names() const {
  std::vector<std::string> out;
  const zip_int64_t n = zip_get_num_entries(archive_, 0);
  for (zip_int64_t i = 0; i < n; ++i) {
    const char* name = zip_get_name(archive_, static_cast<zip_uint64_t>(i), ZIP_FL_ENC_RAW);
    if (name != nullptr) out.emplace_back(name);
  }
  return out;
}

std::optional<std::uint64_t> ZipReader::find(const std::string& name) const {
  const zip_int64_t i = zip_name_locate(archive_, name.c_str(), ZIP_FL_ENC_RAW);
  if (i < 0) return std::nullopt;
  return static_cast<std::uint64_t>(i);
}

std::uint64_t ZipReader::size(std::uint64_t index) const {
  zip_stat_t st;
  zip_stat_init(&st);
  if (zip_stat_index(archive_, index, 0, &st) != 0 || !(st.valid & ZIP_STAT_SIZE)) {
    detail::fail<IoError>(op_, "'", file_, "': corrupt zip entry ", index, ": ",
                          zip_strerror(archive_));
  }
  return st.size;
}

std::vector<std::uint8_t> ZipReader::read(std::uint64_t index) const {
  std::vector<std::uint8_t> out;
  read_into(index, out);
  return out;
}

namespace {

/// Reads [start, start + len) of a stored entry through a window source: libzip adds no
/// CRC layer to a partial read, so the bytes are only copied (the CRC is checked by the
/// caller with libdeflate, ~4x faster here than zlib's). Returns "" or the reason.
std::string read_window(zip* archive, std::uint64_t index, std::uint64_t start, std::uint64_t len,
                        std::uint8_t* dst) {
  zip_source_t* src =
      zip_source_zip(archive, archive, index, 0, start, static_cast<zip_int64_t>(len));
  if (src == nullptr) return zip_strerror(archive);
  std::string error;
  if (zip_source_open(src) < 0) {
    error = zip_error_strerror(zip_source_error(src));
  } else {
    std::uint64_t got = 0;
    while (got < len) {
      const zip_int64_t r = zip_source_read(src, dst + got, len - got);
      if (r < 0) {
        error = zip_error_strerror(zip_source_error(src));
        break;
      }
      if (r == 0) {
        error = "the entry ends after " + std::to_string(start + got) + " bytes";
        break;
      }
      got += static_cast<std::uint64_t>(r);
    }
    zip_source_close(src);
  }
  zip_source_free(src);
  return error;
}

}  // namespace

ZipReader::Stat ZipReader::stat(std::uint64_t index) const {
  zip_stat_t st;
  zip_stat_init(&st);
  if (zip_stat_index(archive_, index, 0, &st) != 0 || !(st.valid & ZIP_STAT_SIZE)) {
    detail::fail<IoError>(op_, "'", file_, "': corrupt zip entry ", index, ": ",
                          zip_strerror(archive_));
  }
  Stat out;
  out.name = st.name != nullptr ? st.name : std::to_string(index);
  out.size = st.size;
  if (out.size > kMaxEntry) {
    detail::fail<IoError>(op_, "'", file_, "': corrupt zip entry '", out.name, "': size ", out.size,
                          " exceeds 1 TiB");
  }
  // Stored (not compressed, not encrypted) with a CRC: read through windows, CRC by libdeflate.
  out.raw = (st.valid & ZIP_STAT_COMP_METHOD) && st.comp_method == ZIP_CM_STORE &&
            (st.valid & ZIP_STAT_CRC) &&
            (!(st.valid & ZIP_STAT_ENCRYPTION_METHOD) || st.encryption_method == ZIP_EM_NONE) &&
            out.size >= 2;
  out.crc = st.crc;
  return out;
}

void ZipReader::read_libzip(std::uint64_t index, const std::string& entry, std::uint8_t* dst,
                            std::uint64_t n, bool keep) const {
  zip_file_t* f = zip_fopen_index(archive_, index, 0);
  if (f == nullptr) {
    detail::fail<IoError>(op_, "'", file_, "': cannot read zip entry '", entry,
                          "': ", zip_strerror(archive_));
  }
  // Not kept: through a buffer that stays in the cache (the bytes are only checked).
  std::vector<std::uint8_t> chunk(keep ? 0 : std::size_t{1} << 18);
  std::string error;
  std::uint64_t got = 0;
  while (got < n) {
    const zip_int64_t r =
        keep ? zip_fread(f, dst + got, n - got)
             : zip_fread(f, chunk.data(), std::min<std::uint64_t>(chunk.size(), n - got));
    if (r < 0) {
      error = zip_file_strerror(f);
      break;
    }
    if (r == 0) {
      error = "the entry ends after " + std::to_string(got) + " of " + std::to_string(n) + " bytes";
      break;
    }
    got += static_cast<std::uint64_t>(r);
  }
  if (error.empty()) {
    // Read to the end so that libzip verifies the CRC.
    std::uint8_t extra = 0;
    const zip_int64_t r = zip_fread(f, &extra, 1);
    if (r < 0) error = zip_file_strerror(f);
    if (r > 0) error = "the entry is longer than its recorded size";
  }
  zip_fclose(f);
  if (!error.empty()) {
    detail::fail<IoError>(op_, "'", file_, "': corrupt zip entry '", entry, "': ", error);
  }
}

std::uint32_t ZipReader::read_stored(std::uint64_t index, const Stat& st, std::uint64_t piece,
                                     const std::function<std::uint8_t*(std::uint64_t)>& dst,
                                     bool crc) const {
  std::uint32_t sum = 0;
  for (std::uint64_t at = 0; at < st.size; at += piece) {
    const std::uint64_t n = std::min(piece, st.size - at);
    std::uint8_t* p = dst(at);
    // Never the whole entry in one window: libzip would add its (zlib) CRC layer to it.
    const std::uint64_t first = n == st.size ? n - 1 : n;
    std::string error = read_window(archive_, index, at, first, p);
    if (error.empty() && first < n)
      error = read_window(archive_, index, at + first, n - first, p + first);
    if (!error.empty()) {
      detail::fail<IoError>(op_, "'", file_, "': corrupt zip entry '", st.name, "': ", error);
    }
    if (crc)
      sum = static_cast<std::uint32_t>(libdeflate_crc32(sum, p, static_cast<std::size_t>(n)));
  }
  return sum;
}

void ZipReader::check_crc(const Stat& st, std::uint32_t crc) const {
  if (crc != st.crc) {
    detail::fail<IoError>(op_, "'", file_, "': corrupt zip entry '", st.name,
                          "': CRC error (the data does not match its checksum)");
  }
}

void ZipReader::read_into(std::uint64_t index, std::vector<std::uint8_t>& out, bool check) const {
  const Stat st = stat(index);
  out.resize(static_cast<std::size_t>(st.size));
  if (!st.raw) {
    read_libzip(index, st.name, out.data(), st.size, true);
    return;
  }
  const std::uint32_t crc = read_stored(
      index, st, st.size, [&](std::uint64_t at) { return out.data() + at; }, check);
  if (check) check_crc(st, crc);
}

void ZipReader::verify(std::uint64_t index) const {
  const Stat st = stat(index);
  if (!st.raw) {
    read_libzip(index, st.name, nullptr, st.size, false);
    return;
  }
  // In cache-sized pieces into one buffer: the bytes are checked, not kept.
  constexpr std::uint64_t kPiece = std::uint64_t{1} << 20;
  std::vector<std::uint8_t> chunk(static_cast<std::size_t>(std::min(kPiece, st.size)));
  check_crc(st, read_stored(
                    index, st, kPiece, [&](std::uint64_t) { return chunk.data(); }, true));
}

}  // namespace ember::store::internal
