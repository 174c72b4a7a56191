// ZipReader: libzip behind a small RAII wrapper.
#include "pytorch_zip.hpp"

#include <zip.h>

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

void ZipReader::read_into(std::uint64_t index, std::vector<std::uint8_t>& out) const {
  const std::uint64_t n = size(index);
  const char* name = zip_get_name(archive_, index, ZIP_FL_ENC_RAW);
  const std::string entry = name != nullptr ? name : std::to_string(index);
  if (n > kMaxEntry) {
    detail::fail<IoError>(op_, "'", file_, "': corrupt zip entry '", entry, "': size ", n,
                          " exceeds 1 TiB");
  }
  zip_file_t* f = zip_fopen_index(archive_, index, 0);
  if (f == nullptr) {
    detail::fail<IoError>(op_, "'", file_, "': cannot read zip entry '", entry,
                          "': ", zip_strerror(archive_));
  }
  out.resize(static_cast<std::size_t>(n));
  std::string error;
  std::uint64_t got = 0;
  while (got < n) {
    const zip_int64_t r = zip_fread(f, out.data() + got, n - got);
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

}  // namespace ember::store::internal
