// Autodiff<B>: reductions, scans and sorting (rules in ember/autodiff/impl/reduce.hpp).
#pragma once

#include <cstdint>
#include <utility>

#include "ember/autodiff/ops_core.hpp"

namespace ember::autodiff {

template <class B>
struct AdReduceOps {
  using AP = AdTensor<B>;
  using IP = typename B::IntTensor;
  using BP = typename B::BoolTensor;
  using i64 = std::int64_t;

  static AP float_sum_dim(AP x, i64 dim);
  static AP float_prod_dim(AP x, i64 dim);
  static AP float_mean_dim(AP x, i64 dim);
  static AP float_max_abs_dim(AP x, i64 dim);
  static std::pair<AP, IP> float_max_dim_with_indices(AP x, i64 dim);
  static std::pair<AP, IP> float_min_dim_with_indices(AP x, i64 dim);
  /// (variance, mean); each output has its own node.
  static std::pair<AP, AP> float_var_mean(AP x, i64 dim, i64 correction);
  static AP float_cumsum(AP x, i64 dim);
  static AP float_cumprod(AP x, i64 dim);
  static AP float_cummax(AP x, i64 dim);
  static AP float_cummin(AP x, i64 dim);
  static std::pair<AP, IP> float_sort_with_indices(AP x, i64 dim, bool descending);
  static std::pair<AP, IP> float_topk_with_indices(AP x, i64 k, i64 dim);
  static std::pair<AP, IP> float_median_dim_with_indices(AP x, i64 dim);
  static BP float_any_dim(const AP& x, i64 dim) { return B::float_any_dim(x.inner, dim); }
  static BP float_all_dim(const AP& x, i64 dim) { return B::float_all_dim(x.inner, dim); }

  EMBER_AD_FORWARD(int_sum)
  EMBER_AD_FORWARD(int_sum_dim)
  EMBER_AD_FORWARD(int_prod_dim)
  EMBER_AD_FORWARD(int_mean_dim)
  EMBER_AD_FORWARD(int_max_abs_dim)
  EMBER_AD_FORWARD(int_max_dim)
  EMBER_AD_FORWARD(int_min_dim)
  EMBER_AD_FORWARD(int_argmax)
  EMBER_AD_FORWARD(int_argmin)
  EMBER_AD_FORWARD(int_max_dim_with_indices)
  EMBER_AD_FORWARD(int_min_dim_with_indices)
  EMBER_AD_FORWARD(int_cumsum)
  EMBER_AD_FORWARD(int_cumprod)
  EMBER_AD_FORWARD(int_cummax)
  EMBER_AD_FORWARD(int_cummin)
  EMBER_AD_FORWARD(int_sort_with_indices)
  EMBER_AD_FORWARD(int_topk_with_indices)
  EMBER_AD_FORWARD(int_median_dim_with_indices)
  EMBER_AD_FORWARD(int_any_dim)
  EMBER_AD_FORWARD(int_all_dim)
  EMBER_AD_FORWARD(bool_any_dim)
  EMBER_AD_FORWARD(bool_all_dim)
};

}  // namespace ember::autodiff
