// Op descriptions: reductions, scans and sorting (ember/backend/reduce.hpp). `dim` is
// normalised (0 <= dim < rank); reductions keep the reduced dim with size 1; index outputs
// are i64.
#pragma once

#include "ember/ir/desc.hpp"

namespace ember::ir {

/// Base of the reductions along one dim that keep its input's dtype.
struct ReduceDim {
  static constexpr Bound bound = Bound::Compute;
  std::int64_t dim = 0;
  EMBER_IR_FIELDS(dim)
  /// x's shape with `dim` of size 1 (x's dtype). Throws ShapeError for a dim out of range,
  /// or an empty dim where `nonempty`.
  TensorType reduce(const char* op, const TensorType& x, bool nonempty) const;
};

/// Sum along dim (floats accumulate in >= f32; ints in int64, result in the input dtype);
/// an empty dim gives 0.
struct SumDim : ReduceDim {
  static constexpr const char* name = "sum_dim";
  TensorType infer(const TensorType& x) const { return reduce(name, x, false); }
};
/// Product along dim; an empty dim gives 1.
struct ProdDim : ReduceDim {
  static constexpr const char* name = "prod_dim";
  TensorType infer(const TensorType& x) const { return reduce(name, x, false); }
};
/// Mean along dim (ints: floor(sum / n)).
struct MeanDim : ReduceDim {
  static constexpr const char* name = "mean_dim";
  TensorType infer(const TensorType& x) const { return reduce(name, x, false); }
};
/// max |x| along a non-empty dim; NaN propagates.
struct MaxAbsDim : ReduceDim {
  static constexpr const char* name = "max_abs_dim";
  TensorType infer(const TensorType& x) const { return reduce(name, x, true); }
};
/// max / min along a non-empty dim; NaN propagates.
struct MaxDim : ReduceDim {
  static constexpr const char* name = "max_dim";
  TensorType infer(const TensorType& x) const { return reduce(name, x, true); }
};
struct MinDim : ReduceDim {
  static constexpr const char* name = "min_dim";
  TensorType infer(const TensorType& x) const { return reduce(name, x, true); }
};
/// Index (i64) of the max / min along a non-empty dim; ties and NaN as PyTorch.
struct Argmax : ReduceDim {
  static constexpr const char* name = "argmax";
  TensorType infer(const TensorType& x) const;
};
struct Argmin : ReduceDim {
  static constexpr const char* name = "argmin";
  TensorType infer(const TensorType& x) const;
};
/// (max, index) / (min, index) / (lower median, index) along a non-empty dim.
struct MaxDimWithIndices : ReduceDim {
  static constexpr const char* name = "max_dim_with_indices";
  TensorTypes2 infer(const TensorType& x) const;
};
struct MinDimWithIndices : ReduceDim {
  static constexpr const char* name = "min_dim_with_indices";
  TensorTypes2 infer(const TensorType& x) const;
};
struct MedianDimWithIndices : ReduceDim {
  static constexpr const char* name = "median_dim_with_indices";
  TensorTypes2 infer(const TensorType& x) const;
};
/// Whether any / all elements along dim are non-zero, as Bool.
struct AnyDim : ReduceDim {
  static constexpr const char* name = "any_dim";
  TensorType infer(const TensorType& x) const;
};
struct AllDim : ReduceDim {
  static constexpr const char* name = "all_dim";
  TensorType infer(const TensorType& x) const;
};
/// Sum of every element -> [1].
struct Sum {
  static constexpr const char* name = "sum";
  static constexpr Bound bound = Bound::Compute;
  EMBER_IR_NO_FIELDS
  TensorType infer(const TensorType& x) const { return {Shape{1}, x.dtype}; }
};

/// Cumulative scans along dim (same shape); cummax / cummin propagate NaN.
struct Scan {
  static constexpr Bound bound = Bound::Compute;
  std::int64_t dim = 0;
  EMBER_IR_FIELDS(dim)
  TensorType scan(const char* op, const TensorType& x) const;
};
struct CumSum : Scan {
  static constexpr const char* name = "cumsum";
  TensorType infer(const TensorType& x) const { return scan(name, x); }
};
struct CumProd : Scan {
  static constexpr const char* name = "cumprod";
  TensorType infer(const TensorType& x) const { return scan(name, x); }
};
struct CumMax : Scan {
  static constexpr const char* name = "cummax";
  TensorType infer(const TensorType& x) const { return scan(name, x); }
};
struct CumMin : Scan {
  static constexpr const char* name = "cummin";
  TensorType infer(const TensorType& x) const { return scan(name, x); }
};

/// torch.cummax / torch.cummin: (running max / min along dim, i64 index of the element it came
/// from). Ties take the later index; NaN propagates and takes the index of the latest NaN.
struct CumMaxWithIndices : Scan {
  static constexpr const char* name = "cummax_with_indices";
  TensorTypes2 infer(const TensorType& x) const {
    const TensorType v = scan(name, x);
    return {v, {v.shape, DType::I64}};
  }
};
struct CumMinWithIndices : Scan {
  static constexpr const char* name = "cummin_with_indices";
  TensorTypes2 infer(const TensorType& x) const {
    const TensorType v = scan(name, x);
    return {v, {v.shape, DType::I64}};
  }
};

/// Stable sort along dim (NaN is the largest value) -> (values, i64 indices).
struct SortWithIndices {
  static constexpr const char* name = "sort_with_indices";
  static constexpr Bound bound = Bound::Compute;
  std::int64_t dim = 0;
  bool descending = false;
  EMBER_IR_FIELDS(dim, descending)
  TensorTypes2 infer(const TensorType& x) const;
};
/// The k largest along dim, descending (0 <= k <= n) -> (values, i64 indices).
struct TopkWithIndices {
  static constexpr const char* name = "topk_with_indices";
  static constexpr Bound bound = Bound::Compute;
  std::int64_t k = 0;
  std::int64_t dim = 0;
  EMBER_IR_FIELDS(k, dim)
  TensorTypes2 infer(const TensorType& x) const { return check(name, x); }
  /// infer under the name `op` (the front end's topk shares the rule); ValueError for k
  /// outside [0, n].
  TensorTypes2 check(const char* op, const TensorType& x) const;
};
/// (variance with sum((x - mean)^2) / (n - correction), mean) along dim.
struct VarMean {
  static constexpr const char* name = "var_mean";
  static constexpr Bound bound = Bound::Compute;
  std::int64_t dim = 0;
  std::int64_t correction = 1;
  EMBER_IR_FIELDS(dim, correction)
  TensorTypes2 infer(const TensorType& x) const;
};

}  // namespace ember::ir

// Registry rows (see ember/ir/core.hpp for the columns).
// clang-format off
#define EMBER_IR_REDUCE(X, XN) \
  X(REQ, F, F, float_sum_dim, SumDim, (const F&, i64)) \
  X(REQ, F, F, float_prod_dim, ProdDim, (const F&, i64)) \
  X(REQ, F, F, float_mean_dim, MeanDim, (const F&, i64)) \
  X(REQ, F, F, float_max_abs_dim, MaxAbsDim, (const F&, i64)) \
  X(REQ, F, FI, float_max_dim_with_indices, MaxDimWithIndices, (const F&, i64)) \
  X(REQ, F, FI, float_min_dim_with_indices, MinDimWithIndices, (const F&, i64)) \
  X(REQ, F, FI, float_median_dim_with_indices, MedianDimWithIndices, (const F&, i64)) \
  X(REQ, F, F, float_cumsum, CumSum, (const F&, i64)) \
  X(REQ, F, F, float_cumprod, CumProd, (const F&, i64)) \
  X(REQ, F, F, float_cummax, CumMax, (const F&, i64)) \
  X(REQ, F, F, float_cummin, CumMin, (const F&, i64)) \
  X(REQ, F, FI, float_cummax_with_indices, CumMaxWithIndices, (const F&, i64)) \
  X(REQ, F, FI, float_cummin_with_indices, CumMinWithIndices, (const F&, i64)) \
  X(REQ, F, FI, float_sort_with_indices, SortWithIndices, (const F&, i64, bool)) \
  X(REQ, F, FI, float_topk_with_indices, TopkWithIndices, (const F&, i64, i64)) \
  X(REQ, F, FF, float_var_mean, VarMean, (const F&, i64, i64)) \
  X(REQ, N, Bo, float_any_dim, AnyDim, (const F&, i64)) \
  X(REQ, N, Bo, float_all_dim, AllDim, (const F&, i64)) \
  X(OPT, F, F, float_sum, Sum, (const F&)) \
  X(OPT, F, F, float_max_dim, MaxDim, (const F&, i64)) \
  X(OPT, F, F, float_min_dim, MinDim, (const F&, i64)) \
  X(OPT, N, I, float_argmax, Argmax, (const F&, i64)) \
  X(OPT, N, I, float_argmin, Argmin, (const F&, i64)) \
  X(REQ, N, I, int_sum_dim, SumDim, (const I&, i64)) \
  X(REQ, N, I, int_prod_dim, ProdDim, (const I&, i64)) \
  X(REQ, N, I, int_mean_dim, MeanDim, (const I&, i64)) \
  X(REQ, N, I, int_max_abs_dim, MaxAbsDim, (const I&, i64)) \
  X(REQ, N, II, int_max_dim_with_indices, MaxDimWithIndices, (const I&, i64)) \
  X(REQ, N, II, int_min_dim_with_indices, MinDimWithIndices, (const I&, i64)) \
  X(REQ, N, II, int_median_dim_with_indices, MedianDimWithIndices, (const I&, i64)) \
  X(REQ, N, I, int_cumsum, CumSum, (const I&, i64)) \
  X(REQ, N, I, int_cumprod, CumProd, (const I&, i64)) \
  X(REQ, N, I, int_cummax, CumMax, (const I&, i64)) \
  X(REQ, N, I, int_cummin, CumMin, (const I&, i64)) \
  X(REQ, N, II, int_cummax_with_indices, CumMaxWithIndices, (const I&, i64)) \
  X(REQ, N, II, int_cummin_with_indices, CumMinWithIndices, (const I&, i64)) \
  X(REQ, N, II, int_sort_with_indices, SortWithIndices, (const I&, i64, bool)) \
  X(REQ, N, II, int_topk_with_indices, TopkWithIndices, (const I&, i64, i64)) \
  X(REQ, N, Bo, int_any_dim, AnyDim, (const I&, i64)) \
  X(REQ, N, Bo, int_all_dim, AllDim, (const I&, i64)) \
  X(OPT, N, I, int_sum, Sum, (const I&)) \
  X(OPT, N, I, int_max_dim, MaxDim, (const I&, i64)) \
  X(OPT, N, I, int_min_dim, MinDim, (const I&, i64)) \
  X(OPT, N, I, int_argmax, Argmax, (const I&, i64)) \
  X(OPT, N, I, int_argmin, Argmin, (const I&, i64)) \
  X(REQ, N, Bo, bool_any_dim, AnyDim, (const Bo&, i64)) \
  X(REQ, N, Bo, bool_all_dim, AllDim, (const Bo&, i64))
// clang-format on
