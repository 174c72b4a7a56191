// Batchers that turn items into tensors on a device.
//
//   data::ImageBatcher<> batcher(Device::cpu());          // Dispatch backend, uint8 images
//   data::ImageBatch<> b = batcher(items);                // images [N, C, H, W] f32, targets [N]
//   i64
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "ember/core/data.hpp"
#include "ember/data/image.hpp"
#include "ember/dispatch/dispatch.hpp"
#include "ember/tensor/tensor.hpp"

namespace ember::data {

/// A batch of labelled images: images [N, C, H, W] f32, targets [N] i64 (the labels).
template <class B = Dispatch>
struct ImageBatch {
  Tensor<B, 4> images;
  Tensor<B, 1, Int> targets;
};

namespace detail {
/// Stacks images of one shape into host data [N, C, H, W] f32 (uint8 pixels divided by 255,
/// float pixels copied). Throws ValueError for an empty batch and ShapeError (naming the first
/// image whose shape differs from image 0) for mixed shapes.
TensorData stack_images(const std::vector<ImageU8>& images);
TensorData stack_images(const std::vector<ImageF32>& images);
/// The labels of the images as host data [N] i64.
TensorData stack_labels(const std::vector<ImageU8>& images);
TensorData stack_labels(const std::vector<ImageF32>& images);
}  // namespace detail

/// Batches labelled images for image classification: images [N, C, H, W] f32 (for
/// Fashion-MNIST [N, 1, 28, 28]; uint8 pixels scaled to [0, 1], float pixels as they are)
/// and targets [N] Int (i64) with the labels, both created on `device`. Thread-safe.
template <class B = Dispatch, class Pixel = std::uint8_t>
class ImageBatcher {
 public:
  using Item = Image<Pixel>;
  using Batch = ImageBatch<B>;

  /// Batches land on `device` (default: the backend's default device).
  explicit ImageBatcher(typename B::Device device = typename B::Device{})
      : device_(std::move(device)) {}

  /// Throws ValueError for an empty vector, ShapeError for images of different shapes.
  Batch operator()(std::vector<Item> items) const {
    TensorData images = detail::stack_images(items);
    TensorData labels = detail::stack_labels(items);
    return Batch{Tensor<B, 4>::from_data(images, device_),
                 Tensor<B, 1, Int>::from_data(labels, device_)};
  }

  /// The device batches are created on.
  const typename B::Device& device() const { return device_; }

 private:
  typename B::Device device_;
};

}  // namespace ember::data
