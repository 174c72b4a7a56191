// data::resize: area averaging (shrinking) or bilinear interpolation on 8-bit pixels.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "ember/core/error.hpp"
#include "ember/data/image.hpp"

namespace ember::data {

namespace {

std::uint8_t round_pixel(double v) {
  return static_cast<std::uint8_t>(std::clamp(std::lround(v), 0L, 255L));
}

/// Output pixel i of n over an input of size `in` averages [start, end) (adaptive pooling).
std::size_t bin_start(std::size_t i, std::size_t n, std::size_t in) {
  return (i * in) / n;
}
std::size_t bin_end(std::size_t i, std::size_t n, std::size_t in) {
  return ((i + 1) * in + n - 1) / n;
}

ImageU8 area_average(const ImageU8& im, std::size_t h, std::size_t w) {
  ImageU8 out(im.channels, h, w, im.label);
  std::vector<std::uint64_t> col_sums(im.width);  // one row of column sums: the only buffer
  for (std::size_t c = 0; c < im.channels; ++c) {
    for (std::size_t i = 0; i < h; ++i) {
      const std::size_t y0 = bin_start(i, h, im.height), y1 = bin_end(i, h, im.height);
      std::fill(col_sums.begin(), col_sums.end(), 0);
      for (std::size_t y = y0; y < y1; ++y) {
        const std::uint8_t* row = &im.at(c, y, 0);
        for (std::size_t x = 0; x < im.width; ++x) col_sums[x] += row[x];
      }
      for (std::size_t j = 0; j < w; ++j) {
        const std::size_t x0 = bin_start(j, w, im.width), x1 = bin_end(j, w, im.width);
        std::uint64_t sum = 0;
        for (std::size_t x = x0; x < x1; ++x) sum += col_sums[x];
        out.at(c, i, j) =
            round_pixel(static_cast<double>(sum) / static_cast<double>((y1 - y0) * (x1 - x0)));
      }
    }
  }
  return out;
}

/// Source position of output index i (half-pixel centres, clamped at 0 as torch does):
/// the two neighbours and the weight of the second.
struct Tap {
  std::size_t lo, hi;
  double t;
};
Tap bilinear_tap(std::size_t i, std::size_t out, std::size_t in) {
  const double scale = static_cast<double>(in) / static_cast<double>(out);
  const double src = std::max(0.0, (static_cast<double>(i) + 0.5) * scale - 0.5);
  const auto lo = std::min(static_cast<std::size_t>(src), in - 1);
  const std::size_t hi = std::min(lo + 1, in - 1);
  return {lo, hi, src - static_cast<double>(lo)};
}

ImageU8 bilinear(const ImageU8& im, std::size_t h, std::size_t w) {
  ImageU8 out(im.channels, h, w, im.label);
  std::vector<Tap> xs(w);
  for (std::size_t j = 0; j < w; ++j) xs[j] = bilinear_tap(j, w, im.width);
  for (std::size_t c = 0; c < im.channels; ++c) {
    for (std::size_t i = 0; i < h; ++i) {
      const Tap ty = bilinear_tap(i, h, im.height);
      for (std::size_t j = 0; j < w; ++j) {
        const Tap& tx = xs[j];
        const auto px = [&](std::size_t y, std::size_t x) {
          return static_cast<double>(im.at(c, y, x));
        };
        const double top = px(ty.lo, tx.lo) * (1 - tx.t) + px(ty.lo, tx.hi) * tx.t;
        const double bottom = px(ty.hi, tx.lo) * (1 - tx.t) + px(ty.hi, tx.hi) * tx.t;
        out.at(c, i, j) = round_pixel(top * (1 - ty.t) + bottom * ty.t);
      }
    }
  }
  return out;
}

}  // namespace

ImageU8 resize(const ImageU8& image, std::size_t height, std::size_t width) {
  if (height == 0 || width == 0 || image.numel() == 0) {
    ember::detail::fail<ShapeError>("resize", "cannot resize a ", image.channels, "x", image.height,
                                    "x", image.width, " image to ", height, "x", width);
  }
  if (height <= image.height && width <= image.width) return area_average(image, height, width);
  return bilinear(image, height, width);
}

}  // namespace ember::data
