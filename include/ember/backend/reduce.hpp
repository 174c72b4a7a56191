// Backend contract: reduce functions. See core.hpp for the conventions.
//
// `dim` is normalised (0 <= dim < rank) and checked by the front end; reductions keep the
// reduced dim with size 1. For X in {float, int}, P = X's primitive, I = IntTensor (i64):
//   X_sum_dim(const P&, dim) -> P          sum (floats accumulate in >= f32 with blocked /
//                                          pairwise sums; ints in int64); empty dim -> 0
//   X_prod_dim(const P&, dim) -> P         product; empty dim -> 1
//   X_mean_dim(const P&, dim) -> P         floats: sum / n; ints: floor(sum / n)
//   X_max_abs_dim(const P&, dim) -> P      max |x|, NaN propagates
//   X_max_dim_with_indices / X_min_dim_with_indices(const P&, dim) -> pair<P, I>
//                                          NaN propagates; index of the first max/min
//                                          (ties -> lowest index, a NaN counts as the max/min)
//   X_cumsum / X_cumprod / X_cummax / X_cummin(const P&, dim) -> P (same shape; cummax/cummin
//                                          propagate NaN)
//   X_sort_with_indices(const P&, dim, bool descending) -> pair<P, I>  stable; NaN is the
//                                          largest value
//   X_topk_with_indices(const P&, k, dim) -> pair<P, I>   k largest, descending; 0 <= k <= n
//   X_median_dim_with_indices(const P&, dim) -> pair<P, I>  lower median; NaN propagates
//   X_any_dim / X_all_dim(const P&, dim) -> BoolTensor, also bool_any_dim / bool_all_dim
//   float_var_mean(const P&, dim, correction) -> pair<P, P>  (variance with
//                                          sum((x-mean)^2) / (n - correction), mean)
// Max/min/argmax/median/max_abs dims are never empty (the front end throws).
//
// Optional overrides detected by the front end (defaults are composites of the above):
//   X_sum(const P&) -> P of shape [1]; X_max_dim / X_min_dim(const P&, dim) -> P;
//   X_argmax / X_argmin(const P&, dim) -> I.
#pragma once

#include <cstdint>
#include <utility>

#include "ember/backend/core.hpp"

namespace ember {}  // namespace ember
