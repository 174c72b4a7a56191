#include "ember/data/batcher.hpp"

#include <algorithm>

namespace ember::data::detail {
namespace {

template <class T>
TensorData stack_impl(const std::vector<Image<T>>& images) {
  if (images.empty()) ember::detail::fail<ValueError>("image_batcher", "the batch is empty");
  const Image<T>& first = images.front();
  const std::size_t per = first.numel();
  for (std::size_t i = 1; i < images.size(); ++i) {
    const Image<T>& im = images[i];
    if (im.channels != first.channels || im.height != first.height || im.width != first.width) {
      ember::detail::fail<ShapeError>("image_batcher", "image ", i, " has shape [", im.channels,
                                      ", ", im.height, ", ", im.width, "], expected [",
                                      first.channels, ", ", first.height, ", ", first.width,
                                      "] like image 0");
    }
  }
  for (std::size_t i = 0; i < images.size(); ++i) {
    if (images[i].pixels.size() != per) {
      ember::detail::fail<ShapeError>("image_batcher", "image ", i, " holds ",
                                      images[i].pixels.size(), " pixels for shape [",
                                      first.channels, ", ", first.height, ", ", first.width, "]");
    }
  }
  std::vector<float> values(images.size() * per);
  float* out = values.data();
  for (const Image<T>& im : images) {
    if constexpr (std::is_same_v<T, float>) {
      std::copy(im.pixels.begin(), im.pixels.end(), out);
    } else {
      for (std::size_t j = 0; j < per; ++j) out[j] = static_cast<float>(im.pixels[j]) / 255.0f;
    }
    out += per;
  }
  return TensorData(
      std::move(values),
      Shape{static_cast<std::int64_t>(images.size()), static_cast<std::int64_t>(first.channels),
            static_cast<std::int64_t>(first.height), static_cast<std::int64_t>(first.width)});
}

template <class T>
TensorData labels_impl(const std::vector<Image<T>>& images) {
  std::vector<std::int64_t> labels;
  labels.reserve(images.size());
  for (const Image<T>& im : images) labels.push_back(im.label);
  return TensorData(std::move(labels), Shape{static_cast<std::int64_t>(images.size())});
}

}  // namespace

TensorData stack_images(const std::vector<ImageU8>& images) {
  return stack_impl(images);
}
TensorData stack_images(const std::vector<ImageF32>& images) {
  return stack_impl(images);
}
TensorData stack_labels(const std::vector<ImageU8>& images) {
  return labels_impl(images);
}
TensorData stack_labels(const std::vector<ImageF32>& images) {
  return labels_impl(images);
}

}  // namespace ember::data::detail
