// Autodiff<Cpu>: gradients of grid_sample_2d w.r.t. the input and the grid
// (finite-difference gradchecks for every mode / padding / align_corners, grad of grad,
// hand-computed values).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "ember/autodiff/cpu.hpp"
#include "ember/tensor/module/interpolate.hpp"
#include "ember/tensor/tensor.hpp"
#include "gradcheck.hpp"

namespace ember::test {
namespace {

using T4 = Tensor<AD, 4>;
using V = std::vector<T4>;

/// A grid [N, OH, OW, 2] of points whose unnormalised coordinates stay at least 0.06
/// pixel away from integer and half-integer positions (the kinks of bilinear weights,
/// clipping and reflection), drawn from [-range, range).
TensorData smooth_grid(std::int64_t n, std::int64_t oh, std::int64_t ow, std::int64_t h,
                       std::int64_t w, bool align, double range, std::uint64_t seed) {
  std::vector<double> out;
  const std::int64_t count = n * oh * ow * 2;
  std::uint64_t s = seed;
  while (static_cast<std::int64_t>(out.size()) < count) {
    const auto cand = random_data(Shape({1}), s++, -range, range).to_vec<double>()[0];
    const std::int64_t size = (out.size() % 2 == 0) ? w : h;
    const double u = align ? (cand + 1) / 2 * static_cast<double>(size - 1)
                           : ((cand + 1) * static_cast<double>(size) - 1) / 2;
    const double f = 2 * u - std::floor(2 * u);  // position within a half pixel, in [0, 1)
    if (f > 0.12 && f < 0.88) out.push_back(cand);
  }
  return TensorData(std::move(out), Shape({n, oh, ow, 2}));
}

std::string opt_name(const GridSampleOptions& o) {
  static const char* pads[] = {"zeros", "border", "reflection"};
  return std::string(o.mode == InterpolateMode::Nearest ? "nearest" : "bilinear") + " " +
         pads[static_cast<int>(o.padding_mode)] + " align " + std::to_string(o.align_corners);
}

TEST(GradPoolGrid, GridSampleGradcheckAllOptions) {
  const std::int64_t N = 2, C = 2, H = 4, W = 5, OH = 3, OW = 4;
  std::uint64_t seed = 1000;
  for (auto mode : {InterpolateMode::Bilinear, InterpolateMode::Nearest}) {
    for (auto pad : {GridSamplePaddingMode::Zeros, GridSamplePaddingMode::Border,
                     GridSamplePaddingMode::Reflection}) {
      for (bool align : {false, true}) {
        GridSampleOptions opt{mode};
        opt = opt.with_padding_mode(pad).with_align_corners(align);
        const double range = pad == GridSamplePaddingMode::Reflection ? 2.6 : 1.3;
        const auto grid = smooth_grid(N, OH, OW, H, W, align, range, seed++);
        gradcheck<4>("grid_sample_2d " + opt_name(opt),
                     [opt](const V& v) { return module::grid_sample_2d(v[0], v[1], opt); },
                     {random_data(Shape({N, C, H, W}), seed++), grid});
      }
    }
  }
}

TEST(GradPoolGrid, GridSampleGradOfGrad) {
  const std::int64_t N = 1, C = 2, H = 3, W = 4, OH = 2, OW = 3;
  std::uint64_t seed = 2000;
  for (auto pad : {GridSamplePaddingMode::Zeros, GridSamplePaddingMode::Reflection}) {
    for (bool align : {false, true}) {
      GridSampleOptions opt{InterpolateMode::Bilinear};
      opt = opt.with_padding_mode(pad).with_align_corners(align);
      const auto grid = smooth_grid(N, OH, OW, H, W, align, 1.6, seed++);
      const auto x = random_data(Shape({N, C, H, W}), seed++);
      // d/dx of sum(out^2 * w2): depends on x (through the output gradient) and on the
      // grid (through the weights).
      gradcheck<4>("d/dx " + opt_name(opt),
                   [opt](const V& v) {
                     auto xx = v[0].is_require_grad() ? v[0] : v[0].require_grad();
                     auto y = module::grid_sample_2d(xx, v[1], opt);
                     auto w2 = T4::from_data(random_data(y.shape(), 31));
                     return *xx.grad_graph((y * y * w2).sum().backward(true));
                   },
                   {x, grid});
      // d/dgrid of sum(out * w2): depends on x and (bilinear cross terms) on the grid.
      gradcheck<4>("d/dgrid " + opt_name(opt),
                   [opt](const V& v) {
                     auto gg = v[1].is_require_grad() ? v[1] : v[1].require_grad();
                     auto y = module::grid_sample_2d(v[0], gg, opt);
                     auto w2 = T4::from_data(random_data(y.shape(), 32));
                     return *gg.grad_graph((y * w2).sum().backward(true));
                   },
                   {x, grid});
    }
  }
}

TEST(GradPoolGrid, GridSampleHandComputed) {
  // x = [[1, 2], [3, 4]], align_corners: grid (0.5, -0.5) -> ix = 0.75, iy = 0.25.
  // out = 0.25*0.75*... bilinear: (1-0.75)(1-0.25)*1 + 0.75*0.75*2 + 0.25*0.25*3 + 0.75*0.25*4
  auto x = T4::from_data(TensorData(std::vector<double>{1, 2, 3, 4}, Shape({1, 1, 2, 2})))
               .require_grad();
  auto grid =
      T4::from_data(TensorData(std::vector<double>{0.5, -0.5}, Shape({1, 1, 1, 2}))).require_grad();
  GridSampleOptions opt{InterpolateMode::Bilinear};
  opt = opt.with_align_corners(true);
  auto out = module::grid_sample_2d(x, grid, opt);
  EXPECT_NEAR(out.into_scalar(), 0.1875 + 1.125 + 0.1875 + 0.75, 1e-12);
  auto grads = out.sum().backward();
  const auto dx = x.grad(grads)->to_vec<double>();
  const std::vector<double> want_dx = {0.25 * 0.75, 0.75 * 0.75, 0.25 * 0.25, 0.75 * 0.25};
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(dx[i], want_dx[i], 1e-12);
  // d out / d ix = (1-wy)(x01 - x00) + wy (x11 - x10) = 1; d ix / d gx = (W-1)/2 = 0.5.
  // d out / d iy = (1-wx)(x10 - x00) + wx (x11 - x01) = 2; d iy / d gy = 0.5.
  const auto dg = grid.grad(grads)->to_vec<double>();
  EXPECT_NEAR(dg[0], 0.5, 1e-12);
  EXPECT_NEAR(dg[1], 1.0, 1e-12);
  // Nearest: the grid gets a zero gradient, x a one-hot one.
  GridSampleOptions nopt{InterpolateMode::Nearest};
  auto g2 = module::grid_sample_2d(x, grid, nopt.with_align_corners(true)).sum().backward();
  EXPECT_EQ(x.grad(g2)->to_vec<double>(), (std::vector<double>{0, 1, 0, 0}));
  EXPECT_EQ(grid.grad(g2)->to_vec<double>(), (std::vector<double>{0, 0}));
}

}  // namespace
}  // namespace ember::test
