#include "ember/data/mnist.hpp"

#include <zlib.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <system_error>

#include "ember/core/error.hpp"

namespace ember::data {
namespace {

/// Closes a gzFile on scope exit.
struct GzFile {
  gzFile f = nullptr;
  ~GzFile() {
    if (f) gzclose(f);
  }
};

[[noreturn]] void idx_fail(const std::filesystem::path& path, const std::string& problem) {
  ember::detail::fail<IoError>("read_idx", path.string(), ": ", problem);
}

/// The zlib error state of `f` as text, or "" when there is none.
std::string gz_problem(gzFile f) {
  int code = Z_OK;
  const char* msg = gzerror(f, &code);
  if (code == Z_OK || code == Z_STREAM_END) return "";
  if (code == Z_ERRNO) return std::strerror(errno);
  return msg ? msg : "zlib error";
}

/// Reads up to `n` bytes; returns how many were read. Throws IoError for a corrupt stream
/// (a stream that merely ends early, compressed or not, returns a short count).
std::size_t read_bytes(gzFile f, const std::filesystem::path& path, std::uint8_t* out,
                       std::size_t n) {
  std::size_t done = 0;
  while (done < n) {
    const auto chunk = static_cast<unsigned>(std::min<std::size_t>(n - done, 1u << 30));
    const int got = gzread(f, out + done, chunk);
    if (got < 0) {
      int code = Z_OK;
      gzerror(f, &code);
      if (code == Z_BUF_ERROR) break;  // the compressed stream ends early: a truncated file
      idx_fail(path,
               (code == Z_ERRNO ? "read error (" : "corrupt gzip data (") + gz_problem(f) + ")");
    }
    if (got == 0) break;
    done += static_cast<std::size_t>(got);
  }
  return done;
}

}  // namespace

IdxArray read_idx(const std::filesystem::path& path) {
  GzFile file;
  file.f = gzopen(path.c_str(), "rb");
  if (!file.f) {
    const int err = errno;
    idx_fail(path, std::string("cannot open (") +
                       (err ? std::strerror(err) : "zlib could not allocate a stream") + ")");
  }
  gzbuffer(file.f, 1 << 17);

  std::uint8_t header[4];
  const std::size_t got_header = read_bytes(file.f, path, header, 4);
  if (got_header < 4) {
    idx_fail(path, "truncated: the file has " + std::to_string(got_header) +
                       " bytes, an IDX header needs 4");
  }
  if (header[0] != 0 || header[1] != 0) {
    std::ostringstream os;
    os << "bad magic number 0x" << std::hex << static_cast<int>(header[0]) << "/0x"
       << static_cast<int>(header[1]) << " (an IDX file starts with two zero bytes)";
    idx_fail(path, os.str());
  }
  if (header[2] != 0x08) {
    std::ostringstream os;
    os << "element type 0x" << std::hex << static_cast<int>(header[2])
       << " is not supported (expected 0x08, unsigned byte)";
    idx_fail(path, os.str());
  }
  const std::size_t rank = header[3];
  if (rank == 0) idx_fail(path, "the header declares 0 dimensions");

  IdxArray out;
  std::vector<std::uint8_t> dim_bytes(4 * rank);
  const std::size_t got_dims = read_bytes(file.f, path, dim_bytes.data(), dim_bytes.size());
  if (got_dims < dim_bytes.size()) {
    idx_fail(path, "truncated: the header declares " + std::to_string(rank) +
                       " dimensions but ends after " + std::to_string(got_dims) + " of their " +
                       std::to_string(dim_bytes.size()) + " bytes");
  }
  std::size_t total = 1;
  for (std::size_t d = 0; d < rank; ++d) {
    const std::uint8_t* b = dim_bytes.data() + 4 * d;
    const std::uint32_t size = (std::uint32_t{b[0]} << 24) | (std::uint32_t{b[1]} << 16) |
                               (std::uint32_t{b[2]} << 8) | std::uint32_t{b[3]};
    if (size == 0) idx_fail(path, "dimension " + std::to_string(d) + " has size 0");
    if (total > (std::size_t{1} << 40) / size) {
      idx_fail(path, "the dimensions describe more than 2^40 values");
    }
    total *= size;
    out.dims.push_back(size);
  }

  out.values.resize(total);
  const std::size_t got = read_bytes(file.f, path, out.values.data(), total);
  if (got < total) {
    std::string problem = "truncated: the header announces " + std::to_string(total) +
                          " data bytes but the file holds " + std::to_string(got);
    const std::string z = gz_problem(file.f);
    if (!z.empty()) problem += " (" + z + ")";
    idx_fail(path, problem);
  }
  std::uint8_t extra[256];
  const std::size_t trailing = read_bytes(file.f, path, extra, sizeof extra);
  if (trailing > 0) {
    idx_fail(path, "unexpected bytes after the " + std::to_string(total) +
                       " data bytes the header announces");
  }
  return out;
}

const char* split_name(Split split) {
  return split == Split::Train ? "train" : "test";
}

std::array<std::string, 2> mnist_file_names(Split split) {
  const std::string prefix = split == Split::Train ? "train" : "t10k";
  return {prefix + "-images-idx3-ubyte", prefix + "-labels-idx1-ubyte"};
}

MnistDataset::MnistDataset(const std::filesystem::path& images, const std::filesystem::path& labels,
                           std::string_view name, std::size_t num_classes) {
  IdxArray im = read_idx(images);
  IdxArray lb = read_idx(labels);
  if (im.dims.size() != 3) {
    ember::detail::fail<IoError>(name, images.string(), ": expected 3 dimensions (count, rows, ",
                                 "cols), found ", im.dims.size());
  }
  if (lb.dims.size() != 1) {
    ember::detail::fail<IoError>(name, labels.string(), ": expected 1 dimension (count), found ",
                                 lb.dims.size());
  }
  if (im.dims[0] != lb.dims[0]) {
    ember::detail::fail<IoError>(name, images.string(), " holds ", im.dims[0], " images but ",
                                 labels.string(), " holds ", lb.dims[0], " labels");
  }
  for (std::size_t i = 0; i < lb.values.size(); ++i) {
    if (lb.values[i] >= num_classes) {
      ember::detail::fail<IoError>(name, labels.string(), ": label ", int{lb.values[i]},
                                   " at index ", i, " is not a class (0..", num_classes - 1, ")");
    }
  }
  rows_ = im.dims[1];
  cols_ = im.dims[2];
  pixels_ = std::move(im.values);
  labels_ = std::move(lb.values);
}

std::shared_ptr<MnistDataset> MnistDataset::from_directory(const std::filesystem::path& dir,
                                                           Split split, std::string_view name,
                                                           std::string_view install_hint) {
  std::vector<std::filesystem::path> found;
  std::vector<std::string> missing;
  for (const std::string& base : mnist_file_names(split)) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(dir / base, ec)) {
      found.push_back(dir / base);
    } else if (std::filesystem::is_regular_file(dir / (base + ".gz"), ec)) {
      found.push_back(dir / (base + ".gz"));
    } else {
      missing.push_back(base + "[.gz]");
    }
  }
  if (!missing.empty()) {
    std::string list;
    for (const std::string& m : missing) list += (list.empty() ? "" : ", ") + m;
    std::error_code ec;
    const char* what = std::filesystem::is_directory(dir, ec) ? "" : " (no such directory)";
    ember::detail::fail<IoError>(name, "the ", split_name(split), " split is missing in ",
                                 dir.string(), what, ": ", list, ". ", install_hint);
  }
  return std::make_shared<MnistDataset>(found[0], found[1], name);
}

std::optional<ImageU8> MnistDataset::get(std::size_t index) const {
  if (index >= labels_.size()) return std::nullopt;
  const std::size_t per = rows_ * cols_;
  const auto first = pixels_.begin() + static_cast<std::ptrdiff_t>(index * per);
  return ImageU8(1, rows_, cols_,
                 std::vector<std::uint8_t>(first, first + static_cast<std::ptrdiff_t>(per)),
                 labels_[index]);
}

namespace {
std::filesystem::path env_or(const char* var, const char* fallback) {
  const char* v = std::getenv(var);
  return (v && *v) ? std::filesystem::path(v) : std::filesystem::path(fallback);
}
}  // namespace

std::filesystem::path FashionMnist::directory() {
  return env_or(kEnvVar, kDefaultDir);
}

std::shared_ptr<MnistDataset> FashionMnist::load(Split split, const std::filesystem::path& dir) {
  return MnistDataset::from_directory(
      dir, split, "fashion_mnist",
      "Install Debian's dataset-fashion-mnist package (`sudo apt-get install "
      "dataset-fashion-mnist`, or run scripts/setup.sh), which puts the files in "
      "/usr/share/datasets/fashion-mnist, or set EMBER_FASHION_MNIST_DIR to a directory that "
      "holds them");
}

const std::array<std::string_view, 10>& FashionMnist::class_names() {
  static const std::array<std::string_view, 10> names = {
      "T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
      "Sandal",      "Shirt",   "Sneaker",  "Bag",   "Ankle boot"};
  return names;
}

std::filesystem::path Mnist::directory() {
  return env_or(kEnvVar, kDefaultDir);
}

std::shared_ptr<MnistDataset> Mnist::load(Split split, const std::filesystem::path& dir) {
  return MnistDataset::from_directory(
      dir, split, "mnist",
      "Debian has no MNIST package: download the four IDX files (train-images-idx3-ubyte.gz, "
      "train-labels-idx1-ubyte.gz, t10k-images-idx3-ubyte.gz, t10k-labels-idx1-ubyte.gz) "
      "into that directory or set EMBER_MNIST_DIR to a directory that holds them");
}

const std::array<std::string_view, 10>& Mnist::class_names() {
  static const std::array<std::string_view, 10> names = {"0", "1", "2", "3", "4",
                                                         "5", "6", "7", "8", "9"};
  return names;
}

}  // namespace ember::data
