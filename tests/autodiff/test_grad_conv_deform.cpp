// Autodiff<Cpu>: finite-difference checks of deform_conv2d (gradients with respect to the
// input, offset, weight, mask and bias; sample points inside, at non-integer positions and
// outside the image), unfold4d and fold4d, grad-of-grad of deform_conv2d, and gradients
// compared with PyTorch autograd (tests/fixtures/autograd_conv.json).
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "ember/autodiff/cpu.hpp"
#include "ember/tensor/module/conv.hpp"
#include "ember/tensor/tensor.hpp"
#include "fixtures.hpp"
#include "gradcheck.hpp"

namespace ember::test {
namespace {

using T4 = Tensor<AD, 4>;
using T3 = Tensor<AD, 3>;

struct DeformCase {
  Shape xs;  // [N, C, H, W]
  std::int64_t cout;
  std::array<std::int64_t, 2> k;
  DeformConvOptions o;
  bool mask;
  bool bias;
  double offset_range;  // offsets uniform in [-range, range)
};

std::string describe(const DeformCase& c) {
  auto a = [](const std::array<std::int64_t, 2>& v) {
    std::string r = "(";
    r += std::to_string(v[0]);
    r += ",";
    r += std::to_string(v[1]);
    return r + ")";
  };
  return "deform_conv2d stride" + a(c.o.stride) + " padding" + a(c.o.padding) + " dilation" +
         a(c.o.dilation) + " weight_groups " + std::to_string(c.o.weight_groups) +
         " offset_groups " + std::to_string(c.o.offset_groups) + (c.mask ? " mask" : "") +
         (c.bias ? " bias" : "");
}

/// Inputs x, offset, weight, mask, bias ([1, Cout, 1, 1]) of a case, by position.
std::vector<TensorData> deform_inputs(const DeformCase& c, std::uint64_t seed) {
  const auto& o = c.o;
  std::int64_t out[2];
  for (int i = 0; i < 2; ++i)
    out[i] = (c.xs[2 + i] + 2 * o.padding[i] - o.dilation[i] * (c.k[i] - 1) - 1) / o.stride[i] + 1;
  const std::int64_t kk = c.k[0] * c.k[1];
  std::vector<TensorData> in{
      random_data(c.xs, seed),
      random_data(Shape{c.xs[0], 2 * o.offset_groups * kk, out[0], out[1]}, seed + 1,
                  -c.offset_range, c.offset_range),
      random_data(Shape{c.cout, c.xs[1] / o.weight_groups, c.k[0], c.k[1]}, seed + 2)};
  if (c.mask)
    in.push_back(random_data(Shape{c.xs[0], o.offset_groups * kk, out[0], out[1]}, seed + 3));
  if (c.bias) in.push_back(random_data(Shape{1, c.cout, 1, 1}, seed + 4));
  return in;
}

T4 deform_apply(const DeformCase& c, const std::vector<T4>& v) {
  std::optional<T4> mask;
  std::optional<Tensor<AD, 1>> bias;
  std::size_t next = 3;
  if (c.mask) mask = v[next++];
  if (c.bias) bias = v[next].reshape({c.cout});
  return module::deform_conv2d(v[0], v[1], v[2], mask, bias, c.o);
}

void check_deform(const DeformCase& c, std::uint64_t seed, GradCheckOptions gopt = {}) {
  gradcheck<4>(
      describe(c), [c](const std::vector<T4>& v) { return deform_apply(c, v); },
      deform_inputs(c, seed), gopt);
}

TEST(GradConvDeform, OptionGrid) {
  // Offsets in [-2.5, 2.5): border taps sample outside the image (zero) or straddle its
  // edge; random values are never integers (where bilinear sampling has kinks).
  const Shape xs{2, 4, 4, 5};
  std::uint64_t seed = 300;
  for (std::int64_t s : {1, 2})
    for (std::int64_t p : {0, 1})
      for (std::int64_t d : {1, 2}) {
        const std::int64_t wg = (s + p) % 2 + 1, og = (p + d) % 2 + 1;
        const bool mask = (s + d) % 2 == 0, bias = (s + p + d) % 2 == 1;
        DeformCase c{xs,   4,    {2, 3}, DeformConvOptions{{s, s}, {p, p}, {d, d}, wg, og},
                     mask, bias, 2.5};
        check_deform(c, seed += 7);
      }
}

TEST(GradConvDeform, MaskBiasAndGroups) {
  const Shape xs{2, 4, 5, 4};
  check_deform(
      DeformCase{xs, 2, {3, 2}, DeformConvOptions{{1, 2}, {1, 0}, {1, 1}, 2, 2}, true, true, 1.7},
      400);
  check_deform(
      DeformCase{xs, 4, {2, 2}, DeformConvOptions{{2, 1}, {0, 1}, {1, 2}, 1, 4}, true, false, 1.3},
      401);
  check_deform(DeformCase{Shape{1, 2, 4, 4}, 3, {3, 3}, DeformConvOptions{}, false, true, 0.9},
               402);
}

TEST(GradConvDeform, SamplesFarOutsideTheImage) {
  // Offsets up to +-4.5 on a 4x4 image: many sample points fall entirely outside.
  check_deform(DeformCase{Shape{1, 2, 4, 4},
                          2,
                          {2, 2},
                          DeformConvOptions{{1, 1}, {1, 1}, {1, 1}, 1, 1},
                          true,
                          true,
                          4.5},
               410);
}

TEST(GradConvDeform, SubsetsOfInputsRequireGrad) {
  const DeformCase c{Shape{1, 4, 4, 4},
                     2,
                     {2, 2},
                     DeformConvOptions{{1, 1}, {1, 1}, {1, 1}, 2, 2},
                     true,
                     true,
                     1.5};
  GradCheckOptions only_offset_mask;
  only_offset_mask.constant_inputs = {0, 2, 4};
  check_deform(c, 420, only_offset_mask);
  GradCheckOptions only_x;
  only_x.constant_inputs = {1, 2, 3, 4};
  check_deform(c, 421, only_x);
  GradCheckOptions only_w_bias;
  only_w_bias.constant_inputs = {0, 1, 3};
  check_deform(c, 422, only_w_bias);
}

// With zero offsets and no mask, deform_conv2d is conv2d: same gradients.
TEST(GradConvDeform, ZeroOffsetMatchesConv2dGradients) {
  const DeformConvOptions o{{2, 1}, {1, 1}, {1, 2}, 2, 1};
  const Shape xs{2, 4, 5, 6}, ws{4, 2, 3, 2};
  auto x1 = T4::from_data(random_data(xs, 430).convert(DType::F64)).require_grad();
  auto w1 = T4::from_data(random_data(ws, 431).convert(DType::F64)).require_grad();
  auto x2 = T4::from_data(x1.inner().into_data()).require_grad();
  auto w2 = T4::from_data(w1.inner().into_data()).require_grad();
  auto y1 = module::conv2d(x1, w1, std::nullopt,
                           ConvOptions<2>{o.stride, o.padding, o.dilation, o.weight_groups});
  const Shape ys = y1.shape();
  auto off = T4::zeros(Shape{2, 2 * 6, ys[2], ys[3]}, AD::Device{}, DType::F64).require_grad();
  auto y2 = module::deform_conv2d(x2, off, w2, std::nullopt, std::nullopt, o);
  const auto r = T4::from_data(random_data(ys, 432));
  auto g1 = (y1 * r).sum().backward();
  auto g2 = (y2 * r).sum().backward();
  x2.grad(g2)->into_data().assert_approx_eq(x1.grad(g1)->into_data(), Tolerance::strict());
  w2.grad(g2)->into_data().assert_approx_eq(w1.grad(g1)->into_data(), Tolerance::strict());
  EXPECT_EQ(off.grad(g2)->shape(), off.shape());
}

// Grad of grad: the rule is written with Autodiff ops, so the gradient of the offset is
// differentiable with respect to x, weight and mask (and the input gradient with respect to
// the offset).
TEST(GradConvDeform, GradOfGrad) {
  const DeformCase c{Shape{1, 2, 4, 4},
                     2,
                     {2, 2},
                     DeformConvOptions{{1, 1}, {1, 0}, {1, 1}, 1, 1},
                     true,
                     false,
                     1.6};
  auto in = deform_inputs(c, 440);
  const TensorData r = random_data(Shape{1, 2, 5, 3}, 441);
  GradCheckOptions gopt;
  gopt.constant_inputs = {1};
  gradcheck<4>(
      "d/d(x, weight, mask) of deform_conv2d's d offset",
      [c, r](const std::vector<T4>& v) {
        std::vector<T4> u = v;
        u[1] = v[1].detach().require_grad();
        auto y = deform_apply(c, u);
        auto grads = (y * T4::from_data(r)).sum().backward(/*create_graph=*/true);
        return *u[1].grad_graph(grads);
      },
      in, gopt);
  gopt.constant_inputs = {0};
  gradcheck<4>(
      "d/d(offset, weight, mask) of deform_conv2d's dx",
      [c, r](const std::vector<T4>& v) {
        std::vector<T4> u = v;
        u[0] = v[0].detach().require_grad();
        auto y = deform_apply(c, u);
        auto grads = (y * T4::from_data(r)).sum().backward(/*create_graph=*/true);
        return *u[0].grad_graph(grads);
      },
      in, gopt);
}

// ---- unfold4d / fold4d ---------------------------------------------------------------------

TEST(GradConvDeform, Unfold4d) {
  struct C {
    Shape xs;
    std::array<std::int64_t, 2> k;
    UnfoldOptions o;
  };
  const std::vector<C> cases{
      {Shape{2, 3, 4, 5}, {2, 2}, UnfoldOptions{}},
      {Shape{1, 2, 6, 7}, {3, 2}, UnfoldOptions{{2, 1}, {1, 1}, {1, 1}}},
      {Shape{2, 2, 7, 6}, {2, 3}, UnfoldOptions{{2, 2}, {0, 1}, {2, 1}}},
      {Shape{1, 3, 5, 5}, {3, 3}, UnfoldOptions{{3, 2}, {1, 0}, {1, 2}}},
  };
  std::uint64_t seed = 600;
  for (const auto& c : cases) {
    gradcheck<4>("unfold4d",
                 [c](const std::vector<T4>& v) { return module::unfold4d(v[0], c.k, c.o); },
                 {random_data(c.xs, ++seed)});
  }
}

TEST(GradConvDeform, Fold4d) {
  struct C {
    std::int64_t n, ch;
    std::array<std::int64_t, 2> size, k;
    UnfoldOptions o;
  };
  const std::vector<C> cases{
      {2, 2, {4, 5}, {2, 2}, UnfoldOptions{}},
      {1, 3, {6, 6}, {3, 3}, UnfoldOptions{{2, 2}, {1, 1}, {1, 1}}},
      {2, 1, {7, 6}, {2, 3}, UnfoldOptions{{1, 2}, {0, 1}, {2, 1}}},
      {1, 2, {5, 6}, {2, 2}, UnfoldOptions{{3, 2}, {1, 0}, {1, 2}}},
  };
  std::uint64_t seed = 700;
  for (const auto& c : cases) {
    std::int64_t blocks = 1;
    for (int i = 0; i < 2; ++i)
      blocks *=
          (c.size[i] + 2 * c.o.padding[i] - c.o.dilation[i] * (c.k[i] - 1) - 1) / c.o.stride[i] + 1;
    gradcheck<3>("fold4d",
                 [c](const std::vector<T3>& v) { return module::fold4d(v[0], c.size, c.k, c.o); },
                 {random_data(Shape{c.n, c.ch * c.k[0] * c.k[1], blocks}, ++seed)});
  }
}

TEST(GradConvDeform, UnfoldFoldGradOfGrad) {
  // L = sum(fold(unfold(l * x))^2) with l a separate leaf: dL/dl = 2 x fold(unfold(...)) is
  // differentiable with respect to x (l is a constant input of the check).
  const UnfoldOptions o{{2, 1}, {1, 0}, {1, 1}};
  GradCheckOptions gopt;
  gopt.constant_inputs = {1};
  gradcheck<4>(
      "d/dx of dL/dl, L = sum(fold(unfold(l x))^2)",
      [o](const std::vector<T4>& v) {
        auto leaf = v[1].detach().require_grad();
        auto y = module::fold4d(module::unfold4d(leaf * v[0], {2, 2}, o), {4, 3}, {2, 2}, o);
        auto grads = (y * y).sum().backward(/*create_graph=*/true);
        return *leaf.grad_graph(grads);
      },
      {random_data(Shape{1, 2, 4, 3}, 800), random_data(Shape{1, 2, 4, 3}, 801)}, gopt);
}

// ---- PyTorch autograd --------------------------------------------------------------------

// Gradients of sum(y * gy) for conv2d, conv_transpose2d and deform_conv2d (with mask),
// computed by torch autograd (torchvision.ops.deform_conv2d) in f32; compared in f32.
TEST(GradConvDeform, MatchesTorchAutograd) {
  const auto cases = fixture_cases("autograd_conv");
  ASSERT_FALSE(cases.empty());
  const Tolerance tol = Tolerance::rel_abs(1e-4, 1e-4);
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string op = c.param<std::string>("op");
    auto x = T4::from_data(c.tensor("x")).require_grad();
    auto w = T4::from_data(c.tensor("w")).require_grad();
    auto b = Tensor<AD, 1>::from_data(c.tensor("b")).require_grad();
    const auto s = c.param<std::array<std::int64_t, 2>>("stride");
    const auto p = c.param<std::array<std::int64_t, 2>>("padding");
    const auto d = c.param<std::array<std::int64_t, 2>>("dilation");
    std::optional<T4> off, mask;
    T4 y = [&] {
      if (op == "conv2d")
        return module::conv2d(x, w, b, ConvOptions<2>{s, p, d, c.param<std::int64_t>("groups")});
      if (op == "conv_transpose2d")
        return module::conv_transpose2d(
            x, w, b,
            ConvTransposeOptions<2>{s, p, c.param<std::array<std::int64_t, 2>>("padding_out"), d,
                                    c.param<std::int64_t>("groups")});
      off = T4::from_data(c.tensor("offset")).require_grad();
      mask = T4::from_data(c.tensor("mask")).require_grad();
      return module::deform_conv2d(
          x, *off, w, mask, b,
          DeformConvOptions{s, p, d, c.param<std::int64_t>("weight_groups"),
                            c.param<std::int64_t>("offset_groups")});
    }();
    expect_approx(y.inner().into_data(), c.tensor("out"), tol);
    auto grads = (y * T4::from_data(c.tensor("gy"))).sum().backward();
    expect_approx(x.grad(grads)->into_data(), c.tensor("gx"), tol);
    expect_approx(w.grad(grads)->into_data(), c.tensor("gw"), tol);
    expect_approx(b.grad(grads)->into_data(), c.tensor("gb"), tol);
    if (off) {
      expect_approx(off->grad(grads)->into_data(), c.tensor("goffset"), tol);
      expect_approx(mask->grad(grads)->into_data(), c.tensor("gmask"), tol);
    }
  }
}

}  // namespace
}  // namespace ember::test
