// Autodiff<B>: backward rules of reductions, scans and sorting. Formulas follow PyTorch's
// tools/autograd/derivatives.yaml and FunctionsManual.cpp (prod_backward, cumprod_backward,
// var_backward, value_selecting_reduction_backward, cummaxmin_backward); conventions at
// non-smooth points are PyTorch's:
//   - max/min/median/sort/topk along a dim: the gradient goes to the returned index only
//     (for max/min that is the lowest index among ties);
//   - the front end's max()/min() without a dim run max_dim_with_indices on the flattened
//     tensor, so they also send the whole gradient to the lowest tied index (PyTorch's
//     full max() splits it evenly between ties: a documented difference);
//   - max_abs_dim: to the lowest index of max |x|, times sign(x) there;
//   - cummax/cummin: to the position each running max/min came from, with torch.cummax's
//     indices (a tie with the running max moves the index to the later position; NaN is
//     the max and min);
//   - prod_dim and cumprod are exact when the dim contains zeros.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "ember/autodiff/impl/common.hpp"

namespace ember::autodiff {

namespace rules {

/// Full ranges of `s` with `dim` restricted to [start, start + count).
inline std::vector<SliceRange> reduce_ranges(const Shape& s, std::size_t dim, std::int64_t start,
                                             std::int64_t count) {
  std::vector<SliceRange> r(s.rank());
  for (std::size_t d = 0; d < s.rank(); ++d) r[d] = SliceRange{0, s[d], 1};
  r[dim] = SliceRange{start, count, 1};
  return r;
}

/// Exclusive scan from an inclusive product scan along `dim`: [1, p0, p0 p1, ...].
template <class B>
AP<B> reduce_shift_in_ones(const AP<B>& inclusive, std::size_t dim) {
  const Shape s = shape_of<B>(inclusive);
  const std::int64_t n = s[dim];
  Shape one = s;
  one[dim] = 1;
  AP<B> ones = full_shape<B>(inclusive, one, 1.0);
  if (n <= 1) return n == 1 ? ones : inclusive;
  return O<B>::float_cat({ones, O<B>::float_slice(inclusive, reduce_ranges(s, dim, 0, n - 1))},
                         dim);
}

/// Reversed cumulative sum along `dim`: out_i = sum_{k >= i} g_k.
template <class B>
AP<B> reduce_reverse_cumsum(const AP<B>& g, std::size_t dim) {
  const std::vector<std::size_t> axes{dim};
  return O<B>::float_flip(
      O<B>::float_cumsum(O<B>::float_flip(g, axes), static_cast<std::int64_t>(dim)), axes);
}

/// `g` scattered (added) into zeros of shape `in` at `indices` along `dim`
/// (value_selecting_reduction_backward).
template <class B>
AP<B> reduce_scatter_back(const AP<B>& g, const Shape& in, std::size_t dim,
                          const typename B::IntTensor& indices) {
  return O<B>::float_scatter(dim, full_shape<B>(g, in, 0.0), indices, g, IndexUpdate::Add);
}

/// Records an op whose output `values` selects input elements at `indices` along `dim`
/// (same rank as the input): the gradient is scattered back there. `values` was computed
/// from x by the caller (Bound::Compute: never recomputed).
template <class B>
AP<B> reduce_record_selected(const char* op, AP<B> x, typename B::FloatTensor values,
                             typename B::IntTensor indices, std::size_t dim) {
  const Shape in = B::float_shape(x.inner);
  return Recorder<B>::unary(
      op, Bound::Compute, kSaveNothing, std::move(x),
      [values](const typename B::FloatTensor&) { return values; },
      [in, dim, indices](BackwardContext<B>& c) {
        c.set(0, reduce_scatter_back<B>(c.grad, in, dim, indices));
      });
}

/// Whether an op on x is recorded (so that index bookkeeping can be skipped otherwise).
template <class B>
bool reduce_tracks(const AP<B>& x) {
  return x.node != nullptr && grad_enabled();
}
template <class B>
AP<B> reduce_untracked(const AP<B>& x, typename B::FloatTensor out) {
  return AP<B>{std::move(out), nullptr, x.checkpointing || checkpointing_scope_active()};
}

/// torch.cummax / torch.cummin indices from the input x and the running values `out`:
/// the last position j <= i where x_j equals the running value (or is NaN).
template <class B>
typename B::IntTensor reduce_scan_indices(const typename B::FloatTensor& x,
                                          const typename B::FloatTensor& out, std::size_t dim) {
  const Shape s = B::float_shape(x);
  Shape as(std::vector<std::int64_t>(s.rank(), 1));
  as[dim] = s[dim];
  auto ar = B::int_reshape(B::int_arange(0, s[dim], 1, B::float_device(x), DType::I64), as);
  auto hit = B::template bool_binary<ir::op::Or>(B::template float_compare<ir::op::Equal>(x, out),
                                                 B::template float_predicate<ir::op::IsNan>(x));
  return B::int_cummax(B::template int_binary<ir::op::Mul>(B::bool_into_int(hit, DType::I64), ar),
                       static_cast<std::int64_t>(dim));
}

/// cumprod's input gradient as sum_{k >= i} g_k prod_{j <= k, j != i} x_j, one position i
/// at a time with differentiable ops (PyTorch's cumprod_backward when the input has zeros
/// and higher-order gradients are recorded): exact and twice differentiable with zeros.
template <class B>
AP<B> reduce_cumprod_backward_differentiable(const AP<B>& x, const AP<B>& g, std::size_t dim) {
  const Shape s = shape_of<B>(x);
  const std::int64_t n = s[dim];
  const auto sdim = static_cast<std::int64_t>(dim);
  Shape one = s;
  one[dim] = 1;
  std::vector<AP<B>> parts;
  parts.reserve(static_cast<std::size_t>(n));
  for (std::int64_t k = 0; k < n; ++k) {
    // omitted_j (j = k..n-1) = prod_{i < k} x_i * prod_{k < i <= j} x_i
    AP<B> before =
        k == 0 ? full_shape<B>(x, one, 1.0)
               : O<B>::float_prod_dim(O<B>::float_slice(x, reduce_ranges(s, dim, 0, k)), sdim);
    AP<B> omitted = before;
    if (k + 1 < n) {
      auto after =
          O<B>::float_cumprod(O<B>::float_slice(x, reduce_ranges(s, dim, k + 1, n - k - 1)), sdim);
      omitted =
          O<B>::float_cat({before, O<B>::template float_binary<ir::op::Mul>(after, before)}, dim);
    }
    parts.push_back(
        O<B>::float_sum_dim(O<B>::template float_binary<ir::op::Mul>(
                                O<B>::float_slice(g, reduce_ranges(s, dim, k, n - k)), omitted),
                            sdim));
  }
  return O<B>::float_cat(parts, dim);
}

}  // namespace rules

template <class B>
AdTensor<B> AdOps<B>::float_sum_dim(const F& x, i64 dim) {
  const Shape in = B::float_shape(x.inner);
  return Recorder<B>::unary(
      "sum_dim", Bound::Compute, kSaveNothing, std::move(x),
      [dim](typename B::FloatTensor v) { return B::float_sum_dim(v, dim); },
      [in](BackwardContext<B>& c) { c.set(0, AdOps<B>::float_expand(c.grad, in)); });
}

template <class B>
AdTensor<B> AdOps<B>::float_mean_dim(const F& x, i64 dim) {
  const Shape in = B::float_shape(x.inner);
  const double n = static_cast<double>(in[static_cast<std::size_t>(dim)]);
  return Recorder<B>::unary(
      "mean_dim", Bound::Compute, kSaveNothing, std::move(x),
      [dim](typename B::FloatTensor v) { return B::float_mean_dim(v, dim); },
      [in, n](BackwardContext<B>& c) {
        c.set(0, AdOps<B>::float_expand(
                     AdOps<B>::template float_binary_scalar<ir::op::Div>(c.grad, n), in));
      });
}

// d prod / d x_i = product of the others = (exclusive product from the left) x (exclusive
// product from the right): exact with zeros (PyTorch's prod_backward gives the same values).
template <class B>
AdTensor<B> AdOps<B>::float_prod_dim(const F& x, i64 dim) {
  const Shape in = B::float_shape(x.inner);
  const auto d = static_cast<std::size_t>(dim);
  return Recorder<B>::unary(
      "prod_dim", Bound::Compute, save_inputs(1u), std::move(x),
      [dim](typename B::FloatTensor v) { return B::float_prod_dim(v, dim); },
      [in, d, dim](BackwardContext<B>& c) {
        using O = AdOps<B>;
        if (in[d] == 0) {
          c.set(0, rules::full_shape<B>(c.grad, in, 0.0));
          return;
        }
        const auto xv = c.input(0);
        const std::vector<std::size_t> axes{d};
        auto left = rules::reduce_shift_in_ones<B>(O::float_cumprod(xv, dim), d);
        auto right = O::float_flip(
            rules::reduce_shift_in_ones<B>(O::float_cumprod(O::float_flip(xv, axes), dim), d),
            axes);
        c.set(0, O::template float_binary<ir::op::Mul>(
                     O::template float_binary<ir::op::Mul>(left, right), c.grad));
      });
}

template <class B>
AdTensor<B> AdOps<B>::float_max_abs_dim(const F& x, i64 dim) {
  auto out = B::float_max_abs_dim(x.inner, dim);
  if (!rules::reduce_tracks<B>(x)) return rules::reduce_untracked<B>(x, std::move(out));
  const auto d = static_cast<std::size_t>(dim);
  auto idx =
      B::float_max_dim_with_indices(B::template float_unary<ir::op::Abs>(x.inner), dim).second;
  const AP sign{B::template float_unary<ir::op::Sign>(B::float_gather(d, x.inner, idx)), nullptr,
                x.checkpointing};
  const Shape in = B::float_shape(x.inner);
  return Recorder<B>::unary(
      "max_abs_dim", Bound::Compute, kSaveNothing, std::move(x),
      [out](const typename B::FloatTensor&) { return out; },
      [in, d, idx, sign](BackwardContext<B>& c) {
        c.set(0, rules::reduce_scatter_back<B>(
                     AdOps<B>::template float_binary<ir::op::Mul>(c.grad, sign), in, d, idx));
      });
}

namespace rules {
/// Records an op that selects elements along `dim` (max/min/median/sort/topk with indices):
/// the gradient goes back to the selected positions.
template <class B>
std::pair<AP<B>, typename B::IntTensor> record_selecting(const char* name, const AP<B>& x,
                                                         typename B::FloatTensor values,
                                                         typename B::IntTensor indices,
                                                         std::int64_t dim) {
  if (!reduce_tracks<B>(x)) return {reduce_untracked<B>(x, std::move(values)), std::move(indices)};
  AP<B> out =
      reduce_record_selected<B>(name, x, std::move(values), indices, static_cast<std::size_t>(dim));
  return {std::move(out), std::move(indices)};
}
}  // namespace rules

template <class B>
std::pair<AdTensor<B>, typename B::IntTensor> AdOps<B>::float_max_dim_with_indices(const F& x,
                                                                                   i64 dim) {
  auto [v, i] = B::float_max_dim_with_indices(x.inner, dim);
  return rules::record_selecting<B>("max_dim_with_indices", x, std::move(v), std::move(i), dim);
}
template <class B>
std::pair<AdTensor<B>, typename B::IntTensor> AdOps<B>::float_min_dim_with_indices(const F& x,
                                                                                   i64 dim) {
  auto [v, i] = B::float_min_dim_with_indices(x.inner, dim);
  return rules::record_selecting<B>("min_dim_with_indices", x, std::move(v), std::move(i), dim);
}
template <class B>
std::pair<AdTensor<B>, typename B::IntTensor> AdOps<B>::float_sort_with_indices(const F& x, i64 dim,
                                                                                bool descending) {
  auto [v, i] = B::float_sort_with_indices(x.inner, dim, descending);
  return rules::record_selecting<B>("sort_with_indices", x, std::move(v), std::move(i), dim);
}
template <class B>
std::pair<AdTensor<B>, typename B::IntTensor> AdOps<B>::float_topk_with_indices(const F& x, i64 k,
                                                                                i64 dim) {
  auto [v, i] = B::float_topk_with_indices(x.inner, k, dim);
  return rules::record_selecting<B>("topk_with_indices", x, std::move(v), std::move(i), dim);
}
// cummax / cummin with indices: the gradient goes to the element each running value came from
// (torch's cummaxmin_backward).
template <class B>
std::pair<AdTensor<B>, typename B::IntTensor> AdOps<B>::float_cummax_with_indices(const F& x,
                                                                                  i64 dim) {
  auto [v, i] = B::float_cummax_with_indices(x.inner, dim);
  return rules::record_selecting<B>("cummax_with_indices", x, std::move(v), std::move(i), dim);
}
template <class B>
std::pair<AdTensor<B>, typename B::IntTensor> AdOps<B>::float_cummin_with_indices(const F& x,
                                                                                  i64 dim) {
  auto [v, i] = B::float_cummin_with_indices(x.inner, dim);
  return rules::record_selecting<B>("cummin_with_indices", x, std::move(v), std::move(i), dim);
}
template <class B>
std::pair<AdTensor<B>, typename B::IntTensor> AdOps<B>::float_median_dim_with_indices(const F& x,
                                                                                      i64 dim) {
  auto [v, i] = B::float_median_dim_with_indices(x.inner, dim);
  return rules::record_selecting<B>("median_dim_with_indices", x, std::move(v), std::move(i), dim);
}

// var = sum((x - mean)^2) / (n - correction): d var / dx = 2 (x - mean) / (n - correction)
// (var_backward); d mean / dx = 1 / n. Each output has its own node.
template <class B>
std::pair<AdTensor<B>, AdTensor<B>> AdOps<B>::float_var_mean(const F& x, i64 dim, i64 correction) {
  auto vm = B::float_var_mean(x.inner, dim, correction);
  typename B::FloatTensor var = std::move(vm.first), mean = std::move(vm.second);
  if (!rules::reduce_tracks<B>(x)) {
    return {rules::reduce_untracked<B>(x, std::move(var)),
            rules::reduce_untracked<B>(x, std::move(mean))};
  }
  const Shape in = B::float_shape(x.inner);
  const double n = static_cast<double>(in[static_cast<std::size_t>(dim)]);
  const double denom = n - static_cast<double>(correction);
  AP v = Recorder<B>::unary(
      "var_mean(var)", Bound::Compute, save_inputs(1u), x,
      [var](const typename B::FloatTensor&) { return var; },
      [dim, denom](BackwardContext<B>& c) {
        using O = AdOps<B>;
        const auto xv = c.input(0);
        auto centered = O::template float_binary<ir::op::Sub>(xv, O::float_mean_dim(xv, dim));
        c.set(0, O::template float_binary<ir::op::Mul>(
                     O::template float_binary_scalar<ir::op::Mul>(centered, 2.0 / denom), c.grad));
      });
  AP m = Recorder<B>::unary(
      "var_mean(mean)", Bound::Compute, kSaveNothing, std::move(x),
      [mean](const typename B::FloatTensor&) { return mean; },
      [in, n](BackwardContext<B>& c) {
        c.set(0, AdOps<B>::float_expand(
                     AdOps<B>::template float_binary_scalar<ir::op::Div>(c.grad, n), in));
      });
  return {std::move(v), std::move(m)};
}

// cumsum: the gradient is the reversed cumulative sum of the output gradient.
template <class B>
AdTensor<B> AdOps<B>::float_cumsum(const F& x, i64 dim) {
  const auto d = static_cast<std::size_t>(dim);
  return Recorder<B>::unary(
      "cumsum", Bound::Compute, kSaveNothing, std::move(x),
      [dim](typename B::FloatTensor v) { return B::float_cumsum(v, dim); },
      [d](BackwardContext<B>& c) { c.set(0, rules::reduce_reverse_cumsum<B>(c.grad, d)); });
}

// cumprod (PyTorch's cumprod_backward): without zeros, grad_i = sum_{k >= i} g_k out_k / x_i.
// With zeros, per line with first zero at z: positions before z use that formula; z gets
// prod_{j < z} x_j * sum_{k >= z} g_k prod_{z < j <= k} x_j; positions after z get 0.
template <class B>
AdTensor<B> AdOps<B>::float_cumprod(const F& x, i64 dim) {
  const auto d = static_cast<std::size_t>(dim);
  return Recorder<B>::unary(
      "cumprod", Bound::Compute, Saves{1u, true}, std::move(x),
      [dim](typename B::FloatTensor v) { return B::float_cumprod(v, dim); },
      [d, dim](BackwardContext<B>& c) {
        using O = AdOps<B>;
        const auto xv = c.input(0);
        const auto& g = c.grad;
        if (grad_enabled()) {
          // Recording (create_graph): the masked formula below is exact but its own
          // derivative is not where x has zeros; PyTorch's O(n^2) differentiable form is exact
          // with or without zeros (deciding which applies would read x back to the host).
          c.set(0, rules::reduce_cumprod_backward_differentiable<B>(xv, g, d));
          return;
        }
        const auto zero = B::template float_compare_scalar<ir::op::Equal>(xv.inner, 0.0);
        auto gout = [&] {
          return rules::reduce_reverse_cumsum<B>(
              O::template float_binary<ir::op::Mul>(g, c.output()), d);
        };
        // Without zeros this is gout / x; with zeros the positions from the first zero on are
        // handled as PyTorch's cumprod_backward does.
        const auto count = B::int_cumsum(B::bool_into_int(zero, DType::I64), dim);
        const auto before = B::template int_compare_scalar<ir::op::Equal>(count, 0);
        const auto not_before = B::template bool_unary<ir::op::Not>(before);
        const auto first = B::template bool_binary<ir::op::And>(
            zero, B::template int_compare_scalar<ir::op::Equal>(count, 1));
        // Before the first zero.
        auto x_before = O::float_mask_fill(xv, not_before, 1.0);
        auto ga = O::float_mask_fill(O::template float_binary<ir::op::Div>(gout(), x_before),
                                     not_before, 0.0);
        // At the first zero: prod_{j<z} x_j = cumprod(x_before)_z.
        auto after =
            O::float_mask_fill(xv, B::template bool_binary<ir::op::Or>(before, first), 1.0);
        auto tail = rules::reduce_reverse_cumsum<B>(
            O::template float_binary<ir::op::Mul>(g, O::float_cumprod(after, dim)), d);
        auto gz = O::float_mask_fill(
            O::template float_binary<ir::op::Mul>(O::float_cumprod(x_before, dim), tail),
            B::template bool_unary<ir::op::Not>(first), 0.0);
        c.set(0, O::template float_binary<ir::op::Add>(ga, gz));
      });
}

// cummax / cummin: the gradient of each output goes to the position its value came from
// (cummaxmin_backward: scatter_add with torch.cummax's indices).
template <class B>
AdTensor<B> AdOps<B>::float_cummax(const F& x, i64 dim) {
  auto out = B::float_cummax(x.inner, dim);
  if (!rules::reduce_tracks<B>(x)) return rules::reduce_untracked<B>(x, std::move(out));
  const auto d = static_cast<std::size_t>(dim);
  auto idx = rules::reduce_scan_indices<B>(x.inner, out, d);
  return rules::reduce_record_selected<B>("cummax", std::move(x), std::move(out), std::move(idx),
                                          d);
}
template <class B>
AdTensor<B> AdOps<B>::float_cummin(const F& x, i64 dim) {
  auto out = B::float_cummin(x.inner, dim);
  if (!rules::reduce_tracks<B>(x)) return rules::reduce_untracked<B>(x, std::move(out));
  const auto d = static_cast<std::size_t>(dim);
  auto idx = rules::reduce_scan_indices<B>(x.inner, out, d);
  return rules::reduce_record_selected<B>("cummin", std::move(x), std::move(out), std::move(idx),
                                          d);
}

}  // namespace ember::autodiff
