// MNIST-format datasets: IDX files (Yann LeCun's format, used by MNIST and Fashion-MNIST),
// plain or gzip-compressed.
//
// IDX layout (all integers big-endian): two zero bytes, a type byte (0x08 = unsigned byte),
// the number of dimensions d, then d 32-bit sizes, then the values row-major. Images are
// [count, rows, cols] ("idx3"), labels [count] ("idx1").
//
//   auto train = data::FashionMnist::train();   // EMBER_FASHION_MNIST_DIR or the Debian dir
//   data::ImageU8 first = train->at(0);         // [1, 28, 28], label 0..9
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ember/data/dataset.hpp"
#include "ember/data/image.hpp"

namespace ember::data {

/// The contents of an IDX file of unsigned bytes.
struct IdxArray {
  std::vector<std::uint32_t> dims;   // sizes, outermost first
  std::vector<std::uint8_t> values;  // product(dims) values, row-major
};

/// Reads an IDX file of unsigned bytes (type 0x08), gzip-compressed or not (zlib detects
/// which). Throws IoError "[read_idx] <file>: <problem>" when the file cannot be opened, the
/// magic number is not an IDX one, the element type is not unsigned byte, a dimension is 0
/// or the sizes overflow, the data is shorter than the header announces (truncated), longer
/// (trailing bytes), or the gzip stream is corrupt.
IdxArray read_idx(const std::filesystem::path& path);

/// Which half of a dataset.
enum class Split { Train, Test };

/// "train" or "test".
const char* split_name(Split split);

/// An MNIST-format dataset loaded into memory: items are ImageU8 [1, rows, cols] with labels.
class MnistDataset : public Dataset<ImageU8> {
 public:
  /// Reads `images` (idx3: [count, rows, cols]) and `labels` (idx1: [count]) and checks
  /// them: IoError from read_idx, or IoError "[<name>] ..." naming the file when the ranks
  /// are wrong, the counts differ or a label is >= num_classes.
  MnistDataset(const std::filesystem::path& images, const std::filesystem::path& labels,
               std::string_view name = "mnist", std::size_t num_classes = 10);

  /// Reads the standard files of `split` from `dir`: train-images-idx3-ubyte and
  /// train-labels-idx1-ubyte (or t10k-... for Test), each optionally with ".gz" (the plain
  /// file is preferred when both exist). Throws IoError "[<name>] missing in <dir>: <files>"
  /// listing every missing file, followed by `install_hint`.
  static std::shared_ptr<MnistDataset> from_directory(const std::filesystem::path& dir, Split split,
                                                      std::string_view name,
                                                      std::string_view install_hint);

  std::optional<ImageU8> get(std::size_t index) const override;
  std::size_t len() const override { return labels_.size(); }

  /// Image height and width in pixels (28 for MNIST and Fashion-MNIST).
  std::size_t rows() const { return rows_; }
  std::size_t cols() const { return cols_; }
  /// All labels, in item order.
  const std::vector<std::uint8_t>& labels() const { return labels_; }
  /// All pixels, [len, rows, cols] row-major.
  const std::vector<std::uint8_t>& pixels() const { return pixels_; }

 private:
  std::size_t rows_ = 0, cols_ = 0;
  std::vector<std::uint8_t> pixels_;
  std::vector<std::uint8_t> labels_;
};

/// The standard MNIST file names of a split, without ".gz": {images, labels}.
std::array<std::string, 2> mnist_file_names(Split split);

/// Zalando's Fashion-MNIST (60000 train, 10000 test images of 28x28, 10 classes).
struct FashionMnist {
  /// Where Debian's dataset-fashion-mnist package installs the files.
  static constexpr const char* kDefaultDir = "/usr/share/datasets/fashion-mnist";
  /// Environment variable that overrides the directory.
  static constexpr const char* kEnvVar = "EMBER_FASHION_MNIST_DIR";

  /// $EMBER_FASHION_MNIST_DIR when set and not empty, else kDefaultDir.
  static std::filesystem::path directory();
  /// The split read from `dir`; throws IoError naming the missing files and how to install
  /// them (see MnistDataset::from_directory).
  static std::shared_ptr<MnistDataset> load(Split split,
                                            const std::filesystem::path& dir = directory());
  static std::shared_ptr<MnistDataset> train(const std::filesystem::path& dir = directory()) {
    return load(Split::Train, dir);
  }
  static std::shared_ptr<MnistDataset> test(const std::filesystem::path& dir = directory()) {
    return load(Split::Test, dir);
  }
  /// The class names, by label: "T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
  /// "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot".
  static const std::array<std::string_view, 10>& class_names();
};

/// The original MNIST handwritten digits (same format; Debian has no package for it).
struct Mnist {
  static constexpr const char* kDefaultDir = "/usr/share/datasets/mnist";
  static constexpr const char* kEnvVar = "EMBER_MNIST_DIR";

  /// $EMBER_MNIST_DIR when set and not empty, else kDefaultDir.
  static std::filesystem::path directory();
  /// The split read from `dir`; throws IoError naming the missing files.
  static std::shared_ptr<MnistDataset> load(Split split,
                                            const std::filesystem::path& dir = directory());
  static std::shared_ptr<MnistDataset> train(const std::filesystem::path& dir = directory()) {
    return load(Split::Train, dir);
  }
  static std::shared_ptr<MnistDataset> test(const std::filesystem::path& dir = directory()) {
    return load(Split::Test, dir);
  }
  /// "0" ... "9".
  static const std::array<std::string_view, 10>& class_names();
};

}  // namespace ember::data
