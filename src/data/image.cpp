#include "ember/data/image.hpp"

#include <algorithm>
#include <utility>

#include "ember/core/error.hpp"

namespace ember::data {

template <class T>
Image<T>::Image(std::size_t c, std::size_t h, std::size_t w, std::vector<T> values,
                std::int64_t label_)
    : channels(c), height(h), width(w), pixels(std::move(values)), label(label_) {
  if (pixels.size() != c * h * w) {
    ember::detail::fail<ShapeError>("image", pixels.size(), " pixel values do not fill shape [", c,
                                    ", ", h, ", ", w, "]");
  }
}

template struct Image<std::uint8_t>;
template struct Image<float>;

ImageF32 to_float(const ImageU8& image) {
  ImageF32 out(image.channels, image.height, image.width, image.label);
  for (std::size_t i = 0; i < image.pixels.size(); ++i) {
    out.pixels[i] = static_cast<float>(image.pixels[i]) / 255.0f;
  }
  return out;
}

namespace {

template <class T>
Image<T> crop_impl(const Image<T>& image, std::size_t top, std::size_t left, std::size_t height,
                   std::size_t width, std::size_t padding) {
  const std::size_t padded_h = image.height + 2 * padding;
  const std::size_t padded_w = image.width + 2 * padding;
  if (top + height > padded_h || left + width > padded_w) {
    ember::detail::fail<ShapeError>("crop", "window [", height, ", ", width, "] at (", top, ", ",
                                    left, ") does not fit in image [", image.channels, ", ",
                                    image.height, ", ", image.width, "] padded by ", padding);
  }
  Image<T> out(image.channels, height, width, image.label);
  // Output columns [x0, x1) come from the image; the others stay 0 (padding).
  const std::size_t x0 = left < padding ? padding - left : 0;
  const std::size_t x1 =
      std::min(width, padding + image.width > left ? padding + image.width - left : 0);
  if (x0 >= x1) return out;
  for (std::size_t c = 0; c < image.channels; ++c) {
    for (std::size_t y = 0; y < height; ++y) {
      const std::size_t py = top + y;  // row in the padded image
      if (py < padding || py >= padding + image.height) continue;
      const T* src = &image.at(c, py - padding, left + x0 - padding);
      std::copy(src, src + (x1 - x0), &out.at(c, y, x0));
    }
  }
  return out;
}

template <class T>
Image<T> flip_impl(const Image<T>& image) {
  Image<T> out(image.channels, image.height, image.width, image.label);
  for (std::size_t c = 0; c < image.channels; ++c) {
    for (std::size_t y = 0; y < image.height; ++y) {
      for (std::size_t x = 0; x < image.width; ++x) {
        out.at(c, y, image.width - 1 - x) = image.at(c, y, x);
      }
    }
  }
  return out;
}

template <class T>
Image<T> random_crop_impl(const RandomCrop& t, const Image<T>& image, Rng& rng) {
  const std::size_t padded_h = image.height + 2 * t.padding;
  const std::size_t padded_w = image.width + 2 * t.padding;
  if (t.height > padded_h || t.width > padded_w) {
    ember::detail::fail<ShapeError>("random_crop", "crop [", t.height, ", ", t.width,
                                    "] is larger than image [", image.height, ", ", image.width,
                                    "] padded by ", t.padding);
  }
  const auto top = static_cast<std::size_t>(rng.below(padded_h - t.height + 1));
  const auto left = static_cast<std::size_t>(rng.below(padded_w - t.width + 1));
  return crop_impl(image, top, left, t.height, t.width, t.padding);
}

}  // namespace

ImageU8 crop(const ImageU8& image, std::size_t top, std::size_t left, std::size_t height,
             std::size_t width, std::size_t padding) {
  return crop_impl(image, top, left, height, width, padding);
}
ImageF32 crop(const ImageF32& image, std::size_t top, std::size_t left, std::size_t height,
              std::size_t width, std::size_t padding) {
  return crop_impl(image, top, left, height, width, padding);
}

ImageU8 flip_horizontal(const ImageU8& image) {
  return flip_impl(image);
}
ImageF32 flip_horizontal(const ImageF32& image) {
  return flip_impl(image);
}

ImageF32 Normalize::operator()(const ImageF32& image) const {
  if (mean.empty() || mean.size() != std.size()) {
    ember::detail::fail<ValueError>("normalize", "mean and std need the same non-zero size, got ",
                                    mean.size(), " and ", std.size());
  }
  if (mean.size() != 1 && mean.size() != image.channels) {
    ember::detail::fail<ValueError>("normalize", mean.size(), " mean/std values for an image of ",
                                    image.channels, " channels");
  }
  for (float s : std) {
    if (!(s > 0.0f)) ember::detail::fail<ValueError>("normalize", "std ", s, " is not > 0");
  }
  ImageF32 out = image;
  const std::size_t plane = image.height * image.width;
  for (std::size_t c = 0; c < image.channels; ++c) {
    const float m = mean.size() == 1 ? mean[0] : mean[c];
    const float s = std.size() == 1 ? std[0] : std[c];
    float* p = out.pixels.data() + c * plane;
    for (std::size_t i = 0; i < plane; ++i) p[i] = (p[i] - m) / s;
  }
  return out;
}

ImageF32 Normalize::operator()(const ImageU8& image) const {
  return (*this)(to_float(image));
}

ImageU8 RandomCrop::operator()(const ImageU8& image, Rng& rng) const {
  return random_crop_impl(*this, image, rng);
}
ImageF32 RandomCrop::operator()(const ImageF32& image, Rng& rng) const {
  return random_crop_impl(*this, image, rng);
}

ImageU8 HorizontalFlip::operator()(const ImageU8& image, Rng& rng) const {
  return rng.uniform() < p ? flip_impl(image) : image;
}
ImageF32 HorizontalFlip::operator()(const ImageF32& image, Rng& rng) const {
  return rng.uniform() < p ? flip_impl(image) : image;
}

}  // namespace ember::data
