// Autodiff<B>: matmul backward rule.
#pragma once

#include "ember/autodiff/impl/common.hpp"

namespace ember::autodiff {

namespace rules {
/// Swaps the last two dims (a view on most backends).
template <class B>
AP<B> transpose_last(AP<B> t) {
  const std::size_t r = shape_of<B>(t).rank();
  std::vector<std::size_t> axes(r);
  for (std::size_t i = 0; i < r; ++i) axes[i] = i;
  std::swap(axes[r - 1], axes[r - 2]);
  return O<B>::float_permute(std::move(t), axes);
}
}  // namespace rules

// C = A B with broadcast batch dims: dA = dC B^T, dB = A^T dC, each summed over the batch
// dims its operand was broadcast along.
template <class B>
AdTensor<B> AdLinalgOps<B>::float_matmul(AP lhs, AP rhs) {
  const Shape sa = B::float_shape(lhs.inner), sb = B::float_shape(rhs.inner);
  return Recorder<B>::binary(
      "matmul", Bound::Compute, save_inputs(3u), std::move(lhs), std::move(rhs),
      [](typename B::FloatTensor a, typename B::FloatTensor b) { return B::float_matmul(a, b); },
      [sa, sb](BackwardContext<B>& c) {
        using O = AdOps<B>;
        if (c.needs(0)) {
          c.set(0, rules::sum_to<B>(O::float_matmul(c.grad, rules::transpose_last<B>(c.input(1))),
                                    sa));
        }
        if (c.needs(1)) {
          c.set(1, rules::sum_to<B>(O::float_matmul(rules::transpose_last<B>(c.input(0)), c.grad),
                                    sb));
        }
      });
}

}  // namespace ember::autodiff
