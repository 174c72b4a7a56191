// Autodiff<B>: layout backward rules (views and copies that move values around: the
// gradient is moved back the same way).
#pragma once

#include <numeric>

#include "ember/autodiff/impl/common.hpp"

namespace ember::autodiff {

template <class B>
AdTensor<B> AdOps<B>::float_permute(F t, const Axes& axes) {
  std::vector<std::size_t> inverse(axes.size());
  for (std::size_t i = 0; i < axes.size(); ++i) inverse[axes[i]] = i;
  return Recorder<B>::unary(
      "permute", Bound::Memory, kSaveNothing, std::move(t),
      [axes](typename B::FloatTensor x) { return B::float_permute(std::move(x), axes); },
      [inverse](BackwardContext<B>& c) { c.set(0, AdOps<B>::float_permute(c.grad, inverse)); });
}

template <class B>
AdTensor<B> AdOps<B>::float_expand(F t, const Shape& shape) {
  const Shape in = B::float_shape(t.inner);
  return Recorder<B>::unary(
      "expand", Bound::Memory, kSaveNothing, std::move(t),
      [shape](typename B::FloatTensor x) { return B::float_expand(std::move(x), shape); },
      [in, shape](BackwardContext<B>& c) {
        const std::size_t lead = shape.rank() - in.rank();
        AP g = c.grad;
        for (std::size_t d = 0; d < shape.rank(); ++d) {
          const bool broadcast = d < lead || (in[d - lead] == 1 && shape[d] != 1);
          if (broadcast) g = AdOps<B>::float_sum_dim(std::move(g), static_cast<std::int64_t>(d));
        }
        c.set(0, AdOps<B>::float_reshape(std::move(g), in));
      });
}

template <class B>
AdTensor<B> AdOps<B>::float_slice(F t, const Ranges& ranges) {
  const Shape in = B::float_shape(t.inner);
  return Recorder<B>::unary(
      "slice", Bound::Memory, kSaveNothing, std::move(t),
      [ranges](typename B::FloatTensor x) { return B::float_slice(std::move(x), ranges); },
      [in, ranges](BackwardContext<B>& c) {
        c.set(0,
              AdOps<B>::float_slice_assign(rules::full_shape<B>(c.grad, in, 0.0), ranges, c.grad));
      });
}

template <class B>
AdTensor<B> AdOps<B>::float_flip(F t, const Axes& axes) {
  return Recorder<B>::unary(
      "flip", Bound::Memory, kSaveNothing, std::move(t),
      [axes](typename B::FloatTensor x) { return B::float_flip(std::move(x), axes); },
      [axes](BackwardContext<B>& c) { c.set(0, AdOps<B>::float_flip(c.grad, axes)); });
}

template <class B>
AdTensor<B> AdOps<B>::float_cat(const VecF& tensors, usize dim) {
  std::vector<std::int64_t> sizes;
  sizes.reserve(tensors.size());
  for (const AP& t : tensors) sizes.push_back(B::float_shape(t.inner)[dim]);
  return Recorder<B>::record(
      "cat", Bound::Memory, kSaveNothing, tensors,
      [dim](std::vector<typename B::FloatTensor>& v) { return B::float_cat(v, dim); },
      [sizes, dim](BackwardContext<B>& c) {
        const Shape out = B::float_shape(c.grad.inner);
        std::vector<SliceRange> ranges(out.rank());
        for (std::size_t d = 0; d < out.rank(); ++d) ranges[d] = SliceRange{0, out[d], 1};
        std::int64_t offset = 0;
        for (std::size_t i = 0; i < sizes.size(); ++i) {
          if (c.needs(i)) {
            ranges[dim] = SliceRange{offset, sizes[i], 1};
            c.set(i, AdOps<B>::float_slice(c.grad, ranges));
          }
          offset += sizes[i];
        }
      });
}

}  // namespace ember::autodiff
