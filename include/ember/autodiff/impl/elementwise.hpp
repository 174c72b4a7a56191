// Autodiff<B>: element-wise backward rules. Formulas are the derivatives listed in
// PyTorch's tools/autograd/derivatives.yaml (same conventions at non-smooth points:
// clamp passes the gradient on the closed interval, maximum/minimum split ties evenly,
// round/floor/ceil/trunc/sign have zero gradient).
#pragma once

#include <cmath>
#include <numbers>

#include "ember/autodiff/impl/common.hpp"

namespace ember::autodiff {

// ---- unary ---------------------------------------------------------------------------------
// Each rule body sees `c` (BackwardContext), `g` (output gradient) and the aliases O (ops).
#define EMBER_AD_UNARY(name, saves, ...)                                         \
  template <class B>                                                             \
  AdTensor<B> AdElementwiseOps<B>::float_##name(AP x) {                          \
    return Recorder<B>::unary(                                                   \
        #name, Bound::Memory, saves, std::move(x),                               \
        [](typename B::FloatTensor v) { return B::float_##name(std::move(v)); }, \
        [](BackwardContext<B>& c) {                                              \
          using O = AdOps<B>;                                                    \
          [[maybe_unused]] const AdTensor<B>& g = c.grad;                        \
          c.set(0, __VA_ARGS__);                                                 \
        });                                                                      \
  }
#define EMBER_AD_X c.input(0)
#define EMBER_AD_Y c.output()
inline constexpr Saves kSaveX = save_inputs(1u);

EMBER_AD_UNARY(neg, kSaveNothing, O::float_neg(g))
EMBER_AD_UNARY(abs, kSaveX, O::float_mul(g, O::float_sign(EMBER_AD_X)))
EMBER_AD_UNARY(sign, kSaveNothing, rules::full_like<B>(g, 0.0))
EMBER_AD_UNARY(square, kSaveX, O::float_mul(g, O::float_mul_scalar(EMBER_AD_X, 2.0)))
EMBER_AD_UNARY(recip, kSaveOutput, O::float_neg(O::float_mul(g, O::float_square(EMBER_AD_Y))))
EMBER_AD_UNARY(exp, kSaveOutput, O::float_mul(g, EMBER_AD_Y))
EMBER_AD_UNARY(log, kSaveX, O::float_div(g, EMBER_AD_X))
EMBER_AD_UNARY(log1p, kSaveX, O::float_div(g, O::float_add_scalar(EMBER_AD_X, 1.0)))
EMBER_AD_UNARY(sqrt, kSaveOutput, O::float_div(g, O::float_mul_scalar(EMBER_AD_Y, 2.0)))
EMBER_AD_UNARY(
    erf, kSaveX,
    O::float_mul(g, O::float_mul_scalar(O::float_exp(O::float_neg(O::float_square(EMBER_AD_X))),
                                        2.0 / std::sqrt(std::numbers::pi))))
EMBER_AD_UNARY(sin, kSaveX, O::float_mul(g, O::float_cos(EMBER_AD_X)))
EMBER_AD_UNARY(cos, kSaveX, O::float_neg(O::float_mul(g, O::float_sin(EMBER_AD_X))))
EMBER_AD_UNARY(tan, kSaveOutput,
               O::float_mul(g, O::float_add_scalar(O::float_square(EMBER_AD_Y), 1.0)))
EMBER_AD_UNARY(sinh, kSaveX, O::float_mul(g, O::float_cosh(EMBER_AD_X)))
EMBER_AD_UNARY(cosh, kSaveX, O::float_mul(g, O::float_sinh(EMBER_AD_X)))
EMBER_AD_UNARY(tanh, kSaveOutput,
               O::float_mul(g, O::float_add_scalar(O::float_neg(O::float_square(EMBER_AD_Y)), 1.0)))
EMBER_AD_UNARY(asin, kSaveX,
               O::float_div(g, O::float_sqrt(O::float_add_scalar(
                                   O::float_neg(O::float_square(EMBER_AD_X)), 1.0))))
EMBER_AD_UNARY(acos, kSaveX,
               O::float_neg(O::float_div(g, O::float_sqrt(O::float_add_scalar(
                                                O::float_neg(O::float_square(EMBER_AD_X)), 1.0)))))
EMBER_AD_UNARY(atan, kSaveX, O::float_div(g, O::float_add_scalar(O::float_square(EMBER_AD_X), 1.0)))
EMBER_AD_UNARY(asinh, kSaveX,
               O::float_div(g,
                            O::float_sqrt(O::float_add_scalar(O::float_square(EMBER_AD_X), 1.0))))
EMBER_AD_UNARY(acosh, kSaveX,
               O::float_div(g,
                            O::float_sqrt(O::float_sub_scalar(O::float_square(EMBER_AD_X), 1.0))))
EMBER_AD_UNARY(atanh, kSaveX,
               O::float_div(g, O::float_add_scalar(O::float_neg(O::float_square(EMBER_AD_X)), 1.0)))
EMBER_AD_UNARY(round, kSaveNothing, rules::full_like<B>(g, 0.0))
EMBER_AD_UNARY(floor, kSaveNothing, rules::full_like<B>(g, 0.0))
EMBER_AD_UNARY(ceil, kSaveNothing, rules::full_like<B>(g, 0.0))
EMBER_AD_UNARY(trunc, kSaveNothing, rules::full_like<B>(g, 0.0))

// ---- tensor-scalar ---------------------------------------------------------------------------
#define EMBER_AD_SCALAR(name, saves, ...)                                                     \
  template <class B>                                                                          \
  AdTensor<B> AdElementwiseOps<B>::float_##name##_scalar(AP x, double s) {                    \
    return Recorder<B>::unary(                                                                \
        #name "_scalar", Bound::Memory, saves, std::move(x),                                  \
        [s](typename B::FloatTensor v) { return B::float_##name##_scalar(std::move(v), s); }, \
        [s](BackwardContext<B>& c) {                                                          \
          using O = AdOps<B>;                                                                 \
          [[maybe_unused]] const AdTensor<B>& g = c.grad;                                     \
          c.set(0, __VA_ARGS__);                                                              \
        });                                                                                   \
  }

EMBER_AD_SCALAR(add, kSaveNothing, g)
EMBER_AD_SCALAR(sub, kSaveNothing, g)
EMBER_AD_SCALAR(mul, kSaveNothing, O::float_mul_scalar(g, s))
EMBER_AD_SCALAR(div, kSaveNothing, O::float_div_scalar(g, s))
EMBER_AD_SCALAR(remainder, kSaveNothing, g)
EMBER_AD_SCALAR(fmod, kSaveNothing, g)
EMBER_AD_SCALAR(powf, kSaveX,
                s == 0.0
                    ? rules::full_like<B>(g, 0.0)
                    : O::float_mul(g, O::float_mul_scalar(O::float_powf_scalar(EMBER_AD_X, s - 1.0),
                                                          s)))

template <class B>
AdTensor<B> AdElementwiseOps<B>::float_clamp(AP x, double lo, double hi) {
  return Recorder<B>::unary(
      "clamp", Bound::Memory, kSaveX, std::move(x),
      [lo, hi](typename B::FloatTensor v) { return B::float_clamp(std::move(v), lo, hi); },
      [lo, hi](BackwardContext<B>& c) {
        const auto x = c.input(0);
        auto inside = B::bool_and(B::float_greater_equal_elem(x.inner, lo),
                                  B::float_lower_equal_elem(x.inner, hi));
        c.set(0, rules::keep_where<B>(c.grad, inside));
      });
}
template <class B>
AdTensor<B> AdElementwiseOps<B>::float_clamp_min(AP x, double lo) {
  return Recorder<B>::unary(
      "clamp_min", Bound::Memory, kSaveX, std::move(x),
      [lo](typename B::FloatTensor v) { return B::float_clamp_min(std::move(v), lo); },
      [lo](BackwardContext<B>& c) {
        c.set(0, rules::keep_where<B>(c.grad, B::float_greater_equal_elem(c.input(0).inner, lo)));
      });
}
template <class B>
AdTensor<B> AdElementwiseOps<B>::float_clamp_max(AP x, double hi) {
  return Recorder<B>::unary(
      "clamp_max", Bound::Memory, kSaveX, std::move(x),
      [hi](typename B::FloatTensor v) { return B::float_clamp_max(std::move(v), hi); },
      [hi](BackwardContext<B>& c) {
        c.set(0, rules::keep_where<B>(c.grad, B::float_lower_equal_elem(c.input(0).inner, hi)));
      });
}

// ---- binary (broadcasting: gradients are summed back to each operand's shape) -----------
#define EMBER_AD_BINARY(name, saves, ...)                                       \
  template <class B>                                                            \
  AdTensor<B> AdElementwiseOps<B>::float_##name(AP lhs, AP rhs) {               \
    const Shape sa = B::float_shape(lhs.inner), sb = B::float_shape(rhs.inner); \
    return Recorder<B>::binary(                                                 \
        #name, Bound::Memory, saves, std::move(lhs), std::move(rhs),            \
        [](typename B::FloatTensor x, typename B::FloatTensor y) {              \
          return B::float_##name(std::move(x), std::move(y));                   \
        },                                                                      \
        [sa, sb](BackwardContext<B>& c) {                                       \
          using O = AdOps<B>;                                                   \
          [[maybe_unused]] const AdTensor<B>& g = c.grad;                       \
          __VA_ARGS__                                                           \
        });                                                                     \
  }
#define EMBER_AD_SET_A(expr) \
  if (c.needs(0)) c.set(0, rules::sum_to<B>(expr, sa));
#define EMBER_AD_SET_B(expr) \
  if (c.needs(1)) c.set(1, rules::sum_to<B>(expr, sb));
#define EMBER_AD_A c.input(0)
#define EMBER_AD_B c.input(1)
inline constexpr Saves kSaveAB = save_inputs(3u);

EMBER_AD_BINARY(add, kSaveNothing, EMBER_AD_SET_A(g) EMBER_AD_SET_B(g))
EMBER_AD_BINARY(sub, kSaveNothing, EMBER_AD_SET_A(g) EMBER_AD_SET_B(O::float_neg(g)))
EMBER_AD_BINARY(mul, kSaveAB,
                EMBER_AD_SET_A(O::float_mul(g, EMBER_AD_B))
                    EMBER_AD_SET_B(O::float_mul(g, EMBER_AD_A)))
EMBER_AD_BINARY(div, kSaveAB,
                EMBER_AD_SET_A(O::float_div(g, EMBER_AD_B))
                    EMBER_AD_SET_B(O::float_neg(O::float_div(O::float_mul(g, EMBER_AD_A),
                                                             O::float_square(EMBER_AD_B)))))
// remainder(a, b) = a - floor(a / b) * b ; fmod(a, b) = a - trunc(a / b) * b
EMBER_AD_BINARY(remainder, kSaveAB,
                EMBER_AD_SET_A(g) EMBER_AD_SET_B(O::float_neg(
                    O::float_mul(g, O::float_floor(O::float_div(EMBER_AD_A, EMBER_AD_B))))))
EMBER_AD_BINARY(fmod, kSaveAB,
                EMBER_AD_SET_A(g) EMBER_AD_SET_B(O::float_neg(
                    O::float_mul(g, O::float_trunc(O::float_div(EMBER_AD_A, EMBER_AD_B))))))
EMBER_AD_BINARY(atan2, kSaveAB, {
  const auto a = EMBER_AD_A;
  const auto b = EMBER_AD_B;
  const auto denom = O::float_add(O::float_square(a), O::float_square(b));
  EMBER_AD_SET_A(O::float_div(O::float_mul(g, b), denom))
  EMBER_AD_SET_B(O::float_neg(O::float_div(O::float_mul(g, a), denom)))
})
EMBER_AD_BINARY(hypot, (Saves{3u, true}), {
  const auto y = c.output();
  EMBER_AD_SET_A(O::float_div(O::float_mul(g, EMBER_AD_A), y))
  EMBER_AD_SET_B(O::float_div(O::float_mul(g, EMBER_AD_B), y))
})
// d/da a^b = b a^(b-1) (0 where b == 0); d/db a^b = a^b log(a) (0 where a == 0 and b >= 0).
EMBER_AD_BINARY(powf, (Saves{3u, true}), {
  const auto a = EMBER_AD_A;
  const auto b = EMBER_AD_B;
  if (c.needs(0)) {
    auto d = O::float_mul(b, O::float_powf(a, O::float_sub_scalar(b, 1.0)));
    d = O::float_mask_fill(std::move(d), B::float_equal_elem(b.inner, 0.0), 0.0);
    c.set(0, rules::sum_to<B>(O::float_mul(g, d), sa));
  }
  if (c.needs(1)) {
    auto d = O::float_mul(c.output(), O::float_log(a));
    auto zero =
        B::bool_and(B::float_equal_elem(a.inner, 0.0), B::float_greater_equal_elem(b.inner, 0.0));
    d = O::float_mask_fill(std::move(d), zero, 0.0);
    c.set(1, rules::sum_to<B>(O::float_mul(g, d), sb));
  }
})
// maximum/minimum: the larger (smaller) operand takes the gradient, ties split it evenly.
EMBER_AD_BINARY(max_pair, kSaveAB, {
  const auto a = EMBER_AD_A;
  const auto b = EMBER_AD_B;
  auto share =
      O::float_mask_where(g, B::float_equal(a.inner, b.inner), O::float_mul_scalar(g, 0.5));
  EMBER_AD_SET_A(O::float_mask_fill(share, B::float_lower(a.inner, b.inner), 0.0))
  EMBER_AD_SET_B(O::float_mask_fill(share, B::float_greater(a.inner, b.inner), 0.0))
})
EMBER_AD_BINARY(min_pair, kSaveAB, {
  const auto a = EMBER_AD_A;
  const auto b = EMBER_AD_B;
  auto share =
      O::float_mask_where(g, B::float_equal(a.inner, b.inner), O::float_mul_scalar(g, 0.5));
  EMBER_AD_SET_A(O::float_mask_fill(share, B::float_greater(a.inner, b.inner), 0.0))
  EMBER_AD_SET_B(O::float_mask_fill(share, B::float_lower(a.inner, b.inner), 0.0))
})

#undef EMBER_AD_UNARY
#undef EMBER_AD_SCALAR
#undef EMBER_AD_BINARY
#undef EMBER_AD_SET_A
#undef EMBER_AD_SET_B
#undef EMBER_AD_A
#undef EMBER_AD_B
#undef EMBER_AD_X
#undef EMBER_AD_Y

}  // namespace ember::autodiff
