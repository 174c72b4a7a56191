// Autodiff<Cpu>: finite-difference gradient checks of the layout family (permute, expand,
// slice, flip, cat) and of the front-end composites that differentiate through them
// (squeeze/unsqueeze, flatten, movedim, repeat, roll, unfold, narrow, chunk/split, stack,
// pad).
#include <gtest/gtest.h>

#include <vector>

#include "ember/autodiff/cpu.hpp"
#include "ember/tensor/tensor.hpp"
#include "gradcheck.hpp"

namespace ember::test {
namespace {

using T2 = Tensor<AD, 2>;
using T3 = Tensor<AD, 3>;
using V2 = std::vector<T2>;
using V3 = std::vector<T3>;

TEST(GradLayout, PermuteAndTranspose) {
  const auto x = random_data(Shape{2, 3, 4}, 1);
  gradcheck<3>("permute {2, 0, 1}", [](const V3& v) { return v[0].permute({2, 0, 1}).sin(); }, {x});
  gradcheck<3>("permute {1, 2, 0} twice",
               [](const V3& v) {
                 return v[0].permute({1, 2, 0}).permute({1, 2, 0});
               },
               {x});
  gradcheck<3>("swap_dims(0, 2)", [](const V3& v) { return v[0].swap_dims(0, 2).exp(); }, {x});
  gradcheck<2>("transpose", [](const V2& v) { return v[0].transpose() * v[1]; },
               {random_data(Shape{3, 4}, 2), random_data(Shape{4, 3}, 3)});
  gradcheck<3>("movedim(0, -1)", [](const V3& v) { return v[0].movedim(0, -1).square(); }, {x});
  gradcheck<3>("movedim({0, 1}, {2, 0})",
               [](const V3& v) {
                 return v[0].movedim({0, 1}, {2, 0});
               },
               {x});
}

TEST(GradLayout, Expand) {
  gradcheck<2>("expand [3, 1] -> [3, 4]",
               [](const V2& v) {
                 return v[0].expand<2>({3, 4});
               },
               {random_data(Shape{3, 1}, 10)});
  gradcheck<2>("expand [1, 4] -> [2, 3, 4] (new leading dim)",
               [](const V2& v) {
                 return v[0].expand<3>({2, 3, 4}).sin();
               },
               {random_data(Shape{1, 4}, 11)});
  gradcheck<2>("expand [1, 1] -> [2, 2, 3, 4]",
               [](const V2& v) {
                 return v[0].expand<4>({2, 2, 3, 4});
               },
               {random_data(Shape{1, 1}, 12)});
  gradcheck<2>("expand [3, 4] -> [2, 3, 4]",
               [](const V2& v) {
                 return v[0].expand<3>({2, 3, 4}) * 1.5;
               },
               {random_data(Shape{3, 4}, 13)});
}

TEST(GradLayout, Slice) {
  const auto x = random_data(Shape{5, 6}, 20);
  gradcheck<2>("slice {s(1, 4), s()}", [](const V2& v) { return v[0].slice({s(1, 4), s()}); }, {x});
  gradcheck<2>("slice {s(0, end, 2), s(1, end, 3)}",
               [](const V2& v) {
                 return v[0].slice({s(0, end, 2), s(1, end, 3)}).exp();
               },
               {x});
  gradcheck<2>("slice negative steps {s(0, 5, -1), s(1, 6, -2)}",
               [](const V2& v) {
                 return v[0].slice({s(0, 5, -1), s(1, 6, -2)});
               },
               {x});
  gradcheck<2>("slice negative indices {s(-3, -1), s(-1)}",
               [](const V2& v) {
                 return v[0].slice({s(-3, -1), s(-1)}).square();
               },
               {x});
  gradcheck<2>("slice single index {s(2)}", [](const V2& v) { return v[0].slice({s(2)}); }, {x});
  gradcheck<2>("overlapping slices accumulate",
               [](const V2& v) { return v[0].slice({s(0, 3)}) * v[0].slice({s(2, 5)}); }, {x});
}

TEST(GradLayout, Flip) {
  const auto x = random_data(Shape{3, 4}, 30);
  gradcheck<2>("flip {0}", [](const V2& v) { return v[0].flip({0}) * v[0]; }, {x});
  gradcheck<2>("flip {0, 1}", [](const V2& v) { return v[0].flip({0, 1}).exp(); }, {x});
  gradcheck<2>("flip {-1}", [](const V2& v) { return v[0].flip({-1}); }, {x});
}

TEST(GradLayout, Cat) {
  gradcheck<2>(
      "cat dim 0",
      [](const V2& v) {
        return T2::cat({v[0], v[1].sin(), v[2]}, 0);
      },
      {random_data(Shape{2, 3}, 40), random_data(Shape{1, 3}, 41), random_data(Shape{3, 3}, 42)});
  gradcheck<2>(
      "cat dim 1 with a zero-size piece",
      [](const V2& v) {
        return T2::cat({v[0], v[1], v[2]}, 1).square();
      },
      {random_data(Shape{2, 3}, 43), random_data(Shape{2, 0}, 44), random_data(Shape{2, 2}, 45)});
  gradcheck<2>("cat of the same tensor twice",
               [](const V2& v) {
                 return T2::cat({v[0], v[0] * 2.0}, -1);
               },
               {random_data(Shape{2, 3}, 46)});
  // A constant piece gets no gradient and does not disturb the others.
  GradCheckOptions opt;
  opt.constant_inputs = {0};
  gradcheck<2>(
      "cat with a constant piece",
      [](const V2& v) {
        return T2::cat({v[0], v[1]}, 0);
      },
      {random_data(Shape{2, 3}, 47), random_data(Shape{2, 3}, 48)}, opt);
}

TEST(GradLayout, SqueezeUnsqueezeFlatten) {
  gradcheck<3>("squeeze_dim<2>(1)", [](const V3& v) { return v[0].squeeze_dim<2>(1).exp(); },
               {random_data(Shape{3, 1, 4}, 50)});
  gradcheck<3>("squeeze<1>()", [](const V3& v) { return v[0].squeeze<1>(); },
               {random_data(Shape{1, 5, 1}, 51)});
  gradcheck<2>("unsqueeze_dim<3>(1)", [](const V2& v) { return v[0].unsqueeze_dim<3>(1) * 2.0; },
               {random_data(Shape{3, 4}, 52)});
  gradcheck<2>("unsqueeze<4>()", [](const V2& v) { return v[0].unsqueeze<4>().sin(); },
               {random_data(Shape{3, 4}, 53)});
  gradcheck<3>("flatten<2>(0, 1)", [](const V3& v) { return v[0].flatten<2>(0, 1).square(); },
               {random_data(Shape{2, 3, 4}, 54)});
  gradcheck<3>("flatten<1>(0, 2)", [](const V3& v) { return v[0].flatten<1>(0, 2); },
               {random_data(Shape{2, 3, 4}, 55)});
}

TEST(GradLayout, RepeatAndRoll) {
  const auto x = random_data(Shape{2, 3}, 60);
  gradcheck<2>("repeat {2, 3}", [](const V2& v) { return v[0].repeat({2, 3}).sin(); }, {x});
  gradcheck<2>("repeat_dim(0, 3)", [](const V2& v) { return v[0].repeat_dim(0, 3); }, {x});
  gradcheck<2>("repeat_dim(1, 0) (empty)", [](const V2& v) { return v[0].repeat_dim(1, 0); }, {x});
  gradcheck<2>("roll {1, -2} over {0, 1}",
               [](const V2& v) {
                 return v[0].roll({1, -2}, {0, 1}).exp();
               },
               {x});
  gradcheck<2>("roll_dim(4, 1)", [](const V2& v) { return v[0].roll_dim(4, 1); }, {x});
}

TEST(GradLayout, UnfoldAndNarrow) {
  const auto x = random_data(Shape{3, 5}, 70);
  gradcheck<2>("unfold(1, 2, 1) (overlapping windows)",
               [](const V2& v) { return v[0].unfold(1, 2, 1).square(); }, {x});
  gradcheck<2>("unfold(1, 3, 2)", [](const V2& v) { return v[0].unfold(1, 3, 2); }, {x});
  gradcheck<2>("unfold(0, 2, 1)", [](const V2& v) { return v[0].unfold(0, 2, 1).sin(); }, {x});
  gradcheck<2>("narrow(1, 1, 3)", [](const V2& v) { return v[0].narrow(1, 1, 3).exp(); }, {x});
  gradcheck<2>("narrow(0, -2, 2)", [](const V2& v) { return v[0].narrow(0, -2, 2); }, {x});
}

TEST(GradLayout, ChunkSplitStack) {
  const auto x = random_data(Shape{3, 5}, 80);
  gradcheck<2>("chunk(2, 1)",
               [](const V2& v) {
                 auto p = v[0].chunk(2, 1);
                 return T2::cat({p[1].exp(), p[0] * 3.0}, 1);
               },
               {x});
  gradcheck<2>("split(2, 1)",
               [](const V2& v) {
                 auto p = v[0].split(2, 1);
                 return T2::cat({p[2], p[0].sin(), p[1] * -2.0}, 1);
               },
               {x});
  gradcheck<2>("split_with_sizes({1, 0, 2}, 0)",
               [](const V2& v) {
                 auto p = v[0].split_with_sizes({1, 0, 2}, 0);
                 return T2::cat({p[2].square(), p[1], p[0]}, 0);
               },
               {x});
  gradcheck<2>("stack dim 1",
               [](const V2& v) {
                 return T2::stack({v[0], v[1].sin(), v[0] * v[1]}, 1);
               },
               {x, random_data(Shape{3, 5}, 81)});
  gradcheck<2>("stack dim -1",
               [](const V2& v) {
                 return T2::stack({v[0], v[1]}, -1).exp();
               },
               {x, random_data(Shape{3, 5}, 82)});
}

TEST(GradLayout, Pad) {
  const auto x = random_data(Shape{3, 4}, 90);
  gradcheck<2>("pad constant {1, 2, 0, 1}",
               [](const V2& v) {
                 return v[0].pad({1, 2, 0, 1}, PadMode::Constant, 0.5).square();
               },
               {x});
  gradcheck<2>("pad reflect {2, 1, 1, 2}",
               [](const V2& v) {
                 return v[0].pad({2, 1, 1, 2}, PadMode::Reflect);
               },
               {x});
  gradcheck<2>("pad reflect {3, 3}",
               [](const V2& v) {
                 return v[0].pad({3, 3}, PadMode::Reflect).sin();
               },
               {x});
  gradcheck<2>("pad edge {1, 2, 2, 0}",
               [](const V2& v) {
                 return v[0].pad({1, 2, 2, 0}, PadMode::Edge);
               },
               {x});
  gradcheck<2>("pad with crops {-1, 2, 1, -1}",
               [](const V2& v) {
                 return v[0].pad({-1, 2, 1, -1}, PadMode::Constant, 0.0).exp();
               },
               {x});
  gradcheck<3>("pad reflect rank 3 {1, 1}",
               [](const V3& v) {
                 return v[0].pad({1, 1}, PadMode::Reflect);
               },
               {random_data(Shape{2, 3, 3}, 91)});
}

TEST(GradLayout, CompositeChain) {
  // Several layout ops in one graph: each must hand the gradient back the right way.
  gradcheck<3>("permute, slice, flip, expand, reshape",
               [](const V3& v) {
                 auto a = v[0].permute({1, 0, 2}).slice({s(0, 3, 2), s(), s(1, end)}).flip({2});
                 auto b = v[1].expand<3>({2, 2, 3});
                 return (a * b).reshape<2>({4, 3});
               },
               {random_data(Shape{2, 3, 4}, 100), random_data(Shape{1, 1, 3}, 101)});
}

}  // namespace
}  // namespace ember::test
