// Autodiff<B>: backward rules of reductions, scans and sorting.
#pragma once

#include "ember/autodiff/impl/common.hpp"

namespace ember::autodiff {

template <class B>
AdTensor<B> AdReduceOps<B>::float_sum_dim(AP x, i64 dim) {
  const Shape in = B::float_shape(x.inner);
  return Recorder<B>::unary(
      "sum_dim", Bound::Compute, kSaveNothing, std::move(x),
      [dim](typename B::FloatTensor v) { return B::float_sum_dim(v, dim); },
      [in](BackwardContext<B>& c) { c.set(0, AdOps<B>::float_expand(c.grad, in)); });
}

template <class B>
AdTensor<B> AdReduceOps<B>::float_mean_dim(AP x, i64 dim) {
  const Shape in = B::float_shape(x.inner);
  const double n = static_cast<double>(in[static_cast<std::size_t>(dim)]);
  return Recorder<B>::unary(
      "mean_dim", Bound::Compute, kSaveNothing, std::move(x),
      [dim](typename B::FloatTensor v) { return B::float_mean_dim(v, dim); },
      [in, n](BackwardContext<B>& c) {
        c.set(0, AdOps<B>::float_expand(AdOps<B>::float_div_scalar(c.grad, n), in));
      });
}

// ---- not yet differentiable (forward only) --------------------------------------------------
#define EMBER_AD_NO_RULE_DIM(name)                                   \
  template <class B>                                                 \
  AdTensor<B> AdReduceOps<B>::float_##name(AP x, i64 dim) {          \
    auto out = B::float_##name(x.inner, dim);                        \
    return rules::no_rule<B>(#name, {std::move(x)}, std::move(out)); \
  }
EMBER_AD_NO_RULE_DIM(prod_dim)
EMBER_AD_NO_RULE_DIM(max_abs_dim)
EMBER_AD_NO_RULE_DIM(cumsum)
EMBER_AD_NO_RULE_DIM(cumprod)
EMBER_AD_NO_RULE_DIM(cummax)
EMBER_AD_NO_RULE_DIM(cummin)
#undef EMBER_AD_NO_RULE_DIM

#define EMBER_AD_NO_RULE_PAIR(name, params, args)                                             \
  template <class B>                                                                          \
  std::pair<AdTensor<B>, typename B::IntTensor> AdReduceOps<B>::float_##name params {         \
    auto [values, indices] = B::float_##name args;                                            \
    return {rules::no_rule<B>(#name, {std::move(x)}, std::move(values)), std::move(indices)}; \
  }
EMBER_AD_NO_RULE_PAIR(max_dim_with_indices, (AP x, i64 dim), (x.inner, dim))
EMBER_AD_NO_RULE_PAIR(min_dim_with_indices, (AP x, i64 dim), (x.inner, dim))
EMBER_AD_NO_RULE_PAIR(sort_with_indices, (AP x, i64 dim, bool descending),
                      (x.inner, dim, descending))
EMBER_AD_NO_RULE_PAIR(topk_with_indices, (AP x, i64 k, i64 dim), (x.inner, k, dim))
EMBER_AD_NO_RULE_PAIR(median_dim_with_indices, (AP x, i64 dim), (x.inner, dim))
#undef EMBER_AD_NO_RULE_PAIR

template <class B>
std::pair<AdTensor<B>, AdTensor<B>> AdReduceOps<B>::float_var_mean(AP x, i64 dim, i64 correction) {
  auto [var, mean] = B::float_var_mean(x.inner, dim, correction);
  return {rules::no_rule<B>("var_mean", {x}, std::move(var)),
          rules::no_rule<B>("var_mean", {x}, std::move(mean))};
}

}  // namespace ember::autodiff
