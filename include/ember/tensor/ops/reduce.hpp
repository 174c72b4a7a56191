// Tensor front end: reduce methods, mixed into Tensor<B, D, K>.
//
// Reductions follow Burn's API: `X_dim(dim)` keeps the reduced dim with size 1, full
// reductions (`sum()`, `max()`, ...) return shape [1]. Numerics follow PyTorch: NaN
// propagates through max/min/median/cummax/cummin, argmax/argmin take the lowest index on
// ties (a NaN counts as the max/min), sort orders NaN last ascending / first descending.
// Negative dims count from the end. Every check happens here (see each method).
#pragma once

#include <concepts>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "ember/ir/reduce.hpp"
#include "ember/tensor/fwd.hpp"
#include "ember/tensor/infer.hpp"

namespace ember::detail {

/// Calls B::float_<fn>, B::int_<fn> or B::bool_<fn> for kind K.
#define EMBER_REDUCE_CALL(fn, ...)             \
  [&]() -> decltype(auto) {                    \
    if constexpr (std::is_same_v<K, Float>)    \
      return B::float_##fn(__VA_ARGS__);       \
    else if constexpr (std::is_same_v<K, Int>) \
      return B::int_##fn(__VA_ARGS__);         \
    else                                       \
      return B::bool_##fn(__VA_ARGS__);        \
  }()

/// True if the backend has the optional B::float_<fn> / B::int_<fn> for kind K.
#define EMBER_REDUCE_HAS(fn, ...)                                            \
  ((std::is_same_v<K, Float> && requires { B::float_##fn(__VA_ARGS__); }) || \
   (std::is_same_v<K, Int> && requires { B::int_##fn(__VA_ARGS__); }))

template <class B, std::size_t D, class K>
class ReduceApi {
  using T = Tensor<B, D, K>;
  using TI = Tensor<B, D, Int>;
  using TB = Tensor<B, D, Bool>;
  using T1 = Tensor<B, 1, K>;
  using P = PrimitiveOf<B, K>;
  static constexpr bool kNumeric = !std::is_same_v<K, Bool>;

 public:
  // ---- sums and means ------------------------------------------------------------
  /// Sum of all elements -> [1]. Float: accumulates in f32 or better with blocked sums;
  /// Int: in int64 (result in the input dtype). Empty -> 0. (torch.sum / Burn Tensor::sum)
  T1 sum() const requires kNumeric {
    if constexpr (EMBER_REDUCE_HAS(sum, self().primitive())) {
      return T1(EMBER_REDUCE_CALL(sum, self().primitive()));
    } else {
      return T1(EMBER_REDUCE_CALL(sum_dim, flat(), 0));
    }
  }
  /// Sum along `dim` (kept with size 1): [.., n, ..] -> [.., 1, ..]. Empty dim -> 0.
  /// Throws ShapeError if dim is out of range.
  T sum_dim(std::int64_t dim) const requires kNumeric {
    return T(EMBER_REDUCE_CALL(sum_dim, self().primitive(), nd("sum_dim", dim)));
  }
  /// Mean of all elements -> [1]. Float: NaN for an empty tensor; Int: floor(sum / n)
  /// (integer result, as Burn), 0 when empty.
  T1 mean() const requires kNumeric { return T1(EMBER_REDUCE_CALL(mean_dim, flat(), 0)); }
  /// Mean along `dim` (kept). Throws ShapeError if dim is out of range.
  T mean_dim(std::int64_t dim) const requires kNumeric {
    return T(EMBER_REDUCE_CALL(mean_dim, self().primitive(), nd("mean_dim", dim)));
  }
  /// Product of all elements -> [1]; empty -> 1.
  T1 prod() const requires kNumeric { return T1(EMBER_REDUCE_CALL(prod_dim, flat(), 0)); }
  /// Product along `dim` (kept); empty dim -> 1. Throws ShapeError if dim is out of range.
  T prod_dim(std::int64_t dim) const requires kNumeric {
    return T(EMBER_REDUCE_CALL(prod_dim, self().primitive(), nd("prod_dim", dim)));
  }

  // ---- max / min -----------------------------------------------------------------
  /// Largest element -> [1]; NaN propagates (torch.max). Throws ShapeError if empty.
  T1 max() const requires kNumeric {
    check_nonempty("max");
    return T1(max_dim_prim(flat(), 0));
  }
  /// Largest along `dim` (kept); NaN propagates. Throws ShapeError if dim is out of range
  /// or has size 0.
  T max_dim(std::int64_t dim) const requires kNumeric {
    return T(max_dim_prim(self().primitive(), nd_nonempty("max_dim", dim)));
  }
  /// Smallest element -> [1]; NaN propagates. Throws ShapeError if empty.
  T1 min() const requires kNumeric {
    check_nonempty("min");
    return T1(min_dim_prim(flat(), 0));
  }
  /// Smallest along `dim` (kept). Throws ShapeError if dim is out of range or empty.
  T min_dim(std::int64_t dim) const requires kNumeric {
    return T(min_dim_prim(self().primitive(), nd_nonempty("min_dim", dim)));
  }
  /// max(|x|) over all elements -> [1]. Throws ShapeError if empty.
  T1 max_abs() const requires kNumeric {
    check_nonempty("max_abs");
    return T1(EMBER_REDUCE_CALL(max_abs_dim, flat(), 0));
  }
  /// max(|x|) along `dim` (kept). Throws ShapeError if dim is out of range or empty.
  T max_abs_dim(std::int64_t dim) const requires kNumeric {
    return T(EMBER_REDUCE_CALL(max_abs_dim, self().primitive(), nd_nonempty("max_abs_dim", dim)));
  }
  /// Index (i64) of the max along `dim` (kept); ties -> lowest index, NaN counts as the
  /// max (torch.argmax). Throws ShapeError if dim is out of range or empty.
  TI argmax(std::int64_t dim) const requires kNumeric {
    const auto d = nd_nonempty("argmax", dim);
    if constexpr (EMBER_REDUCE_HAS(argmax, self().primitive(), d))
      return TI(EMBER_REDUCE_CALL(argmax, self().primitive(), d));
    else
      return TI(EMBER_REDUCE_CALL(max_dim_with_indices, self().primitive(), d).second);
  }
  /// Index of the min along `dim` (kept); ties -> lowest index, NaN counts as the min.
  /// Throws ShapeError if dim is out of range or empty.
  TI argmin(std::int64_t dim) const requires kNumeric {
    const auto d = nd_nonempty("argmin", dim);
    if constexpr (EMBER_REDUCE_HAS(argmin, self().primitive(), d))
      return TI(EMBER_REDUCE_CALL(argmin, self().primitive(), d));
    else
      return TI(EMBER_REDUCE_CALL(min_dim_with_indices, self().primitive(), d).second);
  }
  /// (max along dim, its index), both with dim kept (torch.max(x, dim, keepdim=True)).
  /// Throws ShapeError if dim is out of range or empty.
  std::pair<T, TI> max_dim_with_indices(std::int64_t dim) const requires kNumeric {
    auto [v, i] = EMBER_REDUCE_CALL(max_dim_with_indices, self().primitive(),
                                    nd_nonempty("max_dim_with_indices", dim));
    return {T(std::move(v)), TI(std::move(i))};
  }
  /// (running max along `dim`, the i64 index it came from) (torch.cummax): ties take the later
  /// index; NaN propagates and takes the index of the latest NaN. The gradient flows to those
  /// indices. Throws ShapeError if dim is out of range.
  std::pair<T, TI> cummax_with_indices(std::int64_t dim) const requires kNumeric {
    auto [v, i] =
        EMBER_REDUCE_CALL(cummax_with_indices, self().primitive(), nd("cummax_with_indices", dim));
    return {T(std::move(v)), TI(std::move(i))};
  }
  /// (running min along `dim`, its index) (torch.cummin); as cummax_with_indices.
  std::pair<T, TI> cummin_with_indices(std::int64_t dim) const requires kNumeric {
    auto [v, i] =
        EMBER_REDUCE_CALL(cummin_with_indices, self().primitive(), nd("cummin_with_indices", dim));
    return {T(std::move(v)), TI(std::move(i))};
  }
  /// (min along dim, its index). Throws ShapeError if dim is out of range or empty.
  std::pair<T, TI> min_dim_with_indices(std::int64_t dim) const requires kNumeric {
    auto [v, i] = EMBER_REDUCE_CALL(min_dim_with_indices, self().primitive(),
                                    nd_nonempty("min_dim_with_indices", dim));
    return {T(std::move(v)), TI(std::move(i))};
  }

  // ---- variance (Float) -------------------------------------------------------------
  /// Unbiased variance along `dim` (kept): sum((x - mean)^2) / (n - 1); n = 1 gives NaN
  /// (torch.var). Throws ShapeError if dim is out of range.
  T var(std::int64_t dim) const requires std::same_as<K, Float> {
    return T(B::float_var_mean(self().primitive(), nd("var", dim), 1).first);
  }
  /// Biased variance: sum((x - mean)^2) / n (torch.var(correction=0)).
  T var_bias(std::int64_t dim) const requires std::same_as<K, Float> {
    return T(B::float_var_mean(self().primitive(), nd("var_bias", dim), 0).first);
  }
  /// (unbiased variance, mean) along `dim` (torch.var_mean).
  std::pair<T, T> var_mean(std::int64_t dim) const requires std::same_as<K, Float> {
    auto [v, m] = B::float_var_mean(self().primitive(), nd("var_mean", dim), 1);
    return {T(std::move(v)), T(std::move(m))};
  }
  /// (biased variance, mean) along `dim`.
  std::pair<T, T> var_mean_bias(std::int64_t dim) const requires std::same_as<K, Float> {
    auto [v, m] = B::float_var_mean(self().primitive(), nd("var_mean_bias", dim), 0);
    return {T(std::move(v)), T(std::move(m))};
  }

  // ---- scans -------------------------------------------------------------------------
  /// Cumulative sum along `dim` (same shape; torch.cumsum). Throws ShapeError for a bad dim.
  T cumsum(std::int64_t dim) const requires kNumeric {
    return T(EMBER_REDUCE_CALL(cumsum, self().primitive(), nd("cumsum", dim)));
  }
  /// Cumulative product along `dim` (torch.cumprod).
  T cumprod(std::int64_t dim) const requires kNumeric {
    return T(EMBER_REDUCE_CALL(cumprod, self().primitive(), nd("cumprod", dim)));
  }
  /// Running max along `dim`; a NaN propagates to the end of its line (torch.cummax values).
  T cummax(std::int64_t dim) const requires kNumeric {
    return T(EMBER_REDUCE_CALL(cummax, self().primitive(), nd("cummax", dim)));
  }
  /// Running min along `dim` (torch.cummin values).
  T cummin(std::int64_t dim) const requires kNumeric {
    return T(EMBER_REDUCE_CALL(cummin, self().primitive(), nd("cummin", dim)));
  }

  // ---- sorting -----------------------------------------------------------------------
  /// Stable sort along `dim`; NaN last ascending, first descending (torch.sort(stable=True)).
  T sort(std::int64_t dim, bool descending = false) const requires kNumeric {
    return sort_with_indices(dim, descending).first;
  }
  /// (sorted values, i64 indices into the input along dim).
  std::pair<T, TI> sort_with_indices(std::int64_t dim,
                                     bool descending = false) const requires kNumeric {
    auto [v, i] =
        EMBER_REDUCE_CALL(sort_with_indices, self().primitive(), nd("sort", dim), descending);
    return {T(std::move(v)), TI(std::move(i))};
  }
  /// Indices that sort along `dim` (torch.argsort(stable=True)).
  TI argsort(std::int64_t dim, bool descending = false) const requires kNumeric {
    auto [v, i] =
        EMBER_REDUCE_CALL(sort_with_indices, self().primitive(), nd("argsort", dim), descending);
    return TI(std::move(i));
  }
  /// The k largest along `dim`, sorted descending: [.., n, ..] -> [.., k, ..] (torch.topk).
  /// Throws ShapeError for a bad dim, ValueError unless 0 <= k <= n.
  T topk(std::int64_t k, std::int64_t dim) const requires kNumeric {
    return topk_impl("topk", k, dim).first;
  }
  /// (k largest values, their indices).
  std::pair<T, TI> topk_with_indices(std::int64_t k, std::int64_t dim) const requires kNumeric {
    return topk_impl("topk_with_indices", k, dim);
  }
  /// Lower median of all elements -> [1] (torch.median()); NaN propagates.
  /// Throws ShapeError if empty.
  T1 median() const requires kNumeric {
    check_nonempty("median");
    return T1(EMBER_REDUCE_CALL(median_dim_with_indices, flat(), 0).first);
  }
  /// Lower median along `dim` (kept). Throws ShapeError if dim is out of range or empty.
  T median_dim(std::int64_t dim) const requires kNumeric {
    return median_dim_with_indices(dim).first;
  }
  /// (lower median along dim, its index) (torch.median(x, dim, keepdim=True)).
  std::pair<T, TI> median_dim_with_indices(std::int64_t dim) const requires kNumeric {
    auto [v, i] = EMBER_REDUCE_CALL(median_dim_with_indices, self().primitive(),
                                    nd_nonempty("median_dim", dim));
    return {T(std::move(v)), TI(std::move(i))};
  }

  // ---- boolean reductions (every kind) ----------------------------------------------
  /// True if any element is non-zero (NaN counts as non-zero) -> Bool [1]; empty -> false.
  Tensor<B, 1, Bool> any() const {
    return Tensor<B, 1, Bool>(EMBER_REDUCE_CALL(any_dim, flat(), 0));
  }
  /// True if every element is non-zero -> Bool [1]; empty -> true.
  Tensor<B, 1, Bool> all() const {
    return Tensor<B, 1, Bool>(EMBER_REDUCE_CALL(all_dim, flat(), 0));
  }
  /// any along `dim` (kept) -> Bool. Throws ShapeError if dim is out of range.
  TB any_dim(std::int64_t dim) const {
    return TB(EMBER_REDUCE_CALL(any_dim, self().primitive(), nd("any_dim", dim)));
  }
  /// all along `dim` (kept) -> Bool. Throws ShapeError if dim is out of range.
  TB all_dim(std::int64_t dim) const {
    return TB(EMBER_REDUCE_CALL(all_dim, self().primitive(), nd("all_dim", dim)));
  }

 protected:
  const T& self() const { return static_cast<const T&>(*this); }
  T& self() { return static_cast<T&>(*this); }

 private:
  static std::int64_t nd(const char* op, std::int64_t dim) {
    return static_cast<std::int64_t>(normalize_dim(op, dim, D));
  }
  std::int64_t nd_nonempty(const char* op, std::int64_t dim) const {
    const auto d = nd(op, dim);
    // Same rule as ir::ReduceDim::reduce(.., nonempty=true), but the message names the dim
    // as the caller wrote it (e.g. -2), not the normalized one.
    if (self().shape()[static_cast<std::size_t>(d)] == 0)
      fail<ShapeError>(op, "cannot reduce over dim ", dim, " of size 0 of tensor of shape ",
                       self().shape());
    return d;
  }
  void check_nonempty(const char* op) const {
    if (self().numel() == 0) {
      fail<ShapeError>(op, "cannot reduce an empty tensor of shape ", self().shape());
    }
  }
  /// The primitive reshaped to [numel].
  P flat() const {
    const std::int64_t n = self().numel();
    if constexpr (std::is_same_v<K, Float>)
      return B::float_reshape(self().primitive(), Shape{n});
    else if constexpr (std::is_same_v<K, Int>)
      return B::int_reshape(self().primitive(), Shape{n});
    else
      return B::bool_reshape(self().primitive(), Shape{n});
  }
  static P max_dim_prim(const P& p, std::int64_t d) requires kNumeric {
    if constexpr (EMBER_REDUCE_HAS(max_dim, p, d))
      return EMBER_REDUCE_CALL(max_dim, p, d);
    else
      return EMBER_REDUCE_CALL(max_dim_with_indices, p, d).first;
  }
  static P min_dim_prim(const P& p, std::int64_t d) requires kNumeric {
    if constexpr (EMBER_REDUCE_HAS(min_dim, p, d))
      return EMBER_REDUCE_CALL(min_dim, p, d);
    else
      return EMBER_REDUCE_CALL(min_dim_with_indices, p, d).first;
  }
  std::pair<T, TI> topk_impl(const char* op, std::int64_t k,
                             std::int64_t dim) const requires kNumeric {
    const auto d = nd(op, dim);
    ir::TopkWithIndices{k, d}.check(op, ir_type(self()));
    auto [v, i] = EMBER_REDUCE_CALL(topk_with_indices, self().primitive(), k, d);
    return {T(std::move(v)), TI(std::move(i))};
  }
};

#undef EMBER_REDUCE_CALL
#undef EMBER_REDUCE_HAS

}  // namespace ember::detail
