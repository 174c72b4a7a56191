// Rewrites of fused-block steps (ember/ir/fused.hpp) that keep every bit of the result, shared by
// the backends that run blocks (src/cpu/fused.cpp, src/gpu/fused.cpp).
#pragma once

#include <cmath>

#include "ember/ir/elementwise.hpp"
#include "ember/ir/fused.hpp"

namespace ember::ir {

/// Division by a power of two is multiplication by its reciprocal: both are the correctly
/// rounded value of the same real number (subnormal results included, as the reciprocal is
/// normal), so the result is the same bit for bit, and a multiplication costs a fraction of a
/// division. Rewrites such a step in place; `C` is the type the step computes in (the scalar is
/// rounded to it first, as the unfused function does).
template <class C>
void exact_reciprocal(FusedStep& s) {
  if (s.kind != FusedKind::Scalar || s.row != op_index<op::Div>) return;
  const C c = static_cast<C>(s.s0);
  int e = 0;
  if (!std::isfinite(c) || std::fabs(std::frexp(c, &e)) != C(0.5)) return;
  const C r = C(1) / c;
  if (!std::isnormal(r)) return;
  s.row = op_index<op::Mul>;
  s.s0 = static_cast<double>(r);
}

}  // namespace ember::ir
