// Tensor front end: linalg methods, mixed into Tensor<B, D, K>.
//
// matmul is a required backend function; dot, outer and trace are composites of matmul
// and reshape; diag and cross call optional backend functions (float_diag, float_cross,
// ...) that a backend provides until the layout/element-wise composites replace them.
// Free functions (vector_norm, cosine_similarity, ...) are in ember/tensor/linalg.hpp.
#pragma once

#include <concepts>
#include <cstdint>

#include "ember/core/autocast.hpp"
#include "ember/core/shape.hpp"
#include "ember/ir/linalg.hpp"
#include "ember/tensor/fwd.hpp"
#include "ember/tensor/infer.hpp"

namespace ember::detail {

template <class B>
inline constexpr bool linalg_always_false = false;

/// Reshape of a primitive of kind K with an exact target shape (no -1 / 0 rules).
template <class B, class K>
PrimitiveOf<B, K> linalg_reshape(PrimitiveOf<B, K> p, const Shape& s) {
  if constexpr (std::is_same_v<K, Float>)
    return B::float_reshape(std::move(p), s);
  else
    return B::int_reshape(std::move(p), s);
}

template <class B, std::size_t D, class K>
class LinalgApi {
  using T = Tensor<B, D, K>;

 public:
  /// Matrix product with broadcast batch dims (torch.matmul for equal ranks, Burn's matmul):
  /// [..., m, k] x [..., k, n] -> [..., m, n]. Float or Int; mixed dtypes of one kind
  /// promote (promote_types). k == 0 gives zeros. Under Autocast, float operands are cast
  /// to the autocast dtype first (ember/core/autocast.hpp).
  /// Throws ShapeError if the inner dims differ or the batch dims do not broadcast.
  T matmul(const T& other) const requires(NumericKind<K>&& D >= 2) {
    DType dt = promote_types(self().dtype(), other.dtype());
    if constexpr (std::is_same_v<K, Float>) dt = autocast_lower_dtype(dt);
    ir_infer(ir::Matmul{}, ir_type_as(self(), dt), ir_type_as(other, dt));
    const T a = self().cast(dt), b = other.cast(dt);
    if constexpr (std::is_same_v<K, Float>)
      return T(B::float_matmul(a.primitive(), b.primitive()));
    else
      return T(B::int_matmul(a.primitive(), b.primitive()));
  }

  /// Dot product of two vectors: [n] . [n] -> [1] (torch.dot). Float or Int.
  /// Throws ShapeError if the lengths differ.
  Tensor<B, 1, K> dot(const Tensor<B, 1, K>& other) const requires(NumericKind<K>&& D == 1) {
    const Shape ls = self().shape(), rs = other.shape();
    if (ls[0] != rs[0]) fail<ShapeError>("dot", "vectors of different lengths: ", ls, " and ", rs);
    const std::int64_t n = ls[0];
    using M = Tensor<B, 2, K>;
    const M a(linalg_reshape<B, K>(self().primitive(), Shape{1, n}));
    const M b(linalg_reshape<B, K>(other.primitive(), Shape{n, 1}));
    return Tensor<B, 1, K>(linalg_reshape<B, K>(a.matmul(b).into_primitive(), Shape{1}));
  }

  /// Outer product (torch.outer, batched as Burn's linalg::outer):
  /// [..., m] x [..., n] -> [..., m, n], batch dims broadcast. Float or Int.
  /// Throws ShapeError if the batch dims do not broadcast.
  Tensor<B, D + 1, K> outer(const T& other) const requires NumericKind<K> {
    const Shape ls = self().shape(), rs = other.shape();
    ir::check::batch_broadcast("outer", ls, rs, D - 1);
    Shape la = ls, rb = rs;
    la.dims.push_back(1);
    rb.dims.insert(rb.dims.end() - 1, 1);
    using M = Tensor<B, D + 1, K>;
    const M a(linalg_reshape<B, K>(self().primitive(), la));
    const M b(linalg_reshape<B, K>(other.primitive(), rb));
    return a.matmul(b);
  }

  /// Cross product of 3-vectors along `dim` (torch.linalg.cross): shapes broadcast, the
  /// result has the broadcast shape. Float or Int; mixed dtypes promote.
  /// Throws ShapeError if `dim` is out of range, its size is not 3 in both operands, or
  /// the shapes do not broadcast.
  T cross(const T& other, std::int64_t dim) const requires NumericKind<K> {
    const std::size_t d = normalize_dim("cross", dim, D);
    const DType dt = promote_types(self().dtype(), other.dtype());
    ir_infer(ir::Cross{d}, ir_type_as(self(), dt), ir_type_as(other, dt));
    const T a = self().cast(dt), b = other.cast(dt);
    if constexpr (std::is_same_v<K, Float>) {
      if constexpr (requires { B::float_cross(a.primitive(), b.primitive(), d); })
        return T(B::float_cross(a.primitive(), b.primitive(), d));
      else
        static_assert(linalg_always_false<B>, "cross needs B::float_cross for now");
    } else {
      if constexpr (requires { B::int_cross(a.primitive(), b.primitive(), d); })
        return T(B::int_cross(a.primitive(), b.primitive(), d));
      else
        static_assert(linalg_always_false<B>, "cross needs B::int_cross for now");
    }
  }

  /// Main diagonal of the last two dims (Burn's linalg::diag, torch.diagonal(x, 0, -2, -1)):
  /// [..., m, n] -> [..., min(m, n)]. Float or Int. May share storage with the input.
  Tensor<B, (D >= 2 ? D - 1 : 1), K> diag() const requires(NumericKind<K>&& D >= 2) {
    using R = Tensor<B, D - 1, K>;
    const auto& p = self().primitive();
    if constexpr (std::is_same_v<K, Float>) {
      if constexpr (requires { B::float_diag(p); })
        return R(B::float_diag(p));
      else
        static_assert(linalg_always_false<B>, "diag needs B::float_diag for now");
    } else {
      if constexpr (requires { B::int_diag(p); })
        return R(B::int_diag(p));
      else
        static_assert(linalg_always_false<B>, "diag needs B::int_diag for now");
    }
  }

  /// Trace: sum of the main diagonal of the last two dims, keeping one trailing dim:
  /// [m, n] -> [1] (torch.trace), batched [..., m, n] -> [..., 1]. Float or Int.
  /// Computed as diag(x) x ones (matmul), so NaN/Inf propagate as in a sum.
  Tensor<B, (D >= 2 ? D - 1 : 1), K> trace() const requires(NumericKind<K>&& D >= 2) {
    const auto dg = diag();
    Shape ds = dg.shape();
    const std::int64_t r = ds[D - 2];
    Shape row = ds, col(std::vector<std::int64_t>(D, 1)), outs = ds;
    row.dims.insert(row.dims.end() - 1, 1);  // [..., 1, r]
    col[D - 2] = r;                          // [1, ..., r, 1]
    outs[D - 2] = 1;                         // [..., 1]
    const T a(linalg_reshape<B, K>(dg.primitive(), row));
    const T ones = T::ones(col, self().device(), self().dtype());
    return Tensor<B, D - 1, K>(linalg_reshape<B, K>(a.matmul(ones).into_primitive(), outs));
  }

 protected:
  const T& self() const { return static_cast<const T&>(*this); }
  T& self() { return static_cast<T&>(*this); }
};

}  // namespace ember::detail
