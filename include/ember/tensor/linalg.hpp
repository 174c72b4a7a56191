// ember::linalg: free linear-algebra functions (Burn's burn::tensor::linalg module).
//
//   vector_norm(x, p, dim)          torch.linalg.vector_norm(x, p, dim, keepdim=True)
//   l0_norm / l1_norm / l2_norm / lp_norm / max_abs_norm / min_abs_norm
//   cosine_similarity(a, b, dim, eps)
//   matvec, outer, diag, trace, cross (wrappers of the Tensor methods)
//
// All reductions keep the reduced dim with size 1 (Burn's convention; torch's keepdim=True).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

#include "ember/tensor/tensor.hpp"

namespace ember::linalg {

namespace detail_ {

template <class B, std::size_t D>
std::size_t check_norm(const char* op, const Tensor<B, D, Float>& x, double p, std::int64_t dim) {
  const std::size_t d = normalize_dim(op, dim, D);
  if (std::isnan(p)) detail::fail<ValueError>(op, "p must not be NaN");
  if (std::isinf(p) && x.shape()[d] == 0) {
    // torch: "cannot compute the inf norm on an empty tensor" (no identity for max/min).
    detail::fail<ShapeError>(op, "the ", p > 0 ? "inf" : "-inf", " norm of an empty dim ", dim,
                             " of shape ", x.shape(), " is undefined");
  }
  return d;
}

}  // namespace detail_

/// Vector p-norm along `dim`, dim kept (torch.linalg.vector_norm with keepdim=True):
/// p = 0: number of non-zeros; p = inf: max |x|; p = -inf: min |x|; otherwise
/// (sum |x|^p)^(1/p) for any real p. [..., n, ...] -> [..., 1, ...], Float (dtype kept).
/// NaN propagates. Throws ShapeError for a bad dim or an inf norm over an empty dim,
/// ValueError if p is NaN. Accumulates in double on the CPU backend.
template <class B, std::size_t D>
Tensor<B, D, Float> vector_norm(const Tensor<B, D, Float>& x, double p, std::int64_t dim) {
  const std::size_t d = detail_::check_norm("vector_norm", x, p, dim);
  if constexpr (requires { B::float_vector_norm(x.primitive(), p, d); }) {
    return Tensor<B, D, Float>(B::float_vector_norm(x.primitive(), p, d));
  } else {
    static_assert(ember::detail::linalg_always_false<B>,
                  "vector_norm needs B::float_vector_norm for now");
  }
}

/// Number of non-zero elements along `dim` (vector_norm with p = 0).
template <class B, std::size_t D>
Tensor<B, D, Float> l0_norm(const Tensor<B, D, Float>& x, std::int64_t dim) {
  return vector_norm(x, 0.0, dim);
}
/// Sum of |x| along `dim` (p = 1).
template <class B, std::size_t D>
Tensor<B, D, Float> l1_norm(const Tensor<B, D, Float>& x, std::int64_t dim) {
  return vector_norm(x, 1.0, dim);
}
/// Euclidean norm along `dim` (p = 2).
template <class B, std::size_t D>
Tensor<B, D, Float> l2_norm(const Tensor<B, D, Float>& x, std::int64_t dim) {
  return vector_norm(x, 2.0, dim);
}
/// (sum |x|^p)^(1/p) along `dim`.
template <class B, std::size_t D>
Tensor<B, D, Float> lp_norm(const Tensor<B, D, Float>& x, double p, std::int64_t dim) {
  return vector_norm(x, p, dim);
}
/// max |x| along `dim` (p = inf).
template <class B, std::size_t D>
Tensor<B, D, Float> max_abs_norm(const Tensor<B, D, Float>& x, std::int64_t dim) {
  return vector_norm(x, std::numeric_limits<double>::infinity(), dim);
}
/// min |x| along `dim` (p = -inf).
template <class B, std::size_t D>
Tensor<B, D, Float> min_abs_norm(const Tensor<B, D, Float>& x, std::int64_t dim) {
  return vector_norm(x, -std::numeric_limits<double>::infinity(), dim);
}

/// Cosine similarity along `dim` (torch.nn.functional.cosine_similarity, dim kept):
/// sum(a * b) / (max(||a||, eps) * max(||b||, eps)). torch's documentation writes the
/// clamp on the product of the norms; its kernel (ATen cosine_similarity) clamps each
/// norm, which is what this follows (same for all but near-zero vectors; zero vectors
/// give 0). Shapes broadcast; the result has the broadcast shape with `dim` of size 1.
/// Mixed float dtypes promote. Throws ShapeError for a bad dim or non-broadcastable shapes.
template <class B, std::size_t D>
Tensor<B, D, Float> cosine_similarity(const Tensor<B, D, Float>& a, const Tensor<B, D, Float>& b,
                                      std::int64_t dim, double eps = 1e-8) {
  const std::size_t d = normalize_dim("cosine_similarity", dim, D);
  broadcast_shapes("cosine_similarity", a.shape(), b.shape());
  const DType dt = promote_types(a.dtype(), b.dtype());
  const auto x = a.cast(dt), y = b.cast(dt);
  if constexpr (requires { B::float_cosine_similarity(x.primitive(), y.primitive(), d, eps); }) {
    return Tensor<B, D, Float>(B::float_cosine_similarity(x.primitive(), y.primitive(), d, eps));
  } else {
    static_assert(ember::detail::linalg_always_false<B>,
                  "cosine_similarity needs B::float_cosine_similarity for now");
  }
}

/// Matrix-vector product with broadcast batch dims (Burn's linalg::matvec):
/// [..., m, n] x [..., n] -> [..., m]. Float or Int.
/// Throws ShapeError if n differs or the batch dims do not broadcast.
template <class B, std::size_t D, class K>
requires(D >= 2) Tensor<B, D - 1, K> matvec(const Tensor<B, D, K>& m,
                                            const Tensor<B, D - 1, K>& v) {
  const Shape ms = m.shape(), vs = v.shape();
  if (ms[D - 1] != vs[D - 2]) {
    ember::detail::fail<ShapeError>("matvec", "matrix ", ms, " and vector ", vs,
                                    " have different inner dims (", ms[D - 1], " vs ", vs[D - 2],
                                    ")");
  }
  ir::check::batch_broadcast("matvec", ms, vs, D - 2);
  Shape col = vs;
  col.dims.push_back(1);
  const Tensor<B, D, K> c(ember::detail::linalg_reshape<B, K>(v.primitive(), col));
  const auto r = m.matmul(c);
  Shape os = r.shape();
  os.dims.pop_back();
  return Tensor<B, D - 1, K>(ember::detail::linalg_reshape<B, K>(r.into_primitive(), os));
}

/// x.outer(y): [..., m] x [..., n] -> [..., m, n].
template <class B, std::size_t D, class K>
Tensor<B, D + 1, K> outer(const Tensor<B, D, K>& x, const Tensor<B, D, K>& y) {
  return x.outer(y);
}
/// x.diag(): [..., m, n] -> [..., min(m, n)].
template <class B, std::size_t D, class K>
auto diag(const Tensor<B, D, K>& x) {
  return x.diag();
}
/// x.trace(): [..., m, n] -> [..., 1].
template <class B, std::size_t D, class K>
auto trace(const Tensor<B, D, K>& x) {
  return x.trace();
}
/// x.cross(y, dim).
template <class B, std::size_t D, class K>
Tensor<B, D, K> cross(const Tensor<B, D, K>& x, const Tensor<B, D, K>& y, std::int64_t dim) {
  return x.cross(y, dim);
}

}  // namespace ember::linalg
