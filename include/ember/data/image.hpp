// Image items and vision transforms (torchvision's Normalize, RandomCrop(padding=...),
// RandomHorizontalFlip).
//
// An `Image<T>` is one labelled image stored planar, [channels, height, width] row-major,
// with uint8 pixels (0..255, as decoded from files) or float pixels. Random transforms take
// an `Rng&`; inside the data loader use `DataLoaderBuilder::augment`, which seeds it per
// (epoch, item) so every epoch draws new crops and flips, reproducibly.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ember/data/rng.hpp"

namespace ember::data {

/// A labelled image, [channels, height, width] row-major.
template <class T>
struct Image {
  std::size_t channels = 0;
  std::size_t height = 0;
  std::size_t width = 0;
  std::vector<T> pixels;   // channels * height * width values
  std::int64_t label = 0;  // class index (or any integer target)

  Image() = default;
  /// A zero image of shape [channels, height, width].
  Image(std::size_t c, std::size_t h, std::size_t w, std::int64_t label_ = 0)
      : channels(c), height(h), width(w), pixels(c * h * w), label(label_) {}
  /// Takes `values` as [c, h, w]; throws ShapeError when values.size() != c * h * w.
  Image(std::size_t c, std::size_t h, std::size_t w, std::vector<T> values,
        std::int64_t label_ = 0);

  /// The pixel at channel c, row y, column x (unchecked).
  T& at(std::size_t c, std::size_t y, std::size_t x) {
    return pixels[(c * height + y) * width + x];
  }
  const T& at(std::size_t c, std::size_t y, std::size_t x) const {
    return pixels[(c * height + y) * width + x];
  }
  /// channels * height * width.
  std::size_t numel() const { return channels * height * width; }
};

using ImageU8 = Image<std::uint8_t>;
using ImageF32 = Image<float>;

extern template struct Image<std::uint8_t>;
extern template struct Image<float>;

/// Pixels divided by 255 (torchvision's ToTensor scaling): uint8 [0, 255] -> float [0, 1].
ImageF32 to_float(const ImageU8& image);

/// The [height, width] window whose top-left corner is (top, left) in the image padded by
/// `padding` pixels of value 0 on every side (so top and left count from the padded border).
/// Throws ShapeError when the window does not fit in the padded image.
ImageU8 crop(const ImageU8& image, std::size_t top, std::size_t left, std::size_t height,
             std::size_t width, std::size_t padding = 0);
ImageF32 crop(const ImageF32& image, std::size_t top, std::size_t left, std::size_t height,
              std::size_t width, std::size_t padding = 0);

/// The image mirrored left-right (column x becomes width - 1 - x).
ImageU8 flip_horizontal(const ImageU8& image);
ImageF32 flip_horizontal(const ImageF32& image);

/// The image resized to [height, width] in 8 bits, without a float copy of the input (an
/// image of any size costs only its own bytes and one row of sums). Shrinking both sides
/// (height <= image.height and width <= image.width) averages each output pixel's window,
/// rows [floor(i H / h), ceil((i + 1) H / h)) and likewise columns (torch's
/// adaptive_avg_pool2d); otherwise bilinear interpolation, half-pixel centres (torch's
/// interpolate(mode="bilinear", align_corners=False)). Values are rounded to the nearest
/// integer. Throws ShapeError for a zero output size or an empty image.
ImageU8 resize(const ImageU8& image, std::size_t height, std::size_t width);

/// (x - mean[c]) / std[c] per channel c (torchvision's Normalize). mean and std hold one
/// value per channel, or one value for all channels. uint8 images are first scaled to
/// [0, 1] (`to_float`), so the Fashion-MNIST statistics are mean 0.2860, std 0.3530.
struct Normalize {
  std::vector<float> mean;
  std::vector<float> std;

  /// Throws ValueError when mean and std differ in size, are empty or do not match the
  /// image's channel count (size 1 matches any), or a std value is not > 0.
  ImageF32 operator()(const ImageF32& image) const;
  ImageF32 operator()(const ImageU8& image) const;
};

/// A random [height, width] crop of the image padded by `padding` zero pixels on every side
/// (torchvision's RandomCrop(size, padding)): top and left are uniform in
/// [0, H + 2 padding - height] and [0, W + 2 padding - width], drawn in that order.
struct RandomCrop {
  std::size_t height = 0;
  std::size_t width = 0;
  std::size_t padding = 0;

  /// Throws ShapeError when the crop is larger than the padded image.
  ImageU8 operator()(const ImageU8& image, Rng& rng) const;
  ImageF32 operator()(const ImageF32& image, Rng& rng) const;
};

/// Mirrors the image left-right with probability p (torchvision's RandomHorizontalFlip):
/// one `rng.uniform()` draw, flipped when it is < p.
struct HorizontalFlip {
  double p = 0.5;

  ImageU8 operator()(const ImageU8& image, Rng& rng) const;
  ImageF32 operator()(const ImageF32& image, Rng& rng) const;
};

}  // namespace ember::data
