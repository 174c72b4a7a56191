// Image files: decoding (PNG, JPEG, BMP through Debian's libstb) and the image-folder
// dataset (torchvision's ImageFolder): one subdirectory per class.
//
//   root/cat/001.png, root/cat/002.jpg, root/dog/a.png  ->  classes {"cat", "dog"}
//   data::ImageFolderDataset pets("root", {.channels = 3});
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "ember/data/dataset.hpp"
#include "ember/data/image.hpp"

namespace ember::data {

/// Decodes an image file (PNG, JPEG, BMP, GIF, TGA, PNM; anything stb_image reads) into
/// [channels, height, width] uint8 pixels with label 0. `channels` 1 (gray), 2 (gray,
/// alpha), 3 (RGB) or 4 (RGBA) converts, 0 keeps the file's own channel count. Throws
/// IoError "[read_image] <file>: <reason>" when the file is missing or cannot be decoded,
/// ValueError for channels > 4.
ImageU8 read_image(const std::filesystem::path& path, int channels = 0);

/// Writes `image` ([C, H, W], C in 1..4) as an 8-bit PNG. Throws IoError when the file
/// cannot be written, ShapeError for another channel count or an empty image.
void write_png(const std::filesystem::path& path, const ImageU8& image);

/// Options of an ImageFolderDataset.
struct ImageFolderOptions {
  /// Channels of every item: 1 (gray) or 3 (RGB, the default, as torchvision's ImageFolder);
  /// 0 keeps each file's own count (then images of one batch may differ).
  int channels = 3;
  /// File extensions that count as images (lower case, with the dot); others are skipped.
  std::vector<std::string> extensions = {".png", ".jpg", ".jpeg", ".bmp"};
};

/// Images in `root/<class>/<file>`: classes are the subdirectories of root in sorted order
/// (label = position), items the image files below each class directory (recursively), in
/// sorted path order. Files are decoded on each `get`, so a file that cannot be decoded
/// throws IoError from `get` (and from the data loader's fetch).
class ImageFolderDataset final : public Dataset<ImageU8> {
 public:
  /// Scans `root`. Throws IoError when root is not a directory or holds no class
  /// directory with images, ValueError for channels outside {0, 1, 3}.
  explicit ImageFolderDataset(const std::filesystem::path& root, ImageFolderOptions options = {});

  std::optional<ImageU8> get(std::size_t index) const override;
  std::size_t len() const override { return files_.size(); }

  /// Class names (subdirectory names), by label.
  const std::vector<std::string>& classes() const { return classes_; }
  /// The file of item `index` (unchecked).
  const std::filesystem::path& path(std::size_t index) const { return files_[index]; }
  /// The label of item `index` (unchecked).
  std::int64_t label(std::size_t index) const { return labels_[index]; }

 private:
  ImageFolderOptions options_;
  std::vector<std::string> classes_;
  std::vector<std::filesystem::path> files_;
  std::vector<std::int64_t> labels_;
};

}  // namespace ember::data
