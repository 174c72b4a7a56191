// Autodiff<Cpu>: finite-difference checks of the conv1d/2d/3d and conv_transpose1d/2d/3d
// backward rules over a grid of options (stride, padding, dilation, groups, bias,
// padding_out; odd sizes where the stride does not divide), and grad-of-grad checks.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "ember/autodiff/cpu.hpp"
#include "ember/tensor/module/conv.hpp"
#include "ember/tensor/tensor.hpp"
#include "gradcheck.hpp"

namespace ember::test {
namespace {

template <std::size_t N>
using TA = Tensor<AD, N + 2>;

template <std::size_t N>
std::array<std::int64_t, N> fill(std::int64_t v) {
  std::array<std::int64_t, N> a{};
  a.fill(v);
  return a;
}

template <std::size_t N>
TA<N> conv_nd(const TA<N>& x, const TA<N>& w, const std::optional<Tensor<AD, 1>>& b,
              const ConvOptions<N>& o) {
  if constexpr (N == 1)
    return module::conv1d(x, w, b, o);
  else if constexpr (N == 2)
    return module::conv2d(x, w, b, o);
  else
    return module::conv3d(x, w, b, o);
}

template <std::size_t N>
TA<N> conv_transpose_nd(const TA<N>& x, const TA<N>& w, const std::optional<Tensor<AD, 1>>& b,
                        const ConvTransposeOptions<N>& o) {
  if constexpr (N == 1)
    return module::conv_transpose1d(x, w, b, o);
  else if constexpr (N == 2)
    return module::conv_transpose2d(x, w, b, o);
  else
    return module::conv_transpose3d(x, w, b, o);
}

/// Bias stored as [1, C, 1, ...] so that every gradcheck input has the same rank.
template <std::size_t N>
Shape bias_shape(std::int64_t c) {
  Shape s{1, c};
  for (std::size_t i = 0; i < N; ++i) s.dims.push_back(1);
  return s;
}

template <std::size_t N>
std::string describe(const char* op, const std::array<std::int64_t, N>& s,
                     const std::array<std::int64_t, N>& p, const std::array<std::int64_t, N>& d,
                     std::int64_t g, bool bias, const std::array<std::int64_t, N>* po = nullptr) {
  auto arr = [](const std::array<std::int64_t, N>& a) {
    std::string r = "(";
    for (std::size_t i = 0; i < N; ++i) {
      if (i) r += ",";
      r += std::to_string(a[i]);
    }
    return r + ")";
  };
  std::string r = std::string(op) + " stride" + arr(s) + " padding" + arr(p) + " dilation" +
                  arr(d) + " groups " + std::to_string(g) + (bias ? " bias" : " no bias");
  if (po) r += " padding_out" + arr(*po);
  return r;
}

/// gradcheck of convNd(x [xs], w [Cout, Cin/groups, *k], bias) with options `o`.
template <std::size_t N>
void check_conv(const Shape& xs, std::int64_t cout, const std::array<std::int64_t, N>& k,
                const ConvOptions<N>& o, bool bias, std::uint64_t seed,
                GradCheckOptions gopt = {}) {
  Shape ws{cout, xs[1] / o.groups};
  for (auto v : k) ws.dims.push_back(v);
  std::vector<TensorData> in{random_data(xs, seed), random_data(ws, seed + 1)};
  if (bias) in.push_back(random_data(bias_shape<N>(cout), seed + 2));
  gradcheck<N + 2>(
      describe<N>(N == 1   ? "conv1d"
                  : N == 2 ? "conv2d"
                           : "conv3d",
                  o.stride, o.padding, o.dilation, o.groups, bias),
      [o, cout](const std::vector<TA<N>>& v) {
        std::optional<Tensor<AD, 1>> b;
        if (v.size() > 2) b = v[2].reshape({cout});
        return conv_nd<N>(v[0], v[1], b, o);
      },
      in, gopt);
}

/// gradcheck of conv_transposeNd(x [xs], w [Cin, Cout/groups, *k], bias).
template <std::size_t N>
void check_conv_transpose(const Shape& xs, std::int64_t cout, const std::array<std::int64_t, N>& k,
                          const ConvTransposeOptions<N>& o, bool bias, std::uint64_t seed) {
  Shape ws{xs[1], cout / o.groups};
  for (auto v : k) ws.dims.push_back(v);
  std::vector<TensorData> in{random_data(xs, seed), random_data(ws, seed + 1)};
  if (bias) in.push_back(random_data(bias_shape<N>(cout), seed + 2));
  gradcheck<N + 2>(
      describe<N>(N == 1   ? "conv_transpose1d"
                  : N == 2 ? "conv_transpose2d"
                           : "conv_transpose3d",
                  o.stride, o.padding, o.dilation, o.groups, bias, &o.padding_out),
      [o, cout](const std::vector<TA<N>>& v) {
        std::optional<Tensor<AD, 1>> b;
        if (v.size() > 2) b = v[2].reshape({cout});
        return conv_transpose_nd<N>(v[0], v[1], b, o);
      },
      in);
}

/// Every combination of stride 1/2, padding 0/1, dilation 1/2, groups 1/2, bias or not.
template <std::size_t N>
void conv_grid(const Shape& xs, std::int64_t cout, const std::array<std::int64_t, N>& k) {
  std::uint64_t seed = 100;
  for (std::int64_t s : {1, 2})
    for (std::int64_t p : {0, 1})
      for (std::int64_t d : {1, 2})
        for (std::int64_t g : {1, 2})
          for (bool bias : {true, false}) {
            ConvOptions<N> o{fill<N>(s), fill<N>(p), fill<N>(d), g};
            check_conv<N>(xs, cout, k, o, bias, seed += 3);
          }
}

/// The same grid for transposed convolutions, with padding_out 0 and 1 (where valid:
/// smaller than stride or dilation).
template <std::size_t N>
void conv_transpose_grid(const Shape& xs, std::int64_t cout, const std::array<std::int64_t, N>& k) {
  std::uint64_t seed = 500;
  for (std::int64_t s : {1, 2})
    for (std::int64_t p : {0, 1})
      for (std::int64_t d : {1, 2})
        for (std::int64_t g : {1, 2})
          for (std::int64_t po : {0, 1}) {
            if (po >= s && po >= d) continue;
            const bool bias = ((s + p + d + g + po) % 2) == 0 || po == 1;
            ConvTransposeOptions<N> o{fill<N>(s), fill<N>(p), fill<N>(po), fill<N>(d), g};
            check_conv_transpose<N>(xs, cout, k, o, bias, seed += 3);
          }
}

// ---- conv ------------------------------------------------------------------------------------

TEST(GradConv, Conv1dGrid) {
  // L 8: 8 + 2p - d(k-1) - 1 is odd for every p, d: stride 2 leaves the last sample unreached.
  conv_grid<1>(Shape{2, 4, 8}, 4, {3});
}

TEST(GradConv, Conv2dGrid) {
  // H 6 and W 5 with a 3x2 kernel: strides 2 leave rows/cols unreached for some options.
  conv_grid<2>(Shape{2, 4, 6, 5}, 4, {3, 2});
}

TEST(GradConv, Conv2dMixedOptionsPerDim) {
  check_conv<2>(Shape{2, 2, 7, 6}, 4, {2, 3}, ConvOptions<2>{{2, 1}, {1, 0}, {1, 2}, 1}, true, 7);
  check_conv<2>(Shape{1, 6, 5, 7}, 3, {3, 1}, ConvOptions<2>{{3, 2}, {0, 2}, {2, 1}, 3}, true, 8);
  // groups == channels (depthwise) and a 1x1 kernel.
  check_conv<2>(Shape{2, 3, 5, 4}, 6, {2, 2}, ConvOptions<2>{{1, 2}, {1, 1}, {1, 1}, 3}, false, 9);
  check_conv<2>(Shape{2, 4, 3, 5}, 2, {1, 1}, ConvOptions<2>{{2, 2}, {0, 0}, {1, 1}, 2}, true, 10);
}

TEST(GradConv, Conv3d) {
  const Shape xs{2, 2, 4, 3, 5};
  check_conv<3>(xs, 2, {2, 2, 3}, ConvOptions<3>{}, true, 20);
  check_conv<3>(xs, 4, {2, 2, 3}, ConvOptions<3>{{2, 1, 2}, {1, 0, 1}, {1, 1, 1}, 2}, true, 21);
  check_conv<3>(xs, 2, {2, 2, 2}, ConvOptions<3>{{1, 2, 1}, {0, 1, 1}, {2, 1, 2}, 1}, false, 22);
  check_conv<3>(xs, 4, {1, 2, 2}, ConvOptions<3>{{2, 2, 2}, {1, 1, 1}, {1, 2, 2}, 2}, true, 23);
}

TEST(GradConv, ConvOnlyOneInputRequiresGrad) {
  GradCheckOptions only_x;
  only_x.constant_inputs = {1, 2};
  check_conv<2>(Shape{2, 4, 5, 5}, 4, {3, 3}, ConvOptions<2>{{2, 2}, {1, 1}, {1, 1}, 2}, true, 30,
                only_x);
  GradCheckOptions only_w;
  only_w.constant_inputs = {0};
  check_conv<2>(Shape{2, 4, 5, 5}, 4, {3, 3}, ConvOptions<2>{{2, 2}, {1, 1}, {1, 1}, 2}, true, 31,
                only_w);
}

// ---- conv_transpose ---------------------------------------------------------------------------

TEST(GradConv, ConvTranspose1dGrid) {
  conv_transpose_grid<1>(Shape{2, 4, 5}, 4, {3});
}

TEST(GradConv, ConvTranspose2dGrid) {
  conv_transpose_grid<2>(Shape{2, 4, 3, 4}, 4, {3, 2});
}

TEST(GradConv, ConvTranspose2dMixedOptionsPerDim) {
  check_conv_transpose<2>(Shape{2, 2, 3, 4}, 6, {2, 3},
                          ConvTransposeOptions<2>{{2, 3}, {1, 0}, {1, 2}, {1, 1}, 2}, true, 40);
  // padding_out >= stride (allowed because < dilation): the input gradient is cropped.
  check_conv_transpose<2>(Shape{1, 3, 4, 3}, 3, {2, 2},
                          ConvTransposeOptions<2>{{1, 1}, {0, 1}, {1, 2}, {2, 3}, 3}, true, 41);
}

TEST(GradConv, ConvTranspose3d) {
  const Shape xs{2, 2, 3, 2, 3};
  check_conv_transpose<3>(xs, 2, {2, 2, 3}, ConvTransposeOptions<3>{}, true, 50);
  check_conv_transpose<3>(xs, 4, {2, 2, 2},
                          ConvTransposeOptions<3>{{2, 1, 2}, {1, 0, 1}, {1, 0, 1}, {1, 2, 1}, 2},
                          true, 51);
  check_conv_transpose<3>(xs, 2, {2, 1, 2},
                          ConvTransposeOptions<3>{{2, 2, 1}, {0, 1, 0}, {0, 1, 1}, {2, 1, 2}, 1},
                          false, 52);
}

// ---- grad of grad -----------------------------------------------------------------------------

// d/dx of sum(dweight * r): dweight (a convolution of x and dy) is recorded under
// create_graph, so it can be differentiated with respect to x again.
TEST(GradConv, Conv2dWeightGradOfGrad) {
  const ConvOptions<2> o{{2, 1}, {1, 1}, {1, 2}, 2};
  const Shape xs{2, 4, 6, 5}, ws{4, 2, 3, 2};
  const TensorData r = random_data(Shape{2, 4, 3, 5}, 61);  // output-shaped upstream weights
  GradCheckOptions gopt;
  gopt.constant_inputs = {1};
  gradcheck<4>(
      "d/dx of conv2d's dweight",
      [o, r](const std::vector<Tensor<AD, 4>>& v) {
        auto w = v[1].detach().require_grad();
        auto y = module::conv2d(v[0], w, std::nullopt, o);
        auto grads = (y * Tensor<AD, 4>::from_data(r)).sum().backward(/*create_graph=*/true);
        return *w.grad_graph(grads);
      },
      {random_data(xs, 62), random_data(ws, 63)}, gopt);
}

// d/dw and d/dbias of conv2d's dx (a transposed convolution of dy with w); the upstream
// gradient itself depends on w through y^2.
TEST(GradConv, Conv2dInputGradOfGrad) {
  const ConvOptions<2> o{{2, 2}, {0, 1}, {1, 1}, 1};
  const Shape xs{2, 3, 5, 5}, ws{2, 3, 2, 3};
  GradCheckOptions gopt;
  gopt.constant_inputs = {0};
  gradcheck<4>(
      "d/dw of conv2d's dx (loss sum(y^2))",
      [o](const std::vector<Tensor<AD, 4>>& v) {
        auto x = v[0].detach().require_grad();
        auto y = module::conv2d(x, v[1], v[2].reshape({2}), o);
        auto grads = (y * y).sum().backward(/*create_graph=*/true);
        return *x.grad_graph(grads);
      },
      {random_data(xs, 64), random_data(ws, 65), random_data(Shape{1, 2, 1, 1}, 66)}, gopt);
}

TEST(GradConv, ConvTranspose2dGradOfGrad) {
  const ConvTransposeOptions<2> o{{2, 2}, {1, 0}, {1, 1}, {1, 1}, 2};
  const Shape xs{2, 4, 3, 3}, ws{4, 1, 3, 2};
  GradCheckOptions gopt;
  gopt.constant_inputs = {1};
  gradcheck<4>(
      "d/dx of conv_transpose2d's dweight (loss sum(y^2))",
      [o](const std::vector<Tensor<AD, 4>>& v) {
        auto w = v[1].detach().require_grad();
        auto y = module::conv_transpose2d(v[0], w, std::nullopt, o);
        auto grads = (y * y).sum().backward(/*create_graph=*/true);
        return *w.grad_graph(grads);
      },
      {random_data(xs, 67), random_data(ws, 68)}, gopt);
}

}  // namespace
}  // namespace ember::test
