// IDX files (plain and gzipped, hand-made by the test, and corrupt or truncated ones), the
// MNIST-format dataset, directory lookup and its errors, and the real Fashion-MNIST when
// Debian's dataset-fashion-mnist package is installed.
#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "ember/data/mnist.hpp"

using namespace ember;
using namespace ember::data;
namespace fs = std::filesystem;

namespace {

using Bytes = std::vector<std::uint8_t>;

/// An IDX file's bytes: magic (0, 0, type, rank), big-endian sizes, values.
Bytes idx_bytes(const std::vector<std::uint32_t>& dims, const Bytes& values,
                std::uint8_t type = 0x08) {
  Bytes out = {0, 0, type, static_cast<std::uint8_t>(dims.size())};
  for (std::uint32_t d : dims) {
    for (int shift : {24, 16, 8, 0}) out.push_back(static_cast<std::uint8_t>(d >> shift));
  }
  out.insert(out.end(), values.begin(), values.end());
  return out;
}

void write_plain(const fs::path& path, const Bytes& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << path;
}

void write_gzip(const fs::path& path, const Bytes& bytes) {
  gzFile f = gzopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr) << path;
  ASSERT_EQ(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())),
            static_cast<int>(bytes.size()));
  ASSERT_EQ(gzclose(f), Z_OK);
}

Bytes read_all(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

/// A fresh directory under the system temp dir, removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = fs::temp_directory_path() / ("ember_data_" + std::string(info->test_suite_name()) +
                                         "_" + info->name() + "_" + std::to_string(::getpid()));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }
  fs::path operator/(const std::string& name) const { return path_ / name; }

 private:
  fs::path path_;
};

/// The IoError message `read_idx(path)` throws ("" when it does not throw).
std::string idx_error(const fs::path& path) {
  try {
    read_idx(path);
  } catch (const IoError& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

/// Three 2x3 images with pixel value 10 * image + position, labels 7, 0, 9.
const Bytes kPixels = {0, 1, 2, 3, 4, 5, 10, 11, 12, 13, 14, 15, 20, 21, 22, 23, 24, 25};
const Bytes kLabels = {7, 0, 9};

/// Writes the standard train file pair (images gzipped, labels plain) into dir.
void write_small_split(const fs::path& dir, const std::string& prefix) {
  write_gzip(dir / (prefix + "-images-idx3-ubyte.gz"), idx_bytes({3, 2, 3}, kPixels));
  write_plain(dir / (prefix + "-labels-idx1-ubyte"), idx_bytes({3}, kLabels));
}

/// Sets an environment variable for one scope and restores it.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace

TEST(Idx, ReadsPlainAndGzipped) {
  TempDir dir;
  const Bytes values = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 255};
  write_plain(dir / "a.idx", idx_bytes({2, 3, 2}, values));
  write_gzip(dir / "a.idx.gz", idx_bytes({2, 3, 2}, values));
  for (const char* name : {"a.idx", "a.idx.gz"}) {
    IdxArray a = read_idx(dir / name);
    EXPECT_EQ(a.dims, (std::vector<std::uint32_t>{2, 3, 2})) << name;
    EXPECT_EQ(a.values, values) << name;
  }
  // The gzip file really is compressed (starts with the gzip magic 1f 8b).
  const Bytes gz = read_all(dir / "a.idx.gz");
  ASSERT_GE(gz.size(), 2u);
  EXPECT_EQ(gz[0], 0x1f);
  EXPECT_EQ(gz[1], 0x8b);
  // Sizes above 2^16 use every byte of the big-endian size.
  Bytes big(70000);
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<std::uint8_t>(i * 7);
  write_gzip(dir / "big.gz", idx_bytes({70000}, big));
  IdxArray b = read_idx(dir / "big.gz");
  EXPECT_EQ(b.dims, (std::vector<std::uint32_t>{70000}));
  EXPECT_EQ(b.values, big);
}

TEST(Idx, RejectsCorruptAndTruncatedFiles) {
  TempDir dir;
  const std::string base = (dir / "").string();

  write_plain(dir / "magic", Bytes{1, 0, 8, 1, 0, 0, 0, 1, 5});
  EXPECT_EQ(idx_error(dir / "magic"),
            "[read_idx] " + base +
                "magic: bad magic number 0x1/0x0 (an IDX file starts with "
                "two zero bytes)");

  write_plain(dir / "float", idx_bytes({1}, Bytes{0, 0, 0, 0}, 0x0D));
  EXPECT_EQ(idx_error(dir / "float"),
            "[read_idx] " + base +
                "float: element type 0xd is not supported (expected 0x08, unsigned byte)");

  write_plain(dir / "short_header", Bytes{0, 0});
  EXPECT_EQ(idx_error(dir / "short_header"),
            "[read_idx] " + base +
                "short_header: truncated: the file has 2 bytes, an IDX header "
                "needs 4");

  write_plain(dir / "short_dims", Bytes{0, 0, 8, 3, 0, 0, 0, 2, 0, 0});
  EXPECT_EQ(idx_error(dir / "short_dims"),
            "[read_idx] " + base +
                "short_dims: truncated: the header declares 3 dimensions but "
                "ends after 6 of their 12 bytes");

  Bytes full = idx_bytes({2, 3, 3}, Bytes(18, 1));
  write_plain(dir / "short_data", Bytes(full.begin(), full.end() - 8));
  EXPECT_EQ(idx_error(dir / "short_data"),
            "[read_idx] " + base +
                "short_data: truncated: the header announces 18 data bytes "
                "but the file holds 10");

  Bytes longer = full;
  longer.push_back(0);
  write_plain(dir / "trailing", longer);
  EXPECT_EQ(idx_error(dir / "trailing"),
            "[read_idx] " + base +
                "trailing: unexpected bytes after the 18 data bytes the "
                "header announces");

  write_plain(dir / "zero_dim", idx_bytes({4, 0}, Bytes{}));
  EXPECT_EQ(idx_error(dir / "zero_dim"), "[read_idx] " + base + "zero_dim: dimension 1 has size 0");

  EXPECT_TRUE(contains(idx_error(dir / "missing.gz"), "missing.gz: cannot open (No such file"));
  EXPECT_TRUE(contains(idx_error(dir.path()), ": read error (Is a directory)"))
      << idx_error(dir.path());

  // A gzip stream cut in the middle: the data is reported as truncated.
  Bytes noisy(5000);
  for (std::size_t i = 0; i < noisy.size(); ++i)
    noisy[i] = static_cast<std::uint8_t>((i * 131) ^ (i >> 3));
  write_gzip(dir / "full.gz", idx_bytes({5000}, noisy));
  const Bytes gz = read_all(dir / "full.gz");
  write_plain(dir / "cut.gz",
              Bytes(gz.begin(), gz.begin() + static_cast<std::ptrdiff_t>(gz.size() / 2)));
  const std::string cut = idx_error(dir / "cut.gz");
  EXPECT_TRUE(contains(cut,
                       "cut.gz: truncated: the header announces 5000 data bytes but the "
                       "file holds "))
      << cut;

  // Garbage after a valid gzip header: zlib reports corrupt data.
  Bytes bad = Bytes(gz.begin(), gz.begin() + 10);
  for (int i = 0; i < 64; ++i) bad.push_back(0xFF);
  write_plain(dir / "bad.gz", bad);
  EXPECT_TRUE(contains(idx_error(dir / "bad.gz"), "bad.gz: corrupt gzip data"))
      << idx_error(dir / "bad.gz");
}

TEST(Mnist, LoadsItemsFromIdxPair) {
  TempDir dir;
  write_small_split(dir.path(), "train");
  MnistDataset ds(dir / "train-images-idx3-ubyte.gz", dir / "train-labels-idx1-ubyte");
  EXPECT_EQ(ds.len(), 3u);
  EXPECT_EQ(ds.rows(), 2u);
  EXPECT_EQ(ds.cols(), 3u);
  ImageU8 second = ds.at(1);
  EXPECT_EQ(second.channels, 1u);
  EXPECT_EQ(second.height, 2u);
  EXPECT_EQ(second.width, 3u);
  EXPECT_EQ(second.label, 0);
  EXPECT_EQ(second.pixels, (Bytes{10, 11, 12, 13, 14, 15}));
  EXPECT_EQ(second.at(0, 1, 2), 15);
  EXPECT_EQ(ds.at(2).label, 9);
  EXPECT_FALSE(ds.get(3).has_value());
}

TEST(Mnist, ValidatesThePair) {
  TempDir dir;
  write_plain(dir / "img", idx_bytes({3, 2, 3}, kPixels));
  write_plain(dir / "lab2", idx_bytes({2}, Bytes{1, 2}));
  write_plain(dir / "lab_bad", idx_bytes({3}, Bytes{1, 12, 2}));
  write_plain(dir / "lab_rank", idx_bytes({3, 1}, kLabels));
  auto message = [&](const char* images, const char* labels) -> std::string {
    try {
      MnistDataset(dir / images, dir / labels, "fashion_mnist");
    } catch (const IoError& e) {
      return e.what();
    }
    return "";
  };
  const std::string base = (dir / "").string();
  EXPECT_EQ(message("img", "lab2"),
            "[fashion_mnist] " + base + "img holds 3 images but " + base + "lab2 holds 2 labels");
  EXPECT_EQ(message("img", "lab_bad"),
            "[fashion_mnist] " + base + "lab_bad: label 12 at index 1 is not a class (0..9)");
  EXPECT_EQ(message("img", "lab_rank"),
            "[fashion_mnist] " + base + "lab_rank: expected 1 dimension (count), found 2");
  EXPECT_EQ(
      message("lab_rank", "img"),
      "[fashion_mnist] " + base + "lab_rank: expected 3 dimensions (count, rows, cols), found 2");
}

TEST(Mnist, FindsStandardFilesAndNamesMissingOnes) {
  TempDir dir;
  write_small_split(dir.path(), "train");
  auto train = FashionMnist::train(dir.path());
  EXPECT_EQ(train->len(), 3u);
  EXPECT_EQ(train->at(0).label, 7);
  // The test split is missing: both files are named, with the install hint.
  try {
    FashionMnist::test(dir.path());
    ADD_FAILURE() << "expected IoError";
  } catch (const IoError& e) {
    const std::string m = e.what();
    EXPECT_TRUE(contains(m, "[fashion_mnist] the test split is missing in " + dir.path().string() +
                                ": t10k-images-idx3-ubyte[.gz], t10k-labels-idx1-ubyte[.gz]. "))
        << m;
    EXPECT_TRUE(contains(m, "sudo apt-get install dataset-fashion-mnist")) << m;
    EXPECT_TRUE(contains(m, "EMBER_FASHION_MNIST_DIR")) << m;
  }
  // Only the labels missing.
  write_gzip(dir / "t10k-images-idx3-ubyte.gz", idx_bytes({3, 2, 3}, kPixels));
  try {
    Mnist::test(dir.path());
    ADD_FAILURE() << "expected IoError";
  } catch (const IoError& e) {
    const std::string m = e.what();
    EXPECT_TRUE(contains(m, "is missing in " + dir.path().string() +
                                ": t10k-labels-idx1-ubyte[.gz]. Debian has no MNIST package"))
        << m;
    EXPECT_FALSE(contains(m, "t10k-images-idx3-ubyte[.gz]")) << m;
    EXPECT_TRUE(contains(m, "EMBER_MNIST_DIR")) << m;
  }
  try {
    FashionMnist::train(dir / "nope");
    ADD_FAILURE() << "expected IoError";
  } catch (const IoError& e) {
    EXPECT_TRUE(contains(e.what(), "nope (no such directory)")) << e.what();
  }
}

TEST(Mnist, EnvironmentVariableOverridesTheDirectory) {
  TempDir dir;
  write_small_split(dir.path(), "t10k");
  {
    ScopedEnv env("EMBER_FASHION_MNIST_DIR", dir.path().string());
    EXPECT_EQ(FashionMnist::directory(), dir.path());
    EXPECT_EQ(FashionMnist::test()->len(), 3u);
  }
  {
    ScopedEnv env("EMBER_FASHION_MNIST_DIR", "");
    EXPECT_EQ(FashionMnist::directory(), fs::path("/usr/share/datasets/fashion-mnist"));
  }
  ScopedEnv env("EMBER_MNIST_DIR", dir.path().string());
  EXPECT_EQ(Mnist::test()->at(2).label, 9);
}

TEST(Mnist, ClassNames) {
  const auto& names = FashionMnist::class_names();
  EXPECT_EQ(names[0], "T-shirt/top");
  EXPECT_EQ(names[5], "Sandal");
  EXPECT_EQ(names[9], "Ankle boot");
  EXPECT_EQ(Mnist::class_names()[3], "3");
  EXPECT_STREQ(split_name(Split::Test), "test");
}

TEST(FashionMnistReal, TrainAndTestSplits) {
  const fs::path dir = FashionMnist::kDefaultDir;
  if (!fs::exists(dir / "train-images-idx3-ubyte.gz") &&
      !fs::exists(dir / "train-images-idx3-ubyte")) {
    GTEST_SKIP() << dir << " is not installed (Debian package dataset-fashion-mnist)";
  }
  auto train = FashionMnist::train(dir);
  ASSERT_EQ(train->len(), 60000u);
  EXPECT_EQ(train->rows(), 28u);
  EXPECT_EQ(train->cols(), 28u);
  // Reference values computed from the files with Python's gzip module.
  ImageU8 first = train->at(0);
  EXPECT_EQ(first.label, 9);  // Ankle boot
  EXPECT_EQ(first.channels, 1u);
  std::uint64_t sum = 0;
  for (auto p : first.pixels) sum += p;
  EXPECT_EQ(sum, 76247u);
  const Bytes row14 = {0,   0,   1,   4,   6,   7,   2,   0,   0,   0,   0,   0,   237, 226,
                       217, 223, 222, 219, 222, 221, 216, 223, 229, 215, 218, 255, 77,  0};
  EXPECT_EQ(Bytes(first.pixels.begin() + 14 * 28, first.pixels.begin() + 15 * 28), row14);
  const Bytes first_labels = {9, 0, 0, 3, 0, 2, 7, 2, 5, 5};
  EXPECT_EQ(Bytes(train->labels().begin(), train->labels().begin() + 10), first_labels);
  std::vector<int> counts(10, 0);
  for (auto l : train->labels()) ++counts[l];
  for (int c : counts) EXPECT_EQ(c, 6000);
  std::uint64_t total = 0;
  for (auto p : train->pixels()) total += p;
  EXPECT_EQ(total, 3431114169u);

  auto test = FashionMnist::test(dir);
  ASSERT_EQ(test->len(), 10000u);
  EXPECT_EQ(test->at(0).label, 9);
  EXPECT_EQ(test->at(9999).label, 5);
  sum = 0;
  for (auto p : test->at(9999).pixels) sum += p;
  EXPECT_EQ(sum, 24390u);
}
