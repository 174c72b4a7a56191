// Autodiff<Cpu>: finite-difference gradient checks of the indexing family (slice_assign,
// slice_fill, select, select_assign, gather, scatter, take, mask_where, mask_fill,
// tril/triu). Index tensors and masks are constants. With IndexUpdate::Assign and
// duplicate indices the result depends on the order of writes, so Assign cases use
// distinct indices.
#include <gtest/gtest.h>

#include <vector>

#include "ember/autodiff/cpu.hpp"
#include "ember/tensor/tensor.hpp"
#include "gradcheck.hpp"

namespace ember::test {
namespace {

using T2 = Tensor<AD, 2>;
using V2 = std::vector<T2>;
using I1 = Tensor<AD, 1, Int>;
using I2 = Tensor<AD, 2, Int>;
using B2 = Tensor<AD, 2, Bool>;

TEST(GradIndexing, SliceAssign) {
  const auto x = random_data(Shape{4, 5}, 1);
  gradcheck<2>("slice_assign {s(1, 3), s(0, 5, 2)}",
               [](const V2& v) {
                 return v[0].slice_assign({s(1, 3), s(0, 5, 2)}, v[1]).square();
               },
               {x, random_data(Shape{2, 3}, 2)});
  gradcheck<2>("slice_assign negative steps {s(0, 4, -2), s(-2, end)}",
               [](const V2& v) {
                 return v[0].slice_assign({s(0, 4, -2), s(-2, end)}, v[1].exp());
               },
               {x, random_data(Shape{2, 2}, 3)});
  gradcheck<2>("slice_assign of a whole row {s(-1)}",
               [](const V2& v) { return v[0].slice_assign({s(-1)}, v[1]) * v[0]; },
               {x, random_data(Shape{1, 5}, 4)});
  GradCheckOptions values_only;
  values_only.constant_inputs = {0};
  gradcheck<2>(
      "slice_assign values only",
      [](const V2& v) {
        return v[0].slice_assign({s(1, 3), s(1, 4)}, v[1]);
      },
      {x, random_data(Shape{2, 3}, 5)}, values_only);
}

TEST(GradIndexing, SliceFill) {
  const auto x = random_data(Shape{4, 5}, 10);
  gradcheck<2>("slice_fill {s(1, 3)}",
               [](const V2& v) { return v[0].slice_fill({s(1, 3)}, 2.0).exp(); }, {x});
  gradcheck<2>("slice_fill {s(), s(4, 0, -2)}",
               [](const V2& v) {
                 return v[0].slice_fill({s(), s(0, 5, -2)}, -1.0);
               },
               {x});
}

TEST(GradIndexing, Select) {
  const auto x = random_data(Shape{4, 5}, 20);
  const auto rows = I1::from_ints({2, 0, 2, 3});  // duplicates accumulate
  const auto cols = I1::from_ints({4, 1});
  gradcheck<2>("select dim 0 (repeated indices)",
               [&](const V2& v) { return v[0].select(0, rows).sin(); }, {x});
  gradcheck<2>("select dim 1", [&](const V2& v) { return v[0].select(1, cols); }, {x});
  gradcheck<2>("select dim -1 twice",
               [&](const V2& v) { return v[0].select(-1, cols) * v[0].select(-1, cols).exp(); },
               {x});
}

TEST(GradIndexing, SelectAssign) {
  const auto x = random_data(Shape{4, 5}, 30);
  const auto distinct = I1::from_ints({3, 0});
  const auto repeated = I1::from_ints({1, 3, 1});
  gradcheck<2>("select_assign Assign dim 0",
               [&](const V2& v) {
                 return v[0].select_assign(0, distinct, v[1], IndexUpdate::Assign).square();
               },
               {x, random_data(Shape{2, 5}, 31)});
  gradcheck<2>(
      "select_assign Assign dim 1",
      [&](const V2& v) { return v[0].select_assign(1, distinct, v[1], IndexUpdate::Assign); },
      {x, random_data(Shape{4, 2}, 32)});
  gradcheck<2>(
      "select_assign Add dim 0 (repeated indices)",
      [&](const V2& v) { return v[0].select_assign(0, repeated, v[1], IndexUpdate::Add).square(); },
      {x, random_data(Shape{3, 5}, 33)});
  gradcheck<2>(
      "select_assign Add dim 1 (repeated indices)",
      [&](const V2& v) { return v[0].select_assign(1, repeated, v[1].sin(), IndexUpdate::Add); },
      {x, random_data(Shape{4, 3}, 34)});
}

TEST(GradIndexing, Gather) {
  const auto x = random_data(Shape{3, 4}, 40);
  gradcheck<2>("gather dim 1 (repeated indices)",
               [](const V2& v) {
                 return v[0].gather(1, I2::from_ints({{0, 0, 3}, {2, 1, 2}, {3, 3, 3}})).square();
               },
               {x});
  gradcheck<2>("gather dim 0, index smaller in dim 1",
               [](const V2& v) {
                 return v[0].gather(0, I2::from_ints({{2, 0}, {1, 1}, {0, 2}, {2, 2}}));
               },
               {x});
}

TEST(GradIndexing, Scatter) {
  const auto x = random_data(Shape{3, 4}, 50);
  // Assign: distinct targets per column (dim 0) / per row (dim 1).
  gradcheck<2>("scatter Assign dim 0",
               [](const V2& v) {
                 return v[0]
                     .scatter(0, I2::from_ints({{2, 0, 1, 1}, {0, 1, 2, 0}}), v[1],
                              IndexUpdate::Assign)
                     .square();
               },
               {x, random_data(Shape{2, 4}, 51)});
  gradcheck<2>("scatter Assign dim 1, values larger than indices",
               [](const V2& v) {
                 return v[0].scatter(1, I2::from_ints({{3, 0}, {1, 2}}), v[1], IndexUpdate::Assign);
               },
               {x, random_data(Shape{3, 3}, 52)});
  gradcheck<2>("scatter Add dim 0 (repeated indices)",
               [](const V2& v) {
                 return v[0]
                     .scatter(0, I2::from_ints({{2, 0, 1, 1}, {2, 0, 1, 1}, {0, 0, 0, 2}}), v[1],
                              IndexUpdate::Add)
                     .square();
               },
               {x, random_data(Shape{3, 4}, 53)});
  gradcheck<2>(
      "scatter Add dim 1, values larger than indices",
      [](const V2& v) {
        return v[0].scatter(1, I2::from_ints({{3, 3}, {1, 1}}), v[1].exp(), IndexUpdate::Add);
      },
      {x, random_data(Shape{3, 4}, 54)});
}

TEST(GradIndexing, Take) {
  const auto x = random_data(Shape{3, 4}, 60);
  gradcheck<2>("take dim 1 with [2, 2] indices",
               [](const V2& v) {
                 return v[0].take<2>(1, I2::from_ints({{0, 3}, {3, 1}})).sin();
               },
               {x});
  gradcheck<2>("take dim 0 with [3] indices",
               [](const V2& v) {
                 return v[0].take<1>(0, I1::from_ints({2, 2, 0}));
               },
               {x});
}

TEST(GradIndexing, MaskWhereAndFill) {
  const auto x = random_data(Shape{3, 4}, 70);
  const auto full_mask = B2::from_bools(
      {{true, false, false, true}, {false, true, true, false}, {true, true, false, false}});
  const auto col_mask = B2::from_bools({{true}, {false}, {true}});     // [3, 1]
  const auto row_mask = B2::from_bools({{false, true, true, false}});  // [1, 4]
  gradcheck<2>("mask_where same shapes",
               [&](const V2& v) { return v[0].mask_where(full_mask, v[1]).square(); },
               {x, random_data(Shape{3, 4}, 71)});
  gradcheck<2>("mask_where broadcast mask [3, 1], values [1, 4]",
               [&](const V2& v) { return v[0].mask_where(col_mask, v[1]).exp(); },
               {x, random_data(Shape{1, 4}, 72)});
  gradcheck<2>("mask_where mask [1, 4], values [3, 1]",
               [&](const V2& v) { return v[0].mask_where(row_mask, v[1]); },
               {x, random_data(Shape{3, 1}, 73)});
  gradcheck<2>("mask_fill", [&](const V2& v) { return v[0].mask_fill(full_mask, 3.0).sin(); }, {x});
  gradcheck<2>("mask_fill broadcast mask [1, 4]",
               [&](const V2& v) { return v[0].mask_fill(row_mask, -1.0); }, {x});
}

TEST(GradIndexing, TrilTriu) {
  const auto x = random_data(Shape{4, 5}, 80);
  for (std::int64_t diag : {-1, 0, 2}) {
    gradcheck<2>("tril " + std::to_string(diag),
                 [&](const V2& v) { return v[0].tril(diag).square(); }, {x});
    gradcheck<2>("triu " + std::to_string(diag), [&](const V2& v) { return v[0].triu(diag); }, {x});
  }
}

}  // namespace
}  // namespace ember::test
