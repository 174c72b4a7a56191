// open_for_reading: the shared "cannot open" / "is a directory" errors of the readers.
#include "ember/store/file.hpp"

#include <cerrno>
#include <cstring>

#include "ember/core/error.hpp"

namespace ember::store {

std::ifstream open_for_reading(const std::filesystem::path& path, std::string_view op) {
  std::error_code ec;
  // Linux opens a directory for reading; only the first read fails (EISDIR).
  if (std::filesystem::is_directory(path, ec)) {
    detail::fail<IoError>(op, "'", path.string(), "' is a directory");
  }
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int err = errno != 0 ? errno : ENOENT;
    detail::fail<IoError>(op, "'", path.string(), "': cannot open: ", std::strerror(err));
  }
  return in;
}

}  // namespace ember::store
