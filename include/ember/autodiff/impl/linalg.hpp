// Autodiff<B>: backward rules of matmul, diag, cross, vector_norm and cosine_similarity
// (formulas from PyTorch's derivatives.yaml / FunctionsManual.cpp, named at each rule).
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>

#include "ember/autodiff/impl/common.hpp"

namespace ember::autodiff {

namespace rules {
/// Swaps the last two dims (a view on most backends).
template <class B>
AP<B> transpose_last(AP<B> t) {
  const std::size_t r = shape_of<B>(t).rank();
  std::vector<std::size_t> axes(r);
  for (std::size_t i = 0; i < r; ++i) axes[i] = i;
  std::swap(axes[r - 1], axes[r - 2]);
  return O<B>::float_permute(std::move(t), axes);
}
}  // namespace rules

// C = A B with broadcast batch dims: dA = dC B^T, dB = A^T dC, each summed over the batch
// dims its operand was broadcast along.
template <class B>
AdTensor<B> AdOps<B>::float_matmul(const F& lhs, const F& rhs) {
  const Shape sa = B::float_shape(lhs.inner), sb = B::float_shape(rhs.inner);
  return Recorder<B>::binary(
      "matmul", Bound::Compute, save_inputs(3u), std::move(lhs), std::move(rhs),
      [](typename B::FloatTensor a, typename B::FloatTensor b) { return B::float_matmul(a, b); },
      [sa, sb](BackwardContext<B>& c) {
        using O = AdOps<B>;
        if (c.needs(0)) {
          c.set(0, rules::sum_to<B>(O::float_matmul(c.grad, rules::transpose_last<B>(c.input(1))),
                                    sa));
        }
        if (c.needs(1)) {
          c.set(1, rules::sum_to<B>(O::float_matmul(rules::transpose_last<B>(c.input(0)), c.grad),
                                    sb));
        }
      });
}

// diagonal_backward: the gradient is written into the diagonal of zeros ([..., m, n]
// flattened to [..., m n]: the diagonal is every (n + 1)-th element).
template <class B>
AdTensor<B> AdOps<B>::float_diag(const AP& t) requires AdInnerHasDiag<B> {
  const Shape in = B::float_shape(t.inner);
  return Recorder<B>::unary(
      "diag", Bound::Memory, kSaveNothing, std::move(t),
      [](typename B::FloatTensor x) { return B::float_diag(x); },
      [in](BackwardContext<B>& c) {
        using O = AdOps<B>;
        const std::size_t r = in.rank();
        const std::int64_t m = in[r - 2], n = in[r - 1], k = std::min(m, n);
        if (k == 0 || in.numel() == 0) {
          c.set(0, rules::full_shape<B>(c.grad, in, 0.0));
          return;
        }
        Shape flat = in;
        flat.dims.pop_back();
        flat[r - 2] = m * n;
        std::vector<SliceRange> ranges(r - 1);
        for (std::size_t d = 0; d + 1 < r - 1; ++d) ranges[d] = SliceRange{0, flat[d], 1};
        ranges[r - 2] = SliceRange{0, k, n + 1};
        auto z = O::float_slice_assign(rules::full_shape<B>(c.grad, flat, 0.0), ranges, c.grad);
        c.set(0, O::float_reshape(std::move(z), in));
      });
}

// linalg_cross: self: cross(other, grad), other: cross(grad, self); summed over broadcast dims.
template <class B>
AdTensor<B> AdOps<B>::float_cross(const AP& lhs, const AP& rhs,
                                  std::size_t dim) requires AdInnerHasCross<B> {
  const Shape sa = B::float_shape(lhs.inner), sb = B::float_shape(rhs.inner);
  return Recorder<B>::binary(
      "cross", Bound::Memory, save_inputs(3u), std::move(lhs), std::move(rhs),
      [dim](typename B::FloatTensor a, typename B::FloatTensor b) {
        return B::float_cross(a, b, dim);
      },
      [sa, sb, dim](BackwardContext<B>& c) {
        using O = AdOps<B>;
        if (c.needs(0)) c.set(0, rules::sum_to<B>(O::float_cross(c.input(1), c.grad, dim), sa));
        if (c.needs(1)) c.set(1, rules::sum_to<B>(O::float_cross(c.grad, c.input(0), dim), sb));
      });
}

// norm_backward (FunctionsManual.cpp), with the norm kept: p = 0 has no gradient; p = 1:
// sign(x) g; p = 2: x g / |x| (0 where |x| = 0); +-inf: sign(x) g / (number of elements with
// |x| = norm) at those elements (NaN counts as one); otherwise x |x|^(p-2) g / |x|^(p-1)
// (0 where the norm is 0; for p < 1 sign(x) |x|^(p-1) g |x|^(1-p), 0 where x = 0).
template <class B>
AdTensor<B> AdOps<B>::float_vector_norm(const AP& t, double p,
                                        std::size_t dim) requires AdInnerHasVectorNorm<B> {
  const Shape in = B::float_shape(t.inner);
  return Recorder<B>::unary(
      "vector_norm", Bound::Compute, Saves{1u, true}, std::move(t),
      [p, dim](typename B::FloatTensor x) { return B::float_vector_norm(x, p, dim); },
      [p, dim, in](BackwardContext<B>& c) {
        using O = AdOps<B>;
        const auto& g = c.grad;
        if (p == 0.0 || in.numel() == 0) {
          c.set(0, rules::full_shape<B>(g, in, 0.0));
          return;
        }
        const auto x = c.input(0);
        if (p == 1.0) {
          c.set(0,
                O::template float_binary<ir::op::Mul>(O::template float_unary<ir::op::Sign>(x), g));
          return;
        }
        const auto norm = c.output();
        const auto norm_zero = B::template float_compare_scalar<ir::op::Equal>(norm.inner, 0.0);
        if (p == 2.0) {
          auto scale =
              O::float_mask_fill(O::template float_binary<ir::op::Div>(g, norm), norm_zero, 0.0);
          c.set(0, O::template float_binary<ir::op::Mul>(x, scale));
          return;
        }
        if (std::isinf(p)) {
          const auto ax = B::template float_unary<ir::op::Abs>(x.inner);
          const auto hit = B::template bool_binary<ir::op::Or>(
              B::template float_compare<ir::op::Equal>(ax, norm.inner),
              B::template float_predicate<ir::op::IsNan>(ax));
          const auto mask = rules::mask_to_float<B>(hit, x);
          const AP count{B::float_sum_dim(mask.inner, static_cast<std::int64_t>(dim)), nullptr,
                         x.checkpointing};
          c.set(0, O::template float_binary<ir::op::Mul>(
                       O::template float_binary<ir::op::Mul>(
                           O::template float_unary<ir::op::Sign>(x), mask),
                       O::template float_binary<ir::op::Div>(g, count)));
          return;
        }
        if (p < 1.0) {
          auto scaled = O::float_mask_fill(
              O::template float_binary<ir::op::Mul>(
                  O::template float_unary<ir::op::Sign>(x),
                  O::template float_binary_scalar<ir::op::Pow>(
                      O::template float_unary<ir::op::Abs>(x), p - 1.0)),
              B::template float_compare_scalar<ir::op::Equal>(x.inner, 0.0), 0.0);
          c.set(0,
                O::template float_binary<ir::op::Mul>(
                    scaled, O::template float_binary<ir::op::Mul>(
                                g, O::template float_binary_scalar<ir::op::Pow>(norm, 1.0 - p))));
          return;
        }
        auto scaled = p < 2.0 ? O::template float_binary<ir::op::Mul>(
                                    O::template float_unary<ir::op::Sign>(x),
                                    O::template float_binary_scalar<ir::op::Pow>(
                                        O::template float_unary<ir::op::Abs>(x), p - 1.0))
                              : O::template float_binary<ir::op::Mul>(
                                    x, O::template float_binary_scalar<ir::op::Pow>(
                                           O::template float_unary<ir::op::Abs>(x), p - 2.0));
        auto scale =
            O::float_mask_fill(O::template float_binary<ir::op::Div>(
                                   g, O::template float_binary_scalar<ir::op::Pow>(norm, p - 1.0)),
                               norm_zero, 0.0);
        c.set(0, O::template float_binary<ir::op::Mul>(scaled, scale));
      });
}

// cosine_similarity (ATen's composite: sum(a / max(|a|, eps) * b / max(|b|, eps)) over the
// broadcast operands, the clamp taken under no_grad): with na, nb the clamped norms and
// y the output, d/da = g (b / (na nb) - y a / na^2), the second term only where |a| >= eps
// (and symmetrically for b); summed back over broadcast dims.
template <class B>
AdTensor<B> AdOps<B>::float_cosine_similarity(const AP& lhs, const AP& rhs, std::size_t dim,
                                              double eps) requires AdInnerHasCosineSimilarity<B> {
  const Shape sa = B::float_shape(lhs.inner), sb = B::float_shape(rhs.inner);
  return Recorder<B>::binary(
      "cosine_similarity", Bound::Compute, Saves{3u, true}, std::move(lhs), std::move(rhs),
      [dim, eps](typename B::FloatTensor a, typename B::FloatTensor b) {
        return B::float_cosine_similarity(a, b, dim, eps);
      },
      [sa, sb, dim, eps](BackwardContext<B>& c) {
        using O = AdOps<B>;
        Shape full = sa;
        for (std::size_t d = 0; d < full.rank(); ++d) full[d] = std::max(sa[d], sb[d]);
        if (full.numel() == 0) {
          if (c.needs(0)) c.set(0, rules::full_shape<B>(c.grad, sa, 0.0));
          if (c.needs(1)) c.set(1, rules::full_shape<B>(c.grad, sb, 0.0));
          return;
        }
        const auto a = O::float_expand(c.input(0), full);
        const auto b = O::float_expand(c.input(1), full);
        const auto y = c.output();
        const auto na = O::float_vector_norm(a, 2.0, dim);
        const auto nb = O::float_vector_norm(b, 2.0, dim);
        constexpr double inf = std::numeric_limits<double>::infinity();
        const auto ca = O::float_clamp(na, eps, inf), cb = O::float_clamp(nb, eps, inf);
        const auto cross = O::template float_binary<ir::op::Div>(
            c.grad, O::template float_binary<ir::op::Mul>(ca, cb));
        auto one_side = [&](const AP& self, const AP& other, const AP& n, const AP& cn) {
          auto k = O::template float_binary<ir::op::Div>(
              O::template float_binary<ir::op::Mul>(c.grad, y),
              O::template float_unary<ir::op::Square>(cn));
          k = O::float_mask_fill(
              std::move(k), B::template float_compare_scalar<ir::op::Lower>(n.inner, eps), 0.0);
          return O::template float_binary<ir::op::Sub>(
              O::template float_binary<ir::op::Mul>(other, cross),
              O::template float_binary<ir::op::Mul>(self, k));
        };
        if (c.needs(0)) c.set(0, rules::sum_to<B>(one_side(a, b, na, ca), sa));
        if (c.needs(1)) c.set(1, rules::sum_to<B>(one_side(b, a, nb, cb), sb));
      });
}

}  // namespace ember::autodiff
