// CPU backend: reduce functions of the contract (see ember/backend/reduce.hpp).
//
// The kernels (src/cpu/reduce.cpp, reduce_scan.cpp, reduce_sort.cpp) are written once over
// every dtype and exposed under Burn's kind-prefixed names. Inputs may be any strided view;
// outputs are new contiguous tensors. `dim` is already normalised by the front end.
#pragma once

#include <cstdint>
#include <utility>

#include "ember/cpu/tensor.hpp"

namespace ember::cpu {

struct ReduceOps {
  using P = CpuTensor;
  using Pair = std::pair<CpuTensor, CpuTensor>;
  using i64 = std::int64_t;

  // ---- generic kernels (any dtype of the kind; shapes keep `dim` with size 1) --------
  /// Sum of every element -> [1]. Floats: blocked SIMD sums (f32 lanes, f64 block totals);
  /// ints: int64 accumulation. Empty -> 0.
  static P sum_all(const P& x);
  static P sum_dim(const P& x, i64 dim);
  static P prod_dim(const P& x, i64 dim);
  /// Floats: sum / n (NaN for n = 0); ints: floor(sum / n) (0 for n = 0).
  static P mean_dim(const P& x, i64 dim);
  /// NaN propagates (torch.amax); dim must be non-empty.
  static P max_dim(const P& x, i64 dim);
  static P min_dim(const P& x, i64 dim);
  static P max_abs_dim(const P& x, i64 dim);
  /// Int (i64) index of the max/min; ties -> lowest index, NaN counts as the max/min.
  static P argmax(const P& x, i64 dim);
  static P argmin(const P& x, i64 dim);
  static Pair max_dim_with_indices(const P& x, i64 dim);
  static Pair min_dim_with_indices(const P& x, i64 dim);
  /// (variance with `correction` (1 = unbiased), mean), floats, two-pass in f64.
  static Pair var_mean(const P& x, i64 dim, i64 correction);
  /// Bool result: any / all element != 0 (NaN counts as non-zero).
  static P any_dim(const P& x, i64 dim);
  static P all_dim(const P& x, i64 dim);

  // reduce_scan.cpp
  static P cumsum(const P& x, i64 dim);
  static P cumprod(const P& x, i64 dim);
  static P cummax(const P& x, i64 dim);
  static P cummin(const P& x, i64 dim);

  // reduce_sort.cpp
  /// Stable sort along dim; NaN last ascending, first descending. (values, i64 indices).
  static Pair sort_with_indices(const P& x, i64 dim, bool descending);
  /// k largest along dim, sorted descending (ties -> lower index first).
  static Pair topk_with_indices(const P& x, i64 k, i64 dim);
  /// Lower median ((n-1)/2-th smallest); a NaN in the line gives NaN and its index.
  static Pair median_dim_with_indices(const P& x, i64 dim);
};

}  // namespace ember::cpu
