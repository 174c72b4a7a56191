// Autodiff<B>: indexing backward rules. Index tensors and masks are captured by the rule
// (they are not differentiable).
#pragma once

#include "ember/autodiff/impl/common.hpp"

namespace ember::autodiff {

template <class B>
AdTensor<B> AdOps<B>::float_slice_assign(F t, const Ranges& ranges, F values) {
  const Shape vs = B::float_shape(values.inner);
  return Recorder<B>::binary(
      "slice_assign", Bound::Memory, kSaveNothing, std::move(t), std::move(values),
      [ranges](typename B::FloatTensor x, typename B::FloatTensor v) {
        return B::float_slice_assign(std::move(x), ranges, std::move(v));
      },
      [ranges, vs](BackwardContext<B>& c) {
        using O = AdOps<B>;
        if (c.needs(0)) {
          c.set(0, O::float_slice_assign(c.grad, ranges, rules::full_shape<B>(c.grad, vs, 0.0)));
        }
        if (c.needs(1)) c.set(1, O::float_slice(c.grad, ranges));
      });
}

template <class B>
AdTensor<B> AdOps<B>::float_select(const F& t, usize dim, const I& indices) {
  const Shape in = B::float_shape(t.inner);
  return Recorder<B>::unary(
      "select", Bound::Memory, kSaveNothing, std::move(t),
      [dim, indices](typename B::FloatTensor x) { return B::float_select(x, dim, indices); },
      [in, dim, indices](BackwardContext<B>& c) {
        c.set(0, AdOps<B>::float_select_assign(rules::full_shape<B>(c.grad, in, 0.0), dim, indices,
                                               c.grad, IndexUpdate::Add));
      });
}

template <class B>
AdTensor<B> AdOps<B>::float_select_assign(F t, usize dim, const I& indices, const F& values,
                                          IndexUpdate update) {
  const Shape vs = B::float_shape(values.inner);
  return Recorder<B>::binary(
      "select_assign", Bound::Memory, kSaveNothing, std::move(t), std::move(values),
      [dim, indices, update](typename B::FloatTensor x, typename B::FloatTensor v) {
        return B::float_select_assign(std::move(x), dim, indices, v, update);
      },
      [dim, indices, update, vs](BackwardContext<B>& c) {
        using O = AdOps<B>;
        if (c.needs(0)) {
          if (update == IndexUpdate::Add)
            c.set(0, c.grad);
          else
            c.set(0, O::float_select_assign(c.grad, dim, indices,
                                            rules::full_shape<B>(c.grad, vs, 0.0),
                                            IndexUpdate::Assign));
        }
        if (c.needs(1)) c.set(1, O::float_select(c.grad, dim, indices));
      });
}

template <class B>
AdTensor<B> AdOps<B>::float_gather(usize dim, const F& t, const I& indices) {
  const Shape in = B::float_shape(t.inner);
  return Recorder<B>::unary(
      "gather", Bound::Memory, kSaveNothing, std::move(t),
      [dim, indices](typename B::FloatTensor x) { return B::float_gather(dim, x, indices); },
      [in, dim, indices](BackwardContext<B>& c) {
        c.set(0, AdOps<B>::float_scatter(dim, rules::full_shape<B>(c.grad, in, 0.0), indices,
                                         c.grad, IndexUpdate::Add));
      });
}

template <class B>
AdTensor<B> AdOps<B>::float_scatter(usize dim, F t, const I& indices, const F& values,
                                    IndexUpdate update) {
  const Shape vs = B::float_shape(values.inner);
  const Shape is = B::int_shape(indices);
  return Recorder<B>::binary(
      "scatter", Bound::Memory, kSaveNothing, std::move(t), std::move(values),
      [dim, indices, update](typename B::FloatTensor x, typename B::FloatTensor v) {
        return B::float_scatter(dim, std::move(x), indices, v, update);
      },
      [dim, indices, update, vs, is](BackwardContext<B>& c) {
        using O = AdOps<B>;
        if (c.needs(0)) {
          if (update == IndexUpdate::Add)
            c.set(0, c.grad);
          else
            c.set(0, O::float_scatter(dim, c.grad, indices, rules::full_shape<B>(c.grad, is, 0.0),
                                      IndexUpdate::Assign));
        }
        if (c.needs(1)) {
          // Only the first indices.shape elements of values are read.
          AP gv = O::float_gather(dim, c.grad, indices);
          if (!(vs == is)) {
            std::vector<SliceRange> ranges(is.rank());
            for (std::size_t d = 0; d < is.rank(); ++d) ranges[d] = SliceRange{0, is[d], 1};
            gv =
                O::float_slice_assign(rules::full_shape<B>(c.grad, vs, 0.0), ranges, std::move(gv));
          }
          c.set(1, std::move(gv));
        }
      });
}

template <class B>
AdTensor<B> AdOps<B>::float_mask_where(F t, const Bo& mask, const F& values) {
  const Shape ts = B::float_shape(t.inner), vs = B::float_shape(values.inner);
  return Recorder<B>::binary(
      "mask_where", Bound::Memory, kSaveNothing, std::move(t), std::move(values),
      [mask](typename B::FloatTensor x, typename B::FloatTensor v) {
        return B::float_mask_where(std::move(x), mask, v);
      },
      [mask, ts, vs](BackwardContext<B>& c) {
        using O = AdOps<B>;
        if (c.needs(0)) c.set(0, rules::sum_to<B>(O::float_mask_fill(c.grad, mask, 0.0), ts));
        if (c.needs(1)) c.set(1, rules::sum_to<B>(rules::keep_where<B>(c.grad, mask), vs));
      });
}

template <class B>
AdTensor<B> AdOps<B>::float_mask_fill(F t, const Bo& mask, double value) {
  return Recorder<B>::unary(
      "mask_fill", Bound::Memory, kSaveNothing, std::move(t),
      [mask, value](typename B::FloatTensor x) {
        return B::float_mask_fill(std::move(x), mask, value);
      },
      [mask](BackwardContext<B>& c) {
        c.set(0, AdOps<B>::float_mask_fill(std::move(c.grad), mask, 0.0));
      });
}

}  // namespace ember::autodiff
