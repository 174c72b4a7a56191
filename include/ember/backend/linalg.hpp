// Backend contract: linalg functions. See core.hpp for the conventions.
#pragma once

#include <concepts>

#include "ember/backend/core.hpp"

namespace ember {

// Required functions (checked by LinalgBackend):
//
//   float_matmul(const FloatTensor& lhs, const FloatTensor& rhs) -> FloatTensor
//   int_matmul(const IntTensor& lhs, const IntTensor& rhs) -> IntTensor
//     lhs [..., m, k], rhs [..., k, n] -> [..., m, n]. Both have the same rank >= 2 and
//     the same dtype; the batch dims (all but the last two) are broadcast-compatible
//     (size-1 dims stretch) and the output batch dims are their broadcast. Operands may
//     be strided views. k == 0 gives zeros. Int matmul wraps on overflow as torch does.
//
// Optional functions (the front end detects them with a requires-expression). They are
// needed by the front end until the element-wise, layout and reduce families provide the
// ops their composite defaults are written with; a backend may always override them:
//
//   float_diag(const FloatTensor& t) / int_diag(const IntTensor& t)
//     [..., m, n] -> [..., min(m, n)]: the main diagonal of the last two dims (may be a view).
//   float_cross(lhs, rhs, std::size_t dim) / int_cross(lhs, rhs, dim)
//     same rank, broadcast-compatible shapes, size 3 at `dim` in both -> broadcast shape.
//   float_vector_norm(const FloatTensor& t, double p, std::size_t dim) -> FloatTensor
//     torch.linalg.vector_norm with keepdim=True: p = 0 counts non-zeros, +-inf takes the
//     max/min of |x| (the dim is not empty), else (sum |x|^p)^(1/p).
//   float_cosine_similarity(lhs, rhs, std::size_t dim, double eps) -> FloatTensor
//     same rank, broadcast-compatible shapes; the broadcast shape with `dim` of size 1:
//     sum(x1 * x2) / (max(||x1||, eps) * max(||x2||, eps)) along dim (torch's kernel).

}  // namespace ember
