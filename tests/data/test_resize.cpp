// data::resize (issue 19: `ember infer` resizes in 8 bits): hand-computed windows, and the
// same values as torch's adaptive_avg_pool2d / bilinear interpolate, which Ember's tensor
// ops implement (the float path `ember infer` used before).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "ember/data/image.hpp"
#include "ember/dispatch/dispatch.hpp"
#include "ember/tensor/module/interpolate.hpp"
#include "ember/tensor/module/pool.hpp"

using namespace ember;
using namespace ember::data;

namespace {

ImageU8 random_image(std::size_t c, std::size_t h, std::size_t w, unsigned seed) {
  std::mt19937 gen(seed);
  ImageU8 im(c, h, w, 7);
  for (auto& p : im.pixels) p = static_cast<std::uint8_t>(gen() % 256);
  return im;
}

/// The float path: the image as f32 [1, C, H, W], pooled or interpolated, rounded.
std::vector<long> through_tensors(const ImageU8& im, std::size_t h, std::size_t w) {
  std::vector<float> px(im.pixels.begin(), im.pixels.end());
  const Shape shape{1, static_cast<std::int64_t>(im.channels), static_cast<std::int64_t>(im.height),
                    static_cast<std::int64_t>(im.width)};
  auto x = DTensor<4>::from_data(TensorData(std::move(px), shape), Device::cpu());
  const std::array<std::int64_t, 2> out{static_cast<std::int64_t>(h), static_cast<std::int64_t>(w)};
  if (im.height >= h && im.width >= w) {
    x = module::adaptive_avg_pool2d(x, out);
  } else {
    x = module::interpolate(
        x, out, InterpolateOptions{InterpolateMode::Bilinear}.with_align_corners(false));
  }
  std::vector<long> r;
  for (float v : x.into_data().to_vec<float>()) r.push_back(std::lround(v));
  return r;
}

void expect_matches_tensors(const ImageU8& im, std::size_t h, std::size_t w) {
  const ImageU8 got = resize(im, h, w);
  ASSERT_EQ(got.channels, im.channels);
  ASSERT_EQ(got.height, h);
  ASSERT_EQ(got.width, w);
  EXPECT_EQ(got.label, im.label);
  const auto want = through_tensors(im, h, w);
  ASSERT_EQ(want.size(), got.pixels.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    // f32 against f64 sums: a value within 1e-4 of .5 may round either way.
    EXPECT_LE(std::abs(static_cast<long>(got.pixels[i]) - std::clamp(want[i], 0L, 255L)), 1) << i;
  }
}

}  // namespace

TEST(Resize, AveragesEachOutputWindow) {
  // 4x4 -> 2x2: 2x2 windows.
  ImageU8 im(1, 4, 4,
             std::vector<std::uint8_t>{0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30});
  EXPECT_EQ(resize(im, 2, 2).pixels, (std::vector<std::uint8_t>{5, 9, 21, 25}));
  // 1x5 -> 1x3: overlapping windows [0, 2), [1, 4), [3, 5) (adaptive pooling).
  ImageU8 row(1, 1, 5, std::vector<std::uint8_t>{10, 20, 30, 40, 50});
  EXPECT_EQ(resize(row, 1, 3).pixels, (std::vector<std::uint8_t>{15, 30, 45}));
}

TEST(Resize, EnlargesBilinearlyWithHalfPixelCentres) {
  // 1x2 -> 1x4: sources -0.25 (clamped to 0), 0.25, 0.75, 1.25 (neighbour clamped).
  ImageU8 row(1, 1, 2, std::vector<std::uint8_t>{0, 100});
  EXPECT_EQ(resize(row, 1, 4).pixels, (std::vector<std::uint8_t>{0, 25, 75, 100}));
}

TEST(Resize, MatchesTheTensorOps) {
  expect_matches_tensors(random_image(1, 97, 61, 1), 28, 28);
  expect_matches_tensors(random_image(3, 300, 29, 2), 28, 28);
  expect_matches_tensors(random_image(1, 10, 12, 3), 28, 28);
  expect_matches_tensors(random_image(3, 40, 9, 4), 28, 28);
  expect_matches_tensors(random_image(1, 28, 28, 5), 28, 28);
}

TEST(Resize, RejectsEmptySizes) {
  EXPECT_THROW(resize(random_image(1, 4, 4, 1), 0, 3), ShapeError);
  EXPECT_THROW(resize(ImageU8(1, 0, 4), 3, 3), ShapeError);
}
